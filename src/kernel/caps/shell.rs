//! The `shell` capability: `run(cmd, timeout=None)` → `{code, stdout, stderr}`.
//!
//! `sh -c` in the workspace, behind an approval policy, started under the
//! same [`Confinement`] as the kernel (the command is spawned by the
//! workbench, not by the kernel, so it would otherwise escape the sandbox),
//! through `process_group::run` (its own group: a timeout kills everything
//! it started; capped output).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::process::Command;

use super::approval::{Approval, ApprovalPolicy};
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, arg_seconds, arg_str,
};
use crate::process_group::{self, Limits, RunError};
use crate::sandbox::Confinement;

#[derive(Clone)]
pub struct ShellCapability {
    inner: Arc<ShellInner>,
}

struct ShellInner {
    root: PathBuf,
    policy: Arc<dyn ApprovalPolicy>,
    confinement: Confinement,
    default_timeout: Duration,
    /// Bytes kept per stream (half head, half tail).
    max_output: usize,
}

impl ShellCapability {
    /// Commands run in `root` once `policy` allows them, started under
    /// `confinement` (the kernel's).
    pub fn new(
        root: impl AsRef<Path>,
        policy: Arc<dyn ApprovalPolicy>,
        confinement: Confinement,
    ) -> Self {
        Self {
            inner: Arc::new(ShellInner {
                root: root.as_ref().to_path_buf(),
                policy,
                confinement,
                default_timeout: Duration::from_secs(60),
                max_output: 256 << 10,
            }),
        }
    }
}

impl Capability for ShellCapability {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "shell".to_owned(),
            description: "Run shell commands in the workspace (subject to approval).".to_owned(),
            actions: vec![
                ActionSpec::new(
                    "run",
                    "Run `sh -c cmd`; returns {code, stdout, stderr}. Raises TimeoutError after `timeout` seconds (default 60).",
                )
                .param("cmd")
                .param_default("timeout", Value::Null),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let inner = Arc::clone(&self.inner);
        let action = action.to_owned();
        Box::pin(async move {
            if action != "run" {
                return Err(CapabilityError::no_action("shell", &action));
            }
            let cmd = arg_str(&args, "cmd")?.to_owned();
            let timeout = arg_seconds(&args, "timeout")?
                .map(Duration::from_secs_f64)
                .unwrap_or(inner.default_timeout);
            inner.run(cmd, timeout).await
        })
    }
}

impl ShellInner {
    async fn run(&self, cmd: String, timeout: Duration) -> Result<Value, CapabilityError> {
        if let Approval::Deny(reason) = self.policy.check(&cmd).await {
            return Err(CapabilityError::PermissionDenied(format!(
                "command refused: {reason}"
            )));
        }
        let mut command = Command::new("sh");
        command.arg("-c").arg(&cmd).current_dir(&self.root);
        let not_started = |err: std::io::Error| {
            CapabilityError::PermissionDenied(format!(
                "command not run: its sandbox could not be set up ({err})"
            ))
        };
        self.confinement
            .apply(command.as_std_mut())
            .map_err(not_started)?;
        let half = self.max_output / 2;
        let limits = Limits {
            timeout,
            head: half,
            tail: half,
        };
        let done = match process_group::run(command, limits).await {
            Ok(done) => done,
            Err(RunError::TimedOut(_)) => {
                return Err(CapabilityError::Timeout(format!(
                    "`{cmd}` timed out after {:.1} s and was killed",
                    timeout.as_secs_f64()
                )));
            }
            Err(RunError::Spawn(err) | RunError::Wait(err)) => {
                return Err(CapabilityError::from_io(&err, "sh"));
            }
        };
        use std::os::unix::process::ExitStatusExt;
        let result = json!({
            "code": done.status.code(),
            "signal": done.status.signal(),
            "stdout": done.stdout,
            "stderr": done.stderr,
        });
        self.policy.ran(&cmd, &result).await;
        Ok(result)
    }
}

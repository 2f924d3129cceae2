//! The `shell` capability: `run(cmd, timeout=None)` → `{code, stdout, stderr}`.
//!
//! `sh -c` in the workspace, behind an approval policy, started under the
//! same [`Confinement`] as the kernel (the command is spawned by the
//! workbench, not by the kernel, so it would otherwise escape the sandbox),
//! in its own process group (a timeout kills everything it started), with
//! capped output.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::approval::{Approval, ApprovalPolicy};
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, CappedText, arg_seconds,
    arg_str,
};
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
                return Err(CapabilityError::InvalidArgument(format!(
                    "shell has no action {action:?}"
                )));
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
        command
            .arg("-c")
            .arg(&cmd)
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let not_started = |err: std::io::Error| {
            CapabilityError::PermissionDenied(format!(
                "command not run: its sandbox could not be set up ({err})"
            ))
        };
        self.confinement
            .apply(command.as_std_mut())
            .map_err(not_started)?;
        let mut child = command
            .spawn()
            .map_err(|err| CapabilityError::from_io(&err, "sh"))?;
        let half = self.max_output / 2;
        let stdout = child.stdout.take().map(|s| tokio::spawn(drain(s, half)));
        let stderr = child.stderr.take().map(|s| tokio::spawn(drain(s, half)));
        let status = match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => status.map_err(|err| CapabilityError::from_io(&err, "sh"))?,
            Err(_) => {
                if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                    // SAFETY: kill(2) has no memory-safety preconditions; the
                    // negative pid is the group this command leads.
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                }
                let _ = child.wait().await;
                return Err(CapabilityError::Timeout(format!(
                    "`{cmd}` timed out after {:.1} s and was killed",
                    timeout.as_secs_f64()
                )));
            }
        };
        let stdout = collect(stdout).await;
        let stderr = collect(stderr).await;
        use std::os::unix::process::ExitStatusExt;
        Ok(json!({
            "code": status.code(),
            "signal": status.signal(),
            "stdout": stdout,
            "stderr": stderr,
        }))
    }
}

async fn drain(mut pipe: impl AsyncRead + Unpin, half: usize) -> String {
    let mut text = CappedText::new(half, half);
    let mut decoder = Utf8Chunks::default();
    let mut buf = vec![0u8; 1 << 16];
    while let Ok(n) = pipe.read(&mut buf).await {
        if n == 0 {
            break;
        }
        text.push(&decoder.push(&buf[..n]));
    }
    text.push(&decoder.finish());
    text.finish()
}

/// Background processes that escaped the group may hold the pipes open: do
/// not wait for them forever.
async fn collect(task: Option<tokio::task::JoinHandle<String>>) -> String {
    let Some(task) = task else {
        return String::new();
    };
    match tokio::time::timeout(Duration::from_secs(2), task).await {
        Ok(Ok(text)) => text,
        _ => String::new(),
    }
}

/// Lossy UTF-8 decoding that does not break characters split across reads.
#[derive(Default)]
struct Utf8Chunks {
    carry: Vec<u8>,
}

impl Utf8Chunks {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.carry.extend_from_slice(bytes);
        let keep = incomplete_suffix(&self.carry);
        let rest = self.carry.split_off(self.carry.len() - keep);
        let text = String::from_utf8_lossy(&self.carry).into_owned();
        self.carry = rest;
        text
    }

    fn finish(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.carry)).into_owned()
    }
}

/// Length of a trailing, possibly incomplete UTF-8 sequence (0..=3).
fn incomplete_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // continuation byte: look further back
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if need > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_survive_chunking() {
        let mut chunks = Utf8Chunks::default();
        let bytes = "aé€😀".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&chunks.push(&[*b]));
        }
        out.push_str(&chunks.finish());
        assert_eq!(out, "aé€😀");
    }
}

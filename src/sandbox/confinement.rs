//! The one rule for every process the workbench starts on the model's
//! behalf: the kernel, `shell.run` children and check commands run on save.
//! Each gets its environment from the allowlist ([`ChildEnv`]) and, unless
//! the user chose `full`, runs inside the session's sandbox (Landlock,
//! dropped capabilities, the seccomp filter). Spawners take a
//! [`Confinement`] and call [`Confinement::apply`] on their `Command`; none
//! builds its own.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::env::ChildEnv;
use super::error::SandboxError;
use super::mode::ApprovalMode;
use super::policy::SandboxOptions;
use super::session::SandboxSession;
use super::status::SandboxStatus;

/// How children are started: allowlisted environment, and the sandbox
/// session when there is one. Cheap to clone; every clone shares the
/// session (and so its private temp dir).
#[derive(Debug, Clone)]
pub struct Confinement {
    session: Option<Arc<SandboxSession>>,
    env: ChildEnv,
}

impl Confinement {
    /// Children run inside `session`.
    pub fn sandboxed(session: SandboxSession, env: ChildEnv) -> Self {
        protect_host();
        Confinement {
            session: Some(Arc::new(session)),
            env,
        }
    }

    /// Children run unconfined (the user chose `full`, or the sandbox is
    /// unavailable and every cell is asked about), still without secrets in
    /// their environment.
    pub fn unconfined(env: ChildEnv) -> Self {
        protect_host();
        Confinement { session: None, env }
    }

    /// The confinement `mode` asks for: unconfined for `full`, else a fresh
    /// sandbox session for `workspace` (with `options`). An error
    /// means the sandbox is needed but cannot be prepared; the caller must
    /// fail closed (ask, or refuse).
    pub fn for_mode(
        mode: ApprovalMode,
        status: &SandboxStatus,
        workspace: &Path,
        allow_network: bool,
        options: SandboxOptions,
        env: ChildEnv,
    ) -> Result<Self, SandboxError> {
        if !mode.sandboxed() {
            return Ok(Self::unconfined(env));
        }
        if let SandboxStatus::Unavailable(reason) = status {
            return Err(SandboxError::Unavailable(reason.clone()));
        }
        let session = SandboxSession::start(workspace, allow_network, options)?;
        Ok(Self::sandboxed(session, env))
    }

    pub(crate) fn is_sandboxed(&self) -> bool {
        self.session.is_some()
    }

    pub fn session(&self) -> Option<&SandboxSession> {
        self.session.as_deref()
    }

    /// The session, to keep asking it after this confinement is gone (what
    /// appeared since the kernel started).
    pub(crate) fn shared_session(&self) -> Option<Arc<SandboxSession>> {
        self.session.clone()
    }

    /// Sets `cmd` up to start under this confinement: its environment is
    /// replaced by the allowlist, then (when sandboxed) the sandbox is
    /// installed, which also points `TMPDIR` at the private temp dir. An
    /// error means the command must not be spawned.
    pub fn apply(&self, cmd: &mut Command) -> io::Result<()> {
        self.env.apply(cmd);
        match &self.session {
            Some(session) => session.install(cmd),
            None => Ok(()),
        }
    }

    /// Starts a server that speaks over its stdio (a language server, an
    /// MCP server): `command` (program, arguments, working directory)
    /// under this confinement, with `extra_env` set after the allowlist
    /// (for that server alone), its three pipes taken, and killed when
    /// the handle is dropped.
    pub(crate) fn spawn_piped(
        &self,
        mut command: tokio::process::Command,
        extra_env: &BTreeMap<String, String>,
    ) -> io::Result<PipedChild> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        self.apply(command.as_std_mut())?;
        command.envs(extra_env);
        let mut child = command.spawn()?;
        match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
            (Some(stdin), Some(stdout), Some(stderr)) => Ok(PipedChild {
                child,
                stdin,
                stdout,
                stderr,
            }),
            _ => Err(io::Error::other("the server's pipes are unavailable")),
        }
    }
}

/// A server started by [`Confinement::spawn_piped`] and its pipes.
pub struct PipedChild {
    pub child: tokio::process::Child,
    pub stdin: tokio::process::ChildStdin,
    pub stdout: tokio::process::ChildStdout,
    pub stderr: tokio::process::ChildStderr,
}

/// Makes the workbench's own process non-dumpable: its `/proc/<pid>/environ`,
/// `mem` and `fd` links become root-only, and with `CAP_SYS_PTRACE` dropped
/// in the sandbox, not even a confined root process can read them. The
/// workbench holds the API key, so nothing it starts should read it there.
/// (Also means no core dumps of the workbench.)
fn protect_host() {
    // SAFETY: PR_SET_DUMPABLE takes integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_SET_DUMPABLE,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
}

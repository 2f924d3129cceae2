//! One kernel session's sandbox: its private temp dir and its prepared
//! ruleset, created together and kept alive as long as the kernel runs.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::child::install;
use super::error::SandboxError;
use super::policy::{PrivateTmp, SandboxPolicy};
use super::prepare::{PreparedSandbox, prepare};

/// Everything a sandboxed kernel spawn needs. Keep it alive while the kernel
/// process runs: dropping it removes the private temp dir.
#[derive(Debug)]
pub struct SandboxSession {
    policy: SandboxPolicy,
    prepared: PreparedSandbox,
    // Declared last so the dir outlives everything that points at it.
    private_tmp: PrivateTmp,
}

impl SandboxSession {
    /// Creates the private temp dir and prepares the ruleset for a kernel
    /// working in `workspace`.
    pub fn start(
        workspace: &Path,
        allow_network: bool,
        extra_writable: Vec<PathBuf>,
    ) -> Result<Self, SandboxError> {
        let private_tmp = PrivateTmp::create()?;
        let policy = SandboxPolicy {
            extra_writable,
            ..SandboxPolicy::new(workspace, private_tmp.path(), allow_network)
        };
        let prepared = prepare(&policy)?;
        Ok(SandboxSession {
            policy,
            prepared,
            private_tmp,
        })
    }

    /// Confines the process `cmd` will spawn (see [`super::install`]).
    /// For a `tokio::process::Command`, pass `cmd.as_std_mut()`.
    pub fn install(&self, cmd: &mut Command) -> io::Result<()> {
        install(cmd, &self.prepared)
    }

    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    pub fn prepared(&self) -> &PreparedSandbox {
        &self.prepared
    }

    pub fn private_tmp(&self) -> &Path {
        self.private_tmp.path()
    }

    /// What this kernel cannot enforce of the policy; see
    /// [`PreparedSandbox::limitations`].
    pub fn limitations(&self) -> Vec<String> {
        self.prepared.limitations()
    }
}

//! One kernel session's sandbox: its private temp dir and its prepared
//! ruleset, created together and kept alive as long as the kernel runs.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::child::install;
use super::error::SandboxError;
use super::namespace::PROTECTED;
use super::policy::{PrivateTmp, SandboxOptions, SandboxPolicy};
use super::prepare::{PreparedSandbox, prepare};

/// Everything a sandboxed kernel spawn needs. Keep it alive while the kernel
/// process runs: dropping it removes the private temp dir.
#[derive(Debug)]
pub struct SandboxSession {
    policy: SandboxPolicy,
    prepared: PreparedSandbox,
    /// Protected folders missing at start: a spawn made while one is
    /// missing cannot protect it (see [`SandboxSession::appeared_protected`]).
    absent_at_start: Vec<PathBuf>,
    // Declared last so the dir outlives everything that points at it.
    private_tmp: PrivateTmp,
}

impl SandboxSession {
    /// Creates the private temp dir and prepares the ruleset for a kernel
    /// working in `workspace`.
    pub fn start(
        workspace: &Path,
        allow_network: bool,
        options: SandboxOptions,
    ) -> Result<Self, SandboxError> {
        let private_tmp = PrivateTmp::create()?;
        let policy = SandboxPolicy {
            extra_writable: options.extra_writable,
            max_processes: options.max_processes,
            ..SandboxPolicy::new(workspace, private_tmp.path(), allow_network)
        };
        // After `prepare`, which creates `.hello-tui/`.
        let prepared = prepare(&policy)?;
        let absent_at_start = PROTECTED
            .iter()
            .map(|name| workspace.join(name))
            .filter(|path| path.symlink_metadata().is_err())
            .collect();
        Ok(SandboxSession {
            policy,
            prepared,
            absent_at_start,
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

    /// Protected folders (in practice `.git/`) that did not exist when the
    /// session started and exist now. A read-only bind needs an existing
    /// folder, so every process spawned before it appeared (the kernel
    /// above all, which lives for the whole session) could write it: its
    /// hooks and config may have been planted by confined code, and would
    /// run at the user's next git command there. Processes spawned after
    /// it appeared get it read-only.
    pub fn appeared_protected(&self) -> Vec<PathBuf> {
        self.absent_at_start
            .iter()
            .filter(|path| path.symlink_metadata().is_ok())
            .cloned()
            .collect()
    }

    /// What to tell the user about [`Self::appeared_protected`], or `None`
    /// when nothing appeared.
    pub fn appeared_notice(&self) -> Option<String> {
        let appeared = self.appeared_protected();
        let names: Vec<String> = appeared
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        (!names.is_empty()).then(|| {
            format!(
                "{} appeared during this sandboxed session and was writable to the code \
                 running then: check its hooks/ and config (core.fsmonitor, core.hooksPath, \
                 aliases) before you run git there; from now on new processes get it read-only",
                names.join(", ")
            )
        })
    }

    /// What this kernel cannot enforce of the policy; see
    /// [`PreparedSandbox::limitations`].
    pub fn limitations(&self) -> Vec<String> {
        self.prepared.limitations()
    }
}

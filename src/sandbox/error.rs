//! What can go wrong while preparing a sandbox, worded for the user.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The running kernel cannot enforce Landlock at all. The caller must not
    /// run model code unconfined as if nothing happened: see
    /// [`super::effective_mode`].
    #[error("the Landlock sandbox is unavailable: {0}")]
    Unavailable(String),
    /// A path the policy names (workspace, private temp dir, an extra
    /// writable dir) cannot be opened to build a rule for it.
    #[error("cannot confine the kernel to {}: {source}", path.display())]
    Path { path: PathBuf, source: io::Error },
    /// The per-session private temp dir could not be created.
    #[error("cannot create the kernel's private temp dir under {}: {source}", parent.display())]
    PrivateTmp { parent: PathBuf, source: io::Error },
    /// The session could not start watching for repositories made while
    /// its processes run (see `super::guard`).
    #[error("cannot start guarding the workspace for new repositories: {0}")]
    Guard(io::Error),
    /// The kernel rejected the ruleset we built.
    #[error("building the Landlock ruleset failed: {0}")]
    Ruleset(#[from] landlock::RulesetError),
}

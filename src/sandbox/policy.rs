//! What the sandboxed kernel may write and whether it may use the network,
//! plus the per-session private temp dir it writes scratch files to.

use std::path::{Path, PathBuf};

use super::error::SandboxError;

/// Where the sandboxed process may write and whether it may open TCP
/// connections. Everything else on the filesystem is read/execute only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The project the user opened; the kernel may create, change and delete
    /// anything beneath it.
    pub workspace: PathBuf,
    /// The session's scratch dir (see [`PrivateTmp`]); the child sees it as
    /// `/tmp` (and `/var/tmp`), where its `TMPDIR` points, so `tempfile` and
    /// programs that hard-code `/tmp` keep working.
    pub private_tmp: PathBuf,
    /// Allow TCP connect and bind. Off by default: a cell that uploads the
    /// workspace should need the user's explicit yes.
    pub allow_network: bool,
    /// More writable dirs or files the user configured (e.g. `/dev/shm` for
    /// `multiprocessing`, a cache dir).
    pub extra_writable: Vec<PathBuf>,
    /// Most processes alive at once in one sandboxed spawn (the kernel and
    /// everything its cells start count together), see
    /// [`SandboxOptions::max_processes`].
    pub max_processes: u32,
}

impl SandboxPolicy {
    /// A policy with no extra writable paths and the default limits.
    pub fn new(workspace: impl Into<PathBuf>, private_tmp: &Path, allow_network: bool) -> Self {
        SandboxPolicy {
            workspace: workspace.into(),
            private_tmp: private_tmp.to_path_buf(),
            allow_network,
            extra_writable: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

/// How many processes a sandboxed spawn may have alive at once unless
/// `[safety] max_processes` says otherwise: plenty for builds and test
/// runners, while a fork bomb stops there instead of filling the machine.
pub const DEFAULT_MAX_PROCESSES: u32 = 1024;

/// What a user may set of a sandbox besides the workspace and the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxOptions {
    /// More writable dirs or files (`[safety] writable`).
    pub extra_writable: Vec<PathBuf>,
    /// Most processes alive at once per spawn (`[safety] max_processes`);
    /// the kernel enforces at least 300.
    pub max_processes: u32,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            extra_writable: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
        }
    }
}

/// A temp dir only this kernel session uses: created with mode 0700 under the
/// system temp dir and removed (with its contents) when dropped.
///
/// The sandbox cannot simply allow writes to `/tmp`: that is shared with every
/// other program, and a cell could plant files there for them (or find the
/// user's tmux sockets). Mounting the kernel's own dir over `/tmp` keeps
/// scratch files working without that hole.
#[derive(Debug)]
pub struct PrivateTmp {
    dir: tempfile::TempDir,
}

impl PrivateTmp {
    /// Creates a fresh dir under [`std::env::temp_dir`].
    pub fn create() -> Result<Self, SandboxError> {
        Self::create_in(&std::env::temp_dir())
    }

    /// Creates a fresh dir under `parent` (which must exist).
    pub fn create_in(parent: &Path) -> Result<Self, SandboxError> {
        // tempfile's mkdtemp-style creation is atomic and uses 0700 on Unix;
        // the mode is also set explicitly so it does not depend on that default.
        let dir = tempfile::Builder::new()
            .prefix("hello-tui-kernel-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(parent)
            .map_err(|source| SandboxError::PrivateTmp {
                parent: parent.to_path_buf(),
                source,
            })?;
        Ok(PrivateTmp { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

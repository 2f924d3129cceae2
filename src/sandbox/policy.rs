//! What the sandboxed kernel may write and whether it may use the network,
//! plus the per-session private temp dir it writes scratch files to.

use std::path::{Path, PathBuf};

use super::error::SandboxError;
use super::namespace::KeptTmp;
use super::tmp_keeper::TmpKeeper;

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

/// How many MiB a session's private `/tmp` may hold unless `[safety]
/// tmp_size_mb` says otherwise: room for builds and data files, while a
/// cell filling `/tmp` stops there instead of filling the host's disk (or,
/// for a `/tmp` in memory, the host's memory).
pub const DEFAULT_TMP_SIZE_MB: u64 = 1024;

/// What a user may set of a sandbox besides the workspace and the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxOptions {
    /// More writable dirs or files (`[safety] writable`).
    pub extra_writable: Vec<PathBuf>,
    /// Most processes alive at once per spawn (`[safety] max_processes`);
    /// the kernel enforces at least 300.
    pub max_processes: u32,
    /// MiB the private `/tmp` may hold (`[safety] tmp_size_mb`); 0: no cap.
    pub tmp_size_mb: u64,
    /// Bytes of memory all the session's processes may use together, where
    /// a cgroup can be made (`[kernel] memory_limit_mb`); `None`: no cap.
    pub memory_limit_bytes: Option<u64>,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            extra_writable: Vec::new(),
            max_processes: DEFAULT_MAX_PROCESSES,
            tmp_size_mb: DEFAULT_TMP_SIZE_MB,
            memory_limit_bytes: None,
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
///
/// Its size can be capped ([`PrivateTmp::cap`]): a fresh `tmpfs` with
/// `size=` on it that every spawn of the session (the kernel and the
/// `shell.run` commands the host starts for it, each in a namespace of its
/// own) shares, as they share the dir; the host finds their files at
/// [`PrivateTmp::contents`].
#[derive(Debug)]
pub struct PrivateTmp {
    /// Holds the capped `tmpfs` when not root (ended before `dir` goes).
    keeper: Option<TmpKeeper>,
    dir: tempfile::TempDir,
    /// Whether a capped `tmpfs` is mounted on `dir` (to unmount on drop).
    capped: bool,
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
        Ok(PrivateTmp {
            keeper: None,
            dir,
            capped: false,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Where the host finds what spawns wrote to `/tmp`: [`Self::path`],
    /// or, when a keeper holds the capped `tmpfs`, the same dir as seen in
    /// its namespace.
    pub fn contents(&self) -> &Path {
        self.keeper.as_ref().map_or(self.path(), TmpKeeper::view)
    }

    /// The keeper holding the capped `tmpfs`, for spawns to join.
    pub(crate) fn kept(&self) -> Option<KeptTmp> {
        self.keeper.as_ref().map(|keeper| KeptTmp {
            pidfd: keeper.pidfd(),
            view: keeper.view().to_path_buf(),
        })
    }

    /// Caps what the dir holds at `size_mb` MiB (writes past it fail with
    /// `ENOSPC`) with a fresh `tmpfs` (`size=`, `nosuid`, `nodev`, mode
    /// 0700) on it: as root, mounted in the workbench's own mount
    /// namespace; otherwise held by a keeper process in a user and mount
    /// namespace of its own, which spawns join ([`super::tmp_keeper`]). A
    /// `tmpfs` per spawn would split `/tmp` between the kernel and its
    /// `shell.run` commands. An error says why there is no cap (the dir
    /// works uncapped).
    pub fn cap(&mut self, size_mb: u64) -> Result<(), String> {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            let keeper = TmpKeeper::start(self.path(), size_mb).map_err(|error| {
                format!("no user namespace could hold a tmpfs for it ({error})")
            })?;
            self.keeper = Some(keeper);
            return Ok(());
        }
        let path = std::ffi::CString::new(self.path().as_os_str().as_bytes())
            .map_err(|_| "its path holds a NUL byte".to_owned())?;
        let options = std::ffi::CString::new(format!("size={size_mb}m,mode=0700"))
            .map_err(|_| "bad mount options".to_owned())?;
        // SAFETY: mount reads C strings that outlive the call.
        let mounted = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                options.as_ptr().cast(),
            )
        };
        if mounted != 0 {
            return Err(format!(
                "mounting a tmpfs on it failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        self.capped = true;
        Ok(())
    }
}

impl Drop for PrivateTmp {
    /// Unmounts the cap (lazily: a process still inside keeps it until it
    /// ends) before the dir is removed. If the workbench is killed first,
    /// the mount stays, empty but for what was in it, until the next boot.
    fn drop(&mut self) {
        if self.capped
            && let Ok(path) = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(
                self.path().as_os_str(),
            ))
        {
            // SAFETY: umount2 reads a C string that outlives the call.
            unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

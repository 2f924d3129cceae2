//! The child's private mount namespace: a private `/tmp`, a read-only tree
//! outside the writable roots, and read-only `.git/` and `.hello-tui/`
//! inside the workspace.
//!
//! - **Private `/tmp`.** The session's private temp dir is mounted over
//!   `/tmp` (and `/var/tmp` where it is a folder), so programs that hard-code
//!   `/tmp` work and see nothing of the host's: not the user's tmux
//!   sockets, not other programs' temp files. Writable roots that live under
//!   `/tmp` (a workspace in `/tmp/x`) are mounted back on top, at their own
//!   paths, over folders made for them in the private dir.
//! - **Read-only tree.** Landlock confines writes of file contents, but not
//!   `chmod`, `utime`, xattrs or ownership of files the user owns (all of
//!   them, for root). So every mount is made read-only (`mount_setattr`,
//!   recursive), after the writable roots (workspace, private temp dir,
//!   `[safety] writable`) were cloned with the flags they have on the host;
//!   the clones are then mounted back at their paths. No flag is ever
//!   cleared, so a mount that is read-only on the host stays so (and in a
//!   user namespace, where such flags are locked, nothing fails). Every
//!   mount is made `nodev` too, the writable roots included: a device node
//!   anywhere but the child's own `/dev` opens nothing (a console node
//!   unpacked into the workspace would otherwise open for writing, as
//!   Landlock allows writes there).
//! - **Protected folders.** `.git`, `.hello-tui` and `.claude` (at any depth, see
//!   [`super::protected`]) become read-only binds of themselves, made last
//!   (what Codex CLI does for `.git`). A bind needs an existing entry: one
//!   made after the spawn is bound by [`super::guard`].
//!
//! - **A `/dev` of its own** ([`super::devices`]): `null`, `zero`, `full`,
//!   `random`, `urandom` and nothing else of the host's, so no terminal,
//!   console, input device or disk can even be opened for reading.
//! - **Private IPC.** System V shared memory, semaphores and message
//!   queues (and POSIX message queues) are the namespace's own: a cell can
//!   neither read nor overwrite a host program's segments, and what it
//!   leaves behind goes with the namespace.
//!
//! The host's mounts stay out of reach through `/proc/<pid>/root` of
//! processes outside: as root the child holds no capabilities, so it may
//! not look into a process that holds any; as non-root the user namespace
//! boundary refuses it.
//!
//! As root the child can make the namespace itself; otherwise it first
//! enters a user namespace that maps its own uid and gid (where the kernel
//! allows unprivileged user namespaces). Where neither works, or the mount
//! syscalls are refused, the sandbox is unavailable: the probe tries the
//! same steps, says so, and `auto` falls back to asking.
//!
//! The plan (canonical paths, mount points, id maps) is made in the parent;
//! entering it in the forked child only makes raw syscalls.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::devices::Devices;
use super::mounts::{self, check};
use super::protected::{self, ReadOnlyBinds};

/// A private temp dir whose capped `tmpfs` a keeper holds
/// ([`super::tmp_keeper`]).
#[derive(Debug, Clone)]
pub(crate) struct KeptTmp {
    /// The keeper's pidfd, whose namespaces spawns join.
    pub pidfd: Arc<OwnedFd>,
    /// The temp dir as spawns see it, reached from the host.
    pub view: PathBuf,
}

/// Where the private temp dir is mounted, when the folder exists.
const TEMP_DIRS: [&str; 2] = ["/tmp", "/var/tmp"];

/// Fewest processes a namespace can be capped at: the kernel refuses a
/// `pid_max` at or below its 300 reserved pids.
const MIN_PID_MAX: u32 = 301;

/// Most binds a plan may hold: the child keeps their trees in an array on
/// its stack (it may not allocate).
const MAX_BINDS: usize = 32;

/// What the child does to enter its namespace.
#[derive(Debug, Clone)]
pub(crate) struct Namespace {
    /// Make every mount read-only before attaching `binds`. False only when
    /// `/` itself is a writable root.
    read_only_tree: bool,
    /// Trees cloned before anything changes and mounted back afterwards, in
    /// this order (shallowest target first): the private temp dir at the
    /// temp dirs, each writable root at its own path.
    binds: Vec<Bind>,
    /// Existing protected entries, bound read-only last.
    read_only: ReadOnlyBinds,
    /// `Some` when not root: enter a user namespace mapping these ids.
    user: Option<IdMaps>,
    /// The pidfd of the session's `/tmp` keeper, when not root and the
    /// private `/tmp` is capped ([`super::tmp_keeper`]): its user and mount
    /// namespace are joined first.
    tmp_keeper: Option<Arc<OwnedFd>>,
    /// The child's own `/dev` (`None` where the host has no `/dev`).
    devices: Option<Devices>,
    /// The PID namespace's `kernel.pid_max` (digits), capping how many
    /// processes live in it; `None` where the kernel keeps no per-namespace
    /// value (writing the global one would change the host's).
    pid_max: Option<CString>,
}

#[derive(Debug, Clone)]
struct Bind {
    source: CString,
    target: CString,
}

/// A user namespace's id maps: this user's uid and gid, mapped to
/// themselves.
#[derive(Debug, Clone)]
pub(crate) struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl IdMaps {
    /// The maps for the calling user.
    pub(crate) fn current() -> IdMaps {
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        IdMaps {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        }
    }

    /// Writes them for the calling process, just after it entered a user
    /// namespace of its own. Async-signal-safe.
    pub(crate) fn write_own(&self) -> io::Result<()> {
        // The workbench is non-dumpable (see `Confinement`), and a forked
        // child stays so until exec, which makes its own /proc/self files
        // root's. Its id maps must be writable.
        // SAFETY: PR_SET_DUMPABLE takes integer arguments only.
        check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })?;
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)
    }
}

impl Namespace {
    /// The plan for a child working in `workspace`, writing to
    /// `private_tmp` and `writable`. Symlinked roots are resolved (a mount
    /// would follow the link anyway). The protected folders that exist now
    /// are protected (`.hello-tui/` is created when missing: it is the
    /// workbench's own, and a cell must not be able to make it first), and
    /// so is `nested`, what [`protected::nested_protected`] found below them.
    /// `kept`: the keeper holding the private temp dir's capped `tmpfs`,
    /// when there is one.
    pub(crate) fn plan(
        workspace: &Path,
        private_tmp: &Path,
        writable: &[PathBuf],
        nested: &[PathBuf],
        kept: Option<&KeptTmp>,
    ) -> io::Result<Namespace> {
        // Where it cannot be made (a read-only workspace), the child cannot
        // make it either: nothing to protect then.
        let _ = std::fs::create_dir_all(workspace.join(".hello-tui"));
        let workspace = workspace.canonicalize()?;
        // Repositories below the workspace's own (a folder of projects, a
        // vendored checkout) are as dangerous to leave writable.
        let mut protected = protected::top_level(&workspace);
        protected.extend_from_slice(nested);
        let read_only = ReadOnlyBinds::new(&workspace, &protected)?;
        let roots = std::iter::once(Ok(workspace))
            .chain(writable.iter().map(|path| path.canonicalize()))
            .collect::<io::Result<Vec<PathBuf>>>()?;
        let mut plan = Self::with_roots(private_tmp, kept.map(|kept| kept.view.as_path()), &roots)?;
        plan.read_only = read_only;
        plan.tmp_keeper = kept.map(|kept| kept.pidfd.clone());
        Ok(plan)
    }

    /// The plan the probe tries: every step a real spawn takes (read-only
    /// tree, a folder mounted over `/tmp`), with no roots of its own. `/tmp`
    /// stands in for the private temp dir: the probe must not depend on
    /// `TMPDIR` (a session names a bad one itself when it fails to start).
    pub(crate) fn probe() -> io::Result<Namespace> {
        let tmp = Path::new(TEMP_DIRS[0]);
        Self::with_roots(if tmp.is_dir() { tmp } else { Path::new("/") }, None, &[])
    }

    /// `view`: where the host reaches the private temp dir as spawns see
    /// it, when that is not its own path (a keeper's `tmpfs`).
    fn with_roots(
        private_tmp: &Path,
        view: Option<&Path>,
        roots: &[PathBuf],
    ) -> io::Result<Namespace> {
        let private_tmp = private_tmp.canonicalize()?;
        let view = view.unwrap_or(&private_tmp);
        let mut temp_dirs: Vec<PathBuf> = Vec::new();
        for dir in TEMP_DIRS.iter().map(Path::new) {
            // A temp dir that is a link to another (/var/tmp -> /tmp) is
            // covered through it.
            if dir.symlink_metadata().is_ok_and(|meta| meta.is_dir())
                && let Ok(dir) = dir.canonicalize()
                && !temp_dirs.contains(&dir)
            {
                temp_dirs.push(dir);
            }
        }
        // Writable roots are mounted back on top of the private temp dir,
        // so one under /tmp needs a mount point inside it.
        for root in roots {
            for dir in &temp_dirs {
                if let Ok(relative) = root.strip_prefix(dir)
                    && !relative.as_os_str().is_empty()
                {
                    make_mount_point(view, relative, root)?;
                }
            }
        }
        let mut targets: Vec<(PathBuf, &Path)> = temp_dirs
            .into_iter()
            .map(|dir| (dir, private_tmp.as_path()))
            .chain(roots.iter().map(|root| (root.clone(), root.as_path())))
            .collect();
        // Stable: on equal depth the private temp dir goes first and a
        // writable root the user named at that same path wins.
        targets.sort_by_key(|(target, _)| target.components().count());
        let read_only_tree = !roots.iter().any(|root| root == Path::new("/"));
        let binds = targets
            .iter()
            // "/" cannot be mounted over in place; it stays writable.
            .filter(|(target, _)| target != Path::new("/"))
            .map(|(target, source)| {
                Ok(Bind {
                    source: c_path(source)?,
                    target: c_path(target)?,
                })
            })
            .collect::<io::Result<Vec<Bind>>>()?;
        if binds.len() > MAX_BINDS {
            return Err(io::Error::other(format!(
                "more than {MAX_BINDS} writable paths cannot be confined"
            )));
        }
        Ok(Namespace {
            read_only_tree,
            binds,
            read_only: ReadOnlyBinds::default(),
            user: user_maps(),
            tmp_keeper: None,
            devices: Devices::plan(),
            pid_max: None,
        })
    }

    /// Caps the namespace at about `max_processes` live processes, where
    /// the kernel keeps a `pid_max` per PID namespace (Linux 6.14+); false
    /// where it cannot.
    pub(crate) fn limit_processes(&mut self, max_processes: u32) -> bool {
        if !per_namespace_pid_max() {
            return false;
        }
        // Pid 1 is init and pids are handed out from 2 up, so a pid_max of
        // n leaves n - 1 processes; the kernel's floor applies.
        let pid_max = max_processes.saturating_add(1).max(MIN_PID_MAX);
        self.pid_max = CString::new(pid_max.to_string()).ok();
        self.pid_max.is_some()
    }

    /// The `pid_max` init writes, if any.
    pub(crate) fn pid_max(&self) -> Option<&std::ffi::CStr> {
        self.pid_max.as_deref()
    }

    /// Enters a private mount namespace (after a user namespace when not
    /// root) and builds the view described in the module docs. Must run
    /// before capabilities are dropped. Async-signal-safe.
    pub(crate) fn enter(&self) -> io::Result<()> {
        // The working directory the spawner chose, by path: the process
        // still sits on the old mount, which turns read-only below (and
        // joining the keeper's namespace moves it to that one's root).
        let mut cwd = [0u8; libc::PATH_MAX as usize];
        // SAFETY: getcwd writes at most `cwd.len()` bytes, NUL included.
        let had_cwd = !unsafe { libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()) }.is_null();
        // The PID namespace is for the children: see `super::pid_namespace`.
        let private = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
        match (&self.tmp_keeper, &self.user) {
            // The keeper's user namespace (mapped like ours would be) and a
            // copy of its mount namespace, which holds the capped /tmp.
            (Some(keeper), Some(_)) => {
                // SAFETY: setns takes an fd and flags; the child has one thread.
                check(unsafe {
                    libc::setns(keeper.as_raw_fd(), libc::CLONE_NEWUSER | libc::CLONE_NEWNS)
                })?;
                // As when it writes its own maps (see `IdMaps::write_own`).
                // SAFETY: PR_SET_DUMPABLE takes integer arguments only.
                check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })?;
                // SAFETY: unshare takes an integer.
                check(unsafe { libc::unshare(private) })?;
            }
            (_, Some(maps)) => {
                // SAFETY: unshare takes an integer; the child is single-threaded.
                check(unsafe { libc::unshare(libc::CLONE_NEWUSER | private) })?;
                maps.write_own()?;
            }
            (_, None) => {
                // SAFETY: unshare takes an integer.
                check(unsafe { libc::unshare(private) })?;
            }
        }
        // Private propagation first, or the mounts below would show up in
        // the workbench's own namespace too.
        mounts::make_private()?;

        let mut trees: [Option<OwnedFd>; MAX_BINDS] = [const { None }; MAX_BINDS];
        for (slot, bind) in trees.iter_mut().zip(&self.binds) {
            *slot = Some(mounts::clone_tree(&bind.source)?);
        }
        let devices = self
            .devices
            .as_ref()
            .map(Devices::clone_nodes)
            .transpose()?;
        if self.read_only_tree {
            mounts::make_read_only_without_devices(c"/")?;
        }
        if let Some(devices) = devices {
            devices.build()?;
        }
        for (tree, bind) in trees.iter().zip(&self.binds) {
            if let Some(tree) = tree {
                mounts::make_tree_without_devices(tree)?;
                mounts::attach(tree, &bind.target)?;
            }
        }
        self.read_only.apply()?;
        if had_cwd {
            // SAFETY: getcwd wrote a NUL-terminated path into `cwd`.
            check(unsafe { libc::chdir(cwd.as_ptr().cast()) })?;
        }
        Ok(())
    }
}

/// Whether this kernel keeps `kernel.pid_max` per PID namespace (Linux
/// 6.14+). Before that the value is global, and init (root in its user
/// namespace, or root outright) writing it would cap the whole machine.
fn per_namespace_pid_max() -> bool {
    kernel_version().is_some_and(|version| version >= (6, 14))
}

/// The running kernel's (major, minor) version, from `uname`.
fn kernel_version() -> Option<(u32, u32)> {
    // SAFETY: uname fills a zeroed struct of plain byte arrays.
    let mut names = unsafe { std::mem::zeroed::<libc::utsname>() };
    // SAFETY: `names` is a live, writable utsname.
    if unsafe { libc::uname(&mut names) } != 0 {
        return None;
    }
    let release: Vec<u8> = names
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    let release = std::str::from_utf8(&release).ok()?;
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .map(str::parse::<u32>);
    Some((numbers.next()?.ok()?, numbers.next()?.ok()?))
}

/// Whether spawns enter a user namespace of their own (when not root):
/// whoever joins their mount namespace must join that one first.
pub(crate) fn uses_user_namespace() -> bool {
    user_maps().is_some()
}

fn user_maps() -> Option<IdMaps> {
    // SAFETY: geteuid has no preconditions.
    (unsafe { libc::geteuid() } != 0).then(IdMaps::current)
}

/// An empty folder (or file, for a file `root`) at `relative` beneath the
/// private temp dir, to mount `root` on. Confined code writes that dir and
/// this runs unconfined, so no link is followed: each folder is made and
/// opened with `O_NOFOLLOW` from the one above, and whatever else sits at
/// a reserved name (a planted link, a file) is removed first.
fn make_mount_point(private_tmp: &Path, relative: &Path, root: &Path) -> io::Result<()> {
    let names: Vec<&std::ffi::OsStr> = relative
        .components()
        .filter_map(|component| match component {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    let Some((last, folders)) = names.split_last() else {
        return Ok(());
    };
    let mut dir = rustix::fs::open(
        private_tmp,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for name in folders {
        dir = reserved(&dir, name, true)?;
    }
    reserved(&dir, last, root.is_dir()).map(drop)
}

/// Opens the folder (or file) `name` in `dir`, making it when missing and
/// replacing anything of another kind.
fn reserved(dir: &OwnedFd, name: &std::ffi::OsStr, folder: bool) -> io::Result<OwnedFd> {
    let open = || {
        if folder {
            let _ = rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700));
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            rustix::fs::openat(dir, name, flags, Mode::empty())
        } else {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))
        }
    };
    match open() {
        Err(Errno::NOTDIR | Errno::LOOP | Errno::ISDIR) => {
            let flags = if folder {
                AtFlags::empty()
            } else {
                AtFlags::REMOVEDIR
            };
            rustix::fs::unlinkat(dir, name, flags)?;
            Ok(open()?)
        }
        other => Ok(other?),
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// open/write/close of a `/proc` file, async-signal-safe.
pub(crate) fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: open reads a C string; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: write reads `bytes`, which outlives the call.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let error = io::Error::last_os_error();
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
    if written != bytes.len() as isize {
        return Err(error);
    }
    Ok(())
}

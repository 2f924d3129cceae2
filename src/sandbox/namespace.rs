//! Protected paths inside the workspace: `.git/` and `.hello-tui/` are
//! read-only to confined code.
//!
//! Landlock cannot take a subtree back out of an allowed one, so the child
//! gets a private mount namespace in which those folders are read-only bind
//! mounts of themselves (what Codex CLI does for `.git`). A planted
//! `.git/hooks/pre-commit` or `core.fsmonitor` would run at the user's next
//! git command, outside any sandbox; a line appended to a session file
//! would be sent to the model by `--continue`. As root the child can make
//! the namespace itself; otherwise it first enters a user namespace that
//! maps its own uid and gid (where the kernel allows unprivileged user
//! namespaces). Where neither works the sandbox is unavailable: the probe
//! says so and `auto` falls back to asking.
//!
//! The plan (paths, mount flags, id maps) is made in the parent; entering it
//! in the forked child only makes raw syscalls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Folders of the workspace confined code may read but not change.
pub const PROTECTED: [&str; 2] = [".git", ".hello-tui"];

/// What the child does to enter its namespace.
#[derive(Debug, Clone)]
pub(crate) struct Namespace {
    /// Existing protected folders, with the mount flags to keep when
    /// remounting them read-only (a user namespace may not drop `nosuid`,
    /// `nodev`, `noexec` it inherited).
    read_only: Vec<(CString, libc::c_ulong)>,
    /// `Some` when not root: enter a user namespace mapping these ids.
    user: Option<IdMaps>,
}

#[derive(Debug, Clone)]
struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Namespace {
    /// The plan for a child working in `workspace`: the protected folders
    /// that exist now (`.hello-tui/` is created when missing: it is the
    /// workbench's own, and a cell must not be able to make it first).
    pub(crate) fn plan(workspace: &Path) -> io::Result<Namespace> {
        // Where it cannot be made (a read-only workspace), the child cannot
        // make it either: nothing to protect then.
        let _ = std::fs::create_dir_all(workspace.join(".hello-tui"));
        let mut read_only = Vec::new();
        for name in PROTECTED {
            let path = workspace.join(name);
            // symlink_metadata: a protected name that is a symlink is not
            // bound (the bind would follow it); it is a plain entry then.
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            let c_path = CString::new(path.as_os_str().as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            read_only.push((c_path.clone(), kept_flags(&c_path)?));
        }
        Ok(Namespace {
            read_only,
            user: Self::user_maps(),
        })
    }

    /// The plan the probe tries: a namespace with nothing in it yet.
    pub(crate) fn empty() -> Namespace {
        Namespace {
            read_only: Vec::new(),
            user: Self::user_maps(),
        }
    }

    fn user_maps() -> Option<IdMaps> {
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        (uid != 0).then(|| IdMaps {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        })
    }

    /// Enters a private mount namespace (after a user namespace when not
    /// root) and remounts the protected folders read-only. Must run before
    /// capabilities are dropped. Async-signal-safe.
    pub(crate) fn enter(&self) -> io::Result<()> {
        let flags = match self.user {
            Some(_) => libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
            None => libc::CLONE_NEWNS,
        };
        // SAFETY: unshare takes an integer; the child is single-threaded.
        check(unsafe { libc::unshare(flags) })?;
        if let Some(maps) = &self.user {
            // The workbench is non-dumpable (see `Confinement`), and a
            // forked child stays so until exec, which makes its own
            // /proc/self files root's. Its id maps must be writable.
            // SAFETY: PR_SET_DUMPABLE takes integer arguments only.
            check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })?;
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &maps.uid_map)?;
            write_proc(c"/proc/self/gid_map", &maps.gid_map)?;
        }
        // Private propagation first, or the binds below would show up in
        // the workbench's own namespace too.
        mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE)?;
        for (path, kept) in &self.read_only {
            mount(Some(path), path, libc::MS_BIND | libc::MS_REC)?;
            mount(
                None,
                path,
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept,
            )?;
        }
        Ok(())
    }
}

/// The per-mount flags of the mount holding `path` that a remount in a
/// user namespace must keep.
fn kept_flags(path: &CString) -> io::Result<libc::c_ulong> {
    // SAFETY: statvfs writes into a zeroed struct we own; the path is a
    // valid C string.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::statvfs(path.as_ptr(), &mut stat) })?;
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st, _)| stat.f_flag & st != 0)
        .fold(0, |flags, (_, ms)| flags | ms))
}

fn mount(
    source: Option<&CString>,
    target: &std::ffi::CStr,
    flags: libc::c_ulong,
) -> io::Result<()> {
    let source = source.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: mount reads C strings that outlive the call; null source,
    // type and data are allowed for bind mounts, remounts and propagation.
    check(unsafe {
        libc::mount(
            source,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    })
}

/// open/write/close of a `/proc/self` file, async-signal-safe.
fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
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

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

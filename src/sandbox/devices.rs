//! A `/dev` of the child's own: a small tmpfs holding the few devices
//! ordinary programs use (`null`, `zero`, `full`, `random`, `urandom`,
//! each a bind of the host's node, so Landlock's rules on those nodes
//! apply), the `fd`, `stdin`, `stdout` and `stderr` links, and empty
//! `pts` and `shm` folders; then made read-only.
//!
//! Everything else of the host's `/dev` is out of sight, not just out of
//! write reach: the user's terminals (`/dev/pts/N`, `/dev/tty*`, the
//! console: typed input could be read, and with a legacy kernel pushed),
//! the keyboard's input events (`/dev/input`, a keylogger as root), the
//! virtual consoles' screens (`/dev/vcs*`), raw disks. With no pty
//! filesystem, `/dev/ptmx` is missing too: no pseudo-terminal can be made.
//!
//! Planned in the parent (which nodes exist); built in the forked child
//! with raw syscalls on C strings, no allocation.

use std::ffi::{CStr, OsStr};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::mounts::{self, check};

/// The host's devices a confined program gets, when they exist.
const NODES: [&CStr; 5] = [
    c"/dev/null",
    c"/dev/zero",
    c"/dev/full",
    c"/dev/random",
    c"/dev/urandom",
];

/// Links every Linux `/dev` has, which shells and programs rely on
/// (`<(…)` uses `/dev/fd/N`).
const LINKS: [(&CStr, &CStr); 4] = [
    (c"/proc/self/fd", c"/dev/fd"),
    (c"/proc/self/fd/0", c"/dev/stdin"),
    (c"/proc/self/fd/1", c"/dev/stdout"),
    (c"/proc/self/fd/2", c"/dev/stderr"),
];

/// Empty folders programs expect (`shm` is where a `[safety] writable`
/// `/dev/shm` is mounted back).
const FOLDERS: [&CStr; 2] = [c"/dev/pts", c"/dev/shm"];

/// Detached binds of the host's nodes, one slot per entry of [`NODES`].
pub(crate) struct Cloned {
    nodes: [Option<OwnedFd>; NODES.len()],
}

/// Which of [`NODES`] exist on the host.
#[derive(Debug, Clone)]
pub(crate) struct Devices {
    present: [bool; NODES.len()],
}

impl Devices {
    /// The plan, or `None` where the host has no `/dev` folder to cover.
    pub(crate) fn plan() -> Option<Devices> {
        Path::new("/dev").is_dir().then(|| Devices {
            present: NODES.map(|node| Path::new(OsStr::from_bytes(node.to_bytes())).exists()),
        })
    }

    /// Clones of the host's nodes, taken before the tree is made deaf to
    /// devices (the clones keep the flags they have now). Async-signal-safe.
    pub(crate) fn clone_nodes(&self) -> io::Result<Cloned> {
        let mut nodes: [Option<OwnedFd>; NODES.len()] = [const { None }; NODES.len()];
        for ((clone, node), present) in nodes.iter_mut().zip(NODES).zip(self.present) {
            if present {
                *clone = Some(mounts::clone_tree(node)?);
            }
        }
        Ok(Cloned { nodes })
    }
}

impl Cloned {
    /// Replaces `/dev` with the small one holding these nodes. Runs in the
    /// child, in its mount namespace, before the writable roots are mounted
    /// back (a `/dev/shm` among them lands on the folder made here).
    /// Async-signal-safe.
    pub(crate) fn build(self) -> io::Result<()> {
        mounts::small_tmpfs(c"/dev")?;
        for (clone, node) in self.nodes.iter().zip(NODES) {
            if let Some(clone) = clone {
                make_file(node)?;
                mounts::attach(clone, node)?;
            }
        }
        for folder in FOLDERS {
            // SAFETY: mkdir reads a C string that outlives the call.
            check(unsafe { libc::mkdir(folder.as_ptr(), 0o755) })?;
        }
        for (target, link) in LINKS {
            // SAFETY: symlink reads two C strings that outlive the call.
            check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) })?;
        }
        mounts::make_read_only(c"/dev")
    }
}

/// An empty file at `path`, to mount a node on.
fn make_file(path: &CStr) -> io::Result<()> {
    // SAFETY: open reads a C string; the fd is closed below.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o666,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: closes the fd opened above.
    unsafe { libc::close(fd) };
    Ok(())
}

//! The raw mount syscalls the child makes to build its namespace: the old
//! `mount(2)` for propagation, and the new mount API (`open_tree`,
//! `move_mount`, `mount_setattr`, Linux 5.12+, older than Landlock's 5.13)
//! for recursive read-only flags and binds whose source a later mount hides.
//!
//! Every function is async-signal-safe: raw syscalls on C strings the
//! parent made, no allocation.

use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// `MOUNT_ATTR_RDONLY` and `MOUNT_ATTR_NODEV` from `<linux/mount.h>`.
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NODEV: u64 = 0x4;
/// `MOUNT_ATTR_NOSUID` from `<linux/mount.h>`.
const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// `OPEN_TREE_CLONE`: a detached copy of the mount, not the mount itself.
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
/// `MOVE_MOUNT_F_EMPTY_PATH`: the source is the fd itself.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
/// `MOVE_MOUNT_T_EMPTY_PATH`: the target is the fd itself.
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// The kernel's `struct mount_attr` (`MOUNT_ATTR_SIZE_VER0`).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Makes every mount of the namespace private, so nothing done here shows
/// up in the workbench's own namespace.
pub(crate) fn make_private() -> io::Result<()> {
    // SAFETY: mount reads a C string that outlives the call; null source,
    // type and data are allowed for a propagation change.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })
}

/// A detached copy of the mount tree at `path` (submounts included, with
/// the flags they have now), to attach later with [`attach`].
pub(crate) fn clone_tree(path: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: open_tree reads a C string that outlives the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_RECURSIVE as libc::c_uint,
        )
    };
    owned(fd)
}

/// Mounts a tree from [`clone_tree`] at `target` (on top of what is there).
pub(crate) fn attach(tree: &OwnedFd, target: &CStr) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: move_mount reads two C strings that outlive the call.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    })
}

/// Makes the mount at `path` and every mount beneath it read-only.
pub(crate) fn make_read_only(path: &CStr) -> io::Result<()> {
    set_attr(libc::AT_FDCWD, path, 0, MOUNT_ATTR_RDONLY)
}

/// Makes the mount at `path` and every mount beneath it read-only and
/// deaf to device nodes: a node found there (`mknod`'d by someone outside,
/// unpacked from an archive) opens nothing.
pub(crate) fn make_read_only_without_devices(path: &CStr) -> io::Result<()> {
    set_attr(
        libc::AT_FDCWD,
        path,
        0,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV,
    )
}

/// Makes a tree from [`clone_tree`] (all of it) deaf to device nodes: a
/// writable root (the workspace) may hold a console or serial node that
/// Landlock's write rights there would otherwise open.
pub(crate) fn make_tree_without_devices(tree: &OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    set_attr(tree.as_raw_fd(), c"", libc::AT_EMPTY_PATH, MOUNT_ATTR_NODEV)
}

/// Makes the file or folder `relative` (beneath the folder `root`, reached
/// with no link on the way, see [`open_beneath`]) a read-only, `nodev`,
/// `nosuid` bind of itself, unless its mount is read-only already (then
/// there is nothing to do, and binding again would only pile mounts up).
/// The bind is made on the entry the fd holds, so a link swapped in on the
/// way after the check cannot redirect it.
pub(crate) fn bind_read_only_beneath(root: &OwnedFd, relative: &CStr) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let entry = open_beneath(root, relative)?;
    // rustix makes the raw syscall (no allocation); `f_flags` holds the
    // mount's flags in this namespace.
    let fs = rustix::fs::fstatfs(&entry)?;
    if fs.f_flags as u64 & libc::ST_RDONLY != 0 {
        return Ok(());
    }
    let tree = clone_tree_at(&entry)?;
    set_attr(
        tree.as_raw_fd(),
        c"",
        libc::AT_EMPTY_PATH,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID,
    )?;
    // SAFETY: move_mount reads two empty C strings; both fds are live.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            entry.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    })
}

/// An `O_PATH` fd of `relative` beneath `root`: no `..` out of it and no
/// link anywhere on the way, the last name included (`ELOOP` then).
/// Confined code may be renaming things in the workspace as this runs.
pub(crate) fn open_beneath(root: &OwnedFd, relative: &CStr) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed open_how is valid (all fields are integers).
    let mut how = unsafe { std::mem::zeroed::<libc::open_how>() };
    how.flags = (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: openat2 reads a C string and an open_how of the size passed,
    // both alive for the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            relative.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    owned(fd)
}

/// Opens the folder `path` as an `O_PATH` fd.
pub(crate) fn open_folder(path: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: open reads a C string that outlives the call.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    owned(libc::c_long::from(fd))
}

/// A detached copy of the mount tree at the entry `fd` holds.
fn clone_tree_at(entry: &OwnedFd) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: open_tree reads an empty C string; the fd is live.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            entry.as_raw_fd(),
            c"".as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint
                | libc::AT_EMPTY_PATH as libc::c_uint,
        )
    };
    owned(fd)
}

/// The fd a syscall returned, owned, or its errno.
fn owned(fd: libc::c_long) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the syscall returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn set_attr(dirfd: libc::c_int, path: &CStr, flags: libc::c_int, set: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads a C string and a mount_attr of the size
    // passed, both alive for the call.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            (flags | libc::AT_RECURSIVE) as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

/// `Ok` for a syscall that returned 0, else errno.
pub(crate) fn check(result: libc::c_int) -> io::Result<()> {
    check_long(libc::c_long::from(result))
}

fn check_long(result: libc::c_long) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Mounts a fresh tmpfs of at most 64 KiB over `path`, hiding what is
/// there (tmpfs is allowed in a user namespace, unlike most file systems).
pub(crate) fn small_tmpfs(path: &CStr) -> io::Result<()> {
    // SAFETY: mount reads C strings that outlive the call.
    check(unsafe {
        libc::mount(
            c"none".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC | libc::MS_NODEV,
            c"size=64k,mode=755".as_ptr().cast(),
        )
    })
}

//! Writing a file the model names without being steered out of the
//! workspace.
//!
//! The write is done by the workbench, outside the sandbox, so path checks
//! alone are not enough: a cell can plant a symlink between the check and
//! the write, or where the temp file will be. So every component is opened
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` from a handle on the
//! workspace root (the kernel refuses `..` out of it and any symlink on the
//! way), the temp file gets a random name and `O_EXCL` (nothing planted can
//! be reused), and the rename happens inside the already-opened folder
//! (replacing a symlink at the target instead of following it). rustix
//! wraps the syscalls; `std::fs` has no way to say "beneath".

use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Why a write was refused or failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteError {
    /// A symlink on the way, or a path leading out of the root.
    #[error("the path leads through a symlink or out of the workspace")]
    Steered,
    /// Into `.git/` or `.hello-tui/` (at any depth): the sandbox keeps
    /// them read-only for confined code, and the workbench's own writes on
    /// a cell's behalf must not be the way around it (git hooks, config).
    #[error("{0}/ is read-only to cells (git and the workbench keep their state there)")]
    Protected(&'static str),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<Errno> for WriteError {
    fn from(errno: Errno) -> Self {
        match errno {
            Errno::LOOP | Errno::XDEV => WriteError::Steered,
            other => WriteError::Io(other.into()),
        }
    }
}

/// Replaces the file at `relative` (beneath `root`, creating missing
/// folders) with `bytes`, atomically: readers see the old file or the new
/// one, never half of it.
pub(crate) fn write_beneath(root: &Path, relative: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let (dir, file) = parent_beneath(root, relative, Walk::Write)?;
    let temp = format!(
        ".{}.{:016x}.hello-tui-tmp",
        file.to_string_lossy(),
        fastrand::u64(..)
    );
    let fd = rustix::fs::openat2(
        &dir,
        &temp,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
        beneath(),
    )?;
    // The file keeps its permissions (an executable script stays one).
    let kept = rustix::fs::statat(&dir, file, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .filter(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
        })
        .map(|st| Mode::from_raw_mode(st.st_mode & 0o7777));
    if let Some(mode) = kept
        && let Err(errno) = rustix::fs::fchmod(&fd, mode)
    {
        let _ = rustix::fs::unlinkat(&dir, &temp, rustix::fs::AtFlags::empty());
        return Err(errno.into());
    }
    let written = std::fs::File::from(fd)
        .write_all(bytes)
        .map_err(WriteError::from)
        .and_then(|()| rustix::fs::renameat(&dir, &temp, &dir, file).map_err(WriteError::from));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, &temp, rustix::fs::AtFlags::empty());
    }
    written
}

/// Removes the file at `relative` beneath `root`: no folder on the way may
/// be a link (a cell may have swapped one in), and a link at the end is
/// removed itself, never what it points to.
pub(crate) fn remove_beneath(root: &Path, relative: &Path) -> Result<(), WriteError> {
    let (dir, file) = parent_beneath(root, relative, Walk::Remove)?;
    rustix::fs::unlinkat(&dir, file, rustix::fs::AtFlags::empty())?;
    Ok(())
}

/// What [`read_beneath`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    Bytes(Vec<u8>),
    /// A file bigger than the limit (its size).
    TooBig(u64),
    Folder,
    /// A device, socket or fifo.
    Special,
}

/// Reads the file at `relative` beneath `root` the way writes reach it: no
/// link followed on the way or at the end, so a cell that swaps a folder
/// for a link between the check and the read cannot make the workbench
/// read outside the workspace. At most `max` bytes.
pub(crate) fn read_beneath(root: &Path, relative: &Path, max: u64) -> Result<Found, WriteError> {
    let (dir, file) = parent_beneath(root, relative, Walk::Read)?;
    let fd = rustix::fs::openat2(
        &dir,
        file,
        // NONBLOCK: opening a FIFO a cell planted must not wait for a
        // writer (it is then refused as not a plain file).
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
        beneath(),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::RegularFile => {}
        rustix::fs::FileType::Directory => return Ok(Found::Folder),
        _ => return Ok(Found::Special),
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > max {
        return Ok(Found::TooBig(size));
    }
    // At most `max`, even if the file grows while it is read.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::from(fd), max),
        &mut bytes,
    )?;
    Ok(Found::Bytes(bytes))
}

/// What a walk to a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Missing folders are made; protected folders refused.
    Write,
    /// Protected folders refused.
    Remove,
    /// Anything beneath the root may be read.
    Read,
}

/// The folder holding `relative` beneath `root`, opened without following
/// a link or leaving `root` (`create`: making missing folders), and the
/// file's name in it.
fn parent_beneath<'a>(
    root: &Path,
    relative: &'a Path,
    walk: Walk,
) -> Result<(OwnedFd, &'a std::ffi::OsStr), WriteError> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => {
                if walk != Walk::Read {
                    refuse_protected(name)?;
                }
                names.push(name);
            }
            Component::CurDir => {}
            _ => return Err(WriteError::Steered),
        }
    }
    let Some((file, folders)) = names.split_last() else {
        return Err(WriteError::Io(std::io::Error::from(
            std::io::ErrorKind::InvalidInput,
        )));
    };
    Ok((folders_beneath(root, folders, walk == Walk::Write)?, file))
}

/// The folder `folders` name beneath `root`, each opened without following
/// a link or leaving `root` (`create`: making missing ones).
fn folders_beneath(
    root: &Path,
    folders: &[&std::ffi::OsStr],
    create: bool,
) -> Result<OwnedFd, WriteError> {
    let mut dir = rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for name in folders {
        dir = match open_folder(&dir, name) {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, *name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(errno.into()),
                }
                open_folder(&dir, name)?
            }
            other => other?,
        };
    }
    Ok(dir)
}

/// One of the workbench's own folders (`.hello-tui/sessions`) beneath
/// `root`, opened — and, with `create`, made — folder by folder with no
/// link on the way, so a repository that ships the folder (or one above
/// it) as a link cannot steer what the workbench writes or reads there.
/// Protected names are allowed: this is the workbench's own state, not a
/// write on a cell's behalf.
pub(crate) fn own_folder(
    root: &Path,
    relative: &Path,
    create: bool,
) -> Result<OwnedFd, WriteError> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(WriteError::Steered),
        }
    }
    folders_beneath(root, &names, create)
}

/// Opens `name` in `dir` (a folder from [`own_folder`]) with `flags`,
/// never through a link; `O_CREAT` files get `0o666` less the umask.
pub(crate) fn open_in(dir: &OwnedFd, name: &str, flags: OFlags) -> Result<OwnedFd, WriteError> {
    // openat2 refuses a mode without O_CREAT.
    let mode = if flags.contains(OFlags::CREATE) {
        Mode::from_raw_mode(0o666)
    } else {
        Mode::empty()
    };
    Ok(rustix::fs::openat2(
        dir,
        name,
        flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        mode,
        beneath(),
    )?)
}

/// `.git`, `.hello-tui` and `.claude` are not written on a cell's behalf,
/// at any depth (a nested repository's too).
fn refuse_protected(name: &std::ffi::OsStr) -> Result<(), WriteError> {
    match crate::sandbox::PROTECTED
        .iter()
        .find(|protected| name == std::ffi::OsStr::new(protected))
    {
        Some(protected) => Err(WriteError::Protected(protected)),
        None => Ok(()),
    }
}

/// Whether `relative` may be written on a cell's behalf (checked before a
/// write of several files starts, so none is half done).
pub(crate) fn check_writable(relative: &Path) -> Result<(), WriteError> {
    relative
        .components()
        .try_for_each(|component| match component {
            Component::Normal(name) => refuse_protected(name),
            _ => Ok(()),
        })
}

fn open_folder(dir: &OwnedFd, name: &std::ffi::OsStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(
        dir,
        name,
        // No O_NOFOLLOW: it would turn a symlinked folder into ENOTDIR;
        // RESOLVE_NO_SYMLINKS refuses it with ELOOP instead.
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        beneath(),
    )
}

fn beneath() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_beneath_and_refuses_symlinked_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        write_beneath(&root, Path::new("a/b/c.txt"), b"hi").unwrap();
        assert_eq!(std::fs::read(root.join("a/b/c.txt")).unwrap(), b"hi");
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let error = write_beneath(&root, Path::new("out/x.txt"), b"no").unwrap_err();
        assert!(matches!(error, WriteError::Steered), "{error:?}");
        assert!(!dir.path().join("x.txt").exists());
        let error = write_beneath(&root, Path::new("../x.txt"), b"no").unwrap_err();
        assert!(matches!(error, WriteError::Steered), "{error:?}");
        // A symlink at the target is replaced, not followed.
        let victim = dir.path().join("victim");
        std::os::unix::fs::symlink(&victim, root.join("link")).unwrap();
        write_beneath(&root, Path::new("link"), b"file").unwrap();
        assert!(!victim.exists());
        assert_eq!(std::fs::read(root.join("link")).unwrap(), b"file");
    }
}

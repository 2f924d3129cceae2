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
pub enum WriteError {
    /// A symlink on the way, or a path leading out of the root.
    #[error("the path leads through a symlink or out of the workspace")]
    Steered,
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
pub fn write_beneath(root: &Path, relative: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let (dir, file) = parent_beneath(root, relative, true)?;
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
pub fn remove_beneath(root: &Path, relative: &Path) -> Result<(), WriteError> {
    let (dir, file) = parent_beneath(root, relative, false)?;
    rustix::fs::unlinkat(&dir, file, rustix::fs::AtFlags::empty())?;
    Ok(())
}

/// The folder holding `relative` beneath `root`, opened without following
/// a link or leaving `root` (`create`: making missing folders), and the
/// file's name in it.
fn parent_beneath<'a>(
    root: &Path,
    relative: &'a Path,
    create: bool,
) -> Result<(OwnedFd, &'a std::ffi::OsStr), WriteError> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(WriteError::Steered),
        }
    }
    let Some((file, folders)) = names.split_last() else {
        return Err(WriteError::Io(std::io::Error::from(
            std::io::ErrorKind::InvalidInput,
        )));
    };
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
    Ok((dir, file))
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

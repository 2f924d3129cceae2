//! Reading files into a classified form and writing them back atomically.
//! Everything here is plain `std::fs`; the document decides what to do.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use super::error::EditorError;
use super::hash;

/// How much of the head of a file decides whether it is binary.
const SNIFF_BYTES: usize = 8 * 1024;

/// What we knew about the file on disk when we last read or wrote it.
/// mtime + len are the cheap check; the hash settles "touched but equal".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskVersion {
    pub mtime: Option<SystemTime>,
    pub len: u64,
    pub hash: u64,
}

impl DiskVersion {
    pub fn of(meta: &fs::Metadata, bytes: &[u8]) -> Self {
        Self::hashed(meta, bytes, hash::content(bytes))
    }

    fn hashed(meta: &fs::Metadata, bytes: &[u8], hash: u64) -> Self {
        Self {
            mtime: meta.modified().ok(),
            len: bytes.len() as u64,
            hash,
        }
    }

    /// True when the metadata says the file may have changed.
    pub(crate) fn stat_differs(&self, meta: &fs::Metadata) -> bool {
        self.mtime != meta.modified().ok() || self.len != meta.len()
    }
}

/// The content of a file, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Text(String),
    /// Lossily decoded; the original bytes must never be overwritten.
    InvalidUtf8(String),
    Binary,
}

/// NUL in the head, or more than 30% control bytes there, means binary.
/// UTF-8 multibyte sequences are not control bytes, so CJK text is text.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if head.contains(&0) {
        return true;
    }
    if head.is_empty() {
        return false;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    control * 10 > head.len() * 3
}

pub(crate) fn classify(bytes: Vec<u8>) -> Content {
    if looks_binary(&bytes) {
        return Content::Binary;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Content::Text(text),
        Err(e) => Content::InvalidUtf8(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// A file read from disk with what is needed to write it back faithfully.
pub(crate) struct Loaded {
    pub bytes: Vec<u8>,
    pub version: DiskVersion,
    pub permissions: fs::Permissions,
}

pub fn read(path: &Path) -> Result<Loaded, EditorError> {
    let err = |source| EditorError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(err)?;
    if meta.is_dir() {
        return Err(err(std::io::Error::other("is a directory")));
    }
    let bytes = read_bytes(path, &meta).map_err(err)?;
    Ok(Loaded {
        version: DiskVersion::of(&meta, &bytes),
        permissions: meta.permissions(),
        bytes,
    })
}

/// Files this big are read into huge pages (`advise_huge_pages`).
const HUGE_FROM: u64 = 8 << 20;

/// The file's bytes. A big one goes into a buffer that asked for huge
/// pages before it was touched. (Reading in pieces on two threads was
/// tried: on a loaded 2-core machine the slower thread made it slower.)
fn read_bytes(path: &Path, meta: &fs::Metadata) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    if meta.len() < HUGE_FROM {
        return fs::read(path);
    }
    let mut file = fs::File::open(path)?;
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!(
                "the file is {}; there is not enough free memory to open it",
                crate::units::binary_size(meta.len())
            ),
        )
    };
    if available_memory().is_some_and(|free| meta.len() > free) {
        return Err(too_big());
    }
    let expected = usize::try_from(meta.len()).map_err(|_| too_big())?;
    // One byte more than the stat said, so a file that grew since is read
    // to its end without the buffer moving out of its huge pages. A failed
    // allocation is an error, not an abort (which would lose every unsaved
    // buffer and leave the terminal raw).
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(expected.saturating_add(1))
        .map_err(|_| too_big())?;
    advise_huge_pages(bytes.spare_capacity_mut());
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `MemAvailable` from `/proc/meminfo`, in bytes: what can be allocated
/// without swapping. `None` where it cannot be read.
fn available_memory() -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Asks the kernel to back `buf` with 2 MiB pages. Faulting in a fresh
/// buffer page by page is most of the cost of reading a big file (37 MB:
/// ~9 000 faults, and as many to free it); with huge pages the read takes
/// about half as long. A hint only: where transparent huge pages are off,
/// nothing changes.
fn advise_huge_pages(buf: &mut [std::mem::MaybeUninit<u8>]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let first = start.next_multiple_of(HUGE);
    let end = (start + buf.len()) / HUGE * HUGE;
    if end > first {
        // SAFETY: the range lies inside `buf`, which we own and which
        // outlives the call; MADV_HUGEPAGE changes how the kernel backs
        // those pages, never their contents or whether they are mapped.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

/// Write `bytes` to `path` atomically: a temp file in the same directory,
/// written, fsynced, given the permissions, renamed over the target, and
/// the directory fsynced. A crash leaves either the old or the new file.
/// Symlinks are followed so the link stays a link.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    permissions: Option<&fs::Permissions>,
) -> Result<DiskVersion, EditorError> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let err = |source| EditorError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = temp_path(&dir, &target);
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        if let Some(p) = permissions {
            file.set_permissions(p.clone())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &target)?;
        // Persist the rename itself; not every platform can open a dir.
        if let Ok(d) = fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        fs::metadata(&target)
    })();
    match result {
        Ok(meta) => Ok(DiskVersion::of(&meta, bytes)),
        Err(source) => {
            let _ = fs::remove_file(&tmp);
            Err(err(source))
        }
    }
}

/// How a save writes the file that is at `path` now.
pub(crate) enum SaveWrite {
    /// A new file renamed over the old (a crash leaves one or the other).
    Atomic,
    /// Into the file itself: it has other names (hard links), which a
    /// rename would leave holding the old text, as vim's `backupcopy`
    /// does. A crash mid-write is covered by the recovery file.
    InPlace,
}

/// How to save `path`, or why not: a file without its owner's write bit
/// is read-only on purpose, and a rename would overwrite it all the same
/// (root writes anything), so it is refused with how to allow it.
pub(crate) fn how_to_write(path: &Path) -> Result<SaveWrite, EditorError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = fs::metadata(path) else {
        return Ok(SaveWrite::Atomic);
    };
    if meta.permissions().mode() & 0o200 == 0 {
        return Err(EditorError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "it is read-only on disk (mode {:o}); make it writable (chmod u+w) to save",
                    meta.permissions().mode() & 0o7777
                ),
            ),
        });
    }
    Ok(if meta.nlink() > 1 {
        SaveWrite::InPlace
    } else {
        SaveWrite::Atomic
    })
}

/// Writes `bytes` into the file at `path` itself (see [`SaveWrite::InPlace`]).
pub(crate) fn write_in_place(path: &Path, bytes: &[u8]) -> Result<DiskVersion, EditorError> {
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        file.metadata()
    })();
    result
        .map(|meta| DiskVersion::of(&meta, bytes))
        .map_err(|source| EditorError::Write {
            path: path.to_path_buf(),
            source,
        })
}

/// Refuses to save when `path` now passes through a link. A document is
/// opened at its real path (links resolved, `app::editors`), so a link on
/// it at save time — the file or a folder above it swapped for one since,
/// which a cell can do in the workspace — would send the user's save, made
/// outside the sandbox, somewhere else (`~/.config/autostart/app.py`).
/// Checked just before the write; a cell that swaps in between wins a
/// race it has to time, not a save it can wait for.
pub(crate) fn refuse_new_links(path: &Path) -> Result<(), EditorError> {
    let mut existing = path;
    while fs::symlink_metadata(existing).is_err() {
        match existing.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => existing = parent,
            _ => return Ok(()),
        }
    }
    let real = fs::canonicalize(existing).map_err(|source| EditorError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    if real == existing {
        return Ok(());
    }
    Err(EditorError::Write {
        path: path.to_path_buf(),
        source: std::io::Error::other(format!(
            "{} is now a link to {} (made since the file was opened), so saving there is \
             refused; remove the link, or open the file where it leads",
            existing.display(),
            real.display()
        )),
    })
}

/// Makes the folders above `path` that are gone, when `path` lies beneath
/// `workspace`: each is opened or made with `openat2(RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS)` from the workspace root, so no link on the way is
/// followed (a folder a cell swapped for a link out of the workspace is
/// refused and nothing is made behind it). A folder that still exists is
/// left alone: the save goes on as it always did.
pub(crate) fn make_missing_folders(workspace: &Path, path: &Path) -> Result<(), EditorError> {
    let Some(folder) = path.parent() else {
        return Ok(());
    };
    if fs::metadata(folder).is_ok_and(|meta| meta.is_dir()) {
        return Ok(());
    }
    let err = |source| EditorError::Write {
        path: path.to_path_buf(),
        source,
    };
    let root = fs::canonicalize(workspace).map_err(err)?;
    let Ok(relative) = folder.strip_prefix(&root) else {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "its folder {} is gone and lies outside the workspace, so saving does not make it",
                folder.display()
            ),
        )));
    };
    crate::kernel::caps::own_folder(&root, relative, true)
        .map(drop)
        .map_err(|error| err(std::io::Error::other(error)))
}

fn temp_path(dir: &Path, target: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.{}.{n}.hello-tui-save", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A big file (read into huge pages) is read whole and hashed as a
    /// save of the same bytes is, so it is not seen as changed.
    #[test]
    fn a_big_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let text: Vec<u8> = (0..HUGE_FROM as usize + 4321)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let written = write_atomic(&path, &text, None).unwrap();
        let loaded = read(&path).unwrap();
        assert!(loaded.bytes == text);
        assert_eq!(loaded.version, written);
        // Bigger than memory (a sparse 200 GB file): a clear error, at once,
        // where the allocation used to abort the process.
        let sparse = dir.path().join("sparse.log");
        fs::File::create(&sparse)
            .unwrap()
            .set_len(200 << 30)
            .unwrap();
        let error = read(&sparse).err().expect("refused");
        assert!(
            error
                .to_string()
                .contains("200.0 GiB; there is not enough free memory"),
            "{error}"
        );
        // Grown after the stat: still read to its end.
        let meta = fs::metadata(&path).unwrap();
        fs::write(&path, [&text[..], b"more"].concat()).unwrap();
        assert_eq!(read_bytes(&path, &meta).unwrap().len(), text.len() + 4);
    }

    #[test]
    fn sniffs_binary_and_text() {
        assert!(looks_binary(b"abc\0def"));
        assert!(looks_binary(&[1, 2, 3, 4, 5, 6, b'a']));
        assert!(!looks_binary("fn main() {}\n日本語\t\r\n".as_bytes()));
        assert!(!looks_binary(b""));
    }

    #[test]
    fn classifies_invalid_utf8_lossily() {
        let c = classify(vec![b'a', 0xff, b'b']);
        assert_eq!(c, Content::InvalidUtf8("a\u{fffd}b".into()));
        assert_eq!(classify(b"ok".to_vec()), Content::Text("ok".into()));
        assert_eq!(classify(vec![0, 1]), Content::Binary);
    }
}

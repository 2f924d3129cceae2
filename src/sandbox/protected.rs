//! What confined code may read but never change inside the workspace:
//! every `.git` (folder or file), `.hello-tui` and `.claude`, at any
//! depth, and the git dirs `.git` files and links name there. A planted
//! `.git/hooks/pre-commit` or `core.fsmonitor` would run at the user's next
//! git command, outside any sandbox; a line appended to a session file
//! would be sent to the model by `--continue`; a rewritten
//! `.claude/hooks/*.sh` would run as the user at the next hook
//! (`crate::hooks`).
//!
//! Landlock cannot take a subtree back out of an allowed one, so each is a
//! read-only bind of itself ([`ReadOnlyBinds`]), made in the child's mount
//! namespace when it starts ([`super::namespace`]) and, for one that
//! appears while a sandboxed process runs, by [`super::guard`].

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::mounts;

/// Names of the entries of the workspace confined code may read but not
/// change, wherever they are.
pub const PROTECTED: [&str; 3] = [".git", ".hello-tui", ".claude"];

/// How many entries the walk for nested protected folders looks at, unless
/// [`SCAN_LIMIT_VAR`] says otherwise. It runs at every spawn (a list kept
/// from an earlier walk would miss a folder renamed since), so it is
/// bounded; past the bound the spawn is refused rather than made with
/// repositories left writable (BENCHMARKS.md: under 1 ms per 1 000
/// entries, so the default bounds a spawn near a second).
const SCAN_LIMIT: usize = 1_000_000;

/// The environment variable that raises (or lowers) [`SCAN_LIMIT`].
pub const SCAN_LIMIT_VAR: &str = "HELLO_TUI_PROTECT_SCAN_LIMIT";

/// Why the walk for nested protected folders could not vouch for the
/// workspace: a sandboxed process must then not start (fail closed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScanError {
    #[error(
        "{} holds more than {limit} files and folders: hello-tui stopped looking for \
         nested `.git`, `.hello-tui` and `.claude` folders to keep read-only, so it starts no sandboxed \
         process there (one it did not see would be writable). Open a smaller folder as the \
         workspace, move big generated trees out of it, or raise the limit with \
         {SCAN_LIMIT_VAR}=N",
        workspace.display()
    )]
    TooBig { workspace: PathBuf, limit: usize },
    #[error(
        "{}: folders kept vanishing while hello-tui looked for nested `.git` folders to \
         keep read-only (something is renaming or deleting them), so it starts no sandboxed \
         process there; try again once it stops",
        workspace.display()
    )]
    Changing { workspace: PathBuf },
    #[error(
        "{}: cannot be read ({source}), so a `.git` inside it could not be kept read-only; \
         make it readable (`chmod u+rx`) or remove it",
        path.display()
    )]
    Unreadable { path: PathBuf, source: io::Error },
}

impl From<ScanError> for io::Error {
    fn from(error: ScanError) -> Self {
        io::Error::other(error)
    }
}

/// Every `.git` (folder or file) and `.hello-tui` below the workspace's
/// top level, at any depth and whatever the folders on the way are called
/// (a repository renamed to `node_modules` or moved deep is as dangerous),
/// and the git dirs those `.git` files name inside the workspace. Links are
/// not followed, and each folder is opened beneath the workspace with no
/// link on the way (a folder swapped for a link during the walk is passed
/// over, as a link is). A protected folder is not walked into: it is bound
/// read-only whole.
pub(crate) fn nested_protected(workspace: &Path) -> Result<Vec<PathBuf>, ScanError> {
    protected_within(workspace, Path::new(""), scan_limit())
}

/// What needs protecting in the whole workspace: its own protected
/// entries ([`top_level`]) and every one below ([`nested_protected`]).
pub(crate) fn all_protected(workspace: &Path) -> Result<Vec<PathBuf>, ScanError> {
    let mut found = top_level(workspace);
    found.extend(nested_protected(workspace)?);
    Ok(found)
}

/// What needs protecting in `folder` (beneath `workspace`, both canonical)
/// and below it, as [`all_protected`] finds it for the whole workspace.
pub(crate) fn protected_below(workspace: &Path, folder: &Path) -> Result<Vec<PathBuf>, ScanError> {
    let Ok(relative) = folder.strip_prefix(workspace) else {
        return Ok(Vec::new());
    };
    if relative.as_os_str().is_empty() {
        return all_protected(workspace);
    }
    protected_within(workspace, relative, scan_limit())
}

fn scan_limit() -> usize {
    std::env::var(SCAN_LIMIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(SCAN_LIMIT)
}

/// The workspace's own protected entries (`workspace` canonical), as
/// [`entry_protected`] binds them.
pub(crate) fn top_level(workspace: &Path) -> Vec<PathBuf> {
    PROTECTED
        .iter()
        .flat_map(|name| entry_protected(&workspace.join(name), workspace))
        .collect()
}

/// What to bind for the protected entry `path` (named `.git` or
/// `.hello-tui`, in the canonical `workspace`): a folder itself; a file
/// itself (a worktree's or submodule's `.git` names the real git dir:
/// bound read-only, it can be neither changed nor replaced by a fresh
/// `git init`, whose config would run at the user's next git command) and
/// the git dir it names when that lies in the workspace; for a link, not
/// the link (the bind would follow it) but its target when that lies in
/// the workspace. Nothing for what is not there.
pub(crate) fn entry_protected(path: &Path, workspace: &Path) -> Vec<PathBuf> {
    let Ok(meta) = path.symlink_metadata() else {
        return Vec::new();
    };
    if meta.is_dir() {
        vec![path.to_path_buf()]
    } else if meta.is_file() {
        let gitdir = (path.file_name() == Some(std::ffi::OsStr::new(".git")))
            .then(|| linked_git_dir(path))
            .flatten()
            .filter(|dir| dir.starts_with(workspace) && dir != workspace);
        std::iter::once(path.to_path_buf()).chain(gitdir).collect()
    } else if meta.file_type().is_symlink() {
        linked_inside(path, workspace).into_iter().collect()
    } else {
        Vec::new()
    }
}

/// How many times the walk starts again when a folder it listed is gone
/// by the time it opens it: renaming a repository back and forth during
/// the walk must not leave it unprotected, and a build deleting its own
/// folders now and then must not refuse every spawn.
const WALK_TRIES: usize = 5;

/// The walk of `start` (relative to `workspace`; "" is the workspace,
/// whose own protected entries it leaves to [`top_level`]).
fn protected_within(
    workspace: &Path,
    start: &Path,
    limit: usize,
) -> Result<Vec<PathBuf>, ScanError> {
    for _ in 0..WALK_TRIES {
        if let Some(found) = walk_once(workspace, start, limit)? {
            return Ok(found);
        }
    }
    Err(ScanError::Changing {
        workspace: workspace.to_path_buf(),
    })
}

/// One walk; `None` when a folder changed under it (then nothing it found
/// can be trusted to be complete).
fn walk_once(
    workspace: &Path,
    start: &Path,
    limit: usize,
) -> Result<Option<Vec<PathBuf>>, ScanError> {
    use rustix::fs::{Dir, FileType, ResolveFlags};
    let workspace = &workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let unreadable = |path: &Path, source: Errno| ScanError::Unreadable {
        path: path.to_path_buf(),
        source: source.into(),
    };
    let root = rustix::fs::open(
        workspace,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| unreadable(workspace, e))?;
    let mut found = Vec::new();
    let mut seen = 0usize;
    // Folders still to read, relative to the workspace ("" is itself).
    let mut pending = vec![start.to_path_buf()];
    while let Some(relative) = pending.pop() {
        let opened = rustix::fs::openat2(
            &root,
            if relative.as_os_str().is_empty() {
                Path::new(".")
            } else {
                &relative
            },
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
        );
        let fd = match opened {
            Ok(fd) => fd,
            // Gone, or swapped for a link or a file since it was listed:
            // it may have been a repository renamed away mid-walk.
            Err(Errno::NOENT | Errno::LOOP | Errno::NOTDIR | Errno::XDEV) => return Ok(None),
            Err(Errno::ACCESS) if !owned_by_us(&root, &relative) => continue,
            Err(errno) => return Err(unreadable(&workspace.join(&relative), errno)),
        };
        let mut dir = Dir::new(fd).map_err(|e| unreadable(&workspace.join(&relative), e))?;
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| unreadable(&workspace.join(&relative), e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            seen += 1;
            if seen > limit {
                return Err(ScanError::TooBig {
                    workspace: workspace.clone(),
                    limit,
                });
            }
            let mut kind = entry.file_type();
            if kind == FileType::Unknown {
                // Some file systems do not say in the listing.
                kind = dir
                    .fd()
                    .and_then(|fd| {
                        rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                    })
                    .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode));
            }
            let name = std::ffi::OsStr::from_bytes(name);
            let is_dir = kind == FileType::Directory;
            let top = relative.as_os_str().is_empty();
            if PROTECTED.iter().any(|p| name == *p) {
                // The workspace's own are `top_level`'s.
                if !top {
                    found.extend(entry_protected(
                        &workspace.join(&relative).join(name),
                        workspace,
                    ));
                }
                continue;
            }
            if is_dir {
                pending.push(relative.join(name));
            }
        }
    }
    Ok(Some(found))
}

/// The folder a protected name that is a link leads to, when it lies in
/// the workspace (`.git -> realgit`: git follows the link, so `realgit`
/// must be as read-only as a `.git` folder). One outside is read-only in
/// the child already.
fn linked_inside(link: &Path, workspace: &Path) -> Option<PathBuf> {
    let target = link.canonicalize().ok()?;
    (target.is_dir() && target.starts_with(workspace) && target != workspace).then_some(target)
}

/// Whether the folder at `relative` belongs to this process's user: one
/// that cannot be read but is ours, confined code could make readable
/// again (`chmod`) and write into, so it must not be passed over. One of
/// another user confined code can neither list nor change the mode of.
fn owned_by_us(root: &OwnedFd, relative: &Path) -> bool {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    rustix::fs::statat(root, relative, AtFlags::SYMLINK_NOFOLLOW)
        .map_or(true, |st| st.st_uid == uid)
}

/// The git dir a `.git` file names (`gitdir: PATH`, relative to the file's
/// folder), resolved; `None` when the file says nothing usable.
fn linked_git_dir(dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let named = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    base.join(named)
        .canonicalize()
        .ok()
        .filter(|dir| dir.is_dir())
}

/// Read-only binds of protected entries, planned in the parent and made
/// in a child (a spawn entering its namespace, or the guard's helper that
/// joined a running one) with raw syscalls only.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadOnlyBinds {
    /// The canonical workspace, every entry's root.
    workspace: Option<CString>,
    /// Entries relative to the workspace.
    relative: Vec<CString>,
}

impl ReadOnlyBinds {
    /// Binds for `paths` (what this module found), beneath the canonical
    /// `workspace`; paths outside it are left out (they are read-only in
    /// the child already).
    pub(crate) fn new(workspace: &Path, paths: &[PathBuf]) -> io::Result<ReadOnlyBinds> {
        let relative = paths
            .iter()
            .filter_map(|path| path.strip_prefix(workspace).ok())
            .filter(|relative| !relative.as_os_str().is_empty())
            .map(c_path)
            .collect::<io::Result<Vec<_>>>()?;
        Ok(ReadOnlyBinds {
            workspace: Some(c_path(workspace)?),
            relative,
        })
    }

    /// Makes each entry read-only in the caller's mount namespace
    /// ([`mounts::bind_read_only_beneath`]: reached with no link on the
    /// way, skipped when read-only already). One gone, or swapped for a
    /// link, since it was found is passed over: the guard protects it where
    /// it went. Async-signal-safe.
    pub(crate) fn apply(&self) -> io::Result<()> {
        let Some(workspace) = &self.workspace else {
            return Ok(());
        };
        if self.relative.is_empty() {
            return Ok(());
        }
        let root: OwnedFd = mounts::open_folder(workspace)?;
        for relative in &self.relative {
            match mounts::bind_read_only_beneath(&root, relative) {
                Err(error)
                    if matches!(
                        error.raw_os_error(),
                        Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR | libc::EXDEV)
                    ) => {}
                other => other?,
            }
        }
        Ok(())
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Route 10 of issue 25: the walk skipped `node_modules` and stopped
    /// at depth 6, so renaming a repository or moving it deep left it
    /// writable. Every `.git` and `.hello-tui` is found now, whatever the
    /// folders on the way are called, at any depth.
    #[test]
    fn every_protected_name_is_found_whatever_the_folder_and_depth() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let deep = ws.join("a/b/c/d/e/f/g/h/i");
        for folder in [
            ws.join("node_modules/sub/.git/hooks"),
            ws.join("target/.hello-tui/sessions"),
            deep.join(".git"),
            ws.join(".git/modules/x/.git"),
            ws.join("wt"),
            ws.join("gitdirs/wt"),
        ] {
            std::fs::create_dir_all(folder).unwrap();
        }
        std::fs::write(ws.join("wt/.git"), "gitdir: ../gitdirs/wt\n").unwrap();
        std::os::unix::fs::symlink(ws.join("node_modules"), ws.join("link")).unwrap();
        let mut found = protected_within(&ws, Path::new(""), 1000).unwrap();
        found.sort();
        let mut expected = vec![
            ws.join("node_modules/sub/.git"),
            ws.join("target/.hello-tui"),
            deep.join(".git"),
            ws.join("wt/.git"),
            ws.join("gitdirs/wt"),
        ];
        expected.sort();
        // The workspace's own `.git` is `Namespace::plan`'s, and is not
        // walked into; a link is not followed.
        assert_eq!(found, expected);
    }

    /// Cut short by its budget, the walk fails (the spawn is refused) and
    /// says how to go on, instead of leaving deeper repositories open.
    #[test]
    fn a_walk_cut_short_fails_closed_and_says_how_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let error = protected_within(dir.path(), Path::new(""), 10).unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, ScanError::TooBig { limit: 10, .. }),
            "{text}"
        );
        assert!(
            text.contains(SCAN_LIMIT_VAR) && text.contains("more than 10"),
            "{text}"
        );
        assert_eq!(
            protected_within(dir.path(), Path::new(""), 20).unwrap(),
            Vec::<PathBuf>::new()
        );
    }
}

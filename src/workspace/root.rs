//! Where the user is working: the workspace root, and what `hello-tui PATH`
//! (or `--open FILE:LINE:COL`) means.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::walk::relative_path;

/// Why a command-line target could not be opened; shown to the user as is.
#[derive(Debug, Error)]
pub enum ResolveError {
    #[error("no such file or directory: {0}")]
    NotFound(PathBuf),
    #[error("cannot open {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("empty path")]
    Empty,
}

/// The directory the workbench is rooted at. The path is canonical (absolute,
/// symlinks resolved) so paths from the watcher and the index compare equal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Opens `dir` as a workspace root.
    pub fn new(dir: &Path) -> Result<Self, ResolveError> {
        let root = canonical(dir)?;
        if !root.is_dir() {
            return Err(ResolveError::Io {
                path: root,
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root with `/` separators (`None` when outside).
    pub fn relative(&self, path: &Path) -> Option<String> {
        relative_path(&self.root, path)
    }

    /// The absolute path of a workspace-relative path from the index.
    pub fn absolute(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }
}

/// What to open: the workspace, and optionally a file and a 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenTarget {
    pub workspace: Workspace,
    /// Canonical path of the file to open, `None` when a directory was given.
    pub file: Option<PathBuf>,
    /// 1-based line, if the argument had `:LINE`.
    pub line: Option<u32>,
    /// 1-based column, if the argument had `:LINE:COL`.
    pub column: Option<u32>,
}

/// Resolves a command-line argument such as `src/main.rs:12:5`, `notes.md:3`
/// or `.`; relative paths are taken from `cwd` (the working directory).
///
/// A file argument chooses the workspace the way terminal tools do, so the
/// user can jump to the file's siblings and the project's language server
/// is rooted where the project is:
/// 1. the enclosing git repository's root;
/// 2. outside git, the working directory when the file lies under it (as
///    helix, Codex and Claude Code do: the user started where they work),
///    unless that is the filesystem root (`cd / && hello-tui etc/hosts`
///    must not index and watch every file on the machine);
/// 3. otherwise the nearest directory holding a project marker
///    ([`ROOT_MARKERS`]);
/// 4. otherwise the file's directory.
///
/// A name that really contains `:` and exists wins over the `FILE:LINE`
/// reading.
pub fn resolve_open_target(arg: &str, cwd: &Path) -> Result<OpenTarget, ResolveError> {
    if arg.is_empty() {
        return Err(ResolveError::Empty);
    }
    let (path, line, column) = split_position(arg, cwd);
    let path = canonical(&cwd.join(path))?;
    if path.is_dir() {
        return Ok(OpenTarget {
            workspace: Workspace { root: path },
            file: None,
            line: None,
            column: None,
        });
    }
    let parent = path.parent().unwrap_or(&path);
    let cwd = cwd.canonicalize().ok();
    let root = git_root(parent)
        .or_else(|| {
            cwd.as_deref()
                .filter(|cwd| cwd.parent().is_some() && parent.starts_with(cwd))
        })
        .or_else(|| marked_root(parent))
        .unwrap_or(parent)
        .to_path_buf();
    Ok(OpenTarget {
        workspace: Workspace { root },
        file: Some(path),
        line,
        column,
    })
}

/// Splits `FILE[:LINE[:COL]]`, preferring the longest prefix that exists on
/// disk so a file whose name ends in `:12` is still found.
fn split_position<'a>(arg: &'a str, cwd: &Path) -> (&'a str, Option<u32>, Option<u32>) {
    let exists = |name: &str| cwd.join(name).exists();
    if exists(arg) {
        return (arg, None, None);
    }
    // `grep -n` style output has a trailing colon: `file:12:` or `file:12:5:`.
    let trimmed = arg.strip_suffix(':').unwrap_or(arg);
    if let Some((rest, col)) = split_number(trimmed)
        && let Some((file, line)) = split_number(rest)
        && exists(file)
    {
        return (file, Some(line), Some(col));
    }
    if let Some((file, line)) = split_number(trimmed)
        && exists(file)
    {
        return (file, Some(line), None);
    }
    (arg, None, None)
}

/// `"name:42"` → `("name", 42)`; positions are 1-based so 0 becomes 1.
fn split_number(s: &str) -> Option<(&str, u32)> {
    let (head, tail) = s.rsplit_once(':')?;
    if head.is_empty() || tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = tail.parse::<u32>().ok()?;
    Some((head, n.max(1)))
}

fn canonical(path: &Path) -> Result<PathBuf, ResolveError> {
    path.canonicalize().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ResolveError::NotFound(path.to_path_buf())
        } else {
            ResolveError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// The nearest ancestor holding `.git` (a directory, or a file in worktrees
/// and submodules).
fn git_root(start: &Path) -> Option<&Path> {
    start.ancestors().find(|dir| dir.join(".git").exists())
}

/// Files that mark a project's root, for a file outside git and outside the
/// working directory.
pub(crate) const ROOT_MARKERS: &[&str] = &[
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "deno.json",
    "pom.xml",
    "build.gradle",
    "Gemfile",
    "composer.json",
    ".hg",
];

/// The nearest ancestor holding one of [`ROOT_MARKERS`].
fn marked_root(start: &Path) -> Option<&Path> {
    start
        .ancestors()
        .find(|dir| ROOT_MARKERS.iter().any(|m| dir.join(m).exists()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_number_accepts_digits_only() {
        assert_eq!(split_number("a.rs:12"), Some(("a.rs", 12)));
        assert_eq!(split_number("a.rs:0"), Some(("a.rs", 1)));
        assert_eq!(split_number("a.rs:x"), None);
        assert_eq!(split_number("a.rs:"), None);
        assert_eq!(split_number(":12"), None);
        assert_eq!(split_number("a.rs:99999999999999"), None);
    }
}

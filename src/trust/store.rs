//! Where the answers are kept: one JSON file in the user's data dir
//! (`$XDG_DATA_HOME/hello-tui/trusted-workspaces.json`), keyed by the
//! canonical workspace path; `HELLO_TUI_TRUST_FILE` names another file
//! (tests, so they never touch the real one). Nothing in a workspace is
//! ever read for it, and a store that lies inside the workspace being
//! decided (a workspace of `~`) is not believed: confined code may write
//! there.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Largest store read: a few thousand workspaces.
const MAX_STORE: u64 = 4 << 20;

#[derive(Debug, Error)]
pub enum TrustError {
    #[error("no data folder to remember the answer in (set HELLO_TUI_TRUST_FILE)")]
    NoPlace,
    #[error("{0} lies inside the workspace, where confined code can write: not used")]
    InsideWorkspace(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    /// Canonical workspace path → trusted (`true`) or refused (`false`).
    workspaces: BTreeMap<PathBuf, bool>,
    /// Canonical workspace path → its own hooks as the user saw them when
    /// they said yes (`HookEntry::identity`): a hook added later (by a
    /// `git pull`, or by a cell writing `.claude/settings.json`) waits for
    /// the question again.
    #[serde(default)]
    hooks: BTreeMap<PathBuf, Vec<String>>,
}

/// The user's remembered answers.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: Option<PathBuf>,
}

impl TrustStore {
    /// `HELLO_TUI_TRUST_FILE`, else the data dir's file.
    pub(crate) fn from_env() -> Self {
        let path = std::env::var_os("HELLO_TUI_TRUST_FILE")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                directories::ProjectDirs::from("", "", "hello-tui")
                    .map(|dirs| dirs.data_local_dir().join("trusted-workspaces.json"))
            });
        TrustStore { path }
    }

    /// No store: nothing is remembered, nothing read.
    pub fn nowhere() -> Self {
        TrustStore { path: None }
    }

    pub fn at(path: PathBuf) -> Self {
        TrustStore { path: Some(path) }
    }

    /// Where the answers are kept (said in the question).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The remembered answer for the workspace at `root`, if any.
    pub fn get(&self, root: &Path) -> Option<bool> {
        let path = self.usable(root).ok()?;
        let root = super::canonical(root);
        read(path).ok()?.workspaces.get(&root).copied()
    }

    /// Remembers the answer for the workspace at `root`.
    pub fn set(&self, root: &Path, trusted: bool) -> Result<(), TrustError> {
        self.change(root, |file, root| {
            file.workspaces.insert(root, trusted);
        })
    }

    /// The workspace's own hooks the user approved (with its trust).
    pub fn approved_hooks(&self, root: &Path) -> Option<Vec<String>> {
        let path = self.usable(root).ok()?;
        let root = super::canonical(root);
        read(path).ok()?.hooks.get(&root).cloned()
    }

    /// Remembers `hooks` as the ones the user approved for `root`.
    pub fn approve_hooks(&self, root: &Path, hooks: Vec<String>) -> Result<(), TrustError> {
        self.change(root, |file, root| {
            file.hooks.insert(root, hooks);
        })
    }

    fn change(&self, root: &Path, edit: impl FnOnce(&mut File, PathBuf)) -> Result<(), TrustError> {
        let path = self.usable(root)?;
        let mut file = match read(path) {
            Ok(file) => file,
            Err(TrustError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                File::default()
            }
            Err(error) => return Err(error),
        };
        edit(&mut file, super::canonical(root));
        write(path, &file)
    }

    fn usable(&self, root: &Path) -> Result<&Path, TrustError> {
        let path = self.path.as_deref().ok_or(TrustError::NoPlace)?;
        let parent = path.parent().unwrap_or(path);
        if super::inside(parent, root) {
            return Err(TrustError::InsideWorkspace(path.to_path_buf()));
        }
        Ok(path)
    }
}

fn read(path: &Path) -> Result<File, TrustError> {
    use std::io::Read;
    let io = |source| TrustError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_STORE)
        .read_to_string(&mut text)
        .map_err(io)?;
    serde_json::from_str(&text).map_err(|source| TrustError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Written whole to a temp file beside it, then renamed over it: a crash
/// never leaves half a store.
fn write(path: &Path, file: &File) -> Result<(), TrustError> {
    let io = |source| TrustError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    let text = serde_json::to_string_pretty(file).map_err(|source| TrustError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    temp.write_all(text.as_bytes()).map_err(io)?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_by_canonical_path() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let store = TrustStore::at(home.path().join("d/trust.json"));
        assert_eq!(store.get(ws.path()), None);
        store.set(ws.path(), true).unwrap();
        let link = home.path().join("ws-link");
        std::os::unix::fs::symlink(ws.path(), &link).unwrap();
        assert_eq!(store.get(&link), Some(true), "the same folder by a link");
        store.set(&link, false).unwrap();
        assert_eq!(store.get(ws.path()), Some(false));
    }

    #[test]
    fn a_store_inside_the_workspace_is_not_believed() {
        let ws = tempfile::tempdir().unwrap();
        let path = ws
            .path()
            .join(".local/share/hello-tui/trusted-workspaces.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let root = super::super::canonical(ws.path());
        std::fs::write(
            &path,
            format!(r#"{{"workspaces": {{"{}": true}}}}"#, root.display()),
        )
        .unwrap();
        let store = TrustStore::at(path);
        assert_eq!(store.get(ws.path()), None);
        assert!(matches!(
            store.set(ws.path(), true),
            Err(TrustError::InsideWorkspace(_))
        ));
    }
}

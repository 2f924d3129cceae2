//! What the workbench remembers of a workspace between runs that is the
//! user's, not the repository's: the unsent draft and the layout. It lives
//! in the user's data dir (`$XDG_DATA_HOME/hello-tui/workspaces/NAME-HASH/`;
//! `HELLO_TUI_STATE_DIR` names another folder, for tests), never in the
//! workspace: a cloned repository could otherwise ship a "draft" that one
//! Enter would send to the model.

use std::path::{Path, PathBuf};

/// Largest draft kept: a pasted file is kept whole, a runaway one is not.
const MAX_DRAFT_BYTES: usize = 4 << 20;

/// The folder a workspace's memory is kept in (`None`: no data dir here,
/// so nothing is remembered).
#[derive(Debug, Clone, Default)]
pub struct WorkspaceMemory {
    dir: Option<PathBuf>,
}

impl WorkspaceMemory {
    /// The memory of `workspace` (its canonical path names the folder).
    pub fn of(workspace: &Path) -> Self {
        let root = std::env::var_os("HELLO_TUI_STATE_DIR")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                directories::ProjectDirs::from("", "", "hello-tui")
                    .map(|dirs| dirs.data_local_dir().to_path_buf())
            });
        let canonical = workspace
            .canonicalize()
            .unwrap_or_else(|_| workspace.to_path_buf());
        let key = crate::editor::recovery_home::workspace_key(&canonical);
        Self {
            dir: root.map(|root| root.join("workspaces").join(key)),
        }
    }

    /// What the composer held when the workbench last quit here.
    pub fn draft(&self) -> Option<String> {
        self.read("draft.md").filter(|text| !text.trim().is_empty())
    }

    /// Keeps the composer's text for the next run (an empty one forgets).
    pub fn keep_draft(&self, text: &str) -> std::io::Result<()> {
        if text.trim().is_empty() || text.len() > MAX_DRAFT_BYTES {
            return self.forget("draft.md");
        }
        self.write("draft.md", text)
    }

    /// The layout as the user left it, as its JSON.
    pub fn layout(&self) -> Option<String> {
        self.read("layout.json")
    }

    pub fn keep_layout(&self, json: &str) -> std::io::Result<()> {
        self.write("layout.json", json)
    }

    pub fn forget_layout(&self) -> std::io::Result<()> {
        self.forget("layout.json")
    }

    fn read(&self, name: &str) -> Option<String> {
        let path = self.dir.as_ref()?.join(name);
        // Only a plain file (never through a link), of a sane size.
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_DRAFT_BYTES as u64 {
            return None;
        }
        std::fs::read_to_string(path).ok()
    }

    /// Written whole or not at all: a temporary file renamed over the old.
    fn write(&self, name: &str, text: &str) -> std::io::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        std::fs::create_dir_all(dir)?;
        let temporary = dir.join(format!(".{name}.tmp"));
        std::fs::write(&temporary, text)?;
        std::fs::rename(&temporary, dir.join(name))
    }

    fn forget(&self, name: &str) -> std::io::Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        match std::fs::remove_file(dir.join(name)) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(root: &Path, workspace: &Path) -> WorkspaceMemory {
        let key = crate::editor::recovery_home::workspace_key(workspace);
        WorkspaceMemory {
            dir: Some(root.join("workspaces").join(key)),
        }
    }

    #[test]
    fn a_draft_comes_back_per_workspace_and_an_empty_one_is_forgotten() {
        let root = tempfile::tempdir().unwrap();
        let a = memory(root.path(), Path::new("/w/a"));
        let b = memory(root.path(), Path::new("/w/b"));
        a.keep_draft("half a question\nsecond line").unwrap();
        assert_eq!(a.draft().as_deref(), Some("half a question\nsecond line"));
        assert_eq!(b.draft(), None, "another workspace has its own");
        a.keep_draft("   ").unwrap();
        assert_eq!(a.draft(), None);
    }

    #[test]
    fn a_link_in_place_of_the_draft_is_not_read() {
        let root = tempfile::tempdir().unwrap();
        let a = memory(root.path(), Path::new("/w/a"));
        a.keep_layout("{}").unwrap();
        let secret = root.path().join("secret");
        std::fs::write(&secret, "send me").unwrap();
        let dir = a.dir.clone().unwrap();
        std::os::unix::fs::symlink(&secret, dir.join("draft.md")).unwrap();
        assert_eq!(a.draft(), None);
    }
}

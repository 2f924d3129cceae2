//! The open documents — the tabs, the active one, the clipboard, recovery
//! of unsaved edits — as the workbench holds them. The file view
//! (`crate::panes::file_view`) shows them and turns keys into edits.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::editor::{Document, Recovery};

/// Open documents and what goes with them.
#[derive(Default)]
pub struct Editors {
    pub tabs: Vec<Document>,
    pub active: usize,
    /// The in-app clipboard (also sent to the terminal with OSC 52).
    pub clipboard: String,
    /// Bumped whenever something the snapshot shows changes (text, cursor,
    /// tabs), so `snapshot::scene_key` never hashes whole buffers.
    pub revision: u64,
    /// One line for the status bar: saved, reloaded, errors.
    pub status: Option<String>,
    /// What the watcher said about itself (polling fallback, errors).
    pub watch_note: Option<String>,
    /// Where recovery files go (this instance's locked folder, see
    /// `RecoveryHome`); `None` turns recovery off (tests).
    pub recovery_dir: Option<PathBuf>,
    /// Writes recovery files off the UI loop. Declared before
    /// `recovery_home` so it drops first: its last writes land while the
    /// folder is still locked, and before an empty folder is removed.
    pub recovery_writer: crate::editor::RecoveryWriter,
    /// Holds the lock on `recovery_dir` while the workbench runs.
    pub recovery_home: Option<crate::editor::RecoveryHome>,
    /// Recoveries found at start, waiting for the user's answer.
    pub found_recoveries: Vec<Recovery>,
    /// What the user chose for each, summed up after the last answer.
    pub recovery_answers: Vec<String>,
    /// Lines (0-based) the last cell or agent answer changed through
    /// `fs.write`/`fs.edit`, per file: marked in the gutter until the user
    /// edits the file (`app::changes` fills it).
    pub changed_lines: std::collections::HashMap<PathBuf, Vec<usize>>,
    /// Unsaved texts for the panic hook and signal exits.
    pub mirror: crate::workbench::recovery_mirror::RecoveryMirror,
}

impl Editors {
    pub fn active(&self) -> Option<&Document> {
        self.tabs.get(self.active)
    }

    pub fn active_mut(&mut self) -> Option<&mut Document> {
        self.tabs.get_mut(self.active)
    }

    /// Highlighting has more lines to do than one frame allows, or the
    /// background pass has not reached the view yet.
    pub fn needs_more_work(&self) -> bool {
        self.active().is_some_and(Document::needs_more_work)
    }

    /// When the next recovery write is due; `None` (no timer) when nothing
    /// is pending or recovery is off.
    pub fn recovery_due_at(&self) -> Option<Instant> {
        self.recovery_dir.as_ref()?;
        self.tabs.iter().filter_map(Document::recovery_due_at).min()
    }

    pub fn index_of(&self, path: &Path) -> Option<usize> {
        self.tabs.iter().position(|d| d.path() == path)
    }

    /// Something the snapshot sees changed (text, cursor, tabs). A buffer
    /// that is clean again (saved, undone back to the disk text, reloaded)
    /// has no recovery file: it must not come back next start. The caller
    /// tells the rest of the workbench (`Effect::FilesChanged`).
    pub fn touch(&mut self) {
        self.revision = self.revision.wrapping_add(1);
        for doc in &mut self.tabs {
            if !doc.is_dirty() {
                doc.discard_recovery();
            }
        }
        self.mirror.forget_clean(&self.tabs);
    }
}

//! The open documents — the tabs, the active one, the clipboard, recovery
//! of unsaved edits — as the workbench holds them. The file view
//! (`crate::panes::file_view`) shows them and turns keys into edits.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::editor::Recovery;
use crate::editor::{DiskChange, Document};
use crate::workbench::Workbench;

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

    pub(crate) fn index_of(&self, path: &Path) -> Option<usize> {
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

/// Tabs a resumed session opens at most: the file is untrusted, and a
/// long list would only slow the start.
const MAX_RESTORED_TABS: usize = 64;

/// The open files as a session records them: workspace-relative, with
/// their cursors. A file outside the workspace is left out (resuming
/// opens only files beneath it).
pub(crate) fn open_tabs(workbench: &Workbench) -> crate::session::OpenTabs {
    let root = std::fs::canonicalize(&workbench.workspace_root)
        .unwrap_or_else(|_| workbench.workspace_root.clone());
    let mut tabs = crate::session::OpenTabs::default();
    for (index, doc) in workbench.editors.tabs.iter().enumerate() {
        let Some(relative) = doc.path().strip_prefix(&root).ok().and_then(Path::to_str) else {
            continue;
        };
        if index == workbench.editors.active {
            tabs.active = tabs.files.len();
        }
        let (line, column) = doc.cursor();
        tabs.files.push(crate::session::TabRecord {
            path: relative.to_owned(),
            line,
            column,
        });
    }
    tabs
}

/// Opens again the tabs a resumed session recorded, the active one active
/// and each cursor where it was. The session file is untrusted input, so
/// only a regular file that resolves beneath the workspace opens (no
/// absolute path, no `..`, no link leading out); the rest, and files gone
/// since, are skipped with one notice.
pub(crate) fn restore_tabs(workbench: &mut Workbench, tabs: &crate::session::OpenTabs) {
    let Ok(root) = std::fs::canonicalize(&workbench.workspace_root) else {
        return;
    };
    let mut skipped: Vec<&str> = Vec::new();
    let mut active = None;
    for (index, tab) in tabs.files.iter().enumerate() {
        if index >= MAX_RESTORED_TABS {
            skipped.push(&tab.path);
            continue;
        }
        let Some(doc) = beneath(&root, &tab.path).and_then(|path| Document::open(path).ok()) else {
            skipped.push(&tab.path);
            continue;
        };
        let at = match workbench.editors.index_of(doc.path()) {
            Some(at) => at,
            None => {
                workbench.editors.tabs.push(doc);
                workbench.editors.tabs.len() - 1
            }
        };
        if let Some(doc) = workbench.editors.tabs.get_mut(at) {
            doc.jump_to((tab.line, tab.column));
        }
        if index == tabs.active {
            active = Some(at);
        }
    }
    if let Some(at) = active.or_else(|| workbench.editors.tabs.len().checked_sub(1)) {
        workbench.editors.active = at;
    }
    if !skipped.is_empty() {
        const NAMED: usize = 5;
        let mut names = skipped
            .iter()
            .take(NAMED)
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if skipped.len() > NAMED {
            names.push_str(&format!(" and {} more", skipped.len() - NAMED));
        }
        let plural = if skipped.len() == 1 { "" } else { "s" };
        workbench.notice(&format!(
            "Not reopened: {} file{plural} the session had open ({names}): gone, not a \
             file, or not inside the workspace.",
            skipped.len()
        ));
    }
    changed(workbench);
}

/// `relative` resolved beneath `root` (canonical), when it names a regular
/// file there: never an absolute path, a `..`, or a link that leads out.
fn beneath(root: &Path, relative: &str) -> Option<PathBuf> {
    let relative = Path::new(relative);
    let plain = relative
        .components()
        .all(|part| matches!(part, std::path::Component::Normal(_)));
    if !plain || relative.as_os_str().is_empty() {
        return None;
    }
    let path = std::fs::canonicalize(root.join(relative)).ok()?;
    let file = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
    (file && path.starts_with(root)).then_some(path)
}

/// A problem the user must read: the status bar and the conversation.
pub(crate) fn report(workbench: &mut Workbench, text: &str) {
    workbench.editors.status = Some(text.to_string());
    workbench.notice(text);
}

/// Something the snapshot sees changed: the file view takes note, and the
/// rest of the workbench hears of it ([`files_changed`]).
pub(crate) fn changed(workbench: &mut Workbench) {
    workbench.editors.touch();
    files_changed(workbench);
}

/// The open files changed: the kernel's `fs.write` learns which have
/// unsaved edits (it refuses to overwrite them), and the language servers
/// get the unsaved text.
pub fn files_changed(workbench: &mut Workbench) {
    publish_dirty(workbench);
    crate::workbench::diagnostics::sync_open_documents(workbench);
}

/// Sends the dirty paths to the kernel only when the set changed.
pub(crate) fn publish_dirty(workbench: &Workbench) {
    let Some(tx) = &workbench.services.dirty_paths else {
        return;
    };
    let now: std::collections::BTreeSet<PathBuf> = workbench
        .editors
        .tabs
        .iter()
        .filter(|d| d.is_dirty())
        .map(|d| d.path().to_path_buf())
        .collect();
    tx.send_if_modified(|current| {
        if **current == now {
            return false;
        }
        *current = std::sync::Arc::new(now);
        true
    });
}

/// The user chose to quit and lose unsaved edits: their recovery files go
/// too, so the next start does not bring them back.
pub(crate) fn discard_all_recoveries(workbench: &mut Workbench) {
    for doc in &mut workbench.editors.tabs {
        doc.discard_recovery();
    }
    workbench.editors.mirror.clear();
}

/// The recovery timer fired: write what is due.
pub fn recovery_tick(workbench: &mut Workbench) {
    let Some(dir) = workbench.editors.recovery_dir.clone() else {
        return;
    };
    let now = Instant::now();
    for doc in &mut workbench.editors.tabs {
        if let Some(write) = doc.recovery_tick(&dir, now) {
            workbench.editors.recovery_writer.submit(write);
        }
    }
    workbench
        .editors
        .mirror
        .refresh(&dir, &workbench.editors.tabs);
}

/// Before a clean exit (SIGTERM): everything unsaved goes to recovery.
pub(crate) fn write_all_recoveries(workbench: &mut Workbench) {
    // Queued older texts land first, then the current ones over them.
    workbench.editors.recovery_writer.flush();
    let Some(dir) = &workbench.editors.recovery_dir else {
        return;
    };
    for doc in &workbench.editors.tabs {
        if let Err(error) = doc.write_recovery_now(dir) {
            tracing::warn!(%error, "writing a recovery file");
        }
    }
}

/// A file changed on disk (watcher or the kernel's `fs.write`): reload a
/// clean buffer, flag a dirty one. Whether an open buffer changed.
pub(crate) fn on_disk_change(workbench: &mut Workbench, path: &Path) -> bool {
    let Some(i) = workbench.editors.index_of(path) else {
        return false;
    };
    let change = workbench.editors.tabs[i].check_disk();
    let name = workbench.display_path(path);
    workbench.editors.status = match change {
        DiskChange::Unchanged | DiskChange::Unreadable => return false,
        DiskChange::Reloaded => Some(format!("Reloaded {name} (changed on disk)")),
        DiskChange::Conflict => Some(format!(
            "{name} changed on disk; your edits are kept. Ctrl+R: keep mine, load theirs, diff"
        )),
        DiskChange::Deleted => Some(format!("{name} was deleted on disk; saving recreates it")),
    };
    changed(workbench);
    true
}

//! The file view's behaviour: open documents as tabs, turn keymap actions
//! into `EditCommand`s, save, react to the watcher and to the kernel's
//! writes, and keep crash recovery files. Called from `update` only; the
//! picker, the prompts and the conflict choices are overlays (`crate::overlays`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::state::{AppState, Question};
use super::update::{Command, notice};
use crate::editor::{
    DiskChange, DiskState, Document, EditCommand, EditorError, Recovery, discard_recovery,
};
use crate::keymap::{Action, PaneId};
use crate::overlays::Overlay;
use crate::overlays::confirm::Confirm;
use crate::overlays::conflict::Conflict;
use crate::overlays::picker::Picker;
use crate::overlays::prompt::{Prompt, PromptKind};
use crate::workspace::{WorkspaceEvent, WorkspaceMessage};

/// Longest text sent to the system clipboard with OSC 52; terminals drop
/// (or choke on) bigger sequences.
const MAX_OSC52_BYTES: usize = 100_000;

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
    /// Holds the lock on `recovery_dir` while the workbench runs.
    pub recovery_home: Option<crate::editor::RecoveryHome>,
    /// Recoveries found at start, waiting for the user's answer.
    pub found_recoveries: Vec<Recovery>,
    /// What the user chose for each, summed up after the last answer.
    pub recovery_answers: Vec<String>,
    /// Unsaved texts for the panic hook and signal exits.
    pub mirror: super::recovery_mirror::RecoveryMirror,
}

impl Editors {
    pub fn active(&self) -> Option<&Document> {
        self.tabs.get(self.active)
    }

    pub fn active_mut(&mut self) -> Option<&mut Document> {
        self.tabs.get_mut(self.active)
    }

    /// Highlighting has more lines to do than one frame allows.
    pub fn needs_more_work(&self) -> bool {
        self.active().is_some_and(Document::needs_more_work)
    }

    /// When the next recovery write is due; `None` (no timer) when nothing
    /// is pending or recovery is off.
    pub fn recovery_due_at(&self) -> Option<Instant> {
        self.recovery_dir.as_ref()?;
        self.tabs.iter().filter_map(Document::recovery_due_at).min()
    }

    fn index_of(&self, path: &Path) -> Option<usize> {
        self.tabs.iter().position(|d| d.path() == path)
    }
}

/// Opens `path` (or switches to its tab) and focuses the file view.
/// `position` is 1-based (line, column) as typed by people.
pub fn open(state: &mut AppState, path: &Path, position: Option<(usize, usize)>) -> Command {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let index = match state.editors.index_of(&path) {
        Some(i) => i,
        None => match Document::open(&path) {
            Ok(doc) => {
                state.editors.tabs.push(doc);
                state.editors.tabs.len() - 1
            }
            Err(error) => {
                report(state, &error.to_string());
                return Command::Redraw;
            }
        },
    };
    state.editors.active = index;
    state.focus = PaneId::FileView;
    if let Some((line, column)) = position
        && let Some(doc) = state.editors.active_mut()
    {
        doc.set_cursor((line.saturating_sub(1), column.saturating_sub(1)), false);
    }
    changed(state);
    Command::Redraw
}

/// A problem the user must read: the status bar and the conversation.
fn report(state: &mut AppState, text: &str) {
    state.editors.status = Some(text.to_string());
    notice(state, text);
}

/// Something the snapshot sees changed; also republish the dirty paths.
/// A buffer that is clean again (saved, undone back to the disk text,
/// reloaded) has no recovery file: it must not come back next start.
fn changed(state: &mut AppState) {
    state.editors.revision = state.editors.revision.wrapping_add(1);
    for doc in &mut state.editors.tabs {
        if !doc.is_dirty() {
            doc.discard_recovery();
        }
    }
    publish_dirty(state);
    super::diagnostics::sync_open_documents(state);
    state.editors.mirror.forget_clean(&state.editors.tabs);
}

/// The kernel's `fs.write` refuses to overwrite files with unsaved edits:
/// it reads this set. Sends only when the set changed.
fn publish_dirty(state: &AppState) {
    let Some(tx) = &state.dirty_paths_tx else {
        return;
    };
    let now: std::collections::BTreeSet<PathBuf> = state
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

/// Performs the file actions of the keymap (editing, tabs, saving,
/// conflicts, picker, prompts).
pub fn apply(state: &mut AppState, action: Action) -> Command {
    if action == Action::Indent && state.editors.active().is_none() {
        // Tab is text only when there is text; an empty file view passes
        // it on as "next pane".
        return super::update::apply(state, Action::FocusNext);
    }
    let command = match action {
        Action::OpenPicker => {
            state.overlay = Some(Overlay::Picker(Picker::new(state)));
            return Command::Redraw;
        }
        Action::GoToLine => return open_prompt(state, PromptKind::GoToLine),
        Action::FindInFile => return open_prompt(state, PromptKind::Find),
        Action::Save => return save(state, Some(state.editors.active)),
        Action::SaveAll => return save(state, None),
        Action::CloseTab => return close_tab(state),
        Action::NextTab | Action::PrevTab => return switch_tab(state, action == Action::NextTab),
        Action::ResolveConflict => return open_conflict(state),
        Action::KeepMine => {
            if let Some(doc) = state.editors.active_mut() {
                doc.keep_mine();
            }
            state.editors.status =
                Some("Keeping your text: the next save overwrites the file.".into());
            changed(state);
            return Command::Redraw;
        }
        Action::LoadTheirs => {
            let question = Question::LoadTheirs {
                tab: state.editors.active,
            };
            state.overlay = Some(Overlay::Confirm(Confirm::new(question)));
            return Command::Redraw;
        }
        Action::Move(m) => EditCommand::Move(m),
        Action::Select(m) => EditCommand::Select(m),
        Action::Newline => EditCommand::InsertNewline,
        Action::Indent => EditCommand::InsertTab,
        Action::DeleteBack => EditCommand::DeleteBack,
        Action::DeleteForward => EditCommand::DeleteForward,
        Action::DeleteWordBack => EditCommand::DeleteWordBack,
        Action::DeleteWordForward => EditCommand::DeleteWordForward,
        Action::SelectAll => EditCommand::SelectAll,
        Action::Copy => EditCommand::Copy,
        Action::Cut => EditCommand::Cut,
        Action::Paste => EditCommand::Paste(state.editors.clipboard.clone()),
        Action::Undo => EditCommand::Undo,
        Action::Redo => EditCommand::Redo,
        _ => return Command::None,
    };
    edit(state, command)
}

/// Runs one edit command on the active document.
pub fn edit(state: &mut AppState, command: EditCommand) -> Command {
    let Some(doc) = state.editors.active_mut() else {
        return Command::None;
    };
    match doc.apply(command) {
        Ok(outcome) => {
            if outcome.text_changed {
                // "Saved …" and the like describe a text that is gone now.
                state.editors.status = None;
            }
            changed(state);
            match outcome.copied {
                Some(text) => {
                    state.editors.clipboard = text.clone();
                    if text.len() <= MAX_OSC52_BYTES {
                        Command::Clipboard(text)
                    } else {
                        Command::Redraw
                    }
                }
                None => Command::Redraw,
            }
        }
        Err(error) => {
            state.editors.status = Some(error.to_string());
            Command::Redraw
        }
    }
}

/// Keys without a binding: text for the file view.
pub fn type_key(state: &mut AppState, key: KeyEvent) -> Command {
    let plain = !key
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match key.code {
        KeyCode::Char(c) if plain => edit(state, EditCommand::InsertChar(c)),
        _ => Command::None,
    }
}

/// Bracketed paste into the file view: one undoable insert.
/// Line breaks arrive as `\n` (`app::layers` normalises every paste).
pub fn paste(state: &mut AppState, text: &str) -> Command {
    edit(state, EditCommand::Paste(text.to_owned()))
}

/// Save one tab (`Some(index)`) or every dirty tab. Errors are shown and
/// the buffer stays dirty.
fn save(state: &mut AppState, tab: Option<usize>) -> Command {
    let targets: Vec<usize> = match tab {
        Some(i) if i < state.editors.tabs.len() => vec![i],
        Some(_) => return Command::None,
        None => (0..state.editors.tabs.len())
            .filter(|&i| state.editors.tabs[i].is_dirty())
            .collect(),
    };
    let mut saved = 0;
    for i in targets {
        let result = state.editors.tabs[i].save();
        let name = state.display_path(state.editors.tabs[i].path());
        match result {
            Ok(()) => {
                saved += 1;
                let path = state.editors.tabs[i].path().to_path_buf();
                super::diagnostics::saved(state, &path);
            }
            Err(EditorError::Conflict { .. }) => {
                state.editors.active = i;
                state.overlay = Some(Overlay::Conflict(Conflict));
                state.editors.status = Some(format!(
                    "{name} changed on disk: keep mine, load theirs, or see the diff."
                ));
            }
            Err(error) => report(state, &format!("Could not save {name}: {error}")),
        }
    }
    if saved > 0 && state.overlay.is_none() {
        let what = match tab {
            Some(i) => state.display_path(state.editors.tabs[i].path()),
            None => format!("{saved} file{}", if saved == 1 { "" } else { "s" }),
        };
        state.editors.status = Some(format!("Saved {what}"));
    }
    changed(state);
    Command::Redraw
}

/// The answer to "close with unsaved edits?": save first (the tab stays
/// open if that fails), or close and lose them.
pub fn close_after_answer(state: &mut AppState, tab: usize, save_first: bool) -> Command {
    if save_first {
        let command = save(state, Some(tab));
        if state.editors.tabs.get(tab).is_some_and(Document::is_dirty) {
            return command;
        }
    }
    remove_tab(state, tab);
    Command::Redraw
}

fn close_tab(state: &mut AppState) -> Command {
    let tab = state.editors.active;
    let Some(doc) = state.editors.tabs.get(tab) else {
        return Command::None;
    };
    if doc.is_dirty() {
        state.overlay = Some(Overlay::Confirm(Confirm::new(Question::CloseDirtyTab {
            tab,
        })));
        return Command::Redraw;
    }
    remove_tab(state, tab);
    Command::Redraw
}

fn remove_tab(state: &mut AppState, tab: usize) {
    if tab >= state.editors.tabs.len() {
        return;
    }
    let mut doc = state.editors.tabs.remove(tab);
    doc.discard_recovery();
    let len = state.editors.tabs.len();
    if state.editors.active >= len {
        state.editors.active = len.saturating_sub(1);
    }
    changed(state);
}

fn switch_tab(state: &mut AppState, forward: bool) -> Command {
    let n = state.editors.tabs.len();
    if n < 2 {
        return Command::None;
    }
    let i = state.editors.active;
    state.editors.active = if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    };
    changed(state);
    Command::Redraw
}

/// Ctrl+G / Ctrl+F: a prompt for the active file.
fn open_prompt(state: &mut AppState, kind: PromptKind) -> Command {
    match Prompt::new(kind, state) {
        Some(prompt) => state.overlay = Some(Overlay::Prompt(prompt)),
        None => state.editors.status = Some("Open a file first (Ctrl+P).".into()),
    }
    Command::Redraw
}

fn open_conflict(state: &mut AppState) -> Command {
    match state.editors.active().map(Document::disk_state) {
        Some(DiskState::ChangedOnDisk { .. }) => {
            state.overlay = Some(Overlay::Conflict(Conflict));
        }
        _ => state.editors.status = Some("No change on disk to resolve.".into()),
    }
    Command::Redraw
}

/// The answer to "load theirs?" (yes: the disk's text replaces the
/// buffer; no: back to the conflict choices).
pub fn answer(state: &mut AppState, question: Question, yes: bool) -> Command {
    match (question, yes) {
        (Question::LoadTheirs { tab }, true) => {
            if let Some(doc) = state.editors.tabs.get_mut(tab) {
                doc.load_theirs();
                state.editors.status = Some("Loaded the disk version.".into());
            }
            changed(state);
        }
        (Question::LoadTheirs { .. }, false) => state.overlay = Some(Overlay::Conflict(Conflict)),
        _ => {}
    }
    Command::Redraw
}

/// Takes this instance's recovery folder under `base` (locked while the
/// workbench runs) and offers what earlier sessions of this workspace left.
/// Without one, recovery is off and the user is told.
pub fn claim_recovery(state: &mut AppState, base: &Path) {
    match crate::editor::RecoveryHome::claim(base, &state.workspace_root) {
        Ok(home) => {
            state.editors.recovery_dir = Some(home.dir().to_path_buf());
            state.editors.recovery_home = Some(home);
            offer_recoveries(state);
        }
        Err(error) => report(
            state,
            &format!("Crash recovery is off for this session: {error}"),
        ),
    }
}

/// At start: ask about each buffer an earlier session of this workspace
/// did not save and whose instance is gone (newest first).
fn offer_recoveries(state: &mut AppState) {
    let found = state
        .editors
        .recovery_home
        .as_ref()
        .map(crate::editor::RecoveryHome::adopt_orphans)
        .unwrap_or_default();
    if found.is_empty() {
        return;
    }
    let count = found.len();
    state.editors.found_recoveries = found;
    state.overlay = Some(Overlay::Confirm(Confirm::new(Question::RestoreRecovery {
        index: 0,
        count,
    })));
}

/// What the user said about one recovered buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryChoice {
    Restore,
    /// Keep the file: the next start asks again.
    Later,
    Discard,
}

/// Applies the answer for recovered buffer `index`, then asks about the
/// next one; after the last, says what happened to each.
pub fn answer_recovery(
    state: &mut AppState,
    index: usize,
    count: usize,
    choice: RecoveryChoice,
) -> Command {
    let Some(recovery) = state.editors.found_recoveries.get(index).cloned() else {
        return Command::None;
    };
    let shown = state.display_path(&recovery.path);
    match choice {
        RecoveryChoice::Restore => restore_recovery(state, &recovery),
        RecoveryChoice::Later => {}
        RecoveryChoice::Discard => {
            if let Err(error) = discard_recovery(&recovery) {
                report(
                    state,
                    &format!("Could not discard the edits of {shown}: {error}"),
                );
            }
        }
    }
    let verb = match choice {
        RecoveryChoice::Restore => "restored",
        RecoveryChoice::Later => "kept for the next start",
        RecoveryChoice::Discard => "discarded",
    };
    state
        .editors
        .recovery_answers
        .push(format!("{shown} {verb}"));
    if index + 1 < count {
        state.overlay = Some(Overlay::Confirm(Confirm::new(Question::RestoreRecovery {
            index: index + 1,
            count,
        })));
    } else {
        state.overlay = None;
        state.editors.found_recoveries.clear();
        let answers = std::mem::take(&mut state.editors.recovery_answers);
        super::update::notice(
            state,
            &format!(
                "Unsaved edits from an earlier session: {}.",
                answers.join("; ")
            ),
        );
    }
    Command::Redraw
}

/// The recovered text goes into a tab (replacing a clean one of that
/// file), and becomes this instance's own recovery before the earlier
/// session's file is removed, so a crash in between loses nothing.
fn restore_recovery(state: &mut AppState, recovery: &crate::editor::Recovery) {
    match Document::restore(recovery) {
        Ok(mut doc) => {
            if let Some(dir) = &state.editors.recovery_dir {
                match doc.write_recovery(dir) {
                    Ok(()) => {
                        if let Err(error) = discard_recovery(recovery) {
                            tracing::warn!(%error, "removing an adopted recovery file");
                        }
                    }
                    Err(error) => tracing::warn!(%error, "writing a restored buffer's recovery"),
                }
            }
            let path = doc.path().to_path_buf();
            state.editors.active = match state.editors.index_of(&path) {
                Some(i) => {
                    state.editors.tabs[i] = doc;
                    i
                }
                None => {
                    state.editors.tabs.push(doc);
                    state.editors.tabs.len() - 1
                }
            };
            state.focus = PaneId::FileView;
        }
        Err(error) => report(
            state,
            &format!("Could not restore {}: {error}", recovery.path.display()),
        ),
    }
    changed(state);
}

/// The user chose to quit and lose unsaved edits: their recovery files go
/// too, so the next start does not bring them back.
pub fn discard_all_recoveries(state: &mut AppState) {
    for doc in &mut state.editors.tabs {
        doc.discard_recovery();
    }
    state.editors.mirror.clear();
}

/// The recovery timer fired: write what is due.
pub fn recovery_tick(state: &mut AppState) -> Command {
    let Some(dir) = state.editors.recovery_dir.clone() else {
        return Command::None;
    };
    let now = Instant::now();
    for doc in &mut state.editors.tabs {
        if let Err(error) = doc.recovery_tick(&dir, now) {
            tracing::warn!(%error, "writing a recovery file");
        }
    }
    state.editors.mirror.refresh(&state.editors.tabs);
    Command::None
}

/// Before a clean exit (SIGTERM): everything unsaved goes to recovery.
pub fn write_all_recoveries(state: &AppState) {
    let Some(dir) = &state.editors.recovery_dir else {
        return;
    };
    for doc in &state.editors.tabs {
        if let Err(error) = doc.write_recovery_now(dir) {
            tracing::warn!(%error, "writing a recovery file");
        }
    }
}

/// Messages from the workspace index and watcher.
pub fn on_workspace(state: &mut AppState, message: WorkspaceMessage) -> Command {
    match message {
        WorkspaceMessage::Index(update) => {
            if !state.file_index.apply(&update) {
                return Command::None;
            }
            super::effects::to_overlay(state, crate::overlays::Input::IndexGrew)
                .unwrap_or(Command::None)
        }
        WorkspaceMessage::Event(event) => match event {
            WorkspaceEvent::FileChanged(path)
            | WorkspaceEvent::FileCreated(path)
            | WorkspaceEvent::FileRemoved(path) => on_disk_change(state, &path),
            WorkspaceEvent::Renamed { from, to } => {
                let a = on_disk_change(state, &from);
                let b = on_disk_change(state, &to);
                if a == Command::None { b } else { a }
            }
            WorkspaceEvent::WatchReady => Command::None,
            WorkspaceEvent::WatchError(message) => {
                state.editors.watch_note =
                    Some(crate::sanitize::for_display(&message).into_owned());
                Command::Redraw
            }
            WorkspaceEvent::PollingFallback(reason) => {
                tracing::warn!(%reason, "watcher fell back to polling");
                state.editors.watch_note = Some("polling for file changes".into());
                Command::Redraw
            }
        },
    }
}

/// A file changed on disk (watcher or the kernel's `fs.write`): reload a
/// clean buffer, flag a dirty one.
pub fn on_disk_change(state: &mut AppState, path: &Path) -> Command {
    let Some(i) = state.editors.index_of(path) else {
        return Command::None;
    };
    let change = state.editors.tabs[i].check_disk();
    let name = state.display_path(path);
    state.editors.status = match change {
        DiskChange::Unchanged | DiskChange::Unreadable => return Command::None,
        DiskChange::Reloaded => Some(format!("Reloaded {name} (changed on disk)")),
        DiskChange::Conflict => Some(format!(
            "{name} changed on disk; your edits are kept. Ctrl+R: keep mine, load theirs, diff"
        )),
        DiskChange::Deleted => Some(format!("{name} was deleted on disk; saving recreates it")),
    };
    changed(state);
    Command::Redraw
}

/// The pointer in the file view (`pane` is its rectangle): a click on the
/// tab bar switches tabs; in the text a click places the cursor (Shift
/// extends), a drag selects, the wheel scrolls.
pub fn mouse(state: &mut AppState, mouse: MouseEvent, pane: Rect) -> Command {
    let area = crate::screen::file_view::text_area(pane);
    let on_tab_bar = area.y > pane.y + 1 && mouse.row + 1 == area.y;
    if on_tab_bar && mouse.kind == MouseEventKind::Down(MouseButton::Left) {
        let column = mouse.column.saturating_sub(area.x);
        if let Some(tab) = crate::screen::file_view::tab_at(&state.editors.tabs, column) {
            state.editors.active = tab;
            state.focus = PaneId::FileView;
            changed(state);
            return Command::Redraw;
        }
    }
    let Some(doc) = state.editors.active_mut() else {
        return Command::None;
    };
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            let extend = mouse.modifiers.contains(KeyModifiers::SHIFT);
            doc.click(area, mouse.column, mouse.row, extend);
        }
        MouseEventKind::Drag(MouseButton::Left) => doc.drag_to(area, mouse.column, mouse.row),
        MouseEventKind::ScrollUp => doc.scroll_by(-3),
        MouseEventKind::ScrollDown => doc.scroll_by(3),
        _ => return Command::None,
    }
    state.focus = PaneId::FileView;
    changed(state);
    Command::Redraw
}

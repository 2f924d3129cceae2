//! The file view's side of the app: open a file (from anywhere), fold in
//! the watcher's and the kernel's writes, keep crash recovery files and ask
//! about them, and carry out the answers to the file view's questions. What
//! the keys do to the open files is the file view pane's own
//! (`crate::panes::file_view`).

use std::path::Path;

use super::command::Command;
use super::state::AppState;
use crate::editor::{Document, discard_recovery};
use crate::keymap::PaneId;
use crate::overlays::Overlay;
use crate::overlays::confirm::Confirm;
use crate::overlays::conflict::Conflict;
use crate::workbench::Question;
use crate::workbench::Workbench;
use crate::workbench::editors::{changed, on_disk_change, report};
use crate::workspace::{WorkspaceEvent, WorkspaceMessage};

/// Opens `path` (or switches to its tab) and focuses the file view.
/// `position` is 1-based (line, column) as typed by people.
pub fn open(state: &mut AppState, path: &Path, position: Option<(usize, usize)>) -> Command {
    let command = show(state, path, position);
    if state
        .workbench
        .editors()
        .index_of(&canonical(path))
        .is_some()
    {
        state.focus = PaneId::FileView;
    }
    command
}

/// A cell wrote `path`: the file view shows it, so the user sees what the
/// agent did, unless the user is in the file view (typing there) or
/// `[ui] follow_edits` is off. The keyboard stays where it is.
pub fn follow_write(state: &mut AppState, path: &Path) -> Command {
    if !state.workbench.settings().follow_edits
        || state.focus == PaneId::FileView
        || !path.is_file()
    {
        return Command::None;
    }
    show(state, path, None)
}

fn canonical(path: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Opens `path` (or switches to its tab) in the file view; the focus
/// stays where it is.
fn show(state: &mut AppState, path: &Path, position: Option<(usize, usize)>) -> Command {
    let path = canonical(path);
    let index = match state.workbench.editors().index_of(&path) {
        Some(i) => i,
        None => match Document::open(&path) {
            Ok(doc) => {
                state.workbench.editors_mut().tabs.push(doc);
                state.workbench.editors().tabs.len() - 1
            }
            Err(error) => {
                report(&mut state.workbench, &error.to_string());
                return Command::Redraw;
            }
        },
    };
    state.workbench.editors_mut().active = index;
    if let Some((line, column)) = position
        && let Some(doc) = state.workbench.editors_mut().active_mut()
    {
        doc.jump_to((line.saturating_sub(1), column.saturating_sub(1)));
    }
    changed(&mut state.workbench);
    Command::Redraw
}

/// The answer to "load theirs?" (yes: the disk's text replaces the
/// buffer; no: back to the conflict choices).
pub fn answer(state: &mut AppState, question: Question, yes: bool) -> Command {
    match (question, yes) {
        (Question::LoadTheirs { tab }, true) => {
            if let Some(doc) = state.workbench.editors_mut().tabs.get_mut(tab) {
                doc.load_theirs();
                state.workbench.editors_mut().status = Some("Loaded the disk version.".into());
            }
            changed(&mut state.workbench);
        }
        (Question::LoadTheirs { .. }, false) => state.overlays.push(Overlay::Conflict(Conflict)),
        _ => {}
    }
    Command::Redraw
}

/// Takes this instance's recovery folder under `base` (locked while the
/// workbench runs) and offers what earlier sessions of this workspace left.
/// Without one, recovery is off and the user is told.
pub fn claim_recovery(state: &mut AppState, base: &Path) {
    match crate::editor::RecoveryHome::claim(base, state.workbench.workspace_root()) {
        Ok(home) => {
            state.workbench.editors_mut().recovery_dir = Some(home.dir().to_path_buf());
            state.workbench.editors_mut().recovery_home = Some(home);
            offer_recoveries(state);
        }
        Err(error) => report(
            &mut state.workbench,
            &format!("Crash recovery is off for this session: {error}"),
        ),
    }
}

/// At start: ask about each buffer an earlier session of this workspace
/// did not save and whose instance is gone (newest first).
fn offer_recoveries(state: &mut AppState) {
    let found = state
        .workbench
        .editors()
        .recovery_home
        .as_ref()
        .map(crate::editor::RecoveryHome::adopt_orphans)
        .unwrap_or_default();
    if found.is_empty() {
        return;
    }
    let count = found.len();
    state.workbench.editors_mut().found_recoveries = found;
    state
        .overlays
        .push(Overlay::Confirm(Confirm::new(Question::RestoreRecovery {
            index: 0,
            count,
        })));
}

/// What the user said about one recovered buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecoveryChoice {
    Restore,
    /// Keep the file: the next start asks again.
    Later,
    Discard,
}

/// Applies the answer for recovered buffer `index`, then asks about the
/// next one; after the last, says what happened to each.
pub(crate) fn answer_recovery(
    state: &mut AppState,
    index: usize,
    count: usize,
    choice: RecoveryChoice,
) -> Command {
    let Some(recovery) = state
        .workbench
        .editors()
        .found_recoveries
        .get(index)
        .cloned()
    else {
        return Command::None;
    };
    let shown = state.workbench.display_path(&recovery.path);
    match choice {
        RecoveryChoice::Restore => restore_recovery(state, &recovery),
        RecoveryChoice::Later => {}
        RecoveryChoice::Discard => {
            if let Err(error) = discard_recovery(&recovery) {
                report(
                    &mut state.workbench,
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
        .workbench
        .editors_mut()
        .recovery_answers
        .push(format!("{shown} {verb}"));
    if index + 1 < count {
        state
            .overlays
            .push(Overlay::Confirm(Confirm::new(Question::RestoreRecovery {
                index: index + 1,
                count,
            })));
    } else {
        state.workbench.editors_mut().found_recoveries.clear();
        let answers = std::mem::take(&mut state.workbench.editors_mut().recovery_answers);
        state.workbench.notice(&format!(
            "Unsaved edits from an earlier session: {}.",
            answers.join("; ")
        ));
    }
    Command::Redraw
}

/// The recovered text goes into a tab (replacing a clean one of that
/// file), and becomes this instance's own recovery before the earlier
/// session's file is removed, so a crash in between loses nothing.
fn restore_recovery(state: &mut AppState, recovery: &crate::editor::Recovery) {
    match Document::restore(recovery) {
        Ok(mut doc) => {
            if let Some(dir) = &state.workbench.editors().recovery_dir {
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
            state.workbench.editors_mut().active =
                match state.workbench.editors_mut().index_of(&path) {
                    Some(i) => {
                        state.workbench.editors_mut().tabs[i] = doc;
                        i
                    }
                    None => {
                        state.workbench.editors_mut().tabs.push(doc);
                        state.workbench.editors_mut().tabs.len() - 1
                    }
                };
            state.focus = PaneId::FileView;
        }
        Err(error) => report(
            &mut state.workbench,
            &format!("Could not restore {}: {error}", recovery.path.display()),
        ),
    }
    changed(&mut state.workbench);
}

/// Messages from the workspace index and watcher.
pub(crate) fn on_workspace(state: &mut AppState, message: WorkspaceMessage) -> Command {
    match message {
        WorkspaceMessage::Index(update) => {
            if !state.workbench.file_index_mut().apply(&update) {
                return Command::None;
            }
            super::deliver::to_overlay(state, crate::overlays::Input::IndexGrew)
                .unwrap_or(Command::None)
        }
        WorkspaceMessage::Event(event) => match event {
            WorkspaceEvent::FileChanged(path) => on_file_event(&mut state.workbench, &path, false),
            WorkspaceEvent::FileCreated(path) => on_file_event(&mut state.workbench, &path, true),
            WorkspaceEvent::FileRemoved(path) => {
                crate::workbench::changes::on_removed(&mut state.workbench, &path);
                redraw_if(on_disk_change(&mut state.workbench, &path))
            }
            WorkspaceEvent::Renamed { from, to } => {
                crate::workbench::changes::on_removed(&mut state.workbench, &from);
                // Moved, not made from nothing: `/undo` does not delete it.
                crate::workbench::changes::on_disk_event(&mut state.workbench, &to, false);
                let a = on_disk_change(&mut state.workbench, &from);
                let b = on_disk_change(&mut state.workbench, &to);
                redraw_if(a || b)
            }
            WorkspaceEvent::WatchReady => Command::None,
            WorkspaceEvent::WatchError(message) => {
                state.workbench.editors_mut().watch_note =
                    Some(crate::sanitize::for_display(&message).into_owned());
                Command::Redraw
            }
            WorkspaceEvent::PollingFallback(reason) => {
                tracing::warn!(%reason, "watcher fell back to polling");
                state.workbench.editors_mut().watch_note = Some("polling for file changes".into());
                Command::Redraw
            }
        },
    }
}

/// The watcher saw a file change or appear: the project instructions are
/// read again if it is one of them, a running cell's command may have made
/// the change, and an open buffer reloads.
fn on_file_event(workbench: &mut Workbench, path: &Path, created: bool) -> Command {
    if path.file_name().is_some_and(|name| {
        crate::agent::instructions::FILE_NAMES
            .iter()
            .any(|f| name == *f)
    }) {
        crate::workbench::agent::refresh_instructions(workbench);
    }
    // Before the buffer reloads: it still holds the old text.
    crate::workbench::changes::on_disk_event(workbench, path, created);
    redraw_if(on_disk_change(workbench, path))
}

/// A frame when something on screen changed.
pub(crate) fn redraw_if(changed: bool) -> Command {
    if changed {
        Command::Redraw
    } else {
        Command::None
    }
}

//! What components ask for ([`Effect`]s), applied in one place once the
//! component is back in its slot (`app::deliver` queues them,
//! `app::update` drains the queue through [`apply`]). The two effects
//! that re-enter the dispatcher — run an action, submit text — come back
//! to `app::update` as a [`Then`] instead of calling it.

use super::command::Command;
use super::deliver::{to_overlay, with_file_view};
use super::state::AppState;
use crate::component::{Answer, Effect, Input, Outcome};
use crate::editor::Document;
use crate::editor::EditCommand;
use crate::keymap::{Action, PaneId};
use crate::overlays::Overlay;
use crate::overlays::search::SearchTarget;
use crate::workbench::Question;
use crate::workbench::find_count;

/// What is left to do after an effect: the dispatcher's own work.
#[derive(Debug)]
pub(crate) enum Then {
    /// Applied; the loop does this.
    Done(Command),
    /// Run this keymap action as if its key had been pressed.
    Run(Action),
    /// Submit this text as the composer would.
    Submit(String),
}

/// Applies one effect.
pub(crate) fn apply(state: &mut AppState, effect: Effect) -> Then {
    let command = match effect {
        Effect::Run(action) => return Then::Run(action),
        Effect::Submit(text) => return Then::Submit(text),
        Effect::Close => {
            state.overlays.pop();
            Command::Redraw
        }
        Effect::Open(opening) => match Overlay::open(opening, state.around()) {
            Some(overlay) => {
                state.overlays.replace_top(overlay);
                Command::Redraw
            }
            None => Command::None,
        },
        Effect::OpenFile { path, at } => super::editors::open(state, &path, at),
        Effect::GoTo { line, column } => go_to(state, line, column),
        Effect::Find { query, forward } => find(state, query, forward),
        Effect::ClearFind => with_file_view(state, |editors, ctx| {
            editors.edit(EditCommand::ClearSearch, ctx)
        }),
        Effect::Reveal(target) => reveal(state, target),
        Effect::Pin(pin) => {
            state.workbench.pin(pin);
            Command::Redraw
        }
        Effect::Notice(text) => {
            state.workbench.notice(&text);
            Command::Redraw
        }
        Effect::Answer(question, answer) => self::answer(state, question, answer),
        Effect::Focus(pane) => {
            state.focus = pane;
            Command::Redraw
        }
        // Too long for OSC 52: kept for pasting here only.
        Effect::Clipboard(text) if text.len() > crate::tui::osc52::MAX_BYTES => Command::None,
        Effect::Clipboard(text) => Command::Clipboard(text),
        Effect::FilesChanged => {
            crate::workbench::editors::files_changed(&mut state.workbench);
            Command::Redraw
        }
        Effect::Saved(path) => {
            state
                .workbench
                .changes_mut()
                .window
                .saved_by_user(&path, std::time::Instant::now());
            crate::workbench::diagnostics::saved(&state.workbench, &path);
            Command::None
        }
    };
    Then::Done(command)
}

fn go_to(state: &mut AppState, line: usize, column: usize) -> Command {
    let command = with_file_view(state, |editors, ctx| {
        editors.edit(EditCommand::GoToLine(line), ctx)
    });
    if column > 1
        && let Some(doc) = state.workbench.editors_mut().active_mut()
    {
        let line = doc.cursor().0;
        doc.set_cursor((line, column - 1), false);
    }
    command.or_redraw()
}

/// The next (or previous) match in the active file; the overlay that asked
/// hears "3 of 10" back, or, for a big text, where the match is while
/// `find_count` counts on a thread.
fn find(state: &mut AppState, query: String, forward: bool) -> Command {
    let Some(doc) = state.workbench.editors_mut().active_mut() else {
        return Command::None;
    };
    let too_long = crate::editor::Query::too_long(&query);
    let command = if forward {
        EditCommand::FindNext(query)
    } else {
        EditCommand::FindPrev(query)
    };
    let result = doc.apply(command);
    state.workbench.editors_mut().revision = state.workbench.editors_mut().revision.wrapping_add(1);
    let input = match result {
        Ok(outcome) => match outcome.search {
            Some(_) if too_long => Input::Report(format!(
                "the query is too long to search (over {} characters)",
                crate::editor::MAX_QUERY_CHARS
            )),
            Some(report) => match (report.current, report.count) {
                (None, _) => Input::Report("no matches".to_string()),
                (Some(_), Some(count)) => Input::Report(find_count::status(count)),
                (Some(current), None) => match find_count::start(&state.workbench, current) {
                    Some(counting) => Input::Counting {
                        status: find_count::pending_status(current, true),
                        counting,
                    },
                    None => Input::Report(find_count::pending_status(current, false)),
                },
            },
            None => Input::Report(String::new()),
        },
        Err(error) => Input::Report(error.to_string()),
    };
    to_overlay(state, input).unwrap_or(Command::Redraw)
}

/// A search result brought into view: its pane focused and it selected.
fn reveal(state: &mut AppState, target: SearchTarget) -> Command {
    match target {
        SearchTarget::Message(index) if index < state.workbench.transcript().len() => {
            state.focus = PaneId::Conversation;
            state.conversation.place.jump_to = Some(index);
            state.conversation.flash = Some(index);
        }
        SearchTarget::Message(_) => {}
        SearchTarget::Variable(name) => {
            state.focus = PaneId::Variables;
            state.variables.select(&name);
        }
        SearchTarget::Diagnostic(index) => {
            state.focus = PaneId::Diagnostics;
            state.diagnostics.cursor.selected = index;
        }
        SearchTarget::File(relative, line) => {
            let path = state.workbench.workspace_root().join(relative);
            return super::editors::open(state, &path, line.map(|l| (l, 1))).or_redraw();
        }
        SearchTarget::NotShown(id) => state.workbench.notice(&format!(
            "context message {id} is not shown in this pane; a cell reads it with \
                 context.slice({}, {})",
            id.0,
            id.0 + 1
        )),
    }
    Command::Redraw
}

/// What an answer to a question does.
fn answer(state: &mut AppState, question: Question, answer: Answer) -> Command {
    use super::editors::RecoveryChoice;
    match (question, answer) {
        (Question::QuitWithUnsavedEdits { .. }, Answer::Save) => {
            with_file_view(state, |editors, ctx| editors.save(None, ctx));
            // A save that failed or hit a change on disk says so and keeps
            // the workbench open.
            if state.unsaved_count() > 0 {
                return Command::Redraw;
            }
            state.should_quit = true;
            Command::Quit
        }
        (Question::QuitWithUnsavedEdits { .. }, Answer::Discard) => {
            crate::workbench::editors::discard_all_recoveries(&mut state.workbench);
            state.should_quit = true;
            Command::Quit
        }
        (Question::CloseDirtyTab { tab }, Answer::Save | Answer::Discard) => {
            close_after_answer(state, tab, answer == Answer::Save)
        }
        (Question::LoadTheirs { .. }, Answer::Yes | Answer::No) => {
            super::editors::answer(state, question, answer == Answer::Yes)
        }
        (Question::LeaveSandbox { .. }, _) => {
            crate::app::safety::answer_leave_sandbox(state, answer == Answer::Yes);
            Command::Redraw
        }
        (Question::RestoreRecovery { index, count }, _) => {
            let choice = match answer {
                Answer::Yes => RecoveryChoice::Restore,
                Answer::Discard => RecoveryChoice::Discard,
                Answer::No | Answer::Save => RecoveryChoice::Later,
            };
            super::editors::answer_recovery(state, index, count, choice)
        }
        (Question::TrustWorkspace, _) => {
            super::trust::answer(state, answer == Answer::Yes);
            Command::Redraw
        }
        // Cancel: nothing happens.
        _ => Command::Redraw,
    }
}

/// The answer to "close with unsaved edits?": save first (the tab stays
/// open if that fails), or close and lose them.
fn close_after_answer(state: &mut AppState, tab: usize, save_first: bool) -> Command {
    with_file_view(state, |editors, ctx| {
        if save_first {
            let outcome = editors.save(Some(tab), ctx);
            if editors.tabs.get(tab).is_some_and(Document::is_dirty) {
                return outcome;
            }
        }
        editors.remove_tab(tab, ctx);
        Outcome::Changed
    })
}

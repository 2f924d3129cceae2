//! Components as layers: an input goes to the approval queue, the open
//! overlay or a pane through [`to_approval`], [`to_overlay`] and
//! [`to_pane`] (which layer, in which order, is `app::layers`), and what
//! the component asks for ([`Effect`]s) is applied here, in one place, once
//! it is back in its slot.

use super::command::Command;
use super::state::AppState;
use crate::component::{Answer, Component, Ctx, Effect, Input, Outcome};
use crate::editor::EditCommand;
use crate::keymap::PaneId;
use crate::overlays::search::SearchTarget;
use crate::workbench::Question;
use crate::workbench::find_count;

/// Offers `input` to the open overlay. `None` when there is none or it
/// passed the input on (the layer below gets it).
pub(crate) fn to_overlay(state: &mut AppState, input: Input<'_>) -> Option<Command> {
    let mut overlay = state.overlays.pop()?;
    let mut ctx = Ctx::new(state.around());
    let outcome = overlay.component_mut().handle(input, &mut ctx);
    let effects = ctx.into_effects();
    state.overlays.push(overlay);
    finish(state, outcome, effects)
}

/// Offers `input` to a pane (`crate::panes`). `None` when it passed the
/// input on.
pub(crate) fn to_pane(state: &mut AppState, pane: PaneId, input: Input<'_>) -> Option<Command> {
    let (outcome, effects) = match pane {
        PaneId::Conversation => run_taken(state, |s| &mut s.conversation, input),
        PaneId::FileView => run_taken(state, |s| s.workbench.editors_mut(), input),
        PaneId::Variables => run_taken(state, |s| &mut s.variables, input),
        PaneId::Diagnostics => run_taken(state, |s| &mut s.diagnostics, input),
    };
    finish(state, outcome, effects)
}

/// Offers `input` to the approval queue (its layer is above any overlay).
pub(crate) fn to_approval(state: &mut AppState, input: Input<'_>) -> Option<Command> {
    let (outcome, effects) = run_taken(state, |s| &mut s.approvals, input);
    finish(state, outcome, effects)
}

/// Runs `f` on the file view as its `handle` would run (with a `Ctx`),
/// then applies its effects: for the app's own flows (an answer to a
/// question, a go-to from an overlay) that need what a key would do.
pub(crate) fn with_file_view(
    state: &mut AppState,
    f: impl FnOnce(&mut crate::workbench::editors::Editors, &mut Ctx<'_>) -> Outcome,
) -> Command {
    let mut editors = std::mem::take(state.workbench.editors_mut());
    let mut ctx = Ctx::new(state.around());
    let outcome = f(&mut editors, &mut ctx);
    let effects = ctx.into_effects();
    *state.workbench.editors_mut() = editors;
    finish(state, outcome, effects).unwrap_or(Command::None)
}

/// Takes a pane out of the state (its slot holds a default meanwhile),
/// lets it handle `input` with the rest of the state to read, and puts it
/// back.
fn run_taken<P: Component + Default>(
    state: &mut AppState,
    slot: fn(&mut AppState) -> &mut P,
    input: Input<'_>,
) -> (Outcome, Vec<Effect>) {
    let mut pane = std::mem::take(slot(state));
    let mut ctx = Ctx::new(state.around());
    let outcome = pane.handle(input, &mut ctx);
    let effects = ctx.into_effects();
    *slot(state) = pane;
    (outcome, effects)
}

/// Applies what a component asked for and turns its outcome into the
/// loop's command (`None`: it passed the input on).
fn finish(state: &mut AppState, outcome: Outcome, effects: Vec<Effect>) -> Option<Command> {
    let command = apply(state, effects);
    match outcome {
        Outcome::Ignored => None,
        Outcome::Unchanged => Some(command),
        Outcome::Changed => Some(command.or_redraw()),
    }
}

/// Brings the open overlays up to date before a frame (each is drawn).
pub fn before_frame(state: &mut AppState) {
    let mut overlays = state.overlays.take_all();
    for overlay in &mut overlays {
        overlay.component_mut().before_frame(state.around());
    }
    state.overlays.restore(overlays);
}

/// Applies a component's effects in order.
fn apply(state: &mut AppState, effects: Vec<Effect>) -> Command {
    let mut command = Command::None;
    for effect in effects {
        let next = match effect {
            Effect::Close => {
                state.overlays.pop();
                Command::Redraw
            }
            Effect::Open(overlay) => {
                state.overlays.replace_top(*overlay);
                Command::Redraw
            }
            Effect::OpenFile { path, at } => super::editors::open(state, &path, at),
            Effect::GoTo { line, column } => go_to(state, line, column),
            Effect::Find { query, forward } => find(state, query, forward),
            Effect::ClearFind => with_file_view(state, |editors, ctx| {
                editors.edit(EditCommand::ClearSearch, ctx)
            }),
            Effect::Reveal(target) => reveal(state, target),
            Effect::Submit(text) => super::update::submit(state, text).or_redraw(),
            Effect::Pin(pin) => {
                state.workbench.pin(pin);
                Command::Redraw
            }
            Effect::Notice(text) => {
                state.workbench.notice(&text);
                Command::Redraw
            }
            Effect::Answer(question, answer) => self::answer(state, question, answer),
            Effect::Run(action) => super::update::apply(state, action),
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
        command = command.merge(next);
    }
    command
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
            super::editors::close_after_answer(state, tab, answer == Answer::Save)
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

//! `update`: where terminal input and background events change
//! [`AppState`]; a [`Command`] tells the loop about effects that need the
//! terminal (quit, suspend, full redraw). Every entry point ends by
//! applying what the components it reached asked for ([`settle`]), so the
//! loop never sees a half-handled input.

use crossterm::event::{Event, KeyEvent, MouseButton, MouseEvent, MouseEventKind};

use super::deliver::to_overlay;
use super::effects::Then;
use super::state::AppState;
use crate::keymap::{self, Action, PaneId};
use crate::overlays::{Input, Overlay};
use crate::workbench::Question;
use crate::workbench::Workbench;
use crate::workbench::event::AppEvent;
use crate::workbench::kernel::CellOrigin;
use crate::workbench::slash::Builtin;
use crate::workbench::submission::{self, Submission};

pub use super::command::Command;

/// Applies one terminal event.
pub fn handle_terminal_event(state: &mut AppState, event: Event) -> Command {
    tracing::trace!(?event, "terminal event");
    let command = match event {
        Event::Key(key) => handle_key(state, key),
        Event::Mouse(mouse) => handle_mouse(state, mouse),
        Event::Paste(text) => super::layers::top(state).paste(state, &text),
        Event::Resize(width, height) => {
            state.size = ratatui::layout::Size::new(width, height);
            Command::Redraw
        }
        Event::FocusGained | Event::FocusLost => Command::None,
    };
    command.merge(settle(state))
}

/// Applies the effects the components asked for, in the order they
/// asked, each one's own effects before the next (as if applied where
/// they were asked): running an action or submitting text comes back here.
fn settle(state: &mut AppState) -> Command {
    let mut command = Command::None;
    for effect in std::mem::take(&mut state.pending_effects) {
        let next = match super::effects::apply(state, effect) {
            Then::Done(command) => command,
            Then::Run(action) => apply_action(state, action),
            Then::Submit(text) => submit(state, text).or_redraw(),
        };
        command = command.merge(next);
        if !state.pending_effects.is_empty() {
            command = command.merge(settle(state));
        }
    }
    command
}

/// Work deferred to once per frame: the loop calls it right before drawing,
/// after applying every event of the frame (tests that draw call it too).
pub fn before_frame(state: &mut AppState) {
    debug_assert!(
        state.pending_effects.is_empty(),
        "an entry point of app::update returned without settling its effects"
    );
    super::deliver::before_frame(state);
    // The gauge counts the message being written (F2's computation).
    let draft = state.draft();
    state.workbench.set_draft(&draft);
    // What is drawn now may take the keys that come after this frame; keys
    // that arrived before it went to the layer below (`app::layers`).
    let screen = state.screen();
    state.approvals.drawn(screen);
    state.question_shown = state.overlay().and_then(Overlay::question);
}

/// What an open overlay may show has changed: it catches up before the
/// next frame.
fn sources_changed(state: &mut AppState) {
    to_overlay(state, Input::SourcesChanged);
}

/// Applies one message from a background task.
pub fn handle_app_event(state: &mut AppState, event: AppEvent) -> Command {
    let command = app_event(state, event);
    command.merge(settle(state))
}

fn app_event(state: &mut AppState, event: AppEvent) -> Command {
    match event {
        AppEvent::Terminate => {
            crate::workbench::editors::write_all_recoveries(&mut state.workbench);
            state.should_quit = true;
            Command::Quit
        }
        AppEvent::Diagnostics(event) => {
            let changed = super::diagnostics::apply(state, event);
            if changed {
                sources_changed(state);
            }
            Command::from_changed(changed)
        }
        AppEvent::ContentSearch(message) => {
            to_overlay(state, Input::ContentHits(message)).unwrap_or(Command::None)
        }
        AppEvent::Kernel(update) => {
            super::cells::apply(state, update);
            // An interrupted cell abandons the question it was waiting on.
            state.approvals.prune();
            sources_changed(state);
            Command::Redraw
        }
        AppEvent::ApprovalRequested(pending) => {
            crate::app::approvals::request(state, pending);
            Command::Redraw
        }
        AppEvent::Agent(update) => {
            crate::workbench::agent::apply(&mut state.workbench, update);
            sources_changed(state);
            Command::Redraw
        }
        AppEvent::SnapshotBuilt(view) => {
            // Builds can finish out of order; an old one only fills a gap.
            let current = view.scene_key == super::snapshot::scene_key(state);
            if current || state.workbench.snapshot().is_none() {
                *state.workbench.snapshot_mut() = Some(view);
                crate::workbench::context_window::refresh_gauge(&mut state.workbench);
            }
            Command::Redraw
        }
        AppEvent::Workspace(message) => super::editors::on_workspace(state, message),
        // Each list takes only the answer to its own query: the picker,
        // the search pane's files and the composer's `@` list.
        AppEvent::PickerResults(results) => {
            let overlay = to_overlay(state, Input::FileMatches(&results));
            let composer =
                super::deliver::to_pane(state, PaneId::Conversation, Input::FileMatches(&results));
            overlay
                .unwrap_or(Command::None)
                .merge(composer.unwrap_or(Command::None))
        }
        AppEvent::Subcall(event) => {
            crate::workbench::subcalls::apply(&mut state.workbench, event);
            Command::Redraw
        }
        AppEvent::FsWritten(written) => {
            crate::workbench::changes::on_written(&mut state.workbench, &written);
            let reloaded = super::editors::redraw_if(crate::workbench::editors::on_disk_change(
                &mut state.workbench,
                &written.path,
            ));
            reloaded.merge(super::editors::follow_write(state, &written.path))
        }
        AppEvent::RecoveryDue => {
            crate::workbench::editors::recovery_tick(&mut state.workbench);
            Command::None
        }
        AppEvent::HighlightReady => Command::Redraw,
        AppEvent::FindCounted(counted) => super::find_count::arrived(state, counted),
        AppEvent::KeptVariables(report) => {
            crate::workbench::cells::kept_variables(&mut state.workbench, &report);
            Command::Redraw
        }
        AppEvent::Hook(fired) => {
            crate::workbench::hooks::fired(&mut state.workbench, &fired);
            Command::Redraw
        }
    }
}

fn handle_key(state: &mut AppState, key: KeyEvent) -> Command {
    let action = keymap::lookup(&super::layers::scopes(state), &key);
    // A selected message (a search jump's, or Alt+↑/↓) stays selected only
    // while the keys are about it: anything else ends the selection.
    if !matches!(
        action,
        Some(
            Action::SelectPreviousMessage
                | Action::SelectNextMessage
                | Action::CopyMessage
                | Action::CopyCodeBlock
        )
    ) {
        state.conversation.flash = None;
    }
    // So does a text selection made with the mouse (which Alt+C and
    // Alt+K copy from); one made with the keys lasts while they select.
    if state.conversation.text_cursor.is_none()
        && !matches!(action, Some(Action::CopyMessage | Action::CopyCodeBlock))
    {
        state.conversation.selection = None;
    }
    if let Some(action) = action {
        return apply_action(state, action);
    }
    // Keys that are not bindings are text for the innermost layer's input.
    super::layers::top(state).type_key(state, key)
}

/// Performs an action from the keymap.
pub fn apply(state: &mut AppState, action: Action) -> Command {
    let command = apply_action(state, action);
    command.merge(settle(state))
}

fn apply_action(state: &mut AppState, action: Action) -> Command {
    if let Some(command) = super::layers::route_action(state, action) {
        return command;
    }
    match action {
        Action::Quit => return request_quit(state),
        Action::Suspend => return Command::Suspend,
        Action::Interrupt => return super::interrupt::pressed(state),
        Action::CancelTurn => {
            return Command::from_changed(crate::workbench::agent::cancel(&mut state.workbench));
        }
        Action::Redraw => return Command::FullRedraw,
        Action::ZoomPane => state.layout_choice.zoomed = !state.layout_choice.zoomed,
        Action::WidenConversation => state.layout_choice = state.layout_choice.moved(1),
        Action::NarrowConversation => state.layout_choice = state.layout_choice.moved(-1),
        Action::ShowHelp => state.overlays.push(Overlay::Help(Default::default())),
        Action::ShowSnapshot => {
            state.overlays.push(Overlay::RequestPreview(
                crate::overlays::request_preview::RequestPreview::new(state.draft()),
            ));
        }
        // Tab is text only when there is text: an empty file view passes
        // it on, and it means "next pane".
        Action::FocusNext | Action::Indent => cycle_focus(state, true),
        Action::FocusPrev => cycle_focus(state, false),
        Action::Focus(pane) => state.focus = pane,
        Action::OpenSearch => {
            let search = crate::overlays::search::Search::open(state.around());
            state.overlays.push(Overlay::Search(search));
        }
        Action::NextDiagnostic | Action::PrevDiagnostic => {
            if super::diagnostics::step(state, action == Action::NextDiagnostic).is_some() {
                return super::diagnostics::open_selected(state);
            }
        }
        Action::ToggleCells => {
            state.conversation.place.cells_expanded = !state.conversation.place.cells_expanded;
        }
        Action::RemovePin => {
            state.workbench.unpin_last();
        }
        Action::SelectPreviousMessage => return super::copy::select(state, -1),
        Action::SelectNextMessage => return super::copy::select(state, 1),
        Action::CopyMessage => return super::copy::copy(state),
        Action::CopyCodeBlock => return super::copy::copy_code_block(state),
        Action::CopyTextSelection => return super::copy::copy_text_cursor(state),
        Action::ScrollUp => scroll(state, -1),
        Action::ScrollDown => scroll(state, 1),
        Action::PageUp => scroll(state, -page(state)),
        Action::PageDown => scroll(state, page(state)),
        Action::ScrollTop => scroll(state, isize::MIN / 2),
        Action::ScrollBottom => scroll(state, isize::MAX / 2),
        Action::CycleApprovalMode => crate::app::safety::cycle_mode(state),
        // Handled above by the approval overlay, the variables pane and
        // the open overlay (which has them in its scope).
        Action::CloseOverlay
        | Action::ToggleRequestJson
        | Action::SearchOpen
        | Action::SearchPin
        | Action::SearchNextScope
        | Action::SearchPrevScope
        | Action::Confirm
        | Action::Deny
        | Action::AnswerSave
        | Action::AnswerDiscard
        | Action::ApproveOnce
        | Action::ApproveAlways
        | Action::StartDenial
        | Action::DenyNow
        | Action::SendDenial
        | Action::CancelDenial
        | Action::SortVariables
        | Action::FilterVariables
        | Action::ShowVariable
        | Action::ClearFilter
        | Action::EndFilter
        | Action::MentionNext
        | Action::MentionPrevious
        | Action::MentionInsert
        | Action::MentionClose => return Command::None,
        // File actions bound everywhere (Ctrl+S, Ctrl+P, …) reach the file
        // view wherever the focus is.
        other => {
            return super::deliver::to_pane(state, PaneId::FileView, Input::Action(other))
                .unwrap_or(Command::None);
        }
    }
    Command::Redraw
}

fn request_quit(state: &mut AppState) -> Command {
    let count = state.unsaved_count();
    if count > 0 {
        state
            .overlays
            .push(Overlay::Confirm(crate::overlays::confirm::Confirm::new(
                Question::QuitWithUnsavedEdits { count },
            )));
        return Command::Redraw;
    }
    state.should_quit = true;
    Command::Quit
}

/// Tab order skips panes the current layout hides, so focus never lands on
/// something invisible.
fn cycle_focus(state: &mut AppState, forward: bool) {
    // Zoomed, Tab walks the panes the layout would show, each zoomed in turn.
    let layout = crate::screen::layout::compute(
        state.screen(),
        state.focus,
        crate::screen::layout::LayoutChoice {
            zoomed: false,
            ..state.layout_choice
        },
        state.workbench.editors().active().is_some(),
    );
    let visible: Vec<PaneId> = PaneId::ALL
        .into_iter()
        .filter(|p| layout.rect(*p).is_some() || *p == state.focus)
        .collect();
    let n = visible.len();
    let i = visible.iter().position(|p| *p == state.focus).unwrap_or(0);
    state.focus = visible[if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    }];
}

/// Rows in a page of the focused list, from the current layout.
fn page(state: &AppState) -> isize {
    let layout = state.layout();
    let rows = match (state.focus, layout.rect(state.focus)) {
        // The history's own rows (the composer and pins take the rest),
        // less one kept in view for context.
        (PaneId::Conversation, Some(rect)) => state
            .conversation
            .history_area(state.workbench.pins().len(), rect)
            .height
            .saturating_sub(1),
        (_, Some(rect)) => rect.height.saturating_sub(3),
        (_, None) => 10,
    };
    rows.max(1) as isize
}

/// Scrolls whatever the keys are aimed at: the innermost layer.
fn scroll(state: &mut AppState, delta: isize) {
    super::layers::top(state).scroll(state, delta);
}

/// What the composer sent: a prompt for the model, a `%py` cell for the
/// kernel, or a `/command`.
/// What the event loop must do comes back (`/copy` writes the clipboard).
fn submit(state: &mut AppState, text: String) -> Command {
    state.conversation.history.record(&text);
    match submission::parse(&text) {
        Submission::Prompt(prompt) => {
            if state.workbench.agent().has_model()
                && let Some(why) =
                    crate::workbench::context_window::refusal(&state.workbench, &text)
            {
                // Nothing is spent: no compaction, no request, the text
                // stays the user's to shorten.
                state.workbench.notice(&why);
                state.conversation.give_back(&text);
                return Command::Redraw;
            }
            let prompt = attach_pins(&mut state.workbench, prompt);
            crate::app::agent::send(state, prompt)
        }
        Submission::PythonCell(code) => match &state.workbench.services().kernel {
            // The cell shows up in the conversation when the service queues it.
            Some(kernel) => {
                kernel.execute(code, CellOrigin::User, None);
                state.workbench.changes_mut().start_group("your cell");
                // The user's cell is a turn of its own for `llm_query`'s
                // allowances, unless it waits behind the model's turn.
                if let Some(subcalls) = state
                    .workbench
                    .agent()
                    .subcalls
                    .as_ref()
                    .filter(|_| !state.workbench.agent().busy)
                {
                    subcalls.begin_turn();
                }
            }
            None => state.workbench.notice("The Python kernel is not running."),
        },
        Submission::SlashCommand { name, args } => match crate::workbench::slash::builtin(&name) {
            Some(command) => return run_builtin(state, command, &args),
            None => custom_command(state, &name, &args),
        },
    }
    Command::Redraw
}

/// Runs a built-in command (`slash::BUILTINS` lists them; this match must
/// handle each).
fn run_builtin(state: &mut AppState, command: Builtin, args: &str) -> Command {
    match command {
        Builtin::Copy => return super::copy::copy(state),
        Builtin::Approval => crate::app::safety::slash_command(state, args),
        Builtin::Undo => {
            let report = crate::workbench::changes::undo(&mut state.workbench);
            state.workbench.notice(&report);
        }
        Builtin::Redo => {
            let report = crate::workbench::changes::redo(&mut state.workbench);
            state.workbench.notice(&report);
        }
        Builtin::Diff => {
            let report = crate::workbench::changes::diff(&state.workbench);
            state.workbench.notice(&report);
        }
        Builtin::Trust => super::trust::command(state),
        Builtin::Hooks => {
            let text = crate::workbench::hooks::listing(&state.workbench);
            state.workbench.notice(&text);
        }
        Builtin::LspRestart => crate::workbench::diagnostics::restart_servers(&mut state.workbench),
        Builtin::LspLarge => crate::workbench::diagnostics::allow_large(&mut state.workbench),
        Builtin::Lsp => {
            let text = state
                .workbench
                .diagnostic_sources()
                .lsp
                .listing(&state.workbench.settings().diagnostics);
            state.workbench.notice(&text);
        }
        Builtin::Compact => {
            crate::workbench::context_window::compact_command(&mut state.workbench, args)
        }
        Builtin::Model => crate::workbench::models::command(&mut state.workbench, args),
        Builtin::New => super::start_over::command(state, args),
        Builtin::Help => {
            apply(state, Action::ShowHelp);
        }
        Builtin::Sessions => {
            let root = std::fs::canonicalize(state.workbench.workspace_root())
                .unwrap_or_else(|_| state.workbench.workspace_root().clone());
            let text = match crate::workbench::sessions::listing(&root) {
                Ok(text) => text.trim_end().to_owned(),
                Err(error) => format!("/sessions: {error}"),
            };
            state.workbench.notice(&text);
        }
    }
    Command::Redraw
}

/// A custom command (a prompt template) sends its prompt; any other name
/// is an error that lists the real commands.
fn custom_command(state: &mut AppState, name: &str, args: &str) {
    let commands = crate::workbench::slash::all(
        state.workbench.workspace_root(),
        state.workbench.trust().trust.is_trusted(),
        state.workbench.user_commands(),
    );
    let Some(command) = commands.iter().find(|c| {
        c.name == name && matches!(c.kind, crate::workbench::slash::CommandKind::Template(_))
    }) else {
        state.workbench.notice(&format!(
            "Unknown command /{name}. {} Start with // to send a prompt that begins with \
                 a slash.",
            crate::workbench::slash::listing(&commands)
        ));
        return;
    };
    match crate::workbench::slash::expand(command, args) {
        Ok(prompt) if !prompt.is_empty() => {
            let prompt = attach_pins(&mut state.workbench, prompt);
            crate::app::agent::send(state, prompt);
        }
        Ok(_) => state
            .workbench
            .notice(&format!("/{name}: its template is empty.")),
        Err(error) => state
            .workbench
            .notice(&format!("/{name}: cannot read its template: {error}")),
    }
}

/// Pinned search results go with the prompt, in a delimited block the
/// model can tell apart from what the user typed; sending clears them.
fn attach_pins(workbench: &mut Workbench, prompt: String) -> String {
    if !workbench.agent().has_model() {
        return prompt;
    }
    let pins = workbench.take_pins();
    let (message, mentioned) = crate::workbench::context_window::message(workbench, prompt, &pins);
    for note in &mentioned.notes {
        workbench.notice(note);
    }
    message
}

/// The border between the conversation and the panes on its right is
/// dragged with the left button (either of its two columns): the split
/// follows the pointer. `None`: the event is not about the border.
fn drag_split(state: &mut AppState, mouse: MouseEvent) -> Option<Command> {
    let layout = state.layout();
    let conversation = layout.conversation?;
    let has_right = PaneId::ALL
        .into_iter()
        .filter_map(|pane| layout.rect(pane))
        .any(|rect| rect.x == conversation.right());
    let on_border = has_right
        && (conversation.right().saturating_sub(1)..=conversation.right()).contains(&mouse.column)
        && (conversation.top()..conversation.bottom()).contains(&mouse.row);
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) if on_border => {
            state.dragging_split = true;
            Some(Command::None)
        }
        MouseEventKind::Drag(MouseButton::Left) if state.dragging_split => {
            let with_file = crate::screen::layout::shows_file(
                state.focus,
                state.workbench.editors().active().is_some(),
            );
            let moved = state
                .layout_choice
                .dragged_to(mouse.column, state.size.width, with_file);
            let changed = moved != state.layout_choice;
            state.layout_choice = moved;
            Some(Command::from_changed(changed))
        }
        MouseEventKind::Up(MouseButton::Left) if state.dragging_split => {
            state.dragging_split = false;
            Some(Command::None)
        }
        _ => None,
    }
}

fn handle_mouse(state: &mut AppState, mouse: MouseEvent) -> Command {
    super::layers::top(state)
        .mouse(state, mouse)
        .unwrap_or_else(|| pane_mouse(state, mouse))
}

/// The mouse over the panes (no approval or overlay on top): a click
/// focuses (or acts on) the pane under it, the wheel scrolls it.
fn pane_mouse(state: &mut AppState, mouse: MouseEvent) -> Command {
    if let Some(command) = drag_split(state, mouse) {
        return command;
    }
    if let Some(command) = super::copy::select_with_mouse(state, mouse) {
        return command;
    }
    // A click anywhere else ends a text selection.
    let cleared = mouse.kind == MouseEventKind::Down(MouseButton::Left)
        && (state.conversation.selection.take().is_some()
            | state.conversation.text_cursor.take().is_some());
    let layout = state.layout();
    let Some(pane) = layout.pane_at(mouse.column, mouse.row) else {
        return Command::None;
    };
    // The file view takes clicks, drags and the wheel in its text; the
    // diagnostics list takes clicks on its rows.
    let takes_it = match pane {
        PaneId::FileView => true,
        PaneId::Diagnostics => mouse.kind == MouseEventKind::Down(MouseButton::Left),
        PaneId::Conversation | PaneId::Variables => false,
    };
    if takes_it && let Some(command) = super::deliver::to_pane(state, pane, Input::Mouse(mouse)) {
        return command;
    }
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) => {
            let changed = state.focus != pane;
            state.focus = pane;
            Command::from_changed(changed || cleared)
        }
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            // The wheel scrolls the pane under the pointer without moving focus.
            let step = if mouse.kind == MouseEventKind::ScrollUp {
                -3
            } else {
                3
            };
            super::layers::Layer::Pane(pane).scroll(state, step);
            Command::Redraw
        }
        _ => Command::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::keymap::Scope;
    use crate::overlays::search::SearchScope;
    use crate::workbench::transcript::{PaneEntry, Speaker};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn state() -> AppState {
        let settings = Settings::defaults();
        AppState::new("/tmp/demo".into(), settings)
    }

    fn key(state: &mut AppState, code: KeyCode, modifiers: KeyModifiers) -> Command {
        handle_terminal_event(state, Event::Key(KeyEvent::new(code, modifiers)))
    }

    fn type_text(state: &mut AppState, text: &str) {
        for c in text.chars() {
            key(state, KeyCode::Char(c), KeyModifiers::NONE);
        }
    }

    #[test]
    fn ctrl_q_quits_without_unsaved_edits() {
        let mut s = state();
        assert_eq!(
            key(&mut s, KeyCode::Char('q'), KeyModifiers::CONTROL),
            Command::Quit
        );
        assert!(s.should_quit);
    }

    #[test]
    fn tab_cycles_through_every_visible_pane() {
        let mut s = state();
        let cycle = |s: &mut AppState| {
            let mut seen = vec![s.focus];
            for _ in 0..3 {
                key(s, KeyCode::Tab, KeyModifiers::NONE);
                seen.push(s.focus);
            }
            seen
        };
        // No file open: the file view is not shown, so Tab passes it by.
        let shown = vec![
            PaneId::Conversation,
            PaneId::Variables,
            PaneId::Diagnostics,
            PaneId::Conversation,
        ];
        assert_eq!(cycle(&mut s), shown);
        key(&mut s, KeyCode::BackTab, KeyModifiers::SHIFT);
        assert_eq!(s.focus, PaneId::Diagnostics);
        // Zoomed, Tab still walks them (each shown zoomed in turn).
        key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
        apply(&mut s, Action::ZoomPane);
        assert_eq!(cycle(&mut s), shown);
    }

    #[test]
    fn tab_skips_panes_hidden_by_a_small_terminal() {
        let mut s = state();
        handle_terminal_event(&mut s, Event::Resize(70, 20));
        for _ in 0..6 {
            key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
            assert_ne!(
                s.focus,
                PaneId::Variables,
                "variables are hidden below 80x24"
            );
        }
    }

    #[test]
    fn alt_digits_focus_panes_and_open_search() {
        let mut s = state();
        key(&mut s, KeyCode::Char('3'), KeyModifiers::ALT);
        assert_eq!(s.focus, PaneId::Variables);
        key(&mut s, KeyCode::Char('5'), KeyModifiers::ALT);
        assert!(matches!(s.overlay(), Some(Overlay::Search(_))));
        key(&mut s, KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(s.overlay(), None);
    }

    #[test]
    fn enter_sends_and_shift_enter_adds_a_line() {
        let mut s = state();
        type_text(&mut s, "hello");
        key(&mut s, KeyCode::Enter, KeyModifiers::SHIFT);
        type_text(&mut s, "world");
        assert_eq!(s.conversation.composer.lines(), ["hello", "world"]);
        key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(s.workbench.transcript()[0].text, "hello\nworld");
        assert_eq!(s.workbench.transcript()[0].role, Speaker::User);
        assert_eq!(s.workbench.transcript()[1].role, Speaker::Notice);
        assert_eq!(s.conversation.composer.lines(), [""]);
        // Empty messages are not sent.
        key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
        assert_eq!(s.workbench.transcript().len(), 2);
    }

    #[test]
    fn question_mark_is_text_in_the_composer_and_help_elsewhere() {
        let mut s = state();
        type_text(&mut s, "why?");
        assert_eq!(s.conversation.composer.lines(), ["why?"]);
        assert_eq!(s.overlay(), None);
        key(&mut s, KeyCode::Char('4'), KeyModifiers::ALT);
        key(&mut s, KeyCode::Char('?'), KeyModifiers::NONE);
        assert_eq!(s.overlay(), Some(&Overlay::Help(Default::default())));
        assert_eq!(s.active_scope(), Scope::Help);
        key(&mut s, KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(s.overlay(), None);
    }

    #[test]
    fn a_paste_with_cr_line_breaks_keeps_its_lines() {
        // tmux and many terminals paste CR line breaks.
        let mut s = state();
        handle_terminal_event(&mut s, Event::Paste("%py a=1\rb=2\r\nprint(a+b)".into()));
        assert_eq!(
            s.conversation.composer.lines(),
            ["%py a=1", "b=2", "print(a+b)"]
        );
    }

    #[test]
    fn paste_keeps_newlines_and_strips_escapes() {
        let mut s = state();
        handle_terminal_event(&mut s, Event::Paste("a\u{1b}[2Jb\nc".into()));
        assert_eq!(s.conversation.composer.lines(), ["ab", "c"]);
        assert!(s.workbench.transcript().is_empty(), "paste never sends");
    }

    #[test]
    fn search_query_editing_and_scopes() {
        let mut s = state();
        key(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
        type_text(&mut s, "auth");
        key(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
        key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
        let Some(Overlay::Search(search)) = s.overlay() else {
            panic!("search should be open")
        };
        assert_eq!(search.query.text(), "aut");
        assert_eq!(search.scope, SearchScope::Variables);
        assert_eq!(
            s.focus,
            PaneId::Conversation,
            "Tab in search does not move focus"
        );
    }

    #[test]
    fn mouse_click_focuses_and_wheel_scrolls_the_pane_under_it() {
        let mut s = state();
        handle_terminal_event(&mut s, Event::Resize(120, 40));
        let layout = s.layout();
        let diag = layout.rect(PaneId::Diagnostics).unwrap();
        let click = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: diag.x + 2,
            row: diag.y + 2,
            modifiers: KeyModifiers::NONE,
        };
        assert_eq!(
            handle_terminal_event(&mut s, Event::Mouse(click)),
            Command::Redraw
        );
        assert_eq!(s.focus, PaneId::Diagnostics);

        for i in 0..40 {
            s.workbench
                .transcript_mut()
                .push(PaneEntry::new(Speaker::User, format!("message {i}")));
        }
        let conv = layout.rect(PaneId::Conversation).unwrap();
        let wheel = MouseEvent {
            kind: MouseEventKind::ScrollUp,
            column: conv.x + 2,
            row: conv.y + 2,
            modifiers: KeyModifiers::NONE,
        };
        handle_terminal_event(&mut s, Event::Mouse(wheel));
        assert_eq!(s.conversation.place.scroll_request, -3, "three rows back");
        assert_eq!(
            s.focus,
            PaneId::Diagnostics,
            "the wheel does not steal focus"
        );

        let moved = MouseEvent {
            kind: MouseEventKind::Moved,
            ..wheel
        };
        assert_eq!(
            handle_terminal_event(&mut s, Event::Mouse(moved)),
            Command::None
        );
    }

    #[test]
    fn terminate_event_quits() {
        let mut s = state();
        assert_eq!(handle_app_event(&mut s, AppEvent::Terminate), Command::Quit);
        assert!(s.should_quit);
    }
}

//! The small inputs of the file view: the Ctrl+P fuzzy picker over the
//! workspace index, the Ctrl+G go-to-line prompt and the Ctrl+F find bar.
//! Their state is an `Overlay`; typing edits their input.

use crossterm::event::KeyEvent;

use super::editors;
use super::line_input::{Edit, LineInput};
use super::state::{AppState, ListCursor, Overlay};
use super::update::Command;
use crate::editor::EditCommand;
use crate::workspace::{FuzzyRequest, PathMatch, PickerResults};

/// Results the picker asks for per query.
pub const PICKER_LIMIT: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerState {
    pub query: LineInput,
    /// The newest query sent to the fuzzy worker and whether `matches`
    /// answer it.
    pub request: FuzzyRequest,
    pub matches: Vec<PathMatch>,
    /// How many paths matched in all (the list shows at most the limit).
    pub matched: usize,
    pub cursor: ListCursor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    GoToLine,
    Find,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::GoToLine => "Go to line",
            PromptKind::Find => "Find",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptState {
    pub kind: PromptKind,
    pub input: LineInput,
    /// "3 of 10", "no matches", "not a line number".
    pub status: Option<String>,
}

pub fn open_picker(state: &mut AppState) -> Command {
    state.overlay = Some(Overlay::Picker(PickerState {
        query: LineInput::default(),
        request: FuzzyRequest::default(),
        matches: Vec::new(),
        matched: 0,
        cursor: ListCursor::default(),
    }));
    rerun(state)
}

/// Runs the picker's query again (it changed, or the index grew). With a
/// worker the results come back as an event; without one (tests) inline.
pub fn rerun(state: &mut AppState) -> Command {
    let Some(Overlay::Picker(picker)) = &mut state.overlay else {
        return Command::None;
    };
    if let Some(results) = picker.request.send(
        picker.query.text(),
        true,
        &mut state.fuzzy_queries,
        state.picker_worker.as_ref(),
        &state.file_index,
        PICKER_LIMIT,
    ) {
        show(picker, results);
    }
    Command::Redraw
}

/// Results from the worker: only the newest query's are shown.
pub fn on_results(state: &mut AppState, results: PickerResults) -> Command {
    if matches!(state.overlay, Some(Overlay::Search(_))) {
        // The search pane's files scope shares the worker.
        return if super::search::on_file_matches(state, results) {
            Command::Redraw
        } else {
            Command::None
        };
    }
    let Some(Overlay::Picker(picker)) = &mut state.overlay else {
        return Command::None;
    };
    if !picker.request.accept(&results) {
        return Command::None;
    }
    show(picker, results);
    Command::Redraw
}

fn show(picker: &mut PickerState, results: PickerResults) {
    picker.matches = results.matches;
    picker.matched = results.matched;
    picker.cursor = ListCursor::default();
}

pub fn open_prompt(state: &mut AppState, kind: PromptKind) -> Command {
    if state.editors.active().is_none() {
        state.editors.status = Some("Open a file first (Ctrl+P).".into());
        return Command::Redraw;
    }
    // The find bar starts with the selection (or the last query).
    let input = match kind {
        PromptKind::Find => state
            .editors
            .active()
            .and_then(|d| d.selected_text())
            .filter(|t| !t.contains('\n'))
            .or_else(|| {
                state
                    .editors
                    .active()
                    .and_then(|d| d.search_query().map(str::to_owned))
            })
            .unwrap_or_default(),
        PromptKind::GoToLine => String::new(),
    };
    state.overlay = Some(Overlay::Prompt(PromptState {
        kind,
        input: LineInput::new(&input),
        status: None,
    }));
    Command::Redraw
}

/// Enter: open the picked file, go to the line, or find the next match.
/// The picker acts on the query as typed: if the worker has not answered
/// it yet (keys and Enter came in one burst), it is matched here first.
pub fn accept(state: &mut AppState) -> Command {
    if let Some(Overlay::Picker(picker)) = &mut state.overlay
        && let Some(results) = picker.request.settle(&state.file_index, PICKER_LIMIT)
    {
        show(picker, results);
    }
    match state.overlay.take() {
        Some(Overlay::Picker(picker)) => {
            let Some(found) = picker.matches.get(picker.cursor.selected) else {
                state.overlay = Some(Overlay::Picker(picker));
                return Command::None;
            };
            let path = state.workspace_root.join(&found.path);
            editors::open(state, &path, None)
        }
        Some(Overlay::Prompt(prompt)) if prompt.kind == PromptKind::GoToLine => {
            match parse_position(prompt.input.text()) {
                Some((line, column)) => {
                    let command = editors::edit(state, EditCommand::GoToLine(line));
                    if column > 1
                        && let Some(doc) = state.editors.active_mut()
                    {
                        let line = doc.cursor().0;
                        doc.set_cursor((line, column - 1), false);
                    }
                    command
                }
                None => {
                    state.overlay = Some(Overlay::Prompt(PromptState {
                        status: Some("type a line number (or line:column)".into()),
                        ..prompt
                    }));
                    Command::Redraw
                }
            }
        }
        other => {
            state.overlay = other;
            find(state, true)
        }
    }
}

/// "12" or "12:5", 1-based.
fn parse_position(input: &str) -> Option<(usize, usize)> {
    let mut parts = input.trim().splitn(2, ':');
    let line = parts.next()?.trim().parse::<usize>().ok()?;
    let column = match parts.next() {
        Some(c) => c.trim().parse::<usize>().ok()?,
        None => 1,
    };
    Some((line.max(1), column.max(1)))
}

/// Enter / Shift+Enter in the find bar.
pub fn find(state: &mut AppState, forward: bool) -> Command {
    let Some(Overlay::Prompt(prompt)) = &state.overlay else {
        return Command::None;
    };
    if prompt.kind != PromptKind::Find || prompt.input.is_empty() {
        return Command::None;
    }
    let query = prompt.input.text().to_owned();
    let Some(doc) = state.editors.active_mut() else {
        return Command::None;
    };
    let command = if forward {
        EditCommand::FindNext(query)
    } else {
        EditCommand::FindPrev(query)
    };
    let status = match doc.apply(command) {
        Ok(outcome) => match outcome.search {
            Some(report) => match report.current {
                Some(i) => format!("{} of {}", i + 1, report.matches.len()),
                None => "no matches".to_string(),
            },
            None => String::new(),
        },
        Err(error) => error.to_string(),
    };
    state.editors.revision = state.editors.revision.wrapping_add(1);
    if let Some(Overlay::Prompt(prompt)) = &mut state.overlay {
        prompt.status = Some(status);
    }
    Command::Redraw
}

/// Typing into the picker query or a prompt. Returns whether it changed.
pub fn type_key(state: &mut AppState, key: KeyEvent) -> Command {
    let edit = match input_of(state) {
        Some(input) => input.input(key),
        None => return Command::None,
    };
    match edit {
        Edit::None => Command::None,
        Edit::Cursor => Command::Redraw,
        Edit::Text => after_input(state),
    }
}

/// Bracketed paste into the picker or a prompt: the first line.
pub fn paste(state: &mut AppState, text: &str) -> Command {
    let pasted = input_of(state).is_some_and(|input| input.paste(text));
    if pasted {
        after_input(state)
    } else {
        Command::None
    }
}

/// The line the open picker or prompt types into.
fn input_of(state: &mut AppState) -> Option<&mut LineInput> {
    match &mut state.overlay {
        Some(Overlay::Picker(p)) => Some(&mut p.query),
        Some(Overlay::Prompt(p)) => Some(&mut p.input),
        _ => None,
    }
}

/// The text changed: the picker matches again, a prompt's status goes.
fn after_input(state: &mut AppState) -> Command {
    match &mut state.overlay {
        Some(Overlay::Picker(_)) => rerun(state),
        Some(Overlay::Prompt(p)) => {
            p.status = None;
            Command::Redraw
        }
        _ => Command::None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_position;

    #[test]
    fn positions_parse_like_people_type_them() {
        assert_eq!(parse_position("12"), Some((12, 1)));
        assert_eq!(parse_position(" 3:7 "), Some((3, 7)));
        assert_eq!(parse_position("0"), Some((1, 1)));
        assert_eq!(parse_position("x"), None);
        assert_eq!(parse_position("4:y"), None);
    }
}

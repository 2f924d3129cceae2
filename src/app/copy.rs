//! Copying from the conversation, as terminal users expect of Codex CLI and
//! Claude Code: one key puts the selected message — or, with none
//! selected, the model's last answer — on the system clipboard (OSC 52,
//! which works over SSH and in tmux) and in the in-app clipboard the file
//! view pastes from.
//!
//! A message is selected by a search jump, or by Alt+↑/Alt+↓ in the
//! conversation; the selection shows as a highlighted header and ends with
//! the next other key, so it never lingers unseen.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use super::command::Command;
use super::state::AppState;
use crate::keymap::PaneId;
use crate::panes::conversation::TextSelection;
use crate::ui::history::HistoryPoint;
use crate::workbench::transcript::{PaneEntry, Speaker};

/// Alt+↑ (`-1`) / Alt+↓ (`+1`): selects the message before or after the
/// selected one; the first press starts from the newest message.
pub fn select(state: &mut AppState, delta: isize) -> Command {
    let len = state.workbench.transcript().len();
    if len == 0 {
        return Command::None;
    }
    let next = match state.conversation.flash {
        Some(current) => current.saturating_add_signed(delta).min(len - 1),
        None if delta < 0 => len - 1,
        None => return Command::None,
    };
    state.conversation.flash = Some(next);
    state.conversation.place.jump_to = Some(next);
    Command::Redraw
}

/// Alt+C and `/copy`: the text selected with the mouse, else the
/// selected message, else the last answer, to both clipboards; the status
/// bar says what was copied.
pub fn copy(state: &mut AppState) -> Command {
    if let Some(selection) = state.conversation.selection {
        let text = selected_text(state, selection);
        return to_clipboards(state, &text, "the selection");
    }
    let selected = state
        .conversation
        .flash
        .and_then(|index| state.workbench.transcript().get(index));
    let chosen = match selected {
        Some(entry) => Some(("the selected message", entry)),
        None => state
            .workbench
            .transcript()
            .iter()
            .rev()
            .find(|entry| entry.role == Speaker::Assistant)
            .map(|entry| ("the last answer", entry)),
    };
    let Some((what, entry)) = chosen else {
        state
            .workbench
            .set_status("Nothing to copy: the model has not answered yet.");
        return Command::Redraw;
    };
    let raw = text_of(entry);
    to_clipboards(state, &raw, what)
}

/// Alt+K: a code block — the one the mouse selection is in, else the last
/// one of the selected message, else of the newest message that has one
/// (a cell's code counts) — to both clipboards.
pub fn copy_code_block(state: &mut AppState) -> Command {
    let transcript = state.workbench.transcript();
    // Where the selection starts, or the keyboard cursor is.
    let point = match (state.conversation.selection, state.conversation.text_cursor) {
        (Some(selection), _) => Some(selection.anchor.min(selection.head)),
        (None, Some(cursor)) => Some(cursor.at),
        (None, None) => None,
    };
    let chosen = match (point, state.conversation.flash) {
        (Some(point), _) => {
            // The block holding that row's text (a code row is a line of
            // its block), else the entry's last block.
            let whole_row = TextSelection {
                anchor: HistoryPoint { col: 0, ..point },
                head: HistoryPoint {
                    col: usize::MAX,
                    ..point
                },
                dragging: false,
            };
            let row = selected_text(state, whole_row);
            let row = row.trim();
            transcript.get(point.entry).and_then(|message| {
                let blocks = code_blocks(message);
                blocks
                    .iter()
                    .find(|block| !row.is_empty() && block.lines().any(|l| l.trim() == row))
                    .or(blocks.last())
                    .cloned()
            })
        }
        (None, Some(index)) => transcript
            .get(index)
            .and_then(|message| code_blocks(message).pop()),
        (None, None) => transcript
            .iter()
            .rev()
            .find_map(|message| code_blocks(message).pop()),
    };
    match chosen {
        Some(code) => to_clipboards(state, &code, "the code block"),
        None => {
            state.workbench.set_status("No code block to copy here.");
            Command::Redraw
        }
    }
}

/// `y` or Enter while selecting with the keys: the selection, else the
/// cursor's row, to both clipboards; the cursor leaves the history.
pub fn copy_text_cursor(state: &mut AppState) -> Command {
    let Some(cursor) = state.conversation.text_cursor.take() else {
        return Command::None;
    };
    state.conversation.selection = None;
    let selection = match cursor.anchor {
        Some(anchor) => TextSelection {
            anchor,
            head: cursor.at,
            dragging: false,
        },
        None => TextSelection {
            anchor: HistoryPoint {
                col: 0,
                ..cursor.at
            },
            head: HistoryPoint {
                col: usize::MAX,
                ..cursor.at
            },
            dragging: false,
        },
    };
    let text = selected_text(state, selection);
    to_clipboards(state, &text, "the selection")
}

/// The mouse in the conversation's history, as in a terminal: press and
/// drag select text (drawn highlighted; dragging past the top or bottom
/// scrolls), release copies it. A click without a drag clears the
/// selection and is left to focus the pane. None: not the history's.
pub(super) fn select_with_mouse(state: &mut AppState, mouse: MouseEvent) -> Option<Command> {
    let shown = &state.conversation.shown;
    let point = shown.point_at(mouse.column, mouse.row);
    let inside = shown.area.contains(Position::new(mouse.column, mouse.row));
    let dragging = state.conversation.selection.is_some_and(|s| s.dragging);
    match mouse.kind {
        MouseEventKind::Down(MouseButton::Left) if inside => {
            let point = point?;
            state.conversation.selection = Some(TextSelection {
                anchor: point,
                head: point,
                dragging: true,
            });
            state.conversation.text_cursor = None;
            state.focus = PaneId::Conversation;
            Some(Command::Redraw)
        }
        MouseEventKind::Drag(MouseButton::Left) if dragging => {
            let area = state.conversation.shown.area;
            if mouse.row < area.top() {
                state.conversation.place.scroll_by(-1);
            } else if mouse.row >= area.bottom() {
                state.conversation.place.scroll_by(1);
            }
            if let (Some(selection), Some(point)) = (&mut state.conversation.selection, point) {
                selection.head = point;
            }
            Some(Command::Redraw)
        }
        MouseEventKind::Up(MouseButton::Left) if dragging => {
            let mut selection = state.conversation.selection?;
            if let Some(point) = point {
                selection.head = point;
            }
            selection.dragging = false;
            if selection.anchor == selection.head {
                state.conversation.selection = None;
                return Some(Command::Redraw);
            }
            state.conversation.selection = Some(selection);
            let text = selected_text(state, selection);
            Some(to_clipboards(state, &text, "the selection"))
        }
        _ => None,
    }
}

/// The text of `selection` as the pane shows it.
fn selected_text(state: &AppState, selection: TextSelection) -> String {
    crate::ui::history::text_between(
        state.workbench.transcript(),
        usize::from(state.conversation.shown.area.width),
        state.conversation.place.cells_expanded,
        selection.anchor,
        selection.head,
    )
}

/// A message's code blocks, in order: a cell's code, or the fenced and
/// indented blocks of its Markdown.
fn code_blocks(entry: &PaneEntry) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    if let Some(cell) = &entry.cell {
        return vec![cell.code.clone()];
    }
    if entry.role != Speaker::Assistant {
        return Vec::new();
    }
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(&entry.text) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(text) if current.is_some() => {
                if let Some(block) = current.as_mut() {
                    block.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

/// Puts model-written `raw` text on the app's clipboard and the
/// terminal's (OSC 52), and says in the status bar how much of `what`.
fn to_clipboards(state: &mut AppState, raw: &str, what: &str) -> Command {
    // Model-written text goes where the user pastes — a shell, say: an
    // escape sequence in it (`ESC[201~` ends a bracketed paste, and what
    // follows would run) is dropped, other controls and the invisible or
    // direction-changing characters made visible (`^H`, `<U+202E>`).
    let text = crate::sanitize::for_display(raw).into_owned();
    let caution = if crate::sanitize::has_hidden_characters(raw) {
        " It held control, invisible or direction-changing characters (dropped, or shown \
         as `<U+202E>`): look before you run it."
    } else {
        ""
    };
    let size = size_of(&text);
    state.workbench.editors_mut().clipboard = text.clone();
    if text.len() > crate::tui::osc52::MAX_BYTES {
        state.workbench.set_status(format!(
            "Copied {size} of {what} for pasting here; it is too long for the \
             terminal's clipboard.{caution}"
        ));
        return Command::Redraw;
    }
    state
        .workbench
        .set_status(format!("Copied {size} of {what}.{caution}"));
    Command::Clipboard(text)
}

fn size_of(text: &str) -> String {
    match text.lines().count().max(1) {
        1 => "1 line".to_owned(),
        lines => format!("{lines} lines"),
    }
}

/// What a message copies as: its text; a cell's code, then its output.
fn text_of(entry: &PaneEntry) -> String {
    match &entry.cell {
        Some(cell) if entry.text.trim().is_empty() => cell.code.clone(),
        Some(cell) => format!("{}\n\n{}", cell.code.trim_end(), entry.text),
        None => entry.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::workbench::transcript::PaneEntry;

    fn state_with(entries: Vec<PaneEntry>) -> AppState {
        let mut state = AppState::new(std::env::temp_dir(), Settings::defaults());
        state.workbench.transcript_mut().extend(entries);
        state
    }

    #[test]
    fn with_nothing_selected_the_last_answer_is_copied_to_both_clipboards() {
        let mut state = state_with(vec![
            PaneEntry::new(Speaker::User, "why?"),
            PaneEntry::new(Speaker::Assistant, "first answer"),
            PaneEntry::new(Speaker::User, "and?"),
            PaneEntry::new(Speaker::Assistant, "**second** answer"),
            PaneEntry::new(Speaker::Notice, "a notice after it"),
        ]);
        let command = copy(&mut state);
        assert_eq!(command, Command::Clipboard("**second** answer".into()));
        assert_eq!(state.workbench.editors().clipboard, "**second** answer");
        assert_eq!(
            state.workbench.status_notice(),
            Some("Copied 1 line of the last answer.")
        );
    }

    #[test]
    fn alt_up_selects_back_from_the_newest_and_copy_takes_the_selection() {
        let mut cell = PaneEntry::cell(3, "print(1 + 1)\n");
        cell.text = "2\n".into();
        let mut state = state_with(vec![
            PaneEntry::new(Speaker::User, "add"),
            cell,
            PaneEntry::new(Speaker::Assistant, "It is 2."),
        ]);
        assert_eq!(
            select(&mut state, 1),
            Command::None,
            "↓ alone selects nothing"
        );
        select(&mut state, -1);
        assert_eq!(state.conversation.flash, Some(2));
        select(&mut state, -1);
        assert_eq!(state.conversation.flash, Some(1));
        assert_eq!(
            state.conversation.place.jump_to,
            Some(1),
            "scrolled into view"
        );
        assert_eq!(
            copy(&mut state),
            Command::Clipboard("print(1 + 1)\n\n2\n".into())
        );
        // The ends hold: no wrap-around past the first or last message.
        for _ in 0..5 {
            select(&mut state, -1);
        }
        assert_eq!(state.conversation.flash, Some(0));
        for _ in 0..5 {
            select(&mut state, 1);
        }
        assert_eq!(state.conversation.flash, Some(2));
    }

    #[test]
    fn escape_sequences_never_reach_the_clipboard_and_hidden_text_is_flagged() {
        let hostile = "run this:\n\u{1b}[201~rm -rf ~\n\u{1b}]52;c;eA==\u{7}done\u{202e}txt";
        let mut state = state_with(vec![PaneEntry::new(Speaker::Assistant, hostile)]);
        let Command::Clipboard(copied) = copy(&mut state) else {
            panic!("copied");
        };
        assert!(!copied.contains(['\u{1b}', '\u{202e}']), "{copied:?}");
        assert_eq!(copied, "run this:\nrm -rf ~\ndone<U+202E>txt");
        assert_eq!(state.workbench.editors().clipboard, copied);
        assert!(
            state
                .workbench
                .status_notice()
                .unwrap_or("")
                .contains("invisible or direction-changing"),
            "{:?}",
            state.workbench.status_notice()
        );
    }

    #[test]
    fn nothing_to_copy_is_said_and_a_huge_answer_stays_in_the_app() {
        let mut state = state_with(vec![PaneEntry::new(Speaker::User, "hi")]);
        assert_eq!(copy(&mut state), Command::Redraw);
        assert!(
            state
                .workbench
                .status_notice()
                .unwrap_or("")
                .starts_with("Nothing to copy")
        );

        let huge = "x".repeat(crate::tui::osc52::MAX_BYTES + 1);
        let mut state = state_with(vec![PaneEntry::new(Speaker::Assistant, huge.clone())]);
        assert_eq!(
            copy(&mut state),
            Command::Redraw,
            "no OSC 52 past the limit"
        );
        assert_eq!(state.workbench.editors().clipboard, huge);
    }
}

//! Edit commands and `Document::apply`. The app's keymap turns keys into
//! `EditCommand`s; this module never sees a key event.

use tui_textarea::{CursorMove, TextArea};

use super::document::{Body, Document, clamp_u16, text_in};
use super::error::EditorError;
use super::line_cursor::clamp;
use super::moves::{Motion, target};
use super::search::{TextRange, find_all};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditCommand {
    InsertChar(char),
    InsertNewline,
    /// Indent to the next tab stop (spaces).
    InsertTab,
    DeleteBack,
    DeleteForward,
    DeleteWordBack,
    DeleteWordForward,
    /// Move the cursor, dropping the selection.
    Move(Motion),
    /// Move the cursor, extending the selection (Shift + motion).
    Select(Motion),
    /// Go to a 1-based line number (as typed by the user), clamped.
    GoToLine(usize),
    SelectAll,
    ClearSelection,
    /// Copy the selection (or the cursor line when nothing is selected).
    Copy,
    /// Cut the selection (or the cursor line when nothing is selected).
    Cut,
    /// Insert text at the cursor, replacing the selection (clipboard paste
    /// or a terminal bracketed paste).
    Paste(String),
    Undo,
    Redo,
    /// Select the next match of the query after the cursor, wrapping.
    FindNext(String),
    /// Select the previous match of the query before the cursor, wrapping.
    FindPrev(String),
    ClearSearch,
}

/// What a command did, for the app to act on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyOutcome {
    /// The text changed (redraw, schedule recovery, update the snapshot).
    pub text_changed: bool,
    /// Text put on the clipboard by Copy/Cut: store it as the app clipboard
    /// and send it to the terminal with OSC 52.
    pub copied: Option<String>,
    /// Result of FindNext/FindPrev.
    pub search: Option<SearchReport>,
}

/// All matches of a find, and which one is now selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchReport {
    pub matches: Vec<TextRange>,
    /// Index into `matches` of the selected match; None when none matched.
    pub current: Option<usize>,
}

impl EditCommand {
    fn edits(&self) -> bool {
        matches!(
            self,
            Self::InsertChar(_)
                | Self::InsertNewline
                | Self::InsertTab
                | Self::DeleteBack
                | Self::DeleteForward
                | Self::DeleteWordBack
                | Self::DeleteWordForward
                | Self::Cut
                | Self::Paste(_)
                | Self::Undo
                | Self::Redo
        )
    }
}

impl Document {
    /// Apply one command. Editing commands on a read-only document are an
    /// error value naming the reason; motions, copy and find still work.
    pub fn apply(&mut self, cmd: EditCommand) -> Result<ApplyOutcome, EditorError> {
        if cmd.edits()
            && let Some(reason) = &self.read_only
        {
            return Err(EditorError::ReadOnly {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        if matches!(self.body, Body::Binary) {
            return Ok(ApplyOutcome::default());
        }
        self.viewport.follow_cursor = true;
        if !matches!(cmd, EditCommand::Move(_) | EditCommand::Select(_)) {
            self.preferred_col = None;
        }
        let mut out = ApplyOutcome::default();
        match cmd {
            EditCommand::Move(mv) => self.motion(mv, false),
            EditCommand::Select(mv) => self.motion(mv, true),
            EditCommand::GoToLine(n) => {
                let line = n.saturating_sub(1);
                self.set_cursor((line, 0), false);
            }
            EditCommand::SelectAll => {
                let end = target(self.lines(), (0, 0), Motion::DocEnd, 1, 1, None).0;
                self.set_cursor((0, 0), false);
                self.set_cursor(end, true);
            }
            EditCommand::ClearSelection => {
                let pos = self.cursor();
                self.set_cursor(pos, false);
            }
            EditCommand::Copy => out.copied = Some(self.copy_text()),
            EditCommand::FindNext(q) => out.search = Some(self.find(q, true)),
            EditCommand::FindPrev(q) => out.search = Some(self.find(q, false)),
            EditCommand::ClearSearch => self.search = None,
            edit => return self.edit(edit),
        }
        Ok(out)
    }

    /// Replace the whole buffer as one undoable edit (restoring a
    /// recovery, applying a formatter's output).
    pub fn replace_text(&mut self, text: &str) -> Result<ApplyOutcome, EditorError> {
        self.apply(EditCommand::SelectAll)?;
        self.apply(EditCommand::Paste(text.to_string()))
    }

    fn motion(&mut self, mv: Motion, select: bool) {
        // A page keeps one line of the last one in view.
        let page = self.viewport.height.saturating_sub(1).max(1);
        let (to, preferred) = target(
            self.lines(),
            self.cursor(),
            mv,
            page,
            self.tab_width,
            self.preferred_col,
        );
        self.set_cursor(to, select);
        self.preferred_col = preferred;
    }

    /// Put the cursor at `to` (clamped); `select` extends the selection.
    pub(crate) fn set_cursor(&mut self, to: (usize, usize), select: bool) {
        match &mut self.body {
            Body::Editable(ta) => jump(ta, to, select),
            Body::Lines(lines, c) => c.jump(lines, to, select),
            Body::Binary => {}
        }
    }

    fn copy_text(&self) -> String {
        match self.selection() {
            Some((s, e)) => text_in(self.lines(), s, e),
            None => {
                let line = self.cursor().0;
                format!("{}\n", self.lines().get(line).map_or("", String::as_str))
            }
        }
    }

    fn find(&mut self, query: String, forward: bool) -> SearchReport {
        let matches = find_all(self.lines(), &query);
        let cursor = self.cursor();
        let sel_start = self.selection().map_or(cursor, |(s, _)| s);
        let current = if forward {
            matches
                .iter()
                .position(|m| m.start >= cursor && m.start != sel_start)
                .or(if matches.is_empty() { None } else { Some(0) })
        } else {
            matches
                .iter()
                .rposition(|m| m.start < sel_start)
                .or(matches.len().checked_sub(1))
        };
        if let Some(m) = current.map(|i| matches[i]) {
            self.set_cursor(m.start, false);
            self.set_cursor(m.end, true);
        }
        self.search = Some(query);
        SearchReport { matches, current }
    }

    fn edit(&mut self, cmd: EditCommand) -> Result<ApplyOutcome, EditorError> {
        let Body::Editable(ta) = &mut self.body else {
            return Ok(ApplyOutcome::default());
        };
        let before_cursor = ta.cursor().0;
        let before_sel = ta.selection_range().map_or(before_cursor, |(s, _)| s.0);
        let before_count = ta.lines().len();
        // Undo/redo can change text away from the cursor: find the first
        // changed line by comparing with a copy (rare, so a clone is fine).
        let before_lines =
            matches!(cmd, EditCommand::Undo | EditCommand::Redo).then(|| ta.lines().to_vec());
        let mut copied = None;
        let changed = match cmd {
            EditCommand::InsertChar(c) => {
                ta.insert_char(c);
                true
            }
            EditCommand::InsertNewline => {
                ta.insert_newline();
                true
            }
            EditCommand::InsertTab => ta.insert_tab(),
            EditCommand::DeleteBack => ta.delete_char(),
            EditCommand::DeleteForward => ta.delete_next_char(),
            EditCommand::DeleteWordBack => ta.delete_word(),
            EditCommand::DeleteWordForward => ta.delete_next_word(),
            EditCommand::Cut => {
                if ta.selection_range().is_none_or(|(s, e)| s == e) {
                    select_line(ta);
                }
                let cut = ta.cut();
                copied = Some(ta.yank_text());
                cut
            }
            EditCommand::Paste(text) => ta.insert_str(text),
            EditCommand::Undo => ta.undo(),
            EditCommand::Redo => ta.redo(),
            _ => false,
        };
        let after = ta.lines();
        let first_changed = match &before_lines {
            Some(old) => old
                .iter()
                .zip(after)
                .position(|(a, b)| a != b)
                .unwrap_or(old.len().min(after.len())),
            None => before_cursor.min(before_sel).min(ta.cursor().0),
        };
        let count_changed = after.len() != before_count;
        if changed {
            self.highlight.invalidate(first_changed, count_changed);
            self.recompute_dirty();
            self.recovery.pending = true;
        }
        Ok(ApplyOutcome {
            text_changed: changed,
            copied,
            search: None,
        })
    }
}

fn jump(ta: &mut TextArea<'static>, (line, col): (usize, usize), select: bool) {
    let (line, col) = clamp(ta.lines(), (line, col));
    if select {
        if !ta.is_selecting() {
            ta.start_selection();
        }
    } else {
        ta.cancel_selection();
    }
    ta.move_cursor(CursorMove::Jump(clamp_u16(line), clamp_u16(col)));
}

/// Select the cursor line including its line break (for Cut without a
/// selection, like VS Code).
fn select_line(ta: &mut TextArea<'static>) {
    let line = ta.cursor().0;
    let last = ta.lines().len().saturating_sub(1);
    jump(ta, (line, 0), false);
    if line < last {
        jump(ta, (line + 1, 0), true);
    } else {
        let len = ta.lines()[line].chars().count();
        jump(ta, (line, len), true);
    }
}

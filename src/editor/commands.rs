//! Edit commands and `Document::apply`. The app's keymap turns keys into
//! `EditCommand`s; this module never sees a key event.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::document::{Document, line_len};
use super::error::EditorError;
use super::grapheme::{next_boundary, prev_boundary, snap};
use super::history::{Edit, Kind};
use super::moves::{Class, Motion, class, target, word_left, word_right};
use super::search::{self, MatchCount, MatchCounter, Query, TextRange};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditCommand {
    InsertChar(char),
    InsertNewline,
    /// Indent: a tab character, or spaces to the next indent stop, as the
    /// file's `.editorconfig` says (spaces by default).
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

/// Texts up to this size count their matches inline, on the find: the
/// count reads the text once at memchr/SIMD speed (a few ms for 4 MiB in a
/// release build, see BENCHMARKS.md "Find"), under one frame, and tests and
/// small files stay deterministic. Bigger texts are counted off the UI
/// thread (`Document::match_counter`).
pub const COUNT_INLINE_BYTES: usize = 4 << 20;

/// What a find selected, and where it stands among all matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchReport {
    /// The selected match; None when nothing matched.
    pub current: Option<TextRange>,
    /// Its index and the total, when counted inline (a text of at most
    /// `COUNT_INLINE_BYTES`); None for a bigger text or no match.
    pub count: Option<MatchCount>,
    /// Bytes of text read to find the match (the inline count not
    /// included): the distance to it, not the text's size.
    pub scanned: usize,
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
        self.apply_at(cmd, Instant::now())
    }

    /// `apply` as if it happened at `now`: undo grouping depends on the
    /// pause since the last edit, and tests give the clock.
    pub fn apply_at(
        &mut self,
        cmd: EditCommand,
        now: Instant,
    ) -> Result<ApplyOutcome, EditorError> {
        if cmd.edits()
            && let Some(reason) = &self.read_only
        {
            return Err(EditorError::ReadOnly {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        if self.is_binary() {
            return Ok(ApplyOutcome::default());
        }
        self.viewport.follow_cursor = true;
        if !matches!(cmd, EditCommand::Move(_) | EditCommand::Select(_)) {
            self.preferred_col = None;
        }
        if !cmd.edits() {
            self.history.seal();
        }
        let mut out = ApplyOutcome::default();
        match cmd {
            EditCommand::Move(mv) => self.motion(mv, false),
            EditCommand::Select(mv) => self.motion(mv, true),
            EditCommand::GoToLine(n) => {
                self.jump_to((n.saturating_sub(1), 0));
            }
            EditCommand::SelectAll => {
                self.move_head(0, false);
                self.move_head(self.rope.len_chars(), true);
            }
            EditCommand::ClearSelection => self.anchor = None,
            EditCommand::Copy => out.copied = Some(self.copy_text()),
            EditCommand::FindNext(q) => out.search = Some(self.find(q, true)),
            EditCommand::FindPrev(q) => out.search = Some(self.find(q, false)),
            EditCommand::ClearSearch => self.search = None,
            edit => return Ok(self.edit(edit, now)),
        }
        Ok(out)
    }

    /// Replace the whole buffer as one undoable edit (restoring a
    /// recovery, applying a formatter's output).
    #[cfg(test)]
    pub(crate) fn replace_text(&mut self, text: &str) -> Result<ApplyOutcome, EditorError> {
        self.apply(EditCommand::SelectAll)?;
        self.apply(EditCommand::Paste(text.to_string()))
    }

    fn motion(&mut self, mv: Motion, select: bool) {
        // A page keeps one line of the last one in view.
        let page = self.viewport.height.saturating_sub(1).max(1);
        let (to, preferred) = target(
            &self.rope,
            self.head,
            mv,
            page,
            self.tab_width(),
            self.preferred_col,
            &self.marks,
        );
        self.move_head(to, select);
        self.preferred_col = preferred;
    }

    /// The selection, or the cursor line with its line break (Copy and Cut
    /// without a selection, like VS Code).
    fn copy_range(&self) -> (usize, usize) {
        if let Some(range) = self.selection_chars() {
            return range;
        }
        let line = self.rope.char_to_line(self.head);
        let start = self.rope.line_to_char(line);
        let end = start + line_len(&self.rope, line);
        if line + 1 < self.rope.len_lines() {
            (start, end + 1)
        } else {
            (start, end)
        }
    }

    fn copy_text(&self) -> String {
        let (s, e) = self.copy_range();
        let mut text = self.rope.slice(s..e).to_string();
        if self.selection_chars().is_none() && !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// FindNext/FindPrev: the next match from the cursor outward (see
    /// `search::next`/`search::prev`), selected; counted inline when the
    /// text is small.
    fn find(&mut self, query: String, forward: bool) -> SearchReport {
        // Enter after Enter keeps the compiled matcher: compiling a
        // case-insensitive one costs more than finding a near match.
        let query = match self.search.take() {
            Some(kept) if kept.text() == query => kept,
            _ => Query::new(&query),
        };
        let byte = |at: usize| self.rope.char_to_byte(at);
        let sel_start = self.selection_chars().map_or(self.head, |(s, _)| s);
        let found = if forward {
            search::next(&self.rope, &query, byte(self.head), byte(sel_start))
        } else {
            search::prev(&self.rope, &query, byte(sel_start))
        };
        let current = found.range.map(|(s, e)| TextRange {
            start: self.position_of(self.rope.byte_to_char(s)),
            end: self.position_of(self.rope.byte_to_char(e)),
        });
        if let Some(m) = current {
            self.jump_to(m.start);
            self.set_cursor(m.end, true);
        }
        let count = found
            .range
            .filter(|_| self.rope.len_bytes() <= COUNT_INLINE_BYTES)
            .and_then(|(s, _)| search::count(&self.rope, &query, s, &AtomicBool::new(false)));
        self.search = Some(query);
        SearchReport {
            current,
            count,
            scanned: found.scanned,
        }
    }

    /// What counting the matches of the active query needs, with `current`
    /// (a match a find reported) as the one whose index is wanted; None
    /// when no query is active. Cheap: the rope is cloned, not copied.
    pub fn match_counter(&self, current: TextRange) -> Option<MatchCounter> {
        let query = self.search.clone()?;
        let (line, col) = current.start;
        let line = line.min(self.rope.len_lines().saturating_sub(1));
        let at = (self.rope.line_to_char(line) + col).min(self.rope.len_chars());
        let at = self.rope.char_to_byte(at);
        Some(MatchCounter {
            rope: self.rope.clone(),
            query,
            at,
        })
    }

    /// Run an editing command: work out the range it replaces and with
    /// what, splice it, and record it in the undo history.
    fn edit(&mut self, cmd: EditCommand, now: Instant) -> ApplyOutcome {
        let text = self.rope.slice(..);
        let selection = self.selection_chars();
        let head = self.head;
        // Deletions act on the selection when there is one.
        let or_selection = |range: (usize, usize)| selection.unwrap_or(range);
        let mut copied = None;
        let (kind, range, insert): (Kind, (usize, usize), String) = match cmd {
            EditCommand::InsertChar(c) => (
                Kind::Typing {
                    space: class(c) == Class::Space,
                },
                or_selection((head, head)),
                c.to_string(),
            ),
            EditCommand::InsertNewline => (
                Kind::Typing { space: true },
                or_selection((head, head)),
                "\n".into(),
            ),
            EditCommand::InsertTab => (Kind::Alone, or_selection((head, head)), self.indent_text()),
            EditCommand::DeleteBack => (
                Kind::DeleteBack,
                or_selection((prev_boundary(text, head), head)),
                String::new(),
            ),
            EditCommand::DeleteForward => (
                Kind::DeleteForward,
                or_selection((head, next_boundary(text, head))),
                String::new(),
            ),
            EditCommand::DeleteWordBack => (
                Kind::Alone,
                or_selection((word_left(&self.rope, head), head)),
                String::new(),
            ),
            EditCommand::DeleteWordForward => (
                Kind::Alone,
                or_selection((head, word_right(&self.rope, head))),
                String::new(),
            ),
            EditCommand::Cut => {
                copied = Some(self.copy_text());
                (Kind::Alone, self.copy_range(), String::new())
            }
            EditCommand::Paste(text) => (
                Kind::Alone,
                or_selection((head, head)),
                text.replace("\r\n", "\n"),
            ),
            EditCommand::Undo => return self.undo_redo(true),
            EditCommand::Redo => return self.undo_redo(false),
            _ => return ApplyOutcome::default(),
        };
        let (start, end) = range;
        if start == end && insert.is_empty() {
            return ApplyOutcome {
                copied,
                ..ApplyOutcome::default()
            };
        }
        let before = self.cursor_state();
        let edit = self.splice(start..end, &insert);
        // Inserted text can join the cluster after it (a combining mark
        // typed before its base): the cursor goes after the whole cluster.
        let at = start + insert.chars().count();
        let snapped = snap(&self.rope, at);
        let at = if snapped == at {
            at
        } else {
            next_boundary(self.rope.slice(..), snapped)
        };
        self.move_head(at, false);
        let after = self.cursor_state();
        self.history
            .record(kind, now, vec![edit], before, after, None);
        ApplyOutcome {
            text_changed: true,
            copied,
            search: None,
        }
    }

    /// A tab, or spaces to the next indent stop from the cursor's column.
    fn indent_text(&self) -> String {
        let indent = self.indentation;
        if indent.hard_tabs {
            return "\t".into();
        }
        let (line, col) = self.cursor();
        let at = super::width::display_col(
            super::document::line_text(&self.rope, line),
            col,
            indent.tab_width,
        );
        let size = indent.indent_size.max(1);
        " ".repeat(size - at % size)
    }

    /// Revert (`undo`) or replay the last step, as one change.
    fn undo_redo(&mut self, undo: bool) -> ApplyOutcome {
        let step = if undo {
            self.history.take_undo()
        } else {
            self.history.take_redo()
        };
        let Some(step) = step else {
            return ApplyOutcome::default();
        };
        let apply = |doc: &mut Self, e: &Edit, forward: bool| {
            let (old, new) = if forward {
                (&e.removed, &e.inserted)
            } else {
                (&e.inserted, &e.removed)
            };
            doc.splice(e.at..e.at + old.chars().count(), new);
        };
        if undo {
            for e in step.edits.iter().rev() {
                apply(self, e, false);
            }
        } else {
            for e in &step.edits {
                apply(self, e, true);
            }
        }
        if let Some((before, after)) = step.shape {
            self.shape = if undo { before } else { after };
            self.recompute_dirty();
        }
        let (head, anchor) = if undo { step.before } else { step.after };
        self.head = head.min(self.rope.len_chars());
        self.anchor = anchor.map(|a| a.min(self.rope.len_chars()));
        if undo {
            self.history.undone(step);
        } else {
            self.history.redone(step);
        }
        ApplyOutcome {
            text_changed: true,
            ..ApplyOutcome::default()
        }
    }
}

//! `Document`: one open file — its text in a rope, the cursor and
//! selection, undo history, how it was stored on disk, exact dirty state,
//! viewport and highlight cache. A rope makes an edit cost the log of the
//! file size, so there is no size cap: any text file that fits in memory
//! opens editable (binary and invalid UTF-8 files open read-only).

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ropey::{Rope, RopeSlice};

use super::disk::{self, Content, DiskVersion};
use super::error::{EditorError, ReadOnlyReason};
use super::grapheme;
use super::highlight::HighlightCache;
use super::history::{Cursor, Edit, History, Kind};
use super::indent::Indentation;
use super::journal::{Journal, LinePosition, TextChange};
use super::marks::ColumnMarks;
use super::recovery::RecoveryState;
use super::text::{LineEnding, Shape};
use super::width::visual_col_from;

/// How the document relates to the file on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskState {
    InSync,
    /// The file changed on disk while the buffer had unsaved edits. The
    /// user's text is kept; `theirs` is the disk text for diff/load.
    ChangedOnDisk {
        theirs: String,
    },
    /// The file was deleted; the buffer is kept and saving recreates it.
    DeletedOnDisk,
}

/// Scroll position of the file view; updated by `prepare_frame`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    /// First visible line.
    pub top: usize,
    /// First visible display column (after tab expansion).
    pub left: usize,
    /// Text rows and columns of the last prepared frame.
    pub height: usize,
    pub width: usize,
    /// Keep the cursor in view; false after a mouse-wheel scroll.
    pub follow_cursor: bool,
    /// The cursor jumped (find, go to line, a search result): if it
    /// landed outside the view, the next frame centres it, as VS Code
    /// does, instead of scrolling it to the edge. One frame's request.
    pub center_jump: bool,
    /// Text rows at the top hidden under an overlay (the find bar): the
    /// cursor is kept below them while the file allows. Set each frame.
    pub covered_top: usize,
}

pub struct Document {
    pub(crate) path: PathBuf,
    /// The text with '\n' line breaks, the final one included: its lines
    /// are the lines an editor shows, the empty one after a final line
    /// break too (see `text::Shape`).
    pub(crate) rope: Rope,
    /// How many '\r' the text holds (line breaks are '\n' in the rope, so
    /// each is a lone one): while there are any, language servers get the
    /// whole text, not ranges (see `changes_since`).
    carriage_returns: usize,
    /// Line ending and byte-order mark, written back on
    /// save. Part of the content: a change of it is undoable and dirty.
    pub(crate) shape: Shape,
    /// The shape as last loaded or saved (with `saved`, what "dirty" is
    /// measured against).
    pub(crate) saved_shape: Shape,
    pub(crate) permissions: Option<fs::Permissions>,
    pub(crate) disk_version: Option<DiskVersion>,
    pub(crate) disk_state: DiskState,
    pub(crate) read_only: Option<ReadOnlyReason>,
    /// The text as last loaded or saved: dirty is exactly "differs from
    /// it". A rope clone shares the unchanged parts, so keeping it is cheap.
    pub(crate) saved: Rope,
    pub(crate) dirty: bool,
    /// Chars `start..end` of the text hold every edit since the save:
    /// outside them the text is the saved text, so the dirty check compares
    /// only this span. None when nothing was edited since.
    pub(crate) touched: Option<(usize, usize)>,
    /// Cursor as a char index into `rope`, always on a cluster boundary.
    pub(crate) head: usize,
    /// The other end of the selection, when selecting.
    pub(crate) anchor: Option<usize>,
    pub(crate) history: History,
    /// Names the current text: a new number on every change, unique in the
    /// process, so observers copy the text only when it moved.
    pub(crate) generation: u64,
    /// Recent edits by generation, for ranged `didChange`.
    pub(crate) journal: Journal,
    pub(crate) viewport: Viewport,
    /// Column marks along long visible lines (see `marks`).
    pub(crate) marks: ColumnMarks,
    pub(crate) search: Option<super::search::Query>,
    pub(crate) highlight: HighlightCache,
    pub(crate) recovery: RecoveryState,
    pub(crate) indentation: Indentation,
    /// Display column kept across vertical moves.
    pub(crate) preferred_col: Option<usize>,
}

impl Document {
    /// Open a file. Binary and invalid UTF-8 files open read-only with a
    /// reason; unreadable files are an error value. Tab width and the Tab
    /// key follow the file's `.editorconfig`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, EditorError> {
        let path = path.as_ref().to_path_buf();
        let loaded = disk::read(&path)?;
        let mut doc = Self::empty(path);
        doc.permissions = Some(loaded.permissions);
        doc.disk_version = Some(loaded.version);
        let len = loaded.bytes.len() as u64;
        doc.install(disk::classify(loaded.bytes), len);
        Ok(doc)
    }

    /// A document from text that is not (yet) on disk at `path`, e.g. a
    /// restored recovery whose file was deleted. Saving creates the file.
    pub fn from_text(path: impl AsRef<Path>, text: &str) -> Self {
        let mut doc = Self::empty(path.as_ref().to_path_buf());
        doc.install(Content::Text(text.to_string()), text.len() as u64);
        doc
    }

    fn empty(path: PathBuf) -> Self {
        Self {
            indentation: Indentation::for_file(&path),
            path,
            rope: Rope::new(),
            carriage_returns: 0,
            shape: Shape::default(),
            saved_shape: Shape::default(),
            permissions: None,
            disk_version: None,
            disk_state: DiskState::InSync,
            read_only: None,
            saved: Rope::new(),
            dirty: false,
            touched: None,
            head: 0,
            anchor: None,
            history: History::default(),
            generation: next_generation(),
            journal: Journal::default(),
            viewport: Viewport {
                follow_cursor: true,
                ..Viewport::default()
            },
            marks: ColumnMarks::default(),
            search: None,
            highlight: HighlightCache::default(),
            recovery: RecoveryState::default(),
            preferred_col: None,
        }
    }

    /// Replace the whole content when opening. Undo history starts fresh.
    pub(crate) fn install(&mut self, content: Content, bytes: u64) {
        let (text, invalid) = match content {
            Content::Binary => {
                self.read_only = Some(ReadOnlyReason::Binary { bytes });
                return;
            }
            Content::Text(t) => (t, false),
            Content::InvalidUtf8(t) => (t, true),
        };
        let (shape, body) = Shape::of(&text);
        self.shape = shape;
        self.saved_shape = shape;
        self.read_only = invalid.then_some(ReadOnlyReason::InvalidUtf8);
        self.rope = build_rope(&body);
        self.carriage_returns = memchr::memchr_iter(b'\r', body.as_bytes()).count();
        self.saved = self.rope.clone();
        self.dirty = false;
        self.touched = None;
        self.history = History::default();
        self.highlight = self.highlight.cleared();
        self.generation = next_generation();
        self.journal.clear();
        self.marks = ColumnMarks::default();
        self.set_cursor((0, 0), false);
    }

    /// Replace the text with what is on disk now (a reload, "load theirs")
    /// as one undoable step, keeping the cursor (clamped). The new text is
    /// the saved one. Its shape is part of the step: undo brings back the
    /// user's line ending, final newline and byte-order mark with their
    /// text, so saving after the undo writes what they had.
    pub(crate) fn reload(&mut self, text: &str) {
        let (shape, body) = Shape::of(text);
        self.replace_all(&body, shape);
        self.mark_saved();
    }

    /// Replace the whole text and its shape as one undoable step, keeping
    /// the cursor (clamped): a reload from disk, a restored recovery.
    pub(crate) fn replace_all(&mut self, body: &str, shape: Shape) {
        let shapes = (self.shape, shape);
        self.shape = shape;
        let cursor = self.cursor();
        let before = self.cursor_state();
        let edit = self.splice(0..self.rope.len_chars(), body);
        self.set_cursor(cursor, false);
        let after = self.cursor_state();
        self.history.record(
            Kind::Alone,
            Instant::now(),
            vec![edit],
            before,
            after,
            Some(shapes),
        );
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the document cannot be edited, if it cannot.
    pub fn read_only_reason(&self) -> Option<&ReadOnlyReason> {
        self.read_only.as_ref()
    }

    pub fn is_binary(&self) -> bool {
        matches!(self.read_only, Some(ReadOnlyReason::Binary { .. }))
    }

    pub fn disk_state(&self) -> &DiskState {
        &self.disk_state
    }

    pub fn line_ending(&self) -> LineEnding {
        self.shape.line_ending
    }

    pub fn has_final_newline(&self) -> bool {
        let chars = self.rope.len_chars();
        chars > 0 && self.rope.char(chars - 1) == '\n'
    }

    /// Exact: the text differs from what was last loaded or saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Changes with every edit of the text (and never otherwise), and no
    /// two documents share one, so a caller can tell "changed since I last
    /// looked" without a copy or a hash.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The edits from generation `since` to now, as language servers take
    /// them (ranges in the text before each edit); None when they are no
    /// longer known (send the whole text instead).
    pub fn changes_since(&self, since: u64) -> Option<Vec<TextChange>> {
        // A language server counts a lone '\r' as a line break and we do
        // not: ranges would land on the wrong lines of its copy, so such a
        // text always goes whole.
        if self.carriage_returns > 0 {
            return None;
        }
        self.journal.since(since, self.generation)
    }

    /// The text itself: cheap to clone (shares storage), so a copy can be
    /// handed to another thread (recovery, language servers).
    pub fn rope(&self) -> &Rope {
        &self.rope
    }

    /// Number of lines (a binary document has one empty line).
    /// Lines the view shows: after a final line break, the empty line the
    /// cursor can reach counts too (as VS Code numbers it).
    pub fn line_count(&self) -> usize {
        self.rope.len_lines()
    }

    /// Lines as a file's reader counts them (`wc -l`, a model reading it):
    /// the empty line after a final line break is not one.
    pub fn file_line_count(&self) -> usize {
        self.line_count() - usize::from(self.has_final_newline())
    }

    /// Line `n` without its line break; borrowed when it lies in one piece
    /// of the rope (nearly always).
    pub fn line(&self, n: usize) -> Option<Cow<'_, str>> {
        (n < self.rope.len_lines()).then(|| line_text(&self.rope, n).into())
    }

    /// Lines `range` joined with '\n' (clamped to the text).
    pub(crate) fn lines_text(&self, range: std::ops::Range<usize>) -> String {
        let count = self.rope.len_lines();
        let (start, end) = (range.start.min(count), range.end.min(count));
        if start >= end {
            return String::new();
        }
        let from = self.rope.line_to_char(start);
        let to = self.rope.line_to_char(end - 1) + line_len(&self.rope, end - 1);
        self.rope.slice(from..to).to_string()
    }

    /// The buffer as one string with '\n' line breaks (as the model sees it).
    pub fn text(&self) -> String {
        self.rope.to_string()
    }

    /// Cursor as (line, character), both 0-based; characters are code
    /// points, exact for the snapshot and language servers.
    pub fn cursor(&self) -> (usize, usize) {
        self.position_of(self.head)
    }

    /// The cursor's column as the user sees it, 0-based: clusters (👨‍👩‍👧‍👦 is
    /// one) before it, a tab reaching the next tab stop. For the status bar.
    pub fn cursor_column(&self) -> usize {
        let (line, col) = self.cursor();
        let from = self.marks.visual_before_char(line, col);
        visual_col_from(line_text(&self.rope, line), from, col, self.tab_width())
    }

    /// Selection as ordered (start, end) positions, end exclusive; None when
    /// nothing (or an empty range) is selected.
    pub fn selection(&self) -> Option<((usize, usize), (usize, usize))> {
        let (s, e) = self.selection_chars()?;
        Some((self.position_of(s), self.position_of(e)))
    }

    /// The selection as ordered char indices, None when empty.
    pub(crate) fn selection_chars(&self) -> Option<(usize, usize)> {
        let anchor = self.anchor?;
        (anchor != self.head).then(|| (anchor.min(self.head), anchor.max(self.head)))
    }

    /// The text under the selection, lines joined with '\n'.
    pub fn selected_text(&self) -> Option<String> {
        let (s, e) = self.selection_chars()?;
        Some(self.rope.slice(s..e).to_string())
    }

    pub fn viewport(&self) -> Viewport {
        self.viewport
    }

    pub fn tab_width(&self) -> usize {
        self.indentation.tab_width
    }

    /// The active search query (highlighted in the view), if any.
    pub(crate) fn search_query(&self) -> Option<&str> {
        self.search.as_ref().map(super::search::Query::text)
    }

    /// Syntax name chosen by the highlighter ("Rust", "Python", …), known
    /// after the first `prepare_frame`.
    pub fn language(&self) -> Option<&str> {
        self.highlight.syntax_name()
    }

    /// (line, char in line) of char index `at`.
    pub(crate) fn position_of(&self, at: usize) -> (usize, usize) {
        let at = at.min(self.rope.len_chars());
        let line = self.rope.char_to_line(at);
        (line, at - self.rope.line_to_char(line))
    }

    /// Char index of (line, char in line), clamped into the text and back
    /// to the start of a cluster.
    pub(crate) fn index_of(&self, (line, col): (usize, usize)) -> usize {
        let line = line.min(self.rope.len_lines().saturating_sub(1));
        let at = self.rope.line_to_char(line) + col.min(line_len(&self.rope, line));
        grapheme::snap(&self.rope, at)
    }

    /// LSP position of char index `at`.
    fn line_position(&self, at: usize) -> LinePosition {
        let (line, col) = self.position_of(at);
        LinePosition::new(line, line_text(&self.rope, line), col)
    }

    pub(crate) fn cursor_state(&self) -> Cursor {
        (self.head, self.anchor)
    }

    /// Put the cursor at `to` (clamped); `select` extends the selection.
    pub(crate) fn set_cursor(&mut self, to: (usize, usize), select: bool) {
        let at = self.index_of(to);
        self.move_head(at, select);
    }

    /// Jump the cursor to `to` (line, char; clamped): a far target is
    /// centred in the view by the next frame rather than left at its edge.
    pub fn jump_to(&mut self, to: (usize, usize)) {
        self.set_cursor(to, false);
        self.viewport.follow_cursor = true;
        self.viewport.center_jump = true;
    }

    /// Rows at the top of the view hidden by an overlay this frame (0
    /// when none): the cursor is kept clear of them.
    pub fn keep_clear_of_top(&mut self, rows: usize) {
        self.viewport.covered_top = rows;
    }

    /// Move the cursor to char index `at`; `select` extends the selection.
    pub(crate) fn move_head(&mut self, at: usize, select: bool) {
        if select {
            self.anchor.get_or_insert(self.head);
        } else {
            self.anchor = None;
        }
        self.head = at.min(self.rope.len_chars());
    }

    /// The one way the text changes: replace chars `range` with `text`,
    /// keeping the highlight cache, dirty state and generation in step.
    /// Returns the edit, for the undo history.
    pub(crate) fn splice(&mut self, range: std::ops::Range<usize>, text: &str) -> Edit {
        let first_line = self.rope.char_to_line(range.start);
        let inserted = text.chars().count();
        let change = TextChange {
            start: self.line_position(range.start),
            end: self.line_position(range.end),
            text: text.to_string(),
        };
        let removed = self.rope.slice(range.clone()).to_string();
        let count_cr = |t: &str| memchr::memchr_iter(b'\r', t.as_bytes()).count();
        self.carriage_returns =
            self.carriage_returns.saturating_sub(count_cr(&removed)) + count_cr(text);
        let lines_before = self.rope.len_lines();
        self.rope.remove(range.clone());
        self.rope.insert(range.start, text);
        let count_changed =
            self.rope.len_lines() != lines_before || removed.contains('\n') || text.contains('\n');
        self.highlight.invalidate(first_line, count_changed);
        self.marks
            .invalidate(first_line, change.start.chars, count_changed);
        let before = self.generation;
        self.generation = next_generation();
        self.journal.push(before, self.generation, change);
        self.recovery.pending = true;
        self.touch(range.clone(), inserted);
        self.recompute_dirty();
        Edit {
            at: range.start,
            removed,
            inserted: text.to_string(),
        }
    }

    /// Grow the touched span by an edit that replaced chars `range` with
    /// `inserted` chars: the span moves with the text after the edit and
    /// covers what was inserted.
    fn touch(&mut self, range: std::ops::Range<usize>, inserted: usize) {
        let (s, e) = (range.start, range.end);
        let end_of_edit = s + inserted;
        self.touched = Some(match self.touched {
            None => (s, end_of_edit),
            Some((a, b)) => {
                let b = if b >= e {
                    b + inserted - (e - s)
                } else {
                    end_of_edit
                };
                (a.min(s), b.max(end_of_edit))
            }
        });
    }

    /// Exact dirty check at the cost of the touched span, not the file: a
    /// different length is dirty at once; with the same length the text
    /// outside the span equals the saved text, so comparing the span
    /// decides (typing `x` then Backspace at the end of a 1 000 000-line
    /// file compares one char).
    pub(super) fn recompute_dirty(&mut self) {
        let (now, saved) = (&self.rope, &self.saved);
        self.dirty = self.shape != self.saved_shape
            || match self.touched {
                None => false,
                Some(_) if now.len_chars() != saved.len_chars() => true,
                Some((a, b)) => {
                    let b = b.min(now.len_chars());
                    let a = a.min(b);
                    now.slice(a..b) != saved.slice(a..b)
                }
            };
    }

    /// Bytes a save would write: original line ending and final newline.
    /// The exact bytes on disk, when the buffer is clean and its text
    /// serializes to them (checked against the hash taken at load or save).
    pub(crate) fn disk_bytes(&self) -> Option<Vec<u8>> {
        let version = self.disk_version.as_ref()?;
        if self.dirty || !matches!(self.disk_state, DiskState::InSync) {
            return None;
        }
        let bytes = self.serialized().into_bytes();
        (super::hash::content(&bytes) == version.hash).then_some(bytes)
    }

    pub(crate) fn serialized(&self) -> String {
        self.shape.write(&self.rope)
    }

    /// Save atomically, keeping permissions, line endings and the final
    /// newline state. On error the buffer stays dirty and the message says
    /// why. A file changed on disk since we read it is not overwritten
    /// until the user resolved the conflict. Missing folders above the
    /// file are not made (see [`Document::save_in`]).
    pub fn save(&mut self) -> Result<(), EditorError> {
        self.save_with(None)
    }

    /// [`Document::save`] in the workspace `workspace`: a file whose folder
    /// was deleted with it (`rm -rf d1`, a cell's `find src -delete`) gets
    /// its missing folders back, so "deleted on disk: saving recreates it"
    /// holds. They are made only beneath the workspace, folder by folder,
    /// never through a link (a folder swapped for a link to elsewhere is
    /// refused, nothing is made behind it).
    pub fn save_in(&mut self, workspace: &Path) -> Result<(), EditorError> {
        self.save_with(Some(workspace))
    }

    fn save_with(&mut self, workspace: Option<&Path>) -> Result<(), EditorError> {
        if let Some(reason) = &self.read_only {
            return Err(EditorError::ReadOnly {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        if matches!(self.disk_state, DiskState::InSync) {
            self.check_disk();
        }
        if matches!(self.disk_state, DiskState::ChangedOnDisk { .. }) {
            return Err(EditorError::Conflict {
                path: self.path.clone(),
            });
        }
        disk::refuse_new_links(&self.path)?;
        if let Some(workspace) = workspace {
            disk::make_missing_folders(workspace, &self.path)?;
        }
        let text = self.serialized();
        let version = match disk::how_to_write(&self.path)? {
            disk::SaveWrite::Atomic => {
                disk::write_atomic(&self.path, text.as_bytes(), self.permissions.as_ref())?
            }
            disk::SaveWrite::InPlace => disk::write_in_place(&self.path, text.as_bytes())?,
        };
        self.disk_version = Some(version);
        self.disk_state = DiskState::InSync;
        if self.permissions.is_none() {
            self.permissions = fs::metadata(&self.path).ok().map(|m| m.permissions());
        }
        self.mark_saved();
        self.discard_recovery();
        Ok(())
    }

    /// The current text is what the disk holds.
    pub(crate) fn mark_saved(&mut self) {
        self.saved = self.rope.clone();
        self.saved_shape = self.shape;
        self.dirty = false;
        self.touched = None;
    }
}

/// The rope of `text`. ropey builds about 1 GB/s, so a big text is built
/// in pieces on several threads and the pieces appended (each append is
/// O(log n)): opening a 37 MB file takes half the time on two cores.
fn build_rope(text: &str) -> Rope {
    const PIECE: usize = 4 << 20;
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(text.len() / PIECE + 1);
    if threads <= 1 {
        return Rope::from_str(text);
    }
    let mut pieces = Vec::with_capacity(threads);
    let mut rest = text;
    for i in (1..=threads).rev() {
        let mut cut = rest.len() / i;
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        pieces.push(piece);
        rest = tail;
    }
    std::thread::scope(|scope| {
        let built: Vec<_> = pieces
            .into_iter()
            .map(|piece| scope.spawn(move || Rope::from_str(piece)))
            .collect();
        let mut rope = Rope::new();
        for handle in built {
            match handle.join() {
                Ok(piece) => rope.append(piece),
                // A builder thread failed (out of memory): build it here.
                Err(_) => return Rope::from_str(text),
            }
        }
        rope
    })
}

/// A generation number no document has had.
fn next_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Line `n` of `rope` without its line break.
pub(crate) fn line_text(rope: &Rope, n: usize) -> RopeSlice<'_> {
    let line = rope.line(n);
    let len = line.len_chars();
    if len > 0 && line.char(len - 1) == '\n' {
        line.slice(..len - 1)
    } else {
        line
    }
}

/// Chars in line `n` of `rope`, without its line break.
pub(crate) fn line_len(rope: &Rope, n: usize) -> usize {
    line_text(rope, n).len_chars()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rope_built_in_pieces_is_the_text() {
        // Multi-byte chars everywhere, so cuts land inside some of them.
        let text = "ab日本\n🦀x\n".repeat(1 << 20);
        let rope = build_rope(&text);
        assert_eq!(rope.len_bytes(), text.len());
        assert_eq!(rope.len_lines(), (1 << 21) + 1);
        assert!(rope == text.as_str());
        assert_eq!(build_rope("a\nb").to_string(), "a\nb");
    }
}

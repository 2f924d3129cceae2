//! `Document`: one open file — its text engine, how it was stored on disk,
//! exact dirty state, viewport and highlight cache.

use std::fs;
use std::path::{Path, PathBuf};

use tui_textarea::{CursorMove, TextArea};

use super::disk::{self, Content, DiskVersion};
use super::error::{EditorError, ReadOnlyReason};
use super::highlight::HighlightCache;
use super::line_cursor::LineCursor;
use super::recovery::RecoveryState;
use super::text::{LineEnding, join_lines, split_lines};

/// The edit engine's viewport counts rows in `u16`, so longer files cannot
/// be edited in it; they open read-only and render from our own lines.
pub const MAX_EDITABLE_LINES: usize = u16::MAX as usize;
/// The edit engine rebuilds a map of every line on each edit, so a
/// keystroke costs time linear in the file size: measured ~7 ms at 20 000
/// lines (0.75 MB) and ~24 ms at 65 000 lines (2.5 MB) with
/// `cargo bench --bench editor`. Past 4 MiB a keystroke would exceed
/// ~40 ms, so such files open read-only (scroll, search, highlight work).
pub const MAX_EDITABLE_BYTES: u64 = 4 * 1024 * 1024;
/// Undo steps kept per document.
const UNDO_DEPTH: usize = 1000;

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

/// The text a document holds.
pub(crate) enum Body {
    Editable(Box<TextArea<'static>>),
    /// Read-only lines with our own cursor (too big for the engine).
    Lines(Vec<String>, LineCursor),
    Binary,
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
}

pub struct Document {
    pub(crate) path: PathBuf,
    pub(crate) body: Body,
    pub(crate) line_ending: LineEnding,
    pub(crate) final_newline: bool,
    pub(crate) permissions: Option<fs::Permissions>,
    pub(crate) disk_version: Option<DiskVersion>,
    pub(crate) disk_state: DiskState,
    pub(crate) read_only: Option<ReadOnlyReason>,
    /// The text as last loaded or saved: dirty is exactly "differs from it".
    pub(crate) saved_lines: Vec<String>,
    pub(crate) dirty: bool,
    pub(crate) viewport: Viewport,
    pub(crate) search: Option<String>,
    pub(crate) highlight: HighlightCache,
    pub(crate) recovery: RecoveryState,
    pub(crate) tab_width: usize,
    /// Display column kept across vertical moves.
    pub(crate) preferred_col: Option<usize>,
    /// A line known to differ from `saved_lines`: checked first.
    pub(crate) differing_line: Option<usize>,
}

impl Document {
    /// Open a file. Binary, invalid UTF-8 and too-big files open read-only
    /// with a reason; unreadable files are an error value.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, EditorError> {
        let path = path.as_ref().to_path_buf();
        let loaded = disk::read(&path)?;
        let mut doc = Self::empty(path);
        doc.permissions = Some(loaded.permissions);
        doc.disk_version = Some(loaded.version);
        let len = loaded.bytes.len() as u64;
        doc.install(disk::classify(loaded.bytes), len, None);
        Ok(doc)
    }

    /// A document from text that is not (yet) on disk at `path`, e.g. a
    /// restored recovery whose file was deleted. Saving creates the file.
    pub fn from_text(path: impl AsRef<Path>, text: &str) -> Self {
        let mut doc = Self::empty(path.as_ref().to_path_buf());
        doc.install(Content::Text(text.to_string()), text.len() as u64, None);
        doc
    }

    fn empty(path: PathBuf) -> Self {
        Self {
            path,
            body: Body::Binary,
            line_ending: LineEnding::Lf,
            final_newline: true,
            permissions: None,
            disk_version: None,
            disk_state: DiskState::InSync,
            read_only: None,
            saved_lines: Vec::new(),
            dirty: false,
            viewport: Viewport {
                follow_cursor: true,
                ..Viewport::default()
            },
            search: None,
            highlight: HighlightCache::default(),
            recovery: RecoveryState::default(),
            tab_width: 4,
            preferred_col: None,
            differing_line: None,
        }
    }

    /// Replace the whole content (open, reload, load theirs). `cursor` is
    /// restored, clamped, when given.
    pub(crate) fn install(&mut self, content: Content, bytes: u64, cursor: Option<(usize, usize)>) {
        self.highlight = self.highlight.cleared();
        self.dirty = false;
        self.differing_line = None;
        self.saved_lines = Vec::new();
        let (text, invalid) = match content {
            Content::Binary => {
                self.body = Body::Binary;
                self.read_only = Some(ReadOnlyReason::Binary { bytes });
                return;
            }
            Content::Text(t) => (t, false),
            Content::InvalidUtf8(t) => (t, true),
        };
        let split = split_lines(&text);
        self.line_ending = split.line_ending;
        self.final_newline = split.final_newline;
        let lines = split.lines;
        let too_big = lines.len() > MAX_EDITABLE_LINES || bytes > MAX_EDITABLE_BYTES;
        self.read_only = if too_big {
            Some(ReadOnlyReason::TooBig {
                lines: lines.len(),
                bytes,
            })
        } else if invalid {
            Some(ReadOnlyReason::InvalidUtf8)
        } else {
            None
        };
        if too_big {
            let mut cursor_state = LineCursor::default();
            if let Some(c) = cursor {
                cursor_state.jump(&lines, c, false);
            }
            self.body = Body::Lines(lines, cursor_state);
            return;
        }
        self.saved_lines = lines.clone();
        let mut ta = TextArea::new(lines);
        ta.set_max_histories(UNDO_DEPTH);
        ta.set_tab_length(self.tab_width.clamp(1, 16) as u8);
        if let Some((row, col)) = cursor {
            ta.move_cursor(CursorMove::Jump(clamp_u16(row), clamp_u16(col)));
        }
        self.body = Body::Editable(Box::new(ta));
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why the document cannot be edited, if it cannot.
    pub fn read_only_reason(&self) -> Option<&ReadOnlyReason> {
        self.read_only.as_ref()
    }

    pub fn is_binary(&self) -> bool {
        matches!(self.body, Body::Binary)
    }

    pub fn disk_state(&self) -> &DiskState {
        &self.disk_state
    }

    pub fn line_ending(&self) -> LineEnding {
        self.line_ending
    }

    pub fn has_final_newline(&self) -> bool {
        self.final_newline
    }

    /// Exact: the text differs from what was last loaded or saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn lines(&self) -> &[String] {
        match &self.body {
            Body::Editable(ta) => ta.lines(),
            Body::Lines(lines, _) => lines,
            Body::Binary => &[],
        }
    }

    /// The buffer as one string with '\n' line breaks (as the model sees it).
    pub fn text(&self) -> String {
        self.lines().join("\n")
    }

    /// Cursor as (line, character), both 0-based.
    pub fn cursor(&self) -> (usize, usize) {
        match &self.body {
            Body::Editable(ta) => {
                let c = ta.cursor();
                (c.0, c.1)
            }
            Body::Lines(_, c) => c.pos,
            Body::Binary => (0, 0),
        }
    }

    /// Selection as ordered (start, end) positions, end exclusive; None when
    /// nothing (or an empty range) is selected.
    pub fn selection(&self) -> Option<((usize, usize), (usize, usize))> {
        let range = match &self.body {
            Body::Editable(ta) => ta.selection_range(),
            Body::Lines(_, c) => c.selection(),
            Body::Binary => None,
        };
        range.filter(|(s, e)| s != e)
    }

    /// The text under the selection, lines joined with '\n'.
    pub fn selected_text(&self) -> Option<String> {
        let (s, e) = self.selection()?;
        Some(text_in(self.lines(), s, e))
    }

    pub fn viewport(&self) -> Viewport {
        self.viewport
    }

    /// Spaces per tab stop for display and for the Tab key.
    pub fn set_tab_width(&mut self, width: usize) {
        self.tab_width = width.clamp(1, 16);
        if let Body::Editable(ta) = &mut self.body {
            ta.set_tab_length(self.tab_width as u8);
        }
    }

    pub fn tab_width(&self) -> usize {
        self.tab_width
    }

    /// The active search query (highlighted in the view), if any.
    pub fn search_query(&self) -> Option<&str> {
        self.search.as_deref()
    }

    /// Syntax name chosen by the highlighter ("Rust", "Python", …), known
    /// after the first `prepare_frame`.
    pub fn language(&self) -> Option<&str> {
        self.highlight.syntax_name()
    }

    /// Exact dirty check, cheap in the common case: a different line count
    /// is dirty at once; else the line found to differ last time is checked
    /// first (typing keeps it differing); only when that line matches again
    /// (e.g. after an undo) is the whole text compared, and that finds the
    /// next differing line to check first.
    pub(crate) fn recompute_dirty(&mut self) {
        let Body::Editable(ta) = &self.body else {
            self.dirty = false;
            return;
        };
        let (now, saved) = (ta.lines(), self.saved_lines.as_slice());
        if now.len() != saved.len() {
            self.dirty = true;
            return;
        }
        if let Some(h) = self.differing_line
            && h < now.len()
            && now[h] != saved[h]
        {
            self.dirty = true;
            return;
        }
        self.differing_line = now.iter().zip(saved).position(|(a, b)| a != b);
        self.dirty = self.differing_line.is_some();
    }

    /// Bytes a save would write: original line ending and final newline.
    /// The exact bytes on disk, when the buffer is clean and its text
    /// serializes to them (checked against the hash taken at load or save).
    pub fn disk_bytes(&self) -> Option<Vec<u8>> {
        let version = self.disk_version.as_ref()?;
        if self.dirty || !matches!(self.disk_state, DiskState::InSync) {
            return None;
        }
        let bytes = self.serialized().into_bytes();
        (super::hash::fnv1a(&bytes) == version.hash).then_some(bytes)
    }

    pub(crate) fn serialized(&self) -> String {
        join_lines(self.lines(), self.line_ending, self.final_newline)
    }

    /// Save atomically, keeping permissions, line endings and the final
    /// newline state. On error the buffer stays dirty and the message says
    /// why. A file changed on disk since we read it is not overwritten
    /// until the user resolved the conflict.
    pub fn save(&mut self) -> Result<(), EditorError> {
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
        let text = self.serialized();
        let version = disk::write_atomic(&self.path, text.as_bytes(), self.permissions.as_ref())?;
        self.disk_version = Some(version);
        self.disk_state = DiskState::InSync;
        if self.permissions.is_none() {
            self.permissions = fs::metadata(&self.path).ok().map(|m| m.permissions());
        }
        self.saved_lines = self.lines().to_vec();
        self.dirty = false;
        self.differing_line = None;
        self.discard_recovery();
        Ok(())
    }
}

pub(crate) fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Text between two (line, char) positions, lines joined with '\n'.
pub(crate) fn text_in(lines: &[String], start: (usize, usize), end: (usize, usize)) -> String {
    let slice = |line: &str, from: usize, to: Option<usize>| -> String {
        let it = line.chars().skip(from);
        match to {
            Some(to) => it.take(to.saturating_sub(from)).collect(),
            None => it.collect(),
        }
    };
    let Some(first) = lines.get(start.0) else {
        return String::new();
    };
    if start.0 == end.0 {
        return slice(first, start.1, Some(end.1));
    }
    let mut out = slice(first, start.1, None);
    for line in lines.iter().take(end.0).skip(start.0 + 1) {
        out.push('\n');
        out.push_str(line);
    }
    if let Some(last) = lines.get(end.0) {
        out.push('\n');
        out.push_str(&slice(last, 0, Some(end.1)));
    }
    out
}

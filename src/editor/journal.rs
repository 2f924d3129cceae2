//! The recent edits of a document as language servers want them: each the
//! replaced range, in the text as it was before, and the new text, so a
//! keystroke is sent as a few bytes (`didChange` with ranges) instead of
//! the whole buffer. Columns are kept in every unit LSP may negotiate. The
//! journal is bounded; a reader that fell behind gets `None` and sends the
//! whole text.

use std::collections::VecDeque;

use ropey::RopeSlice;

/// Edits kept, and bytes of inserted text kept, before the oldest go.
const MAX_ENTRIES: usize = 4096;
const MAX_BYTES: usize = 1 << 20;

/// A position as LSP counts it: a line and the column in each unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinePosition {
    pub line: usize,
    /// UTF-8 bytes before it on its line.
    pub utf8: usize,
    /// UTF-16 code units before it on its line.
    pub utf16: usize,
    /// Code points before it on its line.
    pub chars: usize,
}

impl LinePosition {
    /// The position `chars` code points into `line_text` (line `line`).
    pub fn new(line: usize, line_text: RopeSlice<'_>, chars: usize) -> Self {
        let prefix = line_text.slice(..chars.min(line_text.len_chars()));
        Self {
            line,
            utf8: prefix.len_bytes(),
            utf16: prefix.len_utf16_cu(),
            chars,
        }
    }
}

/// One edit: `start..end` (before the edit) became `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextChange {
    pub start: LinePosition,
    pub end: LinePosition,
    pub text: String,
}

#[derive(Debug, Default)]
pub(crate) struct Journal {
    /// Each change with the generations before and after it.
    entries: VecDeque<(u64, u64, TextChange)>,
    bytes: usize,
}

impl Journal {
    pub fn push(&mut self, before: u64, after: u64, change: TextChange) {
        self.bytes += change.text.len();
        self.entries.push_back((before, after, change));
        while self.entries.len() > MAX_ENTRIES || self.bytes > MAX_BYTES {
            match self.entries.pop_front() {
                Some((_, _, old)) => self.bytes -= old.text.len(),
                None => break,
            }
        }
    }

    /// Forget everything (the text was replaced wholesale).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// The changes that lead from generation `from` to `to`, in order;
    /// None when the journal does not reach back that far.
    pub fn since(&self, from: u64, to: u64) -> Option<Vec<TextChange>> {
        if from == to {
            return Some(Vec::new());
        }
        let first = self
            .entries
            .iter()
            .position(|(before, _, _)| *before == from)?;
        let mut out = Vec::new();
        let mut at = from;
        for (before, after, change) in self.entries.iter().skip(first) {
            if *before != at {
                return None;
            }
            out.push(change.clone());
            at = *after;
            if at == to {
                return Some(out);
            }
        }
        None
    }
}

//! Grapheme clusters over a rope: what a user calls one character (👨‍👩‍👧‍👦,
//! `é` written as `e` + U+0301, a flag) is one cluster, so the cursor never
//! lands inside one. Everything here walks the rope's chunks directly
//! (after ropey's own examples), so the cost is the size of the clusters
//! crossed, never the length of the line or the file.

use std::borrow::Cow;

use ropey::iter::Chunks;
use ropey::str_utils::byte_to_char_idx;
use ropey::{Rope, RopeSlice};
use unicode_segmentation::{GraphemeCursor, GraphemeIncomplete};

/// The cluster boundary after char `char_idx` (the text length at the end).
pub(crate) fn next_boundary(text: RopeSlice<'_>, char_idx: usize) -> usize {
    let len = text.len_chars();
    if char_idx >= len {
        return len;
    }
    let byte_idx = text.char_to_byte(char_idx);
    let (mut chunk, mut chunk_byte, mut chunk_char, _) = text.chunk_at_byte(byte_idx);
    let mut cursor = GraphemeCursor::new(byte_idx, text.len_bytes(), true);
    loop {
        match cursor.next_boundary(chunk, chunk_byte) {
            Ok(None) => return len,
            Ok(Some(n)) => return chunk_char + byte_to_char_idx(chunk, n - chunk_byte),
            Err(GraphemeIncomplete::NextChunk) => {
                chunk_byte += chunk.len();
                let (c, _, ch, _) = text.chunk_at_byte(chunk_byte);
                chunk = c;
                chunk_char = ch;
            }
            Err(GraphemeIncomplete::PreContext(n)) => {
                let context = text.chunk_at_byte(n - 1).0;
                cursor.provide_context(context, n - context.len());
            }
            // The other variants are only returned by other methods.
            Err(_) => return (char_idx + 1).min(len),
        }
    }
}

/// The cluster boundary before char `char_idx` (0 at the start).
pub(crate) fn prev_boundary(text: RopeSlice<'_>, char_idx: usize) -> usize {
    let char_idx = char_idx.min(text.len_chars());
    if char_idx == 0 {
        return 0;
    }
    let byte_idx = text.char_to_byte(char_idx);
    let (mut chunk, mut chunk_byte, mut chunk_char, _) = text.chunk_at_byte(byte_idx);
    let mut cursor = GraphemeCursor::new(byte_idx, text.len_bytes(), true);
    loop {
        match cursor.prev_boundary(chunk, chunk_byte) {
            Ok(None) => return 0,
            Ok(Some(n)) => return chunk_char + byte_to_char_idx(chunk, n - chunk_byte),
            Err(GraphemeIncomplete::PrevChunk) => {
                let (c, b, ch, _) = text.chunk_at_byte(chunk_byte - 1);
                chunk = c;
                chunk_byte = b;
                chunk_char = ch;
            }
            Err(GraphemeIncomplete::PreContext(n)) => {
                let context = text.chunk_at_byte(n - 1).0;
                cursor.provide_context(context, n - context.len());
            }
            Err(_) => return char_idx - 1,
        }
    }
}

/// `char_idx` moved back to the start of the cluster it is inside (a
/// position from outside, e.g. a diagnostic's column, may split one).
pub fn snap(rope: &Rope, char_idx: usize) -> usize {
    let text = rope.slice(..);
    let char_idx = char_idx.min(text.len_chars());
    let before = prev_boundary(text, char_idx);
    if next_boundary(text, before) == char_idx {
        char_idx
    } else {
        before
    }
}

/// The clusters of a slice in order, each as text plus its length in
/// chars. A cluster inside one chunk is borrowed; one across chunks is
/// copied (it is a handful of bytes).
pub(crate) struct Graphemes<'a> {
    text: RopeSlice<'a>,
    chunks: Chunks<'a>,
    chunk: &'a str,
    chunk_start: usize,
    cursor: GraphemeCursor,
}

impl<'a> Graphemes<'a> {
    pub fn new(text: RopeSlice<'a>) -> Self {
        let mut chunks = text.chunks();
        let chunk = chunks.next().unwrap_or("");
        Self {
            text,
            chunks,
            chunk,
            chunk_start: 0,
            cursor: GraphemeCursor::new(0, text.len_bytes(), true),
        }
    }
}

impl<'a> Iterator for Graphemes<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        let start = self.cursor.cur_cursor();
        let end = loop {
            match self.cursor.next_boundary(self.chunk, self.chunk_start) {
                Ok(None) => return None,
                Ok(Some(n)) => break n,
                Err(GraphemeIncomplete::NextChunk) => {
                    self.chunk_start += self.chunk.len();
                    self.chunk = self.chunks.next().unwrap_or("");
                }
                Err(GraphemeIncomplete::PreContext(n)) => {
                    let (context, at, _, _) = self.text.chunk_at_byte(n - 1);
                    self.cursor.provide_context(context, at);
                }
                Err(_) => return None,
            }
        };
        if start < self.chunk_start {
            let (a, b) = (self.text.byte_to_char(start), self.text.byte_to_char(end));
            Some(Cow::Owned(self.text.slice(a..b).to_string()))
        } else {
            let (a, b) = (start - self.chunk_start, end - self.chunk_start);
            Some(Cow::Borrowed(&self.chunk[a..b]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(text: &str) -> Vec<usize> {
        let rope = Rope::from_str(text);
        let mut at = 0;
        let mut out = Vec::new();
        while at < rope.len_chars() {
            at = next_boundary(rope.slice(..), at);
            out.push(at);
        }
        let mut back = Vec::new();
        while at > 0 {
            back.push(at);
            at = prev_boundary(rope.slice(..), at);
        }
        back.reverse();
        assert_eq!(out, back, "forward and backward agree on {text:?}");
        out
    }

    #[test]
    fn zwj_family_combining_marks_and_cjk_are_one_step_each() {
        // 👨‍👩‍👧‍👦 is 7 code points, one cluster.
        assert_eq!(steps("a👨‍👩‍👧‍👦b"), [1, 8, 9]);
        // e + combining acute, then a precomposed é.
        assert_eq!(steps("e\u{301}é"), [2, 3]);
        assert_eq!(steps("日本"), [1, 2]);
        // Regional indicators pair into flags.
        assert_eq!(steps("🇫🇷🇩🇪"), [2, 4]);
        assert_eq!(steps("a\nb"), [1, 2, 3]);
    }

    #[test]
    fn clusters_across_chunk_boundaries_are_whole() {
        // Long enough for several chunks; the family straddles some.
        let unit = "ab👨‍👩‍👧‍👦c\u{301}";
        let text = unit.repeat(400);
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 3);
        let clusters: Vec<String> = Graphemes::new(rope.slice(..))
            .map(|g| g.into_owned())
            .collect();
        assert_eq!(clusters.len(), 400 * 4);
        assert!(
            clusters
                .iter()
                .all(|g| ["a", "b", "👨‍👩‍👧‍👦", "c\u{301}"].contains(&g.as_str()))
        );
        assert_eq!(steps(&text).len(), 400 * 4);
        assert_eq!(snap(&rope, 4), 2, "inside the family: back to its start");
        assert_eq!(snap(&rope, 9), 9);
    }
}

//! Column marks along long lines (minified files): known cluster
//! boundaries with their display column every `MARK_EVERY` chars, so the
//! view finds the column of a cursor 2 MB into a line, or the char at the
//! left edge of a view scrolled there, by walking from the nearest mark
//! instead of the line start. Marks are made once (by `prepare_frame`)
//! and kept until an edit before them on their line, or one that moves
//! lines, makes them stale.

use std::collections::HashMap;
use std::ops::Range;

use ropey::RopeSlice;

use super::grapheme::Graphemes;
use super::width::{cluster_cells, visual_step};

/// Lines at least this many chars long get marks; shorter ones are walked
/// from their start (cheap).
pub(crate) const LONG_LINE: usize = 16 * 1024;
/// Chars between two marks.
const MARK_EVERY: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct ColumnMarks {
    /// Per line: (char, display column, column as the status bar counts it
    /// — clusters, tabs to their stop) at cluster boundaries, ascending;
    /// (0, 0, 0) is implied.
    lines: HashMap<usize, Vec<(usize, usize, usize)>>,
    /// The tab width the columns were counted with.
    tab: usize,
}

impl ColumnMarks {
    /// The mark at or before char `at` of `line`: (char, display column).
    pub(crate) fn before_char(&self, line: usize, at: usize) -> (usize, usize) {
        let (c, x, _) = self.last_where(line, |(c, _, _)| c <= at);
        (c, x)
    }

    /// The mark at or before display column `col` of `line`: (char,
    /// display column).
    pub(crate) fn before_col(&self, line: usize, col: usize) -> (usize, usize) {
        let (c, x, _) = self.last_where(line, |(_, x, _)| x <= col);
        (c, x)
    }

    /// The mark at or before char `at` of `line`: (char, the status bar's
    /// column), for `width::visual_col_from`.
    pub(crate) fn visual_before_char(&self, line: usize, at: usize) -> (usize, usize) {
        let (c, _, v) = self.last_where(line, |(c, _, _)| c <= at);
        (c, v)
    }

    fn last_where(
        &self,
        line: usize,
        ok: impl Fn((usize, usize, usize)) -> bool,
    ) -> (usize, usize, usize) {
        let Some(marks) = self.lines.get(&line) else {
            return (0, 0, 0);
        };
        let n = marks.partition_point(|m| ok(*m));
        n.checked_sub(1).map_or((0, 0, 0), |i| marks[i])
    }

    /// Keep only the marks of `visible` lines, counted with `tab`.
    pub fn keep(&mut self, visible: Range<usize>, tab: usize) {
        if tab != self.tab {
            self.lines.clear();
            self.tab = tab;
        }
        self.lines.retain(|line, _| visible.contains(line));
    }

    /// Make marks along `line` (its text `text`) until char `char_at` and
    /// display column `col` are both passed (or the line ends).
    pub fn extend(&mut self, line: usize, text: RopeSlice<'_>, char_at: usize, col: usize) {
        if text.len_chars() < LONG_LINE {
            return;
        }
        let tab = self.tab;
        let marks = self.lines.entry(line).or_default();
        let (mut at, mut x, mut v) = marks.last().copied().unwrap_or((0, 0, 0));
        if at >= char_at && x >= col {
            return;
        }
        let mut since = 0;
        for g in Graphemes::new(text.slice(at..)) {
            if since >= MARK_EVERY {
                marks.push((at, x, v));
                since = 0;
                if at > char_at && x > col {
                    return;
                }
            }
            let n = g.chars().count();
            x += cluster_cells(&g, x, tab);
            v = visual_step(&g, v, tab);
            at += n;
            since += n;
        }
    }

    /// Text changed at char `at` of `line`: its marks after `at` are stale;
    /// when lines were added or removed, every mark is.
    pub(crate) fn invalidate(&mut self, line: usize, at: usize, lines_changed: bool) {
        if lines_changed {
            self.lines.clear();
        } else if let Some(marks) = self.lines.get_mut(&line) {
            marks.retain(|(c, _, _)| *c <= at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::width::{
        char_at_col, char_at_col_from, display_col, display_col_from, visual_col, visual_col_from,
    };
    use ropey::Rope;

    #[test]
    fn walking_from_a_mark_agrees_with_walking_from_the_start() {
        // Tabs, wide chars and a family, repeated past several marks.
        let unit = "ab\t日本👨‍👩‍👧‍👦x;";
        let rope = Rope::from_str(&unit.repeat(5000));
        let text = rope.slice(..);
        let mut marks = ColumnMarks::default();
        marks.keep(0..1, 4);
        let far = text.len_chars() - 3;
        marks.extend(0, text, far, 0);
        assert!(marks.lines[&0].len() > 5);
        for at in [0, 17, 9000, 20_001, far] {
            let from = marks.before_char(0, at);
            assert!(from.0 <= at);
            assert_eq!(
                display_col_from(text, from, at, 4),
                display_col(text, at, 4),
                "char {at}"
            );
        }
        for at in [0, 17, 9000, 20_001, far] {
            assert_eq!(
                visual_col_from(text, marks.visual_before_char(0, at), at, 4),
                visual_col(text, at, 4),
                "the status bar's column at {at}"
            );
        }
        let end_col = display_col(text, far, 4);
        for col in [0, 5, 12_345, end_col] {
            let from = marks.before_col(0, col);
            assert_eq!(
                char_at_col_from(text, from, col, 4),
                char_at_col(text, col, 4),
                "col {col}"
            );
        }
        marks.invalidate(0, 10_000, false);
        assert!(marks.lines[&0].iter().all(|(c, _, _)| *c <= 10_000));
        marks.keep(0..1, 8);
        assert_eq!(
            marks.before_char(0, far),
            (0, 0),
            "another tab width: recounted"
        );
    }
}

//! Cursor motions on the rope, by grapheme cluster: Left and Right step
//! over 👨‍👩‍👧‍👦 or `e` + U+0301 in one press, word motions treat a cluster
//! as the class of its first char. Vertical motions keep a preferred
//! display column, so moving through a short line does not lose it.

use ropey::Rope;

use super::document::{line_len, line_text};
use super::grapheme::{next_boundary, prev_boundary};
use super::marks::ColumnMarks;
use super::width::{char_at_col_from, display_col_from};

/// A cursor motion: the one enum the keymap binds and the documents run.
/// A page is what the view shows, so page motions take their height from
/// the document's viewport when they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Motion {
    Left,
    Right,
    Up,
    Down,
    WordLeft,
    WordRight,
    /// Smart Home: first non-blank character, then column 0.
    LineStart,
    LineEnd,
    DocStart,
    DocEnd,
    PageUp,
    PageDown,
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub enum Class {
    Space,
    Word,
    Punct,
    LineBreak,
}

pub fn class(c: char) -> Class {
    if c == '\n' {
        Class::LineBreak
    } else if c.is_whitespace() {
        Class::Space
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Punct
    }
}

/// The char index `mv` leads to from char index `at` (a page being `page`
/// lines), and the preferred display column to remember (Some only after
/// vertical motions).
pub fn target(
    rope: &Rope,
    at: usize,
    mv: Motion,
    page: usize,
    tab: usize,
    preferred: Option<usize>,
    marks: &ColumnMarks,
) -> (usize, Option<usize>) {
    let text = rope.slice(..);
    let line = rope.char_to_line(at);
    let start = rope.line_to_char(line);
    let last = rope.len_lines().saturating_sub(1);
    let end_of = |l: usize| rope.line_to_char(l) + line_len(rope, l);
    // From the nearest column mark: on a minified line the column is not
    // counted from the line start at every Up or Down.
    let vertical = |to: usize| {
        let want = preferred.unwrap_or_else(|| {
            let from = marks.before_char(line, at - start);
            display_col_from(line_text(rope, line), from, at - start, tab)
        });
        let to = to.min(last);
        let from = marks.before_col(to, want);
        let col = char_at_col_from(line_text(rope, to), from, want, tab);
        (rope.line_to_char(to) + col, Some(want))
    };
    match mv {
        Motion::Up if line == 0 => (0, None),
        Motion::Up => vertical(line - 1),
        Motion::Down if line >= last => (end_of(last), None),
        Motion::Down => vertical(line + 1),
        Motion::PageUp => vertical(line.saturating_sub(page.max(1))),
        Motion::PageDown => vertical(line.saturating_add(page.max(1))),
        Motion::Left => (prev_boundary(text, at), None),
        Motion::Right => (next_boundary(text, at), None),
        Motion::LineStart => {
            let indent = line_text(rope, line)
                .chars()
                .take_while(|c| c.is_whitespace())
                .count();
            let to = if at - start == indent { 0 } else { indent };
            (start + to, None)
        }
        Motion::LineEnd => (end_of(line), None),
        Motion::DocStart => (0, None),
        Motion::DocEnd => (rope.len_chars(), None),
        Motion::WordRight => (word_right(rope, at), None),
        Motion::WordLeft => (word_left(rope, at), None),
    }
}

/// End of the current word (or punctuation run) after skipping blanks;
/// at the end of a line, the start of the next.
pub(crate) fn word_right(rope: &Rope, at: usize) -> usize {
    let text = rope.slice(..);
    let len = rope.len_chars();
    let class_at = |i: usize| class(rope.char(i));
    if at >= len {
        return len;
    }
    if class_at(at) == Class::LineBreak {
        return at + 1;
    }
    let mut i = at;
    while i < len && class_at(i) == Class::Space {
        i = next_boundary(text, i);
    }
    if i < len && class_at(i) != Class::LineBreak {
        let k = class_at(i);
        while i < len && class_at(i) == k {
            i = next_boundary(text, i);
        }
    }
    i
}

/// Start of the previous word; at column 0, the end of the previous line.
pub(crate) fn word_left(rope: &Rope, at: usize) -> usize {
    let text = rope.slice(..);
    if at == 0 {
        return 0;
    }
    // The class of the cluster before `i`, and where it starts.
    let before = |i: usize| {
        let p = prev_boundary(text, i);
        (p, class(rope.char(p)))
    };
    if before(at).1 == Class::LineBreak {
        return at - 1;
    }
    let mut i = at;
    while i > 0 && before(i).1 == Class::Space {
        i = before(i).0;
    }
    if i > 0 && before(i).1 != Class::LineBreak {
        let k = before(i).1;
        while i > 0 && before(i).1 == k {
            i = before(i).0;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where `mv` leads from (line, col), as (line, col).
    fn go(text: &str, from: (usize, usize), mv: Motion, page: usize) -> (usize, usize) {
        let rope = Rope::from_str(text);
        let at = rope.line_to_char(from.0) + from.1;
        let to = target(&rope, at, mv, page, 4, None, &ColumnMarks::default()).0;
        let line = rope.char_to_line(to);
        (line, to - rope.line_to_char(line))
    }

    #[test]
    fn word_motions() {
        let t = "fn foo(a) {\n  bar";
        assert_eq!(go(t, (0, 0), Motion::WordRight, 1), (0, 2));
        assert_eq!(go(t, (0, 2), Motion::WordRight, 1), (0, 6));
        assert_eq!(go(t, (0, 11), Motion::WordRight, 1), (1, 0));
        assert_eq!(go(t, (0, 6), Motion::WordLeft, 1), (0, 3));
        assert_eq!(go(t, (1, 0), Motion::WordLeft, 1), (0, 11));
        assert_eq!(go(t, (1, 2), Motion::WordLeft, 1), (1, 0));
    }

    #[test]
    fn smart_home_and_sticky_column() {
        let t = "    let x = 1;\n\nabcdefgh";
        assert_eq!(go(t, (0, 9), Motion::LineStart, 1), (0, 4));
        assert_eq!(go(t, (0, 4), Motion::LineStart, 1), (0, 0));
        let rope = Rope::from_str(t);
        let (p, pref) = target(&rope, 6, Motion::Down, 1, 4, None, &ColumnMarks::default());
        assert_eq!(p, rope.line_to_char(1));
        let (p, _) = target(&rope, p, Motion::Down, 1, 4, pref, &ColumnMarks::default());
        assert_eq!(
            p,
            rope.line_to_char(2) + 6,
            "column remembered across the empty line"
        );
        assert_eq!(go(t, (0, 3), Motion::PageDown, 10), (2, 3));
    }

    #[test]
    fn wide_chars_keep_display_column() {
        let t = "日本語\nabcdef";
        assert_eq!(go(t, (0, 2), Motion::Down, 1), (1, 4));
        assert_eq!(go(t, (1, 3), Motion::Up, 1), (0, 1));
    }

    #[test]
    fn clusters_move_as_one() {
        let family = "👨‍👩‍👧‍👦";
        let t = format!("a{family}b\n{family}");
        assert_eq!(
            go(&t, (0, 1), Motion::Right, 1),
            (0, 8),
            "7 code points, one press"
        );
        assert_eq!(go(&t, (0, 8), Motion::Left, 1), (0, 1));
        assert_eq!(go(&t, (0, 9), Motion::LineEnd, 1), (0, 9));
        assert_eq!(
            go(&t, (0, 9), Motion::Down, 1),
            (1, 7),
            "column 3 is past the family"
        );
        assert_eq!(go(&t, (0, 8), Motion::Down, 1), (1, 7));
        assert_eq!(go(&t, (0, 1), Motion::Down, 1), (1, 0));
        assert_eq!(go("e\u{301}x", (0, 0), Motion::Right, 1), (0, 2));
        assert_eq!(go("日本", (0, 0), Motion::Right, 1), (0, 1));
        // Emoji are punctuation to word motions, in one piece.
        assert_eq!(go(&t, (0, 1), Motion::WordRight, 1), (0, 8));
    }
}

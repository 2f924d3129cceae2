//! Cursor motions computed on plain lines, shared by editable and read-only
//! documents so both move the same way. Vertical motions keep a preferred
//! display column, so moving through a short line does not lose the column.

use super::width::{char_at_col, display_col};

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
enum Class {
    Space,
    Word,
    Punct,
}

fn class(c: char) -> Class {
    if c.is_whitespace() {
        Class::Space
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Punct
    }
}

fn line_len(lines: &[String], line: usize) -> usize {
    lines.get(line).map_or(0, |l| l.chars().count())
}

/// The position `mv` leads to from `pos` (a page being `page` lines), and
/// the preferred display column to remember (Some only after vertical
/// motions).
pub fn target(
    lines: &[String],
    pos: (usize, usize),
    mv: Motion,
    page: usize,
    tab: usize,
    preferred: Option<usize>,
) -> ((usize, usize), Option<usize>) {
    let last = lines.len().saturating_sub(1);
    let (line, col) = pos;
    let vertical = |to: usize| {
        let want =
            preferred.unwrap_or_else(|| lines.get(line).map_or(0, |l| display_col(l, col, tab)));
        let to = to.min(last);
        let c = lines.get(to).map_or(0, |l| char_at_col(l, want, tab));
        ((to, c), Some(want))
    };
    match mv {
        Motion::Up if line == 0 => ((0, 0), None),
        Motion::Up => vertical(line - 1),
        Motion::Down if line >= last => ((last, line_len(lines, last)), None),
        Motion::Down => vertical(line + 1),
        Motion::PageUp => vertical(line.saturating_sub(page.max(1))),
        Motion::PageDown => vertical(line.saturating_add(page.max(1))),
        Motion::Left if col > 0 => ((line, col - 1), None),
        Motion::Left if line > 0 => ((line - 1, line_len(lines, line - 1)), None),
        Motion::Left => (pos, None),
        Motion::Right if col < line_len(lines, line) => ((line, col + 1), None),
        Motion::Right if line < last => ((line + 1, 0), None),
        Motion::Right => (pos, None),
        Motion::LineStart => {
            let indent = lines
                .get(line)
                .map_or(0, |l| l.chars().take_while(|c| c.is_whitespace()).count());
            ((line, if col == indent { 0 } else { indent }), None)
        }
        Motion::LineEnd => ((line, line_len(lines, line)), None),
        Motion::DocStart => ((0, 0), None),
        Motion::DocEnd => ((last, line_len(lines, last)), None),
        Motion::WordRight => (word_right(lines, pos), None),
        Motion::WordLeft => (word_left(lines, pos), None),
    }
}

/// End of the current word (or punctuation run) after skipping blanks;
/// at the end of a line, the start of the next.
fn word_right(lines: &[String], (line, col): (usize, usize)) -> (usize, usize) {
    let chars: Vec<char> = lines.get(line).map_or(Vec::new(), |l| l.chars().collect());
    if col >= chars.len() {
        return if line + 1 < lines.len() {
            (line + 1, 0)
        } else {
            (line, chars.len())
        };
    }
    let mut i = col;
    while i < chars.len() && class(chars[i]) == Class::Space {
        i += 1;
    }
    if i < chars.len() {
        let k = class(chars[i]);
        while i < chars.len() && class(chars[i]) == k {
            i += 1;
        }
    }
    (line, i)
}

/// Start of the previous word; at column 0, the end of the previous line.
fn word_left(lines: &[String], (line, col): (usize, usize)) -> (usize, usize) {
    if col == 0 {
        return if line > 0 {
            (line - 1, line_len(lines, line - 1))
        } else {
            (0, 0)
        };
    }
    let chars: Vec<char> = lines.get(line).map_or(Vec::new(), |l| l.chars().collect());
    let mut i = col.min(chars.len());
    while i > 0 && class(chars[i - 1]) == Class::Space {
        i -= 1;
    }
    if i > 0 {
        let k = class(chars[i - 1]);
        while i > 0 && class(chars[i - 1]) == k {
            i -= 1;
        }
    }
    (line, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn word_motions() {
        let l = lines(&["fn foo(a) {", "  bar"]);
        assert_eq!(target(&l, (0, 0), Motion::WordRight, 1, 4, None).0, (0, 2));
        assert_eq!(target(&l, (0, 2), Motion::WordRight, 1, 4, None).0, (0, 6));
        assert_eq!(target(&l, (0, 11), Motion::WordRight, 1, 4, None).0, (1, 0));
        assert_eq!(target(&l, (0, 6), Motion::WordLeft, 1, 4, None).0, (0, 3));
        assert_eq!(target(&l, (1, 0), Motion::WordLeft, 1, 4, None).0, (0, 11));
    }

    #[test]
    fn smart_home_and_sticky_column() {
        let l = lines(&["    let x = 1;", "", "abcdefgh"]);
        assert_eq!(target(&l, (0, 9), Motion::LineStart, 1, 4, None).0, (0, 4));
        assert_eq!(target(&l, (0, 4), Motion::LineStart, 1, 4, None).0, (0, 0));
        let (p, pref) = target(&l, (0, 6), Motion::Down, 1, 4, None);
        assert_eq!(p, (1, 0));
        let (p, _) = target(&l, p, Motion::Down, 1, 4, pref);
        assert_eq!(p, (2, 6), "column remembered across the empty line");
        assert_eq!(target(&l, (0, 3), Motion::PageDown, 10, 4, None).0, (2, 3));
    }

    #[test]
    fn wide_chars_keep_display_column() {
        let l = lines(&["日本語", "abcdef"]);
        assert_eq!(target(&l, (0, 2), Motion::Down, 1, 4, None).0, (1, 4));
        assert_eq!(target(&l, (1, 3), Motion::Up, 1, 4, None).0, (0, 1));
    }
}

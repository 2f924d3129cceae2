//! Display widths of text in terminal cells: tabs expand to the next tab
//! stop, wide characters (CJK, emoji) take two cells, and control
//! characters are drawn as one replacement cell so no escape sequence from
//! a file ever reaches the terminal. Rendering, horizontal scrolling and
//! mouse clicks all use these functions, so they always agree.

use unicode_width::UnicodeWidthChar;

/// The character drawn for a control character (never sent raw).
pub const CONTROL_GLYPH: char = '\u{fffd}';

pub fn is_control(c: char) -> bool {
    c != '\t' && c.is_control()
}

/// Cells taken by `c` when it starts at display column `col`.
pub fn char_cells(c: char, col: usize, tab: usize) -> usize {
    if c == '\t' {
        let tab = tab.max(1);
        tab - col % tab
    } else if is_control(c) {
        1
    } else {
        c.width().unwrap_or(0)
    }
}

/// Display column where the character at `char_idx` starts.
pub fn display_col(line: &str, char_idx: usize, tab: usize) -> usize {
    line.chars()
        .take(char_idx)
        .fold(0, |col, c| col + char_cells(c, col, tab))
}

/// Character index drawn at display column `col` (the character covering
/// it; past the end of the line, the line length).
pub fn char_at_col(line: &str, col: usize, tab: usize) -> usize {
    let mut at = 0;
    for (i, c) in line.chars().enumerate() {
        let w = char_cells(c, at, tab);
        if col < at + w.max(1) {
            return i;
        }
        at += w;
    }
    line.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tabs_and_controls() {
        assert_eq!(display_col("日本x", 2, 4), 4);
        assert_eq!(display_col("a\tb", 2, 4), 4);
        assert_eq!(display_col("\x1b[31m", 1, 4), 1);
        assert_eq!(display_col("🦀a", 1, 4), 2);
        assert_eq!(char_at_col("日本x", 3, 4), 1);
        assert_eq!(char_at_col("日本x", 4, 4), 2);
        assert_eq!(char_at_col("ab", 9, 4), 2);
        assert_eq!(char_at_col("a\tb", 2, 4), 1);
    }
}

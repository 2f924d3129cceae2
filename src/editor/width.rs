//! Display widths of text in terminal cells, per grapheme cluster: tabs
//! expand to the next tab stop, wide clusters (CJK, emoji) take two cells,
//! and control characters and invisible characters are drawn as one
//! replacement cell each, so no escape sequence or invisible character
//! from a file ever reaches the terminal. Rendering, horizontal scrolling,
//! mouse clicks and vertical motion all use these functions, so they always
//! agree. Each walks a line from its start only as far as asked, never the
//! rest of the line.
//!
//! Why invisible characters inside a cluster are split out: a joiner, a
//! variation selector or a tag rides on the cluster before it (`<` + ZWJ,
//! `❤` + VS16, `👩` + ZWJ + `💻`), and terminals disagree with
//! `unicode-width` and with each other on how wide such a cluster is
//! (tmux draws `❤️` one cell wide, `unicode-width` says two). A cell
//! drawn narrower than laid out leaves a stale cell behind; a wider one
//! shifts the rest of the row over the pane's border. Drawn a piece at a
//! time (`❤`, then a replacement cell), every piece has one width everywhere,
//! and the hidden character is visible, as `sanitize` shows it in the panes.

use ropey::RopeSlice;
use unicode_width::UnicodeWidthStr;

use super::grapheme::Graphemes;
use crate::sanitize::is_hidden_in_code;

/// The character drawn for a control character or an invisible one.
pub(crate) const CONTROL_GLYPH: char = '\u{fffd}';

pub fn is_control(c: char) -> bool {
    c != '\t' && c.is_control()
}

/// How a cluster is drawn: a tab, a replacement cell, itself, or piece by
/// piece (`pieces`) because it carries an invisible character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Glyph {
    Tab,
    Replaced,
    Text,
    Split,
}

pub(crate) fn glyph(cluster: &str) -> Glyph {
    let mut chars = cluster.chars();
    match chars.next() {
        Some('\t') => Glyph::Tab,
        Some(c) if is_control(c) => Glyph::Replaced,
        // The common case, ASCII text, decided without a table.
        Some(_) if cluster.len() == 1 => Glyph::Text,
        Some(c) if is_hidden_in_code(c) && chars.as_str().is_empty() => Glyph::Replaced,
        _ if cluster.chars().any(is_hidden_in_code) => Glyph::Split,
        _ if cluster.width() == 0 => Glyph::Replaced,
        _ => Glyph::Text,
    }
}

/// One piece of a split cluster: a run of visible chars drawn as one
/// symbol of `width` cells, or a replacement cell (an invisible char, or a
/// run that would draw nothing, such as a mark left without its base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Text(&'a str, usize),
    Mark,
}

impl Piece<'_> {
    pub(crate) fn width(self) -> usize {
        match self {
            Piece::Text(_, width) => width,
            Piece::Mark => 1,
        }
    }
}

/// The pieces of a `Glyph::Split` cluster, in order.
pub(crate) fn pieces(cluster: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut run_start = 0;
    for (at, c) in cluster.char_indices() {
        if is_hidden_in_code(c) {
            visible_run(&mut out, &cluster[run_start..at]);
            out.push(Piece::Mark);
            run_start = at + c.len_utf8();
        }
    }
    visible_run(&mut out, &cluster[run_start..]);
    out
}

fn visible_run<'a>(out: &mut Vec<Piece<'a>>, run: &'a str) {
    if run.is_empty() {
        return;
    }
    match run.width() {
        0 => out.push(Piece::Mark),
        width => out.push(Piece::Text(run, width)),
    }
}

/// Cells taken by `cluster` when it starts at display column `col`.
pub(crate) fn cluster_cells(cluster: &str, col: usize, tab: usize) -> usize {
    match glyph(cluster) {
        Glyph::Tab => {
            let tab = tab.max(1);
            tab - col % tab
        }
        Glyph::Replaced => 1,
        Glyph::Text => cluster.width(),
        Glyph::Split => pieces(cluster).into_iter().map(Piece::width).sum(),
    }
}

/// Display column where the char at `char_idx` of `line` starts (a
/// position inside a cluster counts as the cluster's start).
pub fn display_col<'a>(line: impl Into<RopeSlice<'a>>, char_idx: usize, tab: usize) -> usize {
    display_col_from(line.into(), (0, 0), char_idx, tab)
}

/// `display_col`, walking from a known cluster boundary `from` (char,
/// display column) at or before `char_idx` (see `ColumnMarks`).
pub(crate) fn display_col_from(
    line: RopeSlice<'_>,
    from: (usize, usize),
    char_idx: usize,
    tab: usize,
) -> usize {
    column_at(line, from, char_idx, |g, col| {
        col + cluster_cells(g, col, tab)
    })
}

/// The column where the char at `char_idx` starts, walking clusters from
/// `from` (char, column) and advancing the column by `step` — display
/// cells or the status bar's count: one walk for both.
fn column_at(
    line: RopeSlice<'_>,
    from: (usize, usize),
    char_idx: usize,
    step: impl Fn(&str, usize) -> usize,
) -> usize {
    let (mut at, mut col) = from;
    for g in Graphemes::new(line.slice(at.min(line.len_chars())..)) {
        at += g.chars().count();
        if at > char_idx {
            break;
        }
        col = step(&g, col);
    }
    col
}

/// The column the status bar shows for the char at `char_idx`: clusters
/// before it, with tabs reaching the next tab stop (as people count). The
/// document walks from a mark (`visual_col_from`); the tests check the two
/// agree.
#[cfg(test)]
pub(crate) fn visual_col<'a>(line: impl Into<RopeSlice<'a>>, char_idx: usize, tab: usize) -> usize {
    visual_col_from(line.into(), (0, 0), char_idx, tab)
}

/// `visual_col`, walking from a known cluster boundary `from` (char, the
/// status bar's column) at or before `char_idx` (see `ColumnMarks`): the
/// cursor 20 MB into a minified line is not counted from the line start
/// every frame.
pub(crate) fn visual_col_from(
    line: RopeSlice<'_>,
    from: (usize, usize),
    char_idx: usize,
    tab: usize,
) -> usize {
    column_at(line, from, char_idx, |g, col| visual_step(g, col, tab))
}

/// The status bar's column after `cluster` drawn at `col`: one further,
/// or a tab's next stop.
pub(crate) fn visual_step(cluster: &str, col: usize, tab: usize) -> usize {
    let tab = tab.max(1);
    if cluster == "\t" {
        col + tab - col % tab
    } else {
        col + 1
    }
}

/// Char index of the cluster drawn at display column `col` (past the end
/// of the line, the line length). Always a cluster boundary. The document
/// walks from a mark (`char_at_col_from`); the tests check the two agree.
#[cfg(test)]
pub(crate) fn char_at_col<'a>(line: impl Into<RopeSlice<'a>>, col: usize, tab: usize) -> usize {
    char_at_col_from(line.into(), (0, 0), col, tab)
}

/// `char_at_col`, walking from a known cluster boundary `from` (char,
/// display column) at or before `col`.
pub(crate) fn char_at_col_from(
    line: RopeSlice<'_>,
    from: (usize, usize),
    col: usize,
    tab: usize,
) -> usize {
    let (mut at, mut at_col) = from;
    for g in Graphemes::new(line.slice(at.min(line.len_chars())..)) {
        let w = cluster_cells(&g, at_col, tab);
        if col < at_col + w.max(1) {
            return at;
        }
        at_col += w;
        at += g.chars().count();
    }
    at
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

    #[test]
    fn tab_stops_follow_the_width() {
        // "ab\tc": the tab fills to the stop, whatever its width.
        assert_eq!(display_col("ab\tc", 3, 4), 4);
        assert_eq!(display_col("ab\tc", 3, 8), 8);
        assert_eq!(display_col("abcd\tc", 5, 4), 8, "at a stop: a whole tab");
        assert_eq!(display_col("\t\tx", 2, 2), 4);
        assert_eq!(visual_col("\tx", 1, 4), 4);
    }

    #[test]
    fn clusters_are_measured_whole() {
        // A thumb with a skin tone: two chars, one cluster, two cells.
        let thumb = "👍🏽";
        let line = format!("{thumb}ab");
        assert_eq!(display_col(line.as_str(), 2, 4), 2, "the thumb is 2 cells");
        assert_eq!(visual_col(line.as_str(), 2, 4), 1, "and one visible char");
        assert_eq!(visual_col(line.as_str(), 4, 4), 3);
        assert_eq!(char_at_col(line.as_str(), 1, 4), 0, "right half: the thumb");
        assert_eq!(char_at_col(line.as_str(), 2, 4), 2);
        // A combining mark joins its base.
        assert_eq!(display_col("e\u{301}x", 2, 4), 1);
        assert_eq!(glyph("\u{200b}"), Glyph::Replaced);
    }

    /// Invisible characters riding on a cluster are drawn as cells of
    /// their own, so terminals cannot disagree on the cluster's width;
    /// the cursor still steps over the cluster as one.
    #[test]
    fn invisible_characters_inside_a_cluster_get_their_own_cell() {
        assert_eq!(glyph("<\u{200d}"), Glyph::Split);
        assert_eq!(pieces("<\u{200d}"), [Piece::Text("<", 1), Piece::Mark]);
        assert_eq!(
            pieces("\u{2764}\u{fe0f}"),
            [Piece::Text("\u{2764}", 1), Piece::Mark],
            "a variation selector is shown, not trusted for width"
        );
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(
            pieces(family),
            [
                Piece::Text("👨", 2),
                Piece::Mark,
                Piece::Text("👩", 2),
                Piece::Mark,
                Piece::Text("👧", 2)
            ]
        );
        let line = format!("{family}x");
        let chars = family.chars().count();
        assert_eq!(display_col(line.as_str(), chars, 4), 8);
        assert_eq!(visual_col(line.as_str(), chars, 4), 1, "one step");
        assert_eq!(char_at_col(line.as_str(), 7, 4), 0, "inside: the cluster");
        // A soft hyphen or a Hangul filler alone is one replacement cell.
        assert_eq!(glyph("\u{ad}"), Glyph::Replaced);
        assert_eq!(cluster_cells("\u{115f}", 0, 4), 1);
        // A combining mark left alone after a joiner cannot draw by itself.
        assert_eq!(
            pieces("a\u{200d}\u{301}"),
            [Piece::Text("a", 1), Piece::Mark, Piece::Mark]
        );
    }
}

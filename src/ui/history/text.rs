//! The history's text as the pane shows it, for copying a selection: the
//! rows between two places, cut at their columns. Laid out afresh without
//! colours (rows wrap the same whatever the styles), so the copy can be
//! made where the frame's layout is not at hand (the mouse handler) and
//! covers rows scrolled out of view.

use unicode_width::UnicodeWidthChar;

use super::{PlainCode, body_rows, header};
use crate::theme::Theme;
use crate::workbench::transcript::Transcript;

/// A place in the history: row `row` of entry `entry`'s block (separator,
/// header, body, as in [`super::Slice`]) at column `col` of the pane's text
/// area. Ordered as they appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HistoryPoint {
    pub entry: usize,
    pub row: usize,
    pub col: usize,
}

/// The text the pane shows from `a` to `b` (either order, both columns
/// included) when `width` columns wide: one line per row, without the
/// role bars, trailing blanks trimmed.
pub fn text_between(
    transcript: &Transcript,
    width: usize,
    expanded: bool,
    a: HistoryPoint,
    b: HistoryPoint,
) -> String {
    let (from, to) = if a <= b { (a, b) } else { (b, a) };
    let theme = Theme::builtin_default();
    let mut lines = Vec::new();
    for entry in from.entry..=to.entry {
        let Some(rows) = block_rows(transcript, &theme, width, expanded, entry) else {
            break;
        };
        let first = if entry == from.entry { from.row } else { 0 };
        let last = if entry == to.entry {
            to.row
        } else {
            usize::MAX
        };
        for (row, text) in rows.iter().enumerate() {
            if row < first || row > last {
                continue;
            }
            let start = if (entry, row) == (from.entry, from.row) {
                from.col
            } else {
                0
            };
            let end = if (entry, row) == (to.entry, to.row) {
                to.col
            } else {
                usize::MAX
            };
            lines.push(
                without_bar(&columns(text, start, end))
                    .trim_end()
                    .to_owned(),
            );
        }
    }
    lines.join("\n")
}

/// `point` moved `rows` rows down (up when negative) through the
/// history's blocks, its column kept; it stops at the first and the last
/// row.
pub fn moved(
    transcript: &Transcript,
    width: usize,
    expanded: bool,
    point: HistoryPoint,
    rows: isize,
) -> HistoryPoint {
    let theme = Theme::builtin_default();
    let height =
        |entry| block_rows(transcript, &theme, width, expanded, entry).map_or(1, |r| r.len());
    let (mut entry, mut row) = (point.entry, point.row as isize + rows);
    while row < 0 {
        if entry == 0 {
            row = 0;
            break;
        }
        entry -= 1;
        row += height(entry) as isize;
    }
    let last = transcript.len().saturating_sub(1);
    loop {
        let rows_here = height(entry) as isize;
        if row < rows_here || entry >= last {
            row = row.min(rows_here - 1).max(0);
            break;
        }
        row -= rows_here;
        entry += 1;
    }
    HistoryPoint {
        entry,
        row: row as usize,
        col: point.col,
    }
}

/// The rows of entry `entry`'s block as text (separator, header, body);
/// None past the end.
fn block_rows(
    transcript: &Transcript,
    theme: &Theme,
    width: usize,
    expanded: bool,
    entry: usize,
) -> Option<Vec<String>> {
    let message = transcript.get(entry)?;
    let mut rows: Vec<String> = Vec::new();
    if entry > 0 {
        rows.push(String::new());
    }
    rows.push(plain(&header(message, false, theme)));
    rows.extend(
        body_rows(message, theme, &PlainCode, expanded, width)
            .iter()
            .map(plain),
    );
    Some(rows)
}

fn plain(line: &ratatui::text::Line<'_>) -> String {
    line.spans
        .iter()
        .map(|span| span.content.as_ref())
        .collect()
}

/// The chars of `text` that start in columns `start..=end`.
fn columns(text: &str, start: usize, end: usize) -> String {
    let mut col = 0;
    let mut out = String::new();
    for c in text.chars() {
        if col > end {
            break;
        }
        if col >= start {
            out.push(c);
        }
        col += c.width().unwrap_or(0);
    }
    out
}

/// A row without its decoration: the role bar (`▏ ` before a body row,
/// `▍` before a header) and a code block's gutter (`▎`).
fn without_bar(row: &str) -> &str {
    let row = row
        .strip_prefix("▏ ")
        .or_else(|| row.strip_prefix('▍'))
        .unwrap_or(row);
    row.strip_prefix('▎').unwrap_or(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::transcript::{PaneEntry, Speaker};

    fn transcript() -> Transcript {
        let mut t = Transcript::new();
        t.push(PaneEntry::new(Speaker::User, "list the files"));
        t.push(PaneEntry::new(
            Speaker::Assistant,
            "Run this:\n\n```sh\nls -la src\n```\n\nthen look.",
        ));
        t
    }

    fn at(entry: usize, row: usize, col: usize) -> HistoryPoint {
        HistoryPoint { entry, row, col }
    }

    #[test]
    fn a_selection_copies_what_the_rows_show_without_bars() {
        let t = transcript();
        // Entry 0: header, "list the files"; entry 1: separator, header, body.
        assert_eq!(
            text_between(&t, 40, false, at(0, 1, 2), at(0, 1, 5)),
            "list"
        );
        let both = text_between(&t, 40, false, at(1, 4, 0), at(0, 0, 0));
        assert!(
            both.starts_with("you\nlist the files\n\nassistant\nRun this:"),
            "{both:?}"
        );
    }

    #[test]
    fn moving_walks_across_blocks_and_stops_at_the_ends() {
        let t = transcript();
        let start = at(0, 1, 3);
        // Entry 0 has 2 rows (header, text): one down is entry 1's separator.
        assert_eq!(moved(&t, 40, false, start, 1), at(1, 0, 3));
        assert_eq!(moved(&t, 40, false, at(1, 0, 3), -1), start);
        assert_eq!(moved(&t, 40, false, start, -99), at(0, 0, 3));
        let end = moved(&t, 40, false, start, 999);
        assert_eq!(end.entry, 1);
        assert_eq!(moved(&t, 40, false, end, 1), end, "the last row is the end");
    }

    #[test]
    fn a_code_line_is_copied_whole_and_reversed_ends_agree() {
        let t = transcript();
        let rows = text_between(&t, 40, false, at(1, 0, 0), at(1, 99, 999));
        let row = rows
            .lines()
            .position(|l| l.contains("ls -la src"))
            .expect("the code row");
        let one = text_between(&t, 40, false, at(1, row, 0), at(1, row, 999));
        assert_eq!(one.trim(), "ls -la src");
        let reversed = text_between(&t, 40, false, at(1, row, 999), at(1, row, 0));
        assert_eq!(one, reversed);
    }
}

//! Scrolling the terminal instead of redrawing it: when rows of the next
//! frame are rows of the last one moved up or down (an answer growing at
//! the bottom of a conversation that follows it, the wheel in the
//! history), the terminal moves them itself (a scroll region, `DECSTBM`,
//! and `SU`/`SD`) and only what is new is drawn.
//!
//! Why: ratatui sends the cells that differ from the last frame, and a
//! pane whose text moved up one row differs in nearly every cell, so a
//! streamed chunk of 24 bytes cost ~3.3 KB whenever it started a new line.
//!
//! A scroll region spans the whole width of the terminal: left and right
//! margins (`DECSLRM`) would confine it to one pane, but tmux, kitty,
//! Alacritty and VTE do not know them, and a terminal that ignores them
//! would scroll the other panes too. So a band of whole rows is scrolled,
//! and the plan counts the cells to send both ways: it pays when what
//! shares those rows moves with them (a zoomed or stacked pane, borders,
//! blank space) and is refused when the panes beside it hold text that
//! stays (a file beside the conversation). Whatever the scroll got wrong
//! the diff that follows sends, so a plan can cost bytes but never a
//! wrong screen.

use std::hash::BuildHasher;
use std::ops::Range;

use ratatui::buffer::{Buffer, Cell};

/// Fewer changed rows than this are cheaper to redraw than to plan for.
const MIN_ROWS: usize = 3;

/// What a scroll costs beyond the cells it saves, in cells: the escape
/// sequences (`ESC[t;br ESC[nS ESC[r`, ~14 bytes) and the cursor moves
/// the diff needs afterwards.
const SCROLL_COST: usize = 24;

/// Rows `rows` of the terminal move `by` rows up (`up`) or down; the rows
/// that move in are blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scroll {
    pub rows: Range<u16>,
    pub by: u16,
    pub up: bool,
}

/// The scroll that makes `shown` (what the terminal shows) closest to
/// `next`, if it saves more cells than it costs.
pub(crate) fn plan(shown: &Buffer, next: &Buffer) -> Option<Scroll> {
    if shown.area != next.area {
        return None;
    }
    let width = usize::from(shown.area.width);
    let height = usize::from(shown.area.height);
    let changed: Vec<bool> = (0..height)
        .map(|y| row(shown, width, y) != row(next, width, y))
        .collect();
    if changed.iter().filter(|c| **c).count() < MIN_ROWS {
        return None;
    }
    let hasher = foldhash::fast::FixedState::default();
    let hash = |buffer: &Buffer| -> Vec<u64> {
        (0..height)
            .map(|y| hasher.hash_one(row(buffer, width, y)))
            .collect()
    };
    let (was, will) = (hash(shown), hash(next));
    // The changed rows of `next` that rows of `shown` moved `by` rows up
    // (or down) would give.
    let (changed, was, will) = (&changed, &was, &will);
    let gained = |by: usize, up: bool| {
        (0..height).filter(move |&y| {
            let from = if up { y + by } else { y.wrapping_sub(by) };
            changed[y] && from < height && will[y] == was[from]
        })
    };
    // The shift that gives most wins.
    let mut best: Option<(usize, bool, usize)> = None;
    for by in 1..height {
        for up in [true, false] {
            let count = gained(by, up).count();
            if count >= MIN_ROWS && best.is_none_or(|(_, _, most)| count > most) {
                best = Some((by, up, count));
            }
        }
    }
    let (by, up, _) = best?;
    let first = gained(by, up).next()?;
    let last = gained(by, up).next_back()?;
    let rows = if up {
        first..last + by + 1
    } else {
        first - by..last + 1
    };
    let scroll = Scroll {
        rows: u16::try_from(rows.start).ok()?..u16::try_from(rows.end).ok()?,
        by: u16::try_from(by).ok()?,
        up,
    };
    let blank = vec![Cell::EMPTY; width];
    let cost = |shifted: bool| -> usize {
        rows.clone()
            .map(|y| {
                let before = if !shifted {
                    row(shown, width, y)
                } else if up && y + by < rows.end {
                    row(shown, width, y + by)
                } else if !up && y >= rows.start + by {
                    row(shown, width, y - by)
                } else {
                    &blank
                };
                before
                    .iter()
                    .zip(row(next, width, y))
                    .filter(|(a, b)| a != b)
                    .count()
            })
            .sum()
    };
    (cost(true) + SCROLL_COST < cost(false)).then_some(scroll)
}

fn row(buffer: &Buffer, width: usize, y: usize) -> &[Cell] {
    &buffer.content[y * width..(y + 1) * width]
}

/// Does to `shown` what the scroll does to the terminal's screen.
pub(crate) fn apply(scroll: &Scroll, shown: &mut Buffer) {
    let width = usize::from(shown.area.width);
    let band = usize::from(scroll.rows.start) * width..usize::from(scroll.rows.end) * width;
    let moved = usize::from(scroll.by) * width;
    let Some(rows) = shown.content.get_mut(band) else {
        return;
    };
    let moved = moved.min(rows.len());
    let blank = if scroll.up {
        rows.rotate_left(moved);
        let len = rows.len();
        &mut rows[len - moved..]
    } else {
        rows.rotate_right(moved);
        &mut rows[..moved]
    };
    blank.fill(Cell::EMPTY);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    /// A buffer of 40-column rows: "title", line `i` (its number over
    /// the whole row) for each of `lines`, "status".
    fn screen(lines: Range<usize>) -> Buffer {
        let mut rows = vec![format!("{:<40}", "title")];
        rows.extend(lines.map(|i| i.to_string().repeat(40)[..40].to_owned()));
        rows.push(format!("{:<40}", "status"));
        Buffer::with_lines(rows)
    }

    /// A pane whose lines moved up by one, with a new line at the bottom,
    /// is one scroll of the band it fills; what is left to draw is the
    /// new line.
    #[test]
    fn lines_moved_up_are_one_scroll() {
        let (shown, next) = (screen(1..11), screen(2..12));
        let scroll = plan(&shown, &next).expect("a scroll");
        assert_eq!(
            scroll,
            Scroll {
                rows: 1..11,
                by: 1,
                up: true
            }
        );
        let mut moved = shown.clone();
        apply(&scroll, &mut moved);
        assert_eq!(moved.diff(&next).len(), 40, "only the new line is left");
        assert!(
            (0..40).all(|x| moved[(x, 10)] == Cell::EMPTY),
            "the row that moved in is blank"
        );
    }

    /// Lines moved down (the wheel up in the history) scroll down.
    #[test]
    fn lines_moved_down_scroll_down() {
        let scroll = plan(&screen(10..30), &screen(8..28)).expect("a scroll");
        assert_eq!(
            scroll,
            Scroll {
                rows: 1..21,
                by: 2,
                up: false
            }
        );
    }

    /// Rows too short to pay for the escape sequences are redrawn.
    #[test]
    fn short_rows_are_redrawn() {
        let buffer = |lines: &[&str]| Buffer::with_lines(lines.iter().copied());
        let shown = buffer(&["title", "one", "two", "three", "four", "status"]);
        let next = buffer(&["title", "two", "three", "four", "five", "status"]);
        assert_eq!(plan(&shown, &next), None);
    }

    /// Text beside the band that stays where it is would have to be drawn
    /// again on every row: no scroll.
    #[test]
    fn text_that_stays_beside_the_lines_refuses_the_scroll() {
        let area = Rect::new(0, 0, 80, 20);
        let draw = |first: usize| {
            let mut b = Buffer::empty(area);
            for y in 0..20u16 {
                b.set_string(
                    0,
                    y,
                    format!("line {:>30}", first + usize::from(y)),
                    Style::new(),
                );
                b.set_string(
                    40,
                    y,
                    format!("fixed text of the file view, row {y}"),
                    Style::new().fg(Color::Yellow),
                );
            }
            b
        };
        assert_eq!(plan(&draw(0), &draw(1)), None);
    }

    /// A frame with a few changed rows is left to the diff.
    #[test]
    fn few_changed_rows_are_no_scroll() {
        let mut next = screen(1..11);
        next[(3, 4)].set_symbol("x");
        next[(5, 5)].set_symbol("y");
        assert_eq!(plan(&screen(1..11), &next), None);
    }
}

//! The conversation pane's geometry: the history (with its border), the
//! pinned results and the composer. Drawing uses it, and so does paging,
//! so PgUp/PgDn move by exactly the rows the history shows.

use ratatui::layout::{Constraint, Layout, Margin, Rect};

/// The composer grows with its text up to this many rows.
const MAX_COMPOSER_ROWS: u16 = 8;

/// At most this many pinned results are listed above the composer.
pub(crate) const MAX_PIN_ROWS: usize = 3;

/// A list of `rows` items in a border over the bottom of the history's
/// inner area, just above the composer (the slash palette, the `@` list).
pub fn list_over_history(history_area: Rect, rows: usize) -> Rect {
    let height = (rows as u16 + 2).min(history_area.height);
    Rect::new(
        history_area.x,
        history_area.bottom().saturating_sub(height),
        history_area.width,
        height,
    )
}

/// Rows the composer's text takes when wrapped inside the pane's border
/// (`width` is the pane's), as the text area wraps it: at word boundaries,
/// a word wider than the line broken, one more cell for a cursor at the
/// end of a full row. Counting stops at [`MAX_COMPOSER_ROWS`]: a longer
/// text scrolls inside the composer.
pub fn composer_rows(lines: &[String], width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let mut rows = 0;
    for line in lines {
        // The cell after the last character is where a cursor at the end
        // of the line is drawn: the text area wraps it like a character.
        rows += super::wrap::wrap(&format!("{line} "), inner).len();
        if rows >= usize::from(MAX_COMPOSER_ROWS) {
            return MAX_COMPOSER_ROWS;
        }
    }
    (rows as u16).max(1)
}

/// Splits the pane into the history (with its border), the pinned results
/// and the composer, for a composer whose text wraps to `composer_rows`
/// rows ([`composer_rows`]) and `pins` pinned results.
pub fn split(composer_rows: u16, pins: usize, area: Rect) -> [Rect; 3] {
    let composer_rows = composer_rows.clamp(1, MAX_COMPOSER_ROWS) + 2;
    let pin_rows = if pins > MAX_PIN_ROWS {
        MAX_PIN_ROWS + 1
    } else {
        pins
    } as u16;
    Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(pin_rows),
        Constraint::Length(composer_rows.min(area.height)),
    ])
    .areas(area)
}

/// The history's rows inside its border when the pane occupies `area`.
pub fn history_area(composer_rows: u16, pins: usize, area: Rect) -> Rect {
    let [history, ..] = split(composer_rows, pins, area);
    history.inner(Margin::new(1, 1))
}

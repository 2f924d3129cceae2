//! The conversation pane's geometry: the history (with its border), the
//! pinned results and the composer. Drawing uses it, and so does paging,
//! so PgUp/PgDn move by exactly the rows the history shows.

use ratatui::layout::{Constraint, Layout, Margin, Rect};

/// The composer grows with its text up to this many rows.
const MAX_COMPOSER_ROWS: u16 = 8;

/// At most this many pinned results are listed above the composer.
pub(crate) const MAX_PIN_ROWS: usize = 3;

/// Splits the pane into the history (with its border), the pinned results
/// and the composer, for a composer of `composer_lines` lines and `pins`
/// pinned results.
pub fn split(composer_lines: usize, pins: usize, area: Rect) -> [Rect; 3] {
    let composer_rows = (composer_lines as u16).clamp(1, MAX_COMPOSER_ROWS) + 2;
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
pub fn history_area(composer_lines: usize, pins: usize, area: Rect) -> Rect {
    let [history, ..] = split(composer_lines, pins, area);
    history.inner(Margin::new(1, 1))
}

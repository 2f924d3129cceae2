//! The diagnostics pane's rows: what is drawn and what a click hits.

use crate::app::AppState;

/// One line of the pane: a file's header (with the index of its first
/// diagnostic), or a diagnostic (its index in `state.diagnostics.rows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneLine {
    File(usize),
    Diagnostic(usize),
}

/// The pane's lines, grouped by file (rows arrive sorted by file). Shared
/// by drawing and by mouse clicks, so a click lands on what is drawn.
pub fn pane_lines(state: &AppState) -> Vec<PaneLine> {
    let mut lines = Vec::with_capacity(state.diagnostics.rows.len() + 8);
    let mut current_file: Option<&str> = None;
    for (i, d) in state.diagnostics.rows.iter().enumerate() {
        if current_file != Some(d.path.as_str()) {
            current_file = Some(d.path.as_str());
            lines.push(PaneLine::File(i));
        }
        lines.push(PaneLine::Diagnostic(i));
    }
    lines
}

/// The first line shown: the list scrolls just enough to show the selection.
pub fn first_visible(selected_line: usize, height: u16) -> usize {
    selected_line.saturating_sub(usize::from(height).saturating_sub(1))
}

/// The diagnostic drawn `row` rows below the top of the pane's inner area
/// of `height` rows; a file's header stands for its first diagnostic.
pub fn diagnostic_at(state: &AppState, height: u16, row: u16) -> Option<usize> {
    if row >= height {
        return None;
    }
    let lines = pane_lines(state);
    let selected_line = lines
        .iter()
        .position(|l| *l == PaneLine::Diagnostic(state.diagnostics.cursor.selected))
        .unwrap_or(0);
    match lines.get(first_visible(selected_line, height) + usize::from(row))? {
        PaneLine::File(i) | PaneLine::Diagnostic(i) => Some(*i),
    }
}

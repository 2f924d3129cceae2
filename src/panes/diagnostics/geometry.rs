//! The diagnostics pane's rows: what is drawn and what a click hits.

use super::DiagnosticsPane;

/// One line of the pane: a file's header (with the index of its first
/// diagnostic), a diagnostic (its index in `pane.rows`), or how many more
/// a file has than it lists (`store::FILE_CAP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PaneLine {
    File(usize),
    Diagnostic(usize),
    More(usize),
}

/// The pane's lines, grouped by file (rows arrive sorted by file). Shared
/// by drawing and by mouse clicks, so a click lands on what is drawn.
pub(crate) fn pane_lines(pane: &DiagnosticsPane) -> Vec<PaneLine> {
    let mut lines = Vec::with_capacity(pane.rows.len() + 8);
    for (i, d) in pane.rows.iter().enumerate() {
        if i == 0 || pane.rows[i - 1].path != d.path {
            lines.push(PaneLine::File(i));
        }
        lines.push(PaneLine::Diagnostic(i));
        let last_of_file = pane.rows.get(i + 1).is_none_or(|next| next.path != d.path);
        if last_of_file && pane.more_in(&d.path) > 0 {
            lines.push(PaneLine::More(i));
        }
    }
    lines
}

/// Columns before a diagnostic's message: ` ▲ 12:8 `.
pub(crate) fn prefix_width(line: usize, column: usize) -> usize {
    3 + format!("{line}:{column} ").chars().count()
}

/// The selected diagnostic's message (and source) wrapped to what is left
/// of `width` after its prefix: it is shown whole, the others on one line.
pub fn selected_rows(pane: &DiagnosticsPane, width: u16) -> Vec<String> {
    let Some(d) = pane.selected() else {
        return Vec::new();
    };
    let text = match &d.source {
        Some(source) => format!("{}  {source}", d.message),
        None => d.message.to_string(),
    };
    let room = usize::from(width).saturating_sub(prefix_width(d.line, d.column));
    crate::screen::wrap::wrap(&crate::sanitize::for_display(&text), room.max(8))
}

/// How many rows each of `lines` takes: one, and the selected diagnostic
/// as many as its wrapped message needs.
fn heights(pane: &DiagnosticsPane, lines: &[PaneLine], width: u16) -> Vec<usize> {
    let selected = PaneLine::Diagnostic(pane.cursor.selected);
    let wrapped = selected_rows(pane, width).len().max(1);
    lines
        .iter()
        .map(|l| if *l == selected { wrapped } else { 1 })
        .collect()
}

/// The first line shown: the list scrolls just enough to show all of the
/// selection (and the "N more" line that may follow it).
pub(crate) fn first_visible(
    pane: &DiagnosticsPane,
    lines: &[PaneLine],
    width: u16,
    height: u16,
) -> usize {
    let selected = lines
        .iter()
        .position(|l| *l == PaneLine::Diagnostic(pane.cursor.selected))
        .unwrap_or(0);
    let heights = heights(pane, lines, width);
    let mut first = selected;
    let mut used = heights.get(selected).copied().unwrap_or(1);
    // A file's "N more" line under its last problem is shown with it.
    if matches!(lines.get(selected + 1), Some(PaneLine::More(_))) {
        used += 1;
    }
    while first > 0 && used + heights[first - 1] <= usize::from(height) {
        first -= 1;
        used += heights[first];
    }
    first
}

/// The diagnostic drawn `row` rows below the top of the pane's inner area
/// of `width` x `height`; a file's header stands for its first diagnostic.
pub fn diagnostic_at(pane: &DiagnosticsPane, width: u16, height: u16, row: u16) -> Option<usize> {
    if row >= height {
        return None;
    }
    let lines = pane_lines(pane);
    let heights = heights(pane, &lines, width);
    let mut top = 0;
    for (line, rows) in lines
        .iter()
        .zip(&heights)
        .skip(first_visible(pane, &lines, width, height))
    {
        if usize::from(row) < top + rows {
            return match line {
                PaneLine::File(i) | PaneLine::Diagnostic(i) => Some(*i),
                PaneLine::More(_) => None,
            };
        }
        top += rows;
    }
    None
}

//! The file view's part of the status bar: the active file with its dirty
//! marker, `line:col` and language, the last file message (saved, reloaded,
//! an error) and the watcher's state (polling fallback).

use ratatui::text::Span;

use crate::theme::Theme;
use crate::workbench::Workbench;

/// The active file, its dirty marker, `line:col` and language (shown early
/// in the bar so narrow terminals keep it).
pub fn position(workbench: &Workbench, theme: &Theme) -> Vec<Span<'static>> {
    let bar = theme.roles.status_bar;
    let mut spans = Vec::new();
    if let Some(doc) = workbench.editors().active() {
        // What the user sees: 👨‍👩‍👧‍👦 is one column, a tab reaches its stop.
        let (line, col) = (doc.cursor().0, doc.cursor_column());
        spans.push(Span::styled(
            format!("│ {}", workbench.display_path(doc.path())),
            bar,
        ));
        if doc.is_dirty() {
            spans.push(Span::styled(" ●", theme.roles.dirty_marker.patch(bar)));
        }
        let language = doc.language().unwrap_or("Plain Text");
        spans.push(Span::styled(
            format!(" {}:{} {language} ", line + 1, col + 1),
            bar,
        ));
    }
    spans
}

/// The last file message and the watcher's state.
pub fn messages(workbench: &Workbench, theme: &Theme) -> Vec<Span<'static>> {
    let bar = theme.roles.status_bar;
    let mut spans = Vec::new();
    if let Some(status) = &workbench.editors().status {
        spans.push(Span::styled(format!("│ {status} "), bar));
    }
    if let Some(note) = &workbench.editors().watch_note {
        spans.push(Span::styled(
            format!("│ {note} "),
            theme.roles.warning.patch(bar),
        ));
    }
    spans
}

//! The file view's part of the status bar: the active file with its dirty
//! marker, `line:col` and language, the last file message (saved, reloaded,
//! an error) and the watcher's state (polling fallback).

use ratatui::text::Span;

use crate::app::AppState;
use crate::theme::Theme;

/// The active file, its dirty marker, `line:col` and language (shown early
/// in the bar so narrow terminals keep it).
pub fn position(state: &AppState, theme: &Theme) -> Vec<Span<'static>> {
    let bar = theme.roles.status_bar;
    let mut spans = Vec::new();
    if let Some(doc) = state.workbench.editors.active() {
        // What the user sees: 👨‍👩‍👧‍👦 is one column, a tab reaches its stop.
        let (line, col) = (doc.cursor().0, doc.cursor_column());
        spans.push(Span::styled(
            format!("│ {}", state.workbench.display_path(doc.path())),
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
pub fn messages(state: &AppState, theme: &Theme) -> Vec<Span<'static>> {
    let bar = theme.roles.status_bar;
    let mut spans = Vec::new();
    if let Some(status) = &state.workbench.editors.status {
        spans.push(Span::styled(format!("│ {status} "), bar));
    }
    if let Some(note) = &state.workbench.editors.watch_note {
        spans.push(Span::styled(
            format!("│ {note} "),
            theme.roles.warning.patch(bar),
        ));
    }
    spans
}

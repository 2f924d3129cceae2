//! The diagnostics pane: severity, location and message of every problem.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, StatefulWidget, Widget};

use super::pane;
use crate::app::AppState;
use crate::app::state::Severity;
use crate::sanitize;
use crate::theme::Theme;

pub fn severity_style(severity: Severity, theme: &Theme) -> Style {
    match severity {
        Severity::Error => theme.roles.error,
        Severity::Warning => theme.roles.warning,
        Severity::Info => theme.roles.info,
        Severity::Hint => theme.roles.hint,
    }
}

pub fn severity_icon(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✖",
        Severity::Warning => "▲",
        Severity::Info => "●",
        Severity::Hint => "○",
    }
}

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let mut title = vec![Span::raw("Diagnostics")];
    for severity in [
        Severity::Error,
        Severity::Warning,
        Severity::Info,
        Severity::Hint,
    ] {
        let n = state
            .diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count();
        if n > 0 {
            title.push(Span::styled(
                format!(" {} {n}", severity_icon(severity)),
                severity_style(severity, theme),
            ));
        }
    }
    let block = pane::block(Line::from(title), Some('4'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);

    if state.diagnostics.is_empty() {
        pane::empty_state("no diagnostics", theme, inner, buf);
        return;
    }
    // Grouped by file: a header line per file, its diagnostics under it.
    let mut items: Vec<ListItem> = Vec::new();
    let mut selected_item = 0;
    let mut current_file: Option<&str> = None;
    for (i, d) in state.diagnostics.iter().enumerate() {
        if current_file != Some(d.path.as_str()) {
            current_file = Some(d.path.as_str());
            let count = state
                .diagnostics
                .iter()
                .filter(|r| r.path == d.path)
                .count();
            items.push(ListItem::new(Line::from(vec![
                Span::styled(
                    sanitize::for_display(&d.path).into_owned(),
                    theme.roles.title,
                ),
                Span::styled(format!(" ({count})"), theme.roles.muted),
            ])));
        }
        if i == state.diagnostics_cursor.selected {
            selected_item = items.len();
        }
        let source = d
            .source
            .as_deref()
            .map(|s| format!("  {}", sanitize::for_display(s)))
            .unwrap_or_default();
        items.push(ListItem::new(Line::from(vec![
            Span::styled(
                format!(" {} ", severity_icon(d.severity)),
                severity_style(d.severity, theme),
            ),
            Span::styled(format!("{}:{} ", d.line, d.column), theme.roles.muted),
            Span::styled(
                sanitize::for_display(&d.message).into_owned(),
                theme.roles.text,
            ),
            Span::styled(source, theme.roles.muted),
        ])));
    }
    let list = List::new(items).highlight_style(if focused {
        theme.roles.selection
    } else {
        Style::default()
    });
    let mut list_state = ListState::default().with_selected(Some(selected_item));
    StatefulWidget::render(list, inner, buf, &mut list_state);
}

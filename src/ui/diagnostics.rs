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
use crate::screen::diagnostics::{
    PaneLine, first_visible, pane_lines, prefix_width, selected_rows,
};
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
            .rows
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

    if state.diagnostics.rows.is_empty() {
        pane::empty_state("no diagnostics", theme, inner, buf);
        return;
    }
    let lines = pane_lines(state);
    let selected = state.diagnostics.cursor.selected;
    let selected_line = lines
        .iter()
        .position(|l| *l == PaneLine::Diagnostic(selected))
        .unwrap_or(0);
    let mut items: Vec<ListItem> = Vec::with_capacity(lines.len());
    for line in &lines {
        let item = match *line {
            PaneLine::File(first) => {
                let path = &state.diagnostics.rows[first].path;
                let count = state.diagnostics.rows[first..]
                    .iter()
                    .take_while(|r| r.path == *path)
                    .count();
                Line::from(vec![
                    Span::styled(sanitize::for_display(path).into_owned(), theme.roles.title),
                    Span::styled(format!(" ({count})"), theme.roles.muted),
                ])
            }
            PaneLine::Diagnostic(i) if i == selected => {
                // The selection shows its whole message, wrapped under it.
                let d = &state.diagnostics.rows[i];
                let indent = " ".repeat(prefix_width(d.line, d.column));
                let rows = selected_rows(state, inner.width);
                let mut item = Vec::with_capacity(rows.len());
                for (n, row) in rows.into_iter().enumerate() {
                    let head = if n == 0 {
                        vec![
                            Span::styled(
                                format!(" {} ", severity_icon(d.severity)),
                                severity_style(d.severity, theme),
                            ),
                            Span::styled(format!("{}:{} ", d.line, d.column), theme.roles.muted),
                        ]
                    } else {
                        vec![Span::raw(indent.clone())]
                    };
                    item.push(Line::from(
                        [head, vec![Span::styled(row, theme.roles.text)]].concat(),
                    ));
                }
                items.push(ListItem::new(item));
                continue;
            }
            PaneLine::Diagnostic(i) => {
                let d = &state.diagnostics.rows[i];
                let source = d
                    .source
                    .as_deref()
                    .map(|s| format!("  {}", sanitize::for_display(s)))
                    .unwrap_or_default();
                Line::from(vec![
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
                ])
            }
        };
        items.push(ListItem::new(item));
    }
    let list = List::new(items).highlight_style(if focused {
        theme.roles.selection
    } else {
        Style::default()
    });
    let mut list_state = ListState::default()
        .with_offset(first_visible(state, &lines, inner.width, inner.height))
        .with_selected(Some(selected_line));
    StatefulWidget::render(list, inner, buf, &mut list_state);
}

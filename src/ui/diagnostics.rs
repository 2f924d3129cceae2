//! The diagnostics pane: severity, location and message of every problem.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState, Widget};

use super::pane;
use crate::app::AppState;
use crate::app::state::{DiagnosticRow, Severity};
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

/// Long paths are cut so the message keeps most of a narrow pane.
const MAX_LOCATION_WIDTH: usize = 28;

fn location(d: &DiagnosticRow) -> String {
    format!("{}:{}:{}", sanitize::for_display(&d.path), d.line, d.column)
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
    let rows = state.diagnostics.iter().map(|d| {
        let style = severity_style(d.severity, theme);
        let source = d
            .source
            .as_deref()
            .map(|s| format!(" [{}]", sanitize::for_display(s)))
            .unwrap_or_default();
        Row::new(vec![
            Line::styled(severity_icon(d.severity), style),
            Line::styled(location(d), theme.roles.muted),
            Line::from(vec![
                Span::styled(
                    sanitize::for_display(&d.message).into_owned(),
                    theme.roles.text,
                ),
                Span::styled(source, theme.roles.muted),
            ]),
        ])
    });
    let location_width = state
        .diagnostics
        .iter()
        .map(|d| location(d).chars().count())
        .max()
        .unwrap_or(0)
        .min(MAX_LOCATION_WIDTH) as u16;
    let table = Table::new(
        rows,
        [
            Constraint::Length(1),
            Constraint::Length(location_width),
            Constraint::Fill(1),
        ],
    )
    .row_highlight_style(if focused {
        theme.roles.selection
    } else {
        Style::default()
    });
    let mut table_state =
        TableState::default().with_selected(Some(state.diagnostics_cursor.selected));
    StatefulWidget::render(table, inner, buf, &mut table_state);
}

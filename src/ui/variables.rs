//! The variables pane: the kernel inspector (name, type, summary, preview).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState, Widget};

use super::pane;
use crate::app::AppState;
use crate::app::state::{KernelView, VariableRow};
use crate::app::variables::{self, VariableSort};
use crate::sanitize;
use crate::theme::Theme;

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let rows = variables::visible(state);
    let view = &state.variables_view;
    let mut title = vec![Span::raw("Variables")];
    if !state.variables.is_empty() {
        let count = if rows.len() == state.variables.len() {
            format!(" ({})", rows.len())
        } else {
            format!(" ({} of {})", rows.len(), state.variables.len())
        };
        title.push(Span::styled(count, theme.roles.muted));
        if view.sort == VariableSort::Changed {
            title.push(Span::styled(
                format!(" · {}", view.sort.label()),
                theme.roles.muted,
            ));
        }
        if matches!(state.kernel, KernelView::Dead { .. }) {
            title.push(Span::styled(" · stale: kernel dead", theme.roles.warning));
        }
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('3'), focused, theme);
    let mut inner = block.inner(area);
    block.render(area, buf);

    if view.filtering || !view.filter.is_empty() {
        let line_area = Rect::new(inner.x, inner.bottom().saturating_sub(1), inner.width, 1);
        inner.height = inner.height.saturating_sub(1);
        let mut spans = vec![
            Span::styled("/", theme.roles.status_key),
            Span::styled(
                sanitize::for_display(&view.filter).into_owned(),
                theme.roles.text,
            ),
        ];
        if view.filtering && focused {
            spans.push(Span::styled("▏", theme.roles.cursor));
            spans.push(Span::styled("  Enter keep · Esc clear", theme.roles.muted));
        } else {
            spans.push(Span::styled("  Esc clears", theme.roles.muted));
        }
        Line::from(spans).render(line_area, buf);
    }

    if rows.is_empty() {
        let text = match &state.kernel {
            _ if !state.variables.is_empty() => "no variable matches the filter",
            KernelView::NotStarted => "kernel not started",
            KernelView::Starting => "kernel starting…",
            KernelView::Dead { .. } => "kernel is not running",
            KernelView::Idle { .. } | KernelView::Busy { .. } => "no variables yet",
        };
        pane::empty_state(text, theme, inner, buf);
        return;
    }

    // Columns as wide as their content, within limits; the preview gets the rest.
    let widest = |f: fn(&VariableRow) -> &str, cap: usize| {
        rows.iter()
            .map(|v| f(v).chars().count())
            .max()
            .unwrap_or(0)
            .min(cap) as u16
    };
    let widths = [
        Constraint::Length(widest(|v| &v.name, 16) + 2),
        Constraint::Length(widest(|v| &v.type_name, 10).max(4)),
        Constraint::Length(widest(|v| &v.summary, 14).max(7)),
        Constraint::Fill(1),
    ];
    let table_rows = rows.iter().map(|v| {
        let changed = v.changed_by.is_some() && v.changed_by == state.last_exec_id;
        let marker = if changed {
            Span::styled("● ", theme.roles.dirty_marker)
        } else {
            Span::raw("  ")
        };
        Row::new(vec![
            Line::from(vec![
                marker,
                Span::styled(
                    sanitize::for_display(&v.name).into_owned(),
                    theme.roles.text,
                ),
            ]),
            Line::styled(
                sanitize::for_display(&v.type_name).into_owned(),
                theme.roles.info,
            ),
            Line::styled(
                sanitize::for_display(&v.summary).into_owned(),
                theme.roles.muted,
            ),
            Line::styled(
                sanitize::for_display(&v.preview).into_owned(),
                theme.roles.text,
            ),
        ])
    });
    let table = Table::new(table_rows, widths)
        .header(Row::new(["  name", "type", "summary", "preview"]).style(theme.roles.title))
        .row_highlight_style(if focused {
            theme.roles.selection
        } else {
            ratatui::style::Style::default()
        });
    let mut table_state =
        TableState::default().with_selected(Some(state.variables_cursor.selected));
    StatefulWidget::render(table, inner, buf, &mut table_state);
}

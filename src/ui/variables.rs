//! The variables pane: the kernel inspector (name, type, summary, preview).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState, Widget};

use super::pane;
use crate::app::AppState;
use crate::app::state::{KernelView, VariableRow};
use crate::sanitize;
use crate::theme::Theme;

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let mut title = vec![Span::raw("Variables")];
    if !state.variables.is_empty() {
        title.push(Span::styled(
            format!(" ({})", state.variables.len()),
            theme.roles.muted,
        ));
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('3'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);

    if state.variables.is_empty() {
        let text = match &state.kernel {
            KernelView::NotStarted => "kernel not started",
            KernelView::Starting => "kernel starting…",
            KernelView::Dead { .. } => "kernel is not running",
            KernelView::Idle { .. } | KernelView::Busy { .. } => "no variables yet",
        };
        pane::empty_state(text, theme, inner, buf);
        return;
    }

    let rows = state.variables.iter().map(|v| {
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
    // Columns as wide as their content, within limits; the preview gets the rest.
    let widest = |f: fn(&VariableRow) -> &str, cap: usize| {
        state
            .variables
            .iter()
            .map(|v| f(v).chars().count())
            .max()
            .unwrap_or(0)
            .min(cap) as u16
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(widest(|v| &v.name, 16) + 2),
            Constraint::Length(widest(|v| &v.type_name, 10).max(4)),
            Constraint::Length(widest(|v| &v.summary, 14).max(7)),
            Constraint::Fill(1),
        ],
    )
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

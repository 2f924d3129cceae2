//! The variables pane: the kernel inspector (name, type, summary, preview).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState, Widget};

use super::pane;
use crate::app::AppState;
use crate::app::state::{KernelView, VariableRow};
use crate::app::variables::VariableSort;
use crate::sanitize;
use crate::theme::Theme;
use unicode_width::UnicodeWidthStr;

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let rows = state.variables.view.visible(&state.variables.rows);
    let view = &state.variables.view;
    let mut title = vec![Span::raw("Variables")];
    if !state.variables.rows.is_empty() {
        let count = if rows.len() == state.variables.rows.len() {
            format!(" ({})", rows.len())
        } else {
            format!(" ({} of {})", rows.len(), state.variables.rows.len())
        };
        title.push(Span::styled(count, theme.roles.muted));
        if view.sort == VariableSort::Changed {
            title.push(Span::styled(" · by change", theme.roles.muted));
        }
        if matches!(state.kernel, KernelView::Dead { .. }) {
            title.push(Span::styled(" · stale", theme.roles.warning));
        }
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('3'), focused, theme);
    let mut inner = block.inner(area);
    block.render(area, buf);

    if view.filtering || !view.filter.is_empty() {
        let line_area = Rect::new(inner.x, inner.bottom().saturating_sub(1), inner.width, 1);
        inner.height = inner.height.saturating_sub(1);
        let mut spans = vec![Span::styled("/", theme.roles.status_key)];
        if view.filtering && focused {
            let hint = "  Enter keep · Esc clear";
            spans.extend(super::line_input::spans(
                &view.filter,
                theme.roles.text,
                theme.roles.cursor,
                usize::from(line_area.width).saturating_sub(1 + hint.len()),
            ));
            spans.push(Span::styled(hint, theme.roles.muted));
        } else {
            spans.push(Span::styled(
                sanitize::for_display(view.filter.text()).into_owned(),
                theme.roles.text,
            ));
            spans.push(Span::styled("  Esc clears", theme.roles.muted));
        }
        Line::from(spans).render(line_area, buf);
    }

    if rows.is_empty() {
        let text = match &state.kernel {
            _ if !state.variables.rows.is_empty() => "no variable matches the filter",
            KernelView::NotStarted => "kernel not started",
            KernelView::Starting => "kernel starting…",
            KernelView::Dead { .. } => "kernel is not running",
            KernelView::Idle { .. } | KernelView::Busy { .. } => "no variables yet",
        };
        pane::empty_state(text, theme, inner, buf);
        return;
    }

    // Columns as wide as their content, within limits; the preview gets the
    // rest. A narrow pane drops the type column (the summary usually says
    // it: `len 3`, `shape (3, 4) float64`) so the preview keeps some room.
    let widest = |f: fn(&VariableRow) -> &str, cap: usize| {
        rows.iter()
            .map(|v| f(v).width())
            .max()
            .unwrap_or(0)
            .min(cap) as u16
    };
    let narrow = inner.width < NARROW_PANE;
    let name_w = widest(|v| &v.name, 16).max(4) + 2;
    let type_w = if narrow {
        0
    } else {
        widest(|v| &v.type_name, 10).max(4)
    };
    let summary_w = widest(|v| &v.summary, if narrow { 14 } else { 20 }).max(7);
    let columns = if narrow { 3 } else { 4 };
    let preview_w = inner
        .width
        .saturating_sub(name_w + type_w + summary_w + columns - 1) as usize;
    let table_rows = rows.iter().map(|v| {
        let changed = v.changed_by.is_some() && v.changed_by == state.last_exec_id;
        let marker = if changed {
            Span::styled("● ", theme.roles.dirty_marker)
        } else {
            Span::raw("  ")
        };
        let mut cells = vec![Line::from(vec![
            marker,
            Span::styled(
                crate::screen::wrap::fit_text(&sanitize::for_display(&v.name), name_w as usize - 2),
                theme.roles.text,
            ),
        ])];
        if !narrow {
            cells.push(Line::styled(
                crate::screen::wrap::fit_text(
                    &sanitize::for_display(&v.type_name),
                    type_w as usize,
                ),
                theme.roles.info,
            ));
        }
        cells.push(Line::styled(
            crate::screen::wrap::fit_text(&sanitize::for_display(&v.summary), summary_w as usize),
            theme.roles.muted,
        ));
        cells.push(Line::styled(
            crate::screen::wrap::fit_text(&sanitize::for_display(&v.preview), preview_w),
            theme.roles.text,
        ));
        Row::new(cells)
    });
    let (widths, header): (Vec<Constraint>, Vec<&str>) = if narrow {
        (
            vec![
                Constraint::Length(name_w),
                Constraint::Length(summary_w),
                Constraint::Fill(1),
            ],
            vec!["  name", "summary", "preview"],
        )
    } else {
        (
            vec![
                Constraint::Length(name_w),
                Constraint::Length(type_w),
                Constraint::Length(summary_w),
                Constraint::Fill(1),
            ],
            vec!["  name", "type", "summary", "preview"],
        )
    };
    let table = Table::new(table_rows, widths)
        .header(Row::new(header).style(theme.roles.title))
        .row_highlight_style(if focused {
            theme.roles.selection
        } else {
            ratatui::style::Style::default()
        });
    let mut table_state =
        TableState::default().with_selected(Some(state.variables.cursor.selected));
    StatefulWidget::render(table, inner, buf, &mut table_state);
}

/// Below this inner width the type column is dropped.
const NARROW_PANE: u16 = 48;

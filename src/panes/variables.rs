//! The variables pane: the kernel inspector (name, type, summary, preview)
//! as a component. It owns the kernel's variables (from its listing), the
//! selected row, the sort order and the filter typed into the pane; the
//! selection stays on the same variable when the kernel refreshes the list
//! (every cell, and every ~500 ms while one runs).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState, Widget};
use unicode_width::UnicodeWidthStr;

use crate::component::{Component, Ctx, Effect, Input, Opening, Outcome, View};
use crate::keymap::{Action, PaneId, Scope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::line_input::LineInput;
use crate::ui::list_cursor::ListCursor;
use crate::ui::pane;
use crate::workbench::Workbench;
use crate::workbench::{KernelView, VariableRow};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VariableSort {
    /// Alphabetical, case-insensitive.
    #[default]
    Name,
    /// Most recently changed first (then by name).
    Changed,
}

impl VariableSort {
    pub fn label(self) -> &'static str {
        match self {
            VariableSort::Name => "by name",
            VariableSort::Changed => "by last change",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VariablesView {
    pub sort: VariableSort,
    /// Case-insensitive substring of name, type or summary.
    pub filter: LineInput,
    /// The filter line has the keyboard.
    pub filtering: bool,
}

impl VariablesView {
    /// `rows` as the pane shows them: filtered, then sorted.
    pub fn visible<'a>(&self, rows: &'a [VariableRow]) -> Vec<&'a VariableRow> {
        let needle = self.filter.text().to_lowercase();
        let mut rows: Vec<&VariableRow> = rows
            .iter()
            .filter(|v| {
                needle.is_empty()
                    || v.name.to_lowercase().contains(&needle)
                    || v.type_name.to_lowercase().contains(&needle)
                    || v.summary.to_lowercase().contains(&needle)
            })
            .collect();
        let by_name = |a: &&VariableRow, b: &&VariableRow| {
            a.name
                .to_lowercase()
                .cmp(&b.name.to_lowercase())
                .then_with(|| a.name.cmp(&b.name))
        };
        match self.sort {
            VariableSort::Name => rows.sort_by(by_name),
            VariableSort::Changed => {
                rows.sort_by(|a, b| b.changed_by.cmp(&a.changed_by).then_with(|| by_name(a, b)))
            }
        }
        rows
    }
}

/// The inspector's state in one place.
#[derive(Debug, Default)]
pub struct VariablesPane {
    pub rows: Vec<VariableRow>,
    pub cursor: ListCursor,
    pub view: VariablesView,
}

impl VariablesPane {
    /// The rows the pane shows, in order: filtered, then sorted.
    pub fn visible(&self) -> Vec<&VariableRow> {
        self.view.visible(&self.rows)
    }

    /// The variable under the cursor.
    pub fn selected(&self) -> Option<&VariableRow> {
        self.visible().get(self.cursor.selected).copied()
    }

    fn selected_name(&self) -> Option<String> {
        self.selected().map(|v| v.name.clone())
    }

    /// Puts the cursor back on `name` after the list changed (refresh,
    /// sort, filter); if it is gone, the cursor stays in range.
    fn reselect(&mut self, name: Option<String>) {
        let rows = self.visible();
        let len = rows.len();
        let found = name.and_then(|n| rows.iter().position(|v| v.name == n));
        self.cursor = match found {
            Some(index) => ListCursor { selected: index },
            None => ListCursor {
                selected: self.cursor.selected.min(len.saturating_sub(1)),
            },
        };
    }

    /// Puts the cursor on the variable `name`, as the pane lists it (sorted
    /// and filtered); nothing moves when the pane does not show it.
    pub fn select(&mut self, name: &str) {
        if let Some(i) = self.visible().iter().position(|v| v.name == name) {
            self.cursor.selected = i;
        }
    }

    /// A new listing from the kernel; the selection follows its variable.
    pub fn replace(&mut self, rows: Vec<VariableRow>) {
        let name = self.selected_name();
        self.rows = rows;
        self.reselect(name);
    }

    /// The pane's own actions; `false` when `action` is not one of them.
    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) -> bool {
        let name = self.selected_name();
        match action {
            Action::SortVariables => {
                self.view.sort = match self.view.sort {
                    VariableSort::Name => VariableSort::Changed,
                    VariableSort::Changed => VariableSort::Name,
                };
                self.reselect(name);
            }
            Action::FilterVariables => self.view.filtering = true,
            Action::EndFilter => self.view.filtering = false,
            Action::ClearFilter => {
                self.view.filtering = false;
                self.view.filter.clear();
                self.reselect(name);
            }
            Action::ShowVariable => {
                if let Some(name) = name {
                    ctx.push(Effect::Open(Opening::Variable(name)));
                }
            }
            _ => return false,
        }
        true
    }
}

impl Component for VariablesPane {
    fn label(&self) -> &'static str {
        PaneId::Variables.label()
    }

    fn scope(&self) -> Scope {
        if self.view.filtering {
            Scope::VariableFilter
        } else {
            Scope::Variables
        }
    }

    fn scopes(&self) -> Vec<Scope> {
        match self.scope() {
            // The filter line takes every key it binds; the list's keys
            // wait until it is done.
            Scope::VariableFilter => vec![Scope::VariableFilter],
            scope => vec![scope, Scope::List],
        }
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(action) if self.act(action, ctx) => Outcome::Changed,
            Input::Scroll(delta) => {
                let len = self.visible().len();
                self.cursor.move_by(delta, len);
                Outcome::Changed
            }
            Input::Key(key) if self.view.filtering => {
                let edit = self.view.filter.input(key);
                if edit.text_changed() {
                    // While typing, the best match is the first row.
                    self.cursor = ListCursor::default();
                }
                Outcome::from_changed(edit.any())
            }
            // Pasted text goes into the filter (first line only).
            Input::Paste(text) if self.view.filtering => {
                let pasted = self.view.filter.paste(text);
                if pasted {
                    self.cursor = ListCursor::default();
                }
                Outcome::from_changed(pasted)
            }
            _ => Outcome::Ignored,
        }
    }

    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        let focused = around.has_keyboard(PaneId::Variables);
        render(
            around.workbench,
            self,
            theme,
            focused,
            area,
            frame.buffer_mut(),
        );
    }
}

fn render(
    workbench: &Workbench,
    pane: &VariablesPane,
    theme: &Theme,
    focused: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let rows = pane.visible();
    let view = &pane.view;
    let mut title = vec![Span::raw("Variables")];
    if !pane.rows.is_empty() {
        let count = if rows.len() == pane.rows.len() {
            format!(" ({})", rows.len())
        } else {
            format!(" ({} of {})", rows.len(), pane.rows.len())
        };
        title.push(Span::styled(count, theme.roles.muted));
        if view.sort == VariableSort::Changed {
            title.push(Span::styled(" · by change", theme.roles.muted));
        }
        if matches!(workbench.kernel(), KernelView::Dead { .. }) {
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
            spans.extend(crate::ui::line_input::spans(
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
        let text = match &workbench.kernel() {
            _ if !pane.rows.is_empty() => "no variable matches the filter",
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
        let changed = v.changed_by.is_some() && v.changed_by == *workbench.last_exec_id();
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
    let mut table_state = TableState::default().with_selected(Some(pane.cursor.selected));
    StatefulWidget::render(table, inner, buf, &mut table_state);
}

/// Below this inner width the type column is dropped.
const NARROW_PANE: u16 = 48;

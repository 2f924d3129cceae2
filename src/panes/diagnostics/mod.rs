//! The Diagnostics pane as a component: severity, location and message of
//! every problem, grouped by file (the active file first), the selected one
//! whole. It owns the rows and the cursor; the rows are rebuilt from the
//! store by `app::diagnostics` when the store changes.

pub mod geometry;

use crossterm::event::{MouseButton, MouseEventKind};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, StatefulWidget, Widget};

use crate::component::{Component, Ctx, Effect, Input, Opening, Outcome, View};
use std::sync::Arc;

use crate::diagnostics::{Severity, SeverityCounts};
use crate::keymap::{Action, PaneId, Scope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::list_cursor::ListCursor;
use crate::ui::severity::{severity_icon, severity_style};
use crate::workbench::diagnostics::DiagnosticRow;
use geometry::{PaneLine, diagnostic_at, first_visible, pane_lines, prefix_width, selected_rows};

#[derive(Debug, Default)]
pub struct DiagnosticsPane {
    /// Grouped by file (active file first); at most `store::FILE_CAP` a file.
    pub rows: Vec<DiagnosticRow>,
    pub cursor: ListCursor,
    /// Every diagnostic by severity, those past a file's cap included:
    /// the title's counts.
    pub counts: SeverityCounts,
    /// Files with more diagnostics than they list (shown path, how many
    /// more): a "… N more" line ends their group.
    pub more: Vec<(Arc<str>, usize)>,
}

impl DiagnosticsPane {
    /// How many diagnostics of the file shown as `path` are not listed.
    pub fn more_in(&self, path: &str) -> usize {
        self.more
            .iter()
            .find(|(shown, _)| &**shown == path)
            .map_or(0, |(_, n)| *n)
    }

    pub fn selected(&self) -> Option<&DiagnosticRow> {
        self.rows.get(self.cursor.selected)
    }

    /// The selected problem's file, opened at it.
    fn open_selected(&self) -> Option<Effect> {
        let row = self.selected()?;
        Some(Effect::OpenFile {
            path: row.abs_path.to_path_buf(),
            at: Some((row.line, row.column)),
        })
    }
}

impl Component for DiagnosticsPane {
    fn label(&self) -> &'static str {
        PaneId::Diagnostics.label()
    }

    fn scope(&self) -> Scope {
        Scope::Diagnostics
    }

    fn scopes(&self) -> Vec<Scope> {
        vec![Scope::Diagnostics, Scope::List]
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::JumpToDiagnostic) => match self.open_selected() {
                Some(open) => ctx.push(open),
                None => return Outcome::Unchanged,
            },
            // K: everything the server said about it.
            Input::Action(Action::ShowProblem) if self.selected().is_some() => {
                ctx.push(Effect::Open(Opening::Problem(self.cursor.selected)));
            }
            Input::Scroll(delta) => self.cursor.move_by(delta, self.rows.len()),
            // Like the Problems panel of an IDE: a click opens the spot.
            Input::Mouse(mouse) if mouse.kind == MouseEventKind::Down(MouseButton::Left) => {
                let area = ctx.around.layout;
                let Some(pane) = area.diagnostics else {
                    return Outcome::Ignored;
                };
                let (width, height) = (pane.width.saturating_sub(2), pane.height.saturating_sub(2));
                let hit = mouse
                    .row
                    .checked_sub(pane.y + 1)
                    .and_then(|row| diagnostic_at(self, width, height, row));
                let Some(index) = hit else {
                    return Outcome::Ignored;
                };
                self.cursor.selected = index;
                if let Some(open) = self.open_selected() {
                    ctx.push(open);
                }
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Changed
    }

    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        let focused = around.has_keyboard(PaneId::Diagnostics);
        render(self, theme, focused, area, frame.buffer_mut());
    }
}

fn render(pane: &DiagnosticsPane, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let mut title = vec![Span::raw("Diagnostics")];
    let counts = pane.counts;
    for (severity, n) in [
        (Severity::Error, counts.errors),
        (Severity::Warning, counts.warnings),
        (Severity::Info, counts.infos),
        (Severity::Hint, counts.hints),
    ] {
        if n > 0 {
            title.push(Span::styled(
                format!(" {} {n}", severity_icon(severity)),
                severity_style(severity, theme),
            ));
        }
    }
    let block = crate::ui::pane::block(Line::from(title), Some('4'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);

    if pane.rows.is_empty() {
        crate::ui::pane::empty_state("no diagnostics", theme, inner, buf);
        return;
    }
    let lines = pane_lines(pane);
    let selected = pane.cursor.selected;
    let selected_line = lines
        .iter()
        .position(|l| *l == PaneLine::Diagnostic(selected))
        .unwrap_or(0);
    // Only what fits is drawn: a file may list a thousand problems.
    let first = first_visible(pane, &lines, inner.width, inner.height);
    let shown = lines
        .len()
        .saturating_sub(first)
        .min(usize::from(inner.height));
    let mut items: Vec<ListItem> = Vec::with_capacity(shown);
    for line in &lines[first..first + shown] {
        let item = match *line {
            // Past `store::FILE_CAP`: the most severe are listed.
            PaneLine::More(last) => {
                let n = pane.more_in(&pane.rows[last].path);
                Line::from(Span::styled(
                    format!("   … {n} more not listed"),
                    theme.roles.muted,
                ))
            }
            PaneLine::File(first) => {
                let path = &pane.rows[first].path;
                let count = pane.rows[first..]
                    .iter()
                    .take_while(|r| r.path == *path)
                    .count();
                Line::from(vec![
                    Span::styled(sanitize::one_line(path).into_owned(), theme.roles.title),
                    Span::styled(format!(" ({count})"), theme.roles.muted),
                ])
            }
            PaneLine::Diagnostic(i) if i == selected => {
                // The selection shows its whole message, wrapped under it.
                let d = &pane.rows[i];
                let indent = " ".repeat(prefix_width(d.line, d.column));
                let rows = selected_rows(pane, inner.width);
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
                let d = &pane.rows[i];
                let source = d
                    .source
                    .as_deref()
                    .map(|s| format!("  {}", sanitize::one_line(s)))
                    .unwrap_or_default();
                Line::from(vec![
                    Span::styled(
                        format!(" {} ", severity_icon(d.severity)),
                        severity_style(d.severity, theme),
                    ),
                    Span::styled(format!("{}:{} ", d.line, d.column), theme.roles.muted),
                    Span::styled(
                        sanitize::one_line(&d.message).into_owned(),
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
        .with_offset(0)
        .with_selected(selected_line.checked_sub(first));
    StatefulWidget::render(list, inner, buf, &mut list_state);
}

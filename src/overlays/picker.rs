//! Ctrl+P: the fuzzy file picker over the workspace index, matched
//! characters highlighted. Matching runs on the fuzzy worker; Enter acts on
//! the query as typed even when the worker has not answered it yet.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::{Component, Ctx, Effect, Input, Outcome, View};
use crate::component::Around;
use crate::keymap::{Action, Scope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::line_input::{Edit, LineInput};
use crate::ui::list_cursor::ListCursor;
use crate::ui::pane;
use crate::workbench::Workbench;
use crate::workspace::{FuzzyRequest, PathMatch, PickerResults};

/// Results the picker asks for per query.
pub(crate) const PICKER_LIMIT: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    pub query: LineInput,
    /// The newest query sent to the fuzzy worker and whether `matches`
    /// answer it.
    pub request: FuzzyRequest,
    pub matches: Vec<PathMatch>,
    /// How many paths matched in all (the list shows at most the limit).
    pub matched: usize,
    pub cursor: ListCursor,
}

impl Picker {
    /// An empty query, already sent (it lists the workspace's files).
    pub fn new(around: Around<'_>) -> Self {
        let mut picker = Self {
            query: LineInput::default(),
            request: FuzzyRequest::default(),
            matches: Vec::new(),
            matched: 0,
            cursor: ListCursor::default(),
        };
        picker.rerun(around, false);
        picker
    }

    /// Sends the query to the worker (`again`: even if unchanged, because
    /// the index grew); without one (tests) it is matched here.
    fn rerun(&mut self, around: Around<'_>, again: bool) {
        if let Some(results) = self.request.send(
            self.query.text(),
            again,
            around.workbench.services().picker.as_ref(),
            around.workbench.file_index(),
            PICKER_LIMIT,
        ) {
            self.show(results);
        }
    }

    fn show(&mut self, results: PickerResults) {
        self.matches = results.matches;
        self.matched = results.matched;
        self.cursor = ListCursor::default();
    }

    /// Enter: open the picked file. If the worker has not answered the
    /// query as typed (keys and Enter came in one burst), it is matched
    /// here first.
    fn accept(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        if let Some(results) = self
            .request
            .settle(ctx.around.workbench.file_index(), PICKER_LIMIT)
        {
            self.show(results);
        }
        let Some(found) = self.matches.get(self.cursor.selected) else {
            return Outcome::Unchanged;
        };
        let path = ctx.around.workbench.workspace_root().join(&found.path);
        ctx.close_with(Effect::OpenFile { path, at: None });
        Outcome::Changed
    }
}

impl Component for Picker {
    fn label(&self) -> &'static str {
        "Open file"
    }

    fn scope(&self) -> Scope {
        Scope::Picker
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::Accept) => self.accept(ctx),
            Input::Action(Action::CloseOverlay) => {
                ctx.push(Effect::Close);
                Outcome::Changed
            }
            Input::Scroll(delta) => {
                self.cursor.move_by(delta, self.matches.len());
                Outcome::Changed
            }
            Input::Key(key) => match self.query.input(key) {
                Edit::None => Outcome::Unchanged,
                Edit::Cursor => Outcome::Changed,
                Edit::Text => {
                    self.rerun(ctx.around, false);
                    Outcome::Changed
                }
            },
            Input::Paste(text) => {
                let pasted = self.query.paste(text);
                if pasted {
                    self.rerun(ctx.around, false);
                }
                Outcome::from_changed(pasted)
            }
            Input::FileMatches(results) => {
                if !self.request.accept(results) {
                    return Outcome::Unchanged;
                }
                self.show(results.clone());
                Outcome::Changed
            }
            Input::IndexGrew => {
                self.rerun(ctx.around, true);
                Outcome::Changed
            }
            _ => Outcome::Ignored,
        }
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        render(around.workbench, self, theme, screen, frame.buffer_mut());
    }
}

fn render(workbench: &Workbench, picker: &Picker, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let area = pane::centered(screen, 70, 70);
    let total = workbench.file_index().len();
    let indexing = if workbench.file_index().is_complete() {
        ""
    } else {
        ", indexing…"
    };
    let title = format!("Open file ({} of {total}{indexing})", picker.matched);
    let block =
        pane::block(Line::from(title), None, true, theme).border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let mut query = vec![Span::styled("› ", theme.roles.status_key)];
    query.extend(crate::ui::line_input::spans(
        &picker.query,
        theme.roles.text,
        theme.roles.cursor,
        usize::from(inner.width.saturating_sub(2)),
    ));
    Line::from(query).render(Rect::new(inner.x, inner.y, inner.width, 1), buf);
    let rows = inner.height.saturating_sub(1) as usize;
    let first = picker
        .cursor
        .selected
        .saturating_sub(rows.saturating_sub(1));
    for (row, (i, found)) in picker
        .matches
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let selected = i == picker.cursor.selected;
        let base = if selected {
            theme.roles.selection
        } else {
            theme.roles.text
        };
        let hit = theme.roles.match_highlight.patch(base);
        let spans: Vec<Span> = found
            .path
            .chars()
            .enumerate()
            .map(|(ci, c)| {
                let style = if found.indices.contains(&(ci as u32)) {
                    hit
                } else {
                    base
                };
                Span::styled(sanitize::for_display(&c.to_string()).into_owned(), style)
            })
            .collect();
        let y = inner.y + 1 + row as u16;
        let line_area = Rect::new(inner.x, y, inner.width, 1);
        buf.set_style(line_area, base);
        let mut all = vec![Span::styled(if selected { "▌" } else { " " }, base)];
        all.extend(spans);
        Line::from(all).render(line_area, buf);
    }
    if picker.matches.is_empty() && rows > 0 {
        let text = if total == 0 {
            "No files indexed yet."
        } else {
            "No file matches."
        };
        Line::styled(text, theme.roles.muted)
            .render(Rect::new(inner.x, inner.y + 1, inner.width, 1), buf);
    }
}

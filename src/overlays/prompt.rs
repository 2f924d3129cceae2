//! The file view's one-line prompts: Ctrl+G go to line (`12` or `12:5`)
//! and Ctrl+F find in file, a bar at the top right of the file view.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use super::{Component, Ctx, Effect, Input, Outcome, View};
use crate::component::Around;
pub use crate::component::PromptKind;
use crate::editor::Document;
use crate::keymap::{Action, Scope};
use crate::theme::Theme;
use crate::ui::line_input::{Edit, LineInput};
use crate::ui::pane;
use crate::workbench::find_count::Counting;

#[derive(Debug, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub input: LineInput,
    /// "3 of 10", "no matches", "line 734201, counting…", "not a line
    /// number".
    pub status: Option<String>,
    /// The count of a big text's matches the status waits for.
    counting: Option<Counting>,
}

impl Prompt {
    /// A prompt for the active file; `None` when no file is open. The find
    /// bar starts with the selection (or the last query).
    pub fn new(kind: PromptKind, doc: Option<&Document>) -> Option<Self> {
        let doc = doc?;
        let text = match kind {
            PromptKind::Find => doc
                .selected_text()
                .filter(|t| !t.contains('\n'))
                .or_else(|| doc.search_query().map(str::to_owned))
                .unwrap_or_default(),
            PromptKind::GoToLine => String::new(),
        };
        Some(Self {
            kind,
            input: LineInput::new(&text),
            status: None,
            counting: None,
        })
    }

    /// Enter (or Shift+Enter, `forward` false, in the find bar).
    fn accept(&mut self, forward: bool, ctx: &mut Ctx<'_>) -> Outcome {
        match self.kind {
            PromptKind::GoToLine if forward => match parse_position(self.input.text()) {
                Some((line, column)) => ctx.close_with(Effect::GoTo { line, column }),
                None => self.status = Some("type a line number (or line:column)".into()),
            },
            PromptKind::GoToLine => return Outcome::Unchanged,
            PromptKind::Find if self.input.is_empty() => return Outcome::Unchanged,
            PromptKind::Find => ctx.push(Effect::Find {
                query: self.input.text().to_owned(),
                forward,
            }),
        }
        Outcome::Changed
    }
}

impl Component for Prompt {
    fn label(&self) -> &'static str {
        self.kind.label()
    }

    fn scope(&self) -> Scope {
        Scope::Prompt
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        let edit = match input {
            Input::Action(Action::Accept) => return self.accept(true, ctx),
            Input::Action(Action::FindPrev) => return self.accept(false, ctx),
            // Closing the find bar clears its match highlights.
            Input::Action(Action::CloseOverlay) => {
                ctx.close_with(Effect::ClearFind);
                return Outcome::Changed;
            }
            Input::Report(status) => {
                self.status = Some(status);
                self.counting = None;
                return Outcome::Changed;
            }
            Input::Counting { status, counting } => {
                self.status = Some(status);
                self.counting = Some(counting);
                return Outcome::Changed;
            }
            Input::Counted(counted) => {
                if !self.counting.as_ref().is_some_and(|c| c.answers(&counted)) {
                    return Outcome::Unchanged;
                }
                self.status = Some(counted.status());
                self.counting = None;
                return Outcome::Changed;
            }
            Input::Key(key) => self.input.input(key),
            Input::Paste(text) if self.input.paste(text) => Edit::Text,
            Input::Paste(_) => Edit::None,
            _ => return Outcome::Ignored,
        };
        match edit {
            Edit::None => Outcome::Unchanged,
            Edit::Cursor => Outcome::Changed,
            Edit::Text => {
                self.status = None;
                self.counting = None;
                Outcome::Changed
            }
        }
    }

    fn render(&self, view: &View<'_>, _screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        render(around, self, theme, frame.buffer_mut());
    }

    fn covers(&self, around: &Around<'_>) -> Option<Rect> {
        bar_area(around)
    }
}

/// Where the bar goes: three rows at the top right of the file view, over
/// its tab bar and first two text rows (or of the screen with no file
/// view); None when there is no room. With the cursor on one of the
/// file's first two lines — which no scrolling brings out from under it
/// (a find's match on line 1, which a tester could not see) — it goes to
/// the bottom of the file view instead.
fn bar_area(around: &Around<'_>) -> Option<Rect> {
    const TEXT_ROWS_HIDDEN: usize = 2;
    let pane = around.layout.file_view.unwrap_or(around.screen);
    let width = pane.width.saturating_sub(2).min(60);
    if width < 10 || pane.height < 3 {
        return None;
    }
    let near_the_start = around.layout.file_view.is_some()
        && around
            .workbench
            .editors()
            .active()
            .is_some_and(|doc| doc.cursor().0 < TEXT_ROWS_HIDDEN);
    let y = if near_the_start && pane.height >= 6 {
        pane.bottom().saturating_sub(4)
    } else {
        pane.y + 1
    };
    Some(Rect::new(
        pane.right().saturating_sub(width + 1),
        y,
        width,
        3,
    ))
}

/// "12" or "12:5", 1-based.
fn parse_position(input: &str) -> Option<(usize, usize)> {
    let mut parts = input.trim().splitn(2, ':');
    let line = parts.next()?.trim().parse::<usize>().ok()?;
    let column = match parts.next() {
        Some(c) => c.trim().parse::<usize>().ok()?,
        None => 1,
    };
    Some((line.max(1), column.max(1)))
}

/// The bar with its one-line input, at `bar_area`.
fn render(around: Around<'_>, prompt: &Prompt, theme: &Theme, buf: &mut Buffer) {
    let Some(area) = bar_area(&around) else {
        return;
    };
    let block = pane::block(Line::from(prompt.kind.label()), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    let status_width = prompt
        .status
        .as_ref()
        .map_or(0, |s| unicode_width::UnicodeWidthStr::width(s.as_str()) + 2);
    let mut spans = crate::ui::line_input::spans(
        &prompt.input,
        theme.roles.text,
        theme.roles.cursor,
        usize::from(inner.width).saturating_sub(status_width).max(8),
    );
    if let Some(status) = &prompt.status {
        spans.push(Span::styled(format!("  {status}"), theme.roles.muted));
    }
    Line::from(spans).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::parse_position;

    #[test]
    fn positions_parse_like_people_type_them() {
        assert_eq!(parse_position("12"), Some((12, 1)));
        assert_eq!(parse_position(" 3:7 "), Some((3, 7)));
        assert_eq!(parse_position("0"), Some((1, 1)));
        assert_eq!(parse_position("x"), None);
        assert_eq!(parse_position("4:y"), None);
    }
}

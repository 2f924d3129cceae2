//! F2: the next request, exactly — every message the next model call would
//! send (with the composer's text as the new message and the latest
//! snapshot) and what each section costs in tokens, so "what did the model
//! see?" always has an answer.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{Component, Ctx, Effect, Input, Outcome, View, clamp_add};
use crate::component::Around;
use crate::keymap::{Action, Scope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::pane;
use crate::workbench::Workbench;

/// F2's state: where it is scrolled, which form it shows, and what it shows
/// (computed before each frame while open, never when drawn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPreview {
    pub scroll: usize,
    /// The request's `messages` as the JSON the HTTP body carries, instead
    /// of one readable block per message (Tab switches).
    pub json: bool,
    /// `Err` says why there is nothing to show (a turn holds the
    /// conversation).
    pub view: Result<RequestView, &'static str>,
    /// The composer's text when F2 opened: the new message of the request
    /// (it cannot change while F2 has the keyboard).
    draft: String,
}

impl RequestPreview {
    pub fn new(draft: String) -> Self {
        Self {
            scroll: 0,
            json: false,
            view: Err("preparing the preview"),
            draft,
        }
    }
}

impl Default for RequestPreview {
    fn default() -> Self {
        Self::new(String::new())
    }
}

/// The next request as F2 draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    /// `ctx 41% · 52k/128k`.
    pub gauge: String,
    /// At 80 % of the window or more.
    pub nearly_full: bool,
    /// The prompt budget and where the window size came from.
    pub budget: String,
    /// A compaction runs before this request goes out.
    pub compacts_first: bool,
    /// Each section of the prompt and its tokens.
    pub sections: Vec<(String, usize)>,
    /// The files the message mentions (`@path`), with their tokens, and
    /// why any mentioned file does not go.
    pub mentioned: crate::workbench::context_window::Mentioned,
    /// The messages, readable or as JSON.
    pub text: String,
    /// Lines of `text` (the scroll limit).
    pub lines: usize,
}

impl RequestView {
    /// The request Enter would send now with `draft` in the composer
    /// (`json`: its messages as the body's JSON). `Err` says why there is
    /// none to show.
    pub fn of(workbench: &Workbench, draft: &str, json: bool) -> Result<Self, &'static str> {
        let (prompt, window, mentioned) =
            crate::workbench::context_window::preview(workbench, draft)?;
        let text = if json {
            // What this provider sends: Anthropic's body is shaped otherwise.
            match workbench.agent().provider() {
                Some(provider) => {
                    let messages = provider.messages_json(&prompt.request);
                    serde_json::to_string_pretty(&messages).unwrap_or_default()
                }
                None => prompt.messages_text(),
            }
        } else {
            prompt.readable()
        };
        Ok(RequestView {
            gauge: prompt.gauge(),
            nearly_full: prompt.tokens * 100 >= prompt.window * 80,
            budget: format!("prompt budget {} ({})", prompt.budget, window.source),
            compacts_first: prompt.needs_compaction(&window),
            sections: prompt
                .sections
                .iter()
                .map(|s| (s.label.clone(), s.tokens))
                .collect(),
            mentioned,
            lines: text.lines().count(),
            text,
        })
    }
}

impl Component for RequestPreview {
    fn label(&self) -> &'static str {
        "Next request"
    }

    fn scope(&self) -> Scope {
        Scope::RequestPreview
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::CloseOverlay) => {
                ctx.push(Effect::Close);
                Outcome::Changed
            }
            Input::Action(Action::ToggleRequestJson) => {
                self.json = !self.json;
                self.scroll = 0;
                Outcome::Changed
            }
            Input::Scroll(delta) => {
                let lines = self.view.as_ref().map_or(0, |v| v.lines);
                self.scroll = clamp_add(self.scroll, delta, lines);
                Outcome::Changed
            }
            _ => Outcome::Ignored,
        }
    }

    /// The conversation, the composer, the pins and the snapshot may all
    /// have changed since the last frame: the view is computed again here,
    /// so drawing only paints it.
    fn before_frame(&mut self, around: Around<'_>) {
        self.view = RequestView::of(around.workbench, &self.draft, self.json);
        let lines = self.view.as_ref().map_or(0, |v| v.lines);
        self.scroll = self.scroll.min(lines);
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        render(
            view.around.workbench,
            self,
            view.theme,
            screen,
            frame.buffer_mut(),
        );
    }
}

/// The first line of the last page: lines from the end whose wrapped
/// rows (at least one each; long lines take their width's share) fill
/// `height` rows of `width` columns.
fn last_page(text: &str, lines: usize, width: u16, height: u16) -> usize {
    let width = usize::from(width.max(1));
    let mut rows = 0;
    let mut first = lines;
    for line in text.lines().rev() {
        let wrapped = unicode_width::UnicodeWidthStr::width(line)
            .div_ceil(width)
            .max(1);
        if rows + wrapped > usize::from(height) {
            break;
        }
        rows += wrapped;
        first -= 1;
    }
    first
}

fn truncate(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// "ActiveEditor" → "active editor".
fn section_label(section: crate::snapshot::Section) -> String {
    let mut label = String::new();
    for (i, c) in format!("{section:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            label.push(' ');
        }
        label.push(c.to_ascii_lowercase());
    }
    label
}

fn render(
    workbench: &Workbench,
    preview: &RequestPreview,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let area = pane::centered(screen, 90, 90);
    let form = if preview.json {
        " · as JSON (Tab: readable)"
    } else {
        " · Tab: as JSON"
    };
    let title = Line::from(vec![
        Span::raw("Next request"),
        Span::styled(
            format!(" — exactly what the next model call sends{form}"),
            theme.roles.muted,
        ),
    ]);
    let block = pane::block(title, None, true, theme).border_style(theme.roles.overlay_border);
    let inner = block.inner(area);
    Clear.render(area, buf);
    block.render(area, buf);

    let view = match &preview.view {
        Ok(view) => view,
        Err(why) => {
            pane::empty_state(why, theme, inner, buf);
            return;
        }
    };
    let [breakdown_area, body_area] =
        Layout::horizontal([Constraint::Length(35), Constraint::Min(0)]).areas(inner);

    let mut breakdown = vec![
        Line::styled(
            view.gauge.clone(),
            if view.nearly_full {
                theme.roles.warning
            } else {
                theme.roles.title
            },
        ),
        Line::styled(view.budget.clone(), theme.roles.muted),
    ];
    if view.compacts_first {
        breakdown.push(Line::styled(
            "compacts first, then sends",
            theme.roles.warning,
        ));
    }
    breakdown.push(Line::default());
    for (label, tokens) in &view.sections {
        breakdown.push(Line::from(vec![
            Span::styled(format!("{:<26}", truncate(label, 26)), theme.roles.text),
            Span::styled(format!("{tokens:>7}"), theme.roles.muted),
        ]));
    }
    if let Some(snapshot) = &workbench.snapshot() {
        breakdown.push(Line::default());
        breakdown.push(Line::styled(
            format!("snapshot {}/{} chars", snapshot.used, snapshot.max),
            theme.roles.muted,
        ));
        if snapshot.truncated {
            breakdown.push(Line::styled("snapshot truncated", theme.roles.warning));
        }
        for cost in &snapshot.rendered.sections {
            breakdown.push(Line::from(vec![
                Span::styled(
                    format!("  {:<24}", section_label(cost.section)),
                    theme.roles.text,
                ),
                Span::styled(format!("{:>7}", cost.chars), theme.roles.muted),
            ]));
        }
    }
    if !workbench.pins().is_empty() {
        breakdown.push(Line::styled(
            format!("{} pinned (in the message)", workbench.pins().len()),
            theme.roles.muted,
        ));
    }
    if let Ok(view) = &preview.view {
        let mentioned = &view.mentioned;
        if !mentioned.files.is_empty() || !mentioned.notes.is_empty() {
            breakdown.push(Line::default());
            breakdown.push(Line::styled(
                "mentioned (in the message)",
                theme.roles.muted,
            ));
        }
        for (label, tokens) in &mentioned.files {
            breakdown.push(Line::from(vec![
                Span::styled(format!("  {:<24}", truncate(label, 24)), theme.roles.text),
                Span::styled(format!("{tokens:>7}"), theme.roles.muted),
            ]));
        }
        for note in &mentioned.notes {
            breakdown.push(Line::styled(format!("  {note}"), theme.roles.warning));
        }
        if let Some(tokens) = mentioned.hook_context {
            breakdown.push(Line::default());
            breakdown.push(Line::from(vec![
                Span::styled(format!("{:<26}", "hooks (SessionStart)"), theme.roles.text),
                Span::styled(format!("{tokens:>7}"), theme.roles.muted),
            ]));
        }
    }
    // A note longer than the column wraps instead of being cut.
    Paragraph::new(breakdown)
        .wrap(Wrap { trim: false })
        .render(breakdown_area, buf);

    // Only the lines on screen are wrapped and drawn: a full 128k-token
    // request is ~500 KB of text. Scrolled to the end (End), the last page
    // is shown, not an empty one.
    let first = preview.scroll.min(last_page(
        &view.text,
        view.lines,
        body_area.width,
        body_area.height,
    ));
    let lines: Vec<Line> = view
        .text
        .lines()
        .skip(first)
        .take(body_area.height as usize)
        .map(|line| {
            let shown = sanitize::for_display(line).into_owned();
            if line.starts_with("──── [") {
                Line::styled(shown, theme.roles.title)
            } else {
                Line::styled(shown, theme.roles.text)
            }
        })
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(body_area, buf);
}

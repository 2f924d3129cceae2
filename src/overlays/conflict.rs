//! The changed-on-disk choices for the active tab, and the diff of disk
//! and buffer they can open.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{Component, Ctx, Effect, Input, Opening, Outcome, View, clamp_add};
use crate::component::Around;
use crate::keymap::{Action, Scope};
use crate::theme::Theme;
use crate::ui::pane;
use crate::workbench::Workbench;

/// Keep mine / load theirs / diff, for the active tab. What each choice
/// does is the file view's (`panes::file_view`, reached through
/// `Effect::Run`); this offers them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conflict;

impl Component for Conflict {
    fn label(&self) -> &'static str {
        "Changed on disk"
    }

    fn scope(&self) -> Scope {
        Scope::Conflict
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::CloseOverlay) => ctx.push(Effect::Close),
            Input::Action(action @ (Action::KeepMine | Action::LoadTheirs)) => {
                ctx.close_with(Effect::Run(action));
            }
            Input::Action(Action::ShowDiff) => ctx.push(Effect::Open(Opening::Diff)),
            _ => return Outcome::Ignored,
        }
        Outcome::Changed
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        conflict(around.workbench, theme, screen, frame.buffer_mut());
    }
}

/// The unified diff of disk and buffer (scrolls like help). Closing it goes
/// back to the conflict choices: the next key is meant for them, not the
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    pub text: String,
    pub scroll: usize,
}

impl Diff {
    /// The active tab's diff, its header naming the file as the rest of
    /// the UI does; `None` when disk and buffer agree.
    pub(crate) fn of_active(around: Around<'_>) -> Option<Self> {
        let doc = around.workbench.editors().active()?;
        let absolute = doc.path().display().to_string();
        let shown = around.workbench.display_path(doc.path());
        doc.diff().map(|text| Diff {
            text: crate::sanitize::for_display(&text.replace(&absolute, &shown)).into_owned(),
            scroll: 0,
        })
    }
}

impl Component for Diff {
    fn label(&self) -> &'static str {
        "Diff"
    }

    fn scope(&self) -> Scope {
        Scope::Help
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::CloseOverlay) => {
                ctx.push(Effect::Open(Opening::Conflict));
            }
            Input::Scroll(delta) => {
                let rows = self.text.lines().count();
                self.scroll = clamp_add(self.scroll, delta, rows);
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Changed
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let theme = view.theme;
        diff(&self.text, self.scroll, theme, screen, frame.buffer_mut());
    }
}

fn conflict(workbench: &Workbench, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let name = workbench
        .editors()
        .active()
        .map(|d| workbench.display_path(d.path()))
        .unwrap_or_default();
    let area = pane::centered(screen, 60, 40);
    let block = pane::block(Line::from("Changed on disk"), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let key = |k: &'static str| Span::styled(k, theme.roles.status_key);
    let text = |t: &'static str| Span::styled(t, theme.roles.text);
    Paragraph::new(vec![
        Line::styled(
            format!("{name} changed on disk while you had unsaved edits. Your text is kept."),
            theme.roles.text,
        ),
        Line::default(),
        Line::from(vec![
            key("k"),
            text(" keep mine (the next save overwrites the disk)"),
        ]),
        Line::from(vec![
            key("t"),
            text(" load theirs (asks first: your edits are lost)"),
        ]),
        Line::from(vec![key("d"), text(" show the diff of disk and buffer")]),
        Line::from(vec![
            key("Esc"),
            text(" decide later (Ctrl+R in the file view)"),
        ]),
    ])
    .wrap(Wrap { trim: true })
    .block(block)
    .render(area, buf);
}

fn diff(text: &str, scroll: usize, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let area = pane::centered(screen, 90, 85);
    let block = pane::block(
        Line::from("Diff: disk (-) → your buffer (+)   Esc close"),
        None,
        true,
        theme,
    )
    .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    for (row, line) in text
        .lines()
        .skip(scroll)
        .take(inner.height as usize)
        .enumerate()
    {
        let style: Style = if line.starts_with("+++") || line.starts_with("---") {
            theme.roles.title
        } else if line.starts_with('+') {
            theme.roles.info
        } else if line.starts_with('-') {
            theme.roles.error
        } else if line.starts_with("@@") {
            theme.roles.muted
        } else {
            theme.roles.text
        };
        Line::styled(line.to_string(), style).render(
            Rect::new(inner.x, inner.y + row as u16, inner.width, 1),
            buf,
        );
    }
}

//! K on a problem: everything the server said about it — the whole
//! message (a list row shows it on one line), where, who said it with its
//! code, and the other places it points to — wrapped, never cut.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Component, Ctx, Input, Outcome, View};
use crate::component::Around;
use crate::keymap::Scope;
use crate::sanitize;
use crate::screen::wrap;
use crate::theme::Theme;
use crate::ui::pane;
use crate::ui::severity::{severity_icon, severity_style};

/// The problem at `index` of the diagnostics rows when it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemDetail {
    pub index: usize,
    pub scroll: usize,
}

impl Component for ProblemDetail {
    fn label(&self) -> &'static str {
        "Problem"
    }

    fn scope(&self) -> Scope {
        Scope::Help
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        super::scrolled_text(&mut self.scroll, input, ctx)
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        render(
            around,
            self.index,
            self.scroll,
            theme,
            screen,
            frame.buffer_mut(),
        );
    }
}

fn render(
    around: Around<'_>,
    index: usize,
    scroll: usize,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let inner = pane::detail_overlay(
        "Problem".into(),
        "Esc closes, ↑/↓ scroll",
        theme,
        screen,
        buf,
    );
    let Some(d) = around.diagnostics.get(index) else {
        pane::empty_state(
            "this problem is gone (fixed or re-checked)",
            theme,
            inner,
            buf,
        );
        return;
    };
    let width = usize::from(inner.width).max(8);
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                format!("{} {:?}", severity_icon(d.severity), d.severity),
                severity_style(d.severity, theme),
            ),
            Span::styled(
                d.source
                    .as_deref()
                    .map(|s| format!(" · {}", sanitize::for_display(s)))
                    .unwrap_or_default(),
                theme.roles.muted,
            ),
        ]),
        Line::styled(
            format!("{}:{}:{}", sanitize::for_display(&d.path), d.line, d.column),
            theme.roles.title,
        ),
        Line::default(),
    ];
    // The message keeps the server's line breaks (each part on its own
    // lines), cleaned of control sequences line by line.
    for part in d.detail.lines() {
        for row in wrap::wrap(&sanitize::for_display(part), width) {
            lines.push(Line::styled(row, theme.roles.text));
        }
    }
    if !d.related.is_empty() {
        lines.push(Line::default());
        lines.push(Line::styled("Related", theme.roles.title));
        for related in &d.related {
            for row in wrap::wrap(&sanitize::for_display(related), width.saturating_sub(2)) {
                lines.push(Line::styled(format!("  {row}"), theme.roles.text));
            }
        }
    }
    Paragraph::new(lines)
        .scroll((scroll.min(u16::MAX as usize) as u16, 0))
        .render(inner, buf);
}

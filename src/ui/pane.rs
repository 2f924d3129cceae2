//! The frame every pane shares: a border whose style says whether it has the
//! keyboard, and a title with the Alt+N shortcut that focuses it.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Widget, Wrap};

use crate::theme::Theme;

/// A pane border. `shortcut` is the digit after Alt that focuses it.
pub fn block<'a>(
    title: Line<'a>,
    shortcut: Option<char>,
    focused: bool,
    theme: &Theme,
) -> Block<'a> {
    let (border, title_style, border_type) = if focused {
        (
            theme.roles.focused_border,
            theme.roles.focused_title,
            BorderType::Thick,
        )
    } else {
        (
            theme.roles.pane_border,
            theme.roles.title,
            BorderType::Rounded,
        )
    };
    let mut spans = Vec::with_capacity(title.spans.len() + 2);
    spans.push(Span::raw(" "));
    if let Some(digit) = shortcut {
        spans.push(Span::styled(format!("{digit} "), theme.roles.muted));
    }
    spans.extend(title.spans.into_iter().map(|s| {
        if s.style == Style::default() {
            s.style(title_style)
        } else {
            s
        }
    }));
    spans.push(Span::raw(" "));
    Block::bordered()
        .border_type(border_type)
        .border_style(border)
        .title(Line::from(spans))
}

/// An honest empty state: a muted sentence in the middle of the pane.
pub(crate) fn empty_state(text: &str, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let lines = crate::screen::wrap::wrap(text, area.width as usize)
        .len()
        .max(1) as u16;
    let [_, middle, _] = Layout::vertical([
        Constraint::Fill(1),
        Constraint::Length(lines.min(area.height)),
        Constraint::Fill(1),
    ])
    .areas(area);
    Paragraph::new(text)
        .style(theme.roles.muted)
        .alignment(Alignment::Center)
        .wrap(Wrap { trim: true })
        .render(middle, buf);
}

/// A detail overlay (a variable, a problem): a bordered box over most of
/// the screen, titled `title` with a muted `hint`. Returns the area inside.
pub(crate) fn detail_overlay(
    title: String,
    hint: &str,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) -> Rect {
    let area = centered(screen, 80, 70);
    let title = Line::from(vec![
        Span::raw(title),
        Span::styled(format!(" · {hint}"), theme.roles.muted),
    ]);
    let block = block(title, None, true, theme).border_style(theme.roles.overlay_border);
    let inner = block.inner(area);
    ratatui::widgets::Clear.render(area, buf);
    block.render(area, buf);
    inner
}

/// A rectangle of `percent_x` by `percent_y` of `screen`, centred: where
/// overlays go.
pub fn centered(screen: Rect, percent_x: u16, percent_y: u16) -> Rect {
    let [_, middle, _] = Layout::vertical([
        Constraint::Percentage((100 - percent_y) / 2),
        Constraint::Percentage(percent_y),
        Constraint::Fill(1),
    ])
    .areas(screen);
    let [_, center, _] = Layout::horizontal([
        Constraint::Percentage((100 - percent_x) / 2),
        Constraint::Percentage(percent_x),
        Constraint::Fill(1),
    ])
    .areas(middle);
    center
}

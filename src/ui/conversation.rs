//! The conversation pane: the history above, the composer below.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::history::HistoryLayout;
use super::pane;
use crate::app::AppState;
use crate::sanitize;
use crate::screen;
use crate::theme::Theme;

fn render_pins(state: &AppState, theme: &Theme, area: Rect, frame: &mut Frame) {
    let mut lines: Vec<Line> = state
        .pins
        .iter()
        .rev()
        .take(screen::conversation::MAX_PIN_ROWS)
        .map(|pin| {
            Line::from(vec![
                Span::styled(" pinned ", theme.roles.status_key),
                Span::styled(
                    format!(" {} ", sanitize::for_display(&pin.label)),
                    theme.roles.text,
                ),
                Span::styled(
                    format!(
                        "({} chars) · Alt+Backspace removes",
                        pin.text.chars().count()
                    ),
                    theme.roles.muted,
                ),
            ])
        })
        .collect();
    if state.pins.len() > screen::conversation::MAX_PIN_ROWS {
        lines.push(Line::styled(
            format!(
                "  … and {} more pinned",
                state.pins.len() - screen::conversation::MAX_PIN_ROWS
            ),
            theme.roles.muted,
        ));
    }
    Paragraph::new(lines).render(area, frame.buffer_mut());
}

pub fn render(
    state: &AppState,
    history: &HistoryLayout,
    theme: &Theme,
    focused: bool,
    area: Rect,
    frame: &mut Frame,
) {
    let [history_area, pins_area, composer_area] = screen::conversation::split(state, area);
    render_pins(state, theme, pins_area, frame);

    let mut title = vec![Span::raw("Conversation")];
    if let Some(count) = message_count(state.conversation.messages.len()) {
        title.push(Span::styled(format!(" {count}"), theme.roles.muted));
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('1'), focused, theme);
    let inner = block.inner(history_area);
    block.render(history_area, frame.buffer_mut());
    render_history(state, history, theme, inner, frame);

    let composer_block = pane::block(Line::from("Message"), None, focused, theme);
    let mut composer = state.composer.clone();
    composer.set_block(composer_block);
    composer.set_style(theme.roles.text);
    composer.set_cursor_line_style(Style::default());
    composer.set_placeholder_style(theme.roles.muted);
    // Only the focused composer shows a cursor; otherwise typing looks possible.
    composer.set_cursor_style(if focused {
        theme.roles.cursor
    } else {
        theme.roles.text
    });
    frame.render_widget(&composer, composer_area);
}

fn message_count(count: usize) -> Option<String> {
    match count {
        0 => None,
        1 => Some("(1 message)".into()),
        n => Some(format!("({n} messages)")),
    }
}

/// Paints the rows `ui::prepare` laid out; no layout happens here.
fn render_history(
    state: &AppState,
    history: &HistoryLayout,
    theme: &Theme,
    area: Rect,
    frame: &mut Frame,
) {
    let conversation = &state.conversation;
    if conversation.messages.is_empty() {
        pane::empty_state(
            "No messages yet.\nType below and press Enter to send.",
            theme,
            area,
            frame.buffer_mut(),
        );
        return;
    }
    let lines = history.paint(&conversation.messages, conversation.flash, theme);
    Paragraph::new(lines).render(area, frame.buffer_mut());
}

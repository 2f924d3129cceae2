//! The conversation pane: the history above, the composer below.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::markdown::{self, CodeStyler, PlainCode};
use super::{pane, wrap};
use crate::app::AppState;
use crate::app::state::{CellStatus, CellView, ChatMessage, Role};
use crate::sanitize;
use crate::theme::Theme;

/// The composer grows with its text up to this many rows.
const MAX_COMPOSER_ROWS: u16 = 8;

/// At most this many pinned results are listed above the composer.
const MAX_PIN_ROWS: usize = 3;

/// Splits the pane into the history (with its border), the pinned results
/// and the composer.
fn split(state: &AppState, area: Rect) -> [Rect; 3] {
    let composer_rows = (state.composer.lines().len() as u16).clamp(1, MAX_COMPOSER_ROWS) + 2;
    let pins = state.pins.len();
    let pin_rows = if pins > MAX_PIN_ROWS {
        MAX_PIN_ROWS + 1
    } else {
        pins
    } as u16;
    Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(pin_rows),
        Constraint::Length(composer_rows.min(area.height)),
    ])
    .areas(area)
}

/// The scroll position that puts message `index` at the top of the history
/// (a search result being opened).
pub fn scroll_to_message(state: &AppState, theme: &Theme, area: Rect, index: usize) -> usize {
    let [history, ..] = split(state, area);
    let inner = history.inner(ratatui::layout::Margin::new(1, 1));
    let ctx = Ctx::new(state, theme);
    let messages = &state.conversation.messages;
    let width = inner.width as usize;
    let before: usize = messages
        .iter()
        .take(index)
        .map(|m| 2 + body_lines(m, &ctx, width).len())
        .sum();
    let total = history_rows(messages, &ctx, width);
    total.saturating_sub(before + inner.height as usize)
}

fn render_pins(state: &AppState, theme: &Theme, area: Rect, frame: &mut Frame) {
    let mut lines: Vec<Line> = state
        .pins
        .iter()
        .rev()
        .take(MAX_PIN_ROWS)
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
    if state.pins.len() > MAX_PIN_ROWS {
        lines.push(Line::styled(
            format!("  … and {} more pinned", state.pins.len() - MAX_PIN_ROWS),
            theme.roles.muted,
        ));
    }
    Paragraph::new(lines).render(area, frame.buffer_mut());
}

/// How far the history can scroll up when the pane occupies `area`.
/// `ui::prepare` clamps the scroll position to it before each frame, so
/// scrolling back down after overshooting the top is immediate.
pub fn max_scroll(state: &AppState, theme: &Theme, area: Rect) -> usize {
    let [history, ..] = split(state, area);
    let inner = history.inner(ratatui::layout::Margin::new(1, 1));
    let ctx = Ctx::new(state, theme);
    history_rows(&state.conversation.messages, &ctx, inner.width as usize)
        .saturating_sub(inner.height as usize)
}

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, frame: &mut Frame) {
    let [history_area, pins_area, composer_area] = split(state, area);
    render_pins(state, theme, pins_area, frame);

    let mut title = vec![Span::raw("Conversation")];
    if let Some(count) = message_count(&state.conversation.messages) {
        title.push(Span::styled(format!(" {count}"), theme.roles.muted));
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('1'), focused, theme);
    let inner = block.inner(history_area);
    block.render(history_area, frame.buffer_mut());
    render_history(state, theme, inner, frame);

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

fn message_count(messages: &[ChatMessage]) -> Option<String> {
    match messages.len() {
        0 => None,
        1 => Some("(1 message)".into()),
        n => Some(format!("({n} messages)")),
    }
}

fn render_history(state: &AppState, theme: &Theme, area: Rect, frame: &mut Frame) {
    let messages = &state.conversation.messages;
    if messages.is_empty() {
        pane::empty_state(
            "No messages yet.\nType below and press Enter to send.",
            theme,
            area,
            frame.buffer_mut(),
        );
        return;
    }
    let ctx = Ctx::new(state, theme);
    let lines = history_lines(messages, &ctx, area.width as usize);
    let height = area.height as usize;
    let max_scroll = lines.len().saturating_sub(height);
    let from_bottom = state.conversation.scroll_from_bottom.min(max_scroll);
    let start = lines.len().saturating_sub(height + from_bottom);
    let visible: Vec<Line> = lines.into_iter().skip(start).take(height).collect();
    Paragraph::new(visible).render(area, frame.buffer_mut());
}

/// What laying out the history depends on besides the messages.
struct Ctx<'a> {
    theme: &'a Theme,
    styler: &'a dyn CodeStyler,
    expanded: bool,
    flash: Option<usize>,
}

impl<'a> Ctx<'a> {
    fn new(state: &'a AppState, theme: &'a Theme) -> Self {
        // Syntax colours would defeat NO_COLOR.
        let styler: &dyn CodeStyler = match &state.highlighter {
            Some(hl) if !state.settings.no_color => hl.as_ref(),
            _ => &PlainCode,
        };
        Self {
            theme,
            styler,
            expanded: state.conversation.cells_expanded,
            flash: state.conversation.flash,
        }
    }
}

/// How many rows the history takes at `width`.
fn history_rows(messages: &[ChatMessage], ctx: &Ctx<'_>, width: usize) -> usize {
    messages
        .iter()
        .map(|m| 2 + body_lines(m, ctx, width).len())
        .sum::<usize>()
        .saturating_sub(1)
}

fn body_width(width: usize) -> usize {
    width.saturating_sub(2).max(1)
}

fn role_style(role: Role, theme: &Theme) -> Style {
    match role {
        Role::User => theme.roles.user_message,
        Role::Assistant => theme.roles.assistant_message,
        Role::Tool => theme.roles.tool_message,
        Role::Notice => theme.roles.muted,
    }
}

fn history_lines(messages: &[ChatMessage], ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let theme = ctx.theme;
    let mut lines = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        let style = role_style(message.role, theme);
        let header_style = if ctx.flash == Some(i) {
            style
                .patch(theme.roles.match_highlight)
                .patch(theme.roles.selection)
        } else {
            style
        };
        let mut header = vec![Span::styled(
            format!("▍{}", message.role.label()),
            header_style,
        )];
        if let Some(cell) = &message.cell {
            header.push(cell_status(&cell.status, theme));
        }
        lines.push(Line::from(header));
        for row in body_lines(message, ctx, width) {
            let mut spans = vec![Span::styled("▏ ", style)];
            spans.extend(row.spans);
            lines.push(Line::from(spans));
        }
    }
    lines
}

/// Collapsed cells show this many lines of code and of output.
const COLLAPSED_CODE_LINES: usize = 3;
const COLLAPSED_OUTPUT_LINES: usize = 4;

fn cell_status(status: &CellStatus, theme: &Theme) -> Span<'static> {
    match status {
        CellStatus::Running => Span::styled(" ● running", theme.roles.warning),
        CellStatus::Succeeded { duration_ms } => {
            Span::styled(format!(" ✓ {duration_ms} ms"), theme.roles.hint)
        }
        CellStatus::Failed { summary } => Span::styled(
            format!(" ✖ {}", sanitize::for_display(summary)),
            theme.roles.error,
        ),
    }
}

/// A code cell: its Python (highlighted) and its output. Collapsed, it
/// keeps the first lines of code and the last lines of output — where the
/// result or the error is.
fn cell_lines(cell: &CellView, output: &str, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let (theme, expanded) = (ctx.theme, ctx.expanded);
    let mut lines = markdown::code_lines("python", &cell.code, width, theme, ctx.styler);
    if !expanded && lines.len() > COLLAPSED_CODE_LINES {
        let hidden = lines.len() - COLLAPSED_CODE_LINES;
        lines.truncate(COLLAPSED_CODE_LINES);
        lines.push(Line::styled(
            format!("▎… {hidden} more lines (Ctrl+O expands)"),
            theme.roles.muted,
        ));
    }
    let output_style = match cell.status {
        CellStatus::Failed { .. } => theme.roles.error,
        _ => theme.roles.muted,
    };
    let mut rows = wrap::wrap(&sanitize::for_display(output.trim_end()), width);
    if output.trim().is_empty() {
        rows.clear();
    }
    if !expanded && rows.len() > COLLAPSED_OUTPUT_LINES {
        let hidden = rows.len() - COLLAPSED_OUTPUT_LINES;
        rows.drain(..hidden);
        lines.push(Line::styled(
            format!("… {hidden} earlier output lines"),
            theme.roles.muted,
        ));
    }
    lines.extend(rows.into_iter().map(|row| Line::styled(row, output_style)));
    lines
}

/// The message text laid out for the pane: the assistant writes Markdown;
/// what the user typed and tool output are shown as they are.
fn body_lines(message: &ChatMessage, ctx: &Ctx<'_>, width: usize) -> Vec<Line<'static>> {
    let (theme, width) = (ctx.theme, body_width(width));
    if let Some(cell) = &message.cell {
        return cell_lines(cell, &message.text, ctx, width);
    }
    match message.role {
        Role::Assistant => markdown::render(&message.text, width, theme, ctx.styler),
        Role::User | Role::Tool | Role::Notice => {
            let style = if message.role == Role::Notice {
                theme.roles.muted
            } else {
                theme.roles.text
            };
            wrap::wrap(&sanitize::for_display(&message.text), width)
                .into_iter()
                .map(|row| Line::styled(row, style))
                .collect()
        }
    }
}

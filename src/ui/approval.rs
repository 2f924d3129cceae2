//! The approval overlay: the front request of the queue, its exact command
//! or cell code (highlighted), how many more wait, and the choices as
//! buttons that keys and clicks both reach. Drawn over everything.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::markdown::{self, CodeStyler, PlainCode};
use super::pane;
use crate::app::AppState;
use crate::app::approvals::ApprovalSubject;
use crate::sanitize;
use crate::screen::approval::{BUTTON_GAP, buttons, geometry};
use crate::theme::Theme;

pub fn render(state: &AppState, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let Some(pending) = state.approvals.front() else {
        return;
    };
    let g = geometry(pending, screen);
    let waiting = state.approvals.pending.len();
    let (what, language, intro) = match &pending.subject {
        ApprovalSubject::Command(_) => (
            "Approve shell command",
            "sh",
            "A cell wants to run this command (sh -c, in the workspace):",
        ),
        ApprovalSubject::Cell(_) => (
            "Approve cell",
            "python",
            "The model wants to run this cell in the kernel:",
        ),
    };
    let mut title = vec![Span::raw(what)];
    if waiting > 1 {
        title.push(Span::styled(
            format!(" · 1 of {waiting} waiting"),
            theme.roles.warning,
        ));
    }
    let block =
        pane::block(Line::from(title), None, true, theme).border_style(theme.roles.overlay_border);
    Clear.render(g.area, buf);
    block.render(g.area, buf);
    let inner_w = g.area.width.saturating_sub(2);
    // What runs is exactly this text: hidden characters are shown, never
    // dropped, and their presence is the first thing the user reads.
    let text = pending.subject.text();
    let intro = if sanitize::has_hidden_characters(text) {
        Line::styled(
            "⚠ Contains control or invisible characters, shown as ␛ ␇ <U+…>; they run as shown:",
            theme.roles.warning,
        )
    } else {
        Line::styled(intro, theme.roles.muted)
    };
    intro.render(Rect::new(g.x, g.area.y + 1, inner_w, 1), buf);

    let styler: &dyn CodeStyler = match &state.highlighter {
        Some(hl) if !state.settings.no_color => hl.as_ref(),
        _ => &PlainCode,
    };
    let mut lines = markdown::code_lines(
        language,
        &sanitize::visible_controls(text),
        g.code.width as usize,
        theme,
        styler,
    );
    let room = g.code.height as usize;
    let skip = state.approvals.scroll.min(lines.len().saturating_sub(1));
    if skip > 0 {
        lines.drain(..skip);
        lines[0] = Line::styled(
            format!("… {} lines above (↑ scrolls back)", skip + 1),
            theme.roles.warning,
        );
    }
    if lines.len() > room && room > 0 {
        let hidden = lines.len() - (room - 1);
        lines.truncate(room - 1);
        lines.push(Line::styled(
            format!("… {hidden} more lines below (↓ scrolls; all of it runs)"),
            theme.roles.warning,
        ));
    }
    Paragraph::new(lines).render(g.code, buf);

    let mut spans = Vec::new();
    for (label, key, _) in buttons(&pending.subject) {
        if !spans.is_empty() {
            spans.push(Span::raw(" ".repeat(BUTTON_GAP as usize)));
        }
        spans.push(Span::styled(format!(" {key}"), theme.roles.status_key));
        spans.push(Span::styled(format!(" {label} "), theme.roles.selection));
    }
    spans.push(Span::styled("   Esc deny", theme.roles.muted));
    Line::from(spans).render(Rect::new(g.x, g.buttons_row, inner_w, 1), buf);

    let reason_line = match &state.approvals.reason {
        Some(reason) => {
            let hint = "  Enter send · Esc back";
            let room = usize::from(inner_w).saturating_sub(8 + hint.len());
            let mut spans = vec![Span::styled("Reason: ", theme.roles.title)];
            spans.extend(super::line_input::spans(
                reason,
                theme.roles.text,
                theme.roles.cursor,
                room,
            ));
            spans.push(Span::styled(hint, theme.roles.muted));
            Line::from(spans)
        }
        None => Line::styled(
            "A denial's reason goes back to the code that asked.",
            theme.roles.muted,
        ),
    };
    reason_line.render(Rect::new(g.x, g.reason_row, inner_w, 1), buf);
}

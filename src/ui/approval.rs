//! The approval overlay: the front request of the queue, its exact command
//! or cell code (highlighted), how many more wait, and the choices as
//! buttons that keys and clicks both reach. Drawn over everything.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::markdown::{self, CodeStyler, PlainCode};
use super::pane;
use crate::app::AppState;
use crate::app::approval_flow::Choice;
use crate::app::approvals::{ApprovalSubject, PendingApproval};
use crate::sanitize;
use crate::theme::Theme;

/// Rows the box spends on everything but the code: borders, the intro line,
/// a gap, the buttons, the reason line.
const CHROME_ROWS: u16 = 6;
const MAX_WIDTH: u16 = 100;

/// Where things are, shared by drawing and mouse hit-testing.
struct Geometry {
    area: Rect,
    code: Rect,
    buttons_row: u16,
    reason_row: u16,
    x: u16,
}

fn geometry(pending: &PendingApproval, screen: Rect) -> Geometry {
    let width = screen
        .width
        .saturating_sub(4)
        .clamp(20.min(screen.width), MAX_WIDTH);
    let code_rows = pending.subject.text().lines().count().max(1) as u16;
    let height = (code_rows + CHROME_ROWS).min(screen.height.saturating_sub(2).max(CHROME_ROWS));
    let area = Rect::new(
        screen.x + (screen.width.saturating_sub(width)) / 2,
        screen.y + (screen.height.saturating_sub(height)) / 2,
        width,
        height,
    )
    .intersection(screen);
    let inner_x = area.x + 1;
    let inner_w = area.width.saturating_sub(2);
    let bottom = area.bottom().saturating_sub(1);
    let reason_row = bottom.saturating_sub(1);
    let buttons_row = reason_row.saturating_sub(1);
    let code_top = area.y + 2;
    let code = Rect::new(
        inner_x,
        code_top,
        inner_w,
        buttons_row.saturating_sub(1).saturating_sub(code_top),
    );
    Geometry {
        area,
        code,
        buttons_row,
        reason_row,
        x: inner_x,
    }
}

/// The buttons as (label, key, choice), in the order drawn.
fn buttons(subject: &ApprovalSubject) -> [(&'static str, &'static str, Choice); 3] {
    let always = match subject {
        ApprovalSubject::Command(_) => "Always this command",
        ApprovalSubject::Cell(_) => "Always (all cells)",
    };
    [
        ("Run once", "y", Choice::Once),
        (always, "a", Choice::Always),
        ("Deny…", "d", Choice::Deny),
    ]
}

/// Each button's text as drawn: ` y Run once `.
fn button_text(key: &str, label: &str) -> String {
    format!(" {key} {label} ")
}

const BUTTON_GAP: u16 = 2;

/// The button under a click, if any.
pub fn button_at(state: &AppState, screen: Rect, column: u16, row: u16) -> Option<Choice> {
    let pending = state.approvals.front()?;
    let g = geometry(pending, screen);
    if row != g.buttons_row {
        return None;
    }
    let mut x = g.x;
    for (label, key, choice) in buttons(&pending.subject) {
        let w = button_text(key, label).width() as u16;
        if column >= x && column < x + w {
            return Some(choice);
        }
        x += w + BUTTON_GAP;
    }
    None
}

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

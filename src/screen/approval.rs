//! The approval overlay's geometry: the box, the code area and the buttons,
//! shared by drawing and by mouse clicks.

use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use crate::app::approvals::{ApprovalQueue, ApprovalSubject, PendingApproval};
use crate::overlays::approval::Choice;

/// Rows the box spends on everything but the code: borders, the intro line,
/// a gap, the buttons, the reason line.
const CHROME_ROWS: u16 = 6;
const MAX_WIDTH: u16 = 100;

/// Where things are, shared by drawing and mouse hit-testing.
pub struct Geometry {
    pub area: Rect,
    pub code: Rect,
    pub buttons_row: u16,
    pub reason_row: u16,
    pub x: u16,
}

pub fn geometry(pending: &PendingApproval, screen: Rect) -> Geometry {
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
pub fn buttons(subject: &ApprovalSubject) -> Vec<(&'static str, &'static str, Choice)> {
    let (once, always) = match subject {
        ApprovalSubject::Command(_) => ("Run once", "Always this command"),
        ApprovalSubject::Cell(_) => ("Run once", "Always (all cells)"),
        ApprovalSubject::Write(review) if review.per_hunk => {
            let hunk = |accept, rest| Choice::Hunk { accept, rest };
            return vec![
                ("Accept", "y", hunk(true, false)),
                ("Reject", "n", hunk(false, false)),
                ("Accept rest", "a", hunk(true, true)),
                ("Reject rest", "d", hunk(false, true)),
            ];
        }
        ApprovalSubject::Write(_) => ("Write", "Always (all writes)"),
        ApprovalSubject::Subcalls(_) => ("Allow this turn", "Always (all sub-calls)"),
        ApprovalSubject::ToolCall { .. } => ("Call once", "Always this tool"),
    };
    vec![
        (once, "y", Choice::Once),
        (always, "a", Choice::Always),
        ("Deny…", "d", Choice::Deny),
    ]
}

/// Each button's text as drawn: ` y Run once `.
pub fn button_text(key: &str, label: &str) -> String {
    format!(" {key} {label} ")
}

pub const BUTTON_GAP: u16 = 2;

/// The button under a click, if any.
pub fn button_at(queue: &ApprovalQueue, screen: Rect, column: u16, row: u16) -> Option<Choice> {
    let pending = queue.front()?;
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

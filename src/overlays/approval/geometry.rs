//! The approval overlay's geometry: the box, the code area and the buttons,
//! shared by drawing, scrolling and mouse clicks. The code area is sized
//! and scrolled in *rows as drawn* (long lines broken, never cut), so every
//! character of what is approved can be brought on screen.

use ratatui::layout::Rect;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use super::{ApprovalQueue, Choice};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::markdown::{CodeStyler, PlainCode};
use crate::workbench::approvals::{ApprovalSubject, PendingApproval};

/// Rows the box spends on everything but the code: borders, the intro line,
/// the row under the code (where it is and how long it is), the buttons,
/// the reason line.
const CHROME_ROWS: u16 = 6;
/// Rows a hook's reason may take in place of the one intro line.
const HOOK_ROWS: u16 = 3;
const MAX_WIDTH: u16 = 100;

/// Where things are, shared by drawing and mouse hit-testing.
pub(crate) struct Geometry {
    pub area: Rect,
    pub code: Rect,
    /// Under the code: which rows show, and the text's length.
    pub status_row: u16,
    pub buttons_row: u16,
    pub reason_row: u16,
    /// Rows under the title for the intro (a hook's reason may wrap).
    pub intro_rows: u16,
    pub x: u16,
    /// Rows the whole text takes at the code area's width.
    pub rows: usize,
}

impl Geometry {
    /// The last scroll offset: the text's end at the bottom of the area.
    pub(crate) fn max_scroll(&self) -> usize {
        self.rows.saturating_sub(usize::from(self.code.height))
    }

    /// Rows a PgUp/PgDn moves: the area less one kept for context.
    pub fn page(&self) -> usize {
        usize::from(self.code.height.saturating_sub(1)).max(1)
    }

    /// With the text scrolled by `scroll`, its last row is on screen.
    pub(crate) fn shows_end(&self, scroll: usize) -> bool {
        self.code.height > 0 && scroll >= self.max_scroll()
    }
}

pub fn geometry(pending: &PendingApproval, screen: Rect) -> Geometry {
    let width = screen
        .width
        .saturating_sub(4)
        .clamp(20.min(screen.width), MAX_WIDTH);
    let inner_w = width.saturating_sub(2);
    let rows = code_rows(&pending.subject, inner_w);
    let code_rows = u16::try_from(rows.max(1)).unwrap_or(u16::MAX);
    // A hook's reason gives up its rows before the code gives up its last.
    let intro_rows = u16::try_from(intro_lines(pending, inner_w).len())
        .unwrap_or(1)
        .min(screen.height.saturating_sub(CHROME_ROWS))
        .max(1);
    let chrome = CHROME_ROWS - 1 + intro_rows;
    // A margin above and below when there is room; on a short screen the
    // margin goes before the code does: what is approved must be seen.
    let height = code_rows
        .saturating_add(chrome)
        .min(screen.height.saturating_sub(2))
        .max((chrome + 1).min(screen.height));
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
    let status_row = buttons_row.saturating_sub(1);
    let code_top = area.y + 1 + intro_rows;
    let code = Rect::new(
        inner_x,
        code_top,
        inner_w,
        status_row.saturating_sub(code_top),
    );
    Geometry {
        area,
        code,
        status_row,
        buttons_row,
        reason_row,
        intro_rows,
        x: inner_x,
        rows,
    }
}

/// The words under the title when a hook asked for the question, wrapped
/// to `width` (at most [`HOOK_ROWS`] rows, the last cut with `…`); empty
/// when the intro is one plain line: no hook, or the text has hidden
/// characters, whose warning comes first.
pub(crate) fn intro_lines(pending: &PendingApproval, width: u16) -> Vec<String> {
    let hidden = !matches!(pending.subject, ApprovalSubject::Write(_))
        && sanitize::has_hidden_characters(pending.subject.text());
    let Some(reason) = pending.hook_asks.as_deref().filter(|_| !hidden) else {
        return Vec::new();
    };
    let said = format!(
        "A PreToolUse hook asks you: {}",
        sanitize::for_display(reason)
    );
    let width = usize::from(width.max(1));
    let mut lines = crate::screen::wrap::wrap(&said, width);
    if lines.len() > usize::from(HOOK_ROWS) {
        lines.truncate(usize::from(HOOK_ROWS));
        if let Some(last) = lines.last_mut() {
            *last = crate::screen::wrap::fit_text(&format!("{last} …"), width);
        }
    }
    lines
}

/// The language the question's text is coloured as.
pub fn language(subject: &ApprovalSubject) -> &'static str {
    match subject {
        ApprovalSubject::Command(_) => "sh",
        ApprovalSubject::Cell(_) => "python",
        ApprovalSubject::Write(_) => "diff",
        ApprovalSubject::Subcalls(_) => "text",
        ApprovalSubject::ToolCall { .. } => "yaml",
    }
}

/// The question's text as drawn at `width`: control characters shown
/// (`␛`, `<U+202E>`), long lines broken, each row behind a gutter bar.
pub(crate) fn code_lines(
    subject: &ApprovalSubject,
    width: u16,
    theme: &Theme,
    styler: &dyn CodeStyler,
) -> Vec<Line<'static>> {
    crate::ui::markdown::code_lines(
        language(subject),
        &sanitize::visible_controls(subject.text()),
        usize::from(width),
        theme,
        styler,
    )
}

/// How many rows [`code_lines`] draws at `width` (colours never change
/// where a line breaks).
fn code_rows(subject: &ApprovalSubject, width: u16) -> usize {
    crate::ui::markdown::code_rows(
        language(subject),
        &sanitize::visible_controls(subject.text()),
        usize::from(width),
        &PlainCode,
    )
    .len()
}

/// `12 lines, 3 400 characters`: the length of the text under approval,
/// whatever the screen shows of it.
pub fn length(text: &str) -> String {
    let lines = text.lines().count();
    let chars = text.chars().count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    format!(
        "{lines} line{}, {chars} character{}",
        plural(lines),
        plural(chars)
    )
}

/// The row under the code: which rows show when the text does not fit,
/// and always its length (`rows 1–10 of 48 · 12 lines, 3400 characters`).
pub fn status(text: &str, g: &Geometry, scroll: usize) -> String {
    let length = length(text);
    if g.code.height == 0 {
        return format!("the terminal is too short to show it · {length}");
    }
    if g.rows <= usize::from(g.code.height) {
        return length;
    }
    let last = (scroll + usize::from(g.code.height)).min(g.rows);
    format!("rows {}–{last} of {} · {length}", scroll + 1, g.rows)
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
pub(crate) fn button_text(key: &str, label: &str) -> String {
    format!(" {key} {label} ")
}

pub(crate) const BUTTON_GAP: u16 = 2;

/// The button under a click, if any.
pub(crate) fn button_at(
    queue: &ApprovalQueue,
    screen: Rect,
    column: u16,
    row: u16,
) -> Option<Choice> {
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

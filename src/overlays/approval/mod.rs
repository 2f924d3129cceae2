//! The approval overlay as a component: the front request of the queue
//! (its exact command, or the cell's code, scrollable), its buttons, and
//! the denial reason typed in place. It is its own layer, above any
//! overlay; a question joins the layer stack only once a frame has drawn
//! it (`around::layers::stack`), so keys typed before it appeared never answer
//! it. What is approved is shown whole: long lines wrap, every row is
//! reachable (↑↓ PgUp PgDn Home End), the text's length is always shown,
//! and no approve key or click takes effect before the text's last row has
//! been on screen (denying needs no reading). Answers go back to the code
//! that asked through the request's own channel.

mod geometry;
mod queue;

pub use queue::{ApprovalQueue, HUNK_SETTLE};

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use crossterm::event::{MouseButton, MouseEventKind};

use crate::component::Around;
use crate::component::{Component, Ctx, Input, Outcome, View, clamp_add};
use crate::kernel::caps::ApprovalDecision;
use crate::keymap::{Action, Scope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::line_input::LineInput;
use crate::workbench::approvals::ApprovalSubject;
use crate::workbench::write_review::{Progress, WriteReviewState};
use geometry::{BUTTON_GAP, button_at, buttons, geometry};

/// What a denial without a typed reason tells the code.
pub(crate) const DEFAULT_DENIAL: &str = "the user denied it";

/// A choice in the overlay (a key or a click).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    Once,
    Always,
    Deny,
    /// A write under review, hunk by hunk: this hunk (`rest`: and every
    /// later one) is written, or left out.
    Hunk {
        accept: bool,
        rest: bool,
    },
}

impl Choice {
    /// It lets something run or be written (so it waits for the whole
    /// text to have been seen); denying and rejecting never wait.
    pub fn approves(self) -> bool {
        match self {
            Choice::Once | Choice::Always => true,
            Choice::Hunk { accept, .. } => accept,
            Choice::Deny => false,
        }
    }
}

impl ApprovalQueue {
    /// Picks a choice for the front request (a key or a click).
    fn choose(&mut self, choice: Choice) {
        match choice {
            Choice::Once => {
                if self.may_approve() {
                    self.answer_front(ApprovalDecision::AllowOnce);
                }
            }
            Choice::Always => {
                if self.may_approve() {
                    self.answer_front(ApprovalDecision::AllowAlways);
                }
            }
            Choice::Deny => {
                if self.front().is_some() {
                    self.reason = Some(LineInput::default());
                }
            }
            Choice::Hunk { accept, rest } => {
                // Rejecting needs no reading; accepting needs the hunk seen.
                if !self.hunk_ready() || (accept && !self.may_approve()) {
                    return;
                }
                let Some(review) = self.front_review() else {
                    return;
                };
                match review.decide(accept, rest) {
                    Progress::Next => self.scroll = 0,
                    Progress::Done(decision) => {
                        self.answer_front(decision);
                    }
                }
            }
        }
    }

    /// The front request's hunk-by-hunk review, if it is one.
    fn front_review(&mut self) -> Option<&mut WriteReviewState> {
        match &mut self.pending.front_mut()?.subject {
            ApprovalSubject::Write(review) if review.per_hunk => Some(review),
            _ => None,
        }
    }

    /// The overlay's actions; `false` when `action` is not one of them.
    fn act(&mut self, action: Action) -> bool {
        match action {
            Action::ApproveOnce => self.choose(Choice::Once),
            Action::ApproveAlways => self.choose(Choice::Always),
            Action::StartDenial => self.choose(Choice::Deny),
            Action::DenyNow => {
                self.answer_front(ApprovalDecision::Deny {
                    reason: DEFAULT_DENIAL.to_owned(),
                });
            }
            Action::SendDenial => {
                let typed = self.reason.take().unwrap_or_default();
                let reason = match typed.text().trim() {
                    "" => DEFAULT_DENIAL.to_owned(),
                    text => format!("{DEFAULT_DENIAL}: {text}"),
                };
                self.answer_front(ApprovalDecision::Deny { reason });
            }
            Action::CancelDenial => self.reason = None,
            Action::AcceptHunk => self.choose(Choice::Hunk {
                accept: true,
                rest: false,
            }),
            Action::RejectHunk => self.choose(Choice::Hunk {
                accept: false,
                rest: false,
            }),
            Action::AcceptRestHunks => self.choose(Choice::Hunk {
                accept: true,
                rest: true,
            }),
            Action::RejectRestHunks => self.choose(Choice::Hunk {
                accept: false,
                rest: true,
            }),
            Action::PreviousHunk => {
                if let Some(review) = self.front_review()
                    && review.back()
                {
                    self.scroll = 0;
                }
            }
            _ => return false,
        }
        true
    }
}

impl ApprovalQueue {
    /// Scrolls the front question by `delta` rows as drawn on `screen`
    /// (`pages`: by pages of its code area instead), up to its end.
    fn scroll_by(&mut self, delta: isize, screen: Rect, pages: bool) -> Outcome {
        let Some(pending) = self.front() else {
            return Outcome::Ignored;
        };
        let g = geometry(pending, screen);
        let unit = if pages { g.page() } else { 1 };
        let delta = delta.saturating_mul(isize::try_from(unit).unwrap_or(isize::MAX));
        self.scroll = clamp_add(self.scroll, delta, g.max_scroll());
        Outcome::Changed
    }
}

impl Component for ApprovalQueue {
    fn label(&self) -> &'static str {
        "Approval"
    }

    fn scope(&self) -> Scope {
        let per_hunk = self
            .front()
            .is_some_and(|p| matches!(&p.subject, ApprovalSubject::Write(r) if r.per_hunk));
        if self.reason.is_some() {
            Scope::ApprovalReason
        } else if per_hunk {
            Scope::HunkReview
        } else {
            Scope::Approval
        }
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(action) if self.act(action) => Outcome::Changed,
            // Text typed into the reason line.
            Input::Key(key) => Outcome::from_changed(
                self.reason
                    .as_mut()
                    .is_some_and(|reason| reason.input(key).any()),
            ),
            // Pasted text joins the reason (one line).
            Input::Paste(text) => {
                Outcome::from_changed(self.reason.as_mut().is_some_and(|reason| {
                    reason.paste(&text.lines().collect::<Vec<_>>().join(" "))
                }))
            }
            // A long text: the user reads all of what would run, row by
            // row as drawn (a long line's tail too), a page at a time.
            Input::Scroll(delta) => self.scroll_by(delta, ctx.around.screen, false),
            Input::Action(Action::PageUp) => self.scroll_by(-1, ctx.around.screen, true),
            Input::Action(Action::PageDown) => self.scroll_by(1, ctx.around.screen, true),
            // The buttons choose; a click elsewhere does nothing.
            Input::Mouse(mouse) if mouse.kind == MouseEventKind::Down(MouseButton::Left) => {
                match button_at(self, ctx.around.screen, mouse.column, mouse.row) {
                    Some(choice) => {
                        self.choose(choice);
                        Outcome::Changed
                    }
                    None => Outcome::Unchanged,
                }
            }
            Input::Mouse(_) => Outcome::Unchanged,
            _ => Outcome::Ignored,
        }
    }

    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame) {
        render(view.around, self, view.theme, area, frame.buffer_mut());
    }
}

/// The title and intro line of a write's question.
fn write_heading(review: &WriteReviewState) -> (String, String) {
    let what = if review.creates {
        format!("{} (a new file)", review.shown)
    } else {
        review.shown.clone()
    };
    if review.per_hunk {
        (
            format!(
                "Review write · hunk {} of {}",
                review.current() + 1,
                review.hunk_count()
            ),
            format!("Write this hunk of {what}? Only accepted hunks reach the disk."),
        )
    } else {
        (
            "Approve write".to_owned(),
            format!("A cell wants to write {what}:"),
        )
    }
}

fn render(
    around: Around<'_>,
    queue: &ApprovalQueue,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let Some(pending) = queue.front() else {
        return;
    };
    let g = geometry(pending, screen);
    let waiting = queue.pending.len();
    let (what, intro) = match &pending.subject {
        ApprovalSubject::Command(_) => (
            "Approve shell command".to_owned(),
            "A cell wants to run this command (sh -c, in the workspace):".to_owned(),
        ),
        ApprovalSubject::Cell(_) => (
            "Approve cell".to_owned(),
            "The model wants to run this cell in the kernel:".to_owned(),
        ),
        ApprovalSubject::Write(review) => write_heading(review),
        ApprovalSubject::Subcalls(_) => (
            "Approve sub-calls".to_owned(),
            "A cell wants to ask a model (llm_query / rlm_query):".to_owned(),
        ),
        ApprovalSubject::ToolCall { server, tool, .. } => (
            "Approve MCP tool call".to_owned(),
            format!("A cell wants to call the tool `{tool}` of the MCP server `{server}`:"),
        ),
    };
    let mut title = vec![Span::raw(what)];
    if pending.hook_asks.is_some() {
        title.push(Span::styled(" · a hook asks", theme.roles.warning));
    }
    if waiting > 1 {
        title.push(Span::styled(
            format!(" · 1 of {waiting} waiting"),
            theme.roles.warning,
        ));
    }
    let block = crate::ui::pane::block(Line::from(title), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(g.area, buf);
    block.render(g.area, buf);
    let inner_w = g.area.width.saturating_sub(2);
    // What runs is exactly this text: hidden characters are shown, never
    // dropped, and their presence is the first thing the user reads.
    let text = pending.subject.text();
    let hook_lines = geometry::intro_lines(pending, inner_w);
    let intro: Vec<Line> = if !hook_lines.is_empty() {
        // Even in `auto`: the hook wants the user to look at this one.
        hook_lines
            .into_iter()
            .map(|line| Line::styled(line, theme.roles.warning))
            .collect()
    } else if !matches!(pending.subject, ApprovalSubject::Write(_))
        && sanitize::has_hidden_characters(text)
    {
        // What runs is exactly this text: the warning comes first, even
        // before a hook's reason (which the title still announces).
        vec![Line::styled(
            "⚠ Contains control or invisible characters, shown as ␛ ␇ <U+…>; they run as shown:",
            theme.roles.warning,
        )]
    } else {
        // A diff is the file's text, shown as it will be written.
        vec![Line::styled(intro, theme.roles.muted)]
    };
    Paragraph::new(intro).render(Rect::new(g.x, g.area.y + 1, inner_w, g.intro_rows), buf);

    let styler = around.code;
    // Rows as drawn, scrolled by whole rows: every row of every line can
    // be brought on screen, and nothing stands in for a row of the text.
    let scroll = queue.scroll.min(g.max_scroll());
    let lines: Vec<Line> = geometry::code_lines(&pending.subject, g.code.width, theme, styler)
        .into_iter()
        .skip(scroll)
        .take(usize::from(g.code.height))
        .collect();
    Paragraph::new(lines).render(g.code, buf);
    let end_seen = queue.end_seen();
    let status_style = if end_seen {
        theme.roles.muted
    } else {
        theme.roles.warning
    };
    let status = geometry::status(text, &g, scroll);
    Line::styled(
        crate::screen::wrap::fit_text(&status, inner_w.into()),
        status_style,
    )
    .render(Rect::new(g.x, g.status_row, inner_w, 1), buf);

    let mut spans = Vec::new();
    for (label, key, choice) in buttons(&pending.subject) {
        if !spans.is_empty() {
            spans.push(Span::raw(" ".repeat(BUTTON_GAP as usize)));
        }
        // An approval the unseen end holds back is drawn as unavailable.
        let (key_style, label_style) = if end_seen || !choice.approves() {
            (theme.roles.status_key, theme.roles.selection)
        } else {
            (theme.roles.muted, theme.roles.muted)
        };
        spans.push(Span::styled(format!(" {key}"), key_style));
        spans.push(Span::styled(format!(" {label} "), label_style));
    }
    spans.push(Span::styled("   Esc deny", theme.roles.muted));
    Line::from(spans).render(Rect::new(g.x, g.buttons_row, inner_w, 1), buf);

    let reason_line = match &queue.reason {
        Some(reason) => {
            let hint = "  Enter send · Esc back";
            let room = usize::from(inner_w).saturating_sub(8 + hint.len());
            let mut spans = vec![Span::styled("Reason: ", theme.roles.title)];
            spans.extend(crate::ui::line_input::spans(
                reason,
                theme.roles.text,
                theme.roles.cursor,
                room,
            ));
            spans.push(Span::styled(hint, theme.roles.muted));
            Line::from(spans)
        }
        None if !end_seen && g.code.height == 0 => Line::styled(
            "Make the terminal taller to see it and approve; Esc denies now.",
            theme.roles.warning,
        ),
        None if !end_seen => Line::styled(
            if queue.refused() {
                "Not approved: scroll to the end first (↓ PgDn End), then approve."
            } else {
                "Scroll to the end to approve (↓ PgDn End); Esc denies now."
            },
            theme.roles.warning,
        ),
        None if matches!(&pending.subject, ApprovalSubject::Write(r) if r.per_hunk) => {
            Line::styled(
                "k back a hunk · Esc refuses the whole write",
                theme.roles.muted,
            )
        }
        None => Line::styled(
            "A denial's reason goes back to the code that asked.",
            theme.roles.muted,
        ),
    };
    reason_line.render(Rect::new(g.x, g.reason_row, inner_w, 1), buf);
}

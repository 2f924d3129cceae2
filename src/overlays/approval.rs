//! The approval overlay as a component: the front request of the queue
//! (its exact command, or the cell's code, scrollable), its buttons, and
//! the denial reason typed in place. It is its own layer, above any
//! overlay; a question joins the layer stack only once a frame has drawn
//! it (`app::layers::stack`), so keys typed before it appeared never answer
//! it. What is approved is shown whole: long lines wrap, every row is
//! reachable (↑↓ PgUp PgDn Home End), the text's length is always shown,
//! and no approve key or click takes effect before the text's last row has
//! been on screen (denying needs no reading). Answers go back to the code
//! that asked through the request's own channel.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use crossterm::event::{MouseButton, MouseEventKind};

use crate::app::AppState;
use crate::app::approvals::ApprovalQueue;
use crate::app::line_input::LineInput;
use crate::component::{Component, Ctx, Input, Outcome, View, clamp_add};
use crate::kernel::caps::ApprovalDecision;
use crate::keymap::{Action, Scope};
use crate::sanitize;
use crate::screen::approval::{self, BUTTON_GAP, button_at, buttons, geometry};
use crate::theme::Theme;
use crate::ui::markdown::{CodeStyler, PlainCode};
use crate::workbench::approvals::ApprovalSubject;
use crate::workbench::write_review::{Progress, WriteReviewState};

/// What a denial without a typed reason tells the code.
pub const DEFAULT_DENIAL: &str = "the user denied it";

/// A choice in the overlay (a key or a click).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
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
            Input::Scroll(delta) => self.scroll_by(delta, ctx.app.screen(), false),
            Input::Action(Action::PageUp) => self.scroll_by(-1, ctx.app.screen(), true),
            Input::Action(Action::PageDown) => self.scroll_by(1, ctx.app.screen(), true),
            // The buttons choose; a click elsewhere does nothing.
            Input::Mouse(mouse) if mouse.kind == MouseEventKind::Down(MouseButton::Left) => {
                match button_at(self, ctx.app.screen(), mouse.column, mouse.row) {
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
        render(view.app, self, view.theme, area, frame.buffer_mut());
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

fn render(state: &AppState, queue: &ApprovalQueue, theme: &Theme, screen: Rect, buf: &mut Buffer) {
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
    let intro = if matches!(pending.subject, ApprovalSubject::Write(_)) {
        // A diff: what is written is the file's text, shown as it will be.
        Line::styled(intro, theme.roles.muted)
    } else if sanitize::has_hidden_characters(text) {
        Line::styled(
            "⚠ Contains control or invisible characters, shown as ␛ ␇ <U+…>; they run as shown:",
            theme.roles.warning,
        )
    } else {
        Line::styled(intro, theme.roles.muted)
    };
    intro.render(Rect::new(g.x, g.area.y + 1, inner_w, 1), buf);

    let styler: &dyn CodeStyler = match &state.highlighter {
        Some(hl) if !state.workbench.settings.no_color => hl.as_ref(),
        _ => &PlainCode,
    };
    // Rows as drawn, scrolled by whole rows: every row of every line can
    // be brought on screen, and nothing stands in for a row of the text.
    let scroll = queue.scroll.min(g.max_scroll());
    let lines: Vec<Line> = approval::code_lines(&pending.subject, g.code.width, theme, styler)
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
    let status = approval::status(text, &g, scroll);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppEvent;
    use crate::app::update::{handle_app_event, handle_terminal_event};
    use crate::config::Settings;
    use crate::kernel::caps::{Approval, ApprovalPolicy};
    use crate::keymap::Scope;
    use crate::sandbox::ApprovalMode;
    use crate::workbench::approvals::{ApprovalBroker, PendingApproval};
    use crate::workbench::event;
    use crossterm::event::Event;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    /// The approval's key scope, when it has the keyboard.
    fn scope(s: &AppState) -> Option<Scope> {
        s.key_scopes()
            .first()
            .copied()
            .filter(|scope| matches!(scope, Scope::Approval | Scope::ApprovalReason))
    }

    fn state() -> AppState {
        let settings = Settings::defaults();
        AppState::new("/tmp/demo".into(), settings)
    }

    /// A key typed after a frame: what is on screen may take it.
    fn key(s: &mut AppState, code: KeyCode) {
        crate::app::update::before_frame(s);
        handle_terminal_event(s, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    /// The agent's API: a cell approval goes through the queue and `update`.
    #[tokio::test]
    async fn cell_approvals_queue_and_always_covers_later_cells() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.workbench.services.approvals = Some(broker.clone());
        let first = tokio::spawn(broker.approve_cell("print(1)"));
        let second = tokio::spawn(broker.approve_cell("print(2)"));
        for _ in 0..2 {
            let ev = rx.recv().await.unwrap();
            handle_app_event(&mut s, ev);
        }
        assert_eq!(s.approvals.pending.len(), 2, "two requests queue");
        assert_eq!(
            s.approvals.front().unwrap().subject,
            ApprovalSubject::Cell("print(1)".into())
        );
        key(&mut s, KeyCode::Char('a'));
        assert_eq!(first.await.unwrap(), Approval::Allow);
        assert_eq!(s.approvals.pending.len(), 1);
        key(&mut s, KeyCode::Char('y'));
        assert_eq!(second.await.unwrap(), Approval::Allow);
        // "Always" for cells: the next cell is not asked.
        assert_eq!(broker.approve_cell("print(3)").await, Approval::Allow);
        assert!(rx.try_recv().is_err());
    }

    /// Writes follow the mode: `ask` shows the diff and "always" covers
    /// later writes; `auto` writes unasked; `deny` refuses; a path the
    /// user's own running cell names literally is never asked about.
    #[tokio::test]
    async fn writes_are_asked_about_as_the_mode_says() {
        use crate::kernel::caps::{Prior, WriteProposal, WriteReview, WriteVerdict};
        let proposal = |path: &str| WriteProposal {
            path: format!("/tmp/demo/{path}").into(),
            user_path: path.into(),
            before: Prior::Bytes(b"old\n".to_vec()),
            after: b"new\n".to_vec(),
        };
        let whole = WriteVerdict::Write {
            text: b"new\n".to_vec(),
            rejected: 0,
        };
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.workbench.services.approvals = Some(broker.clone());
        let asked = tokio::spawn(broker.review(proposal("a.py")));
        let ev = rx.recv().await.unwrap();
        handle_app_event(&mut s, ev);
        let Some(ApprovalSubject::Write(review)) = s.approvals.front().map(|p| &p.subject) else {
            panic!("a write question")
        };
        assert!(review.text().contains("-old\n+new"), "{}", review.text());
        key(&mut s, KeyCode::Char('a'));
        assert_eq!(asked.await.unwrap(), whole);
        assert_eq!(broker.review(proposal("b.py")).await, whole, "always");
        assert!(rx.try_recv().is_err(), "not asked again");
        // A write that changes nothing is not asked about (review finding:
        // its question offered "always" for all writes).
        broker.set_mode(ApprovalMode::Review);
        let same = WriteProposal {
            after: b"old\n".to_vec(),
            ..proposal("c.py")
        };
        assert!(matches!(
            broker.review(same).await,
            WriteVerdict::Write { .. }
        ));
        assert!(rx.try_recv().is_err(), "not asked");
        // "Always" does not outlive a mode change.
        broker.set_mode(ApprovalMode::Ask);
        let asked = tokio::spawn(broker.review(proposal("d.py")));
        drop(rx.recv().await.expect("asked again"));
        assert!(matches!(asked.await.unwrap(), WriteVerdict::Deny(_)));

        let broker = ApprovalBroker::new(event::channel().0, ApprovalMode::Deny);
        assert!(matches!(
            broker.review(proposal("a.py")).await,
            WriteVerdict::Deny(_)
        ));
        broker.cell_owner().start(
            7,
            crate::workbench::kernel::CellOrigin::User,
            "fs.write('notes.md', t)",
        );
        assert_eq!(
            broker.review(proposal("notes.md")).await,
            whole,
            "the user's own write"
        );
        broker.set_mode(ApprovalMode::Auto);
        assert_eq!(broker.review(proposal("a.py")).await, whole);
    }

    #[tokio::test]
    async fn a_denied_command_carries_the_typed_reason() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.workbench.services.approvals = Some(broker.clone());
        let asked = tokio::spawn(broker.check("rm -rf ~"));
        let Some(AppEvent::ApprovalRequested(p)) = rx.recv().await else {
            panic!("expected a request")
        };
        handle_app_event(&mut s, AppEvent::ApprovalRequested(p));
        crate::app::update::before_frame(&mut s);
        assert_eq!(scope(&s), Some(Scope::Approval));
        key(&mut s, KeyCode::Char('d'));
        assert_eq!(scope(&s), Some(Scope::ApprovalReason));
        for c in "not my home".chars() {
            key(&mut s, KeyCode::Char(c));
        }
        key(&mut s, KeyCode::Enter);
        assert_eq!(
            asked.await.unwrap(),
            Approval::Deny("the user denied it: not my home".into())
        );
        assert!(s.approvals.is_empty());
        assert_eq!(scope(&s), None);
    }

    #[test]
    fn an_abandoned_question_leaves_the_queue() {
        let mut s = state();
        let (pending, answer) = PendingApproval::new(ApprovalSubject::Command("sleep 1".into()));
        handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
        crate::app::update::before_frame(&mut s);
        assert_eq!(scope(&s), Some(Scope::Approval));
        // Ctrl+C reaches the kernel through the overlay.
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            crate::keymap::lookup(&s.key_scopes(), &ctrl_c),
            Some(Action::Interrupt)
        );
        // The interrupted cell drops its side; the next kernel event prunes.
        drop(answer);
        handle_app_event(
            &mut s,
            AppEvent::Kernel(crate::workbench::kernel::KernelUpdate::Restarted {
                reason: "test".into(),
            }),
        );
        assert!(s.approvals.is_empty());
    }

    /// A question arriving while the user types takes none of the keys
    /// typed before a frame showed it: "yes" meant for the composer never
    /// approves a cell.
    #[test]
    fn keys_typed_before_a_question_is_drawn_go_to_the_composer() {
        let mut s = state();
        let (pending, mut answer) = PendingApproval::new(ApprovalSubject::Cell("rm()".into()));
        handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
        for c in "yes".chars() {
            handle_terminal_event(
                &mut s,
                Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
            );
        }
        assert_eq!(s.conversation.composer.lines(), ["yes"]);
        assert!(answer.try_recv().is_err(), "nothing answered the question");
        assert_eq!(s.approvals.pending.len(), 1);
        // Once drawn, it takes the keys.
        key(&mut s, KeyCode::Char('y'));
        assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));
        assert_eq!(s.conversation.composer.lines(), ["yes"]);
    }

    /// The layer stack puts a question above any overlay: with the file
    /// picker open under it, typing and paste go to the denial reason (they
    /// used to reach the picker's query).
    #[test]
    fn a_question_above_an_open_picker_takes_the_typing_and_the_paste() {
        let mut s = state();
        crate::app::update::apply(&mut s, Action::OpenPicker);
        assert!(matches!(
            s.overlay(),
            Some(crate::overlays::Overlay::Picker(_))
        ));
        let (pending, _answer) = PendingApproval::new(ApprovalSubject::Command("ls".into()));
        handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
        key(&mut s, KeyCode::Char('d'));
        assert_eq!(scope(&s), Some(Scope::ApprovalReason));
        for c in "no".chars() {
            key(&mut s, KeyCode::Char(c));
        }
        handle_terminal_event(&mut s, Event::Paste(" thanks".into()));
        assert_eq!(
            s.approvals.reason.as_ref().map(|r| r.text()),
            Some("no thanks")
        );
        let Some(crate::overlays::Overlay::Picker(picker)) = s.overlay() else {
            panic!("the picker stays open under the question")
        };
        assert_eq!(picker.query.text(), "", "nothing reached the picker");
    }

    #[tokio::test]
    async fn auto_and_deny_modes_answer_without_asking() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Auto);
        assert_eq!(broker.check("ls").await, Approval::Allow);
        assert_eq!(broker.approve_cell("x = 1").await, Approval::Allow);
        broker.set_mode(ApprovalMode::Deny);
        assert!(matches!(broker.check("ls").await, Approval::Deny(_)));
        assert!(rx.try_recv().is_err());
        assert_eq!(broker.asked(), 0);
    }

    /// Issue 25: in `review` mode a hunk taller than the overlay is
    /// accepted only once its last row was drawn; rejecting never waits.
    #[test]
    fn an_accepted_hunk_waits_for_its_end_a_rejected_one_does_not() {
        use crate::kernel::caps::{Prior, WriteProposal};
        use crate::workbench::write_review::WriteReviewState;
        let before: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 0\n", "first\n").replace(
            "line 60\n",
            &(0..40).map(|i| format!("new {i}\n")).collect::<String>(),
        );
        let proposal = WriteProposal {
            path: "/tmp/demo/a.py".into(),
            user_path: "a.py".into(),
            before: Prior::Bytes(before.into_bytes()),
            after: after.into_bytes(),
        };
        let review = WriteReviewState::new(&proposal, true);
        assert_eq!(review.hunk_count(), 2);
        let mut s = state();
        handle_terminal_event(&mut s, Event::Resize(80, 20));
        let (pending, mut answer) = PendingApproval::new(ApprovalSubject::Write(Box::new(review)));
        handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
        // The first hunk is short: rejected at once.
        key(&mut s, KeyCode::Char('n'));
        crate::app::update::before_frame(&mut s);
        s.approvals
            .clock
            .advance(crate::app::approvals::HUNK_SETTLE);
        // The second (40 added lines) is taller: `y` waits for its end.
        key(&mut s, KeyCode::Char('y'));
        assert!(answer.try_recv().is_err(), "accepted unread");
        assert!(s.approvals.refused());
        key(&mut s, KeyCode::End);
        key(&mut s, KeyCode::Char('y'));
        let Ok(ApprovalDecision::AllowPart { rejected, .. }) = answer.try_recv() else {
            panic!("a partial write once the end was drawn")
        };
        assert_eq!(rejected, 1);
    }

    #[tokio::test]
    async fn switching_to_auto_answers_what_waits() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.workbench.services.approvals = Some(broker.clone());
        let asked = tokio::spawn(broker.check("make test"));
        let ev = rx.recv().await.unwrap();
        handle_app_event(&mut s, ev);
        crate::app::safety::slash_command(&mut s, "auto");
        assert_eq!(s.workbench.safety.mode, ApprovalMode::Auto);
        assert_eq!(asked.await.unwrap(), Approval::Allow);
        assert!(s.approvals.is_empty());
    }
}

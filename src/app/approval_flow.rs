//! How the approval overlay changes the state: requests join the queue,
//! keys and clicks answer the front one, a denial's reason is typed in
//! place and travels back to the code that asked.

use crossterm::event::KeyEvent;

use super::approvals::PendingApproval;
use super::line_input::LineInput;
use super::state::AppState;
use crate::kernel::caps::ApprovalDecision;
use crate::keymap::Action;

/// What a denial without a typed reason tells the code.
pub const DEFAULT_DENIAL: &str = "the user denied it";

/// A choice in the overlay (a key or a click).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Once,
    Always,
    Deny,
}

/// A request arrived. In a mode that does not ask (the user switched while
/// it was on its way) it is answered at once.
pub fn request(state: &mut AppState, pending: PendingApproval) {
    state.approvals.prune();
    if !state.safety.mode.asks() && state.services.approvals.is_some() {
        pending.answer(ApprovalDecision::AllowOnce);
        return;
    }
    state.approvals.pending.push_back(pending);
}

/// The overlay's actions; `false` when `action` is not one of them.
pub fn apply(state: &mut AppState, action: Action) -> bool {
    let queue = &mut state.approvals;
    match action {
        Action::ApproveOnce => choose(state, Choice::Once),
        Action::ApproveAlways => choose(state, Choice::Always),
        Action::StartDenial => choose(state, Choice::Deny),
        Action::DenyNow => {
            queue.answer_front(ApprovalDecision::Deny {
                reason: DEFAULT_DENIAL.to_owned(),
            });
        }
        Action::SendDenial => {
            let typed = queue.reason.take().unwrap_or_default();
            let reason = match typed.text().trim() {
                "" => DEFAULT_DENIAL.to_owned(),
                text => format!("{DEFAULT_DENIAL}: {text}"),
            };
            queue.answer_front(ApprovalDecision::Deny { reason });
        }
        Action::CancelDenial => queue.reason = None,
        _ => return false,
    }
    true
}

/// Picks a choice for the front request (a key or a click).
pub fn choose(state: &mut AppState, choice: Choice) {
    let queue = &mut state.approvals;
    match choice {
        Choice::Once => {
            queue.answer_front(ApprovalDecision::AllowOnce);
        }
        Choice::Always => {
            queue.answer_front(ApprovalDecision::AllowAlways);
        }
        Choice::Deny => {
            if queue.front().is_some() {
                queue.reason = Some(LineInput::default());
            }
        }
    }
}

/// Text typed into the reason line.
pub fn type_reason(state: &mut AppState, key: KeyEvent) -> bool {
    state
        .approvals
        .reason
        .as_mut()
        .is_some_and(|reason| reason.input(key).any())
}

/// Pasted text joins the reason (one line).
pub fn paste_reason(state: &mut AppState, text: &str) -> bool {
    let Some(reason) = &mut state.approvals.reason else {
        return false;
    };
    reason.paste(&text.lines().collect::<Vec<_>>().join(" "))
}

/// A left click on the overlay: the buttons choose, elsewhere nothing.
pub fn click(state: &mut AppState, column: u16, row: u16) -> bool {
    let screen = ratatui::layout::Rect::new(0, 0, state.size.width, state.size.height);
    match crate::screen::approval::button_at(state, screen, column, row) {
        Some(choice) => {
            choose(state, choice);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::approvals::{ApprovalBroker, ApprovalSubject};
    use crate::app::update::{handle_app_event, handle_terminal_event};
    use crate::app::{AppEvent, event};
    use crate::config::Settings;
    use crate::kernel::caps::{Approval, ApprovalPolicy};
    use crate::keymap::Scope;
    use crate::sandbox::ApprovalMode;
    use crossterm::event::Event;
    use crossterm::event::{KeyCode, KeyModifiers};

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
        s.services.approvals = Some(broker.clone());
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

    #[tokio::test]
    async fn a_denied_command_carries_the_typed_reason() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.services.approvals = Some(broker.clone());
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
            AppEvent::Kernel(crate::app::kernel::KernelUpdate::Restarted {
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
            s.overlay,
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
        let Some(crate::overlays::Overlay::Picker(picker)) = &s.overlay else {
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

    #[tokio::test]
    async fn switching_to_auto_answers_what_waits() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let mut s = state();
        s.services.approvals = Some(broker.clone());
        let asked = tokio::spawn(broker.check("make test"));
        let ev = rx.recv().await.unwrap();
        handle_app_event(&mut s, ev);
        crate::app::safety::slash_command(&mut s, "auto");
        assert_eq!(s.safety.mode, ApprovalMode::Auto);
        assert_eq!(asked.await.unwrap(), Approval::Allow);
        assert!(s.approvals.is_empty());
    }
}

//! Approvals driven through `update` and the frame, as keys and the
//! agent's questions reach them.

use crate::app::AppEvent;
use crate::app::AppState;
use crate::app::update::{handle_app_event, handle_terminal_event};
use crate::config::Settings;
use crate::kernel::caps::ApprovalDecision;
use crate::kernel::caps::{Approval, ApprovalPolicy};
use crate::keymap::Action;
use crate::keymap::Scope;
use crate::sandbox::ApprovalMode;
use crate::workbench::approvals::ApprovalSubject;
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
    s.workbench.services_mut().approvals = Some(broker.clone());
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
    s.workbench.services_mut().approvals = Some(broker.clone());
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
    s.workbench.services_mut().approvals = Some(broker.clone());
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
        .advance(crate::overlays::approval::HUNK_SETTLE);
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
    s.workbench.services_mut().approvals = Some(broker.clone());
    let asked = tokio::spawn(broker.check("make test"));
    let ev = rx.recv().await.unwrap();
    handle_app_event(&mut s, ev);
    crate::app::safety::slash_command(&mut s, "auto");
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Auto);
    assert_eq!(asked.await.unwrap(), Approval::Allow);
    assert!(s.approvals.is_empty());
}

/// A question on its way when the user switched to `deny` is refused when
/// it arrives, never allowed (a reviewer found `deny` answered it
/// `AllowOnce`, as `auto` does): the command does not run.
#[tokio::test]
async fn a_question_arriving_in_deny_mode_is_refused() {
    let (tx, mut rx) = event::channel();
    let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
    let mut s = state();
    s.workbench.services_mut().approvals = Some(broker.clone());
    let asked = tokio::spawn(broker.check("rm -rf build"));
    let in_flight = rx.recv().await.unwrap();
    // The switch lands before the loop reads the question.
    broker.set_mode(ApprovalMode::Deny);
    s.workbench.safety_mut().mode = ApprovalMode::Deny;
    handle_app_event(&mut s, in_flight);
    assert!(matches!(asked.await.unwrap(), Approval::Deny(_)));
    assert!(s.approvals.pending.is_empty());
}

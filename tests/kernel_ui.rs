//! The kernel's face in the workbench: the approval overlay (queue, code,
//! buttons, reason line), the approval mode in the status bar, and the
//! variables inspector (changed markers, long previews, sorting, filtering,
//! the detail view). insta snapshots through ratatui's `TestBackend`.

#[path = "support/frames.rs"]
mod frames;
use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::app::{AppEvent, AppState};
use hello_tui::config::Settings;
use hello_tui::kernel::caps::{ApprovalDecision, Prior, WriteProposal};
use hello_tui::keymap::PaneId;
use hello_tui::overlays::Overlay;
use hello_tui::overlays::variable::VariableDetail;
use hello_tui::sandbox::{ApprovalMode, SandboxStatus};
use hello_tui::theme::Theme;
use hello_tui::workbench::approvals::{ApprovalSubject, PendingApproval};
use hello_tui::workbench::write_review::WriteReviewState;
use hello_tui::workbench::{KernelView, VariableRow};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::oneshot;

fn state() -> AppState {
    let settings = Settings::defaults();
    let mut s = AppState::new("/work/demo".into(), settings);
    *s.workbench.kernel_mut() = KernelView::Idle {
        python: "3.12.3".into(),
    };
    s.workbench.safety_mut().sandbox = Some(SandboxStatus::Enforced {
        abi: 6,
        network_confined: true,
    });
    s.workbench.safety_mut().confined = true;
    s
}

fn draw(state: &mut AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    frames::draw_settled(state, &Theme::builtin_default(), width, height)
}

fn text(terminal: &Terminal<TestBackend>) -> String {
    terminal.backend().to_string()
}

/// A key typed after a frame: what is on screen may take it.
fn press(state: &mut AppState, code: KeyCode) {
    hello_tui::app::update::before_frame(state);
    handle_terminal_event(state, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn ask(state: &mut AppState, subject: ApprovalSubject) -> oneshot::Receiver<ApprovalDecision> {
    let (pending, answer) = PendingApproval::new(subject);
    handle_app_event(state, AppEvent::ApprovalRequested(pending));
    // Drawn before the user answers it.
    hello_tui::app::update::before_frame(state);
    answer
}

/// Route 3: an OSC sequence once hid `touch /tmp/HIDDEN` from the overlay.
/// Every control character is shown (never dropped), the command is
/// flagged, and the text approved is the text that runs.
#[test]
fn approval_overlay_shows_hidden_control_characters_and_flags_them() {
    let mut s = state();
    let command = "echo SAFE \u{1b}]0 ; touch /tmp/HIDDEN ; \u{7}";
    let mut answer = ask(&mut s, ApprovalSubject::Command(command.into()));
    let screen = text(&draw(&mut s, 100, 24));
    assert!(
        screen.contains("echo SAFE ␛]0 ; touch /tmp/HIDDEN ; ␇"),
        "{screen}"
    );
    assert!(screen.contains("Contains control or invisible characters"));
    insta::assert_snapshot!("approval_command_with_control_characters", screen);
    assert_eq!(s.approvals.front().unwrap().subject.text(), command);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowOnce);
}

/// A question a `PreToolUse` hook asked for says so: the title and the
/// hook's reason in the warning colour, where the intro would be.
#[test]
fn approval_overlay_says_a_hook_asked_and_why() {
    let mut s = state();
    let (pending, _answer) = PendingApproval::new(ApprovalSubject::Command("git push".into()));
    let pending = pending.asked_by_hook("pushes need a look".into());
    handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
    let terminal = draw(&mut s, 100, 24);
    let screen = text(&terminal);
    assert!(
        screen.contains("Approve shell command · a hook asks"),
        "{screen}"
    );
    assert!(
        screen.contains("A PreToolUse hook asks you: pushes need a look"),
        "{screen}"
    );
    let warning = Theme::builtin_default().roles.warning.fg;
    assert_eq!(
        Some(fg_of_row(&terminal, "A PreToolUse hook asks you")),
        warning
    );
    assert_eq!(Some(fg_of_row(&terminal, "· a hook asks")), warning);
    insta::assert_snapshot!("approval_asked_by_a_hook", screen);

    // A long reason wraps (three rows at most) instead of losing its end,
    // and the buttons stay where a click finds them.
    press(&mut s, KeyCode::Char('y'));
    let long = "the hook `/home/me/.config/hooks/guard-production-pushes.sh --strict` \
                failed (took longer than its timeout of 60 s and was killed)";
    let (pending, mut answer) = PendingApproval::new(ApprovalSubject::Command("git push".into()));
    handle_app_event(
        &mut s,
        AppEvent::ApprovalRequested(pending.asked_by_hook(long.into())),
    );
    let screen = text(&draw(&mut s, 70, 20));
    assert!(screen.contains("was killed)"), "{screen}");
    insta::assert_snapshot!("approval_asked_by_a_hook_long_reason", screen);
    let row = screen
        .lines()
        .position(|line| line.contains(" y Run once"))
        .expect("the buttons are drawn");
    let column = screen
        .lines()
        .nth(row)
        .unwrap()
        .chars()
        .position(|c| c == 'y')
        .unwrap();
    hello_tui::app::update::before_frame(&mut s);
    handle_terminal_event(
        &mut s,
        Event::Mouse(crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
            column: u16::try_from(column).unwrap(),
            row: u16::try_from(row).unwrap(),
            modifiers: KeyModifiers::NONE,
        }),
    );
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));
}

/// An MCP tool call shows the server, the tool and the arguments as they
/// are sent; "a" answers "always this tool".
#[test]
fn approval_overlay_shows_an_mcp_tool_call_with_its_arguments() {
    let mut s = state();
    let call = hello_tui::mcp::ToolCall {
        server: "github".into(),
        tool: "create_issue".into(),
        called_as: "create_issue".into(),
        arguments: serde_json::json!({"repo": "me/app", "title": "Crash on start", "labels": ["bug"]}),
    };
    let mut answer = ask(
        &mut s,
        ApprovalSubject::ToolCall {
            server: call.server.clone(),
            tool: call.tool.clone(),
            text: call.text(),
        },
    );
    let screen = text(&draw(&mut s, 100, 24));
    for needle in [
        "Approve MCP tool call",
        "tool `create_issue` of the MCP server `github`",
        "\"title\": \"Crash on start\"",
        "Always this tool",
    ] {
        assert!(
            screen.contains(needle),
            "{needle:?} not on screen:\n{screen}"
        );
    }
    insta::assert_snapshot!("approval_mcp_tool_call", screen);
    press(&mut s, KeyCode::Char('a'));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowAlways);
}

#[test]
fn approval_overlay_shows_the_exact_command_and_the_queue() {
    let mut s = state();
    let mut first = ask(
        &mut s,
        ApprovalSubject::Command("rm -rf build && cargo build --release 2>&1 | tail -n 20".into()),
    );
    let mut second = ask(&mut s, ApprovalSubject::Command("git push --force".into()));
    insta::assert_snapshot!("approval_command_with_queue", text(&draw(&mut s, 100, 24)));

    // Typing a reason.
    press(&mut s, KeyCode::Char('d'));
    for c in "not now".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    insta::assert_snapshot!("approval_typing_a_reason", text(&draw(&mut s, 100, 24)));
    press(&mut s, KeyCode::Enter);
    assert_eq!(
        first.try_recv().unwrap(),
        ApprovalDecision::Deny {
            reason: "the user denied it: not now".into()
        }
    );
    // The second request is next, alone now.
    assert_eq!(s.approvals.pending.len(), 1);
    assert_eq!(
        s.approvals.front().unwrap().subject.text(),
        "git push --force"
    );
    press(&mut s, KeyCode::Esc);
    assert!(matches!(
        second.try_recv().unwrap(),
        ApprovalDecision::Deny { .. }
    ));
    assert!(s.approvals.is_empty());
}

#[test]
fn approval_overlay_for_a_cell_is_highlighted() {
    let mut s = state();
    let _answer = ask(
        &mut s,
        ApprovalSubject::Cell("import os\nfor name in os.listdir('.'):\n    print(name)".into()),
    );
    let terminal = draw(&mut s, 80, 20);
    insta::assert_snapshot!("approval_cell", text(&terminal));
    // Python keywords get a colour from the highlighter.
    let buf = terminal.backend().buffer();
    let row = (0..20)
        .find(|y| {
            (0..80)
                .map(|x| buf[(x, *y)].symbol())
                .collect::<String>()
                .contains("import os")
        })
        .expect("the code is drawn");
    let x = (0..80).find(|x| buf[(*x, row)].symbol() == "i").unwrap();
    assert_ne!(
        buf[(x, row)].fg,
        buf[(x + 7, row)].fg,
        "`import` is coloured"
    );
}

/// Issue 19: the first sub-call of a turn asks with what it will cost, and
/// "always" covers every later sub-call.
#[test]
fn approval_overlay_for_sub_calls_says_what_they_may_use() {
    let mut s = state();
    let mut answer = ask(
        &mut s,
        ApprovalSubject::Subcalls(
            "8 sub-calls to small-model @ http://localhost:11434/v1\n\
             this turn: at most 64 calls and 200000 tokens\n\
             first prompt: Summarise this part of the log:"
                .into(),
        ),
    );
    let terminal = draw(&mut s, 80, 20);
    insta::assert_snapshot!("approval_subcalls", text(&terminal));
    press(&mut s, KeyCode::Char('a'));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowAlways);
}

#[test]
fn a_long_cell_scrolls_so_all_of_it_can_be_read() {
    let mut s = state();
    let code: String = (0..40).map(|i| format!("step_{i} = {i}\n")).collect();
    let _answer = ask(&mut s, ApprovalSubject::Cell(code));
    let top = text(&draw(&mut s, 80, 20));
    assert!(top.contains("step_0 = 0"));
    assert!(
        top.contains("rows 1–12 of 40 · 40 lines, 500 characters"),
        "{top}"
    );
    for _ in 0..30 {
        press(&mut s, KeyCode::Down);
    }
    insta::assert_snapshot!("approval_long_cell_scrolled", text(&draw(&mut s, 80, 20)));
    let scrolled = text(&draw(&mut s, 80, 20));
    assert!(scrolled.contains("step_28 = 28"), "{scrolled}");
    assert!(scrolled.contains("step_39 = 39"), "{scrolled}");
    assert!(scrolled.contains("rows 29–40 of 40"), "{scrolled}");
    assert!(!s.approvals.is_empty(), "scrolling answers nothing");
}

/// Issue 25, route 9: one line of 334 characters hid its payload behind
/// 300 spaces — the overlay showed none of its rows ("… 4 more lines
/// below") and ↓ did not scroll. Long lines wrap, the overlay says how
/// long the text is, and where it all fits it is approved at once.
#[test]
fn a_long_one_line_command_wraps_with_its_tail_in_view() {
    let command = format!("echo harmless{}; echo HIDDEN-PAYLOAD", " ".repeat(300));
    let mut s = state();
    let mut answer = ask(&mut s, ApprovalSubject::Command(command.clone()));
    let screen = text(&draw(&mut s, 100, 24));
    assert!(screen.contains("; echo HIDDEN-PAYLOAD"), "{screen}");
    assert!(screen.contains("1 line, 334 characters"), "{screen}");
    insta::assert_snapshot!("approval_long_line_wrapped", screen);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));

    // On a small screen its rows do not all fit: ↓ brings the tail.
    let mut s = state();
    handle_terminal_event(&mut s, Event::Resize(80, 12));
    let mut answer = ask(&mut s, ApprovalSubject::Command(command));
    let top = text(&draw(&mut s, 80, 12));
    assert!(!top.contains("HIDDEN-PAYLOAD"), "{top}");
    assert!(
        top.contains("rows 1–4 of 5 · 1 line, 334 characters"),
        "{top}"
    );
    press(&mut s, KeyCode::Char('y'));
    assert!(answer.try_recv().is_err(), "its tail was never on screen");
    press(&mut s, KeyCode::Down);
    let scrolled = text(&draw(&mut s, 80, 12));
    assert!(scrolled.contains("; echo HIDDEN-PAYLOAD"), "{scrolled}");
    assert!(scrolled.contains("rows 2–5 of 5"), "{scrolled}");
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));
}

/// A terminal 8 rows high still shows the code (the margin goes first),
/// so End reaches the last row and `y` approves; at 5 rows nothing can be
/// shown and the overlay says to make it taller instead of counting rows
/// that are not there (a tester found `rows 1–0 of 201` and no way to
/// approve at 30x8).
#[test]
fn a_short_terminal_still_shows_a_row_of_code_to_approve() {
    let code: String = (0..201).map(|i| format!("step_{i} = {i}\n")).collect();
    let mut s = state();
    let mut answer = ask(&mut s, ApprovalSubject::Cell(code.clone()));
    let screen = text(&draw(&mut s, 30, 8));
    assert!(screen.contains("step_0"), "{screen}");
    assert!(!screen.contains("rows 1–0"), "{screen}");
    press(&mut s, KeyCode::End);
    let end = text(&draw(&mut s, 30, 8));
    assert!(end.contains("step_200"), "{end}");
    insta::assert_snapshot!("approval_short_terminal_at_the_end", end);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));

    let mut answer = ask(&mut s, ApprovalSubject::Cell(code));
    let tiny = text(&draw(&mut s, 40, 5));
    assert!(tiny.contains("too short"), "{tiny}");
    press(&mut s, KeyCode::End);
    press(&mut s, KeyCode::Char('y'));
    assert!(answer.try_recv().is_err(), "approved unseen");
}

/// The rows of the text on screen: each `step_N` drawn.
fn steps_on(screen: &str) -> Vec<usize> {
    screen
        .split("step_")
        .skip(1)
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}

/// Issue 25: every row of a 200-line cell is reachable a page at a time
/// (PgDn keeps a row of context, so no row is skipped), Home and End go to
/// the ends, and the overlay says where it is and how long the text is.
#[test]
fn a_200_line_cell_pages_to_its_end() {
    let code: String = (0..200).map(|i| format!("step_{i} = {i}\n")).collect();
    let mut s = state();
    let _answer = ask(&mut s, ApprovalSubject::Cell(code));
    let mut seen = std::collections::BTreeSet::new();
    let mut screen = text(&draw(&mut s, 80, 24));
    assert!(
        screen.contains("rows 1–16 of 200 · 200 lines, 2780 characters"),
        "{screen}"
    );
    for _ in 0..13 {
        seen.extend(steps_on(&screen));
        press(&mut s, KeyCode::PageDown);
        screen = text(&draw(&mut s, 80, 24));
    }
    seen.extend(steps_on(&screen));
    insta::assert_snapshot!("approval_200_lines_paged_to_the_end", screen);
    assert_eq!(seen, (0..200).collect(), "every row was on screen once");
    press(&mut s, KeyCode::Home);
    let top = text(&draw(&mut s, 80, 24));
    assert_eq!(steps_on(&top).first(), Some(&0), "{top}");
    press(&mut s, KeyCode::End);
    let end = text(&draw(&mut s, 80, 24));
    assert_eq!(steps_on(&end).last(), Some(&199), "{end}");
    press(&mut s, KeyCode::PageUp);
    press(&mut s, KeyCode::Up);
    let back = text(&draw(&mut s, 80, 24));
    assert!(back.contains("rows 169–184 of 200"), "{back}");
}

/// Issue 25: what is approved must have been on screen whole. An approve
/// key (or a click) before the end was seen does nothing and the overlay
/// says why; denying needs no reading; once the end was drawn, `y` runs it.
#[test]
fn an_approval_waits_until_the_end_was_on_screen() {
    let code: String = (0..200).map(|i| format!("step_{i} = {i}\n")).collect();
    let mut s = state();
    let mut answer = ask(&mut s, ApprovalSubject::Cell(code.clone()));
    draw(&mut s, 80, 24);
    press(&mut s, KeyCode::Char('y'));
    press(&mut s, KeyCode::Char('a'));
    let terminal = draw(&mut s, 80, 24);
    let screen = text(&terminal);
    insta::assert_snapshot!("approval_refused_before_the_end", screen);
    assert!(answer.try_recv().is_err(), "nothing approved");
    assert!(
        screen.contains("Not approved: scroll to the end first"),
        "{screen}"
    );
    // The approve buttons look unavailable; the deny button does not.
    let muted = Theme::builtin_default().roles.muted.fg.unwrap();
    assert_eq!(fg_of_row(&terminal, "Run once"), muted);
    assert_ne!(fg_of_row(&terminal, "Deny…"), muted);
    // A click on "Run once" is refused too.
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Run once"))
        .expect("buttons drawn");
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: line.chars().position(|c| c == 'R').unwrap() as u16,
        row: row as u16,
        modifiers: KeyModifiers::NONE,
    };
    handle_terminal_event(&mut s, Event::Mouse(click));
    assert!(
        answer.try_recv().is_err(),
        "a click approves nothing either"
    );
    // Scrolled to the end, but not drawn yet: still nothing.
    press(&mut s, KeyCode::End);
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE)),
    );
    assert!(answer.try_recv().is_err(), "the end was not drawn yet");
    let end = text(&draw(&mut s, 80, 24));
    assert!(end.contains("step_199 = 199"), "{end}");
    assert!(!end.contains("scroll to the end"), "{end}");
    // Back at the top, the end stays seen.
    press(&mut s, KeyCode::Home);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));

    // Esc denies at once, unread.
    let mut answer = ask(&mut s, ApprovalSubject::Cell(code));
    draw(&mut s, 80, 24);
    press(&mut s, KeyCode::Esc);
    assert!(matches!(
        answer.try_recv(),
        Ok(ApprovalDecision::Deny { .. })
    ));
}

/// Issue 25, route 6: a `y` typed while no question is on screen (a thread
/// an approved cell left behind typing into the terminal) lands in the
/// composer; the next question, once drawn, is still unanswered.
#[test]
fn a_y_typed_with_no_question_on_screen_approves_nothing() {
    let mut s = state();
    let mut first = ask(&mut s, ApprovalSubject::Command("ls".into()));
    draw(&mut s, 100, 24);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(first.try_recv(), Ok(ApprovalDecision::AllowOnce));
    draw(&mut s, 100, 24);
    press(&mut s, KeyCode::Char('y'));
    // The next question arrives; a `y` typed before a frame shows it.
    let (pending, mut second) = PendingApproval::new(ApprovalSubject::Command("rm -rf ~".into()));
    handle_app_event(&mut s, AppEvent::ApprovalRequested(pending));
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE)),
    );
    let screen = text(&draw(&mut s, 100, 24));
    assert!(screen.contains("rm -rf ~"), "{screen}");
    assert!(
        second.try_recv().is_err(),
        "no key of the user's approved it"
    );
    assert_eq!(s.conversation.composer.lines(), ["yy"]);
}

fn write_subject(per_hunk: bool) -> ApprovalSubject {
    let before: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let after = before
        .replace("line 2\n", "line two\n")
        .replace("line 11\n", "line eleven\nline 11½\n");
    let proposal = WriteProposal {
        path: "/work/demo/src/app.py".into(),
        user_path: "src/app.py".into(),
        before: Prior::Bytes(before.into_bytes()),
        after: after.into_bytes(),
    };
    ApprovalSubject::Write(Box::new(WriteReviewState::new(&proposal, per_hunk)))
}

/// The foreground colour of the first cell on the row holding `needle`.
fn fg_of_row(terminal: &Terminal<TestBackend>, needle: &str) -> ratatui::style::Color {
    let buf = terminal.backend().buffer();
    let width = buf.area.width;
    let row = (0..buf.area.height)
        .find(|y| {
            (0..width)
                .map(|x| buf[(x, *y)].symbol())
                .collect::<String>()
                .contains(needle)
        })
        .unwrap_or_else(|| panic!("{needle} is drawn"));
    let x = (0..width)
        .find(|x| {
            (*x..width)
                .map(|x| buf[(x, row)].symbol())
                .collect::<String>()
                .starts_with(needle)
        })
        .unwrap();
    buf[(x, row)].fg
}

/// Issue 17: `ask` mode shows a write as its whole diff, additions and
/// removals in different colours, with write / always / deny.
#[test]
fn a_write_in_ask_mode_shows_its_whole_diff() {
    let mut s = state();
    let mut answer = ask(&mut s, write_subject(false));
    let terminal = draw(&mut s, 80, 24);
    insta::assert_snapshot!("approval_write_whole", text(&terminal));
    assert_ne!(
        fg_of_row(&terminal, "+line two"),
        fg_of_row(&terminal, "-line 2"),
        "added and removed lines differ in colour"
    );
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(answer.try_recv(), Ok(ApprovalDecision::AllowOnce));
}

/// Issue 17: `review` mode walks a write hunk by hunk (`git add -p`'s
/// keys); the answer holds only the accepted hunks, and each hunk must be
/// drawn before a key decides it.
#[test]
fn a_write_in_review_mode_is_decided_hunk_by_hunk() {
    let mut s = state();
    let mut answer = ask(&mut s, write_subject(true));
    let terminal = draw(&mut s, 80, 24);
    insta::assert_snapshot!("approval_write_hunk", text(&terminal));
    press(&mut s, KeyCode::Char('y'));
    // Not drawn yet: the second hunk takes no key.
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE)),
    );
    assert!(answer.try_recv().is_err());
    let second = text(&draw(&mut s, 80, 24));
    assert!(second.contains("hunk 2 of 2"), "{second}");
    assert!(second.contains("+line eleven"), "{second}");
    // Drawn, but only just: a fast second `y` does not decide it.
    press(&mut s, KeyCode::Char('y'));
    assert!(
        answer.try_recv().is_err(),
        "a hunk nobody read is not accepted"
    );
    // Back to the first, then reject it and accept the rest.
    press(&mut s, KeyCode::Char('k'));
    assert!(text(&draw(&mut s, 80, 24)).contains("hunk 1 of 2"));
    press(&mut s, KeyCode::Char('n'));
    draw(&mut s, 80, 24);
    s.approvals
        .clock
        .advance(hello_tui::overlays::approval::HUNK_SETTLE);
    press(&mut s, KeyCode::Char('a'));
    let Ok(ApprovalDecision::AllowPart { text, rejected }) = answer.try_recv() else {
        panic!("expected a partial write")
    };
    assert_eq!(rejected, 1);
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("line 2\n") && text.contains("line eleven\nline 11½\n"),
        "{text}"
    );
}

#[test]
fn clicking_a_button_answers() {
    let mut s = state();
    let mut answer = ask(&mut s, ApprovalSubject::Command("ls".into()));
    let terminal = draw(&mut s, 100, 24);
    let screen = text(&terminal);
    let (row, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Run once"))
        .expect("buttons drawn");
    let col = line.chars().position(|c| c == 'R').unwrap() as u16;
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: col,
        row: row as u16,
        modifiers: KeyModifiers::NONE,
    };
    // A click elsewhere does nothing.
    handle_terminal_event(
        &mut s,
        Event::Mouse(MouseEvent {
            column: 0,
            row: 0,
            ..click
        }),
    );
    assert!(answer.try_recv().is_err());
    handle_terminal_event(&mut s, Event::Mouse(click));
    assert_eq!(answer.try_recv().unwrap(), ApprovalDecision::AllowOnce);
    assert!(s.approvals.is_empty());
}

#[test]
fn full_mode_is_a_warning_in_the_status_bar() {
    let mut s = state();
    s.workbench.safety_mut().mode = ApprovalMode::Full;
    s.workbench.safety_mut().confined = false;
    let terminal = draw(&mut s, 120, 3);
    let buf = terminal.backend().buffer();
    let status_row = 2;
    let line: String = (0..120).map(|x| buf[(x, status_row)].symbol()).collect();
    assert!(line.contains("full · no sandbox"), "{line}");
    let x = line.find("full").unwrap() as u16;
    let warning = Theme::builtin_default().roles.warning.fg;
    assert_eq!(buf[(x, status_row)].fg, warning.unwrap());

    let mut s = state();
    let terminal = draw(&mut s, 120, 3);
    let line: String = (0..120)
        .map(|x| terminal.backend().buffer()[(x, 2)].symbol())
        .collect();
    assert!(line.contains("ask · sandboxed"), "{line}");
}

#[test]
fn slash_approval_switches_mode_and_reports_it() {
    let mut s = state();
    for c in "/approval auto".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Auto);
    press(&mut s, KeyCode::F(4));
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Ask);
    for c in "/approval yolo".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    press(&mut s, KeyCode::Enter);
    let last = &s.workbench.transcript().last().unwrap().text;
    assert!(last.contains("unknown approval mode"), "{last}");
    // Without a sandbox, auto falls back to ask and says why.
    s.workbench.safety_mut().sandbox = Some(SandboxStatus::Unavailable("no Landlock here".into()));
    for c in "/approval auto".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Ask);
    assert!(
        s.workbench
            .transcript()
            .iter()
            .any(|m| m.text.contains("no Landlock here"))
    );
}

/// Types `text` and Enter into the composer, a frame drawn before each key.
fn submit(state: &mut AppState, text: &str) {
    for c in text.chars() {
        press(state, KeyCode::Char(c));
    }
    press(state, KeyCode::Enter);
}

/// A key arriving before any frame was drawn (typed ahead, or injected).
fn typed_ahead(state: &mut AppState, code: KeyCode) {
    handle_terminal_event(state, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn asking_to_leave_the_sandbox(state: &AppState) -> bool {
    matches!(
        state.overlay(),
        Some(Overlay::Confirm(c))
            if matches!(c.question, hello_tui::workbench::Question::LeaveSandbox { .. })
    )
}

/// Issue 25, route 5: `/approval full` typed into the composer (by code
/// pushing keys into the terminal) turned the sandbox off. Entering `full`
/// is now a question of its own, saying what it turns off; it takes no key
/// typed before it was drawn, No is the default (n, Esc, Enter), and only
/// `y` after it was drawn switches. Leaving `full` needs no question.
#[test]
fn approval_full_asks_first_and_defaults_to_no() {
    let mut s = state();
    for c in "/approval full".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    // Enter, then `y`, before a frame showed the question.
    typed_ahead(&mut s, KeyCode::Enter);
    typed_ahead(&mut s, KeyCode::Char('y'));
    assert!(asking_to_leave_the_sandbox(&s));
    assert_eq!(
        s.workbench.safety().mode,
        ApprovalMode::Ask,
        "a typed-ahead y is no answer"
    );
    assert_eq!(s.conversation.composer.lines(), ["y"]);
    let screen = text(&draw(&mut s, 100, 30));
    insta::assert_snapshot!("approval_full_question", screen);
    for needle in [
        "writing outside the workspace",
        "the network",
        "No is the default",
    ] {
        assert!(screen.contains(needle), "{needle:?}:\n{screen}");
    }
    press(&mut s, KeyCode::Char('n'));
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Ask);
    assert!(s.overlay().is_none());
    press(&mut s, KeyCode::Backspace);

    for no in [KeyCode::Esc, KeyCode::Enter] {
        submit(&mut s, "/approval full");
        assert!(asking_to_leave_the_sandbox(&s));
        draw(&mut s, 100, 30);
        press(&mut s, no);
        assert_eq!(
            s.workbench.safety().mode,
            ApprovalMode::Ask,
            "{no:?} keeps the mode"
        );
        assert!(s.overlay().is_none());
    }
    let last = &s.workbench.transcript().last().unwrap().text;
    assert!(last.contains("stays `ask`"), "{last}");

    // Answered, then asked again in the same burst: the first question
    // having been drawn does not make the second one seen.
    submit(&mut s, "/approval full");
    draw(&mut s, 100, 30);
    press(&mut s, KeyCode::Char('n'));
    for c in "/approval full".chars() {
        typed_ahead(&mut s, KeyCode::Char(c));
    }
    typed_ahead(&mut s, KeyCode::Enter);
    typed_ahead(&mut s, KeyCode::Char('y'));
    assert!(asking_to_leave_the_sandbox(&s));
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Ask);

    // Drawn, then `y`: the sandbox goes.
    draw(&mut s, 100, 30);
    press(&mut s, KeyCode::Char('y'));
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Full);
    assert!(s.overlay().is_none());
    // Leaving `full` (F4, or any mode by name) asks nothing.
    press(&mut s, KeyCode::F(4));
    assert_eq!(s.workbench.safety().mode, ApprovalMode::Ask);
    assert!(s.overlay().is_none());
}

fn row(
    name: &str,
    type_name: &str,
    summary: &str,
    preview: &str,
    changed_by: Option<u64>,
) -> VariableRow {
    VariableRow {
        name: name.into(),
        type_name: type_name.into(),
        summary: summary.into(),
        preview: preview.into(),
        size: Some(8_000_056),
        changed_by,
    }
}

fn with_variables() -> AppState {
    let mut s = state();
    s.focus = PaneId::Variables;
    *s.workbench.last_exec_id_mut() = Some(9);
    s.variables.rows = vec![
        row(
            "data",
            "list",
            "len 1000000",
            "[0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225, 256, 289, 324, 361, 400, …]",
            Some(9),
        ),
        row(
            "grid",
            "ndarray",
            "shape (3, 4) float64",
            "array([[0., 0., 0., 0.], …])",
            Some(4),
        ),
        row("Total", "int", "", "42", Some(2)),
        row(
            "config",
            "dict",
            "len 3",
            "{'debug': True, 'level': 3, 'name': 'demo'}",
            Some(9),
        ),
    ];
    s
}

#[test]
fn variables_pane_sorts_filters_and_marks_changes() {
    let mut s = with_variables();
    let terminal = draw(&mut s, 120, 40);
    insta::assert_snapshot!("variables_by_name", text(&terminal));
    press(&mut s, KeyCode::Char('s'));
    press(&mut s, KeyCode::Char('/'));
    for c in "a".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    insta::assert_snapshot!("variables_by_change_filtered", text(&draw(&mut s, 120, 40)));
    press(&mut s, KeyCode::Char('t'));
    press(&mut s, KeyCode::Char('a'));
    press(&mut s, KeyCode::Enter); // keep the filter
    assert!(!s.variables.view.filtering);
    assert_eq!(s.variables.view.filter.text(), "ata");
    press(&mut s, KeyCode::Enter); // details of the selected variable
    assert_eq!(
        s.overlay(),
        Some(&Overlay::Variable(VariableDetail {
            name: "data".into(),
            scroll: 0
        }))
    );
    insta::assert_snapshot!("variable_detail", text(&draw(&mut s, 100, 30)));
    press(&mut s, KeyCode::Esc);
    press(&mut s, KeyCode::Esc); // clears the filter
    assert_eq!(s.variables.view.filter.text(), "");
    let filtered_out = {
        press(&mut s, KeyCode::Char('/'));
        for c in "zzz".chars() {
            press(&mut s, KeyCode::Char(c));
        }
        text(&draw(&mut s, 120, 40))
    };
    assert!(filtered_out.contains("no variable matches the filter"));
}

#[test]
fn variables_pane_styles_changed_markers() {
    let mut s = with_variables();
    let terminal = draw(&mut s, 120, 40);
    let buf = terminal.backend().buffer();
    // Keep only the variables pane in the styled snapshot.
    let layout = s.layout();
    let area = layout.rect(PaneId::Variables).unwrap();
    let mut pane = ratatui::buffer::Buffer::empty(area);
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            pane[(x, y)] = buf[(x, y)].clone();
        }
    }
    insta::assert_debug_snapshot!("variables_pane_styled", pane);
}

#[test]
fn a_dead_kernel_says_its_variables_are_stale() {
    let mut s = with_variables();
    *s.workbench.kernel_mut() = KernelView::Dead {
        reason: "killed by signal 9".into(),
    };
    let screen = text(&draw(&mut s, 120, 40));
    assert!(screen.contains("Variables (4) · stale"), "{screen}");
    s.variables.rows.clear();
    let screen = text(&draw(&mut s, 120, 40));
    assert!(screen.contains("kernel is not running"));
}

/// A real kernel with numpy: the summary shows shape and dtype.
#[tokio::test(flavor = "multi_thread")]
async fn numpy_arrays_show_their_shape() {
    let has_numpy = std::process::Command::new("python3")
        .args(["-c", "import numpy"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_numpy {
        eprintln!("numpy is not installed: skipping the real-kernel shape case");
        return;
    }
    use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
    let dir = tempfile::tempdir().unwrap();
    let (runtime, _events) = CodeRuntime::new(
        KernelConfig::for_workspace(dir.path()),
        CapabilityRegistry::new(),
    );
    let r = runtime
        .execute("import numpy as np\ngrid = np.zeros((3, 4))", None)
        .await;
    assert!(r.error.is_none(), "{r:?}");
    let described = runtime.describe().await.unwrap();
    let grid = described
        .variables
        .iter()
        .find(|v| v.name == "grid")
        .unwrap();
    let summary = grid.summary.clone().unwrap_or_default();
    assert!(summary.contains("(3, 4)"), "{summary}");
    assert!(summary.contains("float64"), "{summary}");
}

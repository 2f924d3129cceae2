//! The agent in the workbench: insta snapshots of what a turn looks like
//! (streaming text with the status bar's spinner, step and tokens; a cell
//! the model ran; an error notice), and whole turns driven through
//! `update` with the scripted provider and a real kernel.

#[path = "support/anthropic_wire.rs"]
#[allow(dead_code)]
mod anthropic_wire;
#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;

#[path = "support/frames.rs"]
mod frames;
use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::agent::provider::{ScriptedProvider, Usage};
use hello_tui::agent::turn::TurnEvent;
use hello_tui::app::AppState;
use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::config::Settings;
use hello_tui::kernel::caps::DenyAll;
use hello_tui::kernel::{CodeRuntime, ExecOutcome, ExecResult, KernelConfig};
use hello_tui::overlays::Overlay;
use hello_tui::sandbox::{ChildEnv, Confinement};
use hello_tui::theme::Theme;
use hello_tui::workbench::KernelView;
use hello_tui::workbench::agent::AgentUpdate;
use hello_tui::workbench::event::{self, AppEvent, AppEventReceiver};
use hello_tui::workbench::kernel::{CellOrigin, KernelUpdate};
use hello_tui::workbench::transcript::{CellStatus, Speaker};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn state(root: &std::path::Path) -> AppState {
    let settings = Settings::defaults();
    AppState::new(root.to_path_buf(), settings)
}

fn scripted(json: &str) -> Arc<ScriptedProvider> {
    let mut provider = ScriptedProvider::from_json(json).unwrap();
    provider.set_label(hello_tui::agent::setup::DEMO_LABEL);
    Arc::new(provider)
}

fn agent(s: &mut AppState, update: AgentUpdate) {
    handle_app_event(s, AppEvent::Agent(update));
}

fn turn(s: &mut AppState, event: TurnEvent) {
    agent(s, AgentUpdate::Turn(event));
}

fn draw(s: &mut AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    frames::draw_settled(s, &Theme::builtin_default(), width, height)
}

fn region(buffer: &Buffer, area: Rect) -> Buffer {
    let mut out = Buffer::empty(Rect::new(0, 0, area.width, area.height));
    for y in 0..area.height {
        for x in 0..area.width {
            out[(x, y)] = buffer[(area.x + x, area.y + y)].clone();
        }
    }
    out
}

/// A state as the UI sees it mid-turn (no real provider or kernel).
fn busy_demo() -> AppState {
    let mut s = state(std::path::Path::new("/work/demo"));
    s.workbench
        .agent_mut()
        .set_provider(scripted(r#"{"turns":[]}"#));
    *s.workbench.kernel_mut() = KernelView::Idle {
        python: "3.11.7".into(),
    };
    s.workbench.agent_mut().busy = true;
    s.workbench
        .transcript_mut()
        .push(hello_tui::workbench::transcript::PaneEntry::new(
            Speaker::User,
            "why does checkAuth reject users?",
        ));
    s
}

#[test]
fn a_streaming_message_with_spinner_step_and_tokens() {
    let mut s = busy_demo();
    turn(&mut s, TurnEvent::Step(2));
    turn(
        &mut s,
        TurnEvent::Usage(Usage {
            prompt_tokens: 1200,
            completion_tokens: 34,
            total_tokens: 1234,
            ..Usage::default()
        }),
    );
    for piece in [
        "Found it: `check",
        "Auth` returns **false** for every",
        " non-admin\n\n- user",
    ] {
        turn(&mut s, TurnEvent::TextDelta(piece.into()));
    }
    let terminal = draw(&mut s, 100, 16);
    insta::assert_snapshot!(terminal.backend().to_string());
    // One entry, growing in place.
    let assistants = s
        .workbench
        .transcript()
        .iter()
        .filter(|m| m.role == Speaker::Assistant)
        .count();
    assert_eq!(assistants, 1);
}

#[test]
fn a_tool_cell_from_the_agent() {
    let mut s = busy_demo();
    turn(&mut s, TurnEvent::TextDelta("Let me read it.".into()));
    turn(
        &mut s,
        TurnEvent::AssistantMessage {
            text: "Let me read it.".into(),
            message: hello_tui::context::MessageId(0),
        },
    );
    let code = "src = fs.read(\"auth.ts\")\nprint(src.splitlines()[1])";
    turn(
        &mut s,
        TurnEvent::ToolCall {
            id: "call_1".into(),
            code: code.into(),
        },
    );
    let kernel = |s: &mut AppState, update| handle_app_event(s, AppEvent::Kernel(update));
    kernel(
        &mut s,
        KernelUpdate::Queued {
            cell_id: 1,
            code: code.into(),
            origin: CellOrigin::Agent,
        },
    );
    kernel(
        &mut s,
        KernelUpdate::Output {
            cell_id: 1,
            stream: hello_tui::kernel::StreamName::Stdout,
            text: "  if (user.role !== \"admin\") {\n".into(),
        },
    );
    kernel(
        &mut s,
        KernelUpdate::Finished {
            cell_id: 1,
            result: Box::new(ExecResult {
                id: 1,
                ok: true,
                stdout: String::new(),
                stderr: String::new(),
                background: String::new(),
                value_repr: None,
                error: None,
                duration: Duration::from_millis(4),
                outcome: ExecOutcome::Completed,
                files_changed: Vec::new(),
            }),
            waited: Duration::ZERO,
        },
    );
    let terminal = draw(&mut s, 100, 16);
    insta::assert_snapshot!(terminal.backend().to_string());
}

#[test]
fn an_error_notice_stands_out() {
    let mut s = busy_demo();
    turn(&mut s, TurnEvent::TextDelta("Half an ans".into()));
    turn(
        &mut s,
        TurnEvent::AssistantMessage {
            text: "Half an ans\n\n[answer cut off: the stream broke off: connection reset]".into(),
            message: hello_tui::context::MessageId(0),
        },
    );
    turn(
        &mut s,
        TurnEvent::Failed {
            message: "the stream broke off: connection reset".into(),
        },
    );
    agent(&mut s, AgentUpdate::Finished);
    assert!(!s.workbench.agent().busy);
    let terminal = draw(&mut s, 80, 14);
    let pane = region(terminal.backend().buffer(), Rect::new(0, 0, 80, 10));
    insta::assert_snapshot!(format!("{pane:?}"));
}

/// Reasoning streams into its own entry: dimmed, collapsed to its latest
/// lines under a count of the rest, above the answer; Ctrl+O shows it all.
/// The status bar counts what the prompt cache served and stored.
#[test]
fn reasoning_is_a_dimmed_collapsible_block_above_the_answer() {
    let mut s = busy_demo();
    turn(&mut s, TurnEvent::Step(1));
    for piece in [
        "The user asks why checkAuth rejects users.\n",
        "Line 2 compares the role to \"admin\".\n",
        "So every non-admin",
        " is rejected.\nI should say so.",
    ] {
        turn(&mut s, TurnEvent::ReasoningDelta(piece.into()));
    }
    turn(
        &mut s,
        TurnEvent::TextDelta("It only admits **admins**.".into()),
    );
    turn(
        &mut s,
        TurnEvent::Usage(Usage {
            prompt_tokens: 12_400,
            completion_tokens: 90,
            total_tokens: 12_490,
            cache_read_tokens: 11_900,
            cache_write_tokens: 0,
            cuts_silently: false,
        }),
    );
    let terminal = draw(&mut s, 160, 16);
    let text = terminal.backend().to_string();
    assert!(text.contains("│ cache 11.9k read, 0 written"), "{text}");
    assert!(
        !text.contains("The user asks"),
        "collapsed, the first lines are hidden:\n{text}"
    );
    let pane = region(terminal.backend().buffer(), Rect::new(0, 0, 60, 11));
    insta::assert_debug_snapshot!(pane);
    key(&mut s, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let expanded = draw(&mut s, 100, 16).backend().to_string();
    assert!(
        expanded.contains("The user asks why checkAuth"),
        "{expanded}"
    );
    assert!(expanded.contains("It only admits"), "{expanded}");
}

#[test]
fn without_a_model_the_message_explains_the_setup() {
    let mut s = state(std::path::Path::new("/work/demo"));
    send(&mut s, "hello");
    let last = s.workbench.transcript().last().unwrap();
    assert_eq!(last.role, Speaker::Notice);
    for needle in [
        "--model",
        "--base-url",
        "OPENAI_API_KEY",
        "--api-key-env",
        "--demo",
    ] {
        assert!(last.text.contains(needle), "{needle}: {}", last.text);
    }
    assert!(!s.workbench.agent().busy);
}

// ---- whole turns through `update`, scripted provider, real kernel ----

fn with_kernel(root: &std::path::Path) -> (AppState, AppEventReceiver) {
    let (tx, rx) = event::channel();
    (kernel_state(root, &tx, None), rx)
}

/// A state with a real, unconfined kernel whose events go to `tx`;
/// `fs_links` wire `fs.write` to the workbench as the loop does.
fn kernel_state(
    root: &std::path::Path,
    tx: &hello_tui::workbench::event::AppEventSender,
    fs_links: Option<&hello_tui::kernel_setup::FsLinks>,
) -> AppState {
    kernel_state_owned(
        root,
        tx,
        fs_links,
        hello_tui::workbench::cell_owner::CellOwner::default(),
    )
}

/// [`kernel_state`] whose kernel service keeps `owner` (an approval
/// broker's) up to date with the cell it runs.
fn kernel_state_owned(
    root: &std::path::Path,
    tx: &hello_tui::workbench::event::AppEventSender,
    fs_links: Option<&hello_tui::kernel_setup::FsLinks>,
    owner: hello_tui::workbench::cell_owner::CellOwner,
) -> AppState {
    let mut s = state(root);
    let confinement = Confinement::unconfined(ChildEnv::from_host(&[], ""));
    let registry = hello_tui::kernel_setup::registry(
        root,
        &confinement,
        Arc::new(DenyAll::default()),
        fs_links,
        Some(&(
            s.workbench.agent().context.clone(),
            s.workbench.agent().snapshot_receiver(),
        )),
        None,
    )
    .unwrap();
    let (runtime, events) = CodeRuntime::new(KernelConfig::for_workspace(root), registry);
    s.workbench.services_mut().kernel = Some(hello_tui::workbench::kernel::spawn(
        runtime,
        events,
        tx.clone(),
        owner,
    ));
    s.workbench.agent_mut().events = Some(tx.clone());
    s
}

fn key(s: &mut AppState, code: KeyCode, modifiers: KeyModifiers) {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, modifiers)));
}

fn type_text(s: &mut AppState, text: &str) {
    for c in text.chars() {
        key(s, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// Types `text` and presses Enter.
fn send(s: &mut AppState, text: &str) {
    type_text(s, text);
    key(s, KeyCode::Enter, KeyModifiers::NONE);
}

async fn pump_until(s: &mut AppState, rx: &mut AppEventReceiver, done: impl Fn(&AppState) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done(s) {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("timed out waiting for the workbench")
            .expect("channel open");
        handle_app_event(s, event);
    }
}

/// The kernel's `fs` tied to the workbench as the loop ties it: `unsaved`
/// paths are refused, writes reach the loop as `FsWritten`, and `review`
/// (when given) sees each write first.
fn fs_links(
    tx: &hello_tui::workbench::event::AppEventSender,
    unsaved: std::collections::BTreeSet<std::path::PathBuf>,
    review: Option<Arc<dyn hello_tui::kernel::caps::WriteReview>>,
) -> hello_tui::kernel_setup::FsLinks {
    let (_dirty_tx, dirty) = tokio::sync::watch::channel(Arc::new(unsaved));
    let (written, mut written_rx) = tokio::sync::mpsc::unbounded_channel();
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(change) = written_rx.recv().await {
            if forward.send(AppEvent::FsWritten(change)).is_err() {
                break;
            }
        }
    });
    hello_tui::kernel_setup::FsLinks {
        dirty,
        written,
        review,
    }
}

/// The demo workspace with a real kernel whose `fs.write`s reach the
/// workbench as the loop wires them; `unsaved` are the paths the editor
/// holds unsaved edits of. Returns the state, its events, the workspace,
/// `auth.ts` and its text before the turn.
fn linked_demo(
    unsaved: &[&str],
) -> (
    AppState,
    AppEventReceiver,
    tempfile::TempDir,
    std::path::PathBuf,
    Vec<u8>,
) {
    let dir = hello_tui::workbench::sessions::demo_workspace().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let auth = root.join("auth.ts");
    let original = std::fs::read(&auth).unwrap();
    let (tx, rx) = event::channel();
    let unsaved = unsaved.iter().map(|name| root.join(name)).collect();
    let links = fs_links(&tx, unsaved, None);
    let mut s = kernel_state(dir.path(), &tx, Some(&links));
    let script =
        hello_tui::agent::setup::DEMO_SCRIPT.replace("\"delay_ms\": 25", "\"delay_ms\": 0");
    s.workbench.agent_mut().set_provider(scripted(&script));
    (s, rx, dir, auth, original)
}

/// Issue 17: what an agent's answer wrote can be taken back. The demo's
/// real turn fixes `auth.ts` through `fs.write` in a real kernel; `/undo`
/// typed in the composer puts the file back byte for byte, `/redo` brings
/// the fix back, and `/diff` shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_takes_back_what_an_agent_turn_wrote() {
    let (mut s, mut rx, _dir, auth, original) = linked_demo(&[]);
    send(&mut s, "why does checkAuth reject users?");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let fixed = std::fs::read(&auth).unwrap();
    assert_ne!(fixed, original, "the demo fixed the file");
    wait_for_the_write(&mut s, &mut rx).await;
    let shown = &s.workbench.transcript().last().unwrap().text;
    assert!(
        shown.starts_with("the agent's answer to “why does checkAuth reject users?”:"),
        "{shown}"
    );
    assert!(shown.contains("+++ b/auth.ts"), "{shown}");

    send(&mut s, "/undo");
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.contains("auth.ts undone"), "{said}");
    assert_eq!(std::fs::read(&auth).unwrap(), original, "byte for byte");
    send(&mut s, "/redo");
    assert_eq!(std::fs::read(&auth).unwrap(), fixed);
}

/// Types `/diff` until it shows a change: the write's announcement travels
/// on its own channel and may trail the turn's end.
async fn wait_for_the_write(s: &mut AppState, rx: &mut AppEventReceiver) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        send(s, "/diff");
        if !s
            .workbench
            .transcript()
            .last()
            .unwrap()
            .text
            .starts_with("No changes")
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the write was never announced"
        );
        if let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(50), rx.recv()).await {
            handle_app_event(s, event);
        }
    }
}

/// Issue 17: change records are kept with the session. After a restart
/// (a new workbench resuming the session, as `--resume ID` does), `/undo`
/// still takes back the agent's write byte for byte, and `/redo` brings it
/// back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_reaches_an_agent_turn_after_a_restart() {
    let (mut s, mut rx, dir, auth, original) = linked_demo(&[]);
    send(&mut s, "why does checkAuth reject users?");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let fixed = std::fs::read(&auth).unwrap();
    wait_for_the_write(&mut s, &mut rx).await;
    let mut again = restarted(s, dir.path()).await;
    send(&mut again, "/undo");
    let said = &again.workbench.transcript().last().unwrap().text;
    assert!(said.contains("auth.ts undone"), "{said}");
    assert_eq!(std::fs::read(&auth).unwrap(), original, "byte for byte");
    send(&mut again, "/redo");
    assert_eq!(std::fs::read(&auth).unwrap(), fixed);
}

/// Quits `s` as the loop does (which names its session and records its
/// tabs) and starts a new workbench on `root` that resumes the session,
/// as `--resume ID` does.
async fn restarted(mut s: AppState, root: &std::path::Path) -> AppState {
    let id = hello_tui::app::agent::session_at_exit(&mut s)
        .await
        .expect("the turn started a session");
    drop(s);
    let mut again = state(root);
    hello_tui::workbench::sessions::configure(&mut again.workbench, false, Some(Some(id))).unwrap();
    again
}

/// Issue 17: when the demo's write is refused (the file has unsaved edits
/// in the editor), its answer says the fix did not go through instead of
/// "the file is saved", and the file is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_says_so_when_its_write_is_refused() {
    let (mut s, mut rx, _dir, auth, original) = linked_demo(&["auth.ts"]);
    send(&mut s, "why does checkAuth reject users?");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let answer = &s.workbench.transcript().last().unwrap().text;
    assert!(answer.contains("The fix did not go through"), "{answer}");
    assert!(!answer.contains("The file is saved"), "{answer}");
    assert_eq!(std::fs::read(&auth).unwrap(), original);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_turn_runs_through_the_workbench() {
    let dir = hello_tui::workbench::sessions::demo_workspace().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    let script =
        hello_tui::agent::setup::DEMO_SCRIPT.replace("\"delay_ms\": 25", "\"delay_ms\": 0");
    s.workbench.agent_mut().set_provider(scripted(&script));
    send(&mut s, "why does checkAuth reject users?");
    assert!(s.workbench.agent().busy);
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;

    let cells: Vec<&CellStatus> = s
        .workbench
        .transcript()
        .iter()
        .filter(|m| m.role == Speaker::Tool)
        .filter_map(|m| m.cell.as_ref().map(|c| &c.status))
        .collect();
    assert_eq!(cells.len(), 2, "{:#?}", s.workbench.transcript());
    assert!(
        cells
            .iter()
            .all(|c| matches!(c, CellStatus::Succeeded { .. })),
        "{cells:?}"
    );
    let first_output = &s
        .workbench
        .transcript()
        .iter()
        .find(|m| m.role == Speaker::Tool)
        .unwrap()
        .text;
    assert!(
        first_output.contains("export function checkAuth"),
        "{first_output}"
    );
    let answer = &s.workbench.transcript().last().unwrap().text;
    assert!(answer.contains("## Why users were rejected"), "{answer}");
    // The demo really edited the file.
    let fixed = std::fs::read_to_string(dir.path().join("auth.ts")).unwrap();
    assert!(fixed.contains("resource.adminOnly && user.role !== \"admin\""));
    // Status bar numbers and the session on disk.
    assert_eq!(s.workbench.agent().step, 3);
    assert!(s.workbench.agent().usage.total_tokens > 0);
    let status = s.workbench.agent().status_segment().unwrap();
    assert!(status.starts_with("3 steps · "), "{status}");
    let sessions = hello_tui::session::list(dir.path()).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].model, hello_tui::agent::setup::DEMO_LABEL);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_cancels_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    s.workbench.agent_mut().set_provider(scripted(
        r#"{"delay_ms": 200, "chunk_chars": 2, "turns": [{"text": "a long and slow answer that takes seconds"}]}"#,
    ));
    send(&mut s, "go");
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .transcript()
            .last()
            .is_some_and(|m| m.role == Speaker::Assistant)
    })
    .await;
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)),
    );
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let notice = s
        .workbench
        .transcript()
        .iter()
        .rev()
        .find(|m| m.role == Speaker::Notice)
        .unwrap();
    assert!(notice.text.starts_with("Cancelled."), "{}", notice.text);
    let partial = s
        .workbench
        .transcript()
        .iter()
        .rev()
        .find(|m| m.role == Speaker::Assistant)
        .unwrap();
    assert!(
        partial
            .text
            .contains("[answer cut off: cancelled by the user]"),
        "{}",
        partial.text
    );
}

fn status_row(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let y = buffer.area.height - 1;
    (0..buffer.area.width)
        .map(|x| buffer[(x, y)].symbol().to_owned())
        .collect()
}

/// The status bar always says how full the model's window is, and turns to
/// the warning colour from the auto-compaction share (80%) up.
#[test]
fn the_status_bar_shows_how_full_the_window_is() {
    let mut s = busy_demo();
    s.workbench.agent_mut().busy = false;
    s.workbench.agent_mut().context_used = Some((52_300, 128_000));
    let terminal = draw(&mut s, 120, 30);
    let row = status_row(&terminal);
    assert!(row.contains("ctx 40% · 52k/128k"), "{row}");
    insta::assert_snapshot!(row);
    let theme = Theme::builtin_default();
    let at = |terminal: &Terminal<TestBackend>| {
        let row = status_row(terminal);
        let x = row.find("ctx ").map(|b| row[..b].chars().count()).unwrap() as u16;
        let buffer = terminal.backend().buffer();
        buffer[(x, buffer.area.height - 1)].fg
    };
    assert_ne!(Some(at(&terminal)), theme.roles.warning.fg);
    s.workbench.agent_mut().context_used = Some((6_500, 8_000));
    let terminal = draw(&mut s, 120, 30);
    assert_eq!(Some(at(&terminal)), theme.roles.warning.fg);
}

/// Start-up sets the gauge from the next request, before any turn.
#[test]
fn the_gauge_is_there_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path());
    hello_tui::workbench::sessions::configure(&mut s.workbench, true, None).unwrap();
    let (used, window) = s.workbench.agent().context_used.expect("set at start-up");
    assert_eq!(window, hello_tui::tokens::DEFAULT_WINDOW);
    assert!(
        used > 500,
        "the system prompt and the tool schema cost something: {used}"
    );
}

/// Thirty questions and answers about a slow build.
fn slow_builds_conversation() -> hello_tui::agent::conversation::Conversation {
    use hello_tui::agent::provider::ChatMessage as Chat;
    let mut conversation = hello_tui::agent::conversation::Conversation::new(
        hello_tui::context::SharedContext::default(),
        None,
    );
    for i in 0..30 {
        conversation.push(Chat::User {
            content: format!("question {i}: {}", "why is the build slow? ".repeat(12)),
        });
        conversation.push(Chat::Assistant {
            thinking: Vec::new(),
            content: Some(format!(
                "answer {i}: {}",
                "because of the linker. ".repeat(12)
            )),
            tool_calls: Vec::new(),
        });
    }
    conversation
}

/// F2's breakdown: the window, each section's tokens (summary, the
/// omitted range, kept history, the new message), then the messages.
#[test]
fn f2_breaks_the_next_request_down_by_section() {
    let mut settings = Settings::defaults();
    settings.context_window = Some(4_000);
    let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), settings);
    s.workbench
        .agent_mut()
        .set_provider(scripted(r#"{"turns":[]}"#));
    let mut conversation = slow_builds_conversation();
    conversation.compact("- the user asks about slow builds".into(), 20, true, None);
    let covers = 0..20;
    s.workbench.agent_mut().set_conversation(conversation);
    s.conversation.composer.insert_str("and the tests?");
    s.workbench.pin(hello_tui::workbench::Pin {
        label: "#3 tool".into(),
        text: "checkAuth rejects plain users".into(),
    });
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE)),
    );
    let terminal = draw(&mut s, 110, 36);
    let text = terminal.backend().to_string();
    for label in [
        "system prompt",
        "tool schema",
        &format!("summary · ctx {}–{}", covers.start, covers.end - 1),
        "omitted ",
        "history (",
        "current message",
        "pins",
    ] {
        assert!(text.contains(label), "{label}: {text}");
    }
    insta::assert_snapshot!(text);
}

/// With the Anthropic provider F2's JSON is Anthropic's body: the system
/// prompt as cached blocks, the messages as content blocks.
#[test]
fn f2_shows_the_anthropic_body_for_the_anthropic_provider() {
    use hello_tui::agent::provider::anthropic::AnthropicConfig;
    let mut settings = Settings::defaults();
    settings.context_window = Some(200_000);
    let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), settings);
    let config = AnthropicConfig::new(Some("http://127.0.0.1:9"), "claude-test", "K", &|_| None);
    s.workbench.agent_mut().set_provider(Arc::new(
        hello_tui::agent::provider::AnthropicProvider::new(config).unwrap(),
    ));
    s.conversation.composer.insert_str("and the tests?");
    key(&mut s, KeyCode::F(2), KeyModifiers::NONE);
    key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    draw(&mut s, 110, 36);
    let Some(Overlay::RequestPreview(preview)) = s.overlay() else {
        panic!("F2 is open");
    };
    let shown: serde_json::Value =
        serde_json::from_str(&preview.view.as_ref().unwrap().text).unwrap();
    assert_eq!(shown["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(shown["messages"][0]["role"], "user");
    assert!(
        shown["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("and the tests?")
    );
}

/// Tab in F2 shows the messages as the JSON the request body carries
/// (`Prompt::messages_text`, which `agent_loop` checks byte for byte
/// against what a server receives), and the whole of a long request can be
/// scrolled to its end (the scroll was once capped at the snapshot's
/// length).
#[test]
fn f2_shows_the_json_that_is_sent_and_scrolls_to_its_end() {
    let mut settings = Settings::defaults();
    settings.context_window = Some(200_000);
    let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), settings);
    s.workbench
        .agent_mut()
        .set_provider(scripted(r#"{"turns":[]}"#));
    s.workbench
        .agent_mut()
        .set_conversation(slow_builds_conversation());
    s.conversation.composer.insert_str("and the tests?");
    key(&mut s, KeyCode::F(2), KeyModifiers::NONE);
    key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    let text = draw(&mut s, 110, 36).backend().to_string();
    assert!(text.contains("as JSON (Tab: readable)"), "{text}");
    assert!(
        text.contains(r#""content": "You are a coding agent"#),
        "{text}"
    );
    let (prompt, _, _) =
        hello_tui::workbench::context_window::preview(&s.workbench, &s.draft()).unwrap();
    let Some(Overlay::RequestPreview(preview)) = s.overlay() else {
        panic!("F2 is open");
    };
    let view = preview.view.as_ref().unwrap();
    assert_eq!(view.text, prompt.messages_text());
    let lines = view.lines;
    assert!(lines > 200, "a long request: {lines} lines");
    for _ in 0..lines {
        key(&mut s, KeyCode::PageDown, KeyModifiers::NONE);
    }
    let Some(Overlay::RequestPreview(preview)) = s.overlay() else {
        panic!("F2 is open");
    };
    assert_eq!(preview.scroll, lines);
    let end = draw(&mut s, 110, 36).backend().to_string();
    assert!(!end.contains("You are a coding agent"), "{end}");
    // Tab again: readable, from the top.
    key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    let text = draw(&mut s, 110, 36).backend().to_string();
    assert!(text.contains("──── [0] system ────"), "{text}");
}

/// `/compact [focus]` in the composer: the model writes the summary (tools
/// disabled), the pane says where it happened, the gauge drops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_compact_folds_the_conversation_into_a_summary() {
    let (tx, mut rx) = event::channel();
    let mut settings = Settings::defaults();
    settings.context_window = Some(6_000);
    let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), settings);
    s.workbench.agent_mut().events = Some(tx);
    s.workbench.agent_mut().set_provider(scripted(
        r#"{"delay_ms": 300, "turns": [{"text": "- the user keeps asking about slow builds"}]}"#,
    ));
    let conversation = slow_builds_conversation();
    s.workbench.agent_mut().set_conversation(conversation);
    hello_tui::workbench::context_window::refresh_gauge(&mut s.workbench);
    let (before, _) = s.workbench.agent().context_used.unwrap();
    send(&mut s, "/compact builds");
    // The summary is being written: `/new` now would have it land in the
    // next conversation, so it waits.
    send(&mut s, "/new");
    assert!(
        s.workbench
            .transcript()
            .last()
            .is_some_and(|m| m.text.contains("busy (being summarised)")),
        "{:?}",
        s.workbench.transcript().last()
    );
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .transcript()
            .iter()
            .any(|m| m.text.contains("── compacted"))
    })
    .await;
    let line = s
        .workbench
        .transcript()
        .iter()
        .find(|m| m.text.contains("── compacted"))
        .unwrap();
    assert!(line.text.contains("by the model"), "{}", line.text);
    // The marker names what it folded by message id.
    let covers = {
        let conversation = s.workbench.agent().conversation().lock().await;
        0..conversation.compaction().unwrap().through
    };
    assert!(
        line.text.contains(&format!(
            "context messages {}–{} are now a summary",
            covers.start,
            covers.end - 1
        )) && line
            .text
            .contains(&format!("context.slice({}, {})", covers.start, covers.end)),
        "{}",
        line.text
    );
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .agent()
            .context_used
            .is_some_and(|(used, _)| used < before)
    })
    .await;
    let (next, _, _) =
        hello_tui::workbench::context_window::preview(&s.workbench, &s.draft()).unwrap();
    assert!(
        next.readable()
            .contains("the user keeps asking about slow builds")
    );
}

// ---- search hits find their entry by `context` index ----

/// Opens the search pane on the conversation, types `query`, returns the
/// hits and closes the pane again.
fn conversation_hits(s: &mut AppState, query: &str) -> Vec<hello_tui::overlays::search::ResultRow> {
    use hello_tui::overlays::search::PaneResults;
    key(s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    type_text(s, query);
    let hits = match s.overlay() {
        Some(Overlay::Search(search)) => match &search.results {
            PaneResults::Hits(hits) => hits.clone(),
            other => panic!("no hits for {query:?}: {other:?}"),
        },
        other => panic!("the search pane is not open: {other:?}"),
    };
    key(s, KeyCode::Esc, KeyModifiers::NONE);
    hits
}

/// Every hit for `word` lands on a pane entry that shows it: a prompt or
/// answer with that text, or a cell whose code printed it.
fn assert_hits_land_on_their_entries(s: &mut AppState, word: &str, expected: usize) {
    use hello_tui::overlays::search::SearchTarget;
    let hits = conversation_hits(s, word);
    assert_eq!(hits.len(), expected, "{word}: {hits:#?}");
    for hit in hits {
        let SearchTarget::Message(index) = hit.target else {
            panic!("{word}: {hit:?} does not go to a pane entry");
        };
        let entry = &s.workbench.transcript()[index];
        let shown = format!(
            "{}\n{}",
            entry.cell.as_ref().map_or("", |c| c.code.as_str()),
            entry.text
        );
        assert!(
            shown.to_lowercase().contains(word),
            "{word}: hit {} went to entry {index} ({:?}): {shown}",
            hit.label,
            entry.role
        );
        assert!(
            !matches!(entry.role, Speaker::Notice) && entry.message.is_some(),
            "{entry:?}"
        );
    }
}

/// The script: a refused call (bad arguments) before a cell that runs, an
/// answer; then, after a `%py` cell and a notice of the user's, a second
/// prompt whose cell and answer mention giraffes.
const INTERLEAVED: &str = r#"{"delay_ms": 0, "turns": [
  {"text": "Checking.", "tool_calls": [
     {"name": "code_action", "arguments": "not json"},
     {"name": "code_action", "arguments": {"code": "print('zebra stripes')"}}]},
  {"text": "Answer one: a zebra has stripes."},
  {"tool_calls": [{"name": "code_action", "arguments": {"code": "print('giraffe necks')"}}]},
  {"text": "A giraffe is tall."}
]}"#;

async fn interleaved_session(root: &std::path::Path) -> (AppState, AppEventReceiver) {
    let (mut s, mut rx) = with_kernel(root);
    s.workbench.agent_mut().set_provider(scripted(INTERLEAVED));
    send(&mut s, "first question");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    send(&mut s, "%py print('okapi zebra giraffe')");
    pump_until(&mut s, &mut rx, |s| {
        s.workbench.transcript().iter().any(|m| {
            m.role == Speaker::User
                && m.cell
                    .as_ref()
                    .is_some_and(|c| matches!(c.status, CellStatus::Succeeded { .. }))
        })
    })
    .await;
    send(&mut s, "/nope giraffe");
    send(&mut s, "second question about a giraffe");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    (s, rx)
}

/// Counting messages per role put the zebra cell's hit on the giraffe cell
/// (the refused call is a tool message in `context` but no cell in the
/// pane) and the giraffe cell's hit nowhere; ids cannot drift like that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_hits_land_on_their_entry_between_py_cells_notices_and_refused_calls() {
    use hello_tui::overlays::search::SearchTarget;
    let dir = tempfile::tempdir().unwrap();
    let (mut s, _rx) = interleaved_session(dir.path()).await;
    // In the pane but not in `context`: the `%py` cell and the notice (both
    // say giraffe, neither is a hit of the conversation index).
    assert_hits_land_on_their_entries(&mut s, "zebra", 2);
    assert_hits_land_on_their_entries(&mut s, "giraffe", 3);
    // The refused call's result is found at its own pane entry.
    let refused = conversation_hits(&mut s, "valid JSON");
    let Some(SearchTarget::Message(index)) = refused.first().map(|h| h.target.clone()) else {
        panic!("{refused:?}");
    };
    assert!(
        s.workbench.transcript()[index]
            .text
            .starts_with("code_action not run"),
        "{:?}",
        s.workbench.transcript()[index]
    );
    // A `context` message no entry shows (another front end's) says so.
    let index = s
        .workbench
        .agent()
        .context
        .push(hello_tui::context::Message::assistant("a quokka smiles"));
    let hits = conversation_hits(&mut s, "quokka");
    assert_eq!(hits[0].target, SearchTarget::NotShown(index), "{hits:?}");
    assert!(
        hits[0].label.contains("not in this pane"),
        "{}",
        hits[0].label
    );
    // Enter on it says where it is instead of jumping nowhere.
    key(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    send(&mut s, "quokka");
    let last = s.workbench.transcript().last().unwrap();
    assert_eq!(last.role, Speaker::Notice);
    assert!(
        last.text
            .contains(&format!("context.slice({}, {})", index.0, index.0 + 1)),
        "{}",
        last.text
    );
}

/// A resumed session's pane entries carry their `context` indexes too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_hits_land_on_their_entry_after_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (s, _rx) = interleaved_session(dir.path()).await;
    drop(s);
    let (conversation, warnings) = hello_tui::agent::conversation::Conversation::open(
        dir.path(),
        None,
        hello_tui::session::SessionOrigin::Tui,
        hello_tui::context::SharedContext::default(),
    )
    .unwrap();
    let mut resumed = state(dir.path());
    hello_tui::workbench::agent::resume(&mut resumed.workbench, conversation, &warnings);
    assert_hits_land_on_their_entries(&mut resumed, "zebra", 2);
    assert_hits_land_on_their_entries(&mut resumed, "giraffe", 3);
}

/// Issue 12: background output (a thread an earlier cell started) is shown
/// under the next cell, labelled, after the cell's own output.
#[test]
fn background_output_is_shown_labelled_under_the_next_cell() {
    let mut s = busy_demo();
    let kernel = |s: &mut AppState, update| handle_app_event(s, AppEvent::Kernel(update));
    kernel(
        &mut s,
        KernelUpdate::Queued {
            cell_id: 1,
            code: "print('mine')".into(),
            origin: CellOrigin::Agent,
        },
    );
    kernel(
        &mut s,
        KernelUpdate::Output {
            cell_id: 1,
            stream: hello_tui::kernel::StreamName::Stdout,
            text: "mine\n".into(),
        },
    );
    kernel(
        &mut s,
        KernelUpdate::Finished {
            cell_id: 1,
            result: Box::new(ExecResult {
                id: 1,
                ok: true,
                stdout: "mine\n".into(),
                stderr: String::new(),
                background: "LATE from a thread\n".into(),
                value_repr: None,
                error: None,
                duration: Duration::from_millis(4),
                outcome: ExecOutcome::Completed,
                files_changed: Vec::new(),
            }),
            waited: Duration::ZERO,
        },
    );
    let screen = draw(&mut s, 100, 20).backend().to_string();
    let mine = screen.find("mine").expect("the cell's own output");
    let label = screen
        .find("[background output:")
        .unwrap_or_else(|| panic!("no label:\n{screen}"));
    let late = screen
        .find("LATE from a thread")
        .expect("the background text");
    assert!(mine < label && label < late, "{screen}");
}

/// Issue 17: in `review` mode a write from a cell waits for the user, hunk
/// by hunk, and only the accepted hunks reach the disk. The cell is told
/// what was left out. Real kernel, real `fs`, the real approval broker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_mode_writes_only_the_hunks_the_user_accepts() {
    use hello_tui::sandbox::ApprovalMode;
    use hello_tui::workbench::approvals::ApprovalBroker;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("a.py");
    let original: String = (1..=12).map(|i| format!("{i}\n")).collect();
    std::fs::write(&file, &original).unwrap();
    let (tx, mut rx) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), ApprovalMode::Review);
    let links = fs_links(&tx, Default::default(), Some(Arc::new(broker.clone())));
    let mut s = kernel_state(&root, &tx, Some(&links));
    s.workbench.services_mut().approvals = Some(broker);
    s.workbench.safety_mut().mode = ApprovalMode::Review;
    // A computed path: not one the user's cell names literally, so it is
    // reviewed like a model's write.
    send(
        &mut s,
        r"%py r = fs.write('a' + '.py', fs.read('a.py').replace('11\n12\n', '11\ntwelve\n').replace('1\n2\n', 'one\n2\n', 1)); print(r)",
    );
    pump_until(&mut s, &mut rx, |s| !s.approvals.is_empty()).await;
    hello_tui::app::update::before_frame(&mut s);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original,
        "nothing written yet"
    );
    key(&mut s, KeyCode::Char('n'), KeyModifiers::NONE);
    // Typed before the second hunk was drawn: it decides nothing.
    key(&mut s, KeyCode::Char('a'), KeyModifiers::NONE);
    assert!(!s.approvals.is_empty(), "the second hunk still waits");
    hello_tui::app::update::before_frame(&mut s);
    s.approvals
        .clock
        .advance(hello_tui::overlays::approval::HUNK_SETTLE);
    key(&mut s, KeyCode::Char('y'), KeyModifiers::NONE);
    pump_until(&mut s, &mut rx, |s| {
        s.workbench.transcript().iter().any(|m| {
            m.cell
                .as_ref()
                .is_some_and(|c| matches!(c.status, CellStatus::Succeeded { .. }))
        })
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        original.replace("11\n12\n", "11\ntwelve\n"),
        "only the accepted hunk"
    );
    let output = &s
        .workbench
        .transcript()
        .iter()
        .rev()
        .find(|m| m.cell.is_some())
        .unwrap()
        .text;
    assert!(output.contains("'rejected_hunks': 1"), "{output}");
}

/// A workbench whose model is `qwen3:8b` on the loopback server at `base_url`.
fn on_loopback(dir: &std::path::Path, tx: &event::AppEventSender, base_url: &str) -> AppState {
    let mut s = kernel_state(dir, tx, None);
    s.workbench.settings_mut().model = Some("qwen3:8b".into());
    s.workbench.settings_mut().base_url = Some(base_url.to_owned());
    s.workbench.settings_mut().context_window = Some(8_000);
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();
    s
}

/// `/model` lists what the server's `GET /v1/models` offers, `/model NAME`
/// sends the next turn to that model, the session records the choice, and
/// resuming the session in the workbench picks it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_lists_switches_and_the_session_remembers_the_choice() {
    use loopback::{LoopbackServer, Reply};
    let server = LoopbackServer::respond_with(Duration::from_secs(30), |request| {
        if request.method == "GET" {
            let list = r#"{"object":"list","data":[{"id":"qwen3:8b","object":"model"},{"id":"llama3.2","object":"model"}]}"#;
            return Reply::status(200, &[("content-type", "application/json")], list);
        }
        answer_naming_the_model(request)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = on_loopback(dir.path(), &tx, &server.base_url);
    assert_eq!(
        s.workbench.agent().provider().unwrap().model().as_deref(),
        Some("qwen3:8b")
    );

    send(&mut s, "/model");
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .transcript()
            .last()
            .is_some_and(|m| m.text.starts_with("Models at"))
    })
    .await;
    let listed = &s.workbench.transcript().last().unwrap().text;
    assert!(
        listed.contains("\n  qwen3:8b  ← current\n  llama3.2\n"),
        "{listed}"
    );

    send(&mut s, "/model llama3.2");
    assert!(
        s.workbench.agent().label().starts_with("llama3.2 @ "),
        "{}",
        s.workbench.agent().label()
    );
    send(&mut s, "hi");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let answer = s
        .workbench
        .transcript()
        .iter()
        .rfind(|m| m.role == Speaker::Assistant)
        .unwrap();
    assert_eq!(answer.text, "hello from llama3.2");
    let posted: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.json()["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(posted, ["llama3.2"]);
    let id = session_id(&s).await;

    // Resumed with the configured model, the session's choice wins.
    let mut resumed = state(dir.path());
    resumed.workbench.settings_mut().model = Some("qwen3:8b".into());
    resumed.workbench.settings_mut().base_url = Some(server.base_url.clone());
    hello_tui::workbench::sessions::configure(&mut resumed.workbench, false, Some(Some(id)))
        .unwrap();
    assert_eq!(
        resumed
            .workbench
            .agent()
            .provider()
            .unwrap()
            .model()
            .as_deref(),
        Some("llama3.2")
    );
    assert!(
        resumed
            .workbench
            .transcript()
            .iter()
            .any(|m| m.text.contains("This session last used llama3.2"))
    );
}

/// Issue 18, done when: one session talks to a native Anthropic endpoint
/// and to a local reasoning model behind an OpenAI-compatible server,
/// switching with `/model PROFILE` (`[models.NAME]`). Each turn goes to its
/// server in that server's wire format with the whole conversation; the
/// local model's reasoning is shown but sent to neither; the session
/// remembers the profile and `--resume` goes back to its server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_talks_to_anthropic_and_to_a_local_reasoning_model() {
    use hello_tui::config::{ModelSection, ProviderKind};
    use loopback::{Framing, LoopbackServer, Reply, data};
    let claude = LoopbackServer::respond_with(Duration::from_secs(30), |request| {
        let turns = request.json()["messages"].as_array().map_or(0, Vec::len);
        anthropic_wire::sse(&anthropic_wire::text_answer(&format!(
            "claude saw {turns} messages"
        )))
    })
    .await;
    let local = LoopbackServer::respond_with(Duration::from_secs(30), |_| {
        let body = [
            data(r#"{"choices":[{"index":0,"delta":{"reasoning_content":"SECRET-REASONING weighing it"}}]}"#),
            data(r#"{"choices":[{"index":0,"delta":{"content":"local answer"}}]}"#),
            data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
            "data: [DONE]\r\n\r\n".to_owned(),
        ];
        Reply::sse(Framing::Chunked, vec![loopback::Part::Bytes(body.concat().into_bytes())])
    })
    .await;
    let profiles = |s: &mut AppState| {
        s.workbench.settings_mut().model_profiles.insert(
            "claude".into(),
            ModelSection {
                provider: Some(ProviderKind::Anthropic),
                name: Some("claude-test".into()),
                base_url: Some(claude.base_url.clone()),
                api_key_env: Some("HELLO_TUI_TEST_NO_SUCH_KEY".into()),
                context_window: Some(100_000),
                ..ModelSection::default()
            },
        );
        s.workbench.settings_mut().model_profiles.insert(
            "local".into(),
            ModelSection {
                name: Some("qwen3:8b".into()),
                base_url: Some(local.base_url.clone()),
                context_window: Some(32_000),
                ..ModelSection::default()
            },
        );
    };
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = kernel_state(dir.path(), &tx, None);
    profiles(&mut s);
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();
    assert!(
        !s.workbench.agent().has_model(),
        "no [model]: the profiles are the models"
    );

    send(&mut s, "/model");
    let listed = &s.workbench.transcript().last().unwrap().text;
    assert!(
        listed.contains("claude: claude-test (anthropic, http://")
            && listed.contains("local: qwen3:8b (openai, http://"),
        "{listed}"
    );
    let answers = |s: &AppState| -> Vec<String> {
        s.workbench
            .transcript()
            .iter()
            .filter(|m| m.role == Speaker::Assistant)
            .map(|m| m.text.clone())
            .collect()
    };
    for (profile, prompt) in [
        ("claude", "first"),
        ("local", "second"),
        ("claude", "third"),
    ] {
        send(&mut s, &format!("/model {profile}"));
        send(&mut s, prompt);
        pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    }
    assert_eq!(
        answers(&s),
        [
            "claude saw 1 messages",
            "local answer",
            "claude saw 5 messages"
        ]
    );
    assert!(
        s.workbench
            .transcript()
            .iter()
            .any(|m| m.role == Speaker::Thinking && m.text.contains("SECRET-REASONING")),
        "the local model's reasoning is shown"
    );

    let to_claude = claude.requests();
    assert_eq!(to_claude.len(), 2);
    for request in &to_claude {
        assert!(request.path.ends_with("/v1/messages"), "{}", request.path);
        assert!(request.header("anthropic-version").is_some());
        assert_eq!(request.json()["model"], "claude-test");
    }
    let last = to_claude[1].json().to_string();
    for earlier in ["first", "claude saw 1 messages", "second", "local answer"] {
        assert!(
            last.contains(earlier),
            "{earlier} is in what Claude gets: {last}"
        );
    }
    assert!(
        !last.contains("SECRET-REASONING"),
        "reasoning is never sent back"
    );
    let to_local = local.requests();
    assert_eq!(to_local.len(), 1);
    assert!(to_local[0].path.ends_with("/chat/completions"));
    let sent = to_local[0].json();
    assert_eq!(sent["model"], "qwen3:8b");
    assert!(sent.to_string().contains("claude saw 1 messages"));

    // The session remembers the profile: resumed, turns go to Claude's
    // server again, in its format.
    let id = session_id(&s).await;
    let mut resumed = state(dir.path());
    profiles(&mut resumed);
    hello_tui::workbench::sessions::configure(&mut resumed.workbench, false, Some(Some(id)))
        .unwrap();
    assert_eq!(resumed.workbench.agent().profile_name(), Some("claude"));
    assert!(
        resumed.workbench.agent().label().contains("claude-test"),
        "{}",
        resumed.workbench.agent().label()
    );
}

/// Issue 17, end to end against the loopback server speaking the real
/// OpenAI wire format: the model's cell edits `auth.ts` and creates
/// `NOTES.md` through a real kernel. The conversation shows both diffs;
/// `/undo` restores both byte for byte (the created file is removed) and
/// `/redo` brings both back; a user edit made after the turn survives the
/// next `/undo`, and one on the same line is kept and shown as a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_turn_writing_two_files_is_shown_and_undone() {
    use loopback::{Framing, LoopbackServer, Reply, byte_pieces, data};
    let code = r#"fs.edit('auth.ts', 'if (user.role !== "admin")', 'if (resource.adminOnly && user.role !== "admin")')
fs.write('NOTES.md', 'checkAuth: admins only where adminOnly\n')"#;
    let call = serde_json::json!({"index": 0, "id": "c1", "type": "function",
        "function": {"name": "code_action", "arguments": serde_json::json!({"code": code}).to_string()}});
    let chunks =
        |parts: Vec<String>| Reply::sse(Framing::Chunked, byte_pieces(&parts.concat(), 41));
    let first = chunks(vec![
        data(
            &serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[call]}}]}).to_string(),
        ),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#),
        "data: [DONE]\r\n\r\n".to_owned(),
    ]);
    let second = chunks(vec![
        data(r#"{"choices":[{"index":0,"delta":{"content":"Fixed, and noted."}}]}"#),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        "data: [DONE]\r\n\r\n".to_owned(),
    ]);
    let server = LoopbackServer::start(vec![first, second]).await;
    let (mut s, mut rx, dir, auth, original) = linked_demo(&[]);
    // The workspace index is built, as it is soon after start: `/undo`
    // deletes a created file only when the index did not list it (issue
    // 25, route 19).
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Done {
            count: 0,
            elapsed: Duration::ZERO,
        });
    let notes = dir.path().canonicalize().unwrap().join("NOTES.md");
    s.workbench.settings_mut().model = Some("gpt-4.1-mini".into());
    s.workbench.settings_mut().base_url = Some(server.base_url.clone());
    s.workbench.settings_mut().context_window = Some(32_000);
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();
    send(&mut s, "fix checkAuth and note it");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    wait_for_the_write(&mut s, &mut rx).await;
    // Both announcements arrive (the second may trail the first).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while s
        .workbench
        .transcript()
        .iter()
        .filter_map(|m| m.cell.as_ref())
        .map(|c| c.changes.len())
        .sum::<usize>()
        < 2
    {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("both writes announced")
            .expect("channel open");
        handle_app_event(&mut s, event);
    }
    let fixed = std::fs::read(&auth).unwrap();
    let terminal = draw(&mut s, 100, 40);
    let screen = terminal.backend().to_string();
    assert!(screen.contains("✎ auth.ts  +1 −1"), "{screen}");
    assert!(screen.contains("✎ NOTES.md  +1 −0"), "{screen}");
    // From the first diff's header down, inside the conversation pane
    // (what is above depends on how far the pane scrolled).
    let cell_rows = screen
        .lines()
        .position(|l| l.contains("✎ auth.ts"))
        .unwrap() as u16;
    insta::assert_debug_snapshot!(region(
        terminal.backend().buffer(),
        Rect::new(1, cell_rows, 38, 9)
    ));

    send(&mut s, "/undo");
    assert_eq!(std::fs::read(&auth).unwrap(), original, "byte for byte");
    assert!(!notes.exists(), "the created file is removed");
    send(&mut s, "/redo");
    assert_eq!(std::fs::read(&auth).unwrap(), fixed);
    assert!(notes.exists());

    // The user adds a line at the top after the turn: /undo keeps it.
    let mine = format!("// reviewed\n{}", String::from_utf8_lossy(&fixed));
    std::fs::write(&auth, &mine).unwrap();
    send(&mut s, "/undo");
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.contains("auth.ts undone around your edits"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&auth).unwrap(),
        format!("// reviewed\n{}", String::from_utf8_lossy(&original))
    );
    // The user rewrites the very line the agent changed: kept, and shown.
    send(&mut s, "/redo");
    let theirs = std::fs::read_to_string(&auth).unwrap().replace(
        "resource.adminOnly && user.role",
        "resource.adminOnly === true && user.role",
    );
    std::fs::write(&auth, &theirs).unwrap();
    send(&mut s, "/undo");
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.contains("auth.ts: kept your lines at line"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&auth).unwrap(),
        theirs,
        "the user's line kept"
    );
    assert!(!notes.exists(), "the rest of the turn is undone");
}

/// Issue 18: `AGENTS.md` goes into the system prompt under "Project
/// instructions" (nearest folder last): F2 lists it with its cost before
/// the first turn, the request the server receives carries it, and an edit
/// on disk reaches the next turn's request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_is_sent_as_project_instructions_and_reread_each_turn() {
    let server = answering_ok().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("AGENTS.md"), "Indent with tabs.\n").unwrap();
    std::fs::write(root.join("src/CLAUDE.md"), "Run pytest after edits.\n").unwrap();
    std::fs::write(root.join("src/app.py"), "x = 1\n").unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = kernel_state(&root, &tx, None);
    s.workbench.settings_mut().model = Some("m".into());
    s.workbench.settings_mut().base_url = Some(server.base_url.clone());
    s.workbench.settings_mut().context_window = Some(16_000);
    hello_tui::app::editors::open(&mut s, &root.join("src/app.py"), None);
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();

    s.conversation.composer.insert_str("hello");
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::F(2), KeyModifiers::NONE)),
    );
    let f2 = draw(&mut s, 140, 36).backend().to_string();
    assert!(f2.contains("instructions · 2 files"), "{f2}");
    key(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    s.conversation.composer = Default::default();
    // Opening the file moved the focus there; the prompt is typed below.
    s.focus = hello_tui::keymap::PaneId::Conversation;

    send(&mut s, "hello");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    std::fs::write(root.join("AGENTS.md"), "Indent with four spaces.\n").unwrap();
    send(&mut s, "again");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;

    let systems: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| {
            r.json()["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(systems.len(), 2);
    let first = &systems[0];
    let heading = first.find("## Project instructions").expect("the heading");
    let (tabs, pytest) = (
        first.find("Indent with tabs.").unwrap(),
        first.find("Run pytest after edits.").unwrap(),
    );
    assert!(heading < tabs && tabs < pytest, "root first, nearest last");
    assert!(systems[1].contains("Indent with four spaces."), "re-read");
    assert!(!systems[1].contains("Indent with tabs."));
}

/// A loopback model server that answers "ok" to every request.
async fn answering_ok() -> loopback::LoopbackServer {
    use loopback::{Framing, LoopbackServer, Reply, data};
    LoopbackServer::respond_with(Duration::from_secs(30), |_| {
        let body = [
            data(r#"{"choices":[{"index":0,"delta":{"content":"ok"}}]}"#),
            data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
            "data: [DONE]\r\n\r\n".to_owned(),
        ];
        Reply::sse(
            Framing::Chunked,
            vec![loopback::Part::Bytes(body.concat().into_bytes())],
        )
    })
    .await
}

/// Issue 19: a cell's `llm_query` sub-calls show nested under it (prompt
/// head, answer head, tokens, time, status), collapsed to a line each and
/// in full with Ctrl+O; their tokens count in the status bar.
#[test]
fn a_cell_with_nested_sub_calls() {
    use hello_tui::subcalls::{
        SubcallCompleted, SubcallEvent, SubcallKind, SubcallStarted, SubcallStatus,
    };
    let mut s = busy_demo();
    turn(&mut s, TurnEvent::Step(1));
    turn(
        &mut s,
        TurnEvent::Usage(Usage {
            prompt_tokens: 900,
            completion_tokens: 100,
            total_tokens: 1000,
            ..Usage::default()
        }),
    );
    let code = "parts = [text[i:i+4000] for i in range(0, len(text), 4000)]\nnotes = llm_query_batched([f'Summarise:\\n{p}' for p in parts])";
    handle_app_event(
        &mut s,
        AppEvent::Kernel(KernelUpdate::Queued {
            cell_id: 1,
            code: code.into(),
            origin: CellOrigin::Agent,
        }),
    );
    let started = |id: u64, prompt: &str| {
        AppEvent::Subcall(SubcallEvent::Started(SubcallStarted {
            id,
            kind: SubcallKind::LlmQuery,
            exec_id: Some(1),
            model: "small-model @ http://127.0.0.1:8080".into(),
            prompt_head: prompt.into(),
            prompt_chars: 4012,
        }))
    };
    let completed = |id: u64, prompt: &str, status, answer: &str, error: Option<&str>| {
        AppEvent::Subcall(SubcallEvent::Completed(SubcallCompleted {
            id,
            kind: SubcallKind::LlmQuery,
            exec_id: Some(1),
            model: "small-model @ http://127.0.0.1:8080".into(),
            prompt_head: prompt.into(),
            status,
            answer_head: answer.into(),
            answer_chars: answer.chars().count(),
            prompt_tokens: if status == SubcallStatus::Ok { 1000 } else { 0 },
            completion_tokens: if status == SubcallStatus::Ok { 40 } else { 0 },
            elapsed_ms: 850 + id,
            error: error.map(str::to_owned),
        }))
    };
    let prompts = [
        "Summarise:\ndef check_auth(user):",
        "Summarise:\nclass Session:",
        "Summarise:\nROUTES = {",
    ];
    for (i, prompt) in prompts.iter().enumerate() {
        handle_app_event(&mut s, started(i as u64 + 1, prompt));
    }
    handle_app_event(
        &mut s,
        completed(
            1,
            prompts[0],
            SubcallStatus::Ok,
            "Admins only; every other role is refused.",
            None,
        ),
    );
    handle_app_event(
        &mut s,
        completed(
            2,
            prompts[1],
            SubcallStatus::TimedOut,
            "",
            Some("no answer within 120 s ([subcalls] call_timeout_secs)"),
        ),
    );
    let terminal = draw(&mut s, 140, 18);
    let status = status_row(&terminal);
    assert!(
        status.contains("2.0k tok"),
        "the model's 1000 + 1040 sub-call tokens: {status}"
    );
    let pane = region(terminal.backend().buffer(), Rect::new(0, 0, 56, 17));
    insta::assert_snapshot!("nested_sub_calls_styled", format!("{pane:?}"));
    s.conversation.place.cells_expanded = true;
    let terminal = draw(&mut s, 140, 30);
    insta::assert_snapshot!("nested_sub_calls_expanded", terminal.backend().to_string());
}

/// The id of the session the workbench's conversation is saved in.
async fn session_id(s: &AppState) -> String {
    let conversation = s.workbench.agent().conversation();
    conversation.lock().await.session_id().unwrap().to_owned()
}

/// An OpenAI-compatible answer naming the model the request asked for.
fn answer_naming_the_model(request: &loopback::Recorded) -> loopback::Reply {
    use loopback::{Framing, Reply, data};
    let model = request.json()["model"].as_str().unwrap_or("?").to_owned();
    let body = [
        data(&serde_json::json!({"choices":[{"index":0,"delta":{"content":format!("hello from {model}")}}]}).to_string()),
        data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#),
        "data: [DONE]\r\n\r\n".to_owned(),
    ];
    Reply::sse(
        Framing::Chunked,
        vec![loopback::Part::Bytes(body.concat().into_bytes())],
    )
}

/// Issue 27: a model typed on the command line wins over the model (and
/// the profile) a session recorded — `hello-tui --continue --model basic`
/// used to send to the session's model — and `exec --resume ID --model M`
/// records its turn as M on the configured server, so the next resume in
/// the workbench does not take M to the profile's server. Without a flag
/// the session's model is picked again. Start-up is `main`'s: the command
/// line parsed, the settings loaded from it and a config file, the session
/// resumed; the loopback servers record the model each request names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_typed_on_the_command_line_wins_over_the_sessions() {
    use clap::Parser;
    use loopback::LoopbackServer;
    let patience = Duration::from_secs(120);
    let configured = LoopbackServer::respond_with(patience, answer_naming_the_model).await;
    let profile = LoopbackServer::respond_with(patience, answer_naming_the_model).await;
    let posted = |server: &LoopbackServer| -> Vec<String> {
        server
            .requests()
            .iter()
            .filter(|r| r.method == "POST")
            .map(|r| r.json()["model"].as_str().unwrap_or("?").to_owned())
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_owned();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[model]\nname = \"qwen3:8b\"\nbase_url = \"{}\"\ncontext_window = 8000\n\n\
             [models.local]\nname = \"local-model\"\nbase_url = \"{}\"\ncontext_window = 8000\n",
            configured.base_url, profile.base_url
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    let (tx, mut rx) = event::channel();
    // What `main` does with these arguments, up to the event loop.
    let start = |flags: &[&str]| -> AppState {
        let args = [
            &["hello-tui", root.as_str(), "--config", config.as_str()],
            flags,
        ]
        .concat();
        let cli = hello_tui::cli::Cli::try_parse_from(args).unwrap();
        let settings = Settings::load(&cli.options, &|_| None).unwrap();
        let mut s = kernel_state(dir.path(), &tx, None);
        *s.workbench.settings_mut() = settings;
        hello_tui::workbench::sessions::configure(&mut s.workbench, cli.demo, cli.resume())
            .unwrap();
        s
    };
    let said = |s: &AppState, start: &str| -> bool {
        s.workbench
            .transcript()
            .iter()
            .any(|m| m.text.starts_with(start))
    };

    // A session whose turn went to the `local` profile.
    let mut s = start(&[]);
    send(&mut s, "/model local");
    send(&mut s, "first");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    assert_eq!(posted(&profile), ["local-model"]);
    let id = session_id(&s).await;

    // `--continue --model basic`: basic, on the configured server.
    let mut s = start(&["--continue", "--model", "basic"]);
    send(&mut s, "second");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    assert_eq!(posted(&configured), ["basic"]);
    assert!(
        said(
            &s,
            "This session last used local-model (profile local); its turns go to basic @ "
        ),
        "{:#?}",
        s.workbench.transcript()
    );
    assert_eq!(
        posted(&profile),
        ["local-model"],
        "nothing more to the profile"
    );

    // Back on the profile, then one headless turn with a model flag.
    send(&mut s, "/model local");
    send(&mut s, "third");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    assert_eq!(posted(&profile), ["local-model", "local-model"]);
    let exec = tokio::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"))
        .args(["exec", "-C", &root, "--config", &config, "--resume", &id])
        .args(["--model", "exec-model", "--diagnostics-wait", "0", "fourth"])
        .stdin(std::process::Stdio::null())
        .output();
    let out = tokio::time::timeout(patience, exec).await.unwrap().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(posted(&configured), ["basic", "exec-model"]);

    // `--resume ID`, no flag: the session's last model, where it ran.
    let mut s = start(&["--resume", &id]);
    send(&mut s, "fifth");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    assert_eq!(posted(&configured), ["basic", "exec-model", "exec-model"]);
    assert_eq!(posted(&profile), ["local-model", "local-model"]);
}

/// The status bar names the model that answers (not the server), at
/// 120 and at 80 columns, a long name shortened to its distinctive end.
#[test]
fn the_status_bar_names_the_model() {
    use hello_tui::agent::provider::anthropic::AnthropicConfig;
    for (model, shown) in [
        ("claude-test", "│ claude-test │"),
        ("qwen2.5-coder-32b-instruct-q4_k_m-gguf", "│ qwen2.5-cod"),
    ] {
        let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), Settings::defaults());
        let config = AnthropicConfig::new(Some("http://127.0.0.1:9"), model, "K", &|_| None);
        s.workbench.agent_mut().set_provider(Arc::new(
            hello_tui::agent::provider::AnthropicProvider::new(config).unwrap(),
        ));
        for width in [120, 80] {
            let terminal = draw(&mut s, width, 24);
            let status = terminal.backend().to_string();
            let status = status.lines().last().unwrap_or_default();
            assert!(status.contains(shown), "{width}: {status}");
            assert!(!status.contains("127.0.0.1"), "{status}");
        }
    }
}

/// The status bar's gauge and F2 are one computation: the request Enter
/// would send now, the composer's text and the snapshot included. Typing
/// moves the gauge; F2 shows the same figure.
#[test]
fn the_gauge_and_f2_agree_and_count_the_composer() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = state(dir.path());
    hello_tui::workbench::sessions::configure(&mut s.workbench, true, None).unwrap();
    let gauge_of = |lp: &frames::Loop| -> String {
        let screen = lp.screen();
        let status = screen.lines().last().unwrap_or_default().to_owned();
        let at = status.find("ctx ").unwrap_or_else(|| panic!("{status}"));
        status[at..]
            .split(" │")
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let mut lp = frames::Loop::new(s, 160, 40);
    let empty = gauge_of(&lp);
    let words = "why does the build take so long on a cold cache? ".repeat(120);
    lp.event(Event::Paste(words));
    let typed = gauge_of(&lp);
    assert_ne!(empty, typed, "the gauge counts the composer");
    assert!(lp.key(KeyCode::F(2), KeyModifiers::NONE));
    let Some(Overlay::RequestPreview(preview)) = lp.state.overlay() else {
        panic!("F2 is open");
    };
    let shown = preview.view.as_ref().map(|v| v.gauge.clone()).unwrap();
    assert_eq!(typed, shown, "the status bar and F2 say the same");
}

/// Mentions past the budget: the ones the earlier mentions leave no room
/// for are not sent at all (F2 lists no cost for them) and F2 says why in
/// words, not as "cut at line 0".
#[test]
fn f2_says_a_mention_past_the_budget_is_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let row: String = (1..=400).map(|i| format!("row {i:>16}\n")).collect();
    for name in ["med1.txt", "med2.txt", "med3.txt"] {
        std::fs::write(dir.path().join(name), &row).unwrap();
    }
    let mut settings = Settings::defaults();
    settings.context_window = Some(4_000);
    let mut s = AppState::new(dir.path().canonicalize().unwrap(), settings);
    s.workbench
        .agent_mut()
        .set_provider(scripted(r#"{"turns":[]}"#));
    s.conversation
        .composer
        .insert_str("compare @med1.txt @med2.txt @med3.txt");
    key(&mut s, KeyCode::F(2), KeyModifiers::NONE);
    let screen = draw(&mut s, 140, 40).backend().to_string();
    let Some(Overlay::RequestPreview(preview)) = s.overlay() else {
        panic!("F2 is open");
    };
    let mentioned = &preview.view.as_ref().unwrap().mentioned;
    let files: Vec<&str> = mentioned.files.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(files, ["@med1.txt"], "{mentioned:?}");
    assert_eq!(
        mentioned.notes[1..],
        [
            "@med2.txt is not sent: the budget for mentioned files (4000 characters) is used up \
             by the mentions before it."
                .to_owned(),
            "@med3.txt is not sent: the budget for mentioned files (4000 characters) is used up \
             by the mentions before it."
                .to_owned(),
        ],
        "{mentioned:?}"
    );
    assert!(screen.contains("@med2.txt is not sent"), "{screen}");
    assert!(!screen.contains("cut at line 0"), "{screen}");
}

/// A scripted model with a window of `tokens`.
fn with_window(tokens: usize, script: &str) -> AppState {
    let mut settings = Settings::defaults();
    settings.context_window = Some(tokens);
    let mut s = AppState::new(std::path::PathBuf::from("/work/demo"), settings);
    s.workbench.agent_mut().set_provider(scripted(script));
    s
}

/// A 2 000-line paste into a small window is refused before anything is
/// spent: no compaction, no request, no user message in the conversation;
/// the numbers are given and the text stays in the composer.
#[test]
fn a_message_that_cannot_fit_is_refused_before_anything_is_spent() {
    let s = with_window(8_000, r#"{"turns": [{"text": "never"}]}"#);
    let paste: String = (0..2_000)
        .map(|i| format!("2026-12-06 12:00:{i:04} build step {i} finished in 12 ms\n"))
        .collect();
    let mut lp = frames::Loop::new(s, 120, 40);
    lp.event(Event::Paste(paste.clone()));
    assert!(lp.key(KeyCode::Enter, KeyModifiers::NONE));
    let transcript = lp.state.workbench.transcript();
    let last = transcript.last().expect("a notice");
    assert!(last.text.starts_with("Not sent"), "{}", last.text);
    assert!(last.text.contains("window is 8000"), "{}", last.text);
    assert!(
        !transcript.iter().any(|m| m.role == Speaker::User),
        "nothing went to the conversation"
    );
    assert!(!lp.state.workbench.agent().busy, "no turn started");
    assert_eq!(
        lp.state.draft().trim_end(),
        paste.trim_end(),
        "the text is kept"
    );
    assert!(lp.screen().contains("Not sent"), "{}", lp.screen());
}

/// A big paste is one chip in the composer, with its size; what is sent
/// (and what F2 and the gauge count) is the whole text; Alt+E puts the
/// text back in place of the chip.
#[test]
fn a_big_paste_is_a_chip_and_is_sent_whole() {
    let s = with_window(200_000, r#"{"turns": [{"text": "seen"}]}"#);
    let paste: String = (0..2_000)
        .map(|i| format!("build step {i} finished\n"))
        .collect();
    let mut lp = frames::Loop::new(s, 120, 40);
    lp.type_text("why so slow? ");
    lp.event(Event::Paste(paste.clone()));
    let screen = lp.screen();
    assert!(screen.contains("[pasted #1 · 2 000 lines · ~"), "{screen}");
    assert!(!screen.contains("build step 1999"), "{screen}");
    insta::assert_snapshot!("big_paste_chip", screen);
    assert_eq!(lp.state.draft(), format!("why so slow? {paste}"));
    // Alt+E: the text itself, to edit.
    assert!(lp.key(KeyCode::Char('e'), KeyModifiers::ALT));
    assert!(lp.screen().contains("build step 1999"), "{}", lp.screen());
    assert_eq!(lp.state.draft(), format!("why so slow? {paste}"));
    // Pasted again and sent: the model gets all of it.
    lp.key(KeyCode::Char('u'), KeyModifiers::CONTROL);
    while !lp.state.draft().is_empty() {
        lp.key(KeyCode::Backspace, KeyModifiers::NONE);
    }
    lp.event(Event::Paste(paste.clone()));
    assert!(lp.key(KeyCode::Enter, KeyModifiers::NONE));
    let sent = lp
        .state
        .workbench
        .transcript()
        .iter()
        .find(|m| m.role == Speaker::User)
        .map(|m| m.text.clone())
        .expect("sent");
    assert!(
        sent.contains("build step 1999 finished"),
        "{}",
        &sent[..200.min(sent.len())]
    );
    assert!(!sent.contains("[pasted #"), "the chip is not what is sent");
}

/// The composer's text as it stands (its rows, joined).
fn composer_text(lp: &frames::Loop) -> String {
    lp.state.conversation.composer.lines().join("\n")
}

/// The last message the user sent, as the model got it.
fn last_sent(lp: &frames::Loop) -> String {
    lp.state
        .workbench
        .transcript()
        .iter()
        .rfind(|m| m.role == Speaker::User)
        .map(|m| m.text.clone())
        .expect("a message was sent")
}

/// The composer holds `composer` (and the screen shows it), and the
/// message Enter would send is `message`.
fn shows(lp: &frames::Loop, composer: &str, message: &str) {
    assert_eq!(composer_text(lp), composer);
    assert!(lp.screen().contains(composer), "{}", lp.screen());
    assert_eq!(lp.state.draft(), message);
}

/// Types `before`, pastes `paste`, types `after`; the chip's label.
fn paste_between(lp: &mut frames::Loop, before: &str, paste: &str, after: &str) -> String {
    lp.type_text(before);
    lp.event(Event::Paste(paste.to_owned()));
    lp.type_text(after);
    composer_text(lp)
        .strip_prefix(before)
        .and_then(|t| t.strip_suffix(after))
        .expect("the chip between the typed texts")
        .to_owned()
}

/// A chip is one unit for the keys (issue: editing a chip sent its label
/// and lost the paste): Backspace at its end and Delete at its start take
/// the whole chip, ← and → jump over it so typing never lands inside, a
/// word deleted into it takes all of it, and undo/redo bring it back with
/// its text. After each key the screen and the message that would be sent
/// (`draft`) agree; what is sent is the paste, never the label.
#[test]
fn a_chip_is_one_unit_for_the_keys() {
    let s = with_window(
        200_000,
        r#"{"turns": [{"text": "seen"}, {"text": "seen"}, {"text": "seen"}]}"#,
    );
    let paste: String = (0..300)
        .map(|i| format!("build step {i} finished\n"))
        .collect();
    let mut lp = frames::Loop::new(s, 120, 40);
    let ctrl = KeyModifiers::CONTROL;
    let none = KeyModifiers::NONE;
    let chip = paste_between(&mut lp, "ab", &paste, "cd");
    assert!(chip.starts_with("[pasted #1 · 300 lines · ~"), "{chip}");
    assert!(
        lp.screen().contains(&format!("ab{chip}cd")),
        "{}",
        lp.screen()
    );
    assert_eq!(lp.state.draft(), format!("ab{paste}cd"));

    // ← ← ←: past `d`, past `c`, then over the whole chip; X goes before it.
    for _ in 0..3 {
        lp.key(KeyCode::Left, none);
    }
    lp.type_text("X");
    shows(&lp, &format!("abX{chip}cd"), &format!("abX{paste}cd"));
    // →: over the chip again; Y goes after it.
    lp.key(KeyCode::Right, none);
    lp.type_text("Y");
    assert_eq!(composer_text(&lp), format!("abX{chip}Ycd"));
    assert_eq!(lp.state.draft(), format!("abX{paste}Ycd"));
    insta::assert_snapshot!("chip_typed_around", lp.screen());
    // Ctrl+← from after the chip lands before it, not in its words.
    lp.key(KeyCode::Backspace, none);
    lp.key(KeyCode::Left, ctrl);
    let cursor = lp.state.conversation.composer.cursor();
    assert_eq!((cursor.0, cursor.1), (0, 3));

    // Delete at its start takes the whole chip; undo brings it back with
    // its text, redo takes it again.
    lp.key(KeyCode::Delete, none);
    assert_eq!(composer_text(&lp), "abXcd");
    assert!(!lp.screen().contains("[pasted"), "{}", lp.screen());
    assert_eq!(lp.state.draft(), "abXcd");
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(composer_text(&lp), format!("abX{chip}cd"));
    assert_eq!(lp.state.draft(), format!("abX{paste}cd"));
    lp.key(KeyCode::Char('r'), ctrl);
    assert_eq!(lp.state.draft(), "abXcd");
    lp.key(KeyCode::Char('u'), ctrl);

    // Backspace at its end takes it whole.
    lp.key(KeyCode::End, none);
    lp.key(KeyCode::Left, none);
    lp.key(KeyCode::Left, none);
    lp.key(KeyCode::Backspace, none);
    assert_eq!(composer_text(&lp), "abXcd");
    assert!(!lp.screen().contains("[pasted"), "{}", lp.screen());
    assert_eq!(lp.state.draft(), "abXcd");
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(lp.state.draft(), format!("abX{paste}cd"));
    assert!(lp.key(KeyCode::Enter, none));
    assert_eq!(last_sent(&lp), format!("abX{paste}cd"));

    // A word deleted into the chip takes all of it.
    let chip = paste_between(&mut lp, "before ", &paste, " after");
    lp.key(KeyCode::Char('w'), ctrl);
    lp.key(KeyCode::Char('w'), ctrl);
    assert!(
        !composer_text(&lp).contains("pasted"),
        "{}",
        composer_text(&lp)
    );
    assert!(!lp.screen().contains("[pasted"), "{}", lp.screen());
    assert_eq!(lp.state.draft(), composer_text(&lp));
    lp.key(KeyCode::Char('u'), ctrl);
    assert!(composer_text(&lp).contains(&chip), "{}", composer_text(&lp));
    assert!(lp.state.draft().starts_with(&format!("before {paste}")));
    assert!(lp.key(KeyCode::Enter, none));
    let sent = last_sent(&lp);
    assert!(
        sent.starts_with(&format!("before {paste}")),
        "{}",
        &sent[..80]
    );
    assert!(!sent.contains("[pasted"));
}

/// Ctrl+U in the composer takes back a typed word at a time, as the file
/// view's undo does, and Ctrl+R puts it back (a tester pressed Ctrl+U
/// three times and got back three characters). Each key draws a frame
/// that shows the text.
#[test]
fn composer_undo_takes_a_word_at_a_time() {
    let s = with_window(200_000, r#"{"turns": [{"text": "seen"}]}"#);
    let mut lp = frames::Loop::new(s, 100, 30);
    let ctrl = KeyModifiers::CONTROL;
    lp.type_text("abcdefghij and more");
    for (key, shown) in [
        ('u', "abcdefghij and "),
        ('u', "abcdefghij and"),
        ('u', "abcdefghij "),
        ('u', "abcdefghij"),
        ('r', "abcdefghij "),
        ('r', "abcdefghij and"),
    ] {
        assert!(lp.key(KeyCode::Char(key), ctrl), "Ctrl+{key} draws");
        assert_eq!(composer_text(&lp), shown);
        // The composer's row, as drawn between its borders.
        let screen = lp.screen();
        let drawn = screen
            .lines()
            .find_map(|line| {
                let inside = line.split('┃').nth(1)?;
                inside
                    .contains("abcdefghij")
                    .then(|| inside.trim().to_owned())
            })
            .unwrap_or_default();
        assert_eq!(drawn, shown.trim_end(), "{screen}");
    }
}

/// Alt+E puts a paste's text in place of its chip; undoing that brings the
/// chip back still tied to its text (it was sent as its label), and so do
/// Ctrl+X and Ctrl+Y, before a send and after it.
#[test]
fn undo_and_the_cut_buffer_bring_a_chip_back_with_its_text() {
    let s = with_window(
        200_000,
        r#"{"turns": [{"text": "seen"}, {"text": "seen"}]}"#,
    );
    let paste: String = (0..300)
        .map(|i| format!("build step {i} finished\n"))
        .collect();
    let mut lp = frames::Loop::new(s, 120, 40);
    let ctrl = KeyModifiers::CONTROL;
    lp.event(Event::Paste(paste.clone()));
    let chip = composer_text(&lp);
    assert!(chip.starts_with("[pasted #1 · "), "{chip}");
    assert!(lp.key(KeyCode::Char('e'), KeyModifiers::ALT));
    assert!(lp.screen().contains("build step 299"), "{}", lp.screen());
    assert_eq!(lp.state.draft(), paste);
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(lp.state.draft(), "");
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(composer_text(&lp), chip);
    assert!(lp.screen().contains(&chip), "{}", lp.screen());
    assert_eq!(lp.state.draft(), paste, "the chip is tied to its text");
    // Alt+E works on the chip undo brought back.
    assert!(lp.key(KeyCode::Char('e'), KeyModifiers::ALT));
    assert_eq!(composer_text(&lp), paste);
    lp.key(KeyCode::Char('u'), ctrl);
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(composer_text(&lp), chip);

    // Cut (Shift+← takes the whole chip) and put back.
    lp.key(KeyCode::Left, KeyModifiers::SHIFT);
    lp.key(KeyCode::Char('x'), ctrl);
    assert_eq!(composer_text(&lp), "");
    assert_eq!(lp.state.draft(), "");
    lp.key(KeyCode::Char('y'), ctrl);
    assert_eq!(composer_text(&lp), chip);
    assert_eq!(lp.state.draft(), paste);
    lp.type_text(" more");
    assert!(lp.key(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(last_sent(&lp), format!("{paste} more"));
    // The sent message's edits went with it: undo brings nothing back.
    lp.key(KeyCode::Char('u'), ctrl);
    assert_eq!(composer_text(&lp), "");
    // Sending cut the message: Ctrl+Y puts it back, its chip still tied
    // to the text.
    lp.key(KeyCode::Char('y'), ctrl);
    shows(&lp, &format!("{chip} more"), &format!("{paste} more"));
    assert!(lp.key(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(last_sent(&lp), format!("{paste} more"));
    // ↑ recalls what was sent: the text itself, never a label.
    lp.key(KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(composer_text(&lp), format!("{paste} more"));
    assert_eq!(lp.state.draft(), format!("{paste} more"));
}

/// A workspace whose file index lists `pkg/sub/module_42.py` (three
/// lines), the conversation focused, for `@` mentions.
fn with_module(root: &std::path::Path) -> AppState {
    std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
    std::fs::write(
        root.join("pkg/sub/module_42.py"),
        "one = 1\ntwo = 2\nthree = 3\n",
    )
    .unwrap();
    let mut s = state(root);
    hello_tui::workbench::sessions::configure(&mut s.workbench, true, None).unwrap();
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "pkg/sub/module_42.py".into(),
        ]));
    s.focus = hello_tui::keymap::PaneId::Conversation;
    s
}

/// A path inserted from the `@` list ends with a space, to go on typing;
/// `:` typed right after takes the space back, so a range joins the path
/// (`@pkg/sub/module_42.py:1-1`, which F2 lists as line 1, not the whole
/// file). Tab and Enter insert alike; any other key keeps the space.
#[test]
fn a_range_typed_after_an_inserted_mention_joins_it() {
    for insert in [KeyCode::Tab, KeyCode::Enter] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut lp = frames::Loop::new(with_module(&root), 120, 36);
        lp.type_text("x @module_42");
        assert!(lp.screen().contains("Files · 1"), "{}", lp.screen());
        lp.key(insert, KeyModifiers::NONE);
        assert_eq!(composer_text(&lp), "x @pkg/sub/module_42.py ");
        assert!(!lp.screen().contains("Files ·"), "{}", lp.screen());
        lp.type_text(":1-1");
        assert_eq!(composer_text(&lp), "x @pkg/sub/module_42.py:1-1");
        assert!(
            lp.screen().contains("x @pkg/sub/module_42.py:1-1"),
            "{}",
            lp.screen()
        );
        assert!(lp.key(KeyCode::F(2), KeyModifiers::NONE));
        let Some(Overlay::RequestPreview(preview)) = lp.state.overlay() else {
            panic!("F2 is open");
        };
        let files: Vec<String> = preview
            .view
            .as_ref()
            .map(|v| {
                v.mentioned
                    .files
                    .iter()
                    .map(|(label, _)| label.clone())
                    .collect()
            })
            .unwrap();
        assert_eq!(files, ["@pkg/sub/module_42.py:1"], "{insert:?}");
        // F2's row names the line, not the whole file.
        assert!(
            lp.screen().contains("  @pkg/sub/module_42.py:1  "),
            "{}",
            lp.screen()
        );
    }
    // Another key first: the space stays (a `:` later is text).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mut lp = frames::Loop::new(with_module(&root), 120, 36);
    lp.type_text("x @module_42");
    lp.key(KeyCode::Tab, KeyModifiers::NONE);
    lp.type_text("a:");
    assert_eq!(composer_text(&lp), "x @pkg/sub/module_42.py a:");
}

/// A server without `GET /models` (llama.cpp builds, proxies) answers with
/// an HTML error page: `/model` says in one line which model is in use and
/// that the server lists none, without the markup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_on_a_server_without_a_model_list_is_one_line() {
    use loopback::{LoopbackServer, Reply};
    let page = "<!DOCTYPE html>\n<html>\n<head><title>501 Not Implemented</title></head>\n\
                <body>\n<h1>Not Implemented</h1>\n<p>GET /v1/models</p>\n</body>\n</html>\n";
    let server = LoopbackServer::respond_with(Duration::from_secs(30), move |request| {
        if request.method == "GET" {
            return Reply::status(501, &[("content-type", "text/html")], page);
        }
        answer_naming_the_model(request)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = on_loopback(dir.path(), &tx, &server.base_url);
    send(&mut s, "/model");
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .transcript()
            .last()
            .is_some_and(|m| m.text.contains("/model NAME switches anyway"))
    })
    .await;
    let said = &s.workbench.transcript().last().unwrap().text;
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.starts_with("Using qwen3:8b."), "{said}");
    assert!(
        said.contains("does not list its models (HTTP 501)"),
        "{said}"
    );
    assert!(!said.contains('<'), "no markup: {said}");
}

// ---- issue 27: a resumed session shows what the live one showed ----

/// What the conversation shows of each cell: its code, its status (run
/// time, wait) and its `✎` lines (path, diff, counts).
type ShownCell = (
    String,
    CellStatus,
    Vec<(String, String, usize, usize, bool)>,
);

fn shown_cells(s: &AppState) -> Vec<ShownCell> {
    s.workbench
        .transcript()
        .iter()
        .filter_map(|m| m.cell.as_ref())
        .map(|c| {
            let changes = c
                .changes
                .iter()
                .map(|ch| {
                    (
                        ch.shown.clone(),
                        ch.diff.clone(),
                        ch.added,
                        ch.removed,
                        ch.earlier_unknown,
                    )
                })
                .collect();
            (c.code.clone(), c.status.clone(), changes)
        })
        .collect()
}

/// Each open file with its cursor, and the active tab's index.
type ShownTabs = (Vec<(std::path::PathBuf, (usize, usize))>, usize);

fn shown_tabs(s: &AppState) -> ShownTabs {
    let editors = s.workbench.editors();
    let tabs = editors
        .tabs
        .iter()
        .map(|doc| (doc.path().to_path_buf(), doc.cursor()))
        .collect();
    (tabs, editors.active)
}

/// Issue 27, item 14: after a restart (`--resume ID`, as `--continue`
/// does), each of the demo's cells, run in a real kernel, shows what it
/// showed live: the same run time and the same `✎` line with its diff; and
/// the files open when the workbench quit are open again, the active one
/// active, each cursor where it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_cells_and_tabs_as_they_were() {
    let (mut s, mut rx, dir, auth, _original) = linked_demo(&[]);
    send(&mut s, "why does checkAuth reject users?");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    wait_for_the_write(&mut s, &mut rx).await;
    let live = shown_cells(&s);
    assert_eq!(live.len(), 2, "{live:#?}");
    let edit = &live[1];
    assert_eq!(edit.2.len(), 1, "the fix shows a ✎ line: {edit:#?}");
    assert_eq!(edit.2[0].0, "auth.ts");
    assert!(edit.2[0].1.contains("+"), "with its diff: {edit:#?}");
    assert!(
        live.iter().all(|c| matches!(
            c.1,
            CellStatus::Succeeded {
                duration_ms: Some(_),
                ..
            }
        )),
        "{live:#?}"
    );
    let root = dir.path().canonicalize().unwrap();
    hello_tui::app::editors::open(&mut s, &root.join("README.md"), Some((3, 5)));
    hello_tui::app::editors::open(&mut s, &auth, Some((2, 4)));
    let tabs = shown_tabs(&s);
    assert!(tabs.0.len() >= 2, "{tabs:?}");
    let again = restarted(s, dir.path()).await;
    assert_eq!(shown_cells(&again), live);
    assert_eq!(shown_tabs(&again), tabs);
    assert_eq!(
        again.workbench.editors().active().unwrap().path(),
        auth.as_path()
    );
    assert!(
        !again
            .workbench
            .transcript()
            .iter()
            .any(|m| m.text.starts_with("Not reopened")),
        "every file is there"
    );
}

/// Writes session `id` of `root` as the lines given, as a file on disk.
fn write_session(root: &std::path::Path, id: &str, lines: &[&str]) {
    let dir = hello_tui::session::sessions_dir(root);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").unwrap();
}

/// The lines of a session written before cells and tabs were recorded: no
/// origin, no message ids, no `cell`, no `tabs`.
const OLD_SESSION: [&str; 6] = [
    r#"{"type":"session.started","id":"20250101-000000-0a0a","workspace":"/w","created_at":"2025-01-01T00:00:00Z","model":"m"}"#,
    r#"{"type":"message","role":"user","content":"fix it"}"#,
    r#"{"type":"message","role":"assistant","content":null,"tool_calls":[{"id":"call_1","name":"code_action","arguments":"{\"code\":\"fs.edit('auth.ts', 'a', 'b')\"}"}]}"#,
    r#"{"type":"message","role":"tool","tool_call_id":"call_1","content":"{\"ok\":true,\"stdout\":\"edited\\n\"}"}"#,
    r#"{"type":"usage","prompt_tokens":3,"completion_tokens":4}"#,
    r#"{"type":"message","role":"assistant","content":"Fixed."}"#,
];

/// Issue 27: a session file in the old shape still resumes; its cell,
/// whose time was never recorded, says it succeeded without claiming
/// `0 ms`, and no tab opens.
#[test]
fn a_session_written_before_cells_were_recorded_still_resumes() {
    let dir = tempfile::tempdir().unwrap();
    write_session(dir.path(), "20250101-000000-0a0a", &OLD_SESSION);
    let mut s = state(dir.path());
    hello_tui::workbench::sessions::configure(
        &mut s.workbench,
        false,
        Some(Some("20250101-000000-0a0a".into())),
    )
    .unwrap();
    let cells = shown_cells(&s);
    assert_eq!(cells.len(), 1, "{cells:#?}");
    assert_eq!(cells[0].0, "fs.edit('auth.ts', 'a', 'b')");
    assert_eq!(
        cells[0].1,
        CellStatus::Succeeded {
            duration_ms: None,
            waited_ms: 0
        }
    );
    assert!(cells[0].2.is_empty());
    assert!(s.workbench.editors().tabs.is_empty());
    let screen = draw(&mut s, 100, 30).backend().to_string();
    assert!(screen.contains("▍tool ✓"), "{screen}");
    assert!(!screen.contains("0 ms"), "{screen}");
}

/// Issue 27: the conversation of a resumed session, drawn through the
/// loop's update and draw: the cell's run time apart from its wait on the
/// user and its `✎` line with the diff, from a session file on disk. The
/// file's tabs are untrusted: only the one inside the workspace opens; a
/// missing file, an absolute path, a `..` and a link leading out are
/// skipped, with one notice.
#[test]
fn a_resumed_cell_is_drawn_with_its_time_wait_and_changes() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "outside\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link.txt")).unwrap();
    std::fs::write(root.join("auth.ts"), "line 1\nok\nline 3\n").unwrap();
    let id = "20250102-000000-0b0b";
    let mut lines: Vec<&str> = vec![
        r#"{"type":"session.started","id":"20250102-000000-0b0b","workspace":"/w","created_at":"2025-01-02T00:00:00Z","model":"m","origin":"tui"}"#,
    ];
    lines.extend_from_slice(&OLD_SESSION[1..5]);
    lines.push(r#"{"type":"cell","tool_call_id":"call_1","message":2,"run_ms":12,"waited_ms":6025,"changes":[{"path":"auth.ts","diff":"@@ -1,3 +1,3 @@\n line 1\n-a\n+ok\n line 3\n","added":1,"removed":1}]}"#);
    lines.push(r#"{"type":"message","role":"assistant","content":"Fixed."}"#);
    lines.push(r#"{"type":"tabs","files":[{"path":"gone.ts"},{"path":"/etc/hostname"},{"path":"../outside/secret.txt"},{"path":"link.txt"},{"path":"auth.ts","line":1,"column":1}],"active":4}"#);
    write_session(&root, id, &lines);

    let mut s = state(&root);
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, Some(Some(id.into())))
        .unwrap();
    let open: Vec<_> = s
        .workbench
        .editors()
        .tabs
        .iter()
        .map(|d| d.path().to_path_buf())
        .collect();
    assert_eq!(open, [root.join("auth.ts")], "only the file inside opens");
    assert_eq!(s.workbench.editors().active().unwrap().cursor(), (1, 1));
    let notices: Vec<&str> = s
        .workbench
        .transcript()
        .iter()
        .filter(|m| m.text.starts_with("Not reopened"))
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("Not reopened: 4 files"),
        "{notices:?}"
    );

    let shown = frames::Loop::new(s, 100, 36);
    let screen = shown.terminal.backend().to_string();
    assert!(screen.contains("✓ 12 ms · waited 6.0 s"), "{screen}");
    assert!(screen.contains("✎ auth.ts  +1 −1"), "{screen}");
    // The conversation pane (the status bar's gauge depends on which token
    // counter is loaded by then).
    let pane: String = screen
        .lines()
        .take(32)
        .map(|row| row.chars().take(41).collect::<String>() + "\n")
        .collect();
    insta::assert_snapshot!(pane);
}

/// Issue 27, item 14: a cell's time is its run time, not the user's wait
/// at the approval prompt. The model's cell writes a file in `ask` mode;
/// the test answers the write's question (through the overlay, as a user
/// would) only after 1.5 s. The cell's run time stays well below the wait,
/// the wait is shown apart, and a resumed session shows both again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cells_time_leaves_out_the_wait_at_the_approval_prompt() {
    const WAIT: Duration = Duration::from_millis(1500);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (tx, mut rx) = event::channel();
    let broker = hello_tui::workbench::approvals::ApprovalBroker::new(
        tx.clone(),
        hello_tui::sandbox::ApprovalMode::Ask,
    );
    let links = fs_links(
        &tx,
        std::collections::BTreeSet::new(),
        Some(Arc::new(broker.clone())),
    );
    let mut s = kernel_state_owned(&root, &tx, Some(&links), broker.cell_owner());
    s.workbench.agent_mut().set_provider(scripted(
        r#"{"turns": [
            {"tool_calls": [{"name": "code_action", "arguments": {"code": "fs.write('note.txt', 'hello\\n')"}}]},
            {"text": "Written."}
        ]}"#,
    ));
    send(&mut s, "write a note");
    let asked_at = loop {
        let event = tokio::time::timeout(Duration::from_secs(20), rx.recv())
            .await
            .expect("the write is asked about")
            .expect("channel open");
        let question = matches!(event, AppEvent::ApprovalRequested(_));
        handle_app_event(&mut s, event);
        if question {
            break std::time::Instant::now();
        }
    };
    hello_tui::app::update::before_frame(&mut s);
    draw(&mut s, 100, 30);
    tokio::time::sleep(WAIT).await;
    key(&mut s, KeyCode::Char('y'), KeyModifiers::NONE);
    let answered = asked_at.elapsed();
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    assert_eq!(
        std::fs::read_to_string(root.join("note.txt")).unwrap(),
        "hello\n"
    );
    let cells = shown_cells(&s);
    let CellStatus::Succeeded {
        duration_ms: Some(run),
        waited_ms,
    } = cells[0].1
    else {
        panic!("{cells:#?}")
    };
    assert!(
        waited_ms >= WAIT.as_millis() as u64 && waited_ms <= answered.as_millis() as u64 + 1000,
        "the wait is the time to answer: {waited_ms} ms of {answered:?}"
    );
    assert!(
        run * 5 < waited_ms,
        "the run time leaves the wait out: {run} ms, waited {waited_ms} ms"
    );
    let screen = draw(&mut s, 100, 30).backend().to_string();
    assert!(
        screen.contains(&format!("✓ {run} ms · waited 1.")),
        "{screen}"
    );
    let again = restarted(s, &root).await;
    assert_eq!(shown_cells(&again)[0].1, cells[0].1);
}

/// The tabs open at the end of a turn are in the session even if the
/// workbench never quits (it died): resuming reopens them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_its_tabs_when_the_workbench_dies() {
    let (mut s, mut rx, dir, auth, _original) = linked_demo(&[]);
    let root = dir.path().canonicalize().unwrap();
    hello_tui::app::editors::open(&mut s, &root.join("README.md"), Some((3, 5)));
    hello_tui::app::editors::open(&mut s, &auth, Some((2, 4)));
    let tabs = shown_tabs(&s);
    s.focus = hello_tui::keymap::PaneId::Conversation;
    send(&mut s, "why does checkAuth reject users?");
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;
    let conversation = s.workbench.agent().conversation().clone();
    let id = conversation
        .lock()
        .await
        .session_id()
        .expect("the turn started a session")
        .to_owned();
    // No `session_at_exit`: the workbench is gone without quitting.
    drop(s);
    let mut again = state(dir.path());
    hello_tui::workbench::sessions::configure(&mut again.workbench, false, Some(Some(id))).unwrap();
    assert_eq!(shown_tabs(&again), tabs);
}

/// Issue 29: `@` in the composer lists the workspace's files; the keys pick
/// one (Tab inserts its path), and on send the file's text goes with the
/// message the server receives — the buffer's text when it is open with
/// unsaved edits, a range as asked — while a secret file mentioned is not
/// sent and the user is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_mentioned_with_at_goes_with_the_message() {
    let server = answering_ok().await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/greeting.py"),
        "def greet():\n    return 'on disk'\n",
    )
    .unwrap();
    let lines: String = (1..=30).map(|i| format!("row {i}\n")).collect();
    std::fs::write(root.join("notes.txt"), lines).unwrap();
    std::fs::write(root.join(".env"), "TOKEN=never-sent-4721\n").unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = kernel_state(&root, &tx, None);
    s.workbench.settings_mut().model = Some("m".into());
    s.workbench.settings_mut().base_url = Some(server.base_url.clone());
    s.workbench.settings_mut().context_window = Some(16_000);
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "notes.txt".into(),
            "src/greeting.py".into(),
        ]));
    // Open with an unsaved edit: the buffer is what goes.
    hello_tui::app::editors::open(&mut s, &root.join("src/greeting.py"), Some((2, 13)));
    type_text(&mut s, "UNSAVED ");
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();
    s.focus = hello_tui::keymap::PaneId::Conversation;

    type_text(&mut s, "explain @greet");
    let screen = draw(&mut s, 120, 36).backend().to_string();
    assert!(screen.contains("Files · 1"), "{screen}");
    assert!(screen.contains("@src/greeting.py"), "{screen}");
    key(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    type_text(&mut s, "with @notes.txt:3-4 and @.env");
    // Esc closes the list; Enter then sends.
    key(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(
        s.conversation.composer.lines(),
        ["explain @src/greeting.py with @notes.txt:3-4 and @.env"]
    );
    let screen = draw(&mut s, 120, 36).backend().to_string();
    assert!(!screen.contains("Files ·"), "closed:\n{screen}");
    key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    pump_until(&mut s, &mut rx, |s| !s.workbench.agent().busy).await;

    let sent: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.json()["messages"].to_string())
        .collect();
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert!(body.contains("### @src/greeting.py"), "{body}");
    assert!(
        body.contains("return 'UNSAVED on disk'"),
        "the buffer: {body}"
    );
    assert!(body.contains("### @notes.txt:3-4"), "{body}");
    assert!(
        body.contains("(lines 3-4 of 30)\\nrow 3\\nrow 4\\n"),
        "{body}"
    );
    assert!(!body.contains("row 5"), "{body}");
    assert!(!body.contains("never-sent-4721"), "{body}");
    let said: Vec<&str> = s
        .workbench
        .transcript()
        .iter()
        .map(|e| e.text.as_str())
        .collect();
    assert!(
        said.contains(&"@.env is not sent: it may hold secrets."),
        "{said:#?}"
    );
    // The conversation shows what was typed and that files went with it,
    // not the files' text (a tester saw a whole file in the "you" message,
    // and again in the transcript printed after quit).
    let you = said
        .iter()
        .find(|t| t.starts_with("explain @src/greeting.py"))
        .expect("the prompt is in the conversation");
    assert_eq!(
        *you,
        "explain @src/greeting.py with @notes.txt:3-4 and @.env\n\
         ↳ sent with pinned results or @-mentioned files"
    );
    let screen = draw(&mut s, 120, 36).backend().to_string();
    assert!(!screen.contains("row 3"), "{screen}");
    assert!(!screen.contains("pinned-context"), "{screen}");
}

/// A cell that ignores SIGINT cannot be stopped by the interrupt: the
/// first Ctrl+C says it is interrupting, and a second one a moment later
/// stops the kernel, so the cell ends and the next one runs (a tester's
/// `signal.signal(SIGINT, SIG_IGN)` loop ran until `/new kernel`). A second
/// Ctrl+C sooner is one more SIGINT, for a cell that caught the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ctrl_c_stops_a_cell_that_ignores_the_first() {
    use hello_tui::workbench::transcript::CellStatus;
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    type_text(
        &mut s,
        "%py import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); print('looping', flush=True)\n[time.sleep(0.05) for _ in iter(int, 1)]",
    );
    key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let running = |s: &AppState| {
        s.workbench.transcript().iter().any(|m| {
            m.cell
                .as_ref()
                .is_some_and(|c| c.status == CellStatus::Running)
                && m.text.contains("looping")
        })
    };
    pump_until(&mut s, &mut rx, running).await;
    let ctrl_c = || Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    handle_terminal_event(&mut s, ctrl_c());
    // On a 120-column status bar, where a longer line was cut.
    let screen = draw(&mut s, 120, 30).backend().to_string();
    assert!(screen.contains("Ctrl+C again stops the kernel"), "{screen}");
    // Sooner than a moment: one more SIGINT, which it ignores too.
    handle_terminal_event(&mut s, ctrl_c());
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(event) = rx.try_recv() {
        handle_app_event(&mut s, event);
    }
    assert!(running(&s), "the cell ignores SIGINT");
    s.clock.advance(hello_tui::app::interrupt::ESCALATE_AFTER);
    handle_terminal_event(&mut s, ctrl_c());
    pump_until(&mut s, &mut rx, |s| !running(s)).await;
    assert!(
        s.workbench.transcript().iter().any(|m| m
            .text
            .contains("The cell ignored Ctrl+C, so the kernel was stopped")),
        "told"
    );
    // The next cell runs in a fresh kernel.
    type_text(&mut s, "%py print(40 + 2)");
    key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    pump_until(&mut s, &mut rx, |s| {
        s.workbench.transcript().iter().any(|m| {
            m.cell
                .as_ref()
                .is_some_and(|c| c.status != CellStatus::Running)
                && m.text.contains("42")
        })
    })
    .await;
}

/// A cell whose output passes the pane's cap still shows how it ended:
/// the end of what the kernel kept goes after the cut (a tester's
/// `END-MARK` after a 600 KB line never showed, nor did any cut note).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cell_with_huge_output_still_shows_its_end() {
    use hello_tui::workbench::transcript::CellStatus;
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    type_text(&mut s, "%py print('B' * 600000); print('END-MARK')");
    key(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let done = |s: &AppState| {
        s.workbench.transcript().iter().any(|m| {
            m.cell
                .as_ref()
                .is_some_and(|c| !matches!(c.status, CellStatus::Running))
        })
    };
    pump_until(&mut s, &mut rx, done).await;
    let cell = s
        .workbench
        .transcript()
        .iter()
        .find(|m| m.cell.is_some())
        .unwrap();
    assert!(
        cell.text.trim_end().ends_with("END-MARK"),
        "{}",
        &cell.text[cell.text.len().saturating_sub(300)..]
    );
    assert!(
        cell.text.len() < 300 * 1024,
        "still capped: {}",
        cell.text.len()
    );
}

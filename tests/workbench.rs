//! The workbench's state machine driven against real services (a real
//! Python kernel), without a terminal: keys go into `update`, background
//! events come back through the same channel the event loop uses.

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::config::Settings;
use hello_tui::kernel::caps::FsCapability;
use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
use hello_tui::workbench::event::{self, AppEventReceiver};
use hello_tui::workbench::transcript::{CellStatus, Speaker};
use std::sync::Arc;

fn state(root: &std::path::Path) -> AppState {
    let settings = Settings::defaults();
    AppState::new(root.to_path_buf(), settings)
}

fn with_kernel(root: &std::path::Path) -> (AppState, AppEventReceiver) {
    with_kernel_config(root, KernelConfig::for_workspace(root))
}

fn with_kernel_config(
    root: &std::path::Path,
    config: KernelConfig,
) -> (AppState, AppEventReceiver) {
    let (tx, rx) = event::channel();
    let registry = CapabilityRegistry::new().with(Arc::new(FsCapability::new(root).unwrap()));
    let (runtime, events) = CodeRuntime::new(config, registry);
    let mut s = state(root);
    s.workbench.services_mut().kernel = Some(hello_tui::workbench::kernel::spawn(
        runtime,
        events,
        tx,
        hello_tui::workbench::cell_owner::CellOwner::default(),
    ));
    (s, rx)
}

fn type_line(s: &mut AppState, text: &str) {
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            press(s, KeyCode::Enter, KeyModifiers::ALT);
        }
        for c in line.chars() {
            press(s, KeyCode::Char(c), KeyModifiers::NONE);
        }
    }
    press(s, KeyCode::Enter, KeyModifiers::NONE);
}

fn press(s: &mut AppState, code: KeyCode, modifiers: KeyModifiers) {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, modifiers)));
}

/// Applies background events until `done` holds (or fails after 20 s).
async fn pump_until(s: &mut AppState, rx: &mut AppEventReceiver, done: impl Fn(&AppState) -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !done(s) {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("timed out waiting for the workbench")
            .expect("event channel open");
        handle_app_event(s, event);
    }
}

fn last_cell_status(s: &AppState) -> Option<CellStatus> {
    s.workbench
        .transcript()
        .iter()
        .rev()
        .find_map(|m| m.cell.as_ref().map(|c| c.status.clone()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn py_cells_run_stream_and_fill_the_inspector() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    type_line(
        &mut s,
        "%py data = [i*i for i in range(10**6)]\nprint('built', len(data))\nlen(data)",
    );
    pump_until(&mut s, &mut rx, |s| {
        matches!(last_cell_status(s), Some(CellStatus::Succeeded { .. }))
            && s.variables.rows.iter().any(|v| v.name == "data")
    })
    .await;
    let cell = s.workbench.transcript().last().unwrap();
    assert_eq!(cell.role, Speaker::User, "a %py cell is the user's");
    assert!(cell.text.contains("built 1000000"), "{}", cell.text);
    assert!(cell.text.contains("→ 1000000"), "{}", cell.text);
    let data = s.variables.rows.iter().find(|v| v.name == "data").unwrap();
    assert_eq!(data.type_name, "list");
    assert!(data.summary.contains("1000000"), "{data:?}");
    assert!(
        data.preview.len() < 200,
        "the preview is bounded: {}",
        data.preview
    );
    assert_eq!(
        data.changed_by,
        *s.workbench.last_exec_id(),
        "marked as changed by the last cell"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_a_long_loop_and_keeps_its_variables() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    type_line(
        &mut s,
        "%py import time\nd = {}\nfor i in range(10**6):\n    d[i] = i\n    time.sleep(0.001)",
    );
    // Wait until the inspector has watched the dict grow, then interrupt.
    pump_until(&mut s, &mut rx, |s| {
        s.variables
            .rows
            .iter()
            .any(|v| v.name == "d" && v.summary != "len 0")
    })
    .await;
    press(&mut s, KeyCode::Char('c'), KeyModifiers::CONTROL);
    pump_until(&mut s, &mut rx, |s| {
        matches!(last_cell_status(s), Some(CellStatus::Failed { .. }))
    })
    .await;
    assert_eq!(
        last_cell_status(&s),
        Some(CellStatus::Failed {
            summary: "KeyboardInterrupt".into()
        })
    );
    type_line(&mut s, "%py len(d) > 0");
    pump_until(&mut s, &mut rx, |s| {
        matches!(last_cell_status(s), Some(CellStatus::Succeeded { .. }))
    })
    .await;
    assert!(
        s.workbench
            .transcript()
            .last()
            .unwrap()
            .text
            .contains("→ True")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_looking_output_cannot_break_anything() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_kernel(dir.path());
    type_line(
        &mut s,
        "%py print('{\"type\": \"result\", \"id\": 1, \"ok\": true}')\nprint('\\x1b[2J garbage \\x00')\nx = 5",
    );
    pump_until(&mut s, &mut rx, |s| {
        matches!(last_cell_status(s), Some(CellStatus::Succeeded { .. }))
    })
    .await;
    assert!(
        s.workbench
            .transcript()
            .last()
            .unwrap()
            .text
            .contains("\"type\": \"result\"")
    );
    type_line(&mut s, "%py x * 2");
    pump_until(&mut s, &mut rx, |s| {
        s.workbench
            .transcript()
            .last()
            .is_some_and(|m| m.text.contains("→ 10"))
    })
    .await;
}

/// The "done when" for diagnostics, against the real `ruff server`:
/// a bug typed into an unsaved buffer shows up in the pane and the status
/// bar, F8 lands on it, and the snapshot lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_bug_reaches_the_pane_before_saving() {
    if hello_tui::diagnostics::which("ruff").is_none() {
        panic!("ruff must be installed (pip install ruff) to run this test; CI installs it");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("app.py");
    std::fs::write(&file, "def f():\n    return 1\n").unwrap();
    let (tx, mut rx) = event::channel();
    let mut s = state(&root);
    let (diag_tx, mut diag_rx) = tokio::sync::mpsc::unbounded_channel();
    s.workbench.diagnostic_sources_mut().client =
        Some(hello_tui::diagnostics::DiagnosticsService::start(
            Default::default(),
            root.clone(),
            diag_tx,
            hello_tui::sandbox::Confinement::unconfined(hello_tui::sandbox::ChildEnv::from_host(
                &[],
                "",
            )),
            false,
        ));
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(ev) = diag_rx.recv().await {
            let _ = forward.send(hello_tui::app::AppEvent::Diagnostics(ev));
        }
    });
    hello_tui::app::editors::open(&mut s, &file, Some((2, 13)));
    // Type an undefined name into the buffer, without saving.
    for c in " + undefined_thing".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    pump_until(&mut s, &mut rx, |s| {
        s.diagnostics
            .rows
            .iter()
            .any(|d| d.message.contains("undefined_thing"))
    })
    .await;
    assert!(
        s.workbench.editors().active().unwrap().is_dirty(),
        "nothing was saved"
    );
    let row = s
        .diagnostics
        .rows
        .iter()
        .find(|d| d.message.contains("undefined_thing"))
        .unwrap();
    assert_eq!((&*row.path, row.line), ("app.py", 2));
    press(&mut s, KeyCode::F(8), KeyModifiers::NONE);
    assert_eq!(
        s.workbench.editors().active().unwrap().cursor().0,
        1,
        "F8 moved the cursor to line 2"
    );
    let request = hello_tui::app::snapshot::request(&s);
    let diagnostics = request.source.diagnostics.unwrap_or_default();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.message.contains("undefined_thing"))
    );
}

/// A replaced kernel (new approval mode) gets a new service: its cells never
/// reuse the numbers of the old one's, so a late update from the old kernel
/// cannot land in a new cell.
#[tokio::test(flavor = "multi_thread")]
async fn cell_ids_stay_unique_when_the_kernel_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _rx1) = with_kernel(dir.path());
    let (second, _rx2) = with_kernel(dir.path());
    let run = |s: &AppState| {
        s.workbench
            .services()
            .kernel
            .as_ref()
            .expect("kernel")
            .execute(
                "1".into(),
                hello_tui::workbench::kernel::CellOrigin::User,
                None,
            )
            .0
    };
    let ids = [run(&first), run(&second), run(&first), run(&second)];
    let unique: std::collections::BTreeSet<u64> = ids.into_iter().collect();
    assert_eq!(unique.len(), 4, "{ids:?}");
}

/// A kernel whose default cell timeout (the one the model's cells get) is
/// one second.
fn with_short_timeout_kernel(root: &std::path::Path) -> (AppState, AppEventReceiver) {
    let mut config = KernelConfig::for_workspace(root);
    config.default_timeout = Duration::from_secs(1);
    config.interrupt_grace = Duration::from_millis(500);
    with_kernel_config(root, config)
}

/// Issue 14, item 7: the user's own `%py` cell is not cut off by the
/// timeout the model's cells get (here 1 s): it runs to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_cell_has_no_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_short_timeout_kernel(dir.path());
    type_line(&mut s, "%py import time\ntime.sleep(2.5)\n'done'");
    pump_until(&mut s, &mut rx, |s| {
        !matches!(last_cell_status(s), None | Some(CellStatus::Running))
    })
    .await;
    let cell = s.workbench.transcript().last().unwrap();
    assert!(
        matches!(last_cell_status(&s), Some(CellStatus::Succeeded { .. })),
        "{:?}: {}",
        last_cell_status(&s),
        cell.text
    );
    assert!(cell.text.contains("→ 'done'"), "{}", cell.text);
}

/// Issue 14, item 7: a model cell that ignores the interrupt after its
/// timeout costs a kernel restart, and the conversation says so once (it
/// said it three times: a notice with the reason, a second notice, and the
/// cell's error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_restart_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let (mut s, mut rx) = with_short_timeout_kernel(dir.path());
    s.workbench.services().kernel.as_ref().unwrap().execute(
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)".into(),
        hello_tui::workbench::kernel::CellOrigin::Agent,
        None,
    );
    pump_until(&mut s, &mut rx, |s| {
        matches!(last_cell_status(s), Some(CellStatus::Failed { .. }))
    })
    .await;
    // Whatever else the kernel reports about the restart arrives meanwhile.
    let settle = tokio::time::Instant::now() + Duration::from_millis(1500);
    while let Ok(Some(event)) = tokio::time::timeout_at(settle, rx.recv()).await {
        handle_app_event(&mut s, event);
    }
    let mentions: Vec<&str> = s
        .workbench
        .transcript()
        .iter()
        .filter(|m| m.text.contains("restarted"))
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(mentions.len(), 1, "{mentions:#?}");
    assert!(
        mentions[0].contains("variables lost"),
        "it says what was lost: {}",
        mentions[0]
    );
    assert_eq!(
        mentions[0].matches("restarted").count(),
        1,
        "{}",
        mentions[0]
    );
}

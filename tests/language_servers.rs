//! Language servers as they are in 2026, against the real programs:
//! TypeScript 7's own `tsc --lsp` (installed by `scripts/test` into the
//! project-local npm prefix) through the workbench, `/lsp`, and
//! `snapshot --open` waiting for the servers. (Ruff beside basedpyright,
//! merged, is in tests/diagnostics.rs.)

#[path = "support/test_deps.rs"]
mod test_deps;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::event::{self, AppEventReceiver};
use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::config::Settings;
use hello_tui::diagnostics::{DiagnosticsService, which};
use tokio::sync::mpsc;

const PATIENCE: Duration = Duration::from_secs(60);

fn press(s: &mut AppState, code: KeyCode) {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn type_text(s: &mut AppState, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c));
    }
}

/// Applies background events until `done` holds.
async fn pump_until(
    s: &mut AppState,
    rx: &mut AppEventReceiver,
    what: &str,
    done: impl Fn(&AppState) -> bool,
) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done(s) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(event)) => {
                handle_app_event(s, event);
            }
            _ => {
                let said: Vec<&str> = s
                    .conversation
                    .messages
                    .iter()
                    .map(|m| m.text.as_str())
                    .collect();
                panic!(
                    "never saw {what}; rows: {:#?}; the conversation (server failures are \
                     said there): {said:#?}",
                    s.diagnostics.rows
                )
            }
        }
    }
}

/// The workbench's diagnostics as the TUI starts them: the settings'
/// servers, under the confinement check commands get.
fn start_diagnostics(s: &mut AppState) -> AppEventReceiver {
    let (tx, rx) = event::channel();
    let confinement = hello_tui::app::safety::checks_confinement(s);
    let (diag_tx, mut diag_rx) = mpsc::unbounded_channel();
    let service = DiagnosticsService::start(
        s.settings.diagnostics.clone(),
        s.workspace_root.clone(),
        diag_tx,
        confinement,
        s.trust.trust.is_trusted(),
    );
    tokio::spawn(async move {
        while let Some(ev) = diag_rx.recv().await {
            let _ = tx.send(hello_tui::app::AppEvent::Diagnostics(ev));
        }
    });
    hello_tui::app::diagnostics::attach(s, service);
    rx
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The `/lsp` line of a server: its state, after `name (languages): `.
fn lsp_state(listing: &str, name: &str) -> String {
    listing
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("{name} (")))
        .find_map(|rest| rest.split_once("): "))
        .map(|(_, state)| state.to_owned())
        .unwrap_or_else(|| panic!("{name} not in /lsp:\n{listing}"))
}

/// Alt+1 (the conversation, where the composer is), then `/lsp`.
fn run_slash_lsp(s: &mut AppState) -> String {
    handle_terminal_event(
        s,
        Event::Key(KeyEvent::new(KeyCode::Char('1'), KeyModifiers::ALT)),
    );
    type_text(s, "/lsp");
    press(s, KeyCode::Enter);
    s.conversation
        .messages
        .last()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

/// The seed's scene, made real: the project resolves TypeScript 7 (its
/// `node_modules` is the test prefix), the user types a use of an undefined
/// `config` into `token.ts` without saving, and TS 7's own server reports
/// it (TS2304 at 42:18) to the pane and the snapshot — impossible with
/// `typescript-language-server`, which cannot load TS 7.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_7_reports_the_seed_scenes_unsaved_error() {
    let Some(manifest) =
        test_deps::installed("npm/node_modules/typescript/package.json", "TypeScript 7")
    else {
        return;
    };
    let version = std::fs::read_to_string(&manifest).unwrap();
    assert!(version.contains("\"version\": \"7."), "{version}");
    let node_modules = manifest.parent().unwrap().parent().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snapshot/seed");
    copy_tree(&seed, &root);
    std::os::unix::fs::symlink(node_modules, root.join("node_modules")).unwrap();
    let file = root.join("src/auth/token.ts");
    let disk = std::fs::read_to_string(&file).unwrap();

    let mut s = AppState::new(root.clone(), Settings::defaults());
    // The project's own TypeScript is what serves it: a trusted workspace.
    s.trust.trust = hello_tui::trust::Trust::Trusted(hello_tui::trust::Why::Flag);
    let mut rx = start_diagnostics(&mut s);
    hello_tui::app::editors::open(&mut s, &file, Some((42, 7)));
    // Line 42 was `grant_type: "refresh_token",`; `config` lands at 42:18.
    type_text(&mut s, "client_id: config.clientId, ");
    pump_until(&mut s, &mut rx, "TS2304 for the unsaved `config`", |s| {
        s.diagnostics
            .rows
            .iter()
            .any(|d| d.message == "Cannot find name 'config'.")
    })
    .await;
    let row = s
        .diagnostics
        .rows
        .iter()
        .find(|d| d.message == "Cannot find name 'config'.")
        .unwrap();
    assert_eq!(
        (row.path.as_str(), row.line, row.column),
        ("src/auth/token.ts", 42, 18)
    );
    assert_eq!(row.source.as_deref(), Some("ts 2304"));
    assert!(s.editors.active().unwrap().is_dirty());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        disk,
        "nothing saved"
    );

    let view = hello_tui::app::snapshot::build(hello_tui::app::snapshot::request(&s));
    let markdown = &view.rendered.markdown;
    assert!(
        markdown.contains(
            "`src/auth/token.ts:42:18` error, reported by ts 2304: Cannot find name 'config'."
        ),
        "{markdown}"
    );

    let listing = run_slash_lsp(&mut s);
    assert!(
        lsp_state(&listing, "tsc-lsp").starts_with("running"),
        "{listing}"
    );
    assert!(
        lsp_state(&listing, "typescript-language-server").starts_with("not for TypeScript 7.0.2"),
        "{listing}"
    );
    if let Some(service) = &s.diagnostic_sources.client {
        service.shutdown().await;
    }
}

fn require(program: &str, install: &str) {
    assert!(
        which(program).is_some(),
        "this test needs the real {program}: {install} (scripts/test installs it)"
    );
}

const BAD_PY: &str = "import os\n\nprint(undefined_name)\n";

fn hello_tui(args: &[&str], config: &Path) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_hello-tui"))
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap();
    (output, started.elapsed())
}

/// `snapshot -C DIR --open bad.py` starts ruff (and the file's checks),
/// waits for what they say and puts it in the Markdown; with
/// `--diagnostics-wait 0` nothing starts; a server that never answers
/// costs the wait, not more.
#[test]
fn snapshot_open_carries_the_servers_diagnostics() {
    require("ruff", "pip install ruff");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.py"), BAD_PY).unwrap();
    let ruff_only = dir.path().join("ruff.toml");
    std::fs::write(
        &ruff_only,
        "[diagnostics]\ndisabled_servers = [\"basedpyright-langserver\", \"pylsp\"]\n",
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    let snapshot = ["snapshot", "-C", root, "--open", "bad.py"];

    let (out, _) = hello_tui(&snapshot, &ruff_only);
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        markdown.contains(
            "`bad.py:3:7` error, reported by Ruff [F821]: Undefined name `undefined_name`"
        ),
        "{markdown}"
    );

    let (out, took) = hello_tui(
        &[&snapshot[..], &["--diagnostics-wait", "0"]].concat(),
        &ruff_only,
    );
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(!markdown.contains("## Diagnostics"), "{markdown}");
    assert!(took < Duration::from_secs(2), "did not wait: {took:?}");

    // `sleep` never answers `initialize`: the wait bounds the snapshot.
    let silent = dir.path().join("silent.toml");
    std::fs::write(
        &silent,
        "[diagnostics]\nchecks = []\n[[diagnostics.servers]]\nname = \"silent\"\n\
         language_ids = [\"python\"]\ncommand = \"sleep\"\nargs = [\"600\"]\n",
    )
    .unwrap();
    let (out, took) = hello_tui(
        &[&snapshot[..], &["--diagnostics-wait", "1"]].concat(),
        &silent,
    );
    assert!(out.status.success());
    assert!(
        took >= Duration::from_secs(1),
        "waited for the server: {took:?}"
    );
    assert!(
        took < Duration::from_secs(8),
        "and no longer than the wait plus shutdown: {took:?}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("## Diagnostics"));

    let (out, _) = hello_tui(
        &[&snapshot[..], &["--diagnostics-wait=-1"]].concat(),
        &ruff_only,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 or more"));
}

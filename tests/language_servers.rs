//! Language servers as they are in 2026, against the real programs:
//! TypeScript 7's own `tsc --lsp` (installed by `scripts/test` into the
//! project-local npm prefix) through the workbench, `/lsp`, and
//! `snapshot --open` waiting for the servers. (Ruff beside basedpyright,
//! merged, is in tests/diagnostics.rs.)

#[path = "support/frames.rs"]
mod frames;
#[path = "support/test_deps.rs"]
mod test_deps;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::config::Settings;
use hello_tui::diagnostics::{DiagnosticsService, which};
use hello_tui::workbench::event::{self, AppEventReceiver};
use tokio::sync::mpsc;

const PATIENCE: Duration = Duration::from_secs(60);

fn press(s: &mut AppState, code: KeyCode) {
    press_with(s, code, KeyModifiers::NONE);
}

fn press_with(s: &mut AppState, code: KeyCode, modifiers: KeyModifiers) {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, modifiers)));
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
                    .workbench
                    .transcript()
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
    let confinement = hello_tui::workbench::safety::checks_confinement(&mut s.workbench);
    let (diag_tx, mut diag_rx) = mpsc::unbounded_channel();
    let service = DiagnosticsService::start(
        s.workbench.settings().diagnostics.clone(),
        s.workbench.workspace_root().clone(),
        diag_tx,
        confinement,
        s.workbench.trust().trust.is_trusted(),
    );
    tokio::spawn(async move {
        while let Some(ev) = diag_rx.recv().await {
            let _ = tx.send(hello_tui::app::AppEvent::Diagnostics(ev));
        }
    });
    hello_tui::workbench::diagnostics::attach(&mut s.workbench, service);
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
    s.workbench
        .transcript()
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
    s.workbench.trust_mut().trust = hello_tui::trust::Trust::Trusted(hello_tui::trust::Why::Flag);
    let mut rx = start_diagnostics(&mut s);
    hello_tui::app::editors::open(&mut s, &file, Some((42, 7)));
    // Line 42 was `grant_type: "refresh_token",`; `config` lands at 42:18.
    type_text(&mut s, "client_id: config.clientId, ");
    pump_until(&mut s, &mut rx, "TS2304 for the unsaved `config`", |s| {
        s.diagnostics
            .rows
            .iter()
            .any(|d| &*d.message == "Cannot find name 'config'.")
    })
    .await;
    let row = s
        .diagnostics
        .rows
        .iter()
        .find(|d| &*d.message == "Cannot find name 'config'.")
        .unwrap();
    assert_eq!(
        (&*row.path, row.line, row.column),
        ("src/auth/token.ts", 42, 18)
    );
    assert_eq!(row.source.as_deref(), Some("ts 2304"));
    assert!(s.workbench.editors().active().unwrap().is_dirty());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        disk,
        "nothing saved"
    );

    let view = hello_tui::workbench::snapshot::build(hello_tui::app::snapshot::request(&s));
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
    if let Some(service) = &s.workbench.diagnostic_sources().client {
        service.shutdown().await;
    }
}

/// The problem the Diagnostics pane shows whole (the selected one, wrapped
/// under its place; the others are cut at the pane's edge), its lines
/// joined, spaces collapsed.
fn shown_whole(screen: &str) -> String {
    let lines: Vec<Vec<char>> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let title: Vec<char> = "╭ 4 Diagnostics".chars().collect();
    let (top, left) = lines
        .iter()
        .enumerate()
        .find_map(|(y, l)| {
            (0..l.len())
                .find(|&x| l[x..].starts_with(&title))
                .map(|x| (y, x))
        })
        .expect("the Diagnostics pane");
    let inner: Vec<String> = lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..].iter().take_while(|c| **c != '│').collect())
        .collect();
    let mut entries: Vec<Vec<&str>> = Vec::new();
    for line in &inner {
        let starts = line.starts_with(' ') && !line.starts_with("  ");
        match entries.last_mut() {
            Some(entry) if line.starts_with("  ") && !line.trim().is_empty() => entry.push(line),
            _ if starts => entries.push(vec![line]),
            _ => {}
        }
    }
    let whole: Vec<String> = entries
        .iter()
        .filter(|entry| entry.len() > 1)
        .map(|entry| {
            entry
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(whole.len(), 1, "one problem is shown whole: {inner:#?}");
    whole.into_iter().next().unwrap_or_default()
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

/// Issue 27: F8 / Shift+F8 walk every problem of a file as ruff reports
/// it, the two-line ones (the problem, then `help: …`) included, which the
/// walk used to skip by comparing the message with the list's one-line
/// version of it. Keys go through `update`, and after each the screen is
/// drawn and read as the user reads it: the cursor's place in the file
/// view's status line and the selected problem in the Diagnostics pane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f8_and_shift_f8_walk_every_ruff_problem_two_line_messages_included() {
    require("ruff", "pip install ruff");
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("walk.py");
    std::fs::write(
        &file,
        "import os\nimport sys\n\n\ndef total(x):\n    unused = 1\n    return x + undefined_name\n",
    )
    .unwrap();
    let mut s = AppState::new(root.clone(), Settings::defaults());
    s.workbench.settings_mut().diagnostics.disabled_servers =
        vec!["basedpyright-langserver".into(), "pylsp".into()];
    let mut rx = start_diagnostics(&mut s);
    hello_tui::app::editors::open(&mut s, &file, Some((1, 1)));
    pump_until(&mut s, &mut rx, "ruff's four problems", |s| {
        s.diagnostics.rows.len() == 4
    })
    .await;
    let theme = hello_tui::theme::Theme::builtin_default();
    let os = "▲ 1:8 `os` imported but unused · help: Remove unused import: `os` Ruff F401";
    let sys = "▲ 2:8 `sys` imported but unused · help: Remove unused import: `sys` Ruff F401";
    let unused = "▲ 6:5 Local variable `unused` is assigned to but never used · help: Remove \
                  assignment to unused variable `unused` Ruff F841";
    let undefined = "✖ 7:16 Undefined name `undefined_name` Ruff F821";
    let walk = [
        (KeyModifiers::NONE, "1:8", os),
        (KeyModifiers::NONE, "2:8", sys),
        (KeyModifiers::NONE, "6:5", unused),
        (KeyModifiers::NONE, "7:16", undefined),
        (KeyModifiers::NONE, "1:8", os),
        (KeyModifiers::SHIFT, "7:16", undefined),
        (KeyModifiers::SHIFT, "6:5", unused),
        (KeyModifiers::SHIFT, "2:8", sys),
        (KeyModifiers::SHIFT, "1:8", os),
    ];
    for (step, (modifiers, place, problem)) in walk.into_iter().enumerate() {
        press_with(&mut s, KeyCode::F(8), modifiers);
        let screen = frames::draw_settled(&mut s, &theme, 120, 40)
            .backend()
            .to_string();
        let key = if modifiers == KeyModifiers::SHIFT {
            "Shift+F8"
        } else {
            "F8"
        };
        assert!(
            screen.contains(&format!(" walk.py {place} Python ")),
            "{key} (step {}) puts the cursor at {place}:\n{screen}",
            step + 1
        );
        assert_eq!(
            shown_whole(&screen),
            problem,
            "{key} (step {}) selects the problem at {place}:\n{screen}",
            step + 1
        );
    }
    if let Some(service) = &s.workbench.diagnostic_sources().client {
        service.shutdown().await;
    }
}

//! Drives the real `hello-tui` binary: command-line errors directly, and the
//! full-screen workbench inside a tmux pane (a real pseudo-terminal).

use std::path::Path;
use std::process::Command;

#[path = "support/tmux.rs"]
mod tmux;
use tmux::Tmux;

const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

#[test]
fn missing_workspace_exits_2_with_a_clear_error() {
    let out = Command::new(BIN)
        .arg("/definitely/not/here")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/definitely/not/here") && err.contains("no such file"),
        "{err}"
    );
}

#[test]
fn exec_sessions_and_continue_explain_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env_remove("HELLO_TUI_MODEL")
            .env_remove("HELLO_TUI_CONFIG")
            .output()
            .unwrap()
    };
    let root = dir.path().to_str().unwrap();
    let out = run(&["exec", "-C", root, "why?"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--model"));
    let out = run(&["sessions", "-C", root]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("No sessions"));
    let out = run(&["--continue", root]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"));
}

#[test]
fn help_and_version_read_well() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for part in [
        "Usage: hello-tui",
        "[PATH]",
        "src/app.py:12:5",
        "--theme",
        "exec",
        "snapshot",
        "sessions",
    ] {
        assert!(help.contains(part), "--help lacks {part}");
    }
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("hello-tui "));
}

#[test]
fn bad_theme_and_bad_config_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[model]\nnmae = \"x\"\n").unwrap();
    let out = Command::new(BIN)
        .arg("--config")
        .arg(&config)
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml:2:") && err.contains("nmae"),
        "{err}"
    );

    let out = Command::new(BIN)
        .args(["--theme", "solarized"])
        .arg(dir.path())
        .env(
            "HELLO_TUI_CONFIG",
            dir.path().join("absent-is-an-error.toml"),
        )
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn workbench_starts_shows_every_pane_and_quits_restoring_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    let command = format!(
        "HELLO_TUI_LOG_FILE={} HELLO_TUI_CONFIG={} {} {}; echo EXIT=$?; sleep 30",
        log.display(),
        Path::new("/dev/null").display(),
        BIN,
        dir.path().display()
    );
    let tmux = Tmux::start("binary", &command, 100, 30);
    let screen = tmux.wait_for("Diagnostics");
    for title in [
        "Conversation",
        "Message",
        "Variables",
        "Diagnostics",
        "Ctrl+Q quit",
    ] {
        assert!(screen.contains(title), "missing {title}:\n{screen}");
    }
    // No file is open: the file view gives its room to the conversation
    // until the keyboard goes to it.
    assert!(!screen.contains("No file"), "{screen}");
    tmux.keys(&["M-2"]);
    tmux.wait_for("No file");
    tmux.keys(&["M-1"]);
    assert_eq!(tmux.flag("alternate_on"), "1");
    assert_eq!(tmux.flag("mouse_any_flag"), "1");

    tmux.keys(&["F1"]);
    tmux.wait_for("Show this help");
    // Wait for Esc to land on its own: a terminal cannot tell Esc followed
    // at once by `h` from Alt+H, and neither can a human typing that fast.
    tmux.keys(&["Escape"]);
    tmux.wait_for("No messages yet");
    tmux.keys(&["hello", "Enter"]);
    tmux.wait_for("No model is configured");

    tmux.keys(&["C-q"]);
    let screen = tmux.wait_for("EXIT=0");
    assert!(
        !screen.contains("Conversation"),
        "the alternate screen was left:\n{screen}"
    );
    assert_eq!(tmux.flag("alternate_on"), "0");
    assert_eq!(tmux.flag("mouse_any_flag"), "0");
}

#[test]
fn snapshot_subcommand_prints_the_seed_scene() {
    let out = Command::new(BIN)
        .args(["snapshot", "-C", "tests/fixtures/snapshot/seed"])
        .args(["--open", "src/auth/token.ts:42:7", "--select", "35-68"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let markdown = String::from_utf8_lossy(&out.stdout);
    assert!(
        markdown.contains("`src/auth/token.ts` lines 35–68"),
        "{markdown}"
    );
    assert!(markdown.contains("/12000 chars used"));

    let out = Command::new(BIN)
        .args(["snapshot", "--scene", "/definitely/missing.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 14, item 15: `hello-tui sessions` says which session came from the
/// workbench and which from `exec` (older files: `?`), and `--continue`
/// resumes the user's last workbench conversation even when an `exec` run
/// is newer.
#[test]
fn sessions_show_their_origin_and_continue_prefers_the_workbench() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let sessions = hello_tui::session::sessions_dir(&root);
    std::fs::create_dir_all(&sessions).unwrap();
    let write = |id: &str, at: &str, origin: &str, prompt: &str| {
        let started = serde_json::json!({
            "type": "session.started", "id": id, "workspace": root.to_string_lossy(),
            "created_at": at, "model": "m", "origin": origin,
        });
        let mut started = started;
        if origin.is_empty() {
            started.as_object_mut().unwrap().remove("origin");
        }
        let message =
            serde_json::json!({"type": "message", "id": 0, "role": "user", "content": prompt});
        std::fs::write(
            sessions.join(format!("{id}.jsonl")),
            format!("{started}\n{message}\n"),
        )
        .unwrap();
    };
    let tui = "20261201-100000-aaaa";
    let exec = "20261201-120000-bbbb";
    let old = "20261130-100000-cccc";
    write(tui, "2026-12-01T10:00:00Z", "tui", "the user's question");
    write(exec, "2026-12-01T12:00:00Z", "exec", "a scripted run");
    write(old, "2026-11-30T10:00:00Z", "", "from an older version");

    let out = Command::new(BIN)
        .args(["sessions", "-C"])
        .arg(&root)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    let origin_of = |id: &str| {
        let line = listing.lines().find(|l| l.starts_with(id)).expect("listed");
        line.split_whitespace()
            .nth(3)
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(origin_of(tui), "tui", "{listing}");
    assert_eq!(origin_of(exec), "exec", "{listing}");
    assert_eq!(origin_of(old), "?", "{listing}");
    assert!(
        listing.lines().next().unwrap().contains("origin"),
        "{listing}"
    );

    let state = tempfile::tempdir().unwrap();
    let command = format!(
        "HELLO_TUI_RECOVERY_DIR={rec} HELLO_TUI_LOG_FILE={log} HELLO_TUI_CONFIG=/dev/null {BIN} --continue {dir}",
        rec = state.path().join("recovery").display(),
        log = state.path().join("log.txt").display(),
        dir = root.display(),
    );
    let tmux = Tmux::start("continue-origin", &command, 120, 36);
    let screen = tmux.wait_for(&format!("Resumed session {tui}"));
    assert!(screen.contains("the user's question"), "{screen}");
    tmux.keys(&["C-q"]);
}

/// Quitting with an unsent message keeps it, with the layout, for the next
/// run in the same workspace, and in the user's data dir, not the
/// workspace's (a repository cannot plant a "draft").
#[test]
fn the_draft_and_the_layout_survive_quitting() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let state = dir.path().join("state");
    let command = format!(
        "export HELLO_TUI_STATE_DIR={state} HELLO_TUI_LOG_FILE={log} HELLO_TUI_CONFIG=/dev/null; {BIN} {ws}; {BIN} {ws}; sleep 30",
        state = state.display(),
        log = dir.path().join("log.txt").display(),
        ws = workspace.display(),
    );
    let tmux = Tmux::start("draft", &command, 100, 30);
    tmux.wait_for("Ask the agent");
    tmux.keys(&["-l", "half a thought about auth"]);
    tmux.keys(&["M-z"]);
    let zoomed = tmux.wait_for("half a thought about auth");
    assert!(!zoomed.contains("Variables"), "{zoomed}");
    tmux.keys(&["C-q"]);
    // The second run starts where the first left off.
    let screen = tmux.wait_for("is back in the composer");
    assert!(screen.contains("half a thought about auth"), "{screen}");
    assert!(!screen.contains("Variables"), "still zoomed:\n{screen}");
    assert!(
        !workspace.join(".hello-tui").join("draft.md").exists(),
        "nothing of it is kept in the workspace"
    );
    // Sent or cleared, it is forgotten at the next quit.
    tmux.keys(&["C-u"]);
    tmux.keys(&["M-z", "C-q"]);
    let kept: Vec<_> = walk(&state);
    assert!(
        kept.iter().all(|p| !p.ends_with("draft.md")),
        "an empty composer forgets the draft: {kept:?}"
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

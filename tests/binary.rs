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
        "No file",
        "Variables",
        "Diagnostics",
        "Ctrl+Q quit",
    ] {
        assert!(screen.contains(title), "missing {title}:\n{screen}");
    }
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

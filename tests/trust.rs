//! Workspace trust (issue 25, route 1): a repository that ships its own
//! `node_modules/.bin/typescript-language-server` gets nothing run before
//! the user trusts it. Each test opens the repository the way a user does
//! (the binary in a tmux pane, `snapshot --open`, or the workbench's own
//! update → draw loop) with the trust store in a temp dir
//! (`HELLO_TUI_TRUST_FILE`), never the real one.

#[path = "support/frames.rs"]
mod frames;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/tmux.rs"]
mod tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::update::handle_terminal_event;
use hello_tui::config::Settings;
use hello_tui::overlays::Overlay;
use hello_tui::theme::Theme;
use hello_tui::trust::{Trust, TrustStore};
use hello_tui::workbench::Question;
use tmux::Tmux;

const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

/// The attacker's repository: TypeScript 5.4.0 and an executable
/// `typescript-language-server` that appends to `marker` (outside the
/// workspace) when it runs, then waits on stdin as a server would.
struct Repo {
    /// Holds the workspace, the marker's folder and the state folder.
    _scratch: tempfile::TempDir,
    root: PathBuf,
    marker: PathBuf,
    state: PathBuf,
    config: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        use std::os::unix::fs::PermissionsExt;
        // Outside the host's /tmp: the confined server must see the marker's
        // folder (docs/sandbox.md, "What the sandbox guarantees").
        let scratch = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
        let base = scratch.path().canonicalize().unwrap();
        let root = base.join("shop");
        let outside = base.join("outside");
        let state = base.join("state");
        for dir in [&root, &outside, &state] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let marker = outside.join("server-ran");
        let bin = root.join("node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        let server = bin.join("typescript-language-server");
        std::fs::write(
            &server,
            format!(
                "#!/bin/sh\necho ran >> '{}'\nexec cat > /dev/null\n",
                marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        let typescript = root.join("node_modules/typescript");
        std::fs::create_dir_all(&typescript).unwrap();
        std::fs::write(
            typescript.join("package.json"),
            r#"{"name": "typescript", "version": "5.4.0"}"#,
        )
        .unwrap();
        std::fs::write(root.join("app.ts"), "export const a: number = 1;\n").unwrap();
        // Its own repository, as a clone is: the scratch folder may lie in
        // another checkout (the build's target dir in this one), whose root
        // would otherwise be the workspace.
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(init.success());
        // The server runs confined: it may write the marker's folder, as a
        // real attacker's program could write the user's shell files once
        // it escaped.
        let config = state.join("config.toml");
        std::fs::write(
            &config,
            format!("[safety]\nwritable = [\"{}\"]\n", outside.display()),
        )
        .unwrap();
        Repo {
            _scratch: scratch,
            root,
            marker,
            state,
            config,
        }
    }

    fn trust_file(&self) -> PathBuf {
        self.state.join("trusted-workspaces.json")
    }

    /// `cd repo && hello-tui ARGS` with this repository's state and config.
    fn command(&self, args: &str, trust_file: &Path) -> String {
        format!(
            "cd {root} && HELLO_TUI_TRUST_FILE={trust} HELLO_TUI_RECOVERY_DIR={rec} \
             HELLO_TUI_LOG_FILE={log} {BIN} --config {config} {args}",
            root = self.root.display(),
            trust = trust_file.display(),
            rec = self.state.join("recovery").display(),
            log = self.state.join("log.txt").display(),
            config = self.config.display(),
        )
    }

    fn server_ran(&self) -> bool {
        self.marker.exists()
    }

    /// Waits up to 20 s for the server to run.
    fn wait_for_server(&self, screen: impl Fn() -> String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.server_ran() {
            assert!(
                Instant::now() < deadline,
                "the workspace's server never ran:\n{}",
                screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Long enough for a language server to have started had one been asked
/// for (the file opens before the loop's first frame).
const SETTLE: Duration = Duration::from_secs(3);

/// Route 1: `cd repo && hello-tui app.ts` runs nothing of the repository;
/// the question names the program; `y` runs it, and the answer is kept in
/// the user's store.
#[test]
fn opening_an_untrusted_repo_asks_first_and_runs_its_server_only_after_yes() {
    let repo = Repo::new();
    let tmux = Tmux::start(
        "trust-ask",
        &repo.command("app.ts", &repo.trust_file()),
        160,
        40,
    );
    let screen = tmux.wait_for("Trust this workspace?");
    assert!(
        screen.contains("language server typescript-language-server:")
            && screen.contains("node_modules/.bin/typescript-language-server"),
        "{screen}"
    );
    assert!(
        screen.contains("node_modules/typescript"),
        "the TypeScript a server would load: {screen}"
    );
    std::thread::sleep(SETTLE);
    assert!(
        !repo.server_ran(),
        "the repository's server ran before the user answered"
    );
    tmux.keys(&["y"]);
    repo.wait_for_server(|| tmux.screen());
    tmux.wait_for("Workspace trusted");
    let store = std::fs::read_to_string(repo.trust_file()).unwrap();
    assert!(
        store.contains(&format!("\"{}\": true", repo.root.display())),
        "{store}"
    );
    tmux.keys(&["C-q"]);
}

/// No (Enter: the default) is remembered: the next start asks nothing and
/// still runs nothing; `/trust` asks again.
#[test]
fn a_no_is_remembered_and_slash_trust_asks_again() {
    let repo = Repo::new();
    let command = repo.command("app.ts", &repo.trust_file());
    let tmux = Tmux::start("trust-no", &command, 160, 40);
    tmux.wait_for("Trust this workspace?");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Workspace not trusted");
    tmux.keys(&["C-q"]);
    drop(tmux);

    let tmux = Tmux::start("trust-no-again", &command, 160, 40);
    let screen = tmux.wait_for("Conversation");
    std::thread::sleep(SETTLE);
    let screen = format!("{screen}{}", tmux.screen());
    assert!(!screen.contains("Trust this workspace?"), "{screen}");
    assert!(!repo.server_ran(), "a remembered no runs nothing");
    tmux.keys(&["M-1"]);
    tmux.keys(&["-l", "/trust"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Trust this workspace?");
    // A pause, as a person reads the question: keys of the burst that
    // opened it do not answer it (tui::typing).
    std::thread::sleep(Duration::from_millis(500));
    tmux.keys(&["y"]);
    repo.wait_for_server(|| tmux.screen());
    tmux.keys(&["C-q"]);
}

/// `--trust` answers for scripts: no question, and the server runs.
#[test]
fn the_trust_flag_runs_the_workspaces_server_without_asking() {
    let repo = Repo::new();
    let tmux = Tmux::start(
        "trust-flag",
        &repo.command("--trust app.ts", &repo.trust_file()),
        160,
        40,
    );
    repo.wait_for_server(|| tmux.screen());
    let screen = tmux.screen();
    assert!(!screen.contains("Trust this workspace?"), "{screen}");
    tmux.keys(&["C-q"]);
}

/// A repository cannot answer for itself: a store inside the workspace (a
/// workspace of `~`, or a repo shipping one where the store would be) that
/// says "trusted" is not believed.
#[test]
fn a_trust_file_inside_the_workspace_is_not_believed() {
    let repo = Repo::new();
    let shipped = repo.root.join(".hello-tui/trusted-workspaces.json");
    std::fs::create_dir_all(shipped.parent().unwrap()).unwrap();
    std::fs::write(
        &shipped,
        format!(r#"{{"workspaces": {{"{}": true}}}}"#, repo.root.display()),
    )
    .unwrap();
    let tmux = Tmux::start("trust-shipped", &repo.command("app.ts", &shipped), 160, 40);
    tmux.wait_for("Trust this workspace?");
    std::thread::sleep(SETTLE);
    assert!(!repo.server_ran(), "the shipped answer was believed");
    tmux.keys(&["Escape"]);
    tmux.wait_for("Workspace not trusted");
    tmux.keys(&["C-q"]);
}

/// `snapshot --open` (the headless path `exec` shares) never asks: an
/// unknown workspace is untrusted there, and `--trust` runs its server.
#[test]
fn headless_diagnostics_run_the_workspaces_server_only_with_the_flag() {
    let repo = Repo::new();
    let snapshot = |trust: &[&str]| {
        std::process::Command::new(BIN)
            .current_dir(&repo.root)
            .env("HELLO_TUI_TRUST_FILE", repo.trust_file())
            .args(["snapshot", "-C", ".", "--open", "app.ts"])
            .args(["--diagnostics-wait", "2", "--config"])
            .arg(&repo.config)
            .args(trust)
            .output()
            .unwrap()
    };
    let untrusted = snapshot(&[]);
    assert!(
        untrusted.status.success(),
        "{}",
        String::from_utf8_lossy(&untrusted.stderr)
    );
    assert!(!repo.server_ran(), "snapshot ran the untrusted server");
    assert!(!repo.trust_file().exists(), "nothing asked, nothing kept");
    let trusted = snapshot(&["--trust"]);
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    assert!(repo.server_ran(), "--trust runs the workspace's server");
}

fn press(s: &mut AppState, code: KeyCode) {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn asking(s: &AppState) -> bool {
    matches!(s.overlay(), Some(overlay) if overlay.question() == Some(Question::TrustWorkspace))
}

/// Keys typed before the question was drawn (a `y` in a word typed at
/// start-up) never answer it; once drawn, `y` does, and only `y` trusts.
#[test]
fn keys_before_the_question_was_drawn_never_answer_it() {
    let repo = Repo::new();
    let mut s = AppState::new(repo.root.clone(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &repo.root.join("app.ts"), None);
    hello_tui::app::trust::start(&mut s, TrustStore::at(repo.trust_file()));
    assert!(asking(&s));
    press(&mut s, KeyCode::Char('y'));
    assert!(asking(&s), "a key typed before the frame answered it");
    assert_eq!(s.workbench.trust().trust, Trust::Unknown);
    frames::draw_settled(&mut s, &Theme::builtin_default(), 120, 40);
    press(&mut s, KeyCode::Char('y'));
    assert!(!asking(&s));
    assert!(s.workbench.trust().trust.is_trusted());
    assert_eq!(
        TrustStore::at(repo.trust_file()).get(&repo.root),
        Some(true)
    );
}

/// A workspace with nothing of its own to run is not asked about (an
/// empty question teaches a reflexive `y`), and stays untrusted.
#[test]
fn a_workspace_with_nothing_to_run_is_not_asked_about() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.py"), "print(1)\n").unwrap();
    let store = dir.path().join("store.json");
    let mut s = AppState::new(dir.path().join("."), Settings::defaults());
    hello_tui::app::trust::start(&mut s, TrustStore::at(store));
    assert!(s.overlay().is_none());
    assert_eq!(s.workbench.trust().trust, Trust::Unknown);
}

/// The question as drawn: what would run, the keys, where the answer goes.
#[test]
fn the_trust_question_snapshot() {
    let repo = Repo::new();
    let mut s = AppState::new(repo.root.clone(), Settings::defaults());
    std::fs::create_dir_all(repo.root.join(".hello-tui/commands")).unwrap();
    std::fs::write(
        repo.root.join(".hello-tui/commands/release.md"),
        "Publish a release\n",
    )
    .unwrap();
    hello_tui::app::trust::start(
        &mut s,
        TrustStore::at("/home/u/.local/share/hello-tui/trusted-workspaces.json".into()),
    );
    assert!(matches!(s.overlay(), Some(Overlay::Confirm(_))));
    let terminal = frames::draw_settled(&mut s, &Theme::builtin_default(), 100, 30);
    insta::assert_snapshot!(terminal.backend().to_string());
}

/// The diagnostics service on an untrusted workspace, checks unconfined
/// (what is tested is whether they start at all).
fn untrusted_service(
    config: hello_tui::diagnostics::DiagnosticsConfig,
    root: &Path,
) -> (
    hello_tui::diagnostics::DiagnosticsService,
    tokio::sync::mpsc::UnboundedReceiver<hello_tui::diagnostics::DiagnosticsEvent>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let confinement = hello_tui::sandbox::Confinement::unconfined(
        hello_tui::sandbox::ChildEnv::from_host(&[], ""),
    );
    let service = hello_tui::diagnostics::DiagnosticsService::start(
        config,
        root.to_path_buf(),
        tx,
        confinement,
        false,
    );
    (service, rx)
}

async fn next_notice(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<hello_tui::diagnostics::DiagnosticsEvent>,
) -> String {
    let notice = async {
        loop {
            match rx.recv().await {
                Some(hello_tui::diagnostics::DiagnosticsEvent::Notice(text)) => return text,
                Some(_) => {}
                None => panic!("the service stopped"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), notice)
        .await
        .expect("a notice")
}

/// Waits for the marker, failing after `limit`.
async fn ran_within(repo: &Repo, limit: Duration) {
    let deadline = Instant::now() + limit;
    while !repo.server_ran() {
        assert!(Instant::now() < deadline, "the workspace's code never ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A check command whose program is the workspace's (`./tools/lint`
/// named in the user's config, or found through a `.venv/bin` on PATH)
/// does not run before the workspace is trusted, and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_check_command_does_not_run_untrusted() {
    use hello_tui::diagnostics::DiagnosticsConfig;
    use hello_tui::diagnostics::checks::{BuiltinMatcher, CheckCommand, MatcherSpec};
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::new();
    let lint = repo.root.join("tools/lint");
    std::fs::create_dir_all(lint.parent().unwrap()).unwrap();
    std::fs::write(
        &lint,
        format!("#!/bin/sh\necho ran >> '{}'\n", repo.marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&lint, std::fs::Permissions::from_mode(0o755)).unwrap();
    let check = CheckCommand {
        name: "lint".into(),
        command: lint.display().to_string(),
        args: vec!["{file}".into()],
        language_ids: vec!["python".into()],
        matcher: MatcherSpec::Builtin(BuiltinMatcher::PythonTraceback),
        root_markers: Vec::new(),
        on_save: true,
        timeout_secs: 10,
        project_code: None,
    };
    let config = DiagnosticsConfig {
        servers: Vec::new(),
        checks: vec![check],
        ..DiagnosticsConfig::default()
    };
    let file = repo.root.join("a.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let (service, mut rx) = untrusted_service(config, &repo.root);
    service.run_checks(&file);
    let notice = next_notice(&mut rx).await;
    assert!(
        notice.contains("check `lint` not run") && notice.contains("not trusted"),
        "{notice}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!repo.server_ran(), "the workspace's check ran untrusted");

    service.set_trust(true);
    service.run_checks(&file);
    ran_within(&repo, Duration::from_secs(10)).await;
    service.shutdown().await;
}

/// `cargo check` on save runs the repository's `build.rs` (and its
/// `.cargo/config.toml`): a Rust repository runs none of it before the
/// workspace is trusted, and the check runs once it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_check_does_not_run_an_untrusted_build_script() {
    use hello_tui::diagnostics::DiagnosticsConfig;
    use hello_tui::diagnostics::checks::CheckCommand;
    let repo = Repo::new();
    std::fs::write(
        repo.root.join("Cargo.toml"),
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.root.join("src")).unwrap();
    let main = repo.root.join("src/main.rs");
    std::fs::write(&main, "fn main() {}\n").unwrap();
    std::fs::write(
        repo.root.join("build.rs"),
        format!(
            "fn main() {{ std::fs::write({:?}, \"ran\").unwrap(); }}\n",
            repo.marker.display().to_string()
        ),
    )
    .unwrap();
    let config = DiagnosticsConfig {
        servers: Vec::new(),
        checks: CheckCommand::defaults(),
        ..DiagnosticsConfig::default()
    };
    let (service, mut rx) = untrusted_service(config, &repo.root);
    service.open(&main, "rust", "fn main() {}\n");
    service.save(&main);
    let notice = next_notice(&mut rx).await;
    assert!(
        notice.contains("check `cargo check` not run") && notice.contains("Cargo.toml"),
        "{notice}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!repo.server_ran(), "build.rs ran untrusted");

    service.set_trust(true);
    service.open(&main, "rust", "fn main() {}\n");
    service.save(&main);
    ran_within(&repo, Duration::from_secs(120)).await;
    service.shutdown().await;
}

/// The question quotes names from the file system: a folder named with a
/// terminal escape sequence (it retitles the window, or worse) reaches the
/// screen sanitized.
#[test]
fn the_question_sanitizes_what_it_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("shop\u{1b}]0;pwned\u{7}");
    std::fs::create_dir_all(root.join(".hello-tui/commands")).unwrap();
    std::fs::write(root.join(".hello-tui/commands/ship.md"), "Ship it\n").unwrap();
    let mut s = AppState::new(root.clone(), Settings::defaults());
    hello_tui::app::trust::start(&mut s, TrustStore::at(dir.path().join("store.json")));
    assert!(asking(&s));
    let text = hello_tui::workbench::trust::question_text(&s.workbench, 8);
    assert!(text.contains("ship.md"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains("pwned"),
        "{text:?}"
    );
}

/// At 80x24 a long list is cut to what fits, says how many more there
/// are, and the answers stay on screen.
#[test]
fn a_long_trust_question_fits_80x24() {
    let repo = Repo::new();
    std::fs::write(repo.root.join("Cargo.toml"), "[package]\n").unwrap();
    let commands = repo.root.join(".hello-tui/commands");
    std::fs::create_dir_all(&commands).unwrap();
    for name in ["deploy", "release", "review", "ship"] {
        std::fs::write(commands.join(format!("{name}.md")), "Do it\n").unwrap();
    }
    let mut s = AppState::new(repo.root.clone(), Settings::defaults());
    hello_tui::app::trust::start(
        &mut s,
        TrustStore::at("/home/u/.local/share/hello-tui/trusted-workspaces.json".into()),
    );
    assert_eq!(
        s.workbench.trust().found.len(),
        7,
        "{:?}",
        s.workbench.trust().found
    );
    let terminal = frames::draw_settled(&mut s, &Theme::builtin_default(), 80, 24);
    let screen = terminal.backend().to_string();
    assert!(screen.contains("and 3 more"), "{screen}");
    assert!(
        screen.contains("y yes   n no   "),
        "the answers in the box: {screen}"
    );
    insta::assert_snapshot!(screen);
}

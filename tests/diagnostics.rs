//! Integration tests for `hello_tui::diagnostics` against real processes:
//! the real `ruff server` (CI installs ruff with pip), small Python scripts
//! acting as misbehaving language servers, and real check commands.

#[path = "support/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use hello_tui::diagnostics::checks::{BuiltinMatcher, CheckCommand, MatcherSpec};
use hello_tui::diagnostics::{
    CheckState, Diagnostic, DiagnosticsConfig, DiagnosticsEvent, DiagnosticsService,
    DiagnosticsStore, LspTimings, Position, ServerConfig, ServerState, Severity, which,
};
use hello_tui::sandbox::{ApprovalMode, ChildEnv, Confinement, SandboxOptions, SandboxStatus};
use tokio::sync::mpsc;

/// Generous: these wait for real processes; no test asserts a timing.
const PATIENCE: Duration = Duration::from_secs(60);

/// A fixture server's script, where a confined server can read it (not
/// under the host's `/tmp`, which the sandbox hides, as it would any
/// program installed there: docs/sandbox.md, "What the sandbox guarantees").
fn fixture(name: &str) -> String {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp");
        let source = source.canonicalize().unwrap_or(source);
        if !scratch::hidden_from_sandbox(&source) {
            return source;
        }
        let copy = scratch::scratch_parent().join("lsp-fixtures");
        std::fs::create_dir_all(&copy).expect("fixture copy");
        for entry in std::fs::read_dir(&source).expect("fixtures").flatten() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).expect("fixture copy");
        }
        copy
    });
    dir.join(name).display().to_string()
}

/// A fixture server named after its script, e.g. `junk_server`.
fn fake_server(language: &str, script: &str) -> ServerConfig {
    let name = script.trim_end_matches(".py");
    ServerConfig::new(&[language], "python3", &[&fixture(script)]).named(name)
}

fn quick_timings() -> LspTimings {
    LspTimings {
        initialize_timeout: Duration::from_secs(20),
        restart_delays: vec![Duration::from_millis(50); 3],
        ..LspTimings::default()
    }
}

fn config(servers: Vec<ServerConfig>, checks: Vec<CheckCommand>) -> DiagnosticsConfig {
    DiagnosticsConfig {
        servers,
        checks,
        timings: quick_timings(),
        ..DiagnosticsConfig::default()
    }
}

/// The confinement the workbench gives check commands (`auto` mode), or an
/// unconfined one where Landlock is missing (unless CI demands it).
fn checks_confinement(root: &Path) -> Confinement {
    let env = ChildEnv::from_host(&[], "");
    let status = SandboxStatus::probe();
    if let SandboxStatus::Unavailable(reason) = &status {
        eprintln!("\n!!!!! LANDLOCK UNAVAILABLE: {reason}; checks run unconfined\n");
        assert!(std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none());
        return Confinement::unconfined(env);
    }
    Confinement::for_mode(
        ApprovalMode::Auto,
        &status,
        root,
        false,
        SandboxOptions::default(),
        env,
    )
    .unwrap()
}

/// The UI side of a test: drains events into a store, like the UI loop does.
struct Ui {
    rx: mpsc::UnboundedReceiver<DiagnosticsEvent>,
    store: DiagnosticsStore,
    seen: Vec<DiagnosticsEvent>,
}

impl Ui {
    /// Check commands run confined, as in the workbench, wherever the
    /// sandbox is available: every check test also shows that ordinary
    /// checks (ruff, py_compile, `cargo check`) work inside it. The
    /// workspace is trusted (the user's own project): a server it holds
    /// may run (`trust` tests the other case).
    fn start(config: DiagnosticsConfig, root: &Path) -> (DiagnosticsService, Ui) {
        let (tx, rx) = mpsc::unbounded_channel();
        let service = DiagnosticsService::start(
            config,
            root.to_path_buf(),
            tx,
            checks_confinement(root),
            true,
        );
        let ui = Ui {
            rx,
            store: DiagnosticsStore::new(),
            seen: Vec::new(),
        };
        (service, ui)
    }

    /// Applies events until `done(self)` holds; panics with the history if it never does.
    async fn until(&mut self, what: &str, done: impl Fn(&Ui) -> bool) {
        let waiting = async {
            while !done(self) {
                match self.rx.recv().await {
                    Some(event) => {
                        self.store.apply(event.clone());
                        self.seen.push(event);
                    }
                    None => return false,
                }
            }
            true
        };
        let ok = tokio::time::timeout(PATIENCE, waiting)
            .await
            .unwrap_or(false);
        assert!(ok, "never saw {what}; events: {:#?}", self.seen);
    }

    /// Applies whatever arrives for `how_long` (what a server does after
    /// its first answer).
    async fn drain_for(&mut self, how_long: Duration) {
        let _ = tokio::time::timeout(how_long, async {
            while let Some(event) = self.rx.recv().await {
                self.store.apply(event.clone());
                self.seen.push(event);
            }
        })
        .await;
    }

    fn file(&self, path: &Path) -> Vec<&Diagnostic> {
        self.store.for_file(path)
    }

    fn has_code(&self, path: &Path, code: &str) -> bool {
        self.file(path)
            .iter()
            .any(|d| d.code.as_deref() == Some(code))
    }

    fn server_states(&self, name: &str) -> Vec<&ServerState> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                DiagnosticsEvent::ServerState { name: n, state } if n == name => Some(state),
                _ => None,
            })
            .collect()
    }

    fn check_states(&self, name: &str) -> Vec<&CheckState> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                DiagnosticsEvent::CheckState { name: n, state } if n == name => Some(state),
                _ => None,
            })
            .collect()
    }

    /// Servers that published a non-empty list for `path`, by name.
    fn publishers(&self, path: &Path) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .seen
            .iter()
            .filter_map(|e| match e {
                DiagnosticsEvent::Published {
                    source,
                    path: p,
                    diagnostics,
                } if p == path && !diagnostics.is_empty() => Some(source.as_str()),
                _ => None,
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The latest route of `language`: servers chosen, and (name, reason)
    /// for the others.
    fn route(&self, language: &str) -> Option<(&[String], &[Skipped])> {
        self.seen.iter().rev().find_map(|e| match e {
            DiagnosticsEvent::Routed {
                language_id,
                servers,
                skipped,
            } if language_id == language => Some((servers.as_slice(), skipped.as_slice())),
            _ => None,
        })
    }

    fn notices(&self) -> Vec<&str> {
        self.seen
            .iter()
            .filter_map(|e| match e {
                DiagnosticsEvent::Notice(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A server a route left out, and why.
type Skipped = (String, String);

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

mod ruff_server {
    use super::*;

    fn require_ruff() {
        assert!(
            which("ruff").is_some(),
            "these tests need the real ruff: pip install ruff"
        );
    }

    fn ruff_only() -> DiagnosticsConfig {
        config(
            vec![ServerConfig::new(&["python"], "ruff", &["server"])],
            vec![],
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unsaved_edits_drive_diagnostics() {
        require_ruff();
        let dir = tempfile::tempdir().unwrap();
        let text = "import os\n\nprint(undefined_name)\n";
        let path = write(dir.path(), "a.py", text);
        let (service, mut ui) = Ui::start(ruff_only(), dir.path());
        service.open(&path, "python", text);

        ui.until("F401 and F821 from ruff", |ui| {
            ui.has_code(&path, "F401") && ui.has_code(&path, "F821")
        })
        .await;
        let diags = ui.file(&path);
        let f401 = diags
            .iter()
            .find(|d| d.code.as_deref() == Some("F401"))
            .unwrap();
        let f821 = diags
            .iter()
            .find(|d| d.code.as_deref() == Some("F821"))
            .unwrap();
        assert_eq!((f401.range.start.line, f401.range.start.character), (0, 7));
        assert_eq!((f821.range.start.line, f821.range.start.character), (2, 6));
        assert!(f821.message.contains("undefined_name"), "{}", f821.message);
        assert_eq!(*f821.path, *path);
        assert!(matches!(
            ui.server_states("ruff").as_slice(),
            [ServerState::Starting, ServerState::Running { .. }, ..]
        ));

        // Fix the undefined name in the buffer only: the disk still has the bug.
        service.change(
            &path,
            "import os\n\nundefined_name = 1\nprint(undefined_name)\n",
        );
        ui.until("F821 gone after an unsaved change", |ui| {
            !ui.has_code(&path, "F821") && ui.has_code(&path, "F401")
        })
        .await;
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "nothing was saved"
        );

        service.close(&path);
        ui.until("diagnostics cleared on close", |ui| {
            ui.file(&path).is_empty()
        })
        .await;
        service.shutdown().await;
        ui.until("ruff stopped", |ui| {
            ui.server_states("ruff").last() == Some(&&ServerState::Stopped)
        })
        .await;
    }

    /// Issue 18: ruff lints and basedpyright checks types. With the
    /// defaults both run on one file (confined, as in the workbench), each
    /// keeps its own list, and the store holds both. A server disabled in
    /// the settings never starts.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ruff_and_basedpyright_run_side_by_side_and_merge() {
        require_ruff();
        assert!(
            which("basedpyright-langserver").is_some(),
            "this test needs the real basedpyright: pip install basedpyright (scripts/test does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let text = "import os\n\n\ndef twice(x):\n    return x * 2\n\n\nprint(undefined_name)\n";
        let path = write(dir.path(), "bad.py", text);
        let defaults = DiagnosticsConfig {
            timings: quick_timings(),
            ..DiagnosticsConfig::default()
        };

        let (service, mut ui) = Ui::start(defaults.clone(), dir.path());
        service.open(&path, "python", text);
        ui.until("diagnostics from both servers", |ui| {
            ui.publishers(&path) == ["basedpyright-langserver", "ruff"]
        })
        .await;
        let said: Vec<String> = ui
            .file(&path)
            .iter()
            .map(|d| format!("{} {}", d.source, d.code.clone().unwrap_or_default()))
            .collect();
        for expected in ["Ruff F821", "basedpyright reportUndefinedVariable"] {
            assert!(said.iter().any(|s| s == expected), "{expected}: {said:?}");
        }
        // Checked in pyright's "standard" mode, not basedpyright's noisy
        // default: an unannotated parameter is fine.
        let noise: Vec<&String> = said
            .iter()
            .filter(|s| s.contains("reportUnknown") || s.contains("reportMissingParameterType"))
            .collect();
        assert!(noise.is_empty(), "{noise:?}");
        assert_eq!(
            ui.route("python").unwrap().0,
            ["ruff", "basedpyright-langserver"]
        );
        // basedpyright checks every 3 s that the client's process is alive;
        // from inside the sandbox ours cannot be signalled, so a process id
        // in `initialize` made it exit 2 s after its first answer, over
        // and over, until it was given up on.
        ui.drain_for(Duration::from_secs(7)).await;
        let troubles: Vec<&ServerState> = ui
            .server_states("basedpyright-langserver")
            .into_iter()
            .filter(|s| {
                matches!(
                    s,
                    ServerState::Restarting { .. } | ServerState::GaveUp { .. }
                )
            })
            .collect();
        assert!(
            troubles.is_empty(),
            "basedpyright keeps running: {troubles:?}"
        );
        service.shutdown().await;

        let restricted = DiagnosticsConfig {
            disabled_servers: vec!["basedpyright-langserver".into()],
            ..defaults
        };
        let (service, mut ui) = Ui::start(restricted, dir.path());
        service.open(&path, "python", text);
        ui.until("ruff's diagnostics", |ui| ui.publishers(&path) == ["ruff"])
            .await;
        let (servers, skipped) = ui.route("python").unwrap();
        assert_eq!(servers, ["ruff"]);
        let disabled = (
            "basedpyright-langserver".into(),
            "disabled in the settings".into(),
        );
        assert!(skipped.contains(&disabled), "{skipped:?}");
        service.shutdown().await;
        assert!(
            ui.server_states("basedpyright-langserver").is_empty(),
            "a disabled server never starts"
        );
    }

    /// Python with an undefined name every 5 lines: ruff's answer about it
    /// grows by ~400 bytes per 5 lines.
    fn undefined_every_5(lines: usize) -> String {
        (0..lines)
            .map(|i| match i % 5 {
                0 => format!("print(undefined_{i})\n"),
                _ => format!("x{i} = {i}\n"),
            })
            .collect()
    }

    fn notices_about<'a>(ui: &'a Ui, file: &str) -> Vec<&'a str> {
        ui.notices()
            .into_iter()
            .filter(|n| n.contains(file))
            .collect()
    }

    /// Issue 30: ruff's answer about a file is over the message limit
    /// (lowered here; 92 MB for a 1 000 000-line file against 64 MiB in
    /// real life). It is dropped and said once; the server is not
    /// restarted, keeps serving the other files, and is not sent that file
    /// again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_over_the_limit_turns_its_file_off_without_a_restart() {
        require_ruff();
        let dir = tempfile::tempdir().unwrap();
        let big = undefined_every_5(2_000);
        let huge = write(dir.path(), "huge.py", &big);
        let small = write(dir.path(), "small.py", "print(undefined_name)\n");
        let mut config = ruff_only();
        config.timings.max_message_bytes = 20_000;
        let (service, mut ui) = Ui::start(config, dir.path());
        service.open(&huge, "python", big.as_str());
        ui.until("the report about huge.py", |ui| {
            !notices_about(ui, "huge.py").is_empty()
        })
        .await;
        service.open(&small, "python", "print(undefined_name)\n");
        ui.until("small.py's diagnostics", |ui| ui.has_code(&small, "F821"))
            .await;
        // huge.py is edited and saved: nothing goes to ruff, nothing is
        // said again; small.py goes on being served.
        service.change(&huge, format!("{big}print(more)\n"));
        service.save(&huge);
        service.change(&small, "print(undefined_name)\nprint(other)\n");
        ui.until("small.py's edit", |ui| ui.file(&small).len() == 2)
            .await;
        ui.drain_for(Duration::from_millis(500)).await;
        let said = notices_about(&ui, "huge.py");
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].starts_with("ruff's answer for huge.py is ")
                && said[0].contains("over the 19.5 KiB limit")
                && said[0].contains("diagnostics for this file are off"),
            "{}",
            said[0]
        );
        assert!(ui.file(&huge).is_empty());
        assert!(
            matches!(
                ui.server_states("ruff").as_slice(),
                [ServerState::Starting, ServerState::Running { .. }]
            ),
            "no restart: {:?}",
            ui.server_states("ruff")
        );
        service.shutdown().await;
    }

    /// Large-file mode: a document over `large_file_bytes` is not sent to
    /// a server (none even starts) and says so once; asked for, it is
    /// served like any other. One that grows past the size is taken back.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_document_is_not_sent_unless_asked_for() {
        require_ruff();
        let dir = tempfile::tempdir().unwrap();
        let big = undefined_every_5(100);
        let large = write(dir.path(), "large.py", &big);
        let mut config = ruff_only();
        config.large_file_bytes = 1_000;
        let (service, mut ui) = Ui::start(config, dir.path());
        service.open(&large, "python", big.as_str());
        service.change(&large, format!("{big}print(more)\n"));
        ui.until("the large-file notice", |ui| {
            !notices_about(ui, "large.py").is_empty()
        })
        .await;
        ui.drain_for(Duration::from_millis(500)).await;
        assert_eq!(
            notices_about(&ui, "large.py"),
            ["large.py is a large document (1.1 KiB, over the 1000 B of \
              `diagnostics.large_file_bytes`); language servers and checks are not asked \
              about it (/lsp-large asks them all the same)"]
        );
        assert!(ui.server_states("ruff").is_empty(), "no server started");

        service.allow_large(&large);
        service.open(&large, "python", big.as_str());
        ui.until("ruff's diagnostics once asked", |ui| {
            ui.has_code(&large, "F821")
        })
        .await;

        // A small file that grows past the size loses its diagnostics.
        let small = write(dir.path(), "small.py", "print(undefined_name)\n");
        service.open(&small, "python", "print(undefined_name)\n");
        ui.until("small.py's diagnostics", |ui| ui.has_code(&small, "F821"))
            .await;
        service.change(&small, big.as_str());
        ui.until("small.py taken back", |ui| {
            ui.file(&small).is_empty() && !notices_about(ui, "small.py").is_empty()
        })
        .await;
        // And back under it, it is served again.
        service.change(&small, "print(undefined_name)\n");
        ui.until("small.py served again", |ui| ui.has_code(&small, "F821"))
            .await;
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cjk_and_emoji_before_the_error_give_the_right_char_index() {
        require_ruff();
        let dir = tempfile::tempdir().unwrap();
        let line = "名前 = \"😀😀\"; print(名前, undefined_cjk)";
        let text = format!("{line}\n");
        let path = write(dir.path(), "cjk.py", &text);
        let (service, mut ui) = Ui::start(ruff_only(), dir.path());
        service.open(&path, "python", text.clone());
        ui.until("F821 on the CJK line", |ui| ui.has_code(&path, "F821"))
            .await;
        let diags = ui.file(&path);
        let d = diags
            .iter()
            .find(|d| d.code.as_deref() == Some("F821"))
            .unwrap();
        let expected = line.chars().position(|c| c == 'u').unwrap();
        assert_eq!(d.range.start.line, 0);
        assert_eq!(d.range.start.character, expected);
        let covered: String = line
            .chars()
            .skip(d.range.start.character)
            .take(d.range.end.character - d.range.start.character)
            .collect();
        assert_eq!(covered, "undefined_cjk");
        service.shutdown().await;
    }
}

mod fake_servers {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn junk_before_the_first_header_is_skipped_and_utf16_is_converted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.fake");
        let (service, mut ui) = Ui::start(
            config(vec![fake_server("fake", "junk_server.py")], vec![]),
            dir.path(),
        );
        let text = "ok\n名 😀 BAD\n";
        service.open(&path, "fake", text);
        ui.until("the junk server's diagnostic", |ui| {
            !ui.file(&path).is_empty()
        })
        .await;
        let d = ui.file(&path)[0].clone();
        // "名 😀 " is 5 UTF-16 units but 4 chars.
        assert_eq!((d.range.start.line, d.range.start.character), (1, 4));
        assert_eq!(d.range.end.character, 7);
        assert_eq!(
            (d.severity, &*d.source, d.code.as_deref()),
            (Severity::Warning, "junk", Some("J001"))
        );
        assert!(
            ui.server_states("junk_server")
                .contains(&&ServerState::Running { encoding: "utf-16" })
        );

        service.change(&path, "BAD BAD\n");
        ui.until("two diagnostics after the change", |ui| {
            ui.file(&path).len() == 2
        })
        .await;
        // Opening the same file again (a second tab) updates it rather than
        // confusing the server with a second didOpen.
        service.open(&path, "fake", "BAD BAD BAD\n");
        ui.until("three diagnostics after the re-open", |ui| {
            ui.file(&path).len() == 3
        })
        .await;
        service.shutdown().await;
    }

    /// A keystroke reaches a server that takes ranged `didChange` as the
    /// edited range (UTF-16 columns past an emoji), not as the whole text:
    /// the server applies the ranges to its copy and finds exactly what the
    /// editor holds, through typing, a new line, and an undo.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn edits_reach_an_incremental_server_as_ranges() {
        use hello_tui::editor::{Document, EditCommand, Motion};
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "x.fake", "ok\n名 😀 \n");
        let server = ServerConfig::new(
            &["fake"],
            "python3",
            &[&fixture("junk_server.py"), "--incremental"],
        )
        .named("junk_server");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
        let mut doc = Document::open(&path).unwrap();
        service.open(&path, "fake", doc.rope().clone());
        let mut sent = doc.generation();
        let mut send = |doc: &Document| {
            let changes = doc.changes_since(sent).expect("journal reaches back");
            assert!(!changes.is_empty());
            service.edit(&path, doc.rope().clone(), changes);
            sent = doc.generation();
        };
        doc.apply(EditCommand::GoToLine(2)).unwrap();
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        for c in "BAD".chars() {
            doc.apply(EditCommand::InsertChar(c)).unwrap();
        }
        send(&doc);
        doc.apply(EditCommand::InsertNewline).unwrap();
        doc.apply(EditCommand::Paste("😀BAD".into())).unwrap();
        send(&doc);
        ui.until("both BADs, found by applying the ranges", |ui| {
            ui.file(&path).len() == 2
        })
        .await;
        let mut found: Vec<_> = ui
            .file(&path)
            .iter()
            .map(|d| {
                (
                    d.range.start.line,
                    d.range.start.character,
                    d.message.to_string(),
                )
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                (1, 4, "BAD found".to_string()),
                (2, 1, "BAD found".to_string())
            ],
            "no `full sync`, and columns right after the emoji"
        );
        doc.apply(EditCommand::Undo).unwrap();
        doc.apply(EditCommand::Undo).unwrap();
        send(&doc);
        ui.until("one BAD after undoing the paste and the new line", |ui| {
            ui.file(&path).len() == 1
        })
        .await;
        assert_eq!(doc.text(), "ok\n名 😀 BAD\n");
        service.shutdown().await;
    }

    /// What the recording fake server received, one JSON object per
    /// document notification, in order; a line still being written (a big
    /// document's text is a long one) is left for the next look.
    fn received(record: &Path) -> Vec<serde_json::Value> {
        let recorded = std::fs::read_to_string(record).unwrap_or_default();
        let complete = recorded.rsplit_once('\n').map_or("", |(lines, _)| lines);
        complete
            .lines()
            .map(|line| serde_json::from_str(line).expect("a recorded line"))
            .collect()
    }

    /// Waits until the recording shows `done`; panics with it if it never does.
    async fn until_received(
        record: &Path,
        what: &str,
        done: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let seen = received(record);
            if done(&seen) {
                return seen;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never received {what}: {seen:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A burst of keystrokes reaches a server as far fewer `didChange`s
    /// (ranged, in order, for a server that takes ranges; the whole text
    /// for one that does not), versions only grow, the server's copy ends
    /// equal to the buffer, and a save right after an edit is preceded by
    /// that edit (the coalescing window is flushed, not waited out).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_edits_is_one_did_change_and_a_save_flushes_it() {
        use hello_tui::editor::{Document, EditCommand, Motion};
        for incremental in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let path = write(dir.path(), "x.fake", "BAD\n名 😀 \n");
            let record = dir.path().join("received.jsonl");
            let mut args = vec![fixture("junk_server.py")];
            if incremental {
                args.push("--incremental".into());
            }
            args.extend(["--record".into(), record.display().to_string()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let server = ServerConfig::new(&["fake"], "python3", &args).named("junk_server");
            let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
            let mut doc = Document::open(&path).unwrap();
            service.open(&path, "fake", doc.rope().clone());
            ui.until("the server running, with the opened text", |ui| {
                ui.file(&path).len() == 1
            })
            .await;
            let mut sent = doc.generation();
            let mut send = |doc: &Document| {
                let changes = doc.changes_since(sent).expect("journal reaches back");
                service.edit(&path, doc.rope().clone(), changes);
                sent = doc.generation();
            };
            doc.apply(EditCommand::GoToLine(2)).unwrap();
            doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
            for c in "x = BAD + 1\ny = 2\nBAD".chars().take(20) {
                doc.apply(EditCommand::InsertChar(c)).unwrap();
                send(&doc);
            }
            let expected = doc.text();
            let seen = until_received(&record, "the final text", |seen| {
                seen.last().and_then(|r| r["text"].as_str()) == Some(expected.as_str())
            })
            .await;
            let changes: Vec<_> = seen
                .iter()
                .filter(|r| r["method"] == "textDocument/didChange")
                .collect();
            assert!(
                !changes.is_empty() && changes.len() <= 4,
                "20 edits came as {} didChange(s): {seen:#?}",
                changes.len()
            );
            for change in &changes {
                assert_eq!(change["ranged"], incremental, "{change}");
            }
            let versions: Vec<i64> = seen.iter().filter_map(|r| r["version"].as_i64()).collect();
            assert!(
                versions.windows(2).all(|w| w[0] < w[1]),
                "versions must grow: {versions:?}"
            );

            // An edit, then a save at once: the server has the edit before
            // it hears of the save.
            doc.apply(EditCommand::InsertChar('!')).unwrap();
            send(&doc);
            service.save(&path);
            let expected = doc.text();
            let seen = until_received(&record, "the save", |seen| {
                seen.iter().any(|r| r["method"] == "textDocument/didSave")
            })
            .await;
            let save = seen
                .iter()
                .find(|r| r["method"] == "textDocument/didSave")
                .unwrap();
            assert_eq!(save["text"].as_str(), Some(expected.as_str()));
            service.shutdown().await;
        }
    }

    /// A server publishes about the text it analysed, which can be older
    /// than the one we hold by then: the columns are converted against the
    /// text of the publish's `version`. `--late` answers the edit that
    /// removed the emoji with the warning of the text that still had it:
    /// UTF-16 column 10 of `s = "😀"; BAD` is char 9, where `BAD` starts;
    /// against the newer `s = ""; BAD` it would be char 10, inside `BAD`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_late_publish_is_converted_against_the_text_it_is_about() {
        let dir = tempfile::tempdir().unwrap();
        let before = "s = \"😀\"; BAD\n";
        let path = write(dir.path(), "x.fake", before);
        let server = ServerConfig::new(
            &["fake"],
            "python3",
            &[&fixture("junk_server.py"), "--late"],
        )
        .named("junk_server");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
        service.open(&path, "fake", before);
        ui.until("the server running", |ui| {
            matches!(
                ui.server_states("junk_server").last(),
                Some(ServerState::Running { .. })
            )
        })
        .await;
        service.change(&path, "s = \"\"; BAD\n");
        ui.until("the late publish", |ui| ui.file(&path).len() == 1)
            .await;
        let d = ui.file(&path)[0];
        assert_eq!(&*d.message, "BAD found");
        assert_eq!(
            (d.range.start, d.range.end),
            (Position::new(0, 9), Position::new(0, 12)),
            "BAD in the text the server analysed"
        );
        service.shutdown().await;
    }

    /// A big document's edits wait for a pause in typing: keys 150 ms
    /// apart, each a `didChange` of its own with the 100 ms window of an
    /// ordinary document, reach a server as one `didChange` once the typing
    /// stops (two if the machine stalled the test for a quiet period), and
    /// the server ends with the buffer's text; a save still sends an edit
    /// at once. The same keys on a small document still go out as they come.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_big_document_is_sent_after_a_pause_in_typing() {
        use hello_tui::diagnostics::lsp::PACED_ABOVE_BYTES;
        use hello_tui::editor::{Document, EditCommand};
        let big = "x = 1\n".repeat(PACED_ABOVE_BYTES / 6 + 1000);
        for (text, big) in [(big.as_str(), true), ("x = 1\n", false)] {
            let dir = tempfile::tempdir().unwrap();
            let path = write(dir.path(), "x.fake", text);
            let record = dir.path().join("received.jsonl");
            let record_arg = record.display().to_string();
            let args = [
                fixture("junk_server.py"),
                "--incremental".into(),
                "--record".into(),
                record_arg,
            ];
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let server = ServerConfig::new(&["fake"], "python3", &args).named("junk_server");
            let (service, _ui) = Ui::start(config(vec![server], vec![]), dir.path());
            let mut doc = Document::open(&path).unwrap();
            assert_eq!(doc.rope().len_bytes() > PACED_ABOVE_BYTES, big);
            service.open(&path, "fake", doc.rope().clone());
            until_received(&record, "the opened text", |seen| !seen.is_empty()).await;
            for c in "abcdef".chars() {
                let sent = doc.generation();
                doc.apply(EditCommand::InsertChar(c)).unwrap();
                let changes = doc.changes_since(sent).expect("journal reaches back");
                service.edit(&path, doc.rope().clone(), changes);
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            let expected = doc.text();
            let seen = until_received(&record, "the final text", |seen| {
                seen.last().and_then(|r| r["text"].as_str()) == Some(expected.as_str())
            })
            .await;
            let changes = seen
                .iter()
                .filter(|r| r["method"] == "textDocument/didChange")
                .count();
            if big {
                assert!(changes <= 2, "6 keys came as {changes} didChange(s)");
                // A save does not wait for the pause: the server has the
                // edit before it hears of the save.
                let sent = doc.generation();
                doc.apply(EditCommand::InsertChar('!')).unwrap();
                let changes = doc.changes_since(sent).expect("journal reaches back");
                service.edit(&path, doc.rope().clone(), changes);
                service.save(&path);
                let expected = doc.text();
                let seen = until_received(&record, "the save", |seen| {
                    seen.iter().any(|r| r["method"] == "textDocument/didSave")
                })
                .await;
                let save = seen
                    .iter()
                    .find(|r| r["method"] == "textDocument/didSave")
                    .unwrap();
                assert!(save["text"].as_str() == Some(expected.as_str()));
            } else {
                assert!(
                    changes >= 3,
                    "6 keys 150 ms apart came as {changes} didChange(s)"
                );
            }
            service.shutdown().await;
        }
    }

    /// Language servers run project code too (rust-analyzer's build
    /// scripts and proc macros): they start under the same confinement.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_language_server_runs_confined() {
        if !SandboxStatus::probe().is_enforced() {
            return;
        }
        let outer = tempfile::tempdir().unwrap();
        let dir = outer.path().join("ws");
        std::fs::create_dir(&dir).unwrap();
        let outside = outer.path().join("server-was-here");
        let script = format!(
            "touch {} 2>/dev/null; exec python3 {}",
            outside.display(),
            fixture("junk_server.py")
        );
        let server = ServerConfig::new(&["fake"], "sh", &["-c", &script]).named("junk_server");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), &dir);
        let path = dir.join("a.fake");
        service.open(&path, "fake", "BAD\n");
        ui.until("diagnostics from the confined server", |ui| {
            ui.file(&path).len() == 1
        })
        .await;
        assert!(
            !outside.exists(),
            "a language server wrote outside the workspace"
        );
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_crash_while_running_restarts_and_reopens_the_unsaved_text() {
        let dir = tempfile::tempdir().unwrap();
        let marker = write(dir.path(), "crash-once", "");
        let server = ServerConfig::new(
            &["fake"],
            "python3",
            &[
                &fixture("junk_server.py"),
                "--crash-once",
                marker.to_str().unwrap(),
            ],
        )
        .named("junk_server");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
        let path = dir.path().join("a.fake");
        service.open(&path, "fake", "BAD\n");
        ui.until("first diagnostics", |ui| ui.file(&path).len() == 1)
            .await;

        service.change(&path, "CRASH BAD BAD\n");
        ui.until("diagnostics of the unsaved text after the restart", |ui| {
            ui.file(&path).len() == 2
        })
        .await;
        let states = ui.server_states("junk_server");
        assert!(
            states
                .iter()
                .any(|s| matches!(s, ServerState::Restarting { attempt: 1, .. })),
            "{states:?}"
        );
        assert!(
            matches!(states.last(), Some(ServerState::Running { .. })),
            "{states:?}"
        );
        assert!(!marker.exists());
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_crashes_on_start_is_restarted_then_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let (service, mut ui) = Ui::start(
            config(vec![fake_server("fake", "crash_on_start.py")], vec![]),
            dir.path(),
        );
        service.open(dir.path().join("a.fake"), "fake", "text");
        ui.until("give up", |ui| {
            matches!(
                ui.server_states("crash_on_start").last(),
                Some(ServerState::GaveUp { .. })
            )
        })
        .await;
        let attempts: Vec<u32> = ui
            .server_states("crash_on_start")
            .iter()
            .filter_map(|s| match s {
                ServerState::Restarting { attempt, .. } => Some(*attempt),
                _ => None,
            })
            .collect();
        assert_eq!(attempts, vec![1, 2, 3]);
        // Issue 14, item 10: the server's own words (its stderr) are in the
        // reason, not only in the log.
        let Some(ServerState::GaveUp { reason }) =
            ui.server_states("crash_on_start").last().copied()
        else {
            panic!("gave up");
        };
        assert!(
            reason.contains("the server said: fatal: cannot start (on purpose)"),
            "{reason}"
        );
        // Still answers calls and shuts down after giving up.
        service.change(dir.path().join("a.fake"), "more");
        service.shutdown().await;
    }

    /// `/lsp-restart`: a server that gave up starts again with a fresh
    /// budget and gets the documents as they are now, edits made while it
    /// was down included.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_gave_up_comes_back_on_restart_with_the_current_text() {
        let dir = tempfile::tempdir().unwrap();
        let broken = write(dir.path(), "broken", "");
        let server = ServerConfig::new(
            &["fake"],
            "python3",
            &[
                &fixture("crash_on_start.py"),
                "--while",
                broken.to_str().unwrap(),
            ],
        )
        .named("flaky");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
        let path = dir.path().join("a.fake");
        service.open(&path, "fake", "BAD\n");
        ui.until("give up", |ui| {
            matches!(
                ui.server_states("flaky").last(),
                Some(ServerState::GaveUp { .. })
            )
        })
        .await;
        service.change(&path, "BAD BAD\n");
        std::fs::remove_file(&broken).unwrap();
        service.restart_servers();
        ui.until("diagnostics of the text edited while it was down", |ui| {
            ui.file(&path).len() == 2
        })
        .await;
        assert!(
            matches!(
                ui.server_states("flaky").last(),
                Some(ServerState::Running { .. })
            ),
            "{:?}",
            ui.server_states("flaky")
        );
        assert!(
            ui.notices().contains(&"restarting 1 language server"),
            "{:?}",
            ui.notices()
        );
        service.shutdown().await;
    }

    /// A server missing from PATH at first and installed later: after
    /// `/lsp-restart` (which re-sends the open buffers) it serves them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_installed_later_is_found_on_restart() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("bin/fake-ls");
        let server = ServerConfig::new(&["fake"], program.to_str().unwrap(), &[]).named("late");
        let (service, mut ui) = Ui::start(config(vec![server], vec![]), dir.path());
        let path = dir.path().join("a.fake");
        service.open(&path, "fake", "BAD\n");
        ui.until("the missing-server notice", |ui| {
            ui.notices()
                .iter()
                .any(|n| n.contains("no fake language server"))
        })
        .await;
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        std::fs::write(
            &program,
            format!("#!/bin/sh\nexec python3 {}\n", fixture("junk_server.py")),
        )
        .unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        service.restart_servers();
        service.open(&path, "fake", "BAD\n"); // what the workbench re-sends
        ui.until("diagnostics from the new server", |ui| {
            ui.file(&path).len() == 1
        })
        .await;
        service.shutdown().await;
    }

    /// A restart asked for while the server is still starting gives it a
    /// fresh budget too: one more attempt than it would have had.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_restart_during_start_resets_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(vec![fake_server("slow", "never_initialize.py")], vec![]);
        cfg.timings.initialize_timeout = Duration::from_millis(600);
        cfg.timings.restart_delays = vec![Duration::from_millis(10)];
        let (service, mut ui) = Ui::start(cfg, dir.path());
        service.open(dir.path().join("a.slow"), "slow", "text");
        let starts = |ui: &Ui| {
            ui.server_states("never_initialize")
                .iter()
                .filter(|s| matches!(s, ServerState::Starting))
                .count()
        };
        ui.until("the second start", |ui| starts(ui) == 2).await;
        service.restart_servers();
        ui.until("give up", |ui| {
            matches!(
                ui.server_states("never_initialize").last(),
                Some(ServerState::GaveUp { .. })
            )
        })
        .await;
        assert_eq!(starts(&ui), 3, "{:?}", ui.server_states("never_initialize"));
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_never_initializes_times_out_without_blocking_others() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(
            vec![
                fake_server("slow", "never_initialize.py"),
                fake_server("fake", "junk_server.py"),
            ],
            vec![],
        );
        // Long enough for a Python server to start on a busy machine.
        cfg.timings.initialize_timeout = Duration::from_secs(5);
        cfg.timings.restart_delays = vec![];
        let (service, mut ui) = Ui::start(cfg, dir.path());
        let slow = dir.path().join("a.slow");
        let fast = dir.path().join("b.fake");
        service.open(&slow, "slow", "hello");
        service.change(&slow, "hello again"); // queued while initializing; must not block
        service.open(&fast, "fake", "BAD\n");
        ui.until("the other server's diagnostics", |ui| {
            !ui.file(&fast).is_empty()
        })
        .await;
        ui.until("the initialize timeout", |ui| {
            ui.server_states("never_initialize").iter().any(|s| {
                matches!(s, ServerState::GaveUp { reason }
                    if reason.contains("initialize") && reason.contains("no answer"))
            })
        })
        .await;
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_server_is_a_one_line_notice_once() {
        let dir = tempfile::tempdir().unwrap();
        let (service, mut ui) = Ui::start(
            config(
                vec![ServerConfig::new(
                    &["fake"],
                    "no-such-language-server-xyz",
                    &[],
                )],
                vec![],
            ),
            dir.path(),
        );
        service.open(dir.path().join("a.fake"), "fake", "x");
        service.open(dir.path().join("b.fake"), "fake", "y");
        service.open(dir.path().join("c.txt"), "plaintext", "z");
        ui.until("the notice", |ui| !ui.notices().is_empty()).await;
        service.shutdown().await;
        while let Ok(event) = ui.rx.try_recv() {
            ui.seen.push(event);
        }
        assert_eq!(
            ui.notices(),
            vec![
                "no fake language server can run (no-such-language-server-xyz: missing from PATH)"
            ]
        );
    }
}

mod checks {
    use super::*;

    fn check(name: &str, command: &str, args: &[&str], matcher: MatcherSpec) -> CheckCommand {
        CheckCommand {
            name: name.into(),
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            language_ids: vec!["python".into(), "rust".into()],
            matcher,
            root_markers: vec!["Cargo.toml".into()],
            on_save: true,
            timeout_secs: 60,
            project_code: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ruff_check_on_save_then_fixed_file_is_cleared() {
        assert!(which("ruff").is_some(), "pip install ruff");
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.py", "import os\nprint(undefined_name)\n");
        let ruff = check(
            "ruff check",
            "ruff",
            &["check", "--output-format=concise", "--no-cache", "{file}"],
            MatcherSpec::Builtin(BuiltinMatcher::Ruff),
        );
        let (service, mut ui) = Ui::start(config(vec![], vec![ruff]), dir.path());
        service.save(&path);
        ui.until("ruff check results", |ui| ui.has_code(&path, "F821"))
            .await;
        let f821 = ui
            .file(&path)
            .into_iter()
            .find(|d| d.code.as_deref() == Some("F821"))
            .cloned()
            .unwrap();
        assert_eq!((f821.range.start.line, f821.range.start.character), (1, 6));
        assert_eq!(&*f821.source, "ruff check");

        std::fs::write(&path, "print('fine')\n").unwrap();
        service.run_checks(&path);
        ui.until("a clean file", |ui| {
            ui.file(&path).is_empty()
                && matches!(
                    ui.check_states("ruff check").last(),
                    Some(CheckState::Finished { .. })
                )
        })
        .await;
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn default_python_compile_check_reports_syntax_errors_without_pyc_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "broken.py", "x = 1\nif x:\n    y = (\n");
        let (service, mut ui) = Ui::start(config(vec![], CheckCommand::defaults()), dir.path());
        service.save(&path);
        ui.until("the syntax error", |ui| ui.has_code(&path, "SyntaxError"))
            .await;
        let d = ui.file(&path)[0].clone();
        assert_eq!((d.range.start.line, d.severity), (2, Severity::Error));
        assert_eq!(&*d.source, "python compile");
        assert!(!dir.path().join("__pycache__").exists());
        service.shutdown().await;
    }

    /// Headless (`snapshot`/`exec --open`): with no language server for
    /// the file, its on-save checks are still waited for and reported (the
    /// wait used to end before their first event was read).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn headless_collect_waits_for_the_checks_when_no_server_serves_the_file() {
        use hello_tui::diagnostics::headless::{Opened, collect};
        let dir = tempfile::tempdir().unwrap();
        let text = "def f(:\n";
        let path = write(dir.path(), "bad.py", text);
        let found = collect(
            config(vec![], CheckCommand::defaults()),
            Opened {
                root: dir.path(),
                path: &path,
                text,
            },
            checks_confinement(dir.path()),
            Duration::from_secs(30),
            false,
        )
        .await;
        let sources: Vec<&str> = found.diagnostics.iter().map(|d| &*d.source).collect();
        assert_eq!(sources, ["python compile"], "{found:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cargo_check_json_resolves_paths_from_the_crate_root() {
        let dir = tempfile::tempdir().unwrap();
        let krate = dir.path().join("k");
        std::fs::create_dir_all(krate.join("src")).unwrap();
        write(
            &krate,
            "Cargo.toml",
            "[package]\nname = \"k\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        let main = write(
            &krate.join("src"),
            "main.rs",
            "fn main() {\n    let s = \"名前\"; let y: u8 = missing;\n}\n",
        );
        let target = dir.path().join("target");
        let cargo = check(
            "cargo check",
            "cargo",
            &[
                "check",
                "--message-format=json",
                "--target-dir",
                target.to_str().unwrap(),
            ],
            MatcherSpec::Builtin(BuiltinMatcher::CargoJson),
        );
        let (service, mut ui) = Ui::start(config(vec![], vec![cargo]), dir.path());
        service.run_checks(&main);
        ui.until("cargo's error", |ui| ui.has_code(&main, "E0425"))
            .await;
        let d = ui.file(&main)[0].clone();
        let line = "    let s = \"名前\"; let y: u8 = missing;";
        let expected = line
            .find("missing")
            .map(|b| line[..b].chars().count())
            .unwrap();
        assert_eq!((d.range.start.line, d.range.start.character), (1, expected));
        assert_eq!(d.severity, Severity::Error);
        service.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_newer_run_supersedes_and_a_hanging_one_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.py", "x = 1\n");
        let mut hang = check(
            "hang",
            "python3",
            &["-c", "import time; time.sleep(120)", "{file}"],
            MatcherSpec::Builtin(BuiltinMatcher::Ruff),
        );
        hang.timeout_secs = 1;
        let (service, mut ui) = Ui::start(config(vec![], vec![hang]), dir.path());
        service.run_checks(&path);
        service.run_checks(&path);
        ui.until("a timeout", |ui| {
            ui.check_states("hang")
                .iter()
                .any(|s| matches!(s, CheckState::TimedOut { .. }))
        })
        .await;
        let states = ui.check_states("hang");
        assert_eq!(
            states
                .iter()
                .filter(|s| matches!(s, CheckState::Superseded))
                .count(),
            1,
            "{states:?}"
        );
        assert_eq!(
            states
                .iter()
                .filter(|s| matches!(s, CheckState::TimedOut { .. }))
                .count(),
            1,
            "only the surviving run reports: {states:?}"
        );
        service.shutdown().await;
    }

    /// Route 5: a check runs project code (`build.rs`, `conftest.py`), which
    /// the model may have written; it must not write outside the workspace.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_check_command_runs_confined() {
        if SandboxStatus::probe().is_enforced() {
            let outer = tempfile::tempdir().unwrap();
            let dir = outer.path().join("ws");
            std::fs::create_dir(&dir).unwrap();
            let path = write(&dir, "a.py", "x = 1\n");
            let outside = outer.path().join("build-rs-was-here");
            let script = format!(
                "touch {} 2>/dev/null; grep NoNewPrivs /proc/self/status",
                outside.display()
            );
            let mut escape = check(
                "escape",
                "sh",
                &["-c", &script],
                MatcherSpec::Builtin(BuiltinMatcher::Gcc),
            );
            escape.language_ids = vec!["python".into()];
            let (service, mut ui) = Ui::start(config(vec![], vec![escape]), &dir);
            service.run_checks(&path);
            ui.until("the check to finish", |ui| {
                ui.check_states("escape")
                    .iter()
                    .any(|s| matches!(s, CheckState::Finished { .. }))
            })
            .await;
            assert!(
                !outside.exists(),
                "a check command wrote outside the workspace"
            );
            service.shutdown().await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_missing_check_program_is_explained_on_demand() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "a.py", "x = 1\n");
        let mut missing = check(
            "nope",
            "no-such-checker-xyz",
            &["{file}"],
            MatcherSpec::Builtin(BuiltinMatcher::Gcc),
        );
        missing.language_ids = vec!["python".into()];
        let (service, mut ui) = Ui::start(config(vec![], vec![missing]), dir.path());
        service.save(&path); // silent on save
        service.run_checks(&path);
        ui.until("the notice", |ui| !ui.notices().is_empty()).await;
        assert_eq!(
            ui.notices(),
            vec!["check `nope`: `no-such-checker-xyz` not found on PATH"]
        );
        service.shutdown().await;
    }
}

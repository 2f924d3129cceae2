//! Rendering tests: insta snapshots of the whole workbench and of each pane
//! through ratatui's `TestBackend`. Where colour carries meaning (focus,
//! selection, severity) the snapshot is the buffer's debug form, which
//! lists styles too.

#[path = "support/frames.rs"]
mod frames;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::update::{Command, handle_app_event, handle_terminal_event};
use hello_tui::config::Settings;
use hello_tui::diagnostics::Severity;
use hello_tui::diagnostics::{DiagnosticId, Position, Range};
use hello_tui::theme::Theme;
use hello_tui::ui::history::HistoryScroll;
use hello_tui::workbench::diagnostics::DiagnosticRow;
use hello_tui::workbench::transcript::{PaneEntry, Speaker};
use hello_tui::workbench::{KernelView, VariableRow};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;

fn state() -> AppState {
    let settings = Settings::defaults();
    AppState::new("/work/demo".into(), settings)
}

fn draw(state: &mut AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    draw_with(state, &Theme::builtin_default(), width, height)
}

fn draw_with(
    state: &mut AppState,
    theme: &Theme,
    width: u16,
    height: u16,
) -> Terminal<TestBackend> {
    frames::draw_settled(state, theme, width, height)
}

fn text_of(terminal: &Terminal<TestBackend>) -> String {
    terminal.backend().to_string()
}

fn buffer_of(terminal: &Terminal<TestBackend>) -> &Buffer {
    terminal.backend().buffer()
}

fn press(state: &mut AppState, code: KeyCode, modifiers: KeyModifiers) {
    handle_terminal_event(state, Event::Key(KeyEvent::new(code, modifiers)));
}

/// The identity of a hand-made diagnostic row (1-based, as shown).
fn diagnostic_id(path: &str, (line, column): (usize, usize), source: &str) -> DiagnosticId {
    let start = Position::new(line - 1, column - 1);
    DiagnosticId {
        path: std::path::Path::new(path).into(),
        range: Range::new(start, start),
        source: source.into(),
        code: None,
    }
}

fn with_content(mut s: AppState) -> AppState {
    *s.workbench.transcript_mut() = vec![
        PaneEntry::new(Speaker::User, "Why does checkAuth reject users?"),
        PaneEntry::new(
            Speaker::Assistant,
            "It compares `role` against \"admin\" only. 你好, wide text wraps too.",
        ),
        PaneEntry::new(
            Speaker::Tool,
            "ok: true\nstdout: found checkAuth in auth.ts",
        ),
    ]
    .into();
    *s.workbench.last_exec_id_mut() = Some(7);
    *s.workbench.kernel_mut() = KernelView::Idle {
        python: "3.11.7".into(),
    };
    s.variables.rows = vec![
        VariableRow {
            name: "data".into(),
            type_name: "list".into(),
            summary: "len 1000000".into(),
            preview: "[0, 1, 4, 9, 16, 25, …]".into(),
            size: None,
            changed_by: Some(7),
        },
        VariableRow {
            name: "user_count".into(),
            type_name: "int".into(),
            summary: "".into(),
            preview: "3".into(),
            size: None,
            changed_by: Some(3),
        },
    ];
    s.diagnostics.rows = vec![
        DiagnosticRow {
            severity: Severity::Error,
            path: "src/auth.ts".into(),
            abs_path: std::path::Path::new("/work/demo/src/auth.ts").into(),
            line: 42,
            column: 10,
            message: "Cannot find name 'config'.".into(),
            source: Some("ts".into()),
            detail: "Cannot find name 'config'.".into(),
            related: Vec::new(),
            id: diagnostic_id("/work/demo/src/auth.ts", (42, 10), "ts"),
        },
        DiagnosticRow {
            severity: Severity::Warning,
            path: "src/api.ts".into(),
            abs_path: std::path::Path::new("/work/demo/src/api.ts").into(),
            line: 3,
            column: 1,
            message: "'x' is declared but never used.".into(),
            source: Some("ts".into()),
            detail: "'x' is declared but never used.".into(),
            related: Vec::new(),
            id: diagnostic_id("/work/demo/src/api.ts", (3, 1), "ts"),
        },
        DiagnosticRow {
            severity: Severity::Hint,
            path: "main.py".into(),
            abs_path: std::path::Path::new("/work/demo/main.py").into(),
            line: 1,
            column: 8,
            message: "`os` imported but unused".into(),
            source: Some("ruff".into()),
            detail: "`os` imported but unused".into(),
            related: Vec::new(),
            id: diagnostic_id("/work/demo/main.py", (1, 8), "ruff"),
        },
    ];
    // What the title counts (the store's totals, set with the rows).
    s.diagnostics.counts = hello_tui::diagnostics::SeverityCounts {
        errors: 1,
        warnings: 1,
        infos: 0,
        hints: 1,
    };
    s
}

#[test]
fn empty_workbench_120x40() {
    let mut s = state();
    insta::assert_snapshot!(text_of(&draw(&mut s, 120, 40)));
}

#[test]
fn empty_workbench_80x24() {
    let mut s = state();
    insta::assert_snapshot!(text_of(&draw(&mut s, 80, 24)));
}

#[test]
fn compact_workbench_70x20_hides_the_inspector() {
    let mut s = state();
    let text = text_of(&draw(&mut s, 70, 20));
    assert!(!text.contains("Variables"));
    assert!(text.contains("Diagnostics"));
    insta::assert_snapshot!(text);
}

#[test]
fn workbench_with_content_120x40() {
    let mut s = with_content(state());
    insta::assert_snapshot!(text_of(&draw(&mut s, 120, 40)));
}

#[test]
fn every_pane_has_a_visible_title() {
    let mut s = state();
    // With no file open the file view is shown once the keyboard is on it.
    press(&mut s, KeyCode::Char('2'), KeyModifiers::ALT);
    let focused_file_view = text_of(&draw(&mut s, 120, 40));
    assert!(focused_file_view.contains("No file"), "{focused_file_view}");
    assert!(
        focused_file_view.contains("No file open."),
        "{focused_file_view}"
    );
    press(&mut s, KeyCode::Char('1'), KeyModifiers::ALT);
    let text = text_of(&draw(&mut s, 120, 40));
    for title in ["Conversation", "Message", "Variables", "Diagnostics"] {
        assert!(text.contains(title), "missing {title}");
    }
    for empty in ["No messages yet.", "kernel not started", "no diagnostics"] {
        assert!(text.contains(empty), "missing empty state {empty}");
    }
    let status = text.lines().last().expect("status bar row").to_owned();
    for part in [
        "demo",
        "no model",
        "kernel not started",
        "snapshot …/12000",
        "[Conversation]",
        "Ctrl+Q",
    ] {
        assert!(status.contains(part), "status bar lacks {part}: {status}");
    }
}

/// Focus is carried by border style: the focused pane is thick and in the
/// focus colour, the others are not.
#[test]
fn focused_pane_styling() {
    let mut s = state();
    press(&mut s, KeyCode::Char('4'), KeyModifiers::ALT);
    let terminal = draw(&mut s, 80, 24);
    insta::assert_debug_snapshot!(buffer_of(&terminal));
}

#[test]
fn variables_pane_with_changed_marker_and_selection() {
    let mut s = with_content(state());
    press(&mut s, KeyCode::Char('3'), KeyModifiers::ALT);
    press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    let terminal = draw(&mut s, 120, 40);
    let area = ratatui::layout::Rect::new(48, 23, 36, 16);
    let pane = buffer_region(buffer_of(&terminal), area);
    insta::assert_debug_snapshot!(pane);
}

#[test]
fn diagnostics_pane_severities_are_coloured() {
    let mut s = with_content(state());
    press(&mut s, KeyCode::Char('4'), KeyModifiers::ALT);
    let terminal = draw(&mut s, 120, 40);
    let area = ratatui::layout::Rect::new(84, 23, 36, 16);
    insta::assert_debug_snapshot!(buffer_region(buffer_of(&terminal), area));
}

/// Issue 14, item 9: a message's parts are separated (ruff sends the
/// problem and a `help:` line), the selected problem wraps to show all of
/// itself, and K shows everything, related places included. Clicks still
/// land on the row drawn under them.
#[test]
fn problems_read_whole_in_the_list_and_in_their_detail() {
    use hello_tui::diagnostics::{Diagnostic, DiagnosticsEvent, Position, Range, Related};
    let mut s = state();
    let diag = |line: usize, message: &str, related: Vec<Related>| Diagnostic {
        path: std::path::Path::new("/work/demo/app.py").into(),
        range: Range::new(Position::new(line, 7), Position::new(line, 9)),
        severity: Severity::Warning,
        message: message.into(),
        source: "ruff".into(),
        code: Some("F401".into()),
        related,
    };
    hello_tui::app::diagnostics::apply(
        &mut s,
        DiagnosticsEvent::Published {
            source: "ruff".into(),
            path: "/work/demo/app.py".into(),
            diagnostics: vec![
                diag(
                    0,
                    "`os` imported but unused\nhelp: Remove unused import: `os`",
                    vec![Related {
                        path: "/work/demo/lib.py".into(),
                        line: 4,
                        character: 0,
                        message: "`os` is also imported here".into(),
                    }],
                ),
                diag(
                    1,
                    "`sys` imported but unused\nhelp: Remove unused import: `sys`",
                    vec![],
                ),
                diag(9, "`re` imported but unused", vec![]),
            ],
        },
    );
    assert_eq!(
        &*s.diagnostics.rows[0].message,
        "`os` imported but unused · help: Remove unused import: `os`"
    );
    press(&mut s, KeyCode::Char('4'), KeyModifiers::ALT);
    let text = text_of(&draw(&mut s, 80, 24));
    insta::assert_snapshot!("problems_wrapped_selection", text);
    // The selection is whole (wrapped), its source at its end.
    for part in [
        "unused · help:",
        "Remove unused",
        "import: `os`  ruff",
        "F401",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // The unselected second problem stays on one line, cut.
    assert!(!text.contains("Remove unused import: `sys`"), "{text}");

    // A click on the second problem's row, below the wrapped first one.
    let layout = s.layout();
    let pane = layout.rect(hello_tui::keymap::PaneId::Diagnostics).unwrap();
    let inner = (pane.width - 2, pane.height - 2);
    let rows =
        hello_tui::panes::diagnostics::geometry::selected_rows(&s.diagnostics, inner.0).len();
    // The file's header, the selection's rows, then the second problem.
    let row = u16::try_from(1 + rows).unwrap();
    assert_eq!(
        hello_tui::panes::diagnostics::geometry::diagnostic_at(
            &s.diagnostics,
            inner.0,
            inner.1,
            row
        ),
        Some(1)
    );

    press(&mut s, KeyCode::Char('K'), KeyModifiers::SHIFT);
    let detail = text_of(&draw(&mut s, 80, 24));
    insta::assert_snapshot!("problem_detail", detail);
    for part in [
        "help: Remove unused import: `os`",
        "ruff F401",
        "app.py:1:8",
        "lib.py:5:1 `os` is also imported here",
    ] {
        assert!(detail.contains(part), "{part}: {detail}");
    }
}

/// Issue 30: a file keeps its first 1 000 problems, by severity then
/// place; its group in the pane ends with how many more it has, the
/// title counts them all, and the snapshot is handed a few and the count.
#[test]
fn a_file_lists_its_first_thousand_problems_and_says_how_many_more() {
    use hello_tui::app::AppEvent;
    use hello_tui::diagnostics::{Diagnostic, DiagnosticsEvent, FILE_CAP};
    let path = std::path::Path::new("/work/demo/big.py");
    // 1 500 undefined names, one every 5 lines; every 500th is an error.
    let diagnostics = (0..1500)
        .map(|i| Diagnostic {
            path: path.into(),
            range: Range::new(Position::new(i * 5, 6), Position::new(i * 5, 23)),
            severity: if i % 500 == 499 {
                Severity::Error
            } else {
                Severity::Warning
            },
            message: format!("Undefined name `undefined_{i:04}`").into(),
            source: "ruff".into(),
            code: Some("F821".into()),
            related: Vec::new(),
        })
        .collect();
    let mut ui = frames::Loop::new(state(), 100, 30);
    handle_app_event(
        &mut ui.state,
        AppEvent::Diagnostics(DiagnosticsEvent::Published {
            source: "ruff".into(),
            path: path.into(),
            diagnostics,
        }),
    );
    ui.draw();
    ui.key(KeyCode::Char('4'), KeyModifiers::ALT);
    ui.key(KeyCode::End, KeyModifiers::NONE);
    let screen = ui.screen();
    insta::assert_snapshot!("diagnostics_past_the_file_cap", screen);
    assert_eq!(ui.state.diagnostics.rows.len(), FILE_CAP);
    assert!(screen.contains("… 500 more"), "{screen}");
    assert!(
        screen.contains("✖ 3 ▲ 1497"),
        "the title counts all: {screen}"
    );
    // The last error (line 7 496) is kept, past warnings that are not.
    let last = ui.state.diagnostics.rows.last().unwrap();
    assert_eq!((last.severity, last.line), (Severity::Error, 7496));

    let request = hello_tui::app::snapshot::request(&ui.state);
    let handed = request.source.diagnostics.as_ref().map_or(0, Vec::len);
    assert_eq!(handed, 200);
    assert_eq!(request.source.diagnostics_not_listed, Some(1300));
    assert_eq!(
        request.source.diagnostics.as_ref().unwrap()[0]
            .severity
            .as_deref(),
        Some("error"),
        "the most severe are handed over first"
    );
}

/// Issue 14, item 10: a language server that fails takes a few words of
/// the status bar (the model, the kernel and the approval mode stay), and
/// its own reason is in the conversation, whole.
#[test]
fn a_failed_language_server_is_a_short_segment_and_a_readable_notice() {
    use hello_tui::diagnostics::{DiagnosticsEvent, ServerState};
    let mut s = state();
    let reason = "server error -32603: Request initialize failed with message: \
                  Could not find a valid TypeScript installation. Please, install \
                  typescript in your workspace or globally";
    hello_tui::app::diagnostics::apply(
        &mut s,
        DiagnosticsEvent::ServerState {
            name: "typescript-language-server".into(),
            state: ServerState::GaveUp {
                reason: reason.into(),
            },
        },
    );
    let text = text_of(&draw(&mut s, 120, 24));
    let bar = text.lines().last().unwrap();
    for part in [
        "kernel not started",
        "ask · unconfined",
        "typescript-language-server: stopped",
    ] {
        assert!(bar.contains(part), "{part}: {bar}");
    }
    assert!(!bar.contains("-32603"), "{bar}");
    let notice = &s.workbench.transcript().last().unwrap().text;
    assert!(
        notice.contains("Could not find a valid TypeScript installation"),
        "{notice}"
    );
    assert!(notice.contains("/lsp-restart"), "{notice}");
}

/// Characters that must never reach a terminal cell raw: ESC and BEL (an
/// OSC title or clipboard sequence) and the bidi/format characters that
/// reorder what is shown (U+202E, U+2066, U+200F).
fn assert_no_raw_controls(buffer: &Buffer) {
    for cell in buffer.content() {
        let symbol = cell.symbol();
        assert!(
            !symbol.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{2066}', '\u{200f}']),
            "raw control in a cell: {symbol:?}"
        );
    }
}

/// Issue 25, route 18: what a language server or a check reports (message,
/// source, code) is drawn through the sanitizer: a bidi override shows as
/// `<U+202E>` instead of reversing the text after it, escape sequences are
/// dropped, and a newline does not run two lines together.
#[test]
fn hostile_diagnostics_are_drawn_sanitized() {
    use hello_tui::app::AppEvent;
    use hello_tui::diagnostics::{Diagnostic, DiagnosticsEvent, Position, Range};
    let mut s = state();
    let diag = |line: usize, message: &str, source: &str, code: &str| Diagnostic {
        path: std::path::Path::new("/work/demo/app.py").into(),
        range: Range::new(Position::new(line, 0), Position::new(line, 3)),
        severity: Severity::Error,
        message: message.into(),
        source: source.into(),
        code: Some(code.into()),
        related: vec![],
    };
    handle_app_event(
        &mut s,
        AppEvent::Diagnostics(DiagnosticsEvent::Published {
            source: "evil".into(),
            path: "/work/demo/app.py".into(),
            diagnostics: vec![
                diag(
                    0,
                    "bad \u{202e}gnp.exe\u{1b}]2;pwned\u{7}\nhelp: \u{1b}[2Jremove",
                    "ev\u{202e}il",
                    "E\u{1b}]52;c;eA==\u{7}1\u{2066}",
                ),
                diag(
                    3,
                    "two \u{202e}lines\u{1b}[31m\nhere",
                    "src\u{200f}",
                    "C\u{202e}2",
                ),
            ],
        }),
    );
    press(&mut s, KeyCode::Char('4'), KeyModifiers::ALT);
    let terminal = draw(&mut s, 160, 40);
    assert_no_raw_controls(buffer_of(&terminal));
    let layout = s.layout();
    let pane = layout.rect(hello_tui::keymap::PaneId::Diagnostics).unwrap();
    let region = buffer_region(buffer_of(&terminal), pane);
    let text: String = (0..region.area.height)
        .map(|y| {
            (0..region.area.width)
                .map(|x| region[(x, y)].symbol())
                .collect::<String>()
                + "\n"
        })
        .collect();
    // The selected row wraps, the other is one line; both show the marks.
    assert!(text.contains("<U+202E>gnp.exe"), "{text}");
    assert!(text.contains("two <U+202E>lines · here"), "{text}");
    insta::assert_debug_snapshot!(region);
}

/// Issue 25, route 18: the status bar's notice (a check's or a server's
/// words) and the diagnostic under the cursor go through the sanitizer.
#[test]
fn hostile_text_in_the_status_bar_is_drawn_sanitized() {
    use hello_tui::app::AppEvent;
    use hello_tui::diagnostics::{Diagnostic, DiagnosticsEvent, Position, Range};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("demo");
    std::fs::create_dir_all(&root).unwrap();
    let file = root.join("app.py");
    std::fs::write(&file, "import os\n").unwrap();
    let mut s = AppState::new(root.clone(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &file, Some((1, 1)));
    handle_app_event(
        &mut s,
        AppEvent::Diagnostics(DiagnosticsEvent::Published {
            source: "ruff".into(),
            path: file.clone(),
            diagnostics: vec![Diagnostic {
                path: file.as_path().into(),
                range: Range::new(Position::new(0, 0), Position::new(0, 9)),
                severity: Severity::Warning,
                message: "unused\u{202e}so\u{1b}]2;pwned\u{7}\nnext".into(),
                source: "ru\u{200f}ff".into(),
                code: None,
                related: vec![],
            }],
        }),
    );
    handle_app_event(
        &mut s,
        AppEvent::Diagnostics(DiagnosticsEvent::Notice(
            "check: \u{202e}txt.exe\u{1b}]52;c;eA==\u{7}\nline two".into(),
        )),
    );
    let terminal = draw(&mut s, 200, 24);
    assert_no_raw_controls(buffer_of(&terminal));
    let bar = text_of(&terminal).lines().last().unwrap().to_owned();
    assert!(bar.contains("unused<U+202E>so next"), "{bar}");
    assert!(bar.contains("check: <U+202E>txt.exe line two"), "{bar}");
    let row = ratatui::layout::Rect::new(0, 23, 200, 1);
    insta::assert_debug_snapshot!(buffer_region(buffer_of(&terminal), row));
}

/// Issue 18: `/lsp` lists every configured server with the languages it
/// serves, its state (running, given up, missing from PATH, not for this
/// TypeScript, not started) and its last error, in the conversation.
#[test]
fn slash_lsp_lists_servers_states_and_last_errors() {
    use hello_tui::diagnostics::{DiagnosticsEvent, ServerState};
    use std::time::Duration;
    let mut s = state();
    let events = [
        DiagnosticsEvent::Routed {
            language_id: "python".into(),
            servers: vec!["ruff".into()],
            skipped: vec![
                ("basedpyright-langserver".into(), "missing from PATH".into()),
                ("pylsp".into(), "missing from PATH".into()),
            ],
        },
        DiagnosticsEvent::ServerState {
            name: "ruff".into(),
            state: ServerState::Running { encoding: "utf-16" },
        },
        DiagnosticsEvent::Routed {
            language_id: "typescript".into(),
            servers: vec!["tsc-lsp".into()],
            skipped: vec![(
                "typescript-language-server".into(),
                "not for TypeScript 7.0.2".into(),
            )],
        },
        DiagnosticsEvent::ServerState {
            name: "tsc-lsp".into(),
            state: ServerState::Restarting {
                attempt: 1,
                delay: Duration::from_secs(1),
                reason: "the server closed its output (exit status: 1)".into(),
            },
        },
        DiagnosticsEvent::ServerState {
            name: "tsc-lsp".into(),
            state: ServerState::GaveUp {
                reason: "the server closed its output (exit status: 1)".into(),
            },
        },
    ];
    for event in events {
        hello_tui::app::diagnostics::apply(&mut s, event);
    }
    for c in "/lsp".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let listing = s.workbench.transcript().last().unwrap().text.clone();
    for line in [
        "ruff (python): running (utf-16)",
        "basedpyright-langserver (python): missing from PATH",
        "tsc-lsp (typescript, typescriptreact, javascript, javascriptreact): given up after \
         repeated failures",
        "    last error: the server closed its output (exit status: 1)",
        "typescript-language-server (typescript, typescriptreact, javascript, \
         javascriptreact): not for TypeScript 7.0.2",
        "rust-analyzer (rust): not started (no file of its languages opened yet)",
    ] {
        assert!(listing.lines().any(|l| l == line), "{line}\n{listing}");
    }
    insta::assert_snapshot!("slash_lsp", text_of(&draw(&mut s, 120, 30)));
}

#[test]
fn help_overlay_lists_bindings() {
    let mut s = state();
    press(&mut s, KeyCode::F(1), KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 120, 40));
    assert!(text.contains("Ctrl+Q"));
    assert!(text.contains("Alt+Z"), "{text}");
    insta::assert_snapshot!(text);
    // The composer's keys are a few rows further down.
    let mut below = String::new();
    for _ in 0..12 {
        press(&mut s, KeyCode::Down, KeyModifiers::NONE);
        below = text_of(&draw(&mut s, 120, 40));
        if below.contains("Shift+Enter") {
            break;
        }
    }
    assert!(below.contains("Shift+Enter"), "{below}");
    press(&mut s, KeyCode::PageUp, KeyModifiers::NONE);
    // At 80 columns descriptions wrap in their column instead of ending
    // mid-word, and keys read as typed (`?`, `q`).
    let narrow = text_of(&draw(&mut s, 80, 24));
    insta::assert_snapshot!("help_overlay_at_80_columns", narrow);
}

/// `/help` opens the same help, and its end lists the composer's
/// commands from the table the palette and the dispatcher read.
#[test]
fn help_ends_with_the_commands() {
    let mut s = state();
    for c in "/help".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    draw(&mut s, 120, 40);
    press(&mut s, KeyCode::End, KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 120, 40));
    assert!(text.contains("Commands (type / in the composer)"), "{text}");
    assert!(
        text.contains("/approval [ask|review|auto|full|deny]"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn search_overlay_with_highlighted_hits() {
    let mut s = with_content(state());
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "checkauth".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let terminal = draw(&mut s, 100, 30);
    let text = text_of(&terminal);
    assert!(text.contains("2 results"), "{text}");
    insta::assert_debug_snapshot!(buffer_region(
        buffer_of(&terminal),
        hello_tui::overlays::search::area(ratatui::layout::Rect::new(0, 0, 100, 30))
    ));
}

#[test]
fn search_overlay_empty_states() {
    let mut s = state();
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "zebra".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("no matches for “zebra”"), "{text}");
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("kernel not running"), "{text}");
    insta::assert_snapshot!(text);
}

/// The files scope says on screen how to search inside files (`#text`),
/// which nothing else mentions.
#[test]
fn the_files_scope_says_how_to_search_inside_files() {
    let mut s = state();
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Added(
            "src/auth.ts".into(),
        ));
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    // Tab walks the scopes; one of the four is the files scope.
    for _ in 0..4 {
        let text = text_of(&draw(&mut s, 100, 30));
        if text.contains("#text to search inside the files") {
            return;
        }
        press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    }
    panic!("no hint:\n{}", text_of(&draw(&mut s, 100, 30)));
}

#[test]
fn quit_confirmation_is_not_shown_without_unsaved_edits() {
    let mut s = state();
    press(&mut s, KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert!(s.should_quit);
}

#[test]
fn hostile_text_cannot_escape_its_pane() {
    let mut s = state();
    s.workbench.transcript_mut().push(PaneEntry::new(
        Speaker::Assistant,
        "a\u{1b}[2J\u{1b}]0;pwned\u{7}b\rc\u{1b}[201~",
    ));
    let text = text_of(&draw(&mut s, 80, 24));
    assert!(text.contains("ab␍c"), "{text}");
    assert!(!text.contains('\u{1b}'));
    assert!(!text.contains("pwned"));
}

#[test]
fn no_color_theme_keeps_focus_visible() {
    let mut s = state();
    let theme = Theme::builtin_default().without_colors();
    let terminal = draw_with(&mut s, &theme, 80, 24);
    let buffer = buffer_of(&terminal);
    for cell in buffer.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset);
        assert_eq!(cell.bg, ratatui::style::Color::Reset);
    }
    // The focused conversation border is bold; an unfocused one is not.
    assert!(
        buffer[(0, 0)]
            .modifier
            .contains(ratatui::style::Modifier::BOLD)
    );
    assert!(
        !buffer[(79, 0)]
            .modifier
            .contains(ratatui::style::Modifier::BOLD)
    );
}

#[test]
fn any_size_renders_without_panicking() {
    for width in 0..=130u16 {
        for height in 0..=45u16 {
            if (width * height) % 7 != 0 && width > 25 && height > 8 {
                continue; // sample the large sizes, cover every small one
            }
            let mut s = with_content(state());
            draw(&mut s, width, height);
            press(&mut s, KeyCode::F(1), KeyModifiers::NONE);
            draw(&mut s, width, height);
        }
    }
}

/// The cells of one region, so a pane's snapshot does not depend on the rest.
fn buffer_region(buffer: &Buffer, area: ratatui::layout::Rect) -> Buffer {
    let mut out = Buffer::empty(ratatui::layout::Rect::new(0, 0, area.width, area.height));
    for y in 0..area.height {
        for x in 0..area.width {
            out[(x, y)] = buffer[(area.x + x, area.y + y)].clone();
        }
    }
    out
}

#[test]
fn scrolling_past_the_top_is_clamped_before_the_frame() {
    let mut s = state();
    for i in 0..60 {
        s.workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::User, format!("message {i}")));
    }
    for _ in 0..100 {
        press(&mut s, KeyCode::PageUp, KeyModifiers::NONE);
    }
    let text = text_of(&draw(&mut s, 80, 24));
    assert!(
        text.contains("message 0"),
        "the top of the history is shown:\n{text}"
    );
    assert_eq!(
        s.conversation.place.scroll,
        HistoryScroll::Anchored { entry: 0, row: 0 },
        "scrolling past the top stops at the first row"
    );
    press(&mut s, KeyCode::PageDown, KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 80, 24));
    assert!(
        !text.contains("message 0") && text.contains("message 9"),
        "one PgDn moves down at once:\n{text}"
    );
}

#[test]
fn assistant_messages_render_markdown() {
    let mut s = state();
    s.workbench.transcript_mut().push(PaneEntry::new(Speaker::Assistant, "## Cause\n\n- `checkAuth` only allows **admin**\n\n| file | line |\n|---|---|\n| auth.ts | 3 |\n\n```ts\nreturn user.role === \"admin\";\n```"));
    let text = text_of(&draw(&mut s, 100, 30));
    insta::assert_snapshot!(text);
}

/// F2 is the next request: its sections' costs on the left, its messages
/// on the right (the system prompt first; the snapshot rides in the new
/// user message at the end).
#[test]
fn f2_previews_the_snapshot_with_its_breakdown() {
    let mut s = with_content(state());
    let view = hello_tui::workbench::snapshot::build(hello_tui::app::snapshot::request(&s));
    assert!(view.used <= view.max);
    handle_app_event(
        &mut s,
        hello_tui::app::AppEvent::SnapshotBuilt(view.clone()),
    );
    press(&mut s, KeyCode::F(2), KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 140, 36));
    let status = text.lines().last().unwrap_or_default().to_owned();
    assert!(
        status.contains(&format!("snapshot {}/12000", view.used)),
        "{status}"
    );
    assert!(text.contains("Next request"), "{text}");
    assert!(text.contains("snapshot 543/12000 chars") || text.contains("snapshot "));
    let (next, _, _) =
        hello_tui::workbench::context_window::preview(&s.workbench, &s.draft()).unwrap();
    assert!(
        next.readable().contains("Cannot find name 'config'."),
        "diagnostics reach the snapshot in the previewed message"
    );
    insta::assert_snapshot!(text);
    press(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(s.overlay(), None);
}

#[test]
fn code_cells_collapse_and_expand() {
    use hello_tui::workbench::transcript::CellStatus;
    let mut s = state();
    let mut ok = PaneEntry::cell(
        1,
        "import os\nfiles = os.listdir('.')\nprint(len(files))\nlen(files)\nfiles[:3]",
    );
    ok.text = (1..=8).map(|i| format!("line {i}\n")).collect();
    if let Some(cell) = &mut ok.cell {
        cell.status = CellStatus::Succeeded {
            duration_ms: Some(12),
            waited_ms: 0,
        };
    }
    let mut failed = PaneEntry::cell(2, "1/0");
    failed.text = "Traceback (most recent call last):\n  File \"<cell>\", line 1\nZeroDivisionError: division by zero".into();
    if let Some(cell) = &mut failed.cell {
        cell.status = CellStatus::Failed {
            summary: "ZeroDivisionError".into(),
        };
    }
    *s.workbench.transcript_mut() = vec![ok, failed, PaneEntry::cell(3, "while True: pass")].into();
    let collapsed = text_of(&draw(&mut s, 100, 40));
    assert!(
        collapsed.contains("2 more lines (Ctrl+O expands)"),
        "{collapsed}"
    );
    assert!(collapsed.contains("4 earlier output lines"));
    assert!(collapsed.contains("✖ ZeroDivisionError") && collapsed.contains("● running"));
    insta::assert_snapshot!("cells_collapsed", collapsed);
    press(&mut s, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let expanded = text_of(&draw(&mut s, 100, 40));
    assert!(expanded.contains("files[:3]") && expanded.contains("line 1"));
    let terminal = draw(&mut s, 100, 40);
    insta::assert_debug_snapshot!(
        "cells_expanded_styled",
        buffer_region(
            buffer_of(&terminal),
            ratatui::layout::Rect::new(0, 0, 41, 30)
        )
    );
}

#[test]
fn search_enter_jumps_to_the_message_and_pins_show_above_the_composer() {
    let mut s = state();
    for i in 0..40 {
        if i == 3 {
            s.workbench.transcript_mut().push(PaneEntry::new(
                Speaker::Tool,
                "stdout: checkAuth rejects role user",
            ));
        }
        s.workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::User, format!("filler message {i}")));
    }
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "checkauth".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut s, KeyCode::Char('p'), KeyModifiers::ALT);
    assert_eq!(
        s.workbench.pins().len(),
        1,
        "Alt+P pins the selected result"
    );
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(s.overlay(), None);
    assert_eq!(s.conversation.flash, Some(3));
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(
        text.contains("checkAuth rejects role user"),
        "the result is in view:\n{text}"
    );
    assert!(
        text.contains("pinned") && text.contains("#4 tool"),
        "{text}"
    );
    insta::assert_snapshot!(text);
    press(&mut s, KeyCode::Backspace, KeyModifiers::ALT);
    assert!(s.workbench.pins().is_empty());
    assert_eq!(
        s.conversation.flash, None,
        "the flash ends with the next key"
    );
}

#[test]
fn conversation_search_uses_the_bm25_index_and_jumps_to_the_entry() {
    use hello_tui::context::Message;
    let mut s = state();
    let prompts = ["why does login fail?", "and the api?"];
    // Each pane entry carries the `context` index it shows, as the agent
    // sets it when the conversation stores the message.
    let shown = |s: &mut AppState, role, message: Message| {
        let mut entry = PaneEntry::new(role, message.content.clone());
        entry.message = Some(s.workbench.agent().context.push(message));
        s.workbench.transcript_mut().push(entry);
    };
    for p in prompts {
        shown(&mut s, Speaker::User, Message::user(p));
    }
    shown(
        &mut s,
        Speaker::Assistant,
        Message::assistant("The function checkAuth rejects plain users."),
    );
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "check auth".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(
        text.contains("1 result"),
        "identifier-aware: `check auth` finds checkAuth\n{text}"
    );
    // The third message: its id, as `context.slice(2, 3)` takes it.
    assert!(text.contains("#2 assistant"), "{text}");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        s.conversation.flash,
        Some(2),
        "jumps to the pane's assistant entry"
    );
}

#[test]
fn file_search_scope_matches_paths_and_opens_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let settings = Settings::defaults();
    let mut s = AppState::new(root.clone(), settings);
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "README.md".into(),
            "src/main.rs".into(),
        ]));
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    for c in "mainrs".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("in files 1 result"), "{text}");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let doc = s.workbench.editors().active().expect("the file opened");
    assert!(doc.path().ends_with("src/main.rs"));
}

/// With the picker's worker running, typing never matches on the UI
/// thread: answers arrive as events, and one for an older query is dropped.
#[tokio::test]
async fn file_search_matches_on_the_worker_and_keeps_only_the_newest_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let settings = Settings::defaults();
    let mut s = AppState::new(root, settings);
    let (tx, mut answers) = tokio::sync::mpsc::unbounded_channel();
    s.workbench.services_mut().picker = Some(hello_tui::workspace::FuzzyWorker::spawn(tx).unwrap());
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "src/main.rs".into(),
            "src/lib.rs".into(),
            "docs/guide.md".into(),
        ]));
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut s, KeyCode::Char('s'), KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(
        !text.contains("src/main.rs"),
        "nothing matched inline: {text}"
    );
    press(&mut s, KeyCode::Char('r'), KeyModifiers::NONE);
    press(&mut s, KeyCode::Char('c'), KeyModifiers::NONE);
    // The worker skips queries overtaken by newer ones: wait for "src".
    let newest = loop {
        let answer = tokio::time::timeout(std::time::Duration::from_secs(10), answers.recv())
            .await
            .expect("the worker answers")
            .expect("worker alive");
        if answer.query == "src" {
            break answer;
        }
    };
    let stale = hello_tui::workspace::PickerResults {
        id: newest.id - 1,
        query: "sr".into(),
        matches: Vec::new(),
        matched: 0,
        total: 3,
    };
    handle_app_event(
        &mut s,
        hello_tui::workbench::event::AppEvent::PickerResults(newest),
    );
    handle_app_event(
        &mut s,
        hello_tui::workbench::event::AppEvent::PickerResults(stale),
    );
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("in files 2 results"), "{text}");
    assert!(
        text.contains("src/main.rs") && text.contains("src/lib.rs"),
        "{text}"
    );
    assert!(!text.contains("guide.md"), "{text}");
}

/// Keys and Enter in one burst: Enter must open a match of the query as
/// typed, not the worker's answer to an older one (not yet arrived).
#[tokio::test]
async fn enter_before_the_worker_answers_opens_a_match_of_the_typed_query() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("docs/guide.md"), "# Guide\n").unwrap();
    let mut s = AppState::new(root, Settings::defaults());
    let (tx, _answers) = tokio::sync::mpsc::unbounded_channel();
    s.workbench.services_mut().picker = Some(hello_tui::workspace::FuzzyWorker::spawn(tx).unwrap());
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "main.rs".into(),
            "docs/guide.md".into(),
        ]));
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    for c in "guide".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let doc = s.workbench.editors().active().expect("a file opened");
    assert!(doc.path().ends_with("docs/guide.md"), "{:?}", doc.path());
}

#[test]
fn hash_text_searches_file_contents_in_the_background_and_skips_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(
        root.join("auth.py"),
        "x = 1\ndef check_token(t):\n    return t\n",
    )
    .unwrap();
    std::fs::write(root.join(".env"), "check_token=supersecret\n").unwrap();
    let mut s = search_contents(&root, &["auth.py"], "#check_token");
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("auth.py:2"), "{text}");
    assert!(
        !text.contains("supersecret"),
        "secret files are never searched: {text}"
    );
    insta::assert_snapshot!(text.lines().take(29).collect::<Vec<_>>().join("\n"));
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let doc = s.workbench.editors().active().expect("the file opened");
    assert_eq!(doc.cursor().0, 1, "at the hit's line");
}

/// The app in `root` (its file index holding `files`) after Ctrl+F, the
/// files scope and `query` typed, once the `#text` search it started has
/// come back whole.
fn search_contents(root: &std::path::Path, files: &[&str], query: &str) -> AppState {
    let mut s = AppState::new(root.to_path_buf(), Settings::defaults());
    let (tx, mut rx) = hello_tui::workbench::event::channel();
    s.workbench.agent_mut().events = Some(tx);
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(
            files.iter().map(|&f| f.into()).collect(),
        ));
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    for c in query.chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    finish_contents_search(&mut s, &mut rx);
    s
}

/// Hands the app the open search pane's `#text` search messages until it
/// is done.
fn finish_contents_search(
    s: &mut AppState,
    rx: &mut hello_tui::workbench::event::AppEventReceiver,
) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let unfinished = |s: &AppState| match s.overlay() {
        Some(hello_tui::overlays::Overlay::Search(search)) => {
            search.content.as_ref().is_none_or(|c| c.summary.is_none())
        }
        _ => true,
    };
    while unfinished(s) {
        assert!(
            std::time::Instant::now() < deadline,
            "the contents search finished"
        );
        match rx.try_recv() {
            Ok(event) => {
                handle_app_event(s, event);
            }
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// A file over 1 MiB is not searched (nor read): the header says so next
/// to the count, so "0 results" does not claim the text is nowhere.
#[test]
fn hash_text_says_how_many_files_were_too_big_to_search() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let huge: String = (0..40_000)
        .map(|i| format!("def func_{i}():\n    return {i}\n"))
        .collect();
    assert!(huge.len() > 1 << 20);
    std::fs::write(root.join("huge.py"), huge).unwrap();
    std::fs::write(root.join("small.py"), "def other():\n    pass\n").unwrap();
    let mut s = search_contents(&root, &["huge.py", "small.py"], "#func_19999");
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(
        text.contains("0 results · 1 file over 1 MiB not searched"),
        "{text}"
    );
    insta::assert_snapshot!(text.lines().take(29).collect::<Vec<_>>().join("\n"));
}

/// The search pane in the variables and diagnostics scopes, with the hit
/// terms highlighted (styles in the snapshot).
#[test]
fn search_scopes_variables_and_diagnostics() {
    for (tabs, query, name) in [
        (1, "list", "search_scope_variables"),
        (3, "config", "search_scope_diagnostics"),
    ] {
        let mut s = with_content(state());
        press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
        for _ in 0..tabs {
            press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
        }
        for c in query.chars() {
            press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
        }
        let terminal = draw(&mut s, 100, 30);
        assert!(
            text_of(&terminal).contains("1 result"),
            "{name}: {}",
            text_of(&terminal)
        );
        let area = hello_tui::overlays::search::area(ratatui::layout::Rect::new(0, 0, 100, 30));
        insta::assert_debug_snapshot!(name, buffer_region(buffer_of(&terminal), area));
    }
}

#[test]
fn open_search_results_follow_what_arrives_without_retyping() {
    use hello_tui::app::AppEvent;
    use hello_tui::overlays::search::PaneResults;
    use hello_tui::workbench::kernel::{CellOrigin, KernelUpdate};
    let mut s = state();
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "zebra".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let results = |s: &AppState| match s.overlay() {
        Some(hello_tui::overlays::Overlay::Search(search)) => search.results.clone(),
        _ => panic!("search should be open"),
    };
    assert_eq!(results(&s), PaneResults::Hits(Vec::new()));
    handle_app_event(
        &mut s,
        AppEvent::Kernel(KernelUpdate::Queued {
            cell_id: 1,
            code: "zebra = 1".into(),
            origin: CellOrigin::User,
        }),
    );
    assert!(
        matches!(s.overlay(), Some(hello_tui::overlays::Overlay::Search(search)) if search.stale),
        "an event only marks the results stale (a burst costs one search)"
    );
    let text = text_of(&draw(&mut s, 100, 30));
    assert_eq!(
        results(&s).len(),
        1,
        "the new cell is found before the frame"
    );
    assert!(text.contains("1 result"), "{text}");
}

#[test]
fn help_scrolling_stops_at_its_last_line_and_comes_back_at_once() {
    let mut s = state();
    press(&mut s, KeyCode::F(1), KeyModifiers::NONE);
    for _ in 0..500 {
        press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    }
    draw(&mut s, 100, 30);
    let Some(hello_tui::overlays::Overlay::Help(help)) = s.overlay() else {
        panic!("help should be open")
    };
    let bottom = help.scroll;
    assert!(bottom > 10 && bottom < 500, "clamped to the text: {bottom}");
    press(&mut s, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(
        s.overlay(),
        Some(&hello_tui::overlays::Overlay::Help(
            hello_tui::overlays::help::Help { scroll: bottom - 1 }
        )),
        "one Up moves up at once"
    );
}

#[test]
fn every_prompt_moves_its_cursor_like_the_composer() {
    let mut s = state();
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "chek auth".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    // Back over " auth" and the "k", fix the typo, then paste at the end.
    for _ in 0..6 {
        press(&mut s, KeyCode::Left, KeyModifiers::NONE);
    }
    press(&mut s, KeyCode::Char('c'), KeyModifiers::NONE);
    press(&mut s, KeyCode::End, KeyModifiers::NONE);
    handle_terminal_event(&mut s, Event::Paste("Token\nsecond line".into()));
    let Some(hello_tui::overlays::Overlay::Search(search)) = s.overlay() else {
        panic!("search should be open")
    };
    assert_eq!(search.query.text(), "check authToken");
    press(&mut s, KeyCode::Char('w'), KeyModifiers::CONTROL);
    let Some(hello_tui::overlays::Overlay::Search(search)) = s.overlay() else {
        panic!("search should be open")
    };
    assert_eq!(search.query.text(), "check ", "Ctrl+W deletes a word");
}

#[test]
fn a_page_up_moves_by_the_rows_the_history_shows_keeping_one() {
    let mut s = state();
    for i in 0..60 {
        s.workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::User, format!("message {i}")));
    }
    // A six-line draft makes the history shorter than the pane.
    for i in 0..5 {
        s.conversation.composer.insert_str(format!("draft {i}"));
        s.conversation.composer.insert_newline();
    }
    let rows_of = |s: &AppState, terminal: &Terminal<TestBackend>| -> Vec<String> {
        let pane = s.layout().conversation.expect("the conversation is shown");
        let area = s.conversation.history_area(s.workbench.pins().len(), pane);
        let buffer = buffer_of(terminal);
        (area.top()..area.bottom())
            .map(|y| {
                (area.left()..area.right())
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
            })
            .collect()
    };
    let terminal = draw(&mut s, 80, 24);
    let before = rows_of(&s, &terminal);
    press(&mut s, KeyCode::PageUp, KeyModifiers::NONE);
    let terminal = draw(&mut s, 80, 24);
    let after = rows_of(&s, &terminal);
    assert_eq!(
        after.last(),
        before.first(),
        "the old top row is the new bottom row: nothing skipped\nbefore {before:?}\nafter {after:?}"
    );
}

#[test]
fn a_reader_scrolled_up_keeps_their_place_while_the_agent_streams_and_cells_queue() {
    use hello_tui::agent::turn::TurnEvent;
    use hello_tui::app::AppEvent;
    use hello_tui::workbench::agent::AgentUpdate;
    use hello_tui::workbench::kernel::{CellOrigin, KernelUpdate};
    let mut s = state();
    for i in 0..60 {
        s.workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::User, format!("message {i}")));
    }
    draw(&mut s, 80, 24);
    press(&mut s, KeyCode::PageUp, KeyModifiers::NONE);
    press(&mut s, KeyCode::PageUp, KeyModifiers::NONE);
    let reading = text_of(&draw(&mut s, 80, 24));
    let place = s.conversation.place.scroll;
    assert!(matches!(place, HistoryScroll::Anchored { .. }));
    for delta in ["streamed ", "text"] {
        handle_app_event(
            &mut s,
            AppEvent::Agent(AgentUpdate::Turn(TurnEvent::TextDelta(delta.into()))),
        );
    }
    handle_app_event(
        &mut s,
        AppEvent::Kernel(KernelUpdate::Queued {
            cell_id: 9,
            code: "x = 1".into(),
            origin: CellOrigin::Agent,
        }),
    );
    // Only the title's count changes ("62 messages").
    let rows = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    let now = text_of(&draw(&mut s, 80, 24));
    assert_eq!(rows(&now), rows(&reading), "the view did not move");
    assert_eq!(s.conversation.place.scroll, place);
    press(&mut s, KeyCode::End, KeyModifiers::CONTROL);
    let bottom = text_of(&draw(&mut s, 80, 24));
    assert!(
        bottom.contains("x = 1"),
        "Ctrl+End shows the newest:\n{bottom}"
    );
}

/// Issue 17: a cell that changed a file shows, under its output, the file
/// with its counts and the diff: added lines in the info colour, removed
/// in the error colour (styles in the snapshot). A long diff is cut until
/// Ctrl+O, like long output.
#[test]
fn a_cell_shows_the_files_it_changed_as_diffs() {
    use hello_tui::app::AppEvent;
    use hello_tui::kernel::caps::{FsWritten, Prior};
    use hello_tui::workbench::kernel::{CellOrigin, KernelUpdate};
    let mut s = state();
    handle_app_event(
        &mut s,
        AppEvent::Kernel(KernelUpdate::Queued {
            cell_id: 1,
            code: "fs.edit('app.py', 'return 1', 'return 2')".into(),
            origin: CellOrigin::Agent,
        }),
    );
    let path = std::path::PathBuf::from("/work/demo/app.py");
    let written = |before: &str, after: &str| FsWritten {
        path: path.clone(),
        before: Prior::Bytes(before.as_bytes().to_vec()),
        after: after.as_bytes().to_vec(),
    };
    handle_app_event(
        &mut s,
        AppEvent::FsWritten(written(
            "def f():\n    return 1\n",
            "def f():\n    return 2\n",
        )),
    );
    // A second write in the same cell: still one diff, from the first
    // write's starting point.
    handle_app_event(
        &mut s,
        AppEvent::FsWritten(written(
            "def f():\n    return 2\n",
            "def f():\n    return 3\n",
        )),
    );
    let terminal = draw(&mut s, 80, 16);
    let text = text_of(&terminal);
    assert!(text.contains("✎ app.py  +1 −1"), "{text}");
    assert!(text.contains("+    return 3"), "{text}");
    assert!(
        !text.contains("+    return 2"),
        "one diff, from the first write on: {text}"
    );
    let area = ratatui::layout::Rect::new(0, 0, 40, 12);
    insta::assert_debug_snapshot!(buffer_region(buffer_of(&terminal), area));

    let long_after: String = (0..30).map(|i| format!("line {i}\n")).collect();
    handle_app_event(
        &mut s,
        AppEvent::FsWritten(FsWritten {
            path: std::path::PathBuf::from("/work/demo/long.txt"),
            before: Prior::Absent,
            after: long_after.into_bytes(),
        }),
    );
    let text = text_of(&draw(&mut s, 80, 40));
    assert!(text.contains("✎ long.txt  +30 −0"), "{text}");
    assert!(text.contains("… 23 more diff lines"), "{text}");
    press(&mut s, KeyCode::Char('o'), KeyModifiers::CONTROL);
    let text = text_of(&draw(&mut s, 80, 60));
    assert!(text.contains("+line 29"), "{text}");
}

/// Issue 17: a file a cell's command changed, whose earlier text is not
/// known (it was not open in the editor), is listed under the cell without
/// made-up counts or a diff, in the muted colour.
#[test]
fn a_change_with_an_unknown_earlier_text_says_so() {
    use hello_tui::app::AppEvent;
    use hello_tui::kernel::caps::{FsWritten, Prior};
    use hello_tui::workbench::kernel::{CellOrigin, KernelUpdate};
    let mut s = state();
    handle_app_event(
        &mut s,
        AppEvent::Kernel(KernelUpdate::Queued {
            cell_id: 1,
            code: "shell.run('make gen')".into(),
            origin: CellOrigin::Agent,
        }),
    );
    handle_app_event(
        &mut s,
        AppEvent::FsWritten(FsWritten {
            path: std::path::PathBuf::from("/work/demo/gen.txt"),
            before: Prior::Unrecorded,
            after: b"generated\n".to_vec(),
        }),
    );
    let terminal = draw(&mut s, 80, 16);
    let text = text_of(&terminal);
    assert!(
        text.contains("✎ gen.txt") && text.contains("changed; its earlier text is"),
        "{text}"
    );
    assert!(!text.contains("+generated"), "no made-up diff: {text}");
    let area = ratatui::layout::Rect::new(0, 0, 40, 8);
    insta::assert_debug_snapshot!(buffer_region(buffer_of(&terminal), area));
}

fn type_keys(s: &mut AppState, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// Issue 18: typing `/` opens the command palette over the composer, with
/// descriptions; it narrows as the name is typed, ↓ moves the selection
/// (highlighted), Tab completes the name for arguments, Esc closes it and
/// Enter runs the selected command.
#[test]
fn slash_opens_a_command_palette() {
    let mut s = state();
    *s.workbench.user_commands_mut() = None;
    type_keys(&mut s, "/");
    let terminal = draw(&mut s, 90, 24);
    let screen = text_of(&terminal);
    assert!(screen.contains("Commands · 15"), "{screen}");
    assert!(screen.contains("/model [NAME]"), "{screen}");
    press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    let terminal = draw(&mut s, 90, 24);
    insta::assert_debug_snapshot!(buffer_region(
        buffer_of(&terminal),
        ratatui::layout::Rect::new(0, 8, 90, 16)
    ));

    type_keys(&mut s, "ap");
    press(&mut s, KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(s.conversation.composer.lines(), ["/approval "]);
    assert!(s.conversation.palette.is_none(), "arguments now: closed");

    let mut s = state();
    *s.workbench.user_commands_mut() = None;
    type_keys(&mut s, "/di");
    press(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    assert!(s.conversation.palette.is_none());
    assert_eq!(s.conversation.composer.lines(), ["/di"], "the text stays");
    press(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
    assert!(
        s.conversation.palette.is_some(),
        "a new text opens it again"
    );
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.starts_with("No changes"), "/diff ran: {said}");
}

/// Issue 29: `@` at a word's start lists the workspace's files over the
/// composer, matched characters highlighted and the selection shown; ↓
/// moves it, Enter inserts the path (and sends nothing), Esc closes the
/// list and keeps the text, and a new word opens it again.
#[test]
fn at_lists_the_workspaces_files_and_enter_inserts_one() {
    let mut s = state();
    s.workbench
        .file_index_mut()
        .apply(&hello_tui::workspace::IndexUpdate::Batch(vec![
            "README.md".into(),
            "src/greeting.py".into(),
            "src/grid.py".into(),
        ]));
    type_keys(&mut s, "see @gr");
    press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    let terminal = draw(&mut s, 90, 24);
    let screen = text_of(&terminal);
    assert!(screen.contains("Files · 2"), "{screen}");
    assert!(!screen.contains("README"), "{screen}");
    insta::assert_debug_snapshot!(buffer_region(
        buffer_of(&terminal),
        ratatui::layout::Rect::new(0, 14, 60, 10)
    ));
    let chosen = s.conversation.mentions.list.as_ref().unwrap().matches[1]
        .path
        .clone();
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(s.conversation.composer.lines(), [format!("see @{chosen} ")]);
    assert!(s.workbench.transcript().is_empty(), "Enter sent nothing");
    assert!(s.conversation.mentions.list.is_none());

    type_keys(&mut s, "@READ");
    press(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    assert!(s.conversation.mentions.list.is_none());
    assert_eq!(
        s.conversation.composer.lines(),
        [format!("see @{chosen} @READ")],
        "the text stays"
    );
    press(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
    assert!(
        s.conversation.mentions.list.is_some(),
        "a new word opens it"
    );
}

/// Issue 18: a Markdown template in `.hello-tui/commands/` is a command:
/// listed with its description, and sent as a prompt with `$ARGUMENTS`
/// filled in, once the workspace is trusted (a repository's templates are
/// what it configures, issue 25). An unknown command is an error listing
/// the real ones.
#[test]
fn custom_commands_are_prompt_templates() {
    let dir = tempfile::tempdir().unwrap();
    let commands = dir.path().join(".hello-tui/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file for bugs\n---\nReview $ARGUMENTS for bugs.\n",
    )
    .unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    *s.workbench.user_commands_mut() = None;
    type_keys(&mut s, "/rev");
    let untrusted = text_of(&draw(&mut s, 160, 24));
    assert!(!untrusted.contains("/review"), "{untrusted}");
    for _ in 0.."/rev".len() {
        press(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
    }
    s.workbench.trust_mut().trust = hello_tui::trust::Trust::Trusted(hello_tui::trust::Why::Flag);
    type_keys(&mut s, "/rev");
    let listed = text_of(&draw(&mut s, 160, 24));
    assert!(
        listed.contains("/review [ARGUMENTS]  Review a file for bugs · project"),
        "{listed}"
    );
    type_keys(&mut s, "iew src/auth.ts");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    assert!(
        s.workbench
            .transcript()
            .iter()
            .any(|m| m.role == Speaker::User && m.text == "Review src/auth.ts for bugs."),
        "{:?}",
        s.workbench.transcript()
    );

    type_keys(&mut s, "/nope now");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.starts_with("Unknown command /nope."), "{said}");
    assert!(
        said.contains("/help, /new [kernel], /model [NAME]")
            && said.contains("/review [ARGUMENTS]"),
        "{said}"
    );
}

/// Issue 18: ↑/↓ in the composer recall what was sent before, as a shell
/// does: ↑ on the first line goes back, ↓ on the last comes forward and
/// then back to what was being typed; the history is kept per workspace
/// across restarts.
#[test]
fn up_and_down_recall_earlier_prompts_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    for prompt in ["%py print(1)", "/diff"] {
        type_keys(&mut s, prompt);
        press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    }
    type_keys(&mut s, "draft");
    press(&mut s, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(s.conversation.composer.lines(), ["/diff"]);
    press(&mut s, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(s.conversation.composer.lines(), ["%py print(1)"]);
    press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    press(&mut s, KeyCode::Down, KeyModifiers::NONE);
    assert_eq!(
        s.conversation.composer.lines(),
        ["draft"],
        "the draft is back"
    );

    // Within a multi-line text ↑ moves the cursor up first.
    press(&mut s, KeyCode::Enter, KeyModifiers::ALT);
    type_keys(&mut s, "second line");
    press(&mut s, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(s.conversation.composer.lines(), ["draft", "second line"]);

    let mut again = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    press(&mut again, KeyCode::Up, KeyModifiers::NONE);
    assert_eq!(again.conversation.composer.lines(), ["/diff"]);
}

/// Issue 18: `/sessions` lists the workspace's sessions, as
/// `hello-tui sessions` does, with how to resume one.
#[test]
fn slash_sessions_lists_the_workspaces_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let session = hello_tui::session::SessionWriter::create(
        &root,
        "test-model",
        hello_tui::session::SessionOrigin::Tui,
    )
    .unwrap();
    let mut s = AppState::new(root.clone(), Settings::defaults());
    *s.workbench.user_commands_mut() = None;
    type_keys(&mut s, "/sessions");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    let said = &s.workbench.transcript().last().unwrap().text;
    assert!(said.contains(session.id()), "{said}");
    assert!(said.contains("hello-tui --resume ID"), "{said}");
}

/// Issue 18: Alt+↑ selects a message (its header highlighted, kept while
/// the keys are about it), Alt+C copies it with OSC 52 and into the app's
/// clipboard; with nothing selected, `/copy` copies the last answer. Any
/// other key ends the selection.
#[test]
fn a_message_is_selected_and_copied_with_keys() {
    let mut s = with_content(state());
    let key = |code, modifiers| Event::Key(KeyEvent::new(code, modifiers));
    handle_terminal_event(&mut s, key(KeyCode::Up, KeyModifiers::ALT));
    handle_terminal_event(&mut s, key(KeyCode::Up, KeyModifiers::ALT));
    let selected = s.conversation.flash.expect("a message is selected");
    let expected = s.workbench.transcript()[selected].text.clone();
    let terminal = draw(&mut s, 80, 24);
    // The highlighted header, styles included.
    insta::assert_debug_snapshot!(buffer_region(
        buffer_of(&terminal),
        ratatui::layout::Rect::new(0, 0, 80, 14)
    ));

    let command = handle_terminal_event(&mut s, key(KeyCode::Char('c'), KeyModifiers::ALT));
    assert_eq!(command, Command::Clipboard(expected.clone()));
    assert_eq!(s.workbench.editors().clipboard, expected);
    assert_eq!(
        s.conversation.flash,
        Some(selected),
        "copying keeps the selection"
    );

    type_keys(&mut s, "x");
    assert_eq!(s.conversation.flash, None, "typing ends the selection");
    press(&mut s, KeyCode::Backspace, KeyModifiers::NONE);
    type_keys(&mut s, "/copy");
    let command = handle_terminal_event(&mut s, key(KeyCode::Enter, KeyModifiers::NONE));
    let last_answer = s
        .workbench
        .transcript()
        .iter()
        .rev()
        .find(|m| m.role == Speaker::Assistant)
        .map(|m| m.text.clone())
        .expect("the fixture has an answer");
    assert_eq!(command, Command::Clipboard(last_answer));
}

/// Issue 18: `/new` empties the transcript and the model's conversation
/// (the store the kernel's `context` reads), keeps the open files, and
/// says how to get the old session back.
#[test]
fn slash_new_starts_a_new_conversation() {
    let mut s = with_content(state());
    s.workbench
        .agent()
        .context
        .push(hello_tui::context::Message::user("old question"));
    let kernel_view = s.workbench.agent().context.clone();
    type_keys(&mut s, "/new");
    press(&mut s, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(kernel_view.len(), 0);
    assert_eq!(s.workbench.transcript().len(), 1, "only the notice is left");
    let screen = text_of(&draw(&mut s, 100, 30));
    assert!(screen.contains("New conversation."), "{screen}");
    assert!(
        !screen.contains("checkAuth"),
        "the old messages are gone: {screen}"
    );
}

/// Overlays stack: a question that appears on its own (here `/trust`'s,
/// as at start) goes over the search pane the user had open, and once
/// answered the search is back as it was, query and results.
#[test]
fn a_question_over_the_search_gives_it_back_once_answered() {
    let mut s = with_content(state());
    press(&mut s, KeyCode::Char('f'), KeyModifiers::CONTROL);
    for c in "checkauth".chars() {
        press(&mut s, KeyCode::Char(c), KeyModifiers::NONE);
    }
    assert!(text_of(&draw(&mut s, 100, 30)).contains("2 results"));
    hello_tui::app::trust::command(&mut s);
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(text.contains("Trust"), "{text}");
    press(&mut s, KeyCode::Char('n'), KeyModifiers::NONE);
    let text = text_of(&draw(&mut s, 100, 30));
    assert!(
        matches!(s.overlay(), Some(hello_tui::overlays::Overlay::Search(_))),
        "{text}"
    );
    assert!(
        text.contains("2 results") && text.contains("checkauth"),
        "{text}"
    );
    press(&mut s, KeyCode::Esc, KeyModifiers::NONE);
    assert!(s.overlay().is_none());
}

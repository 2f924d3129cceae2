//! The issue's "done when" flow with the real binary in a tmux pane: open a
//! project, find a file with Ctrl+P, edit it (dirty shows), another program
//! rewrites the file (the conflict shows and no keystroke is lost), save,
//! and the file on disk is exactly what the screen shows.

#[path = "support/tmux.rs"]
mod tmux;
use tmux::Tmux;

const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

/// A shell command starting the binary with `args` from `project`, its
/// recovery files and log in `state` and no user configuration.
fn command_in(project: &std::path::Path, state: &std::path::Path, args: &str) -> String {
    format!(
        "cd {dir} && HELLO_TUI_RECOVERY_DIR={rec} HELLO_TUI_LOG_FILE={log} HELLO_TUI_CONFIG=/dev/null {BIN} {args}",
        rec = state.join("recovery").display(),
        log = state.join("log.txt").display(),
        dir = project.display(),
    )
}

#[test]
fn open_with_ctrl_p_edit_external_rewrite_conflict_save() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("src")).unwrap();
    let file = project.path().join("src/greeting.py");
    std::fs::write(&file, "def greet():\n    return 'hi'\n").unwrap();
    let command = format!(
        "HELLO_TUI_RECOVERY_DIR={rec} HELLO_TUI_LOG_FILE={log} HELLO_TUI_CONFIG=/dev/null {BIN} {dir}",
        rec = state.path().join("recovery").display(),
        log = state.path().join("log.txt").display(),
        dir = project.path().display(),
    );
    let tmux = Tmux::start("editor", &command, 120, 36);
    tmux.wait_for("Conversation");

    tmux.keys(&["C-p"]);
    tmux.keys(&["-l", "greet"]);
    tmux.wait_for("src/greeting.py");
    tmux.keys(&["Enter"]);
    tmux.wait_for("1 def greet():");

    tmux.keys(&["-l", "# mine"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("src/greeting.py ●");

    // Another program saves the file the atomic way (temp + rename).
    let temp = project.path().join("src/.greeting.py.tmp");
    std::fs::write(&temp, "def greet():\n    return 'theirs'\n").unwrap();
    std::fs::rename(&temp, &file).unwrap();
    tmux.wait_for("(changed on disk)");
    // Typing right after the conflict is not swallowed by anything.
    tmux.keys(&["-l", "!"]);
    tmux.wait_for("# mine");
    tmux.wait_for("!def greet():");

    tmux.keys(&["C-s"]);
    tmux.wait_for("keep mine");
    tmux.keys(&["k"]);
    tmux.keys(&["C-s"]);
    // Saved: the dirty marker leaves the title.
    let screen = tmux.wait_for("2 src/greeting.py ━━");
    assert!(!screen.contains("(changed on disk)"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# mine\n!def greet():\n    return 'hi'\n",
        "the file on disk is what the screen shows:\n{screen}"
    );
    tmux.keys(&["C-q"]);
}

/// `hello-tui app.py:2:1`: the file named on the command line opens before
/// the language servers start, and still gets one — ruff's diagnostic for
/// it reaches the pane (issue 14, item 4: no server was ever started for
/// it, only for files opened later through Ctrl+P).
#[test]
fn a_file_named_on_the_command_line_gets_its_language_server() {
    assert!(
        hello_tui::diagnostics::which("ruff").is_some(),
        "ruff must be installed (pip install ruff) to run this test; CI installs it"
    );
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join("app.py"),
        "import os\n\n\ndef f():\n    return 1\n",
    )
    .unwrap();
    let command = command_in(project.path(), state.path(), "app.py:2:1");
    let tmux = Tmux::start("cli-file-lsp", &command, 120, 36);
    tmux.wait_for("app.py 2:1");
    let screen = tmux.wait_for("`os` imported but unused");
    assert!(screen.contains("Diagnostics ▲ 1"), "{screen}");
    tmux.keys(&["C-q"]);
}

/// `hello-tui src/auth/token.ts:2` from a project root with `package.json`
/// and no `.git`: the working directory is the workspace, so the file view
/// names `src/auth/token.ts` (issue 14, item 5: `src/auth` became the
/// workspace and the title said `token.ts`).
#[test]
fn a_file_argument_outside_git_keeps_the_working_directory_as_workspace() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("package.json"), "{}\n").unwrap();
    std::fs::write(project.path().join("tsconfig.json"), "{}\n").unwrap();
    std::fs::create_dir_all(project.path().join("src/auth")).unwrap();
    std::fs::write(
        project.path().join("src/auth/token.ts"),
        "export const a = 1;\nexport const b = 2;\n",
    )
    .unwrap();
    let command = command_in(project.path(), state.path(), "src/auth/token.ts:2");
    let tmux = Tmux::start("cli-file-root", &command, 120, 36);
    let screen = tmux.wait_for("src/auth/token.ts 2:1");
    assert!(screen.contains("2 src/auth/token.ts"), "{screen}");
    tmux.keys(&["C-q"]);
}

/// Starts the workbench in `root` with `args`, does `before` in it, quits
/// with Ctrl+Q and returns the normal screen the shell is back on.
fn quit_after(
    root: &std::path::Path,
    state: &std::path::Path,
    name: &str,
    args: &str,
    before: impl FnOnce(&Tmux),
) -> String {
    let command = format!("{}; echo EXITED; sleep 60", command_in(root, state, args));
    let tmux = Tmux::start(name, &command, 100, 30);
    tmux.wait_for("Ctrl+Q quit");
    before(&tmux);
    tmux.keys(&["C-q"]);
    let screen = tmux.wait_for("EXITED");
    assert_eq!(tmux.flag("alternate_on"), "0", "{screen}");
    screen
}

/// Quitting leaves one line in the terminal, after the alternate screen:
/// the session id and how to resume it; with no session, nothing (issue 14,
/// item 14).
#[test]
fn quitting_prints_the_session_and_how_to_resume_it() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let run = |name: &str, args: &str| quit_after(&root, state.path(), name, args, |_| {});
    let screen = run("exit-none", "");
    assert!(
        !screen.contains("--resume"),
        "no session, no line:\n{screen}"
    );

    let writer = hello_tui::session::SessionWriter::create(
        &root,
        "m",
        hello_tui::session::SessionOrigin::Tui,
    )
    .unwrap();
    let id = writer.id().to_owned();
    drop(writer);
    let screen = run("exit-session", &format!("--resume {id}"));
    let lines: Vec<&str> = screen.lines().filter(|l| l.contains(&id)).collect();
    assert_eq!(
        lines,
        vec![format!("Session {id} saved. Resume it with: hello-tui --resume {id}").as_str()],
        "{screen}"
    );
}

/// Issue 29: the alternate screen takes the session with it, so quitting
/// prints the transcript to the normal screen (a cell's code, the start of
/// its output), where the scrollback keeps it; `[ui] on_quit = "none"`
/// prints nothing, and a session where nothing was asked prints nothing.
#[test]
fn quitting_leaves_the_transcript_in_the_scrollback() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let quiet = state.path().join("quiet.toml");
    std::fs::write(&quiet, "[ui]\non_quit = \"none\"\n").unwrap();
    let run = |name: &str, args: &str, cell: bool| {
        quit_after(&root, state.path(), name, args, |tmux| {
            if cell {
                tmux.keys(&["-l", "%py print('from the ' + 'cell'); print('two')"]);
                tmux.keys(&["Enter"]);
                tmux.wait_for("from the cell");
            }
        })
    };
    let screen = run("quit-transcript", "--approval auto", true);
    for line in [
        "── hello-tui ──",
        "│ print('from the ' + 'cell'); print('two')",
        "⎿ from the cell",
        "    two",
    ] {
        assert!(screen.contains(line), "{line:?} is not in:\n{screen}");
    }
    assert!(screen.contains("▸ cell ✓"), "{screen}");

    let quiet_args = format!("--approval auto --config {}", quiet.display());
    let screen = run("quit-none", &quiet_args, true);
    assert!(!screen.contains("from the cell"), "{screen}");
    assert!(!screen.contains("hello-tui ──"), "{screen}");

    let screen = run("quit-nothing-done", "", false);
    assert!(!screen.contains("hello-tui ──"), "{screen}");
}

/// Issue 25, routes 2 and 5: a cell in the workbench (a `%py` cell here;
/// a model's cell runs in the same kernel) pushes keys into the terminal
/// the workbench runs in: Ctrl+Z, a command and `fg` for the user's shell,
/// `/approval full` and Enter for the composer. None of it arrives: the
/// shell runs nothing, the composer stays empty, the mode stays `ask`.
#[test]
fn a_cell_cannot_type_into_the_workbenchs_terminal() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    // Outside the workspace, where the shell (not the sandbox) would write.
    let marker = state.path().join("typed-by-the-cell");
    // The keys are built from numbers, so the text is not on screen as
    // typed in the cell itself.
    let keys: Vec<String> = format!("\x1atouch {}\nfg\n/approval full\r", marker.display())
        .bytes()
        .map(|b| b.to_string())
        .collect();
    let cell = format!(
        "%py import fcntl, os, termios; keys = bytes([{}]); tried = []\n",
        keys.join(",")
    );
    let attack = "exec('def t(get):\\n try:\\n  fd = get()\\n  [fcntl.ioctl(fd, termios.TIOCSTI, bytes([b])) for b in keys]; tried.append(\"TY\" + \"PED\")\\n except OSError as e:\\n  tried.append(e.errno)\\nfor get in [lambda: 0, lambda: 1, lambda: 2, lambda: os.open(\"/dev/tty\", os.O_RDWR)]: t(get)'); print('res' + 'ult', tried)";
    let command = format!(
        "{}; echo EXITED; sh",
        command_in(&root, state.path(), "--approval ask")
    );
    let tmux = Tmux::start("tiocsti", &command, 120, 36);
    tmux.wait_for("Ctrl+Q quit");
    tmux.keys(&["-l", cell.trim_end()]);
    tmux.keys(&["M-Enter"]);
    tmux.keys(&["-l", attack]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("result");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let screen = format!("{screen}\n{}", tmux.screen());
    assert!(!screen.contains("TYPED"), "{screen}");
    assert!(
        !screen.contains("EXITED"),
        "the workbench was suspended:\n{screen}"
    );
    assert!(!screen.contains("/approval full"), "{screen}");
    assert!(
        !marker.exists(),
        "the shell ran what the cell typed:\n{screen}"
    );
    tmux.keys(&["C-q"]);
}

/// A question that appears while the user types (a prompt typed ahead
/// while a cell runs) takes none of the keys of that burst of typing:
/// the `y` and `a` of the sentence neither run the command nor approve
/// everything (an attack review found both). After a pause, `y` answers.
#[test]
fn typing_through_an_approval_does_not_answer_it() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let made = root.join("made-by-y");
    let tmux = Tmux::start(
        "typing",
        &command_in(&root, state.path(), "--approval ask"),
        120,
        36,
    );
    tmux.wait_for("Ctrl+Q quit");
    // Not a literal command: it asks.
    tmux.keys(&[
        "-l",
        "%py import time; time.sleep(1.5); shell.run('touch ' + 'made-by-y')",
    ]);
    tmux.keys(&["Enter"]);
    // A sentence typed on across the question's appearance: three keys at
    // a time every 100 ms, well inside one burst (0.4 s) even when a
    // loaded machine is slow to pass them on.
    // The typing goes on for a while after the question was first seen.
    let sentence: Vec<char> = "yay analyze all of it yes and again, "
        .repeat(8)
        .chars()
        .collect();
    let mut seen_at = None;
    for (sent, chunk) in sentence.chunks(3).enumerate() {
        let chunk: String = chunk.iter().collect();
        tmux.run(&["send-keys", "-t", "t", "-l", &chunk]);
        std::thread::sleep(std::time::Duration::from_millis(80));
        if seen_at.is_none() && tmux.screen().contains("touch made-by-y") {
            seen_at = Some(sent);
        }
        if seen_at.is_some_and(|at| sent > at + 10) {
            break;
        }
    }
    assert!(
        seen_at.is_some(),
        "the question came while typing:\n{}",
        tmux.screen()
    );
    let screen = tmux.screen();
    assert!(
        screen.contains("touch made-by-y"),
        "the question is still up:\n{screen}"
    );
    assert!(!made.exists(), "a typed y ran the command:\n{screen}");
    std::thread::sleep(std::time::Duration::from_millis(700));
    tmux.keys(&["y"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !made.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "y after a pause did not approve:\n{}",
            tmux.screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    tmux.keys(&["C-q"]);
}

/// Invisible characters riding on a cluster (a joiner after `<`, an emoji
/// presentation selector after `❤`, the joiners of an emoji family, a
/// bidi override, tags) and a sideways scroll: what tmux shows after each
/// key is what a full redraw (Ctrl+L) shows, and every row keeps its right
/// border. Before, the terminal and the layout disagreed on such a
/// cluster's width and rows lost their border until Ctrl+L (issue 27.19).
#[test]
fn invisible_characters_keep_the_terminal_and_the_layout_in_step() {
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let digits: String = (0..40).map(|i| char::from(b'0' + i % 10)).collect();
    let tail: String = (0..150).map(|i| char::from(b'a' + i % 26)).collect();
    let cases = [
        "<\u{200d}-",
        "\u{2764}\u{fe0f}-",
        "x\u{fe0f}\u{200c}-",
        "👨\u{200d}👩\u{200d}👧-",
        "\u{202e}rlo\u{202c}-",
        "\u{1f3f4}\u{e0067}\u{e0062}-",
        "\u{ad}\u{115f}\u{3164}-",
    ];
    let text: String = cases
        .iter()
        .map(|case| format!("{digits}{}{tail}\n", case.repeat(3)))
        .collect();
    std::fs::write(project.path().join("hidden.txt"), text).unwrap();
    let tmux = Tmux::start(
        "hidden",
        &command_in(project.path(), state.path(), "hidden.txt"),
        100,
        20,
    );
    tmux.wait_for("hidden.txt");
    tmux.keys(&["M-2"]);
    let check = |after: &str| {
        let drawn = tmux.screen();
        tmux.keys(&["C-l"]);
        let redrawn = tmux.screen();
        assert_eq!(
            drawn, redrawn,
            "after {after}: the drawn screen is the redrawn one"
        );
        for row in drawn.lines().skip(2).take(cases.len()) {
            assert!(
                row.ends_with('┃'),
                "after {after}, a row lost its border:\n{drawn}"
            );
        }
    };
    for line in 0..cases.len() {
        tmux.keys(&["End"]);
        check(&format!("End on line {}", line + 1));
        tmux.keys(&["Home"]);
        tmux.keys(&["Down"]);
    }
    for _ in 0..cases.len() {
        tmux.keys(&["Up"]);
        tmux.keys(&["End"]);
        tmux.keys(&["Left", "Left", "Left"]);
    }
    check("moving back up");
    tmux.keys(&["C-q"]);
}

/// Issue 29: `--resume` brings back the kernel variables kept with the
/// session (here one kept as a pickle and one as a cell's function): the
/// first cell finds them, its output says so, and the conversation says
/// what came back.
#[test]
fn a_resumed_session_brings_its_kernel_variables_back() {
    let project = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(project.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let writer = hello_tui::session::SessionWriter::create(
        &root,
        "m",
        hello_tui::session::SessionOrigin::Tui,
    )
    .unwrap();
    let id = writer.id().to_owned();
    drop(writer);
    let place = hello_tui::session::VarsPlace {
        workspace: root.clone(),
        session: id.clone(),
    };
    // pickle.dumps(41, protocol=5)
    place.write("x.pickle", b"\x80\x05K)\x2e").unwrap();
    place
        .write("add.py", b"def add(a):\n    return a + x\n")
        .unwrap();
    let command = command_in(
        &root,
        state.path(),
        &format!("--resume {id} --approval auto"),
    );
    let tmux = Tmux::start("kept-vars", &command, 120, 36);
    tmux.wait_for("Ctrl+Q quit");
    let screen = tmux.screen();
    assert!(
        screen.contains("come back when the first cell runs"),
        "{screen}"
    );
    tmux.keys(&["-l", "%py print('sum', add(1))"]);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("sum 42");
    assert!(
        screen.contains("Kernel variables: restored 2: add, x."),
        "{screen}"
    );
    tmux.keys(&["C-q"]);
}

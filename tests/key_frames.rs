//! Keys through the loop: each key goes through `update` and a frame is
//! drawn only when the key asked for one, as `tui::run` does; the test
//! checks what the user would see after every key. (A test that renders a
//! state cannot tell whether a key asked for its frame.)

#[path = "support/frames.rs"]
mod frames;

use crossterm::event::{KeyCode, KeyModifiers};
use frames::Loop;
use hello_tui::app::AppState;
use hello_tui::config::Settings;
use ratatui::layout::Rect;

const NONE: KeyModifiers = KeyModifiers::NONE;

fn state() -> AppState {
    AppState::new("/work/demo".into(), Settings::defaults())
}

/// The conversation pane's composer box (its border included): from its
/// titled top border to the pane's bottom.
fn composer_area(lp: &Loop) -> Rect {
    let layout = lp.state.layout();
    let pane = layout.conversation.expect("the conversation is shown");
    let buffer = lp.terminal.backend().buffer();
    let top = (pane.top()..pane.bottom())
        .rev()
        .find(|&y| {
            let row: String = (pane.left()..pane.right())
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect();
            row.contains("Message")
        })
        .expect("the composer's title");
    Rect::new(pane.x, top, pane.width, pane.bottom() - top)
}

/// The composer's cursor: its column from the composer's first text
/// column, and its row in the composer.
fn composer_cursor(lp: &Loop) -> (u16, u16) {
    let area = composer_area(lp);
    let cells = lp.cursor_cells(area);
    assert_eq!(
        cells.len(),
        1,
        "one cursor in the composer:\n{}",
        lp.screen()
    );
    let (x, y) = cells[0];
    (x - area.x - 1, y - area.y - 1)
}

/// Alt+1, `abc def ghi`, then each cursor key: every one is drawn where
/// the user sees it, and typing lands where the drawn cursor is.
#[test]
fn every_cursor_key_in_the_composer_is_drawn() {
    let mut lp = Loop::new(state(), 120, 40);
    lp.key(KeyCode::Char('1'), KeyModifiers::ALT);
    lp.type_text("abc def ghi");
    assert_eq!(composer_cursor(&lp), (11, 0));
    let steps: &[(KeyCode, KeyModifiers, u16)] = &[
        (KeyCode::Home, NONE, 0),
        (KeyCode::Right, NONE, 1),
        (KeyCode::End, NONE, 11),
        (KeyCode::Left, NONE, 10),
        (KeyCode::Left, KeyModifiers::CONTROL, 8),
        (KeyCode::Char('a'), KeyModifiers::CONTROL, 0),
        (KeyCode::Char('e'), KeyModifiers::CONTROL, 11),
        (KeyCode::Char('b'), KeyModifiers::ALT, 8),
        (KeyCode::Char('f'), KeyModifiers::ALT, 11),
    ];
    for &(code, modifiers, column) in steps {
        let drew = lp.key(code, modifiers);
        assert!(drew, "{modifiers:?}+{code:?} asked for no frame");
        assert_eq!(
            composer_cursor(&lp),
            (column, 0),
            "after {modifiers:?}+{code:?}:\n{}",
            lp.screen()
        );
    }
    // Seventy ← at the start: drawn at column 0, and nothing else changes.
    lp.key(KeyCode::Home, NONE);
    for _ in 0..70 {
        lp.key(KeyCode::Left, NONE);
    }
    assert_eq!(composer_cursor(&lp), (0, 0));
    lp.key(KeyCode::Right, NONE);
    lp.type_text("X");
    assert!(lp.screen().contains("aXbc def ghi"), "{}", lp.screen());
    assert_eq!(composer_cursor(&lp), (2, 0));
}

/// Each key asks for a frame, and the frame shows something new (the
/// cursor moved): what the user would see after it.
fn each_key_is_drawn(lp: &mut Loop, keys: &[(KeyCode, KeyModifiers)], what: &str) {
    for &(code, modifiers) in keys {
        let before = lp.terminal.backend().buffer().clone();
        let drew = lp.key(code, modifiers);
        assert!(drew, "{what}: {modifiers:?}+{code:?} asked for no frame");
        assert_ne!(
            &before,
            lp.terminal.backend().buffer(),
            "{what}: {modifiers:?}+{code:?} changed nothing on screen"
        );
    }
}

/// The cursor keys of a one-line input, from the end of `abc def`.
const LINE_KEYS: &[(KeyCode, KeyModifiers)] = &[
    (KeyCode::Home, NONE),
    (KeyCode::Right, NONE),
    (KeyCode::End, NONE),
    (KeyCode::Left, NONE),
    (KeyCode::Left, KeyModifiers::CONTROL),
    (KeyCode::Right, KeyModifiers::CONTROL),
];

#[test]
fn the_file_views_cursor_keys_are_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=200)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    std::fs::write(dir.path().join("a.txt"), text).unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &dir.path().join("a.txt"), None);
    let mut lp = Loop::new(s, 120, 40);
    lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
    each_key_is_drawn(
        &mut lp,
        &[
            (KeyCode::Down, NONE),
            (KeyCode::Right, NONE),
            (KeyCode::End, NONE),
            (KeyCode::Left, NONE),
            (KeyCode::Home, NONE),
            (KeyCode::Up, NONE),
            (KeyCode::PageDown, NONE),
            (KeyCode::PageUp, NONE),
            (KeyCode::End, KeyModifiers::CONTROL),
            (KeyCode::Home, KeyModifiers::CONTROL),
            (KeyCode::Right, KeyModifiers::SHIFT),
            (KeyCode::Right, KeyModifiers::CONTROL),
        ],
        "file view",
    );
}

#[test]
fn the_one_line_inputs_cursor_keys_are_drawn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    let workspace = dir.path().to_path_buf();
    let open = |keys: &[(KeyCode, KeyModifiers)]| {
        let mut s = AppState::new(workspace.clone(), Settings::defaults());
        hello_tui::app::editors::open(&mut s, &workspace.join("a.txt"), None);
        let mut lp = Loop::new(s, 120, 40);
        lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
        for &(code, modifiers) in keys {
            lp.key(code, modifiers);
        }
        lp.type_text("abc def");
        lp
    };
    let inputs: &[(&str, &[(KeyCode, KeyModifiers)])] = &[
        (
            "file picker",
            &[(KeyCode::Char('p'), KeyModifiers::CONTROL)],
        ),
        ("go to line", &[(KeyCode::Char('g'), KeyModifiers::CONTROL)]),
        (
            "search pane",
            &[(KeyCode::Char('f'), KeyModifiers::CONTROL)],
        ),
    ];
    for (what, opening) in inputs {
        let mut lp = open(opening);
        assert!(lp.state.overlay().is_some(), "{what} is open");
        each_key_is_drawn(&mut lp, LINE_KEYS, what);
    }
}

/// The composer's rows as drawn (inside its border), trimmed.
fn composer_text(lp: &Loop) -> Vec<String> {
    let area = composer_area(lp);
    let buffer = lp.terminal.backend().buffer();
    (area.top() + 1..area.bottom() - 1)
        .map(|y| {
            (area.left() + 1..area.right() - 1)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// A sentence longer than the composer is wider wraps at word boundaries
/// and grows the composer: every word stays on screen, and the cursor is
/// after the last one.
#[test]
fn a_long_prompt_wraps_and_every_word_is_seen() {
    let mut lp = Loop::new(state(), 80, 24);
    lp.key(KeyCode::Char('1'), KeyModifiers::ALT);
    let sentence = "please refactor the checkAuth function so that admins and owners both pass";
    lp.type_text(sentence);
    let rows = composer_text(&lp);
    assert!(rows.len() >= 2, "the composer grew: {rows:?}");
    assert_eq!(
        rows.join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        sentence,
        "{rows:?}"
    );
    for row in &rows {
        assert!(
            !row.starts_with(' '),
            "wrapped at a word boundary: {rows:?}"
        );
    }
    insta::assert_snapshot!("composer_wraps_80x24", lp.screen());
    // Home goes to the start of the line, which is on screen.
    assert!(lp.key(KeyCode::Home, NONE));
    assert_eq!(composer_cursor(&lp), (0, 0));
}

/// Twelve lines: the composer stops growing at eight rows and scrolls, the
/// cursor's line always in view.
#[test]
fn a_tall_prompt_scrolls_inside_the_composer() {
    let mut lp = Loop::new(state(), 120, 40);
    lp.key(KeyCode::Char('1'), KeyModifiers::ALT);
    for i in 1..=12 {
        lp.type_text(&format!("line {i}"));
        if i < 12 {
            lp.key(KeyCode::Enter, KeyModifiers::SHIFT);
        }
    }
    let rows = composer_text(&lp);
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert_eq!(rows.last().map(String::as_str), Some("line 12"), "{rows:?}");
    for _ in 0..11 {
        lp.key(KeyCode::Up, NONE);
    }
    assert_eq!(
        composer_text(&lp).first().map(String::as_str),
        Some("line 1")
    );
}

/// The conversation pane's width on screen.
fn conversation_width(lp: &Loop) -> u16 {
    lp.state.layout().conversation.map_or(0, |r| r.width)
}

/// With no file open the conversation takes the file view's room; Alt+Z
/// zooms the focused pane and back; Alt+= and Alt+- move the split; a
/// drag of the border moves it to the pointer. Each is drawn at once.
#[test]
fn the_layout_follows_the_work_and_the_keys() {
    let mut lp = Loop::new(state(), 120, 40);
    assert!(!lp.screen().contains("No file"), "{}", lp.screen());
    assert!(conversation_width(&lp) >= 78, "{}", lp.screen());
    insta::assert_snapshot!("no_file_open_120x40", lp.screen());

    assert!(lp.key(KeyCode::Char('z'), KeyModifiers::ALT));
    let zoomed = lp.screen();
    assert!(
        !zoomed.contains("Variables") && !zoomed.contains("Diagnostics"),
        "{zoomed}"
    );
    assert_eq!(conversation_width(&lp), 120);
    assert!(lp.key(KeyCode::Char('z'), KeyModifiers::ALT));
    assert!(lp.screen().contains("Variables"));

    let before = conversation_width(&lp);
    assert!(lp.key(KeyCode::Char('-'), KeyModifiers::ALT));
    assert_eq!(conversation_width(&lp), before - 6, "5% of 120 columns");
    assert!(lp.key(KeyCode::Char('='), KeyModifiers::ALT));
    assert_eq!(conversation_width(&lp), before);

    // Drag the border to column 60.
    let border = lp.state.layout().conversation.unwrap().right() - 1;
    let mouse = |kind, column| {
        crossterm::event::Event::Mouse(crossterm::event::MouseEvent {
            kind,
            column,
            row: 10,
            modifiers: NONE,
        })
    };
    use crossterm::event::{MouseButton, MouseEventKind};
    for event in [
        mouse(MouseEventKind::Down(MouseButton::Left), border),
        mouse(MouseEventKind::Drag(MouseButton::Left), 70),
        mouse(MouseEventKind::Drag(MouseButton::Left), 60),
        mouse(MouseEventKind::Up(MouseButton::Left), 60),
    ] {
        lp.event(event);
    }
    assert_eq!(conversation_width(&lp), 60, "{}", lp.screen());
    assert!(!lp.state.dragging_split);
}

/// With a file open, the split is the user's: the file view sits beside
/// the conversation and Alt+= gives the conversation more.
#[test]
fn a_file_takes_its_room_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &dir.path().join("a.txt"), None);
    let mut lp = Loop::new(s, 120, 40);
    assert_eq!(conversation_width(&lp), 48);
    assert!(lp.state.layout().file_view.is_some());
    lp.key(KeyCode::Char('='), KeyModifiers::ALT);
    assert_eq!(conversation_width(&lp), 54);
}

/// Alt+C copies the last answer and the status bar says how much.
#[test]
fn alt_c_says_what_it_copied() {
    let mut s = state();
    s.workbench
        .transcript_mut()
        .push(hello_tui::workbench::transcript::PaneEntry::new(
            hello_tui::workbench::transcript::Speaker::Assistant,
            "first line\nsecond line\nthird",
        ));
    let mut lp = Loop::new(s, 120, 40);
    assert!(lp.key(KeyCode::Char('c'), KeyModifiers::ALT));
    let status = lp.screen().lines().last().unwrap_or_default().to_owned();
    assert!(
        status.contains("Copied 3 lines of the last answer."),
        "{status}"
    );
}

/// A file a cell writes is shown in the file view (the keyboard stays in
/// the conversation); not while the user is in the file view, and not
/// with `[ui] follow_edits = false`.
#[test]
fn the_file_view_follows_what_a_cell_writes() {
    use hello_tui::kernel::caps::{FsWritten, Prior};
    use hello_tui::workbench::event::AppEvent;
    let dir = tempfile::tempdir().unwrap();
    let written = |name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("// {name}\n")).unwrap();
        AppEvent::FsWritten(FsWritten {
            path,
            before: Prior::Absent,
            after: format!("// {name}\n").into_bytes(),
        })
    };
    let mut lp = Loop::new(
        AppState::new(dir.path().to_path_buf(), Settings::defaults()),
        120,
        40,
    );
    hello_tui::app::update::handle_app_event(&mut lp.state, written("auth.ts"));
    lp.draw();
    assert!(lp.screen().contains("// auth.ts"), "{}", lp.screen());
    assert_eq!(lp.state.focus, hello_tui::keymap::PaneId::Conversation);
    // In the file view the user's tab stays.
    lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
    hello_tui::app::update::handle_app_event(&mut lp.state, written("api.ts"));
    lp.draw();
    assert!(!lp.screen().contains("// api.ts"), "{}", lp.screen());
    // Off by setting.
    let mut settings = Settings::defaults();
    settings.follow_edits = false;
    let mut lp = Loop::new(AppState::new(dir.path().to_path_buf(), settings), 120, 40);
    hello_tui::app::update::handle_app_event(&mut lp.state, written("db.ts"));
    lp.draw();
    assert!(!lp.screen().contains("// db.ts"), "{}", lp.screen());
}

/// End and Home in F2 and in F1 go to the end and back, drawn at once.
#[test]
fn end_and_home_move_the_read_only_overlays() {
    let mut lp = Loop::new(state(), 120, 40);
    for (open, what) in [(KeyCode::F(2), "F2"), (KeyCode::F(1), "F1")] {
        assert!(lp.key(open, NONE));
        let top = lp.screen();
        assert!(lp.key(KeyCode::End, NONE), "{what}: End asked for no frame");
        let end = lp.screen();
        assert_ne!(top, end, "{what}: End moved nothing");
        assert!(lp.key(KeyCode::Home, NONE));
        assert_eq!(lp.screen(), top, "{what}: Home is back at the top");
        lp.key(KeyCode::Esc, NONE);
    }
}

/// Ctrl+End reaches the empty line after the final line break, as in VS
/// Code, so lines copied from the file and pasted at its end start a line
/// of their own (it gave `return Nonedef fmt_money(x):`).
#[test]
fn the_line_after_the_final_newline_is_reachable_and_takes_a_paste() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("money.py");
    std::fs::write(&file, "def fmt_money(x):\n    return None\n").unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &file, None);
    let mut lp = Loop::new(s, 120, 40);
    lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
    lp.key(KeyCode::Down, KeyModifiers::SHIFT);
    lp.key(KeyCode::Down, KeyModifiers::SHIFT);
    lp.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert!(lp.key(KeyCode::End, KeyModifiers::CONTROL));
    let status = lp.screen().lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("money.py 3:1"), "{status}");
    assert!(
        lp.screen().contains("  3 "),
        "line 3 is numbered:\n{}",
        lp.screen()
    );
    assert!(lp.key(KeyCode::Char('v'), KeyModifiers::CONTROL));
    lp.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "def fmt_money(x):\n    return None\ndef fmt_money(x):\n    return None\n"
    );
    let status = lp.screen().lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("money.py 5:1"), "{status}");
}

#[test]
fn moving_up_from_a_long_line_brings_the_short_line_into_view() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.txt");
    let long = "x".repeat(20_000);
    std::fs::write(&file, format!("short line\n{long}\nend\n")).unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &file, None);
    let mut lp = Loop::new(s, 120, 40);
    lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
    lp.key(KeyCode::Down, KeyModifiers::NONE);
    assert!(lp.key(KeyCode::End, KeyModifiers::NONE));
    assert!(
        !lp.screen().contains("short line"),
        "End on the long line scrolls sideways:\n{}",
        lp.screen()
    );
    assert!(lp.key(KeyCode::Up, KeyModifiers::NONE));
    let screen = lp.screen();
    assert!(
        screen.contains("  1 short line"),
        "the short line shows from its start:\n{screen}"
    );
    let status = screen.lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("long.txt 1:11"), "{status}");
    // The rows below the tab bar (whose active tab shares the style).
    let view = lp.state.layout().file_view.expect("the file view");
    let text = Rect::new(view.x, view.y + 2, view.width, view.height - 2);
    let cells = lp.cursor_cells(text);
    let row = screen
        .lines()
        .position(|l| l.contains("  1 short line"))
        .unwrap();
    // `TestBackend` quotes each row.
    let line = screen.lines().nth(row).unwrap().trim_start_matches('"');
    let after_text = line.find("short line").unwrap() + "short line".len();
    assert_eq!(
        cells,
        vec![(line[..after_text].chars().count() as u16, row as u16)],
        "one cursor, right after the text of line 1:\n{screen}"
    );
}

/// The rows of the file view's text (below its tab bar) as the user sees
/// them: (row on screen, text).
fn file_rows(lp: &Loop) -> Vec<(u16, String)> {
    let view = lp.state.layout().file_view.expect("the file view");
    let buffer = lp.terminal.backend().buffer();
    (view.y + 2..view.bottom() - 1)
        .map(|y| {
            let row = (view.x + 1..view.right() - 1)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect();
            (y, row)
        })
        .collect()
}

/// The find bar never hides the match it found: a far match is centred
/// (VS Code's reveal), one just above the view lands below the bar.
#[test]
fn find_keeps_the_match_in_sight_and_clear_of_its_bar() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.py");
    let text: String = (1..=300).map(|i| format!("line_{i} = {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let mut s = AppState::new(dir.path().to_path_buf(), Settings::defaults());
    hello_tui::app::editors::open(&mut s, &file, None);
    let mut lp = Loop::new(s, 120, 40);
    lp.key(KeyCode::Char('2'), KeyModifiers::ALT);
    let shown_at = |lp: &Loop, text: &str| {
        let rows = file_rows(lp);
        let at = rows.iter().position(|(_, row)| row.contains(text));
        (at, rows.len())
    };

    lp.key(KeyCode::Char('f'), KeyModifiers::CONTROL);
    lp.type_text("line_150 ");
    assert!(lp.key(KeyCode::Enter, NONE));
    let (at, rows) = shown_at(&lp, "line_150 = 150");
    let at = at.unwrap_or_else(|| panic!("line 150 in view:\n{}", lp.screen()));
    assert!(
        at.abs_diff(rows / 2) <= 1,
        "a far match is centred (row {at} of {rows}):\n{}",
        lp.screen()
    );

    // From the end of the file, a match on the top row, which the bar
    // covers once it opens.
    lp.key(KeyCode::Esc, NONE);
    lp.key(KeyCode::End, KeyModifiers::CONTROL);
    let top_line = |lp: &Loop| -> usize {
        let (_, first) = &file_rows(lp)[0];
        first
            .trim_start()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let top = top_line(&lp);
    lp.key(KeyCode::Char('f'), KeyModifiers::CONTROL);
    lp.type_text(&format!("line_{top} "));
    assert!(lp.key(KeyCode::Enter, NONE));
    let (at, _) = shown_at(&lp, &format!("line_{top} = {top}"));
    let at = at.unwrap_or_else(|| panic!("the match is drawn:\n{}", lp.screen()));
    assert!(
        at >= 2,
        "the match is below the find bar's two rows (row {at}):\n{}",
        lp.screen()
    );
}

type Key = (KeyCode, KeyModifiers);

/// One key of the composer's table in F1: from `one two` / `three four`
/// (the cursor at the end), `setup`, the key, then `after`; the composer
/// then shows `lines` with the cursor at `cursor`.
struct ComposerCase {
    listed: &'static str,
    setup: &'static [Key],
    key: Key,
    after: &'static [Key],
    lines: &'static [&'static str],
    cursor: (u16, u16),
}

const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL_SHIFT: KeyModifiers = KeyModifiers::CONTROL.union(KeyModifiers::SHIFT);
const BOTH: &[&str] = &["one two", "three four"];
const HOME: &[Key] = &[(KeyCode::Home, NONE)];
const CUT: &[Key] = &[(KeyCode::Char('x'), CTRL)];

const fn case(
    listed: &'static str,
    setup: &'static [Key],
    key: Key,
    after: &'static [Key],
    lines: &'static [&'static str],
    cursor: (u16, u16),
) -> ComposerCase {
    ComposerCase {
        listed,
        setup,
        key,
        after,
        lines,
        cursor,
    }
}

const COMPOSER_CASES: &[ComposerCase] = &[
    case("↑", &[], (KeyCode::Up, NONE), &[], BOTH, (7, 0)),
    case(
        "↓",
        &[(KeyCode::Up, NONE)],
        (KeyCode::Down, NONE),
        &[],
        BOTH,
        (7, 1),
    ),
    case("←", &[], (KeyCode::Left, NONE), &[], BOTH, (9, 1)),
    case("→", HOME, (KeyCode::Right, NONE), &[], BOTH, (1, 1)),
    case("Ctrl+B", &[], (KeyCode::Char('b'), CTRL), &[], BOTH, (9, 1)),
    case("Ctrl+←", &[], (KeyCode::Left, CTRL), &[], BOTH, (6, 1)),
    case("Ctrl+→", HOME, (KeyCode::Right, CTRL), &[], BOTH, (6, 1)),
    case("Alt+B", &[], (KeyCode::Char('b'), ALT), &[], BOTH, (6, 1)),
    case("Alt+F", HOME, (KeyCode::Char('f'), ALT), &[], BOTH, (6, 1)),
    case("Home", &[], (KeyCode::Home, NONE), &[], BOTH, (0, 1)),
    case("End", HOME, (KeyCode::End, NONE), &[], BOTH, (10, 1)),
    case("Ctrl+A", &[], (KeyCode::Char('a'), CTRL), &[], BOTH, (0, 1)),
    case(
        "Ctrl+E",
        HOME,
        (KeyCode::Char('e'), CTRL),
        &[],
        BOTH,
        (10, 1),
    ),
    case("Alt+<", &[], (KeyCode::Char('<'), ALT), &[], BOTH, (7, 0)),
    case(
        "Alt+>",
        &[(KeyCode::Char('<'), ALT)],
        (KeyCode::Char('>'), ALT),
        &[],
        BOTH,
        (7, 1),
    ),
    case(
        "Shift+←",
        &[],
        (KeyCode::Left, SHIFT),
        CUT,
        &["one two", "three fou"],
        (9, 1),
    ),
    case(
        "Shift+→",
        HOME,
        (KeyCode::Right, SHIFT),
        CUT,
        &["one two", "hree four"],
        (0, 1),
    ),
    case(
        "Shift+↑",
        &[],
        (KeyCode::Up, SHIFT),
        CUT,
        &["one two"],
        (7, 0),
    ),
    case(
        "Shift+↓",
        &[(KeyCode::Char('<'), ALT), (KeyCode::Home, NONE)],
        (KeyCode::Down, SHIFT),
        CUT,
        &["three four"],
        (0, 0),
    ),
    case(
        "Shift+Home",
        &[],
        (KeyCode::Home, SHIFT),
        CUT,
        &["one two", ""],
        (0, 1),
    ),
    case(
        "Shift+End",
        HOME,
        (KeyCode::End, SHIFT),
        CUT,
        &["one two", ""],
        (0, 1),
    ),
    case(
        "Ctrl+Shift+←",
        &[],
        (KeyCode::Left, CTRL_SHIFT),
        CUT,
        &["one two", "three"],
        (6, 1),
    ),
    case(
        "Ctrl+Shift+→",
        HOME,
        (KeyCode::Right, CTRL_SHIFT),
        CUT,
        &["one two", "four"],
        (0, 1),
    ),
    case(
        "Backspace",
        &[],
        (KeyCode::Backspace, NONE),
        &[],
        &["one two", "three fou"],
        (9, 1),
    ),
    case(
        "Ctrl+H",
        &[],
        (KeyCode::Char('h'), CTRL),
        &[],
        &["one two", "three fou"],
        (9, 1),
    ),
    case(
        "Delete",
        HOME,
        (KeyCode::Delete, NONE),
        &[],
        &["one two", "hree four"],
        (0, 1),
    ),
    case(
        "Ctrl+D",
        HOME,
        (KeyCode::Char('d'), CTRL),
        &[],
        &["one two", "hree four"],
        (0, 1),
    ),
    case(
        "Ctrl+W",
        &[],
        (KeyCode::Char('w'), CTRL),
        &[],
        &["one two", "three"],
        (6, 1),
    ),
    case(
        "Alt+H",
        &[],
        (KeyCode::Char('h'), ALT),
        &[],
        &["one two", "three"],
        (6, 1),
    ),
    case(
        "Alt+D",
        HOME,
        (KeyCode::Char('d'), ALT),
        &[],
        &["one two", " four"],
        (0, 1),
    ),
    case(
        "Alt+Delete",
        HOME,
        (KeyCode::Delete, ALT),
        &[],
        &["one two", " four"],
        (0, 1),
    ),
    case(
        "Ctrl+K",
        HOME,
        (KeyCode::Char('k'), CTRL),
        &[],
        &["one two", ""],
        (0, 1),
    ),
    case(
        "Ctrl+X",
        &[(KeyCode::Home, SHIFT)],
        (KeyCode::Char('x'), CTRL),
        &[],
        &["one two", ""],
        (0, 1),
    ),
    case(
        "Ctrl+Y",
        &[(KeyCode::Home, SHIFT), (KeyCode::Char('x'), CTRL)],
        (KeyCode::Char('y'), CTRL),
        &[],
        BOTH,
        (10, 1),
    ),
    case(
        "Ctrl+U",
        &[(KeyCode::Backspace, NONE)],
        (KeyCode::Char('u'), CTRL),
        &[],
        BOTH,
        (10, 1),
    ),
    case(
        "Ctrl+R",
        &[(KeyCode::Backspace, NONE), (KeyCode::Char('u'), CTRL)],
        (KeyCode::Char('r'), CTRL),
        &[],
        &["one two", "three fou"],
        (9, 1),
    ),
];

/// The keys F1 (and docs/keys.md) lists in one section.
fn listed_keys(section: &str) -> Vec<String> {
    let markdown = hello_tui::keymap::markdown();
    let start = markdown
        .find(&format!("### {section}"))
        .unwrap_or_else(|| panic!("no {section} section"));
    let table = &markdown[start..];
    let end = table[4..].find("### ").map_or(table.len(), |i| i + 4);
    table[..end]
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| {
            let keys = line.split(" | ").next().unwrap_or_default();
            keys.split(" / ")
                .map(|key| key.trim_start_matches("| ").trim_matches('`').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every key F1 lists for the composer, through the loop: it asks for a
/// frame and does what its row says; each is listed once, and each is
/// tested here. Keys it does not list do nothing in the composer.
#[test]
fn every_composer_key_f1_lists_does_what_it_says() {
    let listed = listed_keys("Composer (typing a message)");
    let mut tested: Vec<&str> = COMPOSER_CASES.iter().map(|c| c.listed).collect();
    let mut sorted = listed.clone();
    sorted.sort();
    tested.sort();
    let before = sorted.len();
    sorted.dedup();
    assert_eq!(before, sorted.len(), "a key listed twice: {listed:?}");
    assert_eq!(sorted, tested, "F1's composer keys and the tested ones");

    for case in COMPOSER_CASES {
        let mut lp = Loop::new(state(), 120, 40);
        lp.key(KeyCode::Char('1'), ALT);
        lp.type_text("one two");
        lp.key(KeyCode::Enter, SHIFT);
        lp.type_text("three four");
        for &(code, modifiers) in case.setup {
            lp.key(code, modifiers);
        }
        let (code, modifiers) = case.key;
        assert!(
            lp.key(code, modifiers),
            "{} asked for no frame",
            case.listed
        );
        for &(code, modifiers) in case.after {
            lp.key(code, modifiers);
        }
        let mut shown = composer_text(&lp);
        shown.truncate(case.lines.len().max(2));
        while shown.len() > case.lines.len() && shown.last().is_some_and(String::is_empty) {
            shown.pop();
        }
        assert_eq!(shown, case.lines, "after {}", case.listed);
        assert_eq!(composer_cursor(&lp), case.cursor, "after {}", case.listed);
    }

    // What the text area would do on its own but F1 does not list.
    let mut lp = Loop::new(state(), 120, 40);
    lp.key(KeyCode::Char('1'), ALT);
    lp.type_text("one two");
    lp.key(KeyCode::Enter, SHIFT);
    lp.type_text("three four");
    lp.key(KeyCode::Char('<'), ALT);
    for (code, modifiers) in [
        (KeyCode::Char('v'), CTRL),
        (KeyCode::Char('v'), ALT),
        (KeyCode::Up, CTRL),
        (KeyCode::Down, CTRL.union(ALT)),
        (KeyCode::Char('n'), CTRL),
    ] {
        assert!(
            !lp.key(code, modifiers),
            "{modifiers:?}+{code:?} is not a composer key"
        );
        assert_eq!(composer_text(&lp)[..2], *BOTH);
        assert_eq!(composer_cursor(&lp), (7, 0));
    }
}

fn mouse(kind: crossterm::event::MouseEventKind, column: u16, row: u16) -> crossterm::event::Event {
    crossterm::event::Event::Mouse(crossterm::event::MouseEvent {
        kind,
        column,
        row,
        modifiers: NONE,
    })
}

/// Where `text` is drawn on screen: (column, row) of its first char.
fn find_on_screen(lp: &Loop, text: &str) -> (u16, u16) {
    let screen = lp.screen();
    for (y, line) in screen.lines().enumerate() {
        // `TestBackend` quotes each row.
        let line = line.trim_start_matches('"');
        if let Some(at) = line.find(text) {
            return (line[..at].chars().count() as u16, y as u16);
        }
    }
    panic!("{text:?} is not on screen:\n{screen}")
}

/// A question and an answer with a two-line code block.
fn with_code_answer() -> AppState {
    use hello_tui::workbench::transcript::{PaneEntry, Speaker};
    let mut s = state();
    *s.workbench.transcript_mut() = vec![
        PaneEntry::new(Speaker::User, "how do I list the sources?"),
        PaneEntry::new(
            Speaker::Assistant,
            "Run this:\n\n```sh\nls -la src\ngrep -rn todo src\n```\n\nthen look.",
        ),
    ]
    .into();
    s
}

/// Issue 27.7: drag in the conversation selects text within the pane (not
/// the file view's beside it), highlighted as it goes; release copies it
/// and says so; Alt+K copies the code block it is in; any key ends it.
#[test]
fn dragging_in_the_conversation_selects_and_copies_its_text() {
    use crossterm::event::{MouseButton, MouseEventKind};
    let mut lp = Loop::new(with_code_answer(), 120, 40);
    let (x0, y0) = find_on_screen(&lp, "Run this:");
    let (x1, y1) = find_on_screen(&lp, "ls -la src");
    let selection_bg = lp.theme.roles.selection.bg;
    let highlighted = |lp: &Loop, y: u16| -> String {
        let buffer = lp.terminal.backend().buffer();
        (0..buffer.area.width)
            .filter(|&x| buffer[(x, y)].bg == selection_bg.unwrap_or_default())
            .map(|x| buffer[(x, y)].symbol().to_owned())
            .collect()
    };

    assert!(lp.event(mouse(MouseEventKind::Down(MouseButton::Left), x0 + 4, y0)));
    assert!(lp.event(mouse(MouseEventKind::Drag(MouseButton::Left), x1 + 5, y1)));
    assert_eq!(
        highlighted(&lp, y0).trim_end(),
        "this:",
        "the first row from the press on, to the end of the row"
    );
    assert!(
        highlighted(&lp, y1).contains("ls -la"),
        "the last row up to the pointer"
    );
    assert!(lp.event(mouse(MouseEventKind::Up(MouseButton::Left), x1 + 5, y1)));
    let copied = lp.state.workbench.editors().clipboard.clone();
    assert!(copied.starts_with("this:\n"), "{copied:?}");
    assert!(copied.ends_with("ls -la"), "{copied:?}");
    assert!(!copied.contains('▏'), "no role bar in {copied:?}");
    let status = lp.screen().lines().last().unwrap_or_default().to_owned();
    assert!(status.contains("Copied"), "{status}");
    assert!(status.contains("lines of the selection"), "{status}");

    // Alt+K: the code block the selection is in, whole.
    assert!(lp.key(KeyCode::Char('k'), ALT));
    assert_eq!(
        lp.state.workbench.editors().clipboard,
        "ls -la src\ngrep -rn todo src\n"
    );
    // Another key ends the selection and its highlight.
    lp.key(KeyCode::Char('1'), ALT);
    lp.type_text("x");
    assert_eq!(highlighted(&lp, y0), "", "no highlight after a key");

    // A click without a drag selects nothing and copies nothing.
    lp.state.workbench.editors_mut().clipboard.clear();
    lp.event(mouse(MouseEventKind::Down(MouseButton::Left), x0 + 2, y0));
    lp.event(mouse(MouseEventKind::Up(MouseButton::Left), x0 + 2, y0));
    assert_eq!(lp.state.workbench.editors().clipboard, "");
    assert_eq!(highlighted(&lp, y0), "");
}

/// Issue 27.7: Alt+V puts a cursor in the conversation's history; the
/// arrows move it (drawn after every key), Shift+arrows select, y copies
/// and leaves; while it is there typing is not text for the composer.
#[test]
fn the_keys_select_and_copy_text_in_the_conversation() {
    let mut lp = Loop::new(with_code_answer(), 120, 40);
    lp.key(KeyCode::Char('1'), ALT);
    let history = lp.state.conversation.shown.area;
    let cursor_at = |lp: &Loop| -> (u16, u16) {
        let cells = lp.cursor_cells(history);
        assert_eq!(
            cells.len(),
            1,
            "one cursor in the history:\n{}",
            lp.screen()
        );
        cells[0]
    };
    assert!(lp.key(KeyCode::Char('v'), ALT), "Alt+V draws the cursor");
    let (x, y) = cursor_at(&lp);
    let (_, last_row) = find_on_screen(&lp, "then look.");
    assert_eq!(y, last_row, "the cursor starts on the bottom row");
    // Each move is drawn where it went.
    assert!(lp.key(KeyCode::Up, NONE));
    assert_eq!(cursor_at(&lp), (x, y - 1));
    assert!(lp.key(KeyCode::Right, NONE));
    assert_eq!(cursor_at(&lp), (x + 1, y - 1));
    // Up to the code's first line, select it to its end, copy.
    let (code_x, code_y) = find_on_screen(&lp, "ls -la src");
    while cursor_at(&lp).1 > code_y {
        assert!(lp.key(KeyCode::Up, NONE));
    }
    assert!(lp.key(KeyCode::Home, NONE));
    for _ in 0..(code_x - history.x) {
        lp.key(KeyCode::Right, NONE);
    }
    assert_eq!(cursor_at(&lp), (code_x, code_y));
    // Typing does not reach the composer meanwhile.
    assert!(!lp.key(KeyCode::Char('q'), NONE));
    assert!(lp.key(KeyCode::End, KeyModifiers::SHIFT));
    assert!(lp.key(KeyCode::Char('y'), NONE));
    assert_eq!(lp.state.workbench.editors().clipboard, "ls -la src");
    let status = lp.screen().lines().last().unwrap_or_default().to_owned();
    assert!(
        status.contains("Copied 1 line of the selection"),
        "{status}"
    );
    assert!(lp.cursor_cells(history).is_empty(), "y leaves the history");
    assert!(!composer_text(&lp)[0].contains('q'), "q was not typed");

    // Alt+K on a code row copies its whole block; Esc leaves.
    lp.key(KeyCode::Char('v'), ALT);
    while cursor_at(&lp).1 > code_y {
        lp.key(KeyCode::Up, NONE);
    }
    assert!(lp.key(KeyCode::Char('k'), ALT));
    assert_eq!(
        lp.state.workbench.editors().clipboard,
        "ls -la src\ngrep -rn todo src\n"
    );
    assert!(lp.key(KeyCode::Esc, NONE));
    assert!(lp.cursor_cells(history).is_empty());
    lp.type_text("ok");
    assert_eq!(composer_text(&lp)[0], "ok", "typing is text again");
}

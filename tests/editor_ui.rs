//! The file view in the workbench, driven through `update` on real temp
//! directories (open, edit, save, undo, external changes, conflicts,
//! recovery, the picker, the snapshot scene) and drawn with `TestBackend`
//! for insta snapshots (styles included where colour carries meaning).

#[path = "support/frames.rs"]
mod frames;
use std::path::{Path, PathBuf};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::overlays::Overlay;
use hello_tui::overlays::conflict::Conflict;
use hello_tui::workbench::Question;
use hello_tui::workbench::event::AppEvent;

use hello_tui::app::update::{Command, handle_app_event, handle_terminal_event};
use hello_tui::app::{editors, snapshot};
use hello_tui::config::Settings;
use hello_tui::editor::{EditCommand, Motion};
use hello_tui::keymap::PaneId;
use hello_tui::theme::Theme;
use hello_tui::ui;
use hello_tui::workspace::{IndexUpdate, WorkspaceEvent, WorkspaceMessage};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// The question the open overlay asks, if it is one.
fn asking(s: &AppState) -> Option<Question> {
    s.overlay().and_then(Overlay::question)
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

const PYTHON: &str = "import os\n\n\ndef greet(name: str) -> str:\n    \"\"\"Say hello.\"\"\"\n    return f\"hello {name}\"\n\n\nclass Box:\n    size = 3\n";

fn settings() -> Settings {
    Settings::defaults()
}

fn state(root: &Path) -> AppState {
    let root = std::fs::canonicalize(root).expect("root");
    AppState::new(root, settings())
}

/// A fixed directory for snapshot tests, so paths in the picture are stable.
fn fixed_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hello-tui-editor-ui-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

fn press(s: &mut AppState, code: KeyCode, modifiers: KeyModifiers) -> Command {
    handle_terminal_event(s, Event::Key(KeyEvent::new(code, modifiers)))
}

fn type_text(s: &mut AppState, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c), NONE);
    }
}

fn open(s: &mut AppState, path: &Path) {
    editors::open(s, path, None);
    assert_eq!(s.focus, PaneId::FileView);
}

fn active_text(s: &AppState) -> String {
    s.workbench
        .editors()
        .active()
        .expect("a file is open")
        .text()
}

fn is_dirty(s: &AppState) -> bool {
    s.workbench
        .editors()
        .active()
        .expect("a file is open")
        .is_dirty()
}

/// The workspace index walk found `paths`.
fn index(s: &mut AppState, paths: &[&str]) {
    let paths = paths.iter().map(|p| (*p).to_owned()).collect();
    handle_app_event(
        s,
        AppEvent::Workspace(WorkspaceMessage::Index(IndexUpdate::Batch(paths))),
    );
}

fn disk_event(s: &mut AppState, path: &Path) -> Command {
    handle_app_event(
        s,
        AppEvent::Workspace(WorkspaceMessage::Event(WorkspaceEvent::FileChanged(
            std::fs::canonicalize(path).expect("path"),
        ))),
    )
}

fn draw(s: &mut AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    frames::draw_settled(s, &Theme::builtin_default(), width, height)
}

fn region(buffer: &Buffer, area: Rect) -> Buffer {
    let mut out = Buffer::empty(Rect::new(0, 0, area.width, area.height));
    for y in 0..area.height {
        for x in 0..area.width {
            out[(x, y)] = buffer[(area.x + x, area.y + y)].clone();
        }
    }
    out
}

/// A diagnostic from ruff on one line of `path`, over `columns` (0-based).
fn ruff_diagnostic(
    path: &Path,
    line: usize,
    columns: std::ops::Range<usize>,
    severity: hello_tui::diagnostics::Severity,
    message: &str,
) -> hello_tui::diagnostics::Diagnostic {
    use hello_tui::diagnostics::{Diagnostic, Position, Range};
    Diagnostic {
        path: path.into(),
        range: Range::new(
            Position::new(line, columns.start),
            Position::new(line, columns.end),
        ),
        severity,
        message: message.into(),
        source: "ruff".into(),
        code: None,
        related: Vec::new(),
    }
}

/// Ruff published `diagnostics` for `file`.
fn publish_ruff(
    s: &mut AppState,
    file: &Path,
    diagnostics: Vec<hello_tui::diagnostics::Diagnostic>,
) {
    hello_tui::app::diagnostics::apply(
        s,
        hello_tui::diagnostics::DiagnosticsEvent::Published {
            source: "ruff".into(),
            path: file.to_path_buf(),
            diagnostics,
        },
    );
}

fn file_view_rect(s: &AppState) -> Rect {
    s.layout().file_view.expect("file view visible")
}

#[test]
fn open_edit_save_is_clean_and_disk_equals_screen() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    assert!(!is_dirty(&s));
    press(&mut s, KeyCode::End, NONE);
    type_text(&mut s, "0");
    press(&mut s, KeyCode::Enter, NONE);
    type_text(&mut s, "y = 2");
    assert!(is_dirty(&s));
    assert_eq!(s.unsaved_count(), 1);
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert!(!is_dirty(&s));
    assert_eq!(s.unsaved_count(), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 10\ny = 2\n");
    assert_eq!(active_text(&s), "x = 10\ny = 2\n");
    assert!(
        s.workbench
            .editors()
            .status
            .as_deref()
            .unwrap_or("")
            .contains("Saved")
    );
}

#[test]
fn undo_back_to_the_saved_text_is_clean_and_redo_dirty_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "abc\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "zz");
    assert!(is_dirty(&s));
    press(&mut s, KeyCode::Char('z'), CTRL);
    press(&mut s, KeyCode::Char('z'), CTRL);
    assert_eq!(active_text(&s), "abc\n");
    assert!(!is_dirty(&s), "undo back to the saved text is clean");
    assert_eq!(s.unsaved_count(), 0);
    press(&mut s, KeyCode::Char('y'), CTRL);
    assert!(is_dirty(&s));
}

#[test]
fn ctrl_z_in_the_file_view_undoes_instead_of_suspending() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "a\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "b");
    assert_ne!(press(&mut s, KeyCode::Char('z'), CTRL), Command::Suspend);
    assert_eq!(active_text(&s), "a\n");
}

#[test]
fn selection_copy_paste_and_the_system_clipboard() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "hello world\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    press(&mut s, KeyCode::Right, KeyModifiers::CONTROL | SHIFT);
    let sel = s.workbench.editors().active().unwrap().selection();
    assert_eq!(sel, Some(((0, 0), (0, 5))));
    let command = press(&mut s, KeyCode::Char('c'), CTRL);
    assert_eq!(
        command,
        Command::Clipboard("hello".into()),
        "OSC 52 gets the text"
    );
    press(&mut s, KeyCode::End, NONE);
    press(&mut s, KeyCode::Char('v'), CTRL);
    assert_eq!(active_text(&s), "hello worldhello\n");
    // Bracketed paste goes into the file view as one edit.
    handle_terminal_event(&mut s, Event::Paste("\r\nnew line".into()));
    assert_eq!(active_text(&s), "hello worldhello\nnew line\n");
    press(&mut s, KeyCode::Char('z'), CTRL);
    assert_eq!(active_text(&s), "hello worldhello\n");
}

#[test]
fn tab_is_text_in_the_file_view_and_shift_tab_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.py");
    std::fs::write(&file, "x\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    press(&mut s, KeyCode::Tab, NONE);
    assert_eq!(active_text(&s), "    x\n");
    press(&mut s, KeyCode::BackTab, SHIFT);
    assert_eq!(s.focus, PaneId::Conversation);
}

#[test]
fn external_write_to_a_clean_buffer_reloads_keeping_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    press(&mut s, KeyCode::Down, NONE);
    press(&mut s, KeyCode::Right, NONE);
    std::fs::write(&file, "ONE\nTWO\nTHREE\nFOUR\n").unwrap();
    assert_eq!(disk_event(&mut s, &file), Command::Redraw);
    assert_eq!(active_text(&s), "ONE\nTWO\nTHREE\nFOUR\n");
    assert!(!is_dirty(&s));
    assert_eq!(s.workbench.editors().active().unwrap().cursor(), (1, 1));
}

#[test]
fn external_write_to_a_dirty_buffer_keeps_edits_and_flags_the_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "mine\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "my ");
    std::fs::write(&file, "theirs\n").unwrap();
    disk_event(&mut s, &file);
    assert_eq!(active_text(&s), "my mine\n", "no keystroke is lost");
    assert!(matches!(
        s.workbench.editors().active().unwrap().disk_state(),
        hello_tui::editor::DiskState::ChangedOnDisk { .. }
    ));
    // Typing goes on undisturbed: no overlay steals keys.
    assert_eq!(s.overlay(), None);
    type_text(&mut s, "!");
    assert_eq!(active_text(&s), "my !mine\n");
    // Saving asks how to resolve; "keep mine" then saves the buffer.
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(s.overlay(), Some(&Overlay::Conflict(Conflict)));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "theirs\n");
    press(&mut s, KeyCode::Char('d'), NONE);
    let Some(Overlay::Diff(hello_tui::overlays::conflict::Diff { text, .. })) = s.overlay() else {
        panic!("diff overlay expected, got {:?}", s.overlay());
    };
    assert!(
        text.contains("-theirs") && text.contains("+my !mine"),
        "{text}"
    );
    press(&mut s, KeyCode::Esc, NONE);
    press(&mut s, KeyCode::Char('r'), CTRL);
    press(&mut s, KeyCode::Char('k'), NONE);
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "my !mine\n");
    assert!(!is_dirty(&s));
}

#[test]
fn load_theirs_asks_first_then_discards_the_edits() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "mine\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "x");
    std::fs::write(&file, "theirs\n").unwrap();
    disk_event(&mut s, &file);
    press(&mut s, KeyCode::Char('r'), CTRL);
    press(&mut s, KeyCode::Char('t'), NONE);
    assert!(matches!(asking(&s), Some(Question::LoadTheirs { .. })));
    press(&mut s, KeyCode::Char('y'), NONE);
    assert_eq!(active_text(&s), "theirs\n");
    assert!(!is_dirty(&s));
}

#[test]
fn a_file_deleted_on_disk_keeps_its_buffer_and_saving_recreates_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "keep\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    let canonical = std::fs::canonicalize(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    handle_app_event(
        &mut s,
        AppEvent::Workspace(WorkspaceMessage::Event(WorkspaceEvent::FileRemoved(
            canonical,
        ))),
    );
    assert_eq!(
        s.workbench.editors().active().unwrap().disk_state(),
        &hello_tui::editor::DiskState::DeletedOnDisk
    );
    assert_eq!(active_text(&s), "keep\n");
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep\n");
}

/// A file deleted with its folder (`rm -rf d1`): Ctrl+S makes the folder
/// again, as the "saving recreates it" banner promises.
#[test]
fn saving_a_file_whose_folder_was_deleted_makes_the_folder_again() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("d1/d2");
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("x.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "EDIT ");
    let canonical = std::fs::canonicalize(&file).unwrap();
    std::fs::remove_dir_all(dir.path().join("d1")).unwrap();
    handle_app_event(
        &mut s,
        AppEvent::Workspace(WorkspaceMessage::Event(WorkspaceEvent::FileRemoved(
            canonical,
        ))),
    );
    assert!(
        s.workbench
            .editors()
            .active()
            .unwrap()
            .notice()
            .unwrap()
            .contains("saving recreates it")
    );
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "EDIT hello\n");
    assert!(!is_dirty(&s));
    assert_eq!(
        s.workbench.editors().status.as_deref(),
        Some("Saved d1/d2/x.txt")
    );
}

/// The folders are made beneath the workspace only: a deleted folder that
/// came back as a link to elsewhere is not followed, nothing is made
/// behind it, and the buffer stays dirty with the reason shown.
/// `ws/d1/sub/x.txt` open with an edit, `d1` then swapped for a link to
/// `outside` (which has a `sub` folder when `target_has_sub`), and Ctrl+S.
fn saved_after_a_folder_swap(target_has_sub: bool) -> (tempfile::TempDir, AppState) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(ws.join("d1/sub")).unwrap();
    let target = if target_has_sub {
        outside.join("sub")
    } else {
        outside.clone()
    };
    std::fs::create_dir_all(target).unwrap();
    let file = ws.join("d1/sub/x.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let mut s = state(&ws);
    open(&mut s, &file);
    type_text(&mut s, "EDIT ");
    std::fs::remove_dir_all(ws.join("d1")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("d1")).unwrap();
    press(&mut s, KeyCode::Char('s'), CTRL);
    (dir, s)
}

#[test]
fn missing_folders_are_not_made_through_a_link_out_of_the_workspace() {
    let (dir, s) = saved_after_a_folder_swap(false);
    let outside = dir.path().join("outside");
    assert!(
        !outside.join("sub").exists(),
        "made a folder behind the link"
    );
    assert!(is_dirty(&s));
    let status = s.workbench.editors().status.clone().unwrap_or_default();
    assert!(
        status.starts_with("Could not save d1/sub/x.txt")
            && status.contains("is now a link to")
            && status.contains("(made since the file was opened)"),
        "{status}"
    );
}

/// The same swap where the link's target has the folder (a reviewer's
/// case): the save would have gone through the link into
/// `outside/sub/x.txt`. And a file swapped for a link to a file elsewhere
/// is not written through either. The user's save runs outside the
/// sandbox; a cell's link must not steer it.
#[test]
fn a_save_never_goes_through_a_link_made_since_the_file_was_opened() {
    let (dir, mut s) = saved_after_a_folder_swap(true);
    let (ws, outside) = (dir.path().join("ws"), dir.path().join("outside"));
    assert!(
        !outside.join("sub/x.txt").exists(),
        "wrote through the link"
    );
    assert!(is_dirty(&s));

    let autostart = outside.join("autostart.sh");
    std::fs::write(&autostart, "#!/bin/sh\n").unwrap();
    let other = ws.join("b.txt");
    std::fs::write(&other, "mine\n").unwrap();
    open(&mut s, &other);
    type_text(&mut s, "EDIT ");
    std::fs::remove_file(&other).unwrap();
    std::os::unix::fs::symlink(&autostart, &other).unwrap();
    press(&mut s, KeyCode::Char('s'), CTRL);
    // It reads as a change on disk; "keep mine" and a save still do not
    // write through the link.
    press(&mut s, KeyCode::Char('r'), CTRL);
    press(&mut s, KeyCode::Char('k'), KeyModifiers::NONE);
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(std::fs::read_to_string(&autostart).unwrap(), "#!/bin/sh\n");
    let status = s.workbench.editors().status.clone().unwrap_or_default();
    assert!(status.contains("is now a link to"), "{status}");
}

#[test]
fn kernel_writes_reload_and_dirty_paths_are_published() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "v1\n").unwrap();
    let mut s = state(dir.path());
    let (tx, rx) = tokio::sync::watch::channel(hello_tui::kernel::caps::DirtyPaths::default());
    s.workbench.services_mut().dirty_paths = Some(tx);
    open(&mut s, &file);
    std::fs::write(&file, "v2\n").unwrap();
    let canonical = std::fs::canonicalize(&file).unwrap();
    let written = hello_tui::kernel::caps::FsWritten {
        path: canonical.clone(),
        before: hello_tui::kernel::caps::Prior::Bytes(b"v1\n".to_vec()),
        after: b"v2\n".to_vec(),
    };
    handle_app_event(&mut s, AppEvent::FsWritten(written));
    assert_eq!(active_text(&s), "v2\n");
    assert!(rx.borrow().is_empty());
    type_text(&mut s, "x");
    assert!(
        rx.borrow().contains(&canonical),
        "fs.write must refuse it now"
    );
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert!(rx.borrow().is_empty());
}

#[test]
fn quitting_and_closing_with_unsaved_edits_ask_first() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "a\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    type_text(&mut s, "b");
    assert_eq!(press(&mut s, KeyCode::Char('q'), CTRL), Command::Redraw);
    assert_eq!(
        asking(&s),
        Some(Question::QuitWithUnsavedEdits { count: 1 })
    );
    press(&mut s, KeyCode::Char('n'), NONE);
    assert!(!s.should_quit);
    press(&mut s, KeyCode::Char('w'), CTRL);
    assert!(matches!(asking(&s), Some(Question::CloseDirtyTab { .. })));
    press(&mut s, KeyCode::Char('n'), NONE);
    assert_eq!(s.workbench.editors().tabs.len(), 1);
    press(&mut s, KeyCode::Char('w'), CTRL);
    // A reflex `y` loses nothing: the answers are save, discard, cancel.
    press(&mut s, KeyCode::Char('y'), NONE);
    assert_eq!(s.workbench.editors().tabs.len(), 1);
    press(&mut s, KeyCode::Char('d'), NONE);
    assert!(s.workbench.editors().tabs.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\n", "discarded");
    assert_eq!(press(&mut s, KeyCode::Char('q'), CTRL), Command::Quit);
}

/// Issue 14, item 13: quitting or closing with unsaved edits offers to
/// save them first, as every editor does.
#[test]
fn quitting_or_closing_can_save_first() {
    let dir = fixed_dir("save-on-quit");
    let (a, b) = (dir.join("a.txt"), dir.join("b.txt"));
    std::fs::write(&a, "a\n").unwrap();
    std::fs::write(&b, "b\n").unwrap();
    let mut s = state(&dir);
    open(&mut s, &a);
    type_text(&mut s, "1");
    press(&mut s, KeyCode::Char('w'), CTRL);
    press(&mut s, KeyCode::Char('s'), NONE);
    assert!(s.workbench.editors().tabs.is_empty(), "saved, then closed");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "1a\n");
    open(&mut s, &a);
    type_text(&mut s, "2");
    open(&mut s, &b);
    type_text(&mut s, "3");
    press(&mut s, KeyCode::Char('q'), CTRL);
    let text = draw(&mut s, 80, 24).backend().to_string();
    insta::assert_snapshot!("quit_save_or_discard", text);
    press(&mut s, KeyCode::Char('y'), NONE);
    assert!(!s.should_quit, "y is not an answer here");
    press(&mut s, KeyCode::Char('s'), NONE);
    assert!(s.should_quit);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "21a\n");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "3b\n");
}

/// Saving before quitting stops when a file changed on disk: its choices
/// come up and nothing is lost.
#[test]
fn save_and_quit_stops_at_a_change_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.txt");
    std::fs::write(&a, "a\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &a);
    type_text(&mut s, "mine ");
    std::fs::write(&a, "theirs\n").unwrap();
    press(&mut s, KeyCode::Char('q'), CTRL);
    press(&mut s, KeyCode::Char('s'), NONE);
    assert!(!s.should_quit);
    assert!(
        matches!(s.overlay(), Some(Overlay::Conflict(Conflict))),
        "{:?}",
        s.overlay()
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "theirs\n");
    assert!(is_dirty(&s));
}

#[test]
fn tabs_switch_and_equal_names_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["api", "web"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
        std::fs::write(dir.path().join(sub).join("mod.py"), "x\n").unwrap();
    }
    std::fs::write(dir.path().join("main.py"), "y\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &dir.path().join("api/mod.py"));
    open(&mut s, &dir.path().join("web/mod.py"));
    open(&mut s, &dir.path().join("main.py"));
    let titles: Vec<String> = hello_tui::screen::file_view::tabs(&s.workbench.editors().tabs)
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(titles, ["mod.py — api", "mod.py — web", "main.py"]);
    assert_eq!(s.workbench.editors().active, 2);
    press(&mut s, KeyCode::PageDown, CTRL);
    assert_eq!(s.workbench.editors().active, 0);
    press(&mut s, KeyCode::Left, KeyModifiers::ALT);
    assert_eq!(s.workbench.editors().active, 2);
    // Opening an open file switches to its tab.
    open(&mut s, &dir.path().join("api/mod.py"));
    assert_eq!(
        (
            s.workbench.editors().tabs.len(),
            s.workbench.editors().active
        ),
        (3, 0)
    );
}

#[test]
fn picker_matches_as_you_type_and_enter_opens() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.py"), "print(1)\n").unwrap();
    std::fs::write(dir.path().join("README.md"), "# hi\n").unwrap();
    let mut s = state(dir.path());
    index(&mut s, &["README.md", "src/main.py"]);
    press(&mut s, KeyCode::Char('p'), CTRL);
    type_text(&mut s, "mainpy");
    let Some(Overlay::Picker(picker)) = s.overlay() else {
        panic!("picker expected");
    };
    assert_eq!(picker.matches[0].path, "src/main.py");
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(s.overlay(), None);
    assert_eq!(active_text(&s), "print(1)\n");
}

/// Ctrl+P, `auth` and Enter in one burst: the worker has answered only the
/// empty query (whose first row is `api.ts`) when Enter arrives. Enter acts
/// on the query as typed and opens the auth file (issue 14, item 3: it
/// opened `api.ts`).
#[test]
fn picker_enter_before_the_worker_answers_opens_the_typed_match() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/auth")).unwrap();
    std::fs::write(dir.path().join("api.ts"), "export const api = 1;\n").unwrap();
    std::fs::write(
        dir.path().join("src/auth/token.ts"),
        "export const token = 2;\n",
    )
    .unwrap();
    let mut s = state(dir.path());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    s.workbench.services_mut().picker =
        Some(hello_tui::workspace::FuzzyWorker::spawn(tx).expect("worker"));
    index(&mut s, &["api.ts", "src/auth/token.ts"]);
    press(&mut s, KeyCode::Char('p'), CTRL);
    // The answer to the empty query arrives, then the burst.
    let first = rx.blocking_recv().expect("the worker answers");
    handle_app_event(&mut s, AppEvent::PickerResults(first));
    let Some(Overlay::Picker(picker)) = s.overlay() else {
        panic!("picker expected");
    };
    assert_eq!(picker.matches[0].path, "api.ts", "the list shows all files");
    type_text(&mut s, "auth");
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(s.overlay(), None);
    assert_eq!(active_text(&s), "export const token = 2;\n");
    // The worker's late answers change nothing.
    while let Ok(late) = rx.try_recv() {
        handle_app_event(&mut s, AppEvent::PickerResults(late));
    }
    assert_eq!(active_text(&s), "export const token = 2;\n");
}

#[test]
fn go_to_line_and_find_in_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "alpha\nbeta\ngamma beta\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    press(&mut s, KeyCode::Char('g'), CTRL);
    type_text(&mut s, "3:2");
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(s.workbench.editors().active().unwrap().cursor(), (2, 1));
    assert_eq!(s.overlay(), None);
    press(&mut s, KeyCode::Char('f'), CTRL);
    assert!(
        matches!(s.overlay(), Some(Overlay::Prompt(_))),
        "Ctrl+F is find in the file view"
    );
    type_text(&mut s, "beta");
    press(&mut s, KeyCode::Enter, NONE);
    let sel = s.workbench.editors().active().unwrap().selection();
    assert_eq!(sel, Some(((2, 6), (2, 10))));
    press(&mut s, KeyCode::Enter, SHIFT);
    press(&mut s, KeyCode::Enter, SHIFT);
    let Some(Overlay::Prompt(prompt)) = s.overlay() else {
        panic!("find bar stays open");
    };
    assert_eq!(prompt.status.as_deref(), Some("2 of 2"));
}

/// A match on the file's first lines is never under the find bar: no
/// scrolling brings those lines out from under it, so the bar goes to the
/// bottom of the file view while the cursor is there (a tester saw `1 of
/// 180` with the match hidden), and back to the top for later matches.
#[test]
fn a_match_on_the_first_line_is_not_under_the_find_bar() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("find.txt");
    let text: String = (1..=60).map(|i| format!("row {i} foo Foo FOO\n")).collect();
    std::fs::write(&file, text).unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    s.focus = hello_tui::keymap::PaneId::FileView;
    press(&mut s, KeyCode::Char('f'), CTRL);
    type_text(&mut s, "foo");
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(s.workbench.editors().active().unwrap().cursor().0, 0);
    let screen = draw(&mut s, 100, 30).backend().to_string();
    let rows: Vec<&str> = screen.lines().collect();
    let first = rows
        .iter()
        .position(|row| row.contains("row 1 foo"))
        .expect("line 1 is drawn");
    assert!(rows[first].contains("row 1 foo Foo FOO"), "{screen}");
    assert!(rows[first + 1].contains("row 2 foo Foo FOO"), "{screen}");
    let bar = rows
        .iter()
        .position(|row| row.contains("of 180"))
        .expect("the bar is drawn");
    assert!(bar > first + 2, "the bar is below the match:\n{screen}");
    // A match further down: the bar is back at the top.
    for _ in 0..9 {
        press(&mut s, KeyCode::Enter, NONE);
    }
    assert_eq!(s.workbench.editors().active().unwrap().cursor().0, 3);
    let screen = draw(&mut s, 100, 30).backend().to_string();
    let bar = screen
        .lines()
        .position(|row| row.contains("of 180"))
        .unwrap();
    assert!(bar <= 3, "at the top of the file view:\n{screen}");
}

/// The find bar's status, with the bar open.
fn find_status(s: &AppState) -> Option<String> {
    let Some(Overlay::Prompt(prompt)) = s.overlay() else {
        panic!("find bar stays open");
    };
    prompt.status.clone()
}

/// A query pasted by mistake (a whole file into the find bar) is not
/// compiled on the UI loop: the bar says it is too long, where it said "no
/// matches" although the text held it (past the regex size limit) or took
/// seconds to compile.
#[test]
fn a_find_query_over_the_limit_says_it_is_too_long() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(hello_tui::editor::MAX_QUERY_CHARS + 1);
    let file = dir.path().join("a.txt");
    std::fs::write(&file, format!("{long}\n")).unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    press(&mut s, KeyCode::Char('f'), CTRL);
    handle_terminal_event(&mut s, Event::Paste(long.clone()));
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(
        find_status(&s).as_deref(),
        Some("the query is too long to search (over 1000 characters)")
    );
    press(&mut s, KeyCode::Backspace, NONE);
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(
        find_status(&s).as_deref(),
        Some("1 of 1"),
        "at the limit it searches"
    );
}

/// The next count the find bar's thread sends.
fn next_count(rx: &mut tokio::sync::mpsc::UnboundedReceiver<AppEvent>) -> AppEvent {
    loop {
        match rx.blocking_recv() {
            Some(event @ AppEvent::FindCounted(_)) => return event,
            Some(_) => continue,
            None => panic!("the count thread answers"),
        }
    }
}

/// Find in a file bigger than `COUNT_INLINE_BYTES` (7.8 MB): Enter selects
/// the match at once and the bar says where it is; the count of every match
/// arrives as an `AppEvent::FindCounted` and the bar shows "2 of 3". A count
/// made stale (a newer find, or the text changed under an unchanged query
/// and selection) is dropped, never shown.
#[test]
fn find_in_a_big_file_counts_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    let mut text: String = (0..600_000).map(|i| format!("line {i:07}\n")).collect();
    for line in [10, 300_000, 500_000] {
        let at = line * 13;
        text.replace_range(at..at + 6, "needle");
    }
    assert!(text.len() > hello_tui::editor::COUNT_INLINE_BYTES);
    std::fs::write(&file, &text).unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    s.workbench.agent_mut().events = Some(tx);
    press(&mut s, KeyCode::Char('f'), CTRL);
    type_text(&mut s, "needle");
    press(&mut s, KeyCode::Enter, NONE);
    let selection = |s: &AppState| s.workbench.editors().active().unwrap().selection();
    assert_eq!(selection(&s), Some(((10, 0), (10, 6))));
    assert_eq!(find_status(&s).as_deref(), Some("line 11, counting…"));
    let first = next_count(&mut rx);
    // A newer find before the first count is shown: that count is stale.
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(selection(&s), Some(((300_000, 0), (300_000, 6))));
    handle_app_event(&mut s, first);
    assert_eq!(find_status(&s).as_deref(), Some("line 300001, counting…"));
    let second = next_count(&mut rx);
    handle_app_event(&mut s, second);
    assert_eq!(find_status(&s).as_deref(), Some("2 of 3"));
    // The text changes while the count runs (as a reload would), the query
    // and the selection stay: the count was of another text.
    press(&mut s, KeyCode::Enter, NONE);
    assert_eq!(find_status(&s).as_deref(), Some("line 500001, counting…"));
    let third = next_count(&mut rx);
    let doc = s.workbench.editors_mut().active_mut().unwrap();
    doc.apply(EditCommand::Move(Motion::DocStart)).unwrap();
    doc.apply(EditCommand::InsertChar('z')).unwrap();
    doc.apply(EditCommand::GoToLine(500_001)).unwrap();
    for _ in 0..6 {
        doc.apply(EditCommand::Select(Motion::Right)).unwrap();
    }
    assert_eq!(selection(&s), Some(((500_000, 0), (500_000, 6))));
    handle_app_event(&mut s, third);
    assert_eq!(
        find_status(&s).as_deref(),
        Some("line 500001; changed while counting, Enter counts again"),
        "never the stale number, and never 'counting…' forever"
    );
}

/// A state whose crash recovery lives under `base` (as the binary's does
/// under the data dir): it claims its instance folder and asks about what
/// an earlier session of the workspace left.
/// The recovery timer fires; its writes (on the writer thread) are waited
/// for, so the test can look at the files.
fn recovery_due(s: &mut AppState) {
    handle_app_event(s, AppEvent::RecoveryDue);
    s.workbench.editors_mut().recovery_writer.flush();
}

fn recovering_state(root: &Path, base: &Path) -> AppState {
    let mut s = state(root);
    editors::claim_recovery(&mut s, base);
    s
}

fn recovery_paths(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map_or_else(
        |_| Vec::new(),
        |entries| {
            entries
                .flatten()
                .flat_map(|e| {
                    let path = e.path();
                    if path.is_dir() {
                        recovery_paths(&path)
                    } else if path.to_string_lossy().ends_with("recovery.json") {
                        vec![path]
                    } else {
                        Vec::new()
                    }
                })
                .collect()
        },
    )
}

fn recovery_files(base: &Path) -> usize {
    recovery_paths(base).len()
}

/// Gives every recovery file the newest one's time: written across a
/// second boundary (a loaded machine), they would be asked about in
/// another order.
fn written_in_the_same_second(base: &Path) {
    let files = recovery_paths(base);
    let mut records: Vec<serde_json::Value> = files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect();
    let newest = records
        .iter()
        .map(|r| r["written_at"].as_u64().unwrap())
        .max();
    for (file, record) in files.iter().zip(&mut records) {
        record["written_at"] = newest.into();
        std::fs::write(file, serde_json::to_vec(record).unwrap()).unwrap();
    }
}

/// Leaves unsaved edits in each file and "crashes" (drops the state
/// without saving).
fn crash_with_edits(root: &Path, base: &Path, files: &[&Path]) {
    let mut s = recovering_state(root, base);
    for file in files {
        open(&mut s, file);
        type_text(&mut s, "unsaved ");
        recovery_due(&mut s);
    }
    drop(s);
}

#[test]
fn recovery_is_written_when_due_and_restored_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let recovery = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "saved\n").unwrap();
    let mut s = recovering_state(dir.path(), recovery.path());
    open(&mut s, &file);
    assert_eq!(
        s.workbench.editors().recovery_due_at(),
        None,
        "no timer while clean"
    );
    type_text(&mut s, "unsaved ");
    assert!(s.workbench.editors().recovery_due_at().is_some());
    recovery_due(&mut s);
    assert_eq!(
        s.workbench.editors().recovery_due_at(),
        None,
        "nothing pending after the write"
    );
    // Simulated crash: the state is dropped without saving.
    drop(s);

    let mut s = recovering_state(dir.path(), recovery.path());
    assert_eq!(
        asking(&s),
        Some(Question::RestoreRecovery { index: 0, count: 1 })
    );
    // Typed before the question was drawn: meant for the composer, not an
    // answer (issue 14: "why" once became "/lsp-restart" and a `y`).
    s.focus = PaneId::Conversation;
    type_text(&mut s, "why");
    assert_eq!(s.conversation.composer.lines(), ["why"]);
    assert!(
        matches!(s.overlay(), Some(Overlay::Confirm(_))),
        "still asking"
    );
    hello_tui::app::update::before_frame(&mut s);
    press(&mut s, KeyCode::Char('y'), NONE);
    assert_eq!(active_text(&s), "unsaved saved\n");
    assert!(is_dirty(&s));
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "unsaved saved\n");
    assert_eq!(
        recovery_files(recovery.path()),
        0,
        "saving removes the recovery file"
    );
}

/// Issue 14, item 1: the question names each file with its path and age,
/// and each gets its own answer — restore one, discard another, keep a
/// third for the next start.
#[test]
fn recovered_buffers_are_asked_about_one_by_one() {
    let dir = fixed_dir("recovery-choices");
    let base = tempfile::tempdir().unwrap();
    let names = ["app.py", "lib.py", "notes.md"];
    let files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    for file in &files {
        std::fs::write(file, "saved\n").unwrap();
    }
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    crash_with_edits(&dir, base.path(), &refs);
    assert_eq!(recovery_files(base.path()), 3);
    written_in_the_same_second(base.path());

    let mut s = recovering_state(&dir, base.path());
    let terminal = draw(&mut s, 80, 24);
    let text = terminal.backend().to_string();
    assert!(text.contains("(1") && text.contains("of 3)"), "{text}");
    assert!(text.contains("just now"), "{text}");
    let asked: Vec<String> = s
        .workbench
        .editors()
        .found_recoveries
        .iter()
        .map(|r| r.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        text.contains(&asked[0]),
        "the first question names its file: {text}"
    );
    insta::assert_snapshot!("recovery_question", text);

    press(&mut s, KeyCode::Char('y'), NONE);
    draw(&mut s, 80, 24);
    press(&mut s, KeyCode::Char('d'), NONE);
    draw(&mut s, 80, 24);
    press(&mut s, KeyCode::Char('n'), NONE);
    assert_eq!(s.overlay(), None);
    assert_eq!(s.workbench.editors().tabs.len(), 1);
    assert!(s.workbench.editors().tabs[0].path().ends_with(&asked[0]));
    let summary = &s.workbench.transcript().last().unwrap().text;
    for (name, verb) in [
        (&asked[0], "restored"),
        (&asked[1], "discarded"),
        (&asked[2], "kept for the next start"),
    ] {
        assert!(summary.contains(&format!("{name} {verb}")), "{summary}");
    }
    drop(s);
    // The restored one (still unsaved, never ticked) and the kept one.
    let s = recovering_state(&dir, base.path());
    let again: Vec<String> = s
        .workbench
        .editors()
        .found_recoveries
        .iter()
        .map(|r| r.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(again.contains(&asked[2]), "kept: {again:?}");
    assert!(!again.contains(&asked[1]), "discarded: {again:?}");
}

/// Edits kept for the next start stay kept while the same file is open and
/// edited in this session (its new edits are recovered under their own
/// name), and two crashed sessions' edits of one file are both asked about.
#[test]
fn kept_recoveries_survive_opening_and_editing_their_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    std::fs::write(&file, "saved\n").unwrap();
    crash_with_edits(dir.path(), base.path(), &[&file]);

    let mut s = recovering_state(dir.path(), base.path());
    hello_tui::app::update::before_frame(&mut s);
    press(&mut s, KeyCode::Char('n'), NONE);
    assert_eq!(s.overlay(), None);
    open(&mut s, &file);
    press(&mut s, KeyCode::Right, NONE);
    assert_eq!(
        recovery_files(base.path()),
        1,
        "kept, not discarded by a clean tab"
    );
    type_text(&mut s, "other ");
    recovery_due(&mut s);
    assert_eq!(
        recovery_files(base.path()),
        2,
        "this session's edits beside the kept ones"
    );
    drop(s);

    let s = recovering_state(dir.path(), base.path());
    let texts: Vec<&str> = s
        .workbench
        .editors()
        .found_recoveries
        .iter()
        .map(|r| r.text.as_str())
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts.contains(&"unsaved saved\n"), "{texts:?}");
    assert!(texts.contains(&"sother aved\n"), "{texts:?}");
}

/// Issue 14, item 1: edits the user threw away (quit anyway; undo back to
/// the disk text) never come back, and another project never sees them.
#[test]
fn thrown_away_edits_do_not_come_back_and_stay_in_their_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    std::fs::write(&file, "saved\n").unwrap();

    // Another project: not asked about this one's buffers.
    crash_with_edits(dir.path(), base.path(), &[&file]);
    let other = tempfile::tempdir().unwrap();
    let s = recovering_state(other.path(), base.path());
    assert_eq!(s.overlay(), None);
    drop(s);

    // Undo back to the disk text: the recovery file goes at once.
    let mut s = recovering_state(dir.path(), base.path());
    hello_tui::app::update::before_frame(&mut s);
    press(&mut s, KeyCode::Char('y'), NONE);
    assert!(is_dirty(&s));
    assert_eq!(recovery_files(base.path()), 1);
    for _ in 0.."unsaved ".len() {
        press(&mut s, KeyCode::Char('z'), CTRL);
    }
    assert!(!is_dirty(&s), "{}", active_text(&s));
    assert_eq!(recovery_files(base.path()), 0);

    // Quit and discard them: nothing is offered next time.
    type_text(&mut s, "more ");
    recovery_due(&mut s);
    assert_eq!(recovery_files(base.path()), 1);
    press(&mut s, KeyCode::Char('q'), CTRL);
    hello_tui::app::update::before_frame(&mut s);
    assert!(matches!(
        asking(&s),
        Some(Question::QuitWithUnsavedEdits { .. })
    ));
    press(&mut s, KeyCode::Char('d'), NONE);
    assert!(s.should_quit);
    assert_eq!(recovery_files(base.path()), 0);
    drop(s);
    let s = recovering_state(dir.path(), base.path());
    assert_eq!(s.overlay(), None);
}

#[test]
fn the_snapshot_request_carries_the_active_editor_and_tabs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    std::fs::write(&file, PYTHON).unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    let before = snapshot::scene_key(&s);
    press(&mut s, KeyCode::Down, SHIFT);
    type_text(&mut s, "#");
    assert_ne!(snapshot::scene_key(&s), before, "edits change the scene");
    let request = snapshot::request(&s);
    let editor = request.source.active_editor.expect("active editor");
    let canonical = std::fs::canonicalize(&file).unwrap();
    assert_eq!(editor.path, canonical.to_string_lossy());
    assert_eq!(editor.language_id.as_deref(), Some("python"));
    assert_eq!(editor.is_dirty, Some(true));
    assert_eq!(editor.cursor.map(|c| (c.line, c.character)), Some((0, 1)));
    assert!(editor.text.unwrap().starts_with("#\n\ndef greet"));
    let tabs = request.source.open_tabs.expect("tabs");
    assert_eq!(tabs.len(), 1);
    assert_eq!(tabs[0].is_dirty, Some(true));
    assert_eq!(request.source.visible_editors.unwrap(), vec![editor.path]);
}

#[test]
fn big_buffers_send_a_window_around_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.py");
    let text: String = (0..10_000).map(|i| format!("x{i} = {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let mut s = state(dir.path());
    editors::open(&mut s, &file, Some((5_000, 1)));
    let editor = snapshot::request(&s).source.active_editor.unwrap();
    let start = editor.text_start_line.expect("a window");
    assert!(start > 4_000 && start < 4_999, "{start}");
    assert_eq!(editor.line_count, Some(10_000));
    let window = editor.text.unwrap();
    assert!(window.lines().count() < 1_000);
    assert!(window.contains("x4999 = 4999"));
}

#[test]
fn snapshot_python_file_highlighted_with_cursor_selection_and_dirty_marker() {
    let dir = fixed_dir("python");
    let file = dir.join("app.py");
    std::fs::write(&file, PYTHON).unwrap();
    let mut s = state(&dir);
    open(&mut s, &file);
    press(&mut s, KeyCode::Down, NONE);
    press(&mut s, KeyCode::Down, NONE);
    press(&mut s, KeyCode::Down, NONE);
    type_text(&mut s, "# ");
    press(&mut s, KeyCode::Right, KeyModifiers::CONTROL | SHIFT);
    let terminal = draw(&mut s, 100, 24);
    insta::assert_snapshot!("workbench_python_text", terminal.backend().to_string());
    let pane = file_view_rect(&s);
    insta::assert_debug_snapshot!(
        "file_view_python_styles",
        region(terminal.backend().buffer(), pane)
    );
}

#[test]
fn snapshot_tab_bar_with_dirty_and_changed_on_disk_tabs() {
    let dir = fixed_dir("tabs");
    for name in ["clean.rs", "dirty.py", "theirs.txt"] {
        std::fs::write(dir.join(name), "line\n").unwrap();
    }
    let mut s = state(&dir);
    open(&mut s, &dir.join("clean.rs"));
    open(&mut s, &dir.join("theirs.txt"));
    type_text(&mut s, "x");
    std::fs::write(dir.join("theirs.txt"), "changed\n").unwrap();
    disk_event(&mut s, &dir.join("theirs.txt"));
    open(&mut s, &dir.join("dirty.py"));
    type_text(&mut s, "y");
    let terminal = draw(&mut s, 100, 24);
    let pane = file_view_rect(&s);
    let tabs = Rect::new(pane.x, pane.y, pane.width, 3);
    insta::assert_debug_snapshot!("tab_bar_styles", region(terminal.backend().buffer(), tabs));
}

#[test]
fn snapshot_picker_with_highlighted_matches() {
    let dir = fixed_dir("picker");
    let mut s = state(&dir);
    index(
        &mut s,
        &[
            "README.md",
            "src/app/main.py",
            "src/main.rs",
            "tests/test_main.py",
        ],
    );
    press(&mut s, KeyCode::Char('p'), CTRL);
    type_text(&mut s, "mainpy");
    let terminal = draw(&mut s, 80, 20);
    insta::assert_snapshot!("picker_text", terminal.backend().to_string());
    let area = ui::pane::centered(Rect::new(0, 0, 80, 20), 70, 70);
    let rows = Rect::new(area.x, area.y, area.width, 5);
    insta::assert_debug_snapshot!("picker_styles", region(terminal.backend().buffer(), rows));
}

#[test]
fn snapshot_conflict_choices_and_diff() {
    let dir = fixed_dir("conflict");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let mut s = state(&dir);
    open(&mut s, &file);
    press(&mut s, KeyCode::Down, NONE);
    type_text(&mut s, "my ");
    std::fs::write(&file, "one\nTWO\nthree\n").unwrap();
    disk_event(&mut s, &file);
    let terminal = draw(&mut s, 100, 24);
    insta::assert_snapshot!("conflict_marked", terminal.backend().to_string());
    press(&mut s, KeyCode::Char('r'), CTRL);
    let terminal = draw(&mut s, 100, 24);
    insta::assert_snapshot!("conflict_choices", terminal.backend().to_string());
    press(&mut s, KeyCode::Char('d'), NONE);
    let terminal = draw(&mut s, 100, 24);
    insta::assert_snapshot!("conflict_diff", terminal.backend().to_string());
    // Issue 14, item 11: Esc leaves the diff for the choices, so the next
    // key (`t`, load theirs) is an answer, not text typed into the file.
    press(&mut s, KeyCode::Esc, NONE);
    assert_eq!(s.overlay(), Some(&Overlay::Conflict(Conflict)));
    press(&mut s, KeyCode::Char('t'), NONE);
    assert!(matches!(asking(&s), Some(Question::LoadTheirs { .. })));
    assert_eq!(active_text(&s), "one\nmy two\nthree\n");
    // No to loading theirs: back to the choices; Esc there closes them.
    press(&mut s, KeyCode::Esc, NONE);
    assert_eq!(s.overlay(), Some(&Overlay::Conflict(Conflict)));
    press(&mut s, KeyCode::Esc, NONE);
    assert_eq!(s.overlay(), None);
}

#[test]
fn mouse_clicks_tabs_places_the_cursor_and_drags_a_selection() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "first line\nsecond line\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "other\n").unwrap();
    let mut s = state(dir.path());
    open(&mut s, &dir.path().join("a.txt"));
    open(&mut s, &dir.path().join("b.txt"));
    draw(&mut s, 120, 40);
    let pane = file_view_rect(&s);
    let text = hello_tui::screen::file_view::text_area(pane);
    let mouse = |kind, column, row| {
        Event::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: NONE,
        })
    };
    // " a.txt │ b.txt │": the first tab starts at the left edge.
    handle_terminal_event(
        &mut s,
        mouse(
            MouseEventKind::Down(MouseButton::Left),
            text.x + 2,
            text.y - 1,
        ),
    );
    assert_eq!(s.workbench.editors().active, 0);
    draw(&mut s, 120, 40);
    let layout = hello_tui::editor::layout(s.workbench.editors().active().unwrap(), text);
    let x0 = layout.text.x;
    handle_terminal_event(
        &mut s,
        mouse(
            MouseEventKind::Down(MouseButton::Left),
            x0 + 3,
            layout.text.y + 1,
        ),
    );
    assert_eq!(s.workbench.editors().active().unwrap().cursor(), (1, 3));
    handle_terminal_event(
        &mut s,
        mouse(
            MouseEventKind::Drag(MouseButton::Left),
            x0 + 6,
            layout.text.y + 1,
        ),
    );
    assert_eq!(
        s.workbench.editors().active().unwrap().selection(),
        Some(((1, 3), (1, 6)))
    );
}

/// Hostile bytes in a model message and in a file on disk are drawn inert:
/// the frame equals the frame of the same state with the hostile parts
/// removed everywhere outside the two panes, and no escape survives.
#[test]
fn hostile_sequences_stay_inside_their_panes() {
    use hello_tui::workbench::transcript::{PaneEntry, Speaker};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let hostile = "title\u{1b}]0;pwned\u{7} clear\u{1b}[2J clip\u{1b}]52;c;aGk=\u{7} paste\u{1b}[201~ cr\rback\u{8}\u{8}x";
    std::fs::write(root.join("evil.py"), format!("x = '{hostile}'\n")).unwrap();
    let settings = hello_tui::config::Settings::defaults();
    let mut s = hello_tui::app::AppState::new(root.clone(), settings);
    s.workbench
        .transcript_mut()
        .push(PaneEntry::new(Speaker::Assistant, hostile));
    hello_tui::app::editors::open(&mut s, &root.join("evil.py"), None);
    let terminal = draw(&mut s, 100, 30);
    let screen = terminal.backend().to_string();
    assert!(!screen.contains('\u{1b}') && !screen.contains('\u{7}') && !screen.contains('\u{8}'));
    // The conversation (left 40 columns) drops whole sequences; the file
    // view shows the file's bytes faithfully, each control as a visible mark.
    let conversation: String = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().take(40).collect::<String>())
        .collect();
    assert!(!conversation.contains("pwned"), "{conversation}");
    assert!(
        screen.contains('\u{fffd}'),
        "controls in the file are marked visibly"
    );
    // Every row still has the layout's borders where they belong: nothing
    // moved the cursor or cleared the screen.
    for line in screen.lines().take(29) {
        assert_eq!(
            unicode_width::UnicodeWidthStr::width(line.trim_matches('"')),
            100,
            "{line}"
        );
    }
    // The status bar names the temp workspace: leave it out.
    let panes: Vec<&str> = screen.lines().take(29).collect();
    insta::assert_snapshot!("hostile_sequences", panes.join("\n"));
}

/// Diagnostics mark their lines in the gutter (the most severe icon) and
/// underline their ranges in the severity colour.
#[test]
fn gutter_markers_and_underlines_for_diagnostics() {
    use hello_tui::diagnostics::Severity;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("app.py");
    std::fs::write(
        &file,
        "import os\n\ndef f():\n    return 你好 + undefined_name\n",
    )
    .unwrap();
    let settings = hello_tui::config::Settings::defaults();
    let mut s = hello_tui::app::AppState::new(root.clone(), settings);
    hello_tui::app::editors::open(&mut s, &file, None);
    let diag = |line, start, end, severity, message: &str| {
        ruff_diagnostic(&file, line, start..end, severity, message)
    };
    publish_ruff(
        &mut s,
        &file,
        vec![
            diag(0, 7, 9, Severity::Warning, "`os` imported but unused"),
            diag(
                3,
                16,
                30,
                Severity::Error,
                "Undefined name `undefined_name`",
            ),
            diag(
                3,
                11,
                13,
                Severity::Hint,
                "wide characters before the error",
            ),
        ],
    );
    // Frames until highlighting is done: one frame's budget is 12 ms, which
    // a loaded machine can spend before the last line is coloured.
    let terminal = draw(&mut s, 100, 30);
    let buffer = terminal.backend().buffer();
    // The file view's rows: find the line with the error and check the
    // underline starts under `undefined_name` (after two wide characters).
    let row = (0..30u16)
        .find(|y| {
            (0..100u16)
                .map(|x| buffer[(x, *y)].symbol())
                .collect::<String>()
                .contains("undefined_name")
        })
        .expect("the error line is visible");
    let text: String = (0..100u16).map(|x| buffer[(x, row)].symbol()).collect();
    assert!(text.contains('✖'), "gutter icon on the error line: {text}");
    let underlined: Vec<u16> = (0..100u16)
        .filter(|x| {
            buffer[(*x, row)]
                .modifier
                .contains(ratatui::style::Modifier::UNDERLINED)
        })
        .collect();
    let start = *underlined.iter().max_by_key(|x| **x).unwrap() - 13;
    let word: String = (start..start + 14)
        .map(|x| buffer[(x, row)].symbol())
        .collect();
    assert_eq!(word, "undefined_name");
    let region = ratatui::layout::Rect::new(40, 0, 60, 8);
    let mut out = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 60, 8));
    for y in 0..8 {
        for x in 0..60 {
            out[(x, y)] = buffer[(region.x + x, region.y + y)].clone();
        }
    }
    insta::assert_debug_snapshot!("gutter_markers", out);
}

/// A click on a row of the diagnostics pane opens that problem's file at its
/// line, also after the list has scrolled: the click lands on what is drawn.
#[test]
fn clicking_a_diagnostic_opens_it() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    use hello_tui::diagnostics::{Diagnostic, DiagnosticsEvent, Position, Range, Severity};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut s = state(&root);
    for name in ["a.py", "b.py"] {
        let path = root.join(name);
        std::fs::write(&path, "x = 1\n".repeat(40)).unwrap();
        let diagnostics = (0..12)
            .map(|line| Diagnostic {
                path: path.as_path().into(),
                range: Range::new(Position::new(line * 3, 0), Position::new(line * 3, 1)),
                severity: Severity::Warning,
                message: format!("{name} problem {line}").into(),
                source: "ruff".into(),
                code: None,
                related: Vec::new(),
            })
            .collect();
        hello_tui::app::diagnostics::apply(
            &mut s,
            DiagnosticsEvent::Published {
                source: "ruff".into(),
                path,
                diagnostics,
            },
        );
    }
    // Move the selection to the end so the list scrolls.
    s.diagnostics.cursor.selected = s.diagnostics.rows.len() - 1;
    let terminal = draw(&mut s, 120, 40);
    let buffer = terminal.backend().buffer().clone();
    let row_of = |needle: &str| {
        (0..buffer.area.height).find_map(|y| {
            let line: String = (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_owned())
                .collect();
            line.find(needle)
                .map(|x| (line[..x].chars().count() as u16, y))
        })
    };
    let (column, row) = row_of("b.py problem 9").expect("the row is drawn");
    assert!(row_of("a.py problem 0").is_none(), "the list has scrolled");
    handle_terminal_event(
        &mut s,
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }),
    );
    let doc = s.workbench.editors().active().expect("a file opened");
    assert!(doc.path().ends_with("b.py"), "{:?}", doc.path());
    assert_eq!(doc.cursor().0, 27, "at the problem's line");
}

/// F8 walks from the editor's cursor: at 1:1 with problems at 1:8, 2:8 and
/// 10:5 it goes to 1:8 first (it used to step past the selected first row to
/// 2:8), then 2:8, then 10:5, then wraps; Shift+F8 walks back (issue 14,
/// item 8).
#[test]
fn f8_goes_to_the_first_problem_after_the_cursor() {
    use hello_tui::diagnostics::Severity;
    let root = std::fs::canonicalize(fixed_dir("f8")).unwrap();
    let file = root.join("app.py");
    std::fs::write(&file, "import os\nimport re\n\n\n\n\n\n\n\nx = 1 + y\n").unwrap();
    let mut s = state(&root);
    open(&mut s, &file);
    let diag = |line, character, message: &str| {
        ruff_diagnostic(
            &file,
            line,
            character..character + 2,
            Severity::Warning,
            message,
        )
    };
    publish_ruff(
        &mut s,
        &file,
        vec![
            diag(0, 7, "`os` imported but unused"),
            diag(1, 7, "`re` imported but unused"),
            diag(9, 4, "undefined name `y`"),
        ],
    );
    let cursor = |s: &AppState| {
        let (line, column) = s
            .workbench
            .editors()
            .active()
            .expect("a file is open")
            .cursor();
        (line + 1, column + 1)
    };
    assert_eq!(cursor(&s), (1, 1));
    press(&mut s, KeyCode::F(8), NONE);
    let mut visited = vec![cursor(&s)];
    // The picture: the cursor on `os` (1:8), the status bar saying so and
    // the first row selected in the Diagnostics pane.
    let terminal = draw(&mut s, 100, 30);
    insta::assert_snapshot!("f8_first_problem", terminal.backend().to_string());
    for _ in 0..3 {
        press(&mut s, KeyCode::F(8), NONE);
        visited.push(cursor(&s));
    }
    assert_eq!(visited, vec![(1, 8), (2, 8), (10, 5), (1, 8)]);
    press(&mut s, KeyCode::F(8), SHIFT);
    assert_eq!(
        cursor(&s),
        (10, 5),
        "Shift+F8 wraps back to the last problem"
    );
}

/// Issue 17: the lines the last cell or agent answer changed through
/// `fs.write`/`fs.edit` are marked in the file view's gutter (a bar in the
/// colour the conversation shows added lines in), until the user edits the
/// file; a new answer's writes replace the marks.
#[test]
fn the_lines_an_answer_changed_are_marked_until_the_user_edits() {
    use hello_tui::kernel::caps::{FsWritten, Prior};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.py");
    let before = "a = 1\nb = 2\nc = 3\n";
    let after = "a = 1\nb = 20\nc = 3\nd = 4\n";
    std::fs::write(&file, before).unwrap();
    let mut s = state(dir.path());
    open(&mut s, &file);
    std::fs::write(&file, after).unwrap();
    let path = std::fs::canonicalize(&file).unwrap();
    handle_app_event(
        &mut s,
        AppEvent::FsWritten(FsWritten {
            path: path.clone(),
            before: Prior::Bytes(before.as_bytes().to_vec()),
            after: after.as_bytes().to_vec(),
        }),
    );
    assert_eq!(active_text(&s), after);
    let terminal = draw(&mut s, 100, 20);
    let file_view = s.layout().file_view.unwrap();
    let shown = region(terminal.backend().buffer(), file_view);
    insta::assert_debug_snapshot!(shown);
    let marked: Vec<String> = (0..shown.area.height)
        .map(|y| {
            (0..shown.area.width)
                .map(|x| shown[(x, y)].symbol())
                .collect::<String>()
        })
        .filter(|row| row.contains('▎'))
        .collect();
    assert_eq!(marked.len(), 2, "b = 20 and d = 4: {marked:#?}");
    assert!(
        marked[0].contains("b = 20") && marked[1].contains("d = 4"),
        "{marked:#?}"
    );

    type_text(&mut s, "x");
    let terminal = draw(&mut s, 100, 20);
    let shown = region(terminal.backend().buffer(), file_view);
    let still: usize = (0..shown.area.height)
        .filter(|&y| (0..shown.area.width).any(|x| shown[(x, y)].symbol() == "▎"))
        .count();
    assert_eq!(still, 0, "the user's edit clears the marks");
}

/// A file with another name (a hard link) is saved into itself, so both
/// names read the new text (a rename left the other with the old one,
/// silently); a file without its owner's write bit is not saved (root
/// writes anything, so the rename went through) and the status says how
/// to allow it. A tester found both.
#[test]
fn a_save_keeps_hard_links_and_respects_a_read_only_file() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let file = ws.join("hard.txt");
    std::fs::write(&file, "hard\n").unwrap();
    let other = dir.path().join("other-name.txt");
    std::fs::hard_link(&file, &other).unwrap();
    let mut s = state(&ws);
    open(&mut s, &file);
    type_text(&mut s, "X");
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert!(!is_dirty(&s));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "Xhard\n");
    assert_eq!(std::fs::metadata(&file).unwrap().nlink(), 2);

    let ro = ws.join("ro.txt");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    open(&mut s, &ro);
    type_text(&mut s, "X");
    press(&mut s, KeyCode::Char('s'), CTRL);
    assert!(is_dirty(&s));
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    let status = s.workbench.editors().status.clone().unwrap_or_default();
    assert!(
        status.contains("read-only on disk (mode 444)") && status.contains("chmod u+w"),
        "{status}"
    );
}

/// With more tabs than fit, the tab bar starts at a later tab so the
/// active one is whole on it, and marks say tabs are hidden (a tester's
/// active eighth tab was not shown, and nothing said more existed).
#[test]
fn the_tab_bar_shows_the_active_tab_when_not_all_fit() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (1..=9)
        .map(|i| format!("a_rather_long_name_{i}.txt"))
        .collect();
    for name in &names {
        std::fs::write(dir.path().join(name), "x\n").unwrap();
    }
    let mut s = state(dir.path());
    for name in &names {
        open(&mut s, &dir.path().join(name));
    }
    let tab_row = |s: &mut AppState| {
        let screen = draw(s, 120, 30).backend().to_string();
        // The pane's title names the active file too: the tab bar is the
        // row under it.
        screen
            .lines()
            .filter(|row| row.contains("a_rather_long_name_"))
            .nth(1)
            .map(str::to_owned)
            .unwrap()
    };
    let row = tab_row(&mut s);
    assert!(
        row.contains("a_rather_long_name_9.txt"),
        "the active tab: {row}"
    );
    assert!(row.contains('‹'), "tabs hidden before it: {row}");
    assert!(!row.contains("a_rather_long_name_1.txt"), "{row}");
    insta::assert_snapshot!("tab_bar_scrolled_to_the_active_tab", row);
    // The first tab active again: the row starts there, and says more follow.
    for _ in 0..8 {
        press(&mut s, KeyCode::PageUp, CTRL);
    }
    assert_eq!(s.workbench.editors().active, 0);
    let row = tab_row(&mut s);
    assert!(row.contains("a_rather_long_name_1.txt"), "{row}");
    assert!(row.contains('›'), "tabs hidden after it: {row}");
    assert!(!row.contains('‹'), "{row}");
}

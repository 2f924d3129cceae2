//! Integration tests of the editor core on real files in temp dirs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use hello_tui::editor::{
    DiskChange, DiskState, Document, EditCommand, EditorError, FileViewStyles, Highlighter,
    LineEnding, Motion, ReadOnlyReason, RecoveryWriter, cursor_screen_position, list_recoveries,
    render_file_view,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;

fn write(dir: &Path, name: &str, content: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    fs::write(&p, content).unwrap();
    p
}

fn typed(doc: &mut Document, s: &str) {
    for c in s.chars() {
        doc.apply(EditCommand::InsertChar(c)).unwrap();
    }
}

/// Make the next write visibly newer even on coarse-mtime filesystems.
fn write_later(path: &Path, content: &[u8]) {
    std::thread::sleep(Duration::from_millis(20));
    fs::write(path, content).unwrap();
}

mod editing {
    use super::*;

    #[test]
    fn edit_makes_dirty_and_save_makes_clean() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"hello\nworld\n");
        let mut doc = Document::open(&p).unwrap();
        assert!(!doc.is_dirty());
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        typed(&mut doc, "!");
        assert!(doc.is_dirty());
        assert_eq!(doc.cursor(), (0, 6));
        doc.save().unwrap();
        assert!(!doc.is_dirty());
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello!\nworld\n");
    }

    #[test]
    fn undo_back_to_saved_text_is_clean_and_redo_dirty_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"abc\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "xy");
        doc.apply(EditCommand::InsertNewline).unwrap();
        assert!(doc.is_dirty());
        for _ in 0..3 {
            doc.apply(EditCommand::Undo).unwrap();
        }
        assert_eq!(doc.text(), "abc");
        assert!(!doc.is_dirty(), "undo back to the saved text is clean");
        doc.apply(EditCommand::Redo).unwrap();
        assert!(doc.is_dirty());
        // Retyping the same text by hand is clean too: dirty compares text.
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "z");
        doc.apply(EditCommand::DeleteBack).unwrap();
        assert!(!doc.is_dirty());
    }

    #[test]
    fn dirty_stays_exact_across_edits_on_several_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"a\nb\nc\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "1");
        doc.apply(EditCommand::GoToLine(3)).unwrap();
        typed(&mut doc, "2");
        doc.apply(EditCommand::DeleteBack).unwrap();
        assert!(doc.is_dirty(), "line 1 still differs");
        doc.apply(EditCommand::GoToLine(1)).unwrap();
        doc.apply(EditCommand::DeleteForward).unwrap();
        assert!(!doc.is_dirty(), "every line is back to the saved text");
        doc.apply(EditCommand::InsertNewline).unwrap();
        assert!(doc.is_dirty());
        doc.apply(EditCommand::DeleteBack).unwrap();
        assert!(!doc.is_dirty());
    }

    #[test]
    fn selection_copy_cut_paste_and_select_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"one two\nthree\n");
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::Select(Motion::WordRight)).unwrap();
        assert_eq!(doc.selection(), Some(((0, 0), (0, 3))));
        let out = doc.apply(EditCommand::Copy).unwrap();
        assert_eq!(out.copied.as_deref(), Some("one"));
        doc.apply(EditCommand::Select(Motion::Down)).unwrap();
        let out = doc.apply(EditCommand::Cut).unwrap();
        assert_eq!(out.copied.as_deref(), Some("one two\nthr"));
        assert_eq!(doc.text(), "ee");
        doc.apply(EditCommand::Paste("X\r\nY".into())).unwrap();
        assert_eq!(doc.text(), "X\nYee");
        doc.apply(EditCommand::SelectAll).unwrap();
        assert_eq!(doc.selected_text().as_deref(), Some("X\nYee"));
        // Cut without a selection takes the whole line, like VS Code.
        doc.apply(EditCommand::Move(Motion::DocStart)).unwrap();
        let out = doc.apply(EditCommand::Cut).unwrap();
        assert_eq!(out.copied.as_deref(), Some("X\n"));
        assert_eq!(doc.text(), "Yee");
    }

    #[test]
    fn find_next_and_previous_select_matches_and_wrap() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"foo bar\nbar Foo\nfoo\n");
        let mut doc = Document::open(&p).unwrap();
        let r = doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        let r = r.search.unwrap();
        assert_eq!(
            r.matches.len(),
            3,
            "smart case: lowercase query ignores case"
        );
        assert_eq!(r.current, Some(1), "the match at the cursor is skipped");
        assert_eq!(doc.selection(), Some(((1, 4), (1, 7))));
        doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        assert_eq!(doc.cursor(), (2, 3));
        let r = doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        assert_eq!(r.search.unwrap().current, Some(0), "wraps to the top");
        let r = doc.apply(EditCommand::FindPrev("foo".into())).unwrap();
        assert_eq!(r.search.unwrap().current, Some(2), "wraps to the bottom");
        let r = doc.apply(EditCommand::FindNext("nothing".into())).unwrap();
        assert_eq!(r.search.unwrap().current, None);
    }

    #[test]
    fn go_to_line_page_moves_and_tab() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let p = write(dir.path(), "a.txt", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(50)).unwrap();
        assert_eq!(doc.cursor(), (49, 0));
        // A page is what the view shows, less one line kept in view.
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        doc.prepare_frame(&hl, Rect::new(0, 0, 80, 31));
        let page = doc.viewport().height - 1;
        doc.apply(EditCommand::Move(Motion::PageDown)).unwrap();
        assert_eq!(doc.cursor().0, 49 + page);
        for _ in 0..4 {
            doc.apply(EditCommand::Move(Motion::PageUp)).unwrap();
        }
        assert_eq!(doc.cursor().0, 0);
        doc.apply(EditCommand::GoToLine(100_000)).unwrap();
        assert_eq!(doc.cursor(), (99, 0));
        doc.apply(EditCommand::InsertTab).unwrap();
        assert_eq!(doc.line(99).as_deref(), Some("    line 100"));
        doc.apply(EditCommand::DeleteWordBack).unwrap();
        assert_eq!(doc.line(99).as_deref(), Some("line 100"));
    }
}

mod saving {
    use super::*;

    #[test]
    fn atomic_save_keeps_crlf_missing_final_newline_and_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "w.txt", b"a\r\nb\r\nc");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let mut doc = Document::open(&p).unwrap();
        assert_eq!(doc.line_ending(), LineEnding::CrLf);
        assert!(!doc.has_final_newline());
        doc.apply(EditCommand::Move(Motion::DocEnd)).unwrap();
        doc.apply(EditCommand::InsertNewline).unwrap();
        typed(&mut doc, "d");
        doc.save().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"a\r\nb\r\nc\r\nd");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file left behind");
    }

    #[test]
    fn save_into_unwritable_directory_is_an_error_and_stays_dirty() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("ro");
        fs::create_dir(&sub).unwrap();
        let p = write(&sub, "f.txt", b"x\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "y");
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o555)).unwrap();
        // root ignores directory permissions; /proc refuses new files to
        // everyone, so the assertion holds either way.
        let probe = sub.join("probe");
        let root = fs::write(&probe, b"").is_ok();
        let _ = fs::remove_file(&probe);
        let result = if root {
            let mut doc = Document::from_text("/proc/hello-tui-editor-test.txt", "x");
            typed(&mut doc, "y");
            let r = doc.save();
            assert!(doc.is_dirty());
            r
        } else {
            doc.save()
        };
        fs::set_permissions(&sub, fs::Permissions::from_mode(0o755)).unwrap();
        let err = result.unwrap_err();
        assert!(matches!(err, EditorError::Write { .. }), "{err}");
        assert!(err.to_string().starts_with("cannot save"), "{err}");
        assert!(doc.is_dirty());
        assert_eq!(fs::read_to_string(&p).unwrap(), "x\n");
    }

    #[test]
    fn save_after_directory_is_gone_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("gone");
        fs::create_dir(&sub).unwrap();
        let p = write(&sub, "f.txt", b"x\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "y");
        fs::remove_dir_all(&sub).unwrap();
        assert!(doc.save().is_err());
        assert!(doc.is_dirty());
    }

    #[test]
    fn deleted_on_disk_keeps_buffer_and_save_recreates() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "d.txt", b"keep me\n");
        let mut doc = Document::open(&p).unwrap();
        fs::remove_file(&p).unwrap();
        assert_eq!(doc.check_disk(), DiskChange::Deleted);
        assert_eq!(doc.disk_state(), &DiskState::DeletedOnDisk);
        assert_eq!(doc.text(), "keep me");
        assert!(doc.notice().unwrap().contains("deleted on disk"));
        doc.save().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "keep me\n");
        assert_eq!(doc.disk_state(), &DiskState::InSync);
    }
}

mod external {
    use super::*;

    #[test]
    fn external_write_to_clean_buffer_reloads_keeping_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "e.txt", b"one\ntwo\nthree\n");
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(3)).unwrap();
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        write_later(&p, b"ONE\nTWO\nTHREE\nFOUR\n");
        assert_eq!(doc.check_disk(), DiskChange::Reloaded);
        assert_eq!(doc.text(), "ONE\nTWO\nTHREE\nFOUR");
        assert_eq!(doc.cursor(), (2, 1));
        assert!(!doc.is_dirty());
        // Shrinking clamps the cursor.
        write_later(&p, b"x\n");
        assert_eq!(doc.check_disk(), DiskChange::Reloaded);
        assert_eq!(doc.cursor(), (0, 1));
        assert_eq!(doc.check_disk(), DiskChange::Unchanged);
    }

    #[test]
    fn external_write_to_dirty_buffer_keeps_edits_and_flags_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"shared\nmine here\n");
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(2)).unwrap();
        typed(&mut doc, "// ");
        write_later(&p, b"shared\ntheirs here\n");
        assert_eq!(doc.check_disk(), DiskChange::Conflict);
        assert_eq!(doc.text(), "shared\n// mine here", "edits kept");
        assert!(matches!(doc.disk_state(), DiskState::ChangedOnDisk { .. }));
        let diff = doc.diff().unwrap();
        assert!(diff.contains("-theirs here"), "{diff}");
        assert!(diff.contains("+// mine here"), "{diff}");
        assert!(diff.contains(" shared"), "{diff}");
        // Saving is refused until the conflict is resolved.
        assert!(matches!(doc.save(), Err(EditorError::Conflict { .. })));
        doc.keep_mine();
        doc.save().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "shared\n// mine here\n");
    }

    #[test]
    fn external_write_of_exactly_my_text_is_not_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"a\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "b");
        write_later(&p, b"ba\n");
        assert_eq!(doc.check_disk(), DiskChange::Unchanged);
        assert!(!doc.is_dirty());
        assert_eq!(doc.disk_state(), &DiskState::InSync);
    }

    #[test]
    fn load_theirs_discards_mine() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"a\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "mine ");
        write_later(&p, b"theirs\n");
        assert_eq!(doc.check_disk(), DiskChange::Conflict);
        doc.load_theirs();
        assert_eq!(doc.text(), "theirs");
        assert!(!doc.is_dirty());
        assert_eq!(doc.disk_state(), &DiskState::InSync);
    }
}

mod recovery {
    use super::*;

    #[test]
    fn recovery_is_throttled_written_and_restored_after_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("recovery");
        let p = write(dir.path(), "r.txt", b"saved\n");
        let mut doc = Document::open(&p).unwrap();
        let t0 = Instant::now();
        assert!(
            doc.recovery_tick(&rec, t0).is_none(),
            "clean: nothing to write"
        );
        typed(&mut doc, "unsaved ");
        doc.recovery_tick(&rec, t0).unwrap().write().unwrap();
        assert_eq!(list_recoveries(&rec)[0].text, "unsaved saved");
        assert!(
            doc.recovery_tick(&rec, t0 + Duration::from_secs(4))
                .is_none(),
            "nothing changed since: nothing to write"
        );
        typed(&mut doc, "more ");
        assert!(
            doc.recovery_tick(&rec, t0 + Duration::from_secs(1))
                .is_none(),
            "throttled"
        );
        // Prepared on the UI loop, written on a writer thread.
        let mut writer = RecoveryWriter::default();
        writer.submit(
            doc.recovery_tick(&rec, t0 + Duration::from_secs(4))
                .unwrap(),
        );
        drop(writer);
        assert_eq!(list_recoveries(&rec)[0].text, "unsaved more saved");
        typed(&mut doc, "last ");
        doc.write_recovery_now(&rec).unwrap();
        drop(doc); // the crash: no save, no clean close

        let found = list_recoveries(&rec);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "unsaved more last saved");
        assert!(found[0].path.ends_with("r.txt"));
        let mut doc = Document::restore(&found[0]).unwrap();
        assert_eq!(doc.text(), "unsaved more last saved");
        assert!(doc.is_dirty());
        assert_eq!(fs::read_to_string(&p).unwrap(), "saved\n", "disk untouched");
        doc.save().unwrap();
        assert!(
            list_recoveries(&rec).is_empty(),
            "saving removes the recovery file"
        );
    }

    #[test]
    fn recovery_of_a_deleted_file_recreates_it_on_save_and_garbage_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("recovery");
        let p = write(dir.path(), "gone.txt", b"x\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "y");
        doc.write_recovery_now(&rec).unwrap();
        fs::remove_file(&p).unwrap();
        fs::write(rec.join("junk.hello-tui-recovery.json"), b"{not json").unwrap();
        let found = list_recoveries(&rec);
        assert_eq!(found.len(), 1);
        let mut doc = Document::restore(&found[0]).unwrap();
        assert_eq!(doc.disk_state(), &DiskState::DeletedOnDisk);
        doc.save().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "yx\n");
    }

    #[test]
    fn undo_to_clean_removes_the_recovery_file() {
        let dir = tempfile::tempdir().unwrap();
        let rec = dir.path().join("recovery");
        let p = write(dir.path(), "u.txt", b"x\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "y");
        let write = doc.recovery_tick(&rec, Instant::now()).unwrap();
        write.write().unwrap();
        assert_eq!(list_recoveries(&rec).len(), 1);
        // A write prepared before the buffer went clean never lands.
        typed(&mut doc, "z");
        let late = doc.recovery_tick(&rec, Instant::now() + Duration::from_secs(4));
        doc.apply(EditCommand::Undo).unwrap();
        assert!(doc.recovery_tick(&rec, Instant::now()).is_none());
        assert!(list_recoveries(&rec).is_empty());
        late.unwrap().write().unwrap();
        assert!(
            list_recoveries(&rec).is_empty(),
            "the stale write did nothing"
        );
    }
}

mod loading {
    use super::*;

    #[test]
    fn binary_file_is_not_editable_nor_saveable() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "b.bin", b"\x7fELF\0\0\x01\x02");
        let mut doc = Document::open(&p).unwrap();
        assert!(doc.is_binary());
        assert_eq!(
            doc.read_only_reason(),
            Some(&ReadOnlyReason::Binary { bytes: 8 })
        );
        assert_eq!(doc.notice().as_deref(), Some("binary file, 8 bytes"));
        assert!(doc.apply(EditCommand::InsertChar('a')).is_err());
        assert!(doc.save().is_err());
        assert_eq!(fs::read(&p).unwrap(), b"\x7fELF\0\0\x01\x02");
    }

    #[test]
    fn invalid_utf8_is_read_only_and_never_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "l1.txt", b"caf\xe9 au lait\n");
        let mut doc = Document::open(&p).unwrap();
        assert_eq!(doc.read_only_reason(), Some(&ReadOnlyReason::InvalidUtf8));
        assert_eq!(doc.text(), "caf\u{fffd} au lait");
        let err = doc.apply(EditCommand::InsertChar('x')).unwrap_err();
        assert!(err.to_string().contains("not valid UTF-8"), "{err}");
        // Motions, selection and copy still work.
        doc.apply(EditCommand::Select(Motion::WordRight)).unwrap();
        assert!(doc.apply(EditCommand::Copy).unwrap().copied.is_some());
        assert!(doc.save().is_err());
        assert_eq!(fs::read(&p).unwrap(), b"caf\xe9 au lait\n");
    }

    #[test]
    fn unreadable_paths_are_error_values() {
        let dir = tempfile::tempdir().unwrap();
        let err = Document::open(dir.path().join("missing.txt"))
            .err()
            .unwrap();
        assert!(err.to_string().starts_with("cannot read"), "{err}");
        assert!(
            Document::open(dir.path()).is_err(),
            "a directory is not a document"
        );
    }

    #[test]
    fn a_200_000_line_file_is_edited_at_its_end_and_saved_intact() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..200_000).map(|i| format!("x = {i}\n")).collect();
        let p = write(dir.path(), "big.py", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        assert_eq!(doc.read_only_reason(), None, "no size cap");
        assert_eq!(doc.line_count(), 200_000);
        doc.apply(EditCommand::GoToLine(200_000)).unwrap();
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        typed(&mut doc, " + 1");
        doc.apply(EditCommand::InsertNewline).unwrap();
        typed(&mut doc, "y = 2");
        let r = doc.apply(EditCommand::FindNext("= 199998".into())).unwrap();
        assert_eq!(r.search.unwrap().matches.len(), 1);
        assert_eq!(doc.selected_text().as_deref(), Some("= 199998"));
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        doc.prepare_frame(&hl, Rect::new(0, 0, 80, 41));
        let page = doc.viewport().height - 1;
        doc.apply(EditCommand::Move(Motion::PageUp)).unwrap();
        assert_eq!(doc.cursor().0, 199_998 - page);
        doc.save().unwrap();
        let expected = format!(
            "{}x = 199999 + 1\ny = 2\n",
            &text[..text.len() - "x = 199999\n".len()]
        );
        assert_eq!(fs::read_to_string(&p).unwrap(), expected);
        assert!(!doc.is_dirty());
        assert_eq!(doc.language(), Some("Python"));
    }
}

mod view {
    use super::*;

    fn hl() -> Highlighter {
        Highlighter::new(Highlighter::DEFAULT_DARK).unwrap()
    }

    #[test]
    fn wide_characters_put_the_cursor_in_the_right_cell() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "w.txt", "日本語abc\n🦀x\n".as_bytes());
        let mut doc = Document::open(&p).unwrap();
        for _ in 0..3 {
            doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        }
        let area = Rect::new(0, 0, 30, 5);
        doc.prepare_frame(&hl(), area);
        let pos = cursor_screen_position(&doc, area).unwrap();
        // Gutter is "  1 " (4 cells), then 3 wide chars = 6 cells.
        assert_eq!((pos.x, pos.y), (10, 0));
        let styles = FileViewStyles::dark();
        let mut buf = ratatui::buffer::Buffer::empty(area);
        render_file_view(&doc, &styles, area, &mut buf);
        assert_eq!(buf[(10, 0)].symbol(), "a");
        assert!(
            buf[(10, 0)]
                .modifier
                .contains(ratatui::style::Modifier::REVERSED)
        );
        // Clicking the right half of a wide char lands on that char.
        doc.click(area, 7, 0, false);
        assert_eq!(doc.cursor(), (0, 1));
        doc.click(area, 6, 1, false);
        assert_eq!(doc.cursor(), (1, 1), "after the crab");
        doc.drag_to(area, 29, 0);
        assert_eq!(doc.selection(), Some(((0, 6), (1, 1))));
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "esc.txt", b"a\x1b[31mred\x07\n");
        let mut doc = Document::open(&p).unwrap();
        let area = Rect::new(0, 0, 20, 2);
        doc.prepare_frame(&hl(), area);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        render_file_view(&doc, &FileViewStyles::dark(), area, &mut buf);
        let row: String = (4..20).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(row.trim_end(), "a\u{fffd}[31mred\u{fffd}");
        assert!(!row.chars().any(|c| c.is_control()));
    }

    #[test]
    fn mouse_wheel_scrolls_without_moving_the_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..100).map(|i| format!("{i}\n")).collect();
        let p = write(dir.path(), "s.txt", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        let area = Rect::new(0, 0, 20, 10);
        let h = hl();
        doc.prepare_frame(&h, area);
        doc.scroll_by(30);
        doc.prepare_frame(&h, area);
        assert_eq!(doc.viewport().top, 30);
        assert_eq!(doc.cursor(), (0, 0));
        assert!(cursor_screen_position(&doc, area).is_none());
        // The next motion brings the cursor back into view.
        doc.apply(EditCommand::Move(Motion::Down)).unwrap();
        doc.prepare_frame(&h, area);
        assert_eq!(doc.viewport().top, 1);
    }

    #[test]
    fn horizontal_scroll_keeps_cursor_visible() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{}END\n", "a".repeat(200));
        let p = write(dir.path(), "h.txt", long.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        let area = Rect::new(0, 0, 24, 3);
        doc.prepare_frame(&hl(), area);
        let pos = cursor_screen_position(&doc, area).unwrap();
        assert_eq!(pos.x, 23);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        render_file_view(&doc, &FileViewStyles::dark(), area, &mut buf);
        let row: String = (0..24).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert!(row.ends_with("END "), "{row:?}");
    }

    #[test]
    fn big_file_highlighting_is_capped_per_frame_and_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..20_000)
            .map(|i| format!("def f{i}(x):\n    return x\n"))
            .collect();
        let p = write(dir.path(), "m.py", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.set_highlight_budget(5_000, Duration::MAX);
        doc.apply(EditCommand::GoToLine(30_000)).unwrap();
        let h = hl();
        let area = Rect::new(0, 0, 80, 20);
        assert!(
            doc.prepare_frame(&h, area),
            "first frame cannot reach line 30000"
        );
        let mut frames = 1;
        while doc.needs_more_work() {
            doc.prepare_frame(&h, area);
            frames += 1;
            assert!(frames < 20);
        }
        assert!(frames >= 6, "work was spread over frames: {frames}");
        assert_eq!(doc.language(), Some("Python"));
    }
}

mod snapshots {
    use super::*;

    fn draw(doc: &mut Document, w: u16, h: u16) -> String {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        doc.set_highlight_budget(10_000, Duration::MAX);
        term.draw(|f| {
            let area = f.area();
            doc.prepare_frame(&hl, area);
            render_file_view(doc, &FileViewStyles::dark(), area, f.buffer_mut());
        })
        .unwrap();
        format!("{:?}", term.backend().buffer())
    }

    #[test]
    fn rust_file_with_cursor_and_selection() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "main.rs",
            b"// entry\nfn main() {\n\tlet n: u32 = 42;\n    println!(\"{n}\");\n}\n",
        );
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(3)).unwrap();
        doc.apply(EditCommand::Move(Motion::WordRight)).unwrap();
        doc.apply(EditCommand::Select(Motion::WordRight)).unwrap();
        doc.apply(EditCommand::Select(Motion::WordRight)).unwrap();
        insta::assert_snapshot!(draw(&mut doc, 32, 6));
    }

    #[test]
    fn python_file_with_cursor_selection_and_search() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "app.py",
            b"import os\n\ndef greet(name):\n    \"\"\"Say hi.\"\"\"\n    return f\"hi {name}\"\n",
        );
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::FindNext("name".into())).unwrap();
        doc.apply(EditCommand::Select(Motion::Down)).unwrap();
        insta::assert_snapshot!(draw(&mut doc, 34, 6));
    }

    #[test]
    fn binary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "x.bin", &[0u8, 1, 2, 3, 255, 0, 7]);
        let mut doc = Document::open(&p).unwrap();
        insta::assert_snapshot!(draw(&mut doc, 30, 3));
    }

    #[test]
    fn wide_characters_with_cursor_after_them() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "w.txt", "日本語🦀ok\ntab\there\n".as_bytes());
        let mut doc = Document::open(&p).unwrap();
        for _ in 0..4 {
            doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        }
        insta::assert_snapshot!(draw(&mut doc, 20, 3));
    }
}

//! Integration tests of the editor core on real files in temp dirs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use hello_tui::editor::{
    DiskChange, DiskState, Document, EditCommand, EditorError, FileViewStyles, Highlighter,
    LineEnding, MatchCount, Motion, ReadOnlyReason, RecoveryWriter, cursor_screen_position,
    list_recoveries, render_file_view,
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
        assert_eq!(doc.text(), "abc\n");
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
        assert_eq!(doc.text(), "ee\n");
        doc.apply(EditCommand::Paste("X\r\nY".into())).unwrap();
        assert_eq!(doc.text(), "X\nYee\n");
        doc.apply(EditCommand::SelectAll).unwrap();
        assert_eq!(doc.selected_text().as_deref(), Some("X\nYee\n"));
        // Cut without a selection takes the whole line, like VS Code.
        doc.apply(EditCommand::Move(Motion::DocStart)).unwrap();
        let out = doc.apply(EditCommand::Cut).unwrap();
        assert_eq!(out.copied.as_deref(), Some("X\n"));
        assert_eq!(doc.text(), "Yee\n");
    }

    #[test]
    fn find_next_and_previous_select_matches_and_wrap() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", b"foo bar\nbar Foo\nfoo\n");
        let mut doc = Document::open(&p).unwrap();
        let r = doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        let r = r.search.unwrap();
        assert_eq!(
            r.count,
            Some(MatchCount { index: 1, total: 3 }),
            "smart case: lowercase query ignores case; the match at the cursor is skipped"
        );
        assert_eq!(doc.selection(), Some(((1, 4), (1, 7))));
        doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        assert_eq!(doc.cursor(), (2, 3));
        let r = doc.apply(EditCommand::FindNext("foo".into())).unwrap();
        assert_eq!(
            r.search.unwrap().count.unwrap().index,
            0,
            "wraps to the top"
        );
        let r = doc.apply(EditCommand::FindPrev("foo".into())).unwrap();
        assert_eq!(
            r.search.unwrap().count.unwrap().index,
            2,
            "wraps to the bottom"
        );
        let r = doc.apply(EditCommand::FindNext("nothing".into())).unwrap();
        assert_eq!(r.search.unwrap().current, None);
    }

    /// A CRLF file (the rope holds '\n' breaks), non-ASCII smart case and a
    /// last line without a line break.
    #[test]
    fn find_in_a_crlf_file_without_a_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "a.txt", "École\r\nx\r\nécole".as_bytes());
        let mut doc = Document::open(&p).unwrap();
        let r = doc.apply(EditCommand::FindNext("école".into())).unwrap();
        let r = r.search.unwrap();
        assert_eq!(r.count, Some(MatchCount { index: 1, total: 2 }));
        assert_eq!(doc.selection(), Some(((2, 0), (2, 5))));
        let r = doc.apply(EditCommand::FindPrev("École".into())).unwrap();
        assert_eq!(
            r.search.unwrap().count,
            Some(MatchCount { index: 0, total: 1 })
        );
        assert_eq!(doc.selected_text().as_deref(), Some("École"));
    }

    /// FindNext in 1 000 000 lines with the match a few lines below the
    /// cursor reads about one 64 KiB window, not the 11 MB text, and leaves
    /// the count to a thread (the old find lowercased and collected every
    /// line on each Enter, 8.6 s in a debug build). The counter then gives
    /// the exact place.
    #[test]
    fn find_next_in_a_million_lines_reads_near_the_cursor() {
        let mut text: String = (0..1_000_000).map(|i| format!("x = {i:06}\n")).collect();
        text.push_str("y = 1\n");
        let mut doc = Document::from_text("/tmp/big.py", &text);
        doc.apply(EditCommand::GoToLine(734_201)).unwrap();
        let r = doc.apply(EditCommand::FindNext("= 734205".into())).unwrap();
        let r = r.search.unwrap();
        assert_eq!(doc.selection(), Some(((734_205, 2), (734_205, 10))));
        assert!(text.len() > hello_tui::editor::COUNT_INLINE_BYTES);
        assert_eq!(r.count, None, "a big text is not counted on the find");
        assert!(r.scanned <= 128 * 1024, "read {} bytes", r.scanned);
        let counter = doc.match_counter(r.current.unwrap()).unwrap();
        let count = counter.count(&std::sync::atomic::AtomicBool::new(false));
        assert_eq!(count, Some(MatchCount { index: 0, total: 1 }));
        // Far away, above the cursor: wraps and finds it.
        let r = doc.apply(EditCommand::FindNext("y = 1".into())).unwrap();
        assert_eq!(r.search.unwrap().current.unwrap().start, (1_000_000, 0));
        let r = doc
            .apply(EditCommand::FindNext("x = 000002".into()))
            .unwrap();
        assert_eq!(r.search.unwrap().current.unwrap().start, (2, 0));
        let r = doc
            .apply(EditCommand::FindPrev("x = 999999".into()))
            .unwrap();
        assert_eq!(r.search.unwrap().current.unwrap().start, (999_999, 0));
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
        doc.apply(EditCommand::GoToLine(100)).unwrap();
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
        assert_eq!(doc.text(), "keep me\n");
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
        assert_eq!(doc.text(), "ONE\nTWO\nTHREE\nFOUR\n");
        assert_eq!(doc.cursor(), (2, 1));
        assert!(!doc.is_dirty());
        // Shrinking clamps the cursor.
        write_later(&p, b"x\n");
        assert_eq!(doc.check_disk(), DiskChange::Reloaded);
        assert_eq!(doc.cursor(), (1, 0), "on the line after the final newline");
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
        assert_eq!(doc.text(), "shared\n// mine here\n", "edits kept");
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
        assert_eq!(doc.text(), "theirs\n");
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
        assert_eq!(list_recoveries(&rec)[0].text, "unsaved saved\n");
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
        assert_eq!(list_recoveries(&rec)[0].text, "unsaved more saved\n");
        typed(&mut doc, "last ");
        doc.write_recovery_now(&rec).unwrap();
        drop(doc); // the crash: no save, no clean close

        let found = list_recoveries(&rec);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "unsaved more last saved\n");
        assert!(found[0].path.ends_with("r.txt"));
        let mut doc = Document::restore(&found[0]).unwrap();
        assert_eq!(doc.text(), "unsaved more last saved\n");
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
        assert_eq!(doc.text(), "caf\u{fffd} au lait\n");
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
        assert_eq!(
            doc.line_count(),
            200_001,
            "the lines and the empty one after them"
        );
        doc.apply(EditCommand::GoToLine(200_000)).unwrap();
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        typed(&mut doc, " + 1");
        doc.apply(EditCommand::InsertNewline).unwrap();
        typed(&mut doc, "y = 2");
        let r = doc.apply(EditCommand::FindNext("= 199998".into())).unwrap();
        assert_eq!(r.search.unwrap().count.unwrap().total, 1);
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

    /// A minified line: the view at its end is drawn from a column mark
    /// near there, and agrees with the text (wide chars and tabs before it
    /// shift the columns); typing there and clicking there stay exact.
    #[test]
    fn the_end_of_a_very_long_line_draws_and_edits_right() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{}END", "日本\tab;".repeat(20_000));
        let p = write(dir.path(), "min.js", format!("{long}\nshort\n").as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        let area = Rect::new(0, 0, 24, 3);
        let h = hl();
        let row = |doc: &mut Document| {
            doc.prepare_frame(&h, area);
            let mut buf = ratatui::buffer::Buffer::empty(area);
            render_file_view(doc, &FileViewStyles::dark(), area, &mut buf);
            (0..24)
                .map(|x| buf[(x, 0)].symbol().to_string())
                .collect::<String>()
        };
        // Each unit is 日本 (4 cells), a tab to the next stop of 4, "ab;".
        assert!(row(&mut doc).ends_with("ab;END "), "{:?}", row(&mut doc));
        assert_eq!(cursor_screen_position(&doc, area).map(|p| p.x), Some(23));
        // The status bar's column at the end (counted from a column mark,
        // not from the line start): every char here is one cluster, a tab
        // reaches the next stop of 4.
        let expected = long.chars().fold(0, |col, c| {
            if c == '\t' {
                col + 4 - col % 4
            } else {
                col + 1
            }
        });
        assert_eq!(doc.cursor_column(), expected);
        // Down to the short line and back Up returns to the end.
        doc.apply(EditCommand::Move(Motion::Down)).unwrap();
        assert_eq!(doc.cursor(), (1, 5));
        doc.apply(EditCommand::Move(Motion::Up)).unwrap();
        assert_eq!(doc.cursor(), (0, long.chars().count()));
        typed(&mut doc, "!");
        assert!(row(&mut doc).ends_with("ab;END! "), "{:?}", row(&mut doc));
        assert_eq!(doc.line(0).map(|l| l.len()), Some(long.len() + 1));
        // Click on the "E" of END: three cells left of the "!".
        doc.click(area, 23 - 4, 0, false);
        assert_eq!(doc.cursor(), (0, long.chars().count() - 3));
        doc.apply(EditCommand::DeleteForward).unwrap();
        assert!(doc.line(0).unwrap().ends_with("ab;ND!"));
    }

    /// A jump to line 30 000 of a fresh file: the frame shows approximate
    /// colours and the exact pass runs in the background; once it is in,
    /// the next frame is exact and asks for no more.
    #[test]
    fn big_file_highlighting_runs_in_the_background_and_finishes() {
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
            "the exact pass to line 30000 is running"
        );
        doc.finish_highlight_pass();
        assert!(!doc.prepare_frame(&h, area), "exact once the pass is in");
        assert!(!doc.needs_more_work());
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

    /// A jump to the end of a 6000-line file: the first frame is already
    /// coloured (from an approximate start above the view), although the
    /// exact pass is allowed only 50 lines per frame.
    #[test]
    fn deep_jump_is_highlighted_in_the_first_frame() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..3000)
            .map(|i| format!("def f{i}(x):\n    return x + {i}  # n\n"))
            .collect();
        let p = write(dir.path(), "deep.py", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(6000)).unwrap();
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut term = Terminal::new(TestBackend::new(36, 5)).unwrap();
        doc.set_highlight_budget(50, Duration::MAX);
        term.draw(|f| {
            let area = f.area();
            assert!(doc.prepare_frame(&hl, area), "the exact pass is far behind");
            render_file_view(&doc, &FileViewStyles::dark(), area, f.buffer_mut());
        })
        .unwrap();
        insta::assert_snapshot!(format!("{:?}", term.backend().buffer()));
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

/// Random edit scripts against a `String` model: the rope, the cursor and
/// undo/redo must agree with plain string operations at every step. The
/// model finds cluster boundaries with `unicode-segmentation` on the whole
/// string; the document walks rope chunks, so they are independent.
mod engine {
    use super::*;
    use proptest::prelude::*;
    use unicode_segmentation::UnicodeSegmentation;

    #[derive(Debug, Clone)]
    enum Op {
        Type(char),
        Newline,
        Paste(String),
        DeleteBack,
        DeleteForward,
        Left,
        Right,
        LineEnd,
        DocStart,
        DocEnd,
        Undo,
        Redo,
    }

    fn op() -> impl Strategy<Value = Op> {
        // ASCII, a space, precomposed and combining accents, CJK, an emoji,
        // a zero-width joiner: clusters of every shape.
        let chars = prop::sample::select(vec![
            'a', 'b', ' ', 'é', '\u{301}', '日', '🦀', '\u{200d}', '👩',
        ]);
        prop_oneof![
            4 => chars.prop_map(Op::Type),
            1 => Just(Op::Newline),
            1 => prop::sample::select(vec!["xy", "\n", "👨‍👩‍👧", "e\u{301}\nz"]).prop_map(|s| Op::Paste(s.into())),
            2 => Just(Op::DeleteBack),
            1 => Just(Op::DeleteForward),
            2 => Just(Op::Left),
            2 => Just(Op::Right),
            1 => Just(Op::LineEnd),
            1 => Just(Op::DocStart),
            1 => Just(Op::DocEnd),
            2 => Just(Op::Undo),
            1 => Just(Op::Redo),
        ]
    }

    #[derive(Clone)]
    struct State {
        text: String,
        cursor: usize,
    }

    struct Model {
        now: State,
        undo: Vec<(State, State)>,
        redo: Vec<(State, State)>,
    }

    /// Char indices where clusters start, plus the end.
    fn boundaries(text: &str) -> Vec<usize> {
        let mut out: Vec<usize> = text
            .grapheme_indices(true)
            .map(|(b, _)| text[..b].chars().count())
            .collect();
        out.push(text.chars().count());
        out
    }

    fn byte(text: &str, ch: usize) -> usize {
        text.char_indices().nth(ch).map_or(text.len(), |(b, _)| b)
    }

    impl Model {
        fn edit(&mut self, from: usize, to: usize, insert: &str) {
            let before = self.now.clone();
            let s = &mut self.now.text;
            let (a, b) = (byte(s, from), byte(s, to));
            s.replace_range(a..b, insert);
            let at = from + insert.chars().count();
            // Inserted text that joins the cluster after it: the cursor
            // goes past the whole cluster.
            let bounds = boundaries(s);
            self.now.cursor = *bounds.iter().find(|b| **b >= at).unwrap_or(&at);
            if self.now.text != before.text {
                self.undo.push((before, self.now.clone()));
                self.redo.clear();
            }
        }

        fn apply(&mut self, op: &Op) {
            let bounds = boundaries(&self.now.text);
            let c = self.now.cursor;
            let prev = bounds.iter().rev().find(|b| **b < c).copied().unwrap_or(0);
            let next = bounds.iter().find(|b| **b > c).copied().unwrap_or(c);
            let len = self.now.text.chars().count();
            match op {
                Op::Type(ch) => self.edit(c, c, &ch.to_string()),
                Op::Newline => self.edit(c, c, "\n"),
                Op::Paste(s) => self.edit(c, c, s),
                Op::DeleteBack => self.edit(prev, c, ""),
                Op::DeleteForward => self.edit(c, next, ""),
                Op::Left => self.now.cursor = prev,
                Op::Right => self.now.cursor = next,
                Op::LineEnd => {
                    let rest = self.now.text.chars().skip(c).position(|ch| ch == '\n');
                    self.now.cursor = rest.map_or(len, |n| c + n);
                }
                Op::DocStart => self.now.cursor = 0,
                Op::DocEnd => self.now.cursor = len,
                Op::Undo => {
                    if let Some((before, after)) = self.undo.pop() {
                        self.now = before.clone();
                        self.redo.push((before, after));
                    }
                }
                Op::Redo => {
                    if let Some((before, after)) = self.redo.pop() {
                        self.now = after.clone();
                        self.undo.push((before, after));
                    }
                }
            }
        }

        /// (line, char in line) of the cursor.
        fn cursor(&self) -> (usize, usize) {
            let before: String = self.now.text.chars().take(self.now.cursor).collect();
            let line = before.matches('\n').count();
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
            (line, col)
        }
    }

    fn command(op: &Op) -> EditCommand {
        match op {
            Op::Type(c) => EditCommand::InsertChar(*c),
            Op::Newline => EditCommand::InsertNewline,
            Op::Paste(s) => EditCommand::Paste(s.clone()),
            Op::DeleteBack => EditCommand::DeleteBack,
            Op::DeleteForward => EditCommand::DeleteForward,
            Op::Left => EditCommand::Move(Motion::Left),
            Op::Right => EditCommand::Move(Motion::Right),
            Op::LineEnd => EditCommand::Move(Motion::LineEnd),
            Op::DocStart => EditCommand::Move(Motion::DocStart),
            Op::DocEnd => EditCommand::Move(Motion::DocEnd),
            Op::Undo => EditCommand::Undo,
            Op::Redo => EditCommand::Redo,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn edit_scripts_match_a_string_model(
            start in prop::sample::select(vec!["", "ab\ncd", "日本\n\n🦀 x"]),
            ops in prop::collection::vec(op(), 1..60),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let p = write(dir.path(), "m.txt", format!("{start}\n").as_bytes());
            let mut doc = Document::open(&p).unwrap();
            let mut model = Model {
                now: State { text: format!("{start}\n"), cursor: 0 },
                undo: Vec::new(),
                redo: Vec::new(),
            };
            // Every edit a pause after the last: each is its own undo step,
            // as in the model (grouping has its own tests).
            let t0 = Instant::now();
            for (i, op) in ops.iter().enumerate() {
                doc.apply_at(command(op), t0 + Duration::from_secs(2 * i as u64)).unwrap();
                model.apply(op);
                prop_assert_eq!(doc.text(), model.now.text.clone(), "after {:?}", op);
                prop_assert_eq!(doc.cursor(), model.cursor(), "after {:?}", op);
                prop_assert_eq!(doc.is_dirty(), model.now.text != format!("{start}\n"), "after {:?}", op);
            }
            doc.save().unwrap();
            prop_assert_eq!(fs::read_to_string(&p).unwrap(), model.now.text);
        }
    }
}

mod text_as_people_see_it {
    use super::*;

    const FAMILY: &str = "👨‍👩‍👧‍👦";

    #[test]
    fn the_cursor_never_splits_a_cluster() {
        let dir = tempfile::tempdir().unwrap();
        // 15 visible characters: a family, a flag, e + combining acute, CJK.
        let line = format!("{FAMILY}🇫🇷e\u{301}日本 abcdefghi");
        let p = write(dir.path(), "g.txt", format!("{line}\n").as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        assert_eq!(doc.cursor(), (0, 7), "one press over 7 code points");
        assert_eq!(doc.cursor_column(), 1);
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        assert_eq!(doc.cursor(), (0, 11), "the flag, then e + U+0301");
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        assert_eq!(doc.cursor_column(), 15, "End: 15 visible characters");
        assert_eq!(
            doc.cursor().1,
            line.chars().count(),
            "code points for LSP/snapshot"
        );
        doc.apply(EditCommand::Move(Motion::DocStart)).unwrap();
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        typed(&mut doc, "x");
        assert!(
            doc.text().starts_with(&format!("{FAMILY}x")),
            "typed after the family, not inside"
        );
        doc.apply(EditCommand::DeleteBack).unwrap();
        doc.apply(EditCommand::DeleteBack).unwrap();
        assert!(
            doc.text().starts_with("🇫🇷"),
            "one Backspace deletes the whole family"
        );
        doc.apply(EditCommand::Select(Motion::Right)).unwrap();
        assert_eq!(doc.selected_text().as_deref(), Some("🇫🇷"));
        doc.apply(EditCommand::DeleteForward).unwrap();
        doc.apply(EditCommand::DeleteForward).unwrap();
        assert!(
            doc.text().starts_with("日本"),
            "Delete takes e + U+0301 whole"
        );
    }

    /// Terminals disagree on the width of a joined emoji sequence, so the
    /// family draws a person at a time with its joiners shown (issue
    /// 27.19); the cursor still steps over it as one character, and a
    /// click anywhere on it lands on it.
    #[test]
    fn a_zwj_family_draws_a_piece_at_a_time_and_clicks_land_on_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "f.txt", format!("{FAMILY}ab\n").as_bytes());
        let mut doc = Document::open(&p).unwrap();
        let area = Rect::new(0, 0, 20, 2);
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        doc.prepare_frame(&Highlighter::new(Highlighter::DEFAULT_DARK).unwrap(), area);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        render_file_view(&doc, &FileViewStyles::dark(), area, &mut buf);
        // Gutter "  1 " is 4 cells; each person 2, each joiner 1.
        let drawn: Vec<&str> = (4..16).map(|x| buf[(x, 0)].symbol()).collect();
        assert_eq!(
            drawn,
            [
                "👨", "", "\u{fffd}", "👩", "", "\u{fffd}", "👧", "", "\u{fffd}", "👦", "", "a"
            ]
        );
        assert_eq!(cursor_screen_position(&doc, area).map(|p| p.x), Some(15));
        doc.click(area, 10, 0, false);
        assert_eq!(doc.cursor(), (0, 0), "inside the family");
        doc.click(area, 15, 0, false);
        assert_eq!(doc.cursor(), (0, FAMILY.chars().count()), "the a after it");
    }

    #[test]
    fn tabs_render_to_tab_stops_from_editorconfig() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join(".editorconfig"),
            "root = true\n[*.go]\nindent_style = tab\ntab_width = 8\n[*.py]\nindent_size = 2\n",
        )
        .unwrap();
        let go = write(dir.path(), "m.go", b"a\tb\nabcdefgh\tc\n");
        let mut doc = Document::open(&go).unwrap();
        assert_eq!(doc.tab_width(), 8);
        let area = Rect::new(0, 0, 30, 3);
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        doc.prepare_frame(&hl, area);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        render_file_view(&doc, &FileViewStyles::dark(), area, &mut buf);
        let row = |buf: &ratatui::buffer::Buffer, y| -> String {
            (4..30).map(|x| buf[(x, y)].symbol().to_string()).collect()
        };
        assert_eq!(row(&buf, 0).trim_end(), "a       b");
        assert_eq!(
            row(&buf, 1).trim_end(),
            "abcdefgh        c",
            "at a stop: a whole tab"
        );
        doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
        assert_eq!(doc.cursor_column(), 9, "the tab counts to its stop");
        doc.apply(EditCommand::InsertTab).unwrap();
        assert_eq!(doc.line(0).as_deref(), Some("a\tb\t"), "indent_style = tab");

        let py = write(dir.path(), "m.py", b"x\n");
        let mut doc = Document::open(&py).unwrap();
        doc.apply(EditCommand::InsertTab).unwrap();
        assert_eq!(
            doc.line(0).as_deref(),
            Some("  x"),
            "indent_size = 2, spaces"
        );
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        doc.apply(EditCommand::InsertTab).unwrap();
        assert_eq!(
            doc.line(0).as_deref(),
            Some("  x "),
            "to the next indent stop"
        );
    }
}

mod deep_jump {
    use super::*;

    /// The approximate start can be wrong (here: inside a docstring opened
    /// 3000 lines above); the exact pass corrects it when it arrives.
    #[test]
    fn approximate_colours_are_corrected_by_the_exact_pass() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("x = \"\"\"\n{}", "y = 1\n".repeat(3000));
        let p = write(dir.path(), "doc.py", text.as_bytes());
        let mut doc = Document::open(&p).unwrap();
        doc.apply(EditCommand::GoToLine(2990)).unwrap();
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let area = Rect::new(0, 0, 30, 6);
        doc.set_highlight_budget(100, Duration::MAX);
        let colour_of_y = |doc: &Document| {
            let mut buf = ratatui::buffer::Buffer::empty(area);
            render_file_view(doc, &FileViewStyles::dark(), area, &mut buf);
            let row = (0..area.height)
                .find(|y| buf[(5, *y)].symbol() == "y")
                .unwrap();
            (buf[(5, row)].fg, buf[(9, row)].fg)
        };
        assert!(doc.prepare_frame(&hl, area));
        let (approx_y, approx_one) = colour_of_y(&doc);
        assert_ne!(
            approx_y, approx_one,
            "approximate: code, `y` and `1` differ"
        );
        doc.finish_highlight_pass();
        assert!(!doc.prepare_frame(&hl, area));
        let (exact_y, exact_one) = colour_of_y(&doc);
        assert_eq!(exact_y, exact_one, "exact: all one string");
        assert_ne!(exact_y, approx_y);
    }
}

mod undo_grouping {
    use super::*;

    fn type_at(doc: &mut Document, text: &str, t: Instant) {
        for c in text.chars() {
            doc.apply_at(EditCommand::InsertChar(c), t).unwrap();
        }
    }

    fn undo(doc: &mut Document) -> String {
        doc.apply(EditCommand::Undo).unwrap();
        doc.text()
    }

    #[test]
    fn typing_undoes_by_words_pauses_and_jumps() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "u.txt", b"\n");
        let mut doc = Document::open(&p).unwrap();
        let t0 = Instant::now();
        // 51 characters typed in one go.
        type_at(
            &mut doc,
            "the quick brown fox jumps over the lazy dog 1234567",
            t0,
        );
        assert_eq!(
            undo(&mut doc),
            "the quick brown fox jumps over the lazy dog\n"
        );
        assert_eq!(undo(&mut doc), "the quick brown fox jumps over the lazy\n");
        let mut doc = Document::open(&p).unwrap();
        type_at(&mut doc, "ab", t0);
        type_at(&mut doc, "cd", t0 + Duration::from_millis(1500));
        assert_eq!(undo(&mut doc), "ab\n", "a pause of 1 s or more splits");
        type_at(&mut doc, "x", t0);
        doc.apply(EditCommand::Move(Motion::Left)).unwrap();
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
        type_at(&mut doc, "y", t0);
        assert_eq!(undo(&mut doc), "abx\n", "a cursor move splits");
        doc.apply(EditCommand::Paste("PASTE".into())).unwrap();
        doc.apply(EditCommand::InsertTab).unwrap();
        assert_eq!(undo(&mut doc), "abxPASTE\n", "an indent is one step");
        assert_eq!(undo(&mut doc), "abx\n", "a paste is one step");
        for _ in 0..3 {
            doc.apply_at(EditCommand::DeleteBack, t0).unwrap();
        }
        assert_eq!(doc.text(), "\n");
        assert_eq!(undo(&mut doc), "abx\n", "Backspaces group too");
    }

    #[test]
    fn redo_survives_motions_until_the_next_edit() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "r.txt", b"\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "one two");
        undo(&mut doc);
        doc.apply(EditCommand::Move(Motion::DocStart)).unwrap();
        doc.apply(EditCommand::Redo).unwrap();
        assert_eq!(doc.text(), "one two\n");
        assert_eq!(doc.cursor(), (0, 7), "the cursor goes where the edit ended");
        undo(&mut doc);
        typed(&mut doc, "!");
        doc.apply(EditCommand::Redo).unwrap();
        assert_eq!(doc.text(), "one!\n", "an edit drops redo");
    }

    #[test]
    fn load_theirs_is_one_undoable_step() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"base\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "mine ");
        write_later(&p, b"theirs\n");
        assert_eq!(doc.check_disk(), DiskChange::Conflict);
        doc.load_theirs();
        assert_eq!(doc.text(), "theirs\n");
        assert!(!doc.is_dirty());
        assert_eq!(undo(&mut doc), "mine base\n", "Undo brings my text back");
        assert!(doc.is_dirty());
    }

    /// "Load theirs" can bring another shape (CRLF, no final newline, a
    /// byte-order mark). Undo brings back mine with my text, so a save
    /// after the undo writes my file, and redo theirs again. Before, the
    /// shape stayed theirs: my LF file was saved as CRLF.
    #[test]
    fn undoing_load_theirs_brings_back_my_line_endings() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"base\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "mine ");
        write_later(&p, b"\xef\xbb\xbftheirs\r\nline");
        assert_eq!(doc.check_disk(), DiskChange::Conflict);
        doc.load_theirs();
        assert_eq!(doc.line_ending(), LineEnding::CrLf);
        assert!(!doc.has_final_newline());
        undo(&mut doc);
        assert_eq!(doc.line_ending(), LineEnding::Lf);
        assert!(doc.has_final_newline());
        doc.apply(EditCommand::Redo).unwrap();
        assert_eq!(doc.text(), "theirs\nline");
        assert!(!doc.is_dirty(), "redo is back at the disk's text and shape");
        undo(&mut doc);
        doc.save().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"mine base\n");
    }

    /// The same text in another shape is a change: after undoing a reload
    /// that only changed line endings, the buffer is dirty (a save writes
    /// my line endings back) although no character differs.
    #[test]
    fn a_shape_that_differs_from_the_disk_is_unsaved() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"same\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "x");
        undo(&mut doc);
        write_later(&p, b"same\r\n");
        assert_eq!(doc.check_disk(), DiskChange::Reloaded);
        assert!(!doc.is_dirty());
        undo(&mut doc);
        assert_eq!(doc.text(), "same\n");
        assert!(doc.is_dirty(), "LF against the disk's CRLF");
        doc.save().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"same\n");
    }

    /// A recovery brings its own shape back, even when the file on disk
    /// now has another: here the only unsaved change was the line ending
    /// (LF against the disk's CRLF), and the restored buffer is that, and
    /// dirty. (It came back in the disk's shape, clean, and the recovery
    /// file was then deleted on close.)
    #[test]
    fn a_recovery_restores_its_shape_over_the_disks() {
        let dir = tempfile::tempdir().unwrap();
        let rec = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "c.txt", b"same\n");
        let mut doc = Document::open(&p).unwrap();
        typed(&mut doc, "x");
        undo(&mut doc);
        write_later(&p, b"same\r\n");
        assert_eq!(doc.check_disk(), DiskChange::Reloaded);
        undo(&mut doc);
        assert!(doc.is_dirty());
        doc.write_recovery_now(rec.path()).unwrap();
        let found = list_recoveries(rec.path());
        let restored = Document::restore(&found[0]).unwrap();
        assert_eq!(restored.line_ending(), LineEnding::Lf);
        assert!(restored.is_dirty());
        assert_eq!(restored.text(), "same\n");
    }
}

/// A lone '\r' is a line break to a language server and not to us: a
/// document holding one hands servers its whole text, never ranges that
/// would land on the wrong lines of the server's copy.
#[test]
fn a_lone_carriage_return_sends_the_whole_text_to_language_servers() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write(dir.path(), "plain.py", b"a = 1\nb = 2\n");
    let odd = write(dir.path(), "odd.py", b"a = 1\rimport os\nb = 2\n");
    for (path, ranged) in [(&plain, true), (&odd, false)] {
        let mut doc = Document::open(path).unwrap();
        let before = doc.generation();
        doc.apply(EditCommand::Move(Motion::Down)).unwrap();
        typed(&mut doc, "zz");
        assert_eq!(
            doc.changes_since(before).is_some(),
            ranged,
            "{}",
            path.display()
        );
    }
    // Deleting the '\r' makes ranges safe again.
    let mut doc = Document::open(&odd).unwrap();
    doc.apply(EditCommand::Move(Motion::LineEnd)).unwrap();
    let at_cr = doc.cursor();
    assert_eq!(at_cr, (0, 15), "the '\\r' is a char of line 0");
    doc.apply(EditCommand::Move(Motion::LineStart)).unwrap();
    for _ in 0..5 {
        doc.apply(EditCommand::Move(Motion::Right)).unwrap();
    }
    doc.apply(EditCommand::DeleteForward).unwrap();
    let before = doc.generation();
    typed(&mut doc, "x");
    assert!(doc.changes_since(before).is_some());
}

/// A byte-order mark is not text: it is not drawn or deleted, and a save
/// writes it back (it used to be a char the cursor stopped on, and Delete
/// at the start dropped it from the file).
#[test]
fn a_byte_order_mark_survives_editing_and_saving() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "bom.cs", "\u{feff}class A {}\r\n".as_bytes());
    let mut doc = Document::open(&p).unwrap();
    assert_eq!(doc.line(0).as_deref(), Some("class A {}"));
    doc.apply(EditCommand::DeleteForward).unwrap();
    typed(&mut doc, "C");
    assert!(doc.is_dirty());
    doc.save().unwrap();
    assert_eq!(
        std::fs::read(&p).unwrap(),
        "\u{feff}Class A {}\r\n".as_bytes(),
        "the mark and the CRLF are kept"
    );
}

//! Workspace integration tests: real temp directories, real walks, real
//! inotify. Waits are generous (events poll up to 5 s) and no test asserts a
//! duration.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hello_tui::workspace::*;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

const WAIT: Duration = Duration::from_secs(5);

/// A temp dir and its canonical path (inotify reports canonical paths).
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Receives the next message, waiting up to `WAIT`.
fn recv<T>(rx: &mut UnboundedReceiver<T>) -> Option<T> {
    let deadline = Instant::now() + WAIT;
    loop {
        match rx.try_recv() {
            Ok(msg) => return Some(msg),
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected) => return None,
            Err(_) if Instant::now() > deadline => return None,
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

mod index {
    use super::*;

    fn build(root: &Path) -> (FileIndex, Vec<usize>, usize) {
        let (tx, mut rx) = unbounded_channel();
        let _build = spawn_index_build(root, tx);
        let mut index = FileIndex::new();
        let mut batch_sizes = Vec::new();
        loop {
            let msg = recv(&mut rx).expect("index build should finish");
            let WorkspaceMessage::Index(update) = msg else {
                panic!("unexpected {msg:?}")
            };
            if let IndexUpdate::Batch(batch) = &update {
                batch_sizes.push(batch.len());
            }
            index.apply(&update);
            if let IndexUpdate::Done { count, .. } = update {
                return (index, batch_sizes, count);
            }
        }
    }

    #[test]
    fn respects_gitignore_ignore_hidden_and_never_lists_git() {
        let (_dir, root) = temp_root();
        write(&root, ".git/HEAD", "ref: refs/heads/main");
        write(&root, ".git/objects/ab/cdef", "x");
        write(&root, ".gitignore", "*.log\nbuild/\n");
        write(&root, ".ignore", "private/\n");
        write(&root, ".hidden/file.txt", "x");
        write(&root, ".hiddenfile", "x");
        write(&root, "src/main.rs", "fn main() {}");
        write(&root, "debug.log", "x");
        write(&root, "build/out.txt", "x");
        write(&root, "private/notes.txt", "x");
        write(&root, "nested/.gitignore", "local.txt\n!keep.log\n");
        write(&root, "nested/local.txt", "x");
        write(&root, "nested/keep.log", "x");
        write(&root, "nested/kept.txt", "x");

        let (index, _, count) = build(&root);
        assert_eq!(
            index.paths(),
            ["nested/keep.log", "nested/kept.txt", "src/main.rs"]
        );
        assert_eq!(count, 3);
        assert!(index.is_complete());
    }

    #[test]
    fn streams_a_5000_file_tree_in_batches() {
        let (_dir, root) = temp_root();
        for d in 0..50 {
            for f in 0..100 {
                write(&root, &format!("d{d:02}/f{f:03}.txt"), "");
            }
        }
        let (index, batches, count) = build(&root);
        assert_eq!(count, 5000);
        assert_eq!(index.len(), 5000);
        assert!(
            batches.len() > 1,
            "expected several batches, got {batches:?}"
        );
        assert!(
            batches[0] <= 256,
            "first batch should be small: {batches:?}"
        );
        assert!(index.contains("d49/f099.txt"));
        assert!(index.paths().is_sorted());
    }

    #[test]
    fn an_empty_or_missing_root_finishes_with_nothing() {
        let (_dir, root) = temp_root();
        let (index, _, count) = build(&root);
        assert_eq!((index.len(), count), (0, 0));

        let (tx, mut rx) = unbounded_channel();
        let _build = spawn_index_build(&root.join("missing"), tx);
        let mut saw_done = false;
        while let Some(WorkspaceMessage::Index(update)) = recv(&mut rx) {
            if let IndexUpdate::Done { count, .. } = update {
                assert_eq!(count, 0);
                saw_done = true;
                break;
            }
        }
        assert!(saw_done);
    }
}

mod open_target {
    use super::*;

    /// A working directory the targets do not lie under.
    fn elsewhere() -> (tempfile::TempDir, PathBuf) {
        temp_root()
    }

    #[test]
    fn file_line_and_column() {
        let (_dir, root) = temp_root();
        let (_other, cwd) = elsewhere();
        write(&root, "notes/a.md", "x");
        let file = root.join("notes/a.md");

        let t = resolve_open_target(&format!("{}:12:5", file.display()), &cwd).unwrap();
        assert_eq!(t.file.as_deref(), Some(file.as_path()));
        assert_eq!((t.line, t.column), (Some(12), Some(5)));
        assert_eq!(
            t.workspace.root(),
            root.join("notes"),
            "no git, no marker, not under the working directory: the file's directory"
        );

        let t = resolve_open_target(&format!("{}:7", file.display()), &cwd).unwrap();
        assert_eq!((t.line, t.column), (Some(7), None));

        let t = resolve_open_target(&file.display().to_string(), &cwd).unwrap();
        assert_eq!((t.line, t.column), (None, None));
    }

    #[test]
    fn directory_is_the_root() {
        let (_dir, root) = temp_root();
        fs::create_dir(root.join("proj")).unwrap();
        let t = resolve_open_target("proj", &root).unwrap();
        assert_eq!(t.workspace.root(), root.join("proj"));
        assert_eq!(t.file, None);
    }

    #[test]
    fn file_in_a_git_repository_opens_the_repository_root() {
        let (_dir, root) = temp_root();
        fs::create_dir(root.join(".git")).unwrap();
        write(&root, "crates/core/src/lib.rs", "");
        write(&root, "crates/core/Cargo.toml", "");
        // Also from a working directory inside the repository.
        for cwd in [elsewhere().1, root.join("crates/core")] {
            let arg = format!("{}:3", root.join("crates/core/src/lib.rs").display());
            let t = resolve_open_target(&arg, &cwd).unwrap();
            assert_eq!(t.workspace.root(), root);
            assert_eq!(t.line, Some(3));
            assert_eq!(
                t.workspace.relative(t.file.as_deref().unwrap()).as_deref(),
                Some("crates/core/src/lib.rs")
            );
        }
    }

    /// Issue 14, item 5: `hello-tui src/auth/token.ts:42` from a project
    /// root without `.git` made `src/auth` the workspace.
    #[test]
    fn outside_git_a_file_under_the_working_directory_opens_it() {
        let (_dir, root) = temp_root();
        write(&root, "package.json", "{}");
        write(&root, "tsconfig.json", "{}");
        write(&root, "src/auth/token.ts", "export {};\n");
        let t = resolve_open_target("src/auth/token.ts:42", &root).unwrap();
        assert_eq!(t.workspace.root(), root);
        assert_eq!(t.line, Some(42));
        assert_eq!(
            t.workspace.relative(t.file.as_deref().unwrap()).as_deref(),
            Some("src/auth/token.ts")
        );
        // Under the working directory wins even with no marker at all.
        let (_plain, plain) = temp_root();
        write(&plain, "notes/todo.md", "x");
        let t = resolve_open_target("notes/todo.md", &plain).unwrap();
        assert_eq!(t.workspace.root(), plain);
        // Except the filesystem root: the file's directory then.
        let relative = plain.join("notes/todo.md");
        let relative = relative.strip_prefix("/").unwrap().to_str().unwrap();
        let t = resolve_open_target(relative, Path::new("/")).unwrap();
        assert_eq!(t.workspace.root(), plain.join("notes"));
    }

    #[test]
    fn outside_git_and_the_working_directory_the_nearest_marker_wins() {
        let (_dir, root) = temp_root();
        let (_other, cwd) = elsewhere();
        write(&root, "package.json", "{}");
        write(&root, "web/package.json", "{}");
        write(&root, "web/src/auth/token.ts", "");
        write(&root, "tool/pyproject.toml", "");
        write(&root, "tool/pkg/cli.py", "");
        let token = root.join("web/src/auth/token.ts");
        let t = resolve_open_target(&token.display().to_string(), &cwd).unwrap();
        assert_eq!(t.workspace.root(), root.join("web"), "the nearest one");
        let cli = root.join("tool/pkg/cli.py");
        let t = resolve_open_target(&cli.display().to_string(), &cwd).unwrap();
        assert_eq!(t.workspace.root(), root.join("tool"));
    }

    #[test]
    fn a_name_with_a_colon_that_exists_wins() {
        let (_dir, root) = temp_root();
        write(&root, "weird:12", "");
        let t = resolve_open_target("weird:12", &root).unwrap();
        assert_eq!(t.file, Some(root.join("weird:12")));
        assert_eq!(t.line, None);
    }

    #[test]
    fn nonexistent_and_empty_are_errors() {
        let (_dir, root) = temp_root();
        let err = resolve_open_target("nope.rs:3", &root);
        assert!(matches!(err, Err(ResolveError::NotFound(_))), "{err:?}");
        assert!(matches!(
            resolve_open_target("", &root),
            Err(ResolveError::Empty)
        ));
    }
}

mod fuzzy {
    use super::*;

    const PATHS: &[&str] = &[
        "docs/maintenance.rs.md",
        "src/bin/main.rs",
        "src/domain/rs/mainframe.txt",
        "src/main.rs",
        "tests/main_rs_test.py",
        "README.md",
    ];

    #[test]
    fn mainrs_finds_src_main_rs_first() {
        let mut m = FuzzyMatcher::new();
        let found = m.matches("mainrs", PATHS, 10);
        assert_eq!(found[0].path, "src/main.rs", "{found:#?}");
        assert_eq!(found[1].path, "src/bin/main.rs", "{found:#?}");
        assert!(found.iter().all(|f| f.path != "README.md"));
        assert!(found.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn indices_point_at_the_matched_chars() {
        let mut m = FuzzyMatcher::new();
        for found in m.matches("srcmain", PATHS, 10) {
            let chars: Vec<char> = found.path.chars().collect();
            let picked: String = found
                .indices
                .iter()
                .map(|&i| chars[i as usize].to_ascii_lowercase())
                .collect();
            assert_eq!(picked, "srcmain", "{found:?}");
        }
        let found = m.matches("mainrs", PATHS, 1);
        // In src/main.rs the file name carries the match: m-a-i-n . r-s
        assert_eq!(found[0].indices, vec![4, 5, 6, 7, 9, 10]);
    }

    #[test]
    fn smart_case() {
        let mut m = FuzzyMatcher::new();
        let paths = ["src/main.rs", "src/Main.java"];
        let lower: Vec<String> = m
            .matches("main", &paths, 10)
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(lower.len(), 2);
        let upper: Vec<String> = m
            .matches("Main", &paths, 10)
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(upper, ["src/Main.java"]);
    }

    #[test]
    fn background_worker_answers_the_latest_query() {
        let mut index = FileIndex::new();
        let mut paths: Vec<String> = (0..20_000)
            .map(|i| format!("dir{}/file{i}.txt", i % 97))
            .collect();
        paths.push("src/main.rs".into());
        index.apply(&IndexUpdate::Batch(paths));
        let (tx, mut rx) = unbounded_channel();
        let worker = FuzzyWorker::spawn(tx).unwrap();
        for (id, query) in ["m", "ma", "mai", "main", "mainrs"].iter().enumerate() {
            assert!(worker.search(id as u64, query, &index, 10));
        }
        let mut seen = Vec::new();
        let last = loop {
            let results = recv(&mut rx).expect("worker results");
            seen.push(results.id);
            if results.id == 4 {
                break results;
            }
        };
        assert!(seen.is_sorted(), "results out of order: {seen:?}");
        assert_eq!(last.query, "mainrs");
        assert_eq!(last.matches[0].path, "src/main.rs");
        assert_eq!(last.matched, 1);
        assert_eq!(last.total, 20_001);
    }

    #[test]
    fn limit_keeps_the_best() {
        let mut m = FuzzyMatcher::new();
        let many: Vec<String> = (0..1000).map(|i| format!("dir{i}/file{i}.txt")).collect();
        let mut with_target = many.clone();
        with_target.push("src/main.rs".into());
        let found = m.matches("mainrs", &with_target, 3);
        assert_eq!(found.len(), 1);
        assert_eq!(m.matches("file", &many, 5).len(), 5);
    }
}

mod watcher {
    use super::*;

    struct Watched {
        _dir: tempfile::TempDir,
        root: PathBuf,
        rx: UnboundedReceiver<WorkspaceMessage>,
        watcher: Option<WorkspaceWatcher>,
    }

    fn watch(setup: impl FnOnce(&Path), options: WatchOptions) -> Watched {
        let (dir, root) = temp_root();
        setup(&root);
        let (tx, mut rx) = unbounded_channel();
        let watcher = WorkspaceWatcher::start(&root, options, tx).unwrap();
        loop {
            match recv(&mut rx) {
                Some(WorkspaceMessage::Event(WorkspaceEvent::WatchReady)) => break,
                Some(_) => {}
                None => panic!("watcher never became ready"),
            }
        }
        Watched {
            _dir: dir,
            root,
            rx,
            watcher: Some(watcher),
        }
    }

    impl Watched {
        /// Workspace events up to and including `FileCreated(sentinel)`,
        /// which the test creates after the change it looks at.
        fn events_until_sentinel(&mut self, name: &str) -> (Vec<WorkspaceEvent>, Vec<IndexUpdate>) {
            std::thread::sleep(Duration::from_millis(400));
            let sentinel = self.root.join(name);
            fs::write(&sentinel, "s").unwrap();
            let (mut events, mut updates) = (Vec::new(), Vec::new());
            loop {
                match recv(&mut self.rx) {
                    Some(WorkspaceMessage::Event(WorkspaceEvent::FileCreated(p)))
                        if p == sentinel =>
                    {
                        // A batch is sent all at once: if the sentinel shared
                        // one with the change under test, the rest is queued.
                        while let Ok(message) = self.rx.try_recv() {
                            match message {
                                WorkspaceMessage::Event(e) => events.push(e),
                                WorkspaceMessage::Index(IndexUpdate::Added(p)) if p == name => {}
                                WorkspaceMessage::Index(u) => updates.push(u),
                            }
                        }
                        return (events, updates);
                    }
                    Some(WorkspaceMessage::Event(e)) => events.push(e),
                    Some(WorkspaceMessage::Index(IndexUpdate::Added(p))) if p == name => {}
                    Some(WorkspaceMessage::Index(u)) => updates.push(u),
                    None => panic!("no sentinel event; got {events:?}"),
                }
            }
        }
    }

    fn about<'a>(events: &'a [WorkspaceEvent], path: &Path) -> Vec<&'a WorkspaceEvent> {
        events
            .iter()
            .filter(|e| match e {
                WorkspaceEvent::FileChanged(p)
                | WorkspaceEvent::FileCreated(p)
                | WorkspaceEvent::FileRemoved(p) => p == path,
                WorkspaceEvent::Renamed { from, to } => from == path || to == path,
                _ => false,
            })
            .collect()
    }

    #[test]
    fn create_modify_remove_rename_arrive_and_update_the_index() {
        let mut w = watch(
            |root| write(root, "src/old.rs", "a"),
            WatchOptions::default(),
        );
        let root = w.root.clone();

        write(&root, "src/new.rs", "fn x() {}");
        let (events, updates) = w.events_until_sentinel("s1");
        assert_eq!(
            events,
            [WorkspaceEvent::FileCreated(root.join("src/new.rs"))]
        );
        assert!(updates.contains(&IndexUpdate::Added("src/new.rs".into())));

        fs::write(root.join("src/new.rs"), "fn y() {}").unwrap();
        let (events, _) = w.events_until_sentinel("s2");
        assert_eq!(
            events,
            [WorkspaceEvent::FileChanged(root.join("src/new.rs"))]
        );

        fs::rename(root.join("src/old.rs"), root.join("src/renamed.rs")).unwrap();
        let (events, updates) = w.events_until_sentinel("s3");
        assert_eq!(
            events,
            [WorkspaceEvent::Renamed {
                from: root.join("src/old.rs"),
                to: root.join("src/renamed.rs")
            }]
        );
        assert!(updates.contains(&IndexUpdate::Removed("src/old.rs".into())));
        assert!(updates.contains(&IndexUpdate::Added("src/renamed.rs".into())));

        fs::remove_file(root.join("src/new.rs")).unwrap();
        let (events, updates) = w.events_until_sentinel("s4");
        assert_eq!(
            events,
            [WorkspaceEvent::FileRemoved(root.join("src/new.rs"))]
        );
        assert!(updates.contains(&IndexUpdate::Removed("src/new.rs".into())));
    }

    #[test]
    fn ignored_and_hidden_files_produce_nothing() {
        let mut w = watch(
            |root| write(root, ".gitignore", "*.log\ntarget/\n"),
            WatchOptions::default(),
        );
        let root = w.root.clone();
        write(&root, "debug.log", "x");
        write(&root, "target/debug/app.o", "x");
        write(&root, ".cache/tmp", "x");
        fs::write(root.join("debug.log"), "more").unwrap();
        let (events, updates) = w.events_until_sentinel("sentinel");
        assert!(events.is_empty(), "{events:?}");
        assert!(updates.is_empty(), "{updates:?}");
    }

    #[test]
    fn atomic_save_via_temp_and_rename_is_exactly_one_change() {
        let mut w = watch(
            |root| write(root, "main.rs", "old"),
            WatchOptions::default(),
        );
        let root = w.root.clone();
        let real = root.join("main.rs");
        let tmp = root.join("main.rs.tmp.4711");
        fs::write(&tmp, "new contents").unwrap();
        fs::rename(&tmp, &real).unwrap();
        let (events, updates) = w.events_until_sentinel("sentinel");
        assert_eq!(events, [WorkspaceEvent::FileChanged(real)], "{events:?}");
        assert!(updates.is_empty(), "{updates:?}");
    }

    #[test]
    fn vim_backup_dance_is_a_change_for_the_real_path() {
        let mut w = watch(
            |root| write(root, "notes.txt", "old"),
            WatchOptions::default(),
        );
        let root = w.root.clone();
        let real = root.join("notes.txt");
        let backup = root.join("notes.txt~");
        fs::rename(&real, &backup).unwrap();
        fs::write(&real, "new").unwrap();
        fs::remove_file(&backup).unwrap();
        let (events, _) = w.events_until_sentinel("sentinel");
        assert_eq!(events, [WorkspaceEvent::FileChanged(real)], "{events:?}");
    }

    #[test]
    fn directory_moves_and_deletes_are_per_file() {
        let mut w = watch(
            |root| {
                write(root, "pkg/a.py", "");
                write(root, "pkg/sub/b.py", "");
            },
            WatchOptions::default(),
        );
        let root = w.root.clone();
        fs::rename(root.join("pkg"), root.join("lib")).unwrap();
        let (events, _) = w.events_until_sentinel("s1");
        assert_eq!(
            about(&events, &root.join("lib/a.py")).len(),
            1,
            "{events:?}"
        );
        assert!(events.contains(&WorkspaceEvent::Renamed {
            from: root.join("pkg/sub/b.py"),
            to: root.join("lib/sub/b.py")
        }));

        fs::remove_dir_all(root.join("lib")).unwrap();
        let (events, updates) = w.events_until_sentinel("s2");
        assert!(
            events.contains(&WorkspaceEvent::FileRemoved(root.join("lib/a.py"))),
            "{events:?}"
        );
        assert!(events.contains(&WorkspaceEvent::FileRemoved(root.join("lib/sub/b.py"))));
        assert!(updates.contains(&IndexUpdate::Removed("lib/sub/b.py".into())));
    }

    #[test]
    fn editing_gitignore_brings_files_in_and_out() {
        let mut w = watch(
            |root| {
                write(root, ".gitignore", "*.log\n");
                write(root, "app.log", "x");
                write(root, "notes.md", "x");
            },
            WatchOptions::default(),
        );
        let root = w.root.clone();
        fs::write(root.join(".gitignore"), "*.md\n").unwrap();
        let (events, updates) = w.events_until_sentinel("sentinel");
        assert_eq!(
            events,
            [
                WorkspaceEvent::FileRemoved(root.join("notes.md")),
                WorkspaceEvent::FileCreated(root.join("app.log")),
            ]
        );
        assert!(updates.contains(&IndexUpdate::Added("app.log".into())));
        assert!(updates.contains(&IndexUpdate::Removed("notes.md".into())));
    }

    #[test]
    fn new_directories_are_watched_too() {
        let mut w = watch(|_| {}, WatchOptions::default());
        let root = w.root.clone();
        write(&root, "new/deeper/a.rs", "");
        let (events, _) = w.events_until_sentinel("s1");
        assert_eq!(
            events,
            [WorkspaceEvent::FileCreated(root.join("new/deeper/a.rs"))]
        );
        // A file created later in the new directory needs a watch there.
        write(&root, "new/deeper/b.rs", "");
        let (events, _) = w.events_until_sentinel("s2");
        assert_eq!(
            events,
            [WorkspaceEvent::FileCreated(root.join("new/deeper/b.rs"))]
        );
    }

    #[test]
    fn tracked_hidden_files_report_changes_but_stay_out_of_the_index() {
        let mut w = watch(
            |root| write(root, ".github/ci.yml", "on: push"),
            WatchOptions::default(),
        );
        let root = w.root.clone();
        let ci = root.join(".github/ci.yml");
        w.watcher.as_ref().unwrap().track(&ci);
        std::thread::sleep(Duration::from_millis(200));
        fs::write(&ci, "on: pull_request").unwrap();
        let (events, updates) = w.events_until_sentinel("sentinel");
        assert_eq!(events, [WorkspaceEvent::FileChanged(ci.clone())]);
        assert!(updates.is_empty(), "{updates:?}");

        w.watcher.as_ref().unwrap().untrack(&ci);
        std::thread::sleep(Duration::from_millis(200));
        fs::write(&ci, "on: [push]").unwrap();
        let (events, _) = w.events_until_sentinel("sentinel2");
        assert!(events.is_empty(), "{events:?}");
    }

    #[test]
    fn polling_fallback_reports_itself_and_still_sees_changes() {
        let options = WatchOptions {
            force_polling: true,
            poll_interval: Duration::from_millis(100),
            ..WatchOptions::default()
        };
        let (dir, root) = temp_root();
        let (tx, mut rx) = unbounded_channel();
        let watcher = WorkspaceWatcher::start(&root, options, tx).unwrap();
        let mut saw_fallback = false;
        loop {
            match recv(&mut rx) {
                Some(WorkspaceMessage::Event(WorkspaceEvent::PollingFallback(_))) => {
                    saw_fallback = true
                }
                Some(WorkspaceMessage::Event(WorkspaceEvent::WatchReady)) => break,
                Some(_) => {}
                None => panic!("no ready event"),
            }
        }
        assert!(saw_fallback);
        let mut w = Watched {
            _dir: dir,
            root: root.clone(),
            rx,
            watcher: Some(watcher),
        };
        write(&root, "polled.txt", "x");
        let (events, _) = w.events_until_sentinel("sentinel");
        assert_eq!(
            events,
            [WorkspaceEvent::FileCreated(root.join("polled.txt"))]
        );
    }

    #[test]
    fn dropping_the_watcher_stops_it() {
        let mut w = watch(|_| {}, WatchOptions::default());
        drop(w.watcher.take());
        write(&w.root, "after.txt", "x");
        // The sender side is gone with the thread: the channel closes.
        loop {
            match recv(&mut w.rx) {
                None => break,
                Some(WorkspaceMessage::Event(WorkspaceEvent::FileCreated(p))) => {
                    panic!("event after drop: {p:?}")
                }
                Some(_) => {}
            }
        }
    }
}

mod contents {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    fn search(
        root: &Path,
        query: &str,
        options: SearchOptions,
    ) -> (Vec<ContentHit>, SearchSummary) {
        let (tx, mut rx) = unbounded_channel();
        let cancel = Arc::new(AtomicBool::new(false));
        spawn_content_search(root, query, options, cancel, tx).unwrap();
        let mut hits = Vec::new();
        loop {
            match recv(&mut rx).expect("search should finish") {
                SearchMessage::Hits { hits: h, .. } => hits.extend(h),
                SearchMessage::Done { summary, .. } => return (hits, summary),
            }
        }
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let (dir, root) = temp_root();
        write(&root, ".gitignore", "*.log\n");
        write(
            &root,
            "src/a.rs",
            "fn a() {}\n\n    let greeting = \"Hello world\";\nx\ny\nz\n// hello again\n",
        );
        write(&root, "src/b.rs", "nothing here\n");
        write(&root, "run.log", "hello from a log\n");
        write(&root, "certs/server.pem", "hello private key\n");
        write(&root, "credentials.json", "{\"hello\": \"secret\"}\n");
        write(&root, ".env", "HELLO=secret\n");
        fs::write(root.join("image.bin"), b"hello\0\x01\x02binary").unwrap();
        fs::write(
            root.join("huge.txt"),
            format!("hello\n{}", "x".repeat(1_100_000)),
        )
        .unwrap();
        (dir, root)
    }

    #[test]
    fn finds_hits_with_positions_and_respects_ignore_binary_size_and_secrets() {
        let (_dir, root) = tree();
        let (hits, summary) = search(&root, "hello", SearchOptions::default());
        let found: Vec<(&str, u32, u32)> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.line, h.column))
            .collect();
        assert_eq!(found, [("src/a.rs", 3, 21), ("src/a.rs", 7, 4)]);
        assert_eq!(hits[0].line_text, "let greeting = \"Hello world\";");
        assert_eq!(summary.hits, 2);
        assert_eq!(summary.skipped_sensitive, 2);
        // huge.txt (over 1 MiB) is left out unread, and counted.
        assert_eq!(summary.skipped_too_big, 1);
        assert!(!summary.capped && !summary.cancelled);
    }

    #[test]
    fn secrets_only_when_asked_explicitly() {
        let (_dir, root) = tree();
        let options = SearchOptions {
            include_sensitive: true,
            ..SearchOptions::default()
        };
        let (hits, _) = search(&root, "hello", options);
        let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert!(paths.contains(&"certs/server.pem"));
        assert!(paths.contains(&"credentials.json"));
    }

    #[test]
    fn stops_at_the_cap() {
        let (_dir, root) = temp_root();
        write(&root, "a.txt", &"match\n".repeat(50));
        write(&root, "b.txt", &"match\n".repeat(50));
        let options = SearchOptions {
            cap: 10,
            ..SearchOptions::default()
        };
        let (hits, summary) = search(&root, "match", options);
        assert_eq!(hits.len(), 10);
        assert!(summary.capped);
        assert!(hits.iter().all(|h| h.path == "a.txt"));
    }

    #[test]
    fn a_cancelled_search_says_so() {
        let (_dir, root) = temp_root();
        write(&root, "a.txt", "match\n");
        let (tx, mut rx) = unbounded_channel();
        let cancel = Arc::new(AtomicBool::new(true));
        spawn_content_search(&root, "match", SearchOptions::default(), cancel, tx).unwrap();
        match recv(&mut rx) {
            Some(SearchMessage::Done { summary, .. }) => assert!(summary.cancelled),
            other => panic!("expected Done, got {other:?}"),
        }
    }
}

//! Files a cell changed some other way than `fs` — a command it ran
//! (`shell.run`, `subprocess`), or `open()` — noticed by the workspace
//! watcher while the cell runs, or shortly after (the watcher debounces).
//! Best effort, said plainly to the user:
//!
//! - the change is shown under the cell and recorded for `/undo` only when
//!   its earlier text is known: the file was open in a clean buffer, whose
//!   text is exactly what was on disk (checked by hash). Otherwise it is
//!   listed as changed, and `/undo` says it cannot take it back;
//! - only text files count: the watcher does not report ignored files
//!   (build output), and binary files (`__pycache__/*.pyc` an import
//!   leaves, images) are passed over; a change another program makes
//!   while a cell runs is taken for the cell's;
//! - the model is told only about its `fs` writes (their counts are in the
//!   tool result before the watcher hears of anything).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::kernel::caps::{Found, FsWritten, Prior, read_beneath};
use crate::workbench::Workbench;

/// How long after a cell ends the watcher's news is still the cell's.
const GRACE: Duration = Duration::from_millis(1500);

/// A save of the user's is theirs, not the running cell's, for this long.
const OWN_SAVE: Duration = Duration::from_secs(2);

/// Largest file read to record a change.
const MAX_RECORDED: u64 = 8 << 20;

/// When cells ran, and which files the user saved, to tell a cell's
/// changes from everyone else's.
#[derive(Debug, Default)]
pub struct CellWindow {
    ended: Option<Instant>,
    saved: HashMap<PathBuf, Instant>,
    /// Changes recorded since the last cell ended.
    recorded: usize,
}

/// Most changes by commands recorded per cell.
const MAX_PER_CELL: usize = 200;

impl CellWindow {
    /// A cell finished: news for a little while yet is still its.
    pub(crate) fn cell_ended(&mut self, at: Instant) {
        self.ended = Some(at);
        self.recorded = 0;
    }

    /// Room for one more recorded change this cell?
    fn take_one(&mut self) -> bool {
        self.recorded += 1;
        self.recorded <= MAX_PER_CELL
    }

    /// The user saved `path` from the editor.
    pub(crate) fn saved_by_user(&mut self, path: &Path, at: Instant) {
        self.saved
            .retain(|_, when| at.duration_since(*when) < OWN_SAVE);
        self.saved.insert(path.to_owned(), at);
    }

    fn is_cells(&self, running: bool, path: &Path, now: Instant) -> bool {
        let in_window = running
            || self
                .ended
                .is_some_and(|end| now.duration_since(end) < GRACE);
        let own_save = self
            .saved
            .get(path)
            .is_some_and(|when| now.duration_since(*when) < OWN_SAVE);
        in_window && !own_save
    }
}

/// The watcher saw `path` change (`created`: appear where it knew no file;
/// a file renamed there is not created). Called before open buffers
/// reload, so a clean buffer still holds the text from before.
pub fn on_disk_event(workbench: &mut Workbench, path: &Path, created: bool) {
    let running = crate::workbench::cells::any_running(workbench);
    let now = Instant::now();
    if !workbench.changes.window.is_cells(running, path, now) {
        return;
    }
    // A command that writes thousands of files must not freeze the loop
    // (each one is read, diffed and saved): past the cap they go unlisted.
    if !workbench.changes.window.take_one() {
        return;
    }
    let root = super::workspace_root(workbench);
    let Ok(relative) = path.strip_prefix(&root) else {
        return;
    };
    // Beneath the workspace, no link followed, a FIFO not waited on.
    // Removed, not a plain file, too big: not recorded.
    let Ok(Found::Bytes(after)) = read_beneath(&root, relative, MAX_RECORDED) else {
        return;
    };
    if memchr::memchr(0, &after[..after.len().min(8000)]).is_some() {
        return; // binary
    }
    // An `fs` write already recorded (the watcher hears of those too), or
    // a file the log already holds as it is now.
    if workbench.changes.last_text(path) == Some(after.as_slice()) {
        return;
    }
    // Made from nothing only if nothing was removed there before: a file
    // deleted and made again (identically, perhaps) is a change to what
    // was there, which `/undo` must not delete (issue 25, route 19).
    let before = if created && !workbench.changes.vanished.may_have_been_there(path) {
        Prior::Absent
    } else {
        workbench
            .editors
            .tabs
            .iter()
            .find(|doc| doc.path() == path)
            .and_then(|doc| doc.disk_bytes())
            .map_or(Prior::Unrecorded, Prior::Bytes)
    };
    if before == Prior::Bytes(after.clone()) {
        return;
    }
    let written = FsWritten {
        path: path.to_owned(),
        before,
        after,
    };
    super::record_written(workbench, &written, &written);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppState;

    #[test]
    fn the_window_covers_the_cell_and_a_grace_but_not_the_users_saves() {
        let mut window = CellWindow::default();
        let t0 = Instant::now();
        let path = Path::new("/w/a.py");
        assert!(!window.is_cells(false, path, t0), "no cell ran");
        assert!(window.is_cells(true, path, t0));
        window.cell_ended(t0);
        assert!(window.is_cells(false, path, t0 + Duration::from_millis(500)));
        assert!(!window.is_cells(false, path, t0 + GRACE));
        window.saved_by_user(path, t0);
        assert!(!window.is_cells(true, path, t0 + Duration::from_millis(100)));
        assert!(window.is_cells(true, Path::new("/w/b.py"), t0));
    }

    use crate::app::AppEvent;
    use crate::app::update::handle_app_event;
    use crate::config::Settings;
    use crate::workbench::event;
    use crate::workbench::kernel::{CellOrigin, KernelUpdate};
    use crate::workspace::{WorkspaceEvent, WorkspaceMessage};

    fn running_cell(root: &Path) -> AppState {
        let mut s = AppState::new(root.to_path_buf(), Settings::defaults());
        handle_app_event(
            &mut s,
            AppEvent::Kernel(KernelUpdate::Queued {
                cell_id: 1,
                code: "subprocess.run(...)".into(),
                origin: CellOrigin::Agent,
            }),
        );
        s
    }

    fn changed(s: &mut AppState, path: &Path) {
        handle_app_event(
            s,
            AppEvent::Workspace(WorkspaceMessage::Event(WorkspaceEvent::FileChanged(
                path.to_owned(),
            ))),
        );
    }

    /// Applies the app's events until the running cell lists a change
    /// (`what` says which event the test waits for), at most 10 s.
    async fn until_the_cell_has_changes(
        s: &mut AppState,
        rx: &mut event::AppEventReceiver,
        what: &str,
    ) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while cell_changes(s).is_empty() {
            let event = tokio::time::timeout_at(deadline, rx.recv())
                .await
                .unwrap_or_else(|_| panic!("{what}"))
                .expect("channel open");
            handle_app_event(s, event);
        }
    }

    fn cell_changes(s: &AppState) -> Vec<crate::workbench::transcript::CellChange> {
        s.workbench
            .transcript
            .iter()
            .rev()
            .find_map(|m| m.cell.as_ref())
            .map(|c| c.changes.clone())
            .unwrap_or_default()
    }

    /// A file open in a clean buffer that a command rewrites: the change is
    /// shown under the cell with its diff, and `/undo` takes it back byte
    /// for byte. One not open is listed without a diff, and `/undo` says
    /// it cannot take it back.
    #[test]
    fn a_commands_change_to_an_open_file_can_be_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (open, closed) = (root.join("open.py"), root.join("closed.txt"));
        std::fs::write(&open, "a = 1\r\nb = 2\r\n").unwrap();
        std::fs::write(&closed, "old\n").unwrap();
        let mut s = running_cell(&root);
        s.workbench.changes.start_group("the agent's answer");
        crate::app::editors::open(&mut s, &open, None);
        std::fs::write(&open, "a = 1\r\nb = 3\r\n").unwrap();
        std::fs::write(&closed, "new\n").unwrap();
        changed(&mut s, &open);
        changed(&mut s, &closed);
        let shown = cell_changes(&s);
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert_eq!((shown[0].added, shown[0].removed), (1, 1));
        assert!(shown[0].diff.contains("-b = 2"), "{}", shown[0].diff);
        assert!(shown[1].earlier_unknown);

        let report = super::super::undo(&mut s.workbench);
        assert!(report.contains("open.py undone"), "{report}");
        assert!(
            report.contains("closed.txt left as it is: its earlier text was not kept"),
            "{report}"
        );
        assert_eq!(std::fs::read(&open).unwrap(), b"a = 1\r\nb = 2\r\n");
        assert_eq!(std::fs::read(&closed).unwrap(), b"new\n");
    }

    /// Review finding: a file a command creates was recorded with its
    /// earlier text unknown, so /undo could not remove it; now it is known
    /// not to have existed. A FIFO is passed over, not waited on.
    #[test]
    fn a_file_a_command_creates_can_be_undone_and_a_fifo_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let made = root.join("gen.txt");
        let mut s = running_cell(&root);
        s.workbench.changes.start_group("the agent's answer");
        std::fs::write(&made, "generated\n").unwrap();
        handle_app_event(
            &mut s,
            AppEvent::Workspace(WorkspaceMessage::Event(WorkspaceEvent::FileCreated(
                made.clone(),
            ))),
        );
        let fifo = root.join("pipe");
        let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) of a path in the test's own folder.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        changed(&mut s, &fifo);
        assert_eq!(cell_changes(&s).len(), 1, "only the text file");
        let report = super::super::undo(&mut s.workbench);
        assert!(report.contains("gen.txt undone"), "{report}");
        assert!(!made.exists());
    }

    /// Issue 25, route 19: a cell that deletes the user's file and makes
    /// it again, identically, in two of the watcher's batches, was recorded
    /// as having created it, and `/undo` deleted the user's file. A file
    /// made where one was removed (or renamed to) is a change to what was
    /// there: `/undo` leaves it and says why.
    #[test]
    fn undo_never_deletes_a_file_deleted_and_made_again_or_moved_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (mine, moved) = (root.join("mine.txt"), root.join("moved.txt"));
        std::fs::write(&mine, "the user's work\n").unwrap();
        let mut s = running_cell(&root);
        s.workbench.changes.start_group("the agent's answer");
        let event = |s: &mut AppState, event: WorkspaceEvent| {
            handle_app_event(s, AppEvent::Workspace(WorkspaceMessage::Event(event)));
        };
        std::fs::remove_file(&mine).unwrap();
        event(&mut s, WorkspaceEvent::FileRemoved(mine.clone()));
        std::fs::write(&mine, "the user's work\n").unwrap();
        event(&mut s, WorkspaceEvent::FileCreated(mine.clone()));
        std::fs::rename(&mine, &moved).unwrap();
        event(
            &mut s,
            WorkspaceEvent::Renamed {
                from: mine.clone(),
                to: moved.clone(),
            },
        );
        let report = super::super::undo(&mut s.workbench);
        assert!(report.contains("moved.txt left as it is"), "{report}");
        assert_eq!(std::fs::read(&moved).unwrap(), b"the user's work\n");
    }

    /// Route 19 against the real watcher and a real command.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_watcher_and_undo_leave_a_file_a_command_deleted_and_wrote_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("mine.txt");
        std::fs::write(&file, "the user's work\n").unwrap();
        let (tx, mut rx) = event::channel();
        let mut s = running_cell(&root);
        s.workbench.changes.start_group("the agent's answer");
        let _services = crate::app::workspace_services::start(&mut s, &tx);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let status = std::process::Command::new("sh")
            .args([
                "-c",
                "rm mine.txt; sleep 1; printf \"the user's work\\n\" > mine.txt",
            ])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(status.success());
        until_the_cell_has_changes(&mut s, &mut rx, "the watcher reported the file").await;
        let report = super::super::undo(&mut s.workbench);
        assert!(report.contains("mine.txt left as it is"), "{report}");
        assert_eq!(std::fs::read(&file).unwrap(), b"the user's work\n");
    }

    /// Outside a cell, or the user's own save, is not a cell's change.
    #[test]
    fn changes_outside_a_cell_and_the_users_saves_are_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("a.txt");
        std::fs::write(&file, "one\n").unwrap();
        let mut s = AppState::new(root.clone(), Settings::defaults());
        std::fs::write(&file, "two\n").unwrap();
        changed(&mut s, &file);
        assert!(super::super::undo(&mut s.workbench).starts_with("Nothing to undo"));

        let mut s = running_cell(&root);
        s.workbench
            .changes
            .window
            .saved_by_user(&file, Instant::now());
        std::fs::write(&file, "three\n").unwrap();
        changed(&mut s, &file);
        assert!(cell_changes(&s).is_empty());
    }

    /// The real watcher: a file another process writes while a cell runs
    /// reaches the cell as a change.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_watcher_reports_a_commands_write_under_the_running_cell() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let file = root.join("out.txt");
        std::fs::write(&file, "before\n").unwrap();
        let (tx, mut rx) = event::channel();
        let mut s = running_cell(&root);
        let _services = crate::app::workspace_services::start(&mut s, &tx);
        crate::app::editors::open(&mut s, &file, None);
        // Let the watcher settle, then a "command" writes.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let status = std::process::Command::new("sh")
            .args(["-c", "printf 'after\\n' > out.txt"])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(status.success());
        until_the_cell_has_changes(&mut s, &mut rx, "the watcher reported the write").await;
        let change = &cell_changes(&s)[0];
        assert_eq!(change.path, file);
        assert!(
            change.diff.contains("-before") && change.diff.contains("+after"),
            "{}",
            change.diff
        );
    }
}

//! Watches the workspace and reports changes as [`WorkspaceEvent`]s (plus
//! the matching [`IndexUpdate`]s) on the workspace channel.
//!
//! Only directories the index would list are watched, each non-recursively:
//! a Rust or JS repository's `target/` or `node_modules/` would otherwise
//! cost thousands of inotify watches and flood us with build noise. New
//! directories are watched as they appear. Raw `notify` events are collected
//! until the tree is quiet for `debounce` (or at most `max_latency`), then
//! coalesced into net changes by [`Coalescer`].
//!
//! `notify-debouncer-full` is not used: it registers every watched path in a
//! list that is searched linearly on each `watch` call (quadratic for
//! per-directory watches), and net-state coalescing needs only the batching.
//!
//! Everything runs on one background thread; the UI loop only receives
//! messages. If the OS runs out of watches (inotify's `max_user_watches`),
//! the watcher switches to polling and says so.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::event::{ModifyKind, RenameMode};
use notify::{Event, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode, Watcher};
use thiserror::Error;
use tokio::sync::mpsc::UnboundedSender;

use super::coalesce::{Coalescer, PathKind, Probe, RawBatch};
use super::events::{IndexUpdate, WorkspaceEvent, WorkspaceMessage};
use super::ignore_rules::IgnoreRules;
use super::walk::{relative_path, workspace_walker};

/// How the watcher behaves; the defaults suit an interactive editor.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// How long the tree must be quiet before a batch is reported; long
    /// enough to swallow an editor's write-temp-then-rename save.
    pub debounce: Duration,
    /// A batch is reported after this long even if events keep coming
    /// (e.g. during a long `git checkout`).
    pub max_latency: Duration,
    /// How often the polling fallback scans the tree.
    pub poll_interval: Duration,
    /// Poll from the start (network file systems, or to test the fallback).
    pub force_polling: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(150),
            max_latency: Duration::from_secs(1),
            poll_interval: Duration::from_secs(2),
            force_polling: false,
        }
    }
}

/// Why the watcher could not start at all.
#[derive(Debug, Error)]
pub enum WatcherError {
    #[error("cannot start the file watcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A running watcher. Dropping it stops the watch and its thread.
#[derive(Debug)]
pub struct WorkspaceWatcher {
    stop: Arc<AtomicBool>,
    inputs: Sender<Input>,
    thread: Option<JoinHandle<()>>,
}

impl WorkspaceWatcher {
    /// Starts watching `root` (a canonical workspace root) and sends into
    /// `tx`. Returns at once; [`WorkspaceEvent::WatchReady`] follows when the
    /// watcher has learned which files exist.
    pub fn start(
        root: &Path,
        options: WatchOptions,
        tx: UnboundedSender<WorkspaceMessage>,
    ) -> Result<Self, WatcherError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (inputs, inbox) = channel();
        let worker = Worker {
            root: root.to_path_buf(),
            options,
            tx,
            stop: stop.clone(),
            inputs: inputs.clone(),
            watched: BTreeSet::new(),
        };
        let thread = std::thread::Builder::new()
            .name("workspace-watcher".into())
            .spawn(move || worker.run(&inbox))?;
        Ok(Self {
            stop,
            inputs,
            thread: Some(thread),
        })
    }

    /// Also report changes to `path` although the ignore rules hide it
    /// (an open `.env` or `.github/workflows/ci.yml`). It must be inside the
    /// workspace root.
    pub fn track(&self, path: &Path) {
        let _ = self.inputs.send(Input::Track(path.to_path_buf()));
    }

    /// Undoes [`WorkspaceWatcher::track`] (the document was closed).
    pub fn untrack(&self, path: &Path) {
        let _ = self.inputs.send(Input::Untrack(path.to_path_buf()));
    }
}

impl Drop for WorkspaceWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.inputs.send(Input::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Input {
    Raw(notify::Result<Event>),
    Track(PathBuf),
    Untrack(PathBuf),
    Stop,
}

/// The notify backend in use and whether it is the polling fallback.
struct Backend {
    watcher: Box<dyn Watcher + Send>,
    polling: bool,
}

struct Worker {
    root: PathBuf,
    options: WatchOptions,
    tx: UnboundedSender<WorkspaceMessage>,
    stop: Arc<AtomicBool>,
    inputs: Sender<Input>,
    /// Directories with a watch on them.
    watched: BTreeSet<PathBuf>,
}

impl Worker {
    fn run(mut self, inbox: &Receiver<Input>) {
        let Some(mut backend) = self.start_backend() else {
            return;
        };
        let mut probe = DiskProbe {
            rules: IgnoreRules::new(&self.root),
            tracked: HashSet::new(),
            new_dirs: Vec::new(),
        };
        // Watch each directory as the walk finds it, so nothing created
        // during the walk is missed; what exists is what the walk saw.
        let (root, stop) = (self.root.clone(), self.stop.clone());
        let Some(known) = walk(&root, &stop, |dir| self.watch_dirs(&mut backend, vec![dir])) else {
            return;
        };
        let mut coalescer = Coalescer::new(known);
        if !self.send(WorkspaceEvent::WatchReady) {
            return;
        }
        let mut pending: Vec<Event> = Vec::new();
        let mut batch_started = Instant::now();
        let mut last_event = Instant::now();
        loop {
            if !pending.is_empty() && batch_started.elapsed() >= self.options.max_latency {
                // A steady flood of events (a big checkout): report what we have.
                let events = std::mem::take(&mut pending);
                if !self.process(&events, &mut coalescer, &mut probe, &mut backend) {
                    return;
                }
                continue;
            }
            let input = if pending.is_empty() {
                inbox.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                let quiet = self.options.debounce.saturating_sub(last_event.elapsed());
                let cap = self
                    .options
                    .max_latency
                    .saturating_sub(batch_started.elapsed());
                inbox.recv_timeout(quiet.min(cap))
            };
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            match input {
                Ok(Input::Raw(Ok(event))) => {
                    if pending.is_empty() {
                        batch_started = Instant::now();
                    }
                    last_event = Instant::now();
                    pending.push(event);
                }
                Ok(Input::Raw(Err(error))) => {
                    if is_watch_limit(&error) && !backend.polling {
                        let reason =
                            format!("{error}; polling every {:?}", self.options.poll_interval);
                        match self.switch_to_polling(reason) {
                            Some(polling) => backend = polling,
                            None => return,
                        }
                    } else if !self.send(WorkspaceEvent::WatchError(error.to_string())) {
                        return;
                    }
                }
                Ok(Input::Track(path)) => {
                    if let Some(dir) = path.parent()
                        && !self.watched.contains(dir)
                        && dir.starts_with(&self.root)
                    {
                        self.watch_dirs(&mut backend, vec![dir.to_path_buf()]);
                    }
                    probe.tracked.insert(path.clone());
                    coalescer.learn(&path, probe.kind(&path) == PathKind::File);
                }
                Ok(Input::Untrack(path)) => {
                    probe.tracked.remove(&path);
                    // Forget it unless the index rules would list it anyway.
                    let listed = probe.kind(&path) == PathKind::File
                        && !probe.rules.is_ignored(&path, false);
                    coalescer.learn(&path, listed);
                }
                Ok(Input::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {
                    let events = std::mem::take(&mut pending);
                    if !self.process(&events, &mut coalescer, &mut probe, &mut backend) {
                        return;
                    }
                }
            }
        }
    }

    /// Turns one quiet-period batch into events; false once nobody listens.
    fn process(
        &mut self,
        events: &[Event],
        coalescer: &mut Coalescer,
        probe: &mut DiskProbe,
        backend: &mut Backend,
    ) -> bool {
        let (batch, rescan) = raw_batch(events, probe);
        let out = if rescan {
            let (root, stop) = (self.root.clone(), self.stop.clone());
            let Some(present) = walk(&root, &stop, |dir| self.watch_dirs(backend, vec![dir]))
            else {
                return false;
            };
            coalescer.rescan(present, probe)
        } else if batch.is_empty() {
            return true;
        } else {
            coalescer.apply(&batch, probe)
        };
        // Directories that went away lost their watches with them.
        for path in &batch.touched {
            if !path.is_dir() {
                let gone: Vec<PathBuf> = self
                    .watched
                    .range(path.clone()..)
                    .take_while(|dir| dir.starts_with(path))
                    .cloned()
                    .collect();
                for dir in gone {
                    let _ = backend.watcher.unwatch(&dir);
                    self.watched.remove(&dir);
                }
            }
        }
        let new_dirs = std::mem::take(&mut probe.new_dirs);
        self.watch_dirs(backend, new_dirs);
        self.send_events(out, &probe.tracked)
    }

    /// Watches each directory non-recursively; on hitting the OS limit,
    /// switches `backend` to polling (which re-watches everything).
    fn watch_dirs(&mut self, backend: &mut Backend, dirs: Vec<PathBuf>) {
        for dir in dirs {
            if self.watched.contains(&dir) {
                continue;
            }
            match backend.watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir);
                }
                Err(error) if is_watch_limit(&error) && !backend.polling => {
                    self.watched.insert(dir);
                    let reason = format!(
                        "{error} after {} directories (raise fs.inotify.max_user_watches); \
                         polling every {:?}",
                        self.watched.len(),
                        self.options.poll_interval
                    );
                    match self.switch_to_polling(reason) {
                        Some(polling) => *backend = polling,
                        None => return,
                    }
                }
                // Gone again before we got to it: nothing to watch.
                Err(_) => {}
            }
        }
    }

    /// The native watcher, or the polling one if that fails or was asked for.
    fn start_backend(&self) -> Option<Backend> {
        if self.options.force_polling {
            return self.polling_backend("polling was requested".into());
        }
        let inputs = self.inputs.clone();
        let handler = move |event| {
            let _ = inputs.send(Input::Raw(event));
        };
        match RecommendedWatcher::new(handler, notify::Config::default()) {
            Ok(watcher) => Some(Backend {
                watcher: Box::new(watcher),
                polling: false,
            }),
            Err(error) => self.polling_backend(format!("native file watching failed: {error}")),
        }
    }

    /// Replaces the native backend by polling and re-watches every directory.
    fn switch_to_polling(&mut self, reason: String) -> Option<Backend> {
        let mut backend = self.polling_backend(reason)?;
        let dirs: Vec<PathBuf> = std::mem::take(&mut self.watched).into_iter().collect();
        self.watch_dirs(&mut backend, dirs);
        Some(backend)
    }

    fn polling_backend(&self, reason: String) -> Option<Backend> {
        let inputs = self.inputs.clone();
        let handler = move |event| {
            let _ = inputs.send(Input::Raw(event));
        };
        let config = notify::Config::default().with_poll_interval(self.options.poll_interval);
        match PollWatcher::new(handler, config) {
            Ok(watcher) => {
                self.send(WorkspaceEvent::PollingFallback(reason));
                Some(Backend {
                    watcher: Box::new(watcher),
                    polling: true,
                })
            }
            Err(error) => {
                self.send(WorkspaceEvent::WatchError(format!(
                    "file watching is off ({reason}; polling failed too: {error})"
                )));
                None
            }
        }
    }

    /// Sends the events and the index updates they imply; false once the
    /// receiver is gone.
    fn send_events(&self, events: Vec<WorkspaceEvent>, tracked: &HashSet<PathBuf>) -> bool {
        for event in events {
            for update in self.index_updates(&event, tracked) {
                if self.tx.send(WorkspaceMessage::Index(update)).is_err() {
                    return false;
                }
            }
            if !self.send(event) {
                return false;
            }
        }
        true
    }

    fn index_updates(
        &self,
        event: &WorkspaceEvent,
        tracked: &HashSet<PathBuf>,
    ) -> Vec<IndexUpdate> {
        // Tracked files may be ones the index deliberately leaves out.
        let rel = |p: &Path| {
            if tracked.contains(p) {
                None
            } else {
                relative_path(&self.root, p)
            }
        };
        match event {
            WorkspaceEvent::FileCreated(path) => {
                rel(path).map(IndexUpdate::Added).into_iter().collect()
            }
            WorkspaceEvent::FileRemoved(path) => {
                rel(path).map(IndexUpdate::Removed).into_iter().collect()
            }
            WorkspaceEvent::Renamed { from, to } => rel(from)
                .map(IndexUpdate::Removed)
                .into_iter()
                .chain(rel(to).map(IndexUpdate::Added))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn send(&self, event: WorkspaceEvent) -> bool {
        self.tx.send(WorkspaceMessage::Event(event)).is_ok()
    }
}

/// Non-ignored files under `dir`; every directory (including `dir`) is
/// handed to `on_dir` as soon as it is found, before its entries are read,
/// so a watch placed there misses nothing. `None` if asked to stop.
fn walk(dir: &Path, stop: &AtomicBool, mut on_dir: impl FnMut(PathBuf)) -> Option<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in workspace_walker(dir).build() {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let Ok(entry) = entry else { continue };
        match entry.file_type() {
            Some(t) if t.is_dir() => on_dir(entry.into_path()),
            Some(t) if t.is_file() || (t.is_symlink() && entry.path().is_file()) => {
                files.push(entry.into_path())
            }
            _ => {}
        }
    }
    Some(files)
}

/// Sorts a quiet-period batch into touched paths, appearances and renames;
/// the flag says the backend lost events and a rescan is needed (also when
/// an ignore file changed, since then any file may have (dis)appeared).
fn raw_batch(events: &[Event], probe: &mut DiskProbe) -> (RawBatch, bool) {
    let mut batch = RawBatch::default();
    let mut rescan = false;
    for event in events {
        if event.need_rescan() {
            rescan = true;
            continue;
        }
        for path in &event.paths {
            rescan |= probe.rules.note_change(path);
        }
        match event.kind {
            // Reads and opens (including our own contents search) change nothing.
            EventKind::Access(_) | EventKind::Other => continue,
            EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if event.paths.len() == 2 => {
                batch
                    .renames
                    .push((event.paths[0].clone(), event.paths[1].clone()));
                batch.appeared.insert(event.paths[1].clone());
            }
            EventKind::Create(_)
            | EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Any)) => {
                batch.appeared.extend(event.paths.iter().cloned());
            }
            _ => {}
        }
        batch.touched.extend(event.paths.iter().cloned());
    }
    (batch, rescan)
}

fn is_watch_limit(error: &notify::Error) -> bool {
    match &error.kind {
        notify::ErrorKind::MaxFilesWatch => true,
        // ENOSPC from inotify_add_watch, EMFILE from inotify_init.
        notify::ErrorKind::Io(io) => matches!(io.raw_os_error(), Some(28 | 24)),
        _ => false,
    }
}

/// The real disk, the workspace's ignore rules, and the directories that
/// appeared while probing (to be watched next).
struct DiskProbe {
    rules: IgnoreRules,
    /// Files the user asked to follow despite the ignore rules.
    tracked: HashSet<PathBuf>,
    new_dirs: Vec<PathBuf>,
}

impl Probe for DiskProbe {
    fn kind(&self, path: &Path) -> PathKind {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => PathKind::File,
            Ok(meta) if meta.is_dir() => PathKind::Dir,
            Ok(meta) if meta.file_type().is_symlink() && path.is_file() => PathKind::File,
            _ => PathKind::Other,
        }
    }

    fn files_under(&mut self, dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in workspace_walker(dir).build().filter_map(Result::ok) {
            match entry.file_type() {
                Some(t) if t.is_dir() => self.new_dirs.push(entry.into_path()),
                Some(t) if t.is_file() => files.push(entry.into_path()),
                _ => {}
            }
        }
        files
    }

    fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        !self.tracked.contains(path) && self.rules.is_ignored(path, is_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_limit_errors_are_recognised() {
        assert!(is_watch_limit(&notify::Error::new(
            notify::ErrorKind::MaxFilesWatch
        )));
        assert!(is_watch_limit(&notify::Error::io(
            std::io::Error::from_raw_os_error(28)
        )));
        assert!(!is_watch_limit(&notify::Error::path_not_found()));
    }

    /// The OS limit cannot be lowered for one test without disturbing every
    /// other process, so the backend's error is injected where notify would
    /// deliver it; the switch to polling and what follows are real.
    #[test]
    fn hitting_the_watch_limit_switches_to_polling_and_keeps_reporting() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = WatchOptions {
            poll_interval: Duration::from_millis(100),
            ..WatchOptions::default()
        };
        let watcher = WorkspaceWatcher::start(&root, options, tx).unwrap();
        let next = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<WorkspaceMessage>| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(message) = rx.try_recv() {
                    return Some(message);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            None
        };
        assert_eq!(
            next(&mut rx),
            Some(WorkspaceMessage::Event(WorkspaceEvent::WatchReady))
        );
        let limit = notify::Error::new(notify::ErrorKind::MaxFilesWatch);
        watcher.inputs.send(Input::Raw(Err(limit))).unwrap();
        match next(&mut rx) {
            Some(WorkspaceMessage::Event(WorkspaceEvent::PollingFallback(reason))) => {
                assert!(reason.contains("limit"), "{reason}");
            }
            other => panic!("expected PollingFallback, got {other:?}"),
        }
        // Let the poller take its first snapshot, then change something.
        std::thread::sleep(Duration::from_millis(300));
        std::fs::write(root.join("after.txt"), "x").unwrap();
        let created = WorkspaceMessage::Event(WorkspaceEvent::FileCreated(root.join("after.txt")));
        let mut seen = Vec::new();
        while let Some(message) = next(&mut rx) {
            if message == created {
                return;
            }
            seen.push(message);
        }
        panic!("no FileCreated after falling back; saw {seen:?}");
    }
}

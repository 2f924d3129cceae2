//! Watches the workspace root and reports changes as [`WorkspaceEvent`]s
//! (plus the matching [`IndexUpdate`]s) on the workspace channel.
//!
//! Raw events come from `notify` through `notify-debouncer-full`, are
//! filtered by the same ignore rules as the index, and are coalesced into net
//! changes by [`Coalescer`]. Everything runs on one background thread; the
//! UI loop only receives messages. If the OS runs out of watches (inotify's
//! `max_user_watches`), the watcher switches to polling and says so.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use notify_debouncer_full::notify::event::{ModifyKind, RenameMode};
use notify_debouncer_full::notify::{
    self, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode,
};
use notify_debouncer_full::{
    DebounceEventResult, DebouncedEvent, Debouncer, NoCache, RecommendedCache, new_debouncer_opt,
};
use thiserror::Error;
use tokio::sync::mpsc::UnboundedSender;

use super::coalesce::{Coalescer, PathKind, Probe, RawBatch};
use super::events::{IndexUpdate, WorkspaceEvent, WorkspaceMessage};
use super::ignore_rules::IgnoreRules;
use super::walk::{relative_path, workspace_walker};

/// How the watcher behaves; the defaults suit an interactive editor.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// How long a path must be quiet before its events are reported; long
    /// enough to swallow an editor's write-temp-then-rename save.
    pub debounce: Duration,
    /// How often the polling fallback scans the tree.
    pub poll_interval: Duration,
    /// Poll from the start (network file systems, or to test the fallback).
    pub force_polling: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(200),
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
    wake: Sender<Input>,
    thread: Option<JoinHandle<()>>,
}

impl WorkspaceWatcher {
    /// Starts watching `root` (a canonical workspace root) recursively and
    /// sends into `tx`. Returns at once; the first events may take a moment
    /// while the watcher learns which files exist.
    pub fn start(
        root: &Path,
        options: WatchOptions,
        tx: UnboundedSender<WorkspaceMessage>,
    ) -> Result<Self, WatcherError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, inputs) = channel();
        let worker = Worker {
            root: root.to_path_buf(),
            options,
            tx,
            stop: stop.clone(),
            inputs_tx: wake.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("workspace-watcher".into())
            .spawn(move || worker.run(inputs))?;
        Ok(Self {
            stop,
            wake,
            thread: Some(thread),
        })
    }
}

impl Drop for WorkspaceWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.wake.send(Input::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

enum Input {
    Debounced(DebounceEventResult),
    Stop,
}

/// The notify backend in use. It is only held, never read: dropping it
/// stops watching.
enum Backend {
    Native {
        _debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    },
    Polling {
        _debouncer: Debouncer<PollWatcher, NoCache>,
    },
}

struct Worker {
    root: PathBuf,
    options: WatchOptions,
    tx: UnboundedSender<WorkspaceMessage>,
    stop: Arc<AtomicBool>,
    inputs_tx: Sender<Input>,
}

impl Worker {
    fn run(self, inputs: Receiver<Input>) {
        let mut backend = self.start_backend();
        let mut probe = DiskProbe {
            rules: IgnoreRules::new(&self.root),
        };
        // Watch first, then learn what exists, so nothing created in between is missed.
        let Some(known) = self.walk_files(&self.root) else {
            return;
        };
        let mut coalescer = Coalescer::new(known);
        if !self.send(WorkspaceEvent::WatchReady) {
            return;
        }
        while let Ok(input) = inputs.recv() {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            match input {
                Input::Stop => break,
                Input::Debounced(Ok(events)) => {
                    let (batch, rescan) = raw_batch(&events, &mut probe);
                    let out = if rescan {
                        let Some(present) = self.walk_files(&self.root) else {
                            break;
                        };
                        coalescer.rescan(present, &mut probe)
                    } else if batch.is_empty() {
                        continue;
                    } else {
                        coalescer.apply(&batch, &mut probe)
                    };
                    if !self.send_events(out) {
                        break;
                    }
                }
                Input::Debounced(Err(errors)) => {
                    for error in errors {
                        if is_watch_limit(&error) && matches!(backend, Some(Backend::Native { .. }))
                        {
                            let reason =
                                format!("{error}; polling every {:?}", self.options.poll_interval);
                            backend = self.start_polling(reason);
                        } else if !self.send(WorkspaceEvent::WatchError(error.to_string())) {
                            return;
                        }
                    }
                }
            }
        }
        drop(backend);
    }

    /// The native watcher, or the polling one if that fails or was asked for.
    fn start_backend(&self) -> Option<Backend> {
        if self.options.force_polling {
            return self.start_polling("polling was requested".into());
        }
        let sender = self.inputs_tx.clone();
        let native = new_debouncer_opt::<_, RecommendedWatcher, RecommendedCache>(
            self.options.debounce,
            None,
            move |result| {
                let _ = sender.send(Input::Debounced(result));
            },
            RecommendedCache::new(),
            notify::Config::default(),
        )
        .and_then(|mut debouncer| {
            debouncer.watch(&self.root, RecursiveMode::Recursive)?;
            Ok(debouncer)
        });
        match native {
            Ok(debouncer) => Some(Backend::Native {
                _debouncer: debouncer,
            }),
            Err(error) => {
                let reason = if is_watch_limit(&error) {
                    format!("{error} (raise fs.inotify.max_user_watches to fix)")
                } else {
                    format!("native file watching failed: {error}")
                };
                self.start_polling(reason)
            }
        }
    }

    fn start_polling(&self, reason: String) -> Option<Backend> {
        let sender = self.inputs_tx.clone();
        let config = notify::Config::default().with_poll_interval(self.options.poll_interval);
        let polling = new_debouncer_opt::<_, PollWatcher, NoCache>(
            self.options.debounce,
            None,
            move |result| {
                let _ = sender.send(Input::Debounced(result));
            },
            NoCache,
            config,
        )
        .and_then(|mut debouncer| {
            debouncer.watch(&self.root, RecursiveMode::Recursive)?;
            Ok(debouncer)
        });
        match polling {
            Ok(debouncer) => {
                self.send(WorkspaceEvent::PollingFallback(reason));
                Some(Backend::Polling {
                    _debouncer: debouncer,
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

    /// All non-ignored files under `dir`; `None` if asked to stop meanwhile.
    fn walk_files(&self, dir: &Path) -> Option<Vec<PathBuf>> {
        let mut files = Vec::new();
        for entry in workspace_walker(dir).build() {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let Ok(entry) = entry else { continue };
            if entry
                .file_type()
                .is_some_and(|t| t.is_file() || (t.is_symlink() && entry.path().is_file()))
            {
                files.push(entry.into_path());
            }
        }
        Some(files)
    }

    /// Sends the events and the index updates they imply; false once the
    /// receiver is gone.
    fn send_events(&self, events: Vec<WorkspaceEvent>) -> bool {
        for event in events {
            for update in self.index_updates(&event) {
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

    fn index_updates(&self, event: &WorkspaceEvent) -> Vec<IndexUpdate> {
        let rel = |p: &Path| relative_path(&self.root, p);
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

/// Sorts a debounced batch into touched paths, appearances and renames;
/// the flag says the backend lost events and a rescan is needed (also when
/// an ignore file changed, since then any file may have (dis)appeared).
fn raw_batch(events: &[DebouncedEvent], probe: &mut DiskProbe) -> (RawBatch, bool) {
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

/// The real disk and the workspace's ignore rules.
struct DiskProbe {
    rules: IgnoreRules,
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
        workspace_walker(dir)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.into_path())
            .collect()
    }

    fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        self.rules.is_ignored(path, is_dir)
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
}

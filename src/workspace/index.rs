//! The list of files in the workspace: built by a parallel walk on
//! background threads that streams sorted batches, so the first picker frame
//! does not wait for a 100 000-file tree; kept up to date by the watcher.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tokio::sync::mpsc::UnboundedSender;

use super::events::{IndexUpdate, WorkspaceMessage};
use super::walk::{relative_path, workspace_walker};

/// Size of the first batch: small, so the picker has something to show at once.
const FIRST_BATCH: usize = 256;
/// Size of later batches: large, so the UI merges a few big sorted runs
/// instead of hundreds of small ones.
const LATER_BATCH: usize = 4096;
/// Walk errors beyond this many are counted but not each reported.
const MAX_REPORTED_ERRORS: usize = 10;

/// Hands out generations that are unique across all indexes in the process.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// The sorted, de-duplicated set of workspace-relative file paths. Owned by
/// the UI loop and updated only through [`FileIndex::apply`].
///
/// Cloning is O(1) (the list is shared copy-on-write), so a snapshot can be
/// handed to a background matcher on every keystroke.
#[derive(Debug, Default, Clone)]
pub struct FileIndex {
    paths: Arc<Vec<String>>,
    complete: bool,
    /// Changes whenever `paths` does; lets the fuzzy matcher reuse the
    /// previous keystroke's matches only while the list is the same.
    generation: u64,
}

impl FileIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// All paths, sorted; hand this slice to the fuzzy matcher.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    pub fn len(&self) -> usize {
        self.paths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// A process-wide unique value for the current contents (0 when empty
    /// and never changed).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// True once the initial walk has reported `Done`.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    pub fn contains(&self, path: &str) -> bool {
        self.paths
            .binary_search_by(|p| p.as_str().cmp(path))
            .is_ok()
    }

    /// Applies one update; returns whether the set of paths changed (so the
    /// caller knows whether to re-run the picker query).
    pub fn apply(&mut self, update: &IndexUpdate) -> bool {
        let changed = self.apply_inner(update);
        if changed {
            self.generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
        }
        changed
    }

    fn apply_inner(&mut self, update: &IndexUpdate) -> bool {
        match update {
            IndexUpdate::Batch(batch) => self.merge(batch),
            IndexUpdate::Done { .. } => {
                self.complete = true;
                false
            }
            IndexUpdate::Added(path) => match self.paths.binary_search(path) {
                Ok(_) => false,
                Err(at) => {
                    Arc::make_mut(&mut self.paths).insert(at, path.clone());
                    true
                }
            },
            IndexUpdate::Removed(path) => self.remove_tree(path),
            IndexUpdate::Error(_) => false,
        }
    }

    /// Merges a batch in O(n + m); batches from the walker are already sorted.
    fn merge(&mut self, batch: &[String]) -> bool {
        if batch.is_empty() {
            return false;
        }
        let mut incoming = batch.to_vec();
        if !incoming.is_sorted() {
            incoming.sort_unstable();
        }
        let before = self.paths.len();
        let old = Arc::unwrap_or_clone(std::mem::take(&mut self.paths));
        let mut merged = Vec::with_capacity(old.len() + incoming.len());
        let mut a = old.into_iter().peekable();
        let mut b = incoming.into_iter().peekable();
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, Some(_)) => b.next(),
                (None, None) => break,
            };
            if let Some(path) = next
                && merged.last() != Some(&path)
            {
                merged.push(path);
            }
        }
        self.paths = Arc::new(merged);
        self.paths.len() != before
    }

    /// Removes `path` and, if it was a directory, everything under it.
    fn remove_tree(&mut self, path: &str) -> bool {
        let prefix = format!("{path}/");
        let exact = self.paths.binary_search_by(|p| p.as_str().cmp(path)).ok();
        let start = self.paths.partition_point(|p| p.as_str() < prefix.as_str());
        let end = start + self.paths[start..].partition_point(|p| p.starts_with(&prefix));
        if exact.is_none() && start == end {
            return false;
        }
        let paths = Arc::make_mut(&mut self.paths);
        paths.drain(start..end);
        // `path` sorts before `path/…`, so removing the subtree did not move it.
        if let Some(at) = exact {
            paths.remove(at);
        }
        true
    }
}

/// A running index build. Dropping it cancels the walk (the threads stop at
/// their next directory entry).
#[derive(Debug)]
pub struct IndexBuild {
    cancel: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl IndexBuild {
    /// Waits for the walk to finish (tests and headless modes).
    pub fn join(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for IndexBuild {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Walks `root` on background threads and sends `IndexUpdate::Batch`es, then
/// one `IndexUpdate::Done`, into `tx`. Never blocks the caller.
pub fn spawn_index_build(root: &Path, tx: UnboundedSender<WorkspaceMessage>) -> IndexBuild {
    let cancel = Arc::new(AtomicBool::new(false));
    let root = root.to_path_buf();
    let thread_cancel = cancel.clone();
    let error_tx = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("workspace-index".into())
        .spawn(move || {
            crate::background::lower_this_thread();
            run_index_build(&root, &tx, &thread_cancel)
        });
    let thread = match spawned {
        Ok(handle) => Some(handle),
        Err(err) => {
            let message = format!("cannot start the file index: {err}");
            let _ = error_tx.send(WorkspaceMessage::Index(IndexUpdate::Error(message)));
            None
        }
    };
    IndexBuild { cancel, thread }
}

fn run_index_build(root: &Path, tx: &UnboundedSender<WorkspaceMessage>, cancel: &AtomicBool) {
    let started = Instant::now();
    let shared = Shared {
        root: root.to_path_buf(),
        tx: tx.clone(),
        cancel,
        sent: AtomicUsize::new(0),
        errors: AtomicUsize::new(0),
    };
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    workspace_walker(root)
        .threads(threads)
        .build_parallel()
        .visit(&mut VisitorBuilder { shared: &shared });
    if cancel.load(Ordering::Relaxed) {
        return;
    }
    let _ = tx.send(WorkspaceMessage::Index(IndexUpdate::Done {
        count: shared.sent.load(Ordering::Relaxed),
        elapsed: started.elapsed(),
    }));
}

/// State every walker thread shares.
struct Shared<'a> {
    root: PathBuf,
    tx: UnboundedSender<WorkspaceMessage>,
    cancel: &'a AtomicBool,
    sent: AtomicUsize,
    errors: AtomicUsize,
}

struct VisitorBuilder<'a, 's> {
    shared: &'a Shared<'s>,
}

impl<'a, 's> ParallelVisitorBuilder<'a> for VisitorBuilder<'a, 's> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(BatchingVisitor {
            shared: self.shared,
            buffer: Vec::with_capacity(FIRST_BATCH),
        })
    }
}

/// One walker thread's buffer of found files; flushed when full and on drop.
struct BatchingVisitor<'a, 's> {
    shared: &'a Shared<'s>,
    buffer: Vec<String>,
}

impl BatchingVisitor<'_, '_> {
    fn flush(&mut self) -> WalkState {
        if self.buffer.is_empty() {
            return WalkState::Continue;
        }
        let mut batch = std::mem::take(&mut self.buffer);
        batch.sort_unstable();
        self.shared.sent.fetch_add(batch.len(), Ordering::Relaxed);
        let message = WorkspaceMessage::Index(IndexUpdate::Batch(batch));
        if self.shared.tx.send(message).is_err() {
            // Nobody is listening any more: stop walking.
            return WalkState::Quit;
        }
        self.buffer = Vec::with_capacity(LATER_BATCH);
        WalkState::Continue
    }

    fn threshold(&self) -> usize {
        if self.shared.sent.load(Ordering::Relaxed) == 0 {
            FIRST_BATCH
        } else {
            LATER_BATCH
        }
    }
}

impl ParallelVisitor for BatchingVisitor<'_, '_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if self.shared.cancel.load(Ordering::Relaxed) {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) => {
                let is_file = entry.file_type().is_some_and(|t| {
                    // A symlink counts when it points at a file.
                    t.is_file() || (t.is_symlink() && entry.path().is_file())
                });
                if is_file && let Some(rel) = relative_path(&self.shared.root, entry.path()) {
                    self.buffer.push(rel);
                    if self.buffer.len() >= self.threshold() {
                        return self.flush();
                    }
                }
            }
            Err(err) => {
                if self.shared.errors.fetch_add(1, Ordering::Relaxed) < MAX_REPORTED_ERRORS {
                    let _ = self
                        .shared
                        .tx
                        .send(WorkspaceMessage::Index(IndexUpdate::Error(err.to_string())));
                }
            }
        }
        WalkState::Continue
    }
}

impl Drop for BatchingVisitor<'_, '_> {
    fn drop(&mut self) {
        if !self.shared.cancel.load(Ordering::Relaxed) {
            self.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(paths: &[&str]) -> IndexUpdate {
        IndexUpdate::Batch(paths.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn batches_merge_sorted_without_duplicates() {
        let mut index = FileIndex::new();
        assert!(index.apply(&batch(&["b", "d"])));
        let generation = index.generation();
        assert!(index.apply(&batch(&["c", "a", "d"])));
        assert_ne!(index.generation(), generation);
        assert_eq!(index.paths(), ["a", "b", "c", "d"]);
        let generation = index.generation();
        assert!(!index.apply(&batch(&["a"])));
        assert_eq!(index.generation(), generation);
    }

    #[test]
    fn removing_a_directory_removes_its_files_only() {
        let mut index = FileIndex::new();
        index.apply(&batch(&[
            "src",
            "src-x/a",
            "src/a.rs",
            "src/b/c.rs",
            "srcz",
        ]));
        assert!(index.apply(&IndexUpdate::Removed("src".into())));
        assert_eq!(index.paths(), ["src-x/a", "srcz"]);
        assert!(!index.apply(&IndexUpdate::Removed("nothing".into())));
    }

    #[test]
    fn added_is_idempotent_and_done_marks_complete() {
        let mut index = FileIndex::new();
        assert!(index.apply(&IndexUpdate::Added("x".into())));
        assert!(!index.apply(&IndexUpdate::Added("x".into())));
        assert!(index.contains("x"));
        assert!(!index.is_complete());
        index.apply(&IndexUpdate::Done {
            count: 1,
            elapsed: std::time::Duration::ZERO,
        });
        assert!(index.is_complete());
    }
}

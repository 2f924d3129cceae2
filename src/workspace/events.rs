//! The messages background workspace tasks send to the UI loop.

use std::path::PathBuf;
use std::time::Duration;

/// A change to the file index. Paths are workspace-relative with `/`
/// separators; apply them with [`super::FileIndex::apply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexUpdate {
    /// More files found by the initial walk (sorted, no duplicates).
    Batch(Vec<String>),
    /// The initial walk finished: `count` files in `elapsed`.
    Done { count: usize, elapsed: Duration },
    /// A file appeared (idempotent: adding a known path changes nothing).
    Added(String),
    /// A file or a whole directory went away: the path and everything under it.
    Removed(String),
    /// A part of the tree could not be read; the rest is still indexed.
    Error(String),
}

/// What happened on disk, as the editor cares about it. Paths are absolute
/// (under the canonical workspace root) so they compare equal to open
/// documents' paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceEvent {
    /// The contents at this path changed. An atomic save by another editor
    /// (write a temp file, rename it over the original; or vim's
    /// rename-to-backup dance) is reported as this, once.
    FileChanged(PathBuf),
    FileCreated(PathBuf),
    FileRemoved(PathBuf),
    Renamed {
        from: PathBuf,
        to: PathBuf,
    },
    /// The watcher has learned which files exist and reports changes from
    /// now on. Sent once, after the initial scan.
    WatchReady,
    /// Watching failed in part; the message is meant for the status bar.
    WatchError(String),
    /// The OS refused more watches (e.g. inotify's limit): we now poll every
    /// few seconds instead, which is slower to notice changes.
    PollingFallback(String),
}

/// Everything the workspace's background tasks send on one channel, so the
/// UI loop needs one `select!` arm for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceMessage {
    Index(IndexUpdate),
    Event(WorkspaceEvent),
}

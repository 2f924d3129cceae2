//! The workspace: which directory the user is working in, the list of files
//! in it, fuzzy matching over that list, a watcher that reports what changes
//! on disk, and a contents search for the search pane.
//!
//! Everything here is host-agnostic: no terminal code. Slow work (walking a
//! big tree, watching, searching) runs on background threads that send
//! messages over `tokio::sync::mpsc` channels, so the UI loop, which owns all
//! state, only ever applies small updates.
//!
//! Wiring from a single-threaded UI loop:
//!
//! 1. `resolve_open_target(arg, cwd)` → the [`Workspace`] root (git root, working directory or project marker) and the file/position to open.
//! 2. One `unbounded_channel::<WorkspaceMessage>()`; `spawn_index_build(root, tx.clone())`
//!    and `WorkspaceWatcher::start(root, WatchOptions::default(), tx)`; keep both handles
//!    in the app (dropping them stops the work).
//! 3. In the `select!` arm: `Index(update)` → `file_index.apply(&update)` (re-run the
//!    picker query if it returns true); `Event(event)` → reload/conflict for open
//!    documents, status bar for `WatchError`/`PollingFallback`.
//! 4. Picker: a [`FuzzyWorker`] sending [`PickerResults`]; call
//!    `worker.search(id, query, &file_index, limit)` per keystroke and show only the
//!    results whose `id` is the latest.
//! 5. `#text` search: `spawn_content_search` with a fresh cancel flag per query; set
//!    the previous query's flag and ignore messages with an older `id`.

mod coalesce;
mod events;
mod fuzzy;
mod ignore_rules;
mod index;
mod picker;
mod root;
mod search;
mod sensitive;
mod walk;
mod watcher;

pub use events::{IndexUpdate, WorkspaceEvent, WorkspaceMessage};
pub use fuzzy::{FuzzyMatcher, PathMatch};
pub(crate) use ignore_rules::IgnoreRules;
pub use index::{FileIndex, IndexBuild, spawn_index_build};
pub use picker::{FuzzyRequest, FuzzyWorker, PickerResults};
pub use root::{OpenTarget, ResolveError, Workspace, resolve_open_target};
pub use search::{
    ContentHit, MAX_FILE_BYTES, SearchMessage, SearchOptions, SearchSummary, spawn_content_search,
};
pub use sensitive::is_sensitive_path;
pub use watcher::{WatchOptions, WatcherError, WorkspaceWatcher};

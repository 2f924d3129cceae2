//! The runtime-context snapshot: what the user is looking at, translated for
//! the model within a character budget.
//!
//! Three pure, host-agnostic layers:
//! 1. [`source`] — the scene as plain serde data (editor, tabs, diagnostics,
//!    project files), produced by any host: our editor pane, a scene file, a test.
//! 2. [`collect`] — normalisation: workspace-relative paths, privacy
//!    filtering, selection or cursor snippet, limits, and a budget spent in
//!    priority order.
//! 3. [`render`] — headed Markdown with explicit locations and fence-safe
//!    code, plus a per-section breakdown; the collected [`Snapshot`] is also
//!    the JSON form.
//!
//! Nothing here knows about terminals; reading project files is the only I/O
//! and goes through [`ProjectFileReader`].
//!
//! From a single-threaded UI loop: build a [`Source`] from the editor state
//! (owned data, `Send`), move it into `tokio::task::spawn_blocking(move ||
//! build(&source, &options))`, and send the `(Snapshot, Rendered)` back as a
//! message. `Rendered::markdown` goes to the model, `Rendered::sections` to
//! the F2 preview, `serde_json::to_value(&snapshot)` to `context.snapshot()`.
//! For big buffers, send only the lines around the cursor and selection with
//! `text_start_line` and `line_count` so the cost stays independent of the
//! file size.

pub mod cli;
pub(crate) mod collect;
mod glob;
pub(crate) mod language;
pub(crate) mod model;
pub(crate) mod paths;
pub(crate) mod privacy;
pub(crate) mod project;
pub(crate) mod render;
pub mod source;
pub mod text;

pub use cli::{SnapshotArgs, run};
pub use collect::{CollectOptions, collect};
pub use language::language_id_for_path;
pub use model::Snapshot;
pub use privacy::PrivacyRules;
pub use project::{DiskReader, ProjectFileReader, ReadError, root_project_files};
pub use render::{Rendered, Section, SectionCost, render};
pub use source::{SceneError, Source};

/// Collects and renders in one call, reading project files from disk.
/// Blocking (small file reads): call it from `spawn_blocking` in async code.
pub fn build(source: &Source, options: &CollectOptions) -> (Snapshot, Rendered) {
    let snapshot = collect(source, options, &DiskReader);
    let rendered = render(&snapshot);
    (snapshot, rendered)
}

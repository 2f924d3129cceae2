//! Diagnostics from real language servers and check commands.
//!
//! Diagnostics are clues, not verdicts: they point the user (and the model)
//! at a place; a compiler or test run decides. Two producers feed one store:
//!
//! - `lsp`: our own small LSP client (stdio, Content-Length framing), one
//!   supervised server per language, fed the *unsaved* buffer text.
//! - `checks`: commands like `cargo check` or `ruff check {file}` run on save
//!   or on demand, their output parsed by problem matchers.
//!
//! Both run in background tasks behind [`DiagnosticsService`] and report
//! [`DiagnosticsEvent`]s; the UI loop owns the [`DiagnosticsStore`] and
//! applies them. Positions are 0-based lines and chars (Unicode scalars).
//!
//! Wiring into a single-threaded UI loop:
//!
//! ```text
//! let (tx, mut diag_rx) = tokio::sync::mpsc::unbounded_channel();
//! let service = DiagnosticsService::start(DiagnosticsConfig::default(), root, tx);
//! // editor events → service.open / change (every edit, unsaved) / save / close
//! // F-key "run checks" → service.run_checks(path)
//! // in the loop's select!: Some(ev) = diag_rx.recv() => {
//! //     if state.diagnostics.apply(&ev) { request_frame() }   // DiagnosticsStore
//! //     match ev { Notice(t) => status(t), ServerState{name, state} => status(format!("{name}: {state}")), .. }
//! // }
//! // F8 / Shift+F8 → store.next_after(path, cursor) / store.previous_before(path, cursor)
//! // quit → service.shutdown().await  (bounded: ≤ 5 s, then servers are killed)
//! ```

pub mod checks;
mod event;
pub mod headless;
pub mod lsp;
mod model;
pub mod position;
mod service;
mod store;
pub(crate) mod uri;
mod which;

pub use event::{CheckState, DiagnosticsEvent, ServerState};
pub use lsp::config::{LspTimings, ServerConfig, language_id_for_path};
pub use model::{Diagnostic, DiagnosticId, Interner, Position, Range, Related, Severity};
pub(crate) use service::large_document_words;
pub use service::{DiagnosticsConfig, DiagnosticsService};
pub use store::{DiagnosticsStore, FILE_CAP, SeverityCounts};
#[cfg(test)]
pub(crate) use which::write_executable;
pub use which::{Found, which, which_in};

/// Returns the heap's free pages to the system. Reading a large answer
/// (ruff's 9 MB about 20 000 problems) frees far more than the store keeps,
/// in small pieces among live ones, which glibc keeps mapped: measured, the
/// workbench stayed at 38 MiB instead of 27 (BENCHMARKS.md). Called after
/// such an answer, not on every publish (it walks every arena).
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` has no preconditions; it takes the allocator's
    // own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

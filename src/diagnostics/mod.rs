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

pub mod checks;
mod event;
pub mod lsp;
mod model;
pub mod position;
mod service;
mod store;
pub mod uri;
mod which;

pub use event::{CheckState, DiagnosticsEvent, ServerState};
pub use lsp::config::{LspTimings, ServerConfig, language_id_for_path};
pub use model::{Diagnostic, Position, Range, Severity};
pub use service::{DiagnosticsConfig, DiagnosticsService};
pub use store::{DiagnosticsStore, SeverityCounts};
pub use which::which;

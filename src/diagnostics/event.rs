//! What the background side tells the UI loop. The UI loop owns the
//! [`DiagnosticsStore`](super::DiagnosticsStore) and applies these; nothing in
//! the background touches UI state.

use std::path::PathBuf;
use std::time::Duration;

use super::model::Diagnostic;

#[derive(Debug, Clone, PartialEq)]
pub enum DiagnosticsEvent {
    /// The complete, current list from `source` for `path` (empty = all clear).
    Published {
        source: String,
        path: PathBuf,
        diagnostics: Vec<Diagnostic>,
    },
    /// A one-line message for the status bar (missing server, spawn failure...).
    Notice(String),
    /// Lifecycle of a language server, for the status bar.
    ServerState { name: String, state: ServerState },
    /// Lifecycle of a check command run.
    CheckState { name: String, state: CheckState },
}

#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    Starting,
    /// Initialized; `encoding` is the position encoding the server picked.
    Running {
        encoding: &'static str,
    },
    /// The server died or failed to start; we try again after `delay`.
    Restarting {
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    /// Too many failures in a row: no more restarts until the next session.
    GaveUp {
        reason: String,
    },
    Stopped,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CheckState {
    Running,
    /// The command ran to the end; `problems` were matched in its output.
    Finished {
        problems: usize,
        exit_code: Option<i32>,
    },
    /// A newer run of the same command replaced this one (it was killed).
    Superseded,
    TimedOut {
        after: Duration,
    },
    Failed {
        reason: String,
    },
}

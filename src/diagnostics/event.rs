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
    /// Which servers serve a language (as of its latest file), and why
    /// each other configured one does not; sent when that changes.
    Routed {
        language_id: String,
        servers: Vec<String>,
        /// Name and reason (`missing from PATH`, `disabled in the settings`…).
        skipped: Vec<(String, String)>,
    },
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

impl ServerState {
    /// A few words for the status bar (`restarting (2)`, `stopped`): the
    /// reason is long and belongs where it can be read whole.
    pub fn brief(&self) -> String {
        match self {
            ServerState::Starting => "starting".into(),
            ServerState::Running { .. } => "running".into(),
            ServerState::Restarting { attempt, .. } => format!("restarting ({attempt})"),
            ServerState::GaveUp { .. } => "stopped, see the conversation".into(),
            ServerState::Stopped => "stopped".into(),
        }
    }
}

/// Log text, e.g. `restarting in 2s (attempt 2): server closed its output`.
impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerState::Starting => write!(f, "starting"),
            ServerState::Running { encoding } => write!(f, "running ({encoding})"),
            ServerState::Restarting {
                attempt,
                delay,
                reason,
            } => write!(
                f,
                "restarting in {}s (attempt {attempt}): {reason}",
                delay.as_secs_f32()
            ),
            ServerState::GaveUp { reason } => {
                write!(f, "stopped after repeated failures: {reason}")
            }
            ServerState::Stopped => write!(f, "stopped"),
        }
    }
}

/// Status-bar text, e.g. `3 problems (exit 101)`.
impl std::fmt::Display for CheckState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckState::Running => write!(f, "running"),
            CheckState::Finished {
                problems,
                exit_code,
            } => {
                let plural = if *problems == 1 { "" } else { "s" };
                match exit_code {
                    Some(code) => write!(f, "{problems} problem{plural} (exit {code})"),
                    None => write!(f, "{problems} problem{plural} (killed by a signal)"),
                }
            }
            CheckState::Superseded => write!(f, "superseded by a newer run"),
            CheckState::TimedOut { after } => {
                write!(f, "timed out after {}s, killed", after.as_secs())
            }
            CheckState::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_well_in_a_status_bar() {
        let restarting = ServerState::Restarting {
            attempt: 2,
            delay: Duration::from_secs(2),
            reason: "the server closed its output".into(),
        };
        assert_eq!(
            restarting.to_string(),
            "restarting in 2s (attempt 2): the server closed its output"
        );
        let finished = CheckState::Finished {
            problems: 1,
            exit_code: Some(101),
        };
        assert_eq!(finished.to_string(), "1 problem (exit 101)");
        assert_eq!(
            CheckState::TimedOut {
                after: Duration::from_secs(120)
            }
            .to_string(),
            "timed out after 120s, killed"
        );
    }
}

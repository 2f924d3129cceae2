//! What one `execute` returns: always a value the user can read, never a panic.

use std::time::Duration;

use super::protocol::ExecError;

/// How the cell ended, beyond its own success or exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecOutcome {
    /// The cell ran to its end (successfully or with an exception).
    Completed,
    /// Stopped by `interrupt()`; variables kept.
    Interrupted,
    /// Hit its timeout. `restarted: false`: the interrupt worked and the
    /// variables are kept; `true`: the kernel ignored it and was restarted.
    TimedOut { restarted: bool },
    /// The kernel process died under the cell (crash, `os._exit`, OOM).
    KernelDied { reason: String },
    /// No kernel could be started, the cell never ran.
    NotRun,
}

#[derive(Debug, Clone)]
pub struct ExecResult {
    /// Host-assigned id; `Variable::changed_by` and stream events refer to it.
    pub id: u64,
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
    /// Background output: what was printed since the previous result by
    /// no running cell — between cells, or by a thread an earlier cell
    /// started (stdout and stderr, in arrival order, capped). Never part of
    /// `stdout`/`stderr`; front ends show it labelled as background.
    pub background: String,
    /// Bounded repr of the trailing expression, REPL-style (`None` if the
    /// cell ends in a statement or the value is `None`).
    pub value_repr: Option<String>,
    pub error: Option<ExecError>,
    /// Cell run time as measured by the kernel (host wall time when the
    /// kernel could not report it).
    pub duration: Duration,
    pub outcome: ExecOutcome,
    /// Files the cell changed through `fs.write`/`fs.edit`, in order, one
    /// entry per file (what the model is told it changed).
    pub files_changed: Vec<FileChanged>,
}

/// A file a cell changed: its workspace-relative path and the lines added
/// and removed (summed over the cell's writes to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChanged {
    pub path: String,
    pub added: usize,
    pub removed: usize,
}

impl FileChanged {
    /// The changes an `fs.write`/`fs.edit` reply (one file) or an
    /// `fs.apply_patch` reply (`files`) describes.
    pub(crate) fn all_from_reply(value: &serde_json::Value) -> Vec<Self> {
        match value.get("files").and_then(serde_json::Value::as_array) {
            Some(files) => files.iter().filter_map(Self::from_reply).collect(),
            None => Self::from_reply(value).into_iter().collect(),
        }
    }

    fn from_reply(value: &serde_json::Value) -> Option<Self> {
        Some(Self {
            path: value.get("path")?.as_str()?.to_owned(),
            added: usize::try_from(value.get("added")?.as_u64()?).ok()?,
            removed: usize::try_from(value.get("removed")?.as_u64()?).ok()?,
        })
    }

    /// Adds a change to `files`, summing the counts of one file's writes.
    pub(crate) fn add_to(self, files: &mut Vec<FileChanged>) {
        match files.iter_mut().find(|f| f.path == self.path) {
            Some(file) => {
                file.added += self.added;
                file.removed += self.removed;
            }
            None => files.push(self),
        }
    }
}

/// Background output as front ends show it: labelled, so nobody reads it
/// as the cell's own (the TUI's cell entry, the model's tool result).
pub fn labelled_background(text: &str) -> String {
    format!(
        "[background output: printed by no running cell]\n{}",
        text.trim_end()
    )
}

impl ExecResult {
    pub(crate) fn failed(id: u64, type_name: &str, message: String, outcome: ExecOutcome) -> Self {
        Self {
            id,
            ok: false,
            stdout: String::new(),
            stderr: String::new(),
            background: String::new(),
            value_repr: None,
            error: Some(ExecError {
                type_name: type_name.to_owned(),
                traceback: format!("{type_name}: {message}\n"),
                message,
            }),
            duration: Duration::ZERO,
            outcome,
            files_changed: Vec::new(),
        }
    }

    /// True when the kernel lost every variable during this call.
    pub fn lost_state(&self) -> bool {
        matches!(
            self.outcome,
            ExecOutcome::TimedOut { restarted: true } | ExecOutcome::KernelDied { .. }
        )
    }
}

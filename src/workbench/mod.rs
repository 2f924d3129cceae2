//! The workbench: what the user and the agent work on, without a
//! terminal — the workspace and its settings, the conversation, the
//! kernel, the agent, approvals, diagnostics, pins, trust and the changes
//! cells made. The TUI (`crate::app::AppState` with its panes and
//! overlays) shows it and changes it; `exec` and tests can drive it
//! without drawing anything.
//!
//! It never imports ratatui, crossterm, `panes`, `overlays`, `ui` or
//! `screen` (`tests/layers.rs` reads the `use` lines to keep it so).

pub mod editors;
pub mod transcript;

use std::path::{Path, PathBuf};

use crate::app::agent::AgentState;
use crate::app::approvals::ApprovalQueue;
use crate::app::changes::ChangeLog;
use crate::app::diagnostics::DiagnosticSources;
use crate::app::safety::SafetyView;
use crate::app::snapshot::SnapshotView;
use crate::app::state::{KernelView, Pin, Services};
use crate::app::trust::TrustView;
use crate::config::Settings;
use crate::workspace::FileIndex;
use editors::Editors;
use transcript::{PaneEntry, Speaker, Transcript};

/// The model half of the application: everything but focus, overlays,
/// pane components and the terminal's size.
pub struct Workbench {
    pub workspace_root: PathBuf,
    pub workspace_name: String,
    pub settings: Settings,
    /// The conversation as the user reads it: messages, cells, notices.
    pub transcript: Transcript,
    /// Open files (tabs), clipboard, recovery, watcher status.
    pub editors: Editors,
    pub kernel: KernelView,
    /// Handles to the background services.
    pub services: Services,
    /// Execution id of the last finished cell, to mark what it changed.
    pub last_exec_id: Option<u64>,
    /// The user's own slash-command templates
    /// (`$XDG_CONFIG_HOME/hello-tui/commands`); the workspace's are in
    /// its `.hello-tui/commands`.
    pub user_commands: Option<PathBuf>,
    /// Where the diagnostics come from: the store, the diagnostics
    /// service and what it has been sent.
    pub diagnostic_sources: DiagnosticSources,
    /// Search results pinned to the next prompt (shown above the composer).
    pub pins: Vec<Pin>,
    /// A transient line for the status bar (language server states, notices).
    pub status_notice: Option<String>,
    /// The latest snapshot of the scene (built in the background).
    pub snapshot: Option<SnapshotView>,
    /// Approval mode, sandbox status and whether the kernel is confined.
    pub safety: SafetyView,
    /// Questions from model-written code, answered one at a time.
    pub approvals: ApprovalQueue,
    /// Whether the workspace's own programs may run (`app::trust`).
    pub trust: TrustView,
    /// The model, the running turn, the shared conversation store.
    pub agent: AgentState,
    /// What cells changed through `fs.write`/`fs.edit`, for `/undo`,
    /// `/redo` and `/diff`.
    pub changes: ChangeLog,
    /// Workspace-relative paths for the picker, filled in the background.
    pub file_index: FileIndex,
}

impl Workbench {
    pub fn new(workspace_root: PathBuf, settings: Settings) -> Self {
        let workspace_name = workspace_root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| workspace_root.display().to_string());
        Self {
            workspace_root,
            workspace_name,
            settings,
            transcript: Transcript::new(),
            editors: Editors::default(),
            kernel: KernelView::NotStarted,
            services: Services::default(),
            last_exec_id: None,
            user_commands: crate::app::slash::user_commands_dir(),
            diagnostic_sources: Default::default(),
            pins: Vec::new(),
            status_notice: None,
            snapshot: None,
            safety: SafetyView::default(),
            approvals: ApprovalQueue::default(),
            trust: Default::default(),
            agent: AgentState::default(),
            changes: Default::default(),
            file_index: FileIndex::new(),
        }
    }

    /// A line from hello-tui itself in the conversation.
    pub fn notice(&mut self, text: &str) {
        self.transcript.push(PaneEntry::new(Speaker::Notice, text));
    }

    /// A path as the user reads it: relative to the workspace when inside
    /// it, stripped of control characters.
    pub fn display_path(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.workspace_root).unwrap_or(path);
        crate::sanitize::for_display(&shown.to_string_lossy()).into_owned()
    }
}

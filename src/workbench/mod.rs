//! The workbench: what the user and the agent work on, without a
//! terminal — the workspace and its settings, the conversation, the
//! kernel, the agent, approvals, diagnostics, pins, trust and the changes
//! cells made. The TUI (`crate::app::AppState` with its panes and
//! overlays) shows it and changes it; `exec` and tests can drive it
//! without drawing anything.
//!
//! It never imports ratatui, crossterm, `panes`, `overlays`, `ui` or
//! `screen` (`tests/layers.rs` reads the `use` lines to keep it so).

pub mod agent;
pub mod approvals;
pub mod cell_owner;
pub mod cells;
pub(crate) mod changes;
pub mod clock;
pub mod context_window;
pub mod diagnostics;
pub(crate) mod editor_scene;
pub mod editors;
pub mod event;
pub mod find_count;
pub mod hooks;
pub mod kernel;
pub mod lsp_status;
pub mod memory;
pub mod mentions;
pub mod models;
pub mod prompt_history;
pub(crate) mod python_literals;
pub mod quit_transcript;
pub(crate) mod recovery_mirror;
pub mod safety;
pub mod sessions;
pub mod slash;
pub mod snapshot;
pub mod subcalls;
pub mod submission;
pub mod transcript;
pub mod trust;
pub mod trust_inventory;
pub mod write_review;

use std::path::{Path, PathBuf};

use crate::workbench::approvals::ApprovalBroker;
use crate::workbench::kernel::KernelClient;
use crate::workbench::safety::KernelLauncher;

use crate::config::Settings;
use crate::workbench::agent::AgentState;
use crate::workbench::changes::ChangeLog;
use crate::workbench::diagnostics::DiagnosticSources;
use crate::workbench::safety::SafetyView;
use crate::workbench::snapshot::SnapshotView;
use crate::workbench::trust::TrustView;
use crate::workspace::FileIndex;
use editors::Editors;
use transcript::{PaneEntry, Speaker, Transcript};

/// The model half of the application: everything but focus, overlays,
/// pane components and the terminal's size.
pub struct Workbench {
    workspace_root: PathBuf,
    workspace_name: String,
    settings: Settings,
    /// The conversation as the user reads it: messages, cells, notices.
    transcript: Transcript,
    /// Open files (tabs), clipboard, recovery, watcher status.
    editors: Editors,
    kernel: KernelView,
    /// Handles to the background services.
    services: Services,
    /// Execution id of the last finished cell, to mark what it changed.
    last_exec_id: Option<u64>,
    /// The user's own slash-command templates
    /// (`$XDG_CONFIG_HOME/hello-tui/commands`); the workspace's are in
    /// its `.hello-tui/commands`.
    user_commands: Option<PathBuf>,
    /// Where the diagnostics come from: the store, the diagnostics
    /// service and what it has been sent.
    diagnostic_sources: DiagnosticSources,
    /// Search results pinned to the next prompt (shown above the composer).
    pins: Vec<Pin>,
    /// A transient line for the status bar (language server states, notices).
    status_notice: Option<String>,
    /// The latest snapshot of the scene (built in the background).
    snapshot: Option<SnapshotView>,
    /// Approval mode, sandbox status and whether the kernel is confined.
    safety: SafetyView,
    /// Whether the workspace's own programs may run (`app::trust`).
    trust: TrustView,
    /// The model, the running turn, the shared conversation store.
    agent: AgentState,
    /// What cells changed through `fs.write`/`fs.edit`, for `/undo`,
    /// `/redo` and `/diff`.
    changes: ChangeLog,
    /// Workspace-relative paths for the picker, filled in the background.
    file_index: FileIndex,
    /// The composer's text as the TUI last reported it: the gauge counts
    /// it as the next message.
    draft: String,
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
            user_commands: crate::workbench::slash::user_commands_dir(),
            diagnostic_sources: Default::default(),
            pins: Vec::new(),
            status_notice: None,
            snapshot: None,
            safety: SafetyView::default(),
            trust: Default::default(),
            agent: AgentState::default(),
            changes: Default::default(),
            file_index: FileIndex::new(),
            draft: String::new(),
        }
    }

    // What the rest of the application reads and changes; the fields stay
    // private so that a concern can grow into methods of its own.

    pub fn workspace_root(&self) -> &PathBuf {
        &self.workspace_root
    }

    pub(crate) fn workspace_name(&self) -> &String {
        &self.workspace_name
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.transcript
    }

    pub fn editors(&self) -> &Editors {
        &self.editors
    }

    pub fn editors_mut(&mut self) -> &mut Editors {
        &mut self.editors
    }

    pub fn kernel(&self) -> &KernelView {
        &self.kernel
    }

    pub fn kernel_mut(&mut self) -> &mut KernelView {
        &mut self.kernel
    }

    pub fn services(&self) -> &Services {
        &self.services
    }

    pub fn services_mut(&mut self) -> &mut Services {
        &mut self.services
    }

    pub fn last_exec_id(&self) -> &Option<u64> {
        &self.last_exec_id
    }

    pub fn last_exec_id_mut(&mut self) -> &mut Option<u64> {
        &mut self.last_exec_id
    }

    pub(crate) fn user_commands(&self) -> Option<&Path> {
        self.user_commands.as_deref()
    }

    pub fn user_commands_mut(&mut self) -> &mut Option<PathBuf> {
        &mut self.user_commands
    }

    pub fn diagnostic_sources(&self) -> &DiagnosticSources {
        &self.diagnostic_sources
    }

    pub fn diagnostic_sources_mut(&mut self) -> &mut DiagnosticSources {
        &mut self.diagnostic_sources
    }

    pub fn pins(&self) -> &Vec<Pin> {
        &self.pins
    }

    /// Attaches a search result to the next prompt.
    pub fn pin(&mut self, pin: Pin) {
        self.pins.push(pin);
    }

    /// Alt+Backspace: the newest pin goes.
    pub(crate) fn unpin_last(&mut self) -> Option<Pin> {
        self.pins.pop()
    }

    /// Sending takes the pins with the prompt (a fresh start drops them).
    pub fn take_pins(&mut self) -> Vec<Pin> {
        std::mem::take(&mut self.pins)
    }

    pub(crate) fn status_notice(&self) -> Option<&str> {
        self.status_notice.as_deref()
    }

    pub fn snapshot(&self) -> &Option<SnapshotView> {
        &self.snapshot
    }

    pub(crate) fn snapshot_mut(&mut self) -> &mut Option<SnapshotView> {
        &mut self.snapshot
    }

    pub fn safety(&self) -> &SafetyView {
        &self.safety
    }

    pub fn safety_mut(&mut self) -> &mut SafetyView {
        &mut self.safety
    }

    pub fn trust(&self) -> &TrustView {
        &self.trust
    }

    pub fn trust_mut(&mut self) -> &mut TrustView {
        &mut self.trust
    }

    pub fn agent(&self) -> &AgentState {
        &self.agent
    }

    pub fn agent_mut(&mut self) -> &mut AgentState {
        &mut self.agent
    }

    pub(crate) fn changes_mut(&mut self) -> &mut ChangeLog {
        &mut self.changes
    }

    pub(crate) fn file_index(&self) -> &FileIndex {
        &self.file_index
    }

    pub fn file_index_mut(&mut self) -> &mut FileIndex {
        &mut self.file_index
    }

    /// The composer's text changed: the gauge follows it.
    pub fn set_draft(&mut self, draft: &str) {
        if self.draft != draft {
            draft.clone_into(&mut self.draft);
            crate::workbench::context_window::refresh_gauge(self);
        }
    }

    /// A transient line for the status bar, until the next one.
    pub fn set_status(&mut self, text: impl Into<String>) {
        self.status_notice = Some(text.into());
    }

    /// A line from hello-tui itself in the conversation.
    pub fn notice(&mut self, text: &str) {
        self.transcript.push(PaneEntry::new(Speaker::Notice, text));
    }

    /// A path as the user reads it: relative to the workspace when inside
    /// it, stripped of control characters.
    pub(crate) fn display_path(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.workspace_root).unwrap_or(path);
        crate::sanitize::for_display(&shown.to_string_lossy()).into_owned()
    }
}

/// One row of the variables inspector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableRow {
    pub name: String,
    pub type_name: String,
    pub summary: String,
    pub preview: String,
    /// Approximate size in bytes, when the kernel could tell.
    pub size: Option<u64>,
    /// Execution id of the cell that last changed it; compared with
    /// `AppState::last_exec_id` when drawing, because the variables refresh
    /// can arrive before the cell's result.
    pub changed_by: Option<u64>,
}

/// What the status bar and the inspector say about the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelView {
    NotStarted,
    Starting,
    Idle { python: String },
    Busy { python: String },
    Dead { reason: String },
}

impl KernelView {
    pub fn label(&self) -> String {
        match self {
            KernelView::NotStarted => "kernel not started".into(),
            KernelView::Starting => "kernel starting".into(),
            KernelView::Idle { python } => format!("python {python} idle"),
            KernelView::Busy { python } => format!("python {python} busy"),
            KernelView::Dead { reason } => format!("kernel dead: {reason}"),
        }
    }
}

/// A search result attached to the next prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub label: String,
    pub text: String,
}

/// A yes/no question that blocks the workbench until answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    QuitWithUnsavedEdits {
        count: usize,
    },
    /// Ctrl+W on a tab with unsaved edits.
    CloseDirtyTab {
        tab: usize,
    },
    /// "Load theirs" discards the buffer's edits.
    LoadTheirs {
        tab: usize,
    },
    /// Unsaved edits an earlier session of this workspace left behind,
    /// asked one file at a time (`index` of `count`, in
    /// `Editors::found_recoveries`): restore, keep for later, or discard.
    RestoreRecovery {
        index: usize,
        count: usize,
    },
    /// The workspace provides programs that would run: may they
    /// (`app::trust`)? Asked at start and by `/trust`; No by default.
    TrustWorkspace,
    /// `/approval full` turns the sandbox off: its own decision, asked
    /// with what it turns off, No by default. `asked` tells one asking
    /// from the next, so a question drawn earlier does not make a new one
    /// count as seen.
    LeaveSandbox {
        asked: u64,
    },
}

impl Question {
    /// It appears on its own, not in answer to a key (the first recovery
    /// question at start), or it turns the sandbox off, where input typed
    /// ahead — by the user, or pushed into the terminal by confined code —
    /// must not answer it: keys typed before it was drawn go to the layer
    /// below (`app::layers::stack`). The others follow the user's own key
    /// (Ctrl+Q, Ctrl+W, `t`, the answer to the previous file), so a key
    /// typed right after is meant for them.
    pub fn interrupts(self) -> bool {
        matches!(
            self,
            Question::RestoreRecovery { index: 0, .. }
                | Question::TrustWorkspace
                | Question::LeaveSandbox { .. }
        )
    }
}

/// Handles to the background services the workbench talks to, each
/// `None` in tests that run without it. They are senders: the UI loop
/// never waits on them.
#[derive(Default)]
pub struct Services {
    /// Queues cells on the kernel service.
    pub kernel: Option<KernelClient>,
    /// Asks the user on behalf of `shell.run` and the agent's cells.
    pub approvals: Option<ApprovalBroker>,
    /// Starts a new kernel when the mode crosses `full`.
    pub kernel_launcher: Option<KernelLauncher>,
    /// Matches fuzzy file queries off the loop (without it: inline).
    pub picker: Option<crate::workspace::FuzzyWorker>,
    /// Publishes the paths with unsaved edits to the kernel's `fs.write`.
    pub dirty_paths: Option<tokio::sync::watch::Sender<crate::kernel::caps::DirtyPaths>>,
}

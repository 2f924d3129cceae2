//! Messages from background tasks to the UI loop. Tasks never touch
//! `AppState`; they send one of these and the loop applies it.

use tokio::sync::mpsc;

use crate::diagnostics::DiagnosticsEvent;
use crate::workbench::agent::AgentUpdate;
use crate::workbench::approvals::PendingApproval;
use crate::workbench::kernel::KernelUpdate;
use crate::workbench::snapshot::SnapshotView;

#[derive(Debug)]
pub enum AppEvent {
    /// The process was asked to stop (SIGTERM, SIGHUP): leave cleanly so the
    /// terminal is restored.
    Terminate,
    /// A snapshot of the scene was built in the background.
    SnapshotBuilt(SnapshotView),
    /// Hits of a `#text` search of file contents (tagged with its id).
    ContentSearch(crate::workspace::SearchMessage),
    /// Cells, output, status and variables from the kernel service.
    Kernel(KernelUpdate),
    /// Diagnostics, server states and notices from the diagnostics service.
    Diagnostics(DiagnosticsEvent),
    /// Model-written code wants to run something: the approval overlay asks.
    ApprovalRequested(PendingApproval),
    /// Text, cells, usage and the end of an agent turn.
    Agent(AgentUpdate),
    /// The file index grew or the watcher saw a change on disk.
    Workspace(crate::workspace::WorkspaceMessage),
    /// Matches for a Ctrl+P query (only the newest id is shown).
    PickerResults(crate::workspace::PickerResults),
    /// A cell's `llm_query` sub-call started or ended.
    Subcall(crate::subcalls::SubcallEvent),
    /// The kernel's `fs.write` changed this file.
    FsWritten(crate::kernel::caps::FsWritten),
    /// The loop's recovery timer fired: write due recovery files.
    RecoveryDue,
    /// The background highlighting pass reached the view: draw its exact
    /// colours.
    HighlightReady,
    /// The find bar's count of a big text's matches (`app::find_count`).
    FindCounted(crate::workbench::find_count::Counted),
    /// What a restarted kernel brought back of its kept variables.
    KeptVariables(crate::session::VarsReport),
    /// A hook refused, asked, added context or failed.
    Hook(Box<crate::hooks::Fired>),
}

pub type AppEventSender = mpsc::UnboundedSender<AppEvent>;
pub type AppEventReceiver = mpsc::UnboundedReceiver<AppEvent>;

pub fn channel() -> (AppEventSender, AppEventReceiver) {
    mpsc::unbounded_channel()
}

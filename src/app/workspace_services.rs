//! Starts the workspace's background work for the workbench: the file
//! index walk, the watcher, the picker's fuzzy matcher, and crash recovery.
//! Their messages are forwarded into the app channel as `AppEvent`s, so the
//! loop keeps one receiver.

use tokio::sync::mpsc;

use super::state::AppState;
use crate::workbench::event::{AppEvent, AppEventSender};
use crate::workspace::{
    FuzzyWorker, IndexBuild, PickerResults, WatchOptions, WorkspaceMessage, WorkspaceWatcher,
    spawn_index_build,
};

/// Handles that stop their work when dropped: keep it for the session.
pub(crate) struct WorkspaceServices {
    _index: IndexBuild,
    _watcher: Option<WorkspaceWatcher>,
}

pub fn start(state: &mut AppState, tx: &AppEventSender) -> WorkspaceServices {
    let (wtx, mut wrx) = mpsc::unbounded_channel::<WorkspaceMessage>();
    let index = spawn_index_build(state.workbench.workspace_root(), wtx.clone());
    let watcher = match WorkspaceWatcher::start(
        state.workbench.workspace_root(),
        WatchOptions::default(),
        wtx,
    ) {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            state.workbench.editors_mut().watch_note = Some(format!("not watching files: {error}"));
            None
        }
    };
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(message) = wrx.recv().await {
            if forward.send(AppEvent::Workspace(message)).is_err() {
                break;
            }
        }
    });

    let (ptx, mut prx) = mpsc::unbounded_channel::<PickerResults>();
    match FuzzyWorker::spawn(ptx) {
        Ok(worker) => state.workbench.services_mut().picker = Some(worker),
        Err(error) => tracing::warn!(%error, "picker matches inline"),
    }
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(results) = prx.recv().await {
            if forward.send(AppEvent::PickerResults(results)).is_err() {
                break;
            }
        }
    });

    if let Some(base) = recovery_dir() {
        super::editors::claim_recovery(state, &base);
    }
    WorkspaceServices {
        _index: index,
        _watcher: watcher,
    }
}

/// `$XDG_DATA_HOME/hello-tui/recovery` (each workspace and instance gets a
/// folder inside, see `editor::RecoveryHome`); `HELLO_TUI_RECOVERY_DIR`
/// overrides it (tests, or a tmpfs).
pub(crate) fn recovery_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("HELLO_TUI_RECOVERY_DIR") {
        return Some(dir.into());
    }
    let dirs = directories::ProjectDirs::from("", "", "hello-tui")?;
    Some(dirs.data_local_dir().join("recovery"))
}

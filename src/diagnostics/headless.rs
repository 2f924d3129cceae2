//! Diagnostics without a UI, for `exec --open` and `snapshot --open`: the
//! file's language servers and on-save checks run for a bounded wait, so
//! the model in `exec` hears of the error the user would see in the TUI.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use super::{
    CheckState, Diagnostic, DiagnosticsConfig, DiagnosticsEvent, DiagnosticsService,
    DiagnosticsStore, ServerState, language_id_for_path,
};
use crate::sandbox::Confinement;

/// The file whose diagnostics are wanted, as the editor would hold it.
pub struct Opened<'a> {
    pub root: &'a Path,
    pub path: &'a Path,
    pub text: &'a str,
}

/// Opens the file with its language servers and runs its on-save checks,
/// then collects what arrives until every server has answered and every
/// check finished, or `wait` is over. Servers are shut down before it
/// returns (bounded, see [`DiagnosticsService::shutdown`]). `trusted`: the
/// workspace's own programs may run (nobody is asked here).
pub async fn collect(
    config: DiagnosticsConfig,
    file: Opened<'_>,
    confinement: Confinement,
    wait: Duration,
    trusted: bool,
) -> Collected {
    let Some(language_id) = language_id_for_path(file.path) else {
        return Collected {
            diagnostics: Vec::new(),
            not_listed: 0,
        };
    };
    let (tx, mut events) = mpsc::unbounded_channel();
    let service =
        DiagnosticsService::start(config, file.root.to_path_buf(), tx, confinement, trusted);
    service.open(file.path, language_id, file.text);
    // The disk holds this text: on-save checks apply to it as they are.
    service.save(file.path);
    let servers = service.servers_for(file.path).await;
    let mut progress = Progress::new(file.path.to_path_buf(), servers);
    // The actor answered after queueing the checks' `Running` states: they
    // are read before deciding that nothing is due (with no server for the
    // file, the checks alone are what is waited for).
    while let Ok(event) = events.try_recv() {
        progress.apply(event);
    }
    let _ = tokio::time::timeout(wait, async {
        while !progress.complete() {
            match events.recv().await {
                Some(event) => progress.apply(event),
                None => return,
            }
        }
    })
    .await;
    service.shutdown().await;
    let store = &progress.store;
    let not_listed = store.files().map(|path| store.omitted(path)).sum();
    Collected {
        diagnostics: store.all_sorted().into_iter().cloned().collect(),
        not_listed,
    }
}

/// What [`collect`] heard: at most `FILE_CAP` a file (the first by
/// severity, then position), and how many more there were.
#[derive(Debug)]
pub struct Collected {
    pub diagnostics: Vec<Diagnostic>,
    pub not_listed: usize,
}

/// What has arrived so far, and who is still expected to answer.
struct Progress {
    path: PathBuf,
    store: DiagnosticsStore,
    /// Servers that have not yet published for the file (or failed).
    waiting_for: Vec<String>,
    /// Check runs started and not yet over.
    running_checks: Vec<String>,
}

impl Progress {
    fn new(path: PathBuf, servers: Vec<String>) -> Self {
        Progress {
            path,
            store: DiagnosticsStore::new(),
            waiting_for: servers,
            running_checks: Vec::new(),
        }
    }

    fn complete(&self) -> bool {
        self.waiting_for.is_empty() && self.running_checks.is_empty()
    }

    fn apply(&mut self, event: DiagnosticsEvent) {
        match &event {
            DiagnosticsEvent::Published { source, path, .. } if *path == self.path => {
                self.waiting_for.retain(|name| name != source);
            }
            // A server that failed has nothing more to say within the wait.
            DiagnosticsEvent::ServerState {
                name,
                state: ServerState::Restarting { .. } | ServerState::GaveUp { .. },
            } => self.waiting_for.retain(|n| n != name),
            DiagnosticsEvent::CheckState { name, state } => {
                self.running_checks.retain(|n| n != name);
                if *state == CheckState::Running {
                    self.running_checks.push(name.clone());
                }
            }
            _ => {}
        }
        self.store.apply(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Position, Range, Severity};

    #[test]
    fn complete_once_every_server_published_and_every_check_ended() {
        let path = PathBuf::from("/w/a.py");
        let mut progress = Progress::new(path.clone(), vec!["ruff".into(), "pyright".into()]);
        let published = |source: &str, path: &Path| DiagnosticsEvent::Published {
            source: source.into(),
            path: path.to_path_buf(),
            diagnostics: vec![Diagnostic {
                path: path.into(),
                range: Range::new(Position::new(0, 0), Position::new(0, 1)),
                severity: Severity::Error,
                message: "bad".into(),
                source: source.into(),
                code: None,
                related: Vec::new(),
            }],
        };
        progress.apply(DiagnosticsEvent::CheckState {
            name: "python compile".into(),
            state: CheckState::Running,
        });
        progress.apply(published("ruff", Path::new("/w/other.py")));
        progress.apply(published("ruff", &path));
        assert!(!progress.complete(), "pyright and the check are still due");
        progress.apply(DiagnosticsEvent::ServerState {
            name: "pyright".into(),
            state: ServerState::GaveUp {
                reason: "exit 1".into(),
            },
        });
        assert!(!progress.complete(), "the check is still running");
        progress.apply(DiagnosticsEvent::CheckState {
            name: "python compile".into(),
            state: CheckState::Finished {
                problems: 0,
                exit_code: Some(0),
            },
        });
        assert!(progress.complete());
        assert_eq!(
            progress.store.all_sorted().len(),
            2,
            "both files' lists kept"
        );
    }
}

//! The handle the UI loop calls. Every method only sends a message to a
//! background task, so none of them can block a frame; results come back as
//! [`DiagnosticsEvent`]s on the channel given to [`DiagnosticsService::start`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ropey::Rope;
use tokio::sync::{mpsc, oneshot};

use super::checks::CheckCommand;
use super::checks::scheduler::{CheckScheduler, Trigger};
use super::event::DiagnosticsEvent;
use super::lsp::config::{LspTimings, ServerConfig, language_id_for_path};
use super::lsp::supervisor::{DocCommand, Supervisor};
use super::which::which;
use crate::editor::TextChange;
use crate::sandbox::Confinement;

/// Everything the service needs to know, usually from the config file
/// (`servers` / `checks` given there replace the defaults; timings are not
/// user settings).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiagnosticsConfig {
    pub servers: Vec<ServerConfig>,
    pub checks: Vec<CheckCommand>,
    #[serde(skip)]
    pub timings: LspTimings,
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        DiagnosticsConfig {
            servers: ServerConfig::defaults(),
            checks: CheckCommand::defaults(),
            timings: LspTimings::default(),
        }
    }
}

enum Request {
    /// Open, change, save or close: routed to the document's server.
    Doc(DocCommand),
    RunChecks {
        path: PathBuf,
    },
    RestartServers,
    Shutdown {
        done: oneshot::Sender<()>,
    },
}

/// Cheap to clone; all clones talk to the same background task.
#[derive(Clone)]
pub struct DiagnosticsService {
    tx: mpsc::UnboundedSender<Request>,
}

impl DiagnosticsService {
    /// Spawns the service task on the current tokio runtime. `root` is the
    /// workspace root (servers' root and checks' default cwd).
    /// Check commands and language servers start under `confinement` (the
    /// kernel's): both run project code (`build.rs`, proc macros,
    /// `conftest.py`) the model may have written.
    pub fn start(
        config: DiagnosticsConfig,
        root: PathBuf,
        events: mpsc::UnboundedSender<DiagnosticsEvent>,
        confinement: Confinement,
    ) -> DiagnosticsService {
        let (tx, rx) = mpsc::unbounded_channel();
        let (checks, done_rx) = CheckScheduler::new(
            config.checks.clone(),
            root.clone(),
            events.clone(),
            confinement.clone(),
        );
        let actor = Actor {
            config,
            root,
            confinement,
            events,
            servers: HashMap::new(),
            routes: HashMap::new(),
            docs: HashMap::new(),
            checks,
        };
        tokio::spawn(actor.run(rx, done_rx));
        DiagnosticsService { tx }
    }

    /// A document was opened in the editor with this (possibly unsaved) text.
    pub fn open(&self, path: impl Into<PathBuf>, language_id: &str, text: impl Into<Rope>) {
        self.send(Request::Doc(DocCommand::Open {
            path: path.into(),
            language_id: language_id.to_string(),
            text: text.into(),
        }));
    }

    /// The buffer changed (not saved): servers re-check what the user typed.
    pub fn change(&self, path: impl Into<PathBuf>, text: impl Into<Rope>) {
        self.send(Request::Doc(DocCommand::Change {
            path: path.into(),
            text: text.into(),
            changes: None,
        }));
    }

    /// The buffer changed by `changes` (ranges in the text sent before)
    /// into `text`: servers that take ranged `didChange` get only them.
    pub fn edit(&self, path: impl Into<PathBuf>, text: Rope, changes: Vec<TextChange>) {
        self.send(Request::Doc(DocCommand::Change {
            path: path.into(),
            text,
            changes: Some(changes),
        }));
    }

    /// The buffer was written to disk: notifies servers and runs on-save checks.
    pub fn save(&self, path: impl Into<PathBuf>) {
        self.send(Request::Doc(DocCommand::Save { path: path.into() }));
    }

    pub fn close(&self, path: impl Into<PathBuf>) {
        self.send(Request::Doc(DocCommand::Close { path: path.into() }));
    }

    /// Runs every check command that applies to the file's language now.
    pub fn run_checks(&self, path: impl Into<PathBuf>) {
        self.send(Request::RunChecks { path: path.into() });
    }

    /// Restarts every language server that was started, including ones
    /// that gave up, with a fresh restart budget; a language whose server
    /// was not on `PATH` is looked up again when its next file opens.
    pub fn restart_servers(&self) {
        self.send(Request::RestartServers);
    }

    /// Stops servers (`shutdown`/`exit`, then kill) and running checks.
    /// Resolves when done, or after a few seconds regardless.
    pub async fn shutdown(&self) {
        let (done, wait) = oneshot::channel();
        self.send(Request::Shutdown { done });
        let _ = tokio::time::timeout(Duration::from_secs(5), wait).await;
    }

    fn send(&self, request: Request) {
        // The task only stops after shutdown; later calls are harmless no-ops.
        let _ = self.tx.send(request);
    }
}

struct Actor {
    config: DiagnosticsConfig,
    root: PathBuf,
    /// Language servers start under this.
    confinement: Confinement,
    events: mpsc::UnboundedSender<DiagnosticsEvent>,
    /// Running supervisors by index into `config.servers`.
    servers: HashMap<usize, mpsc::UnboundedSender<DocCommand>>,
    /// Language id → chosen server (None: none installed; noticed once).
    routes: HashMap<String, Option<usize>>,
    /// Open documents and their language.
    docs: HashMap<PathBuf, String>,
    checks: CheckScheduler,
}

impl Actor {
    async fn run(
        mut self,
        mut requests: mpsc::UnboundedReceiver<Request>,
        mut done_rx: mpsc::UnboundedReceiver<super::checks::scheduler::RunDone>,
    ) {
        loop {
            tokio::select! {
                request = requests.recv() => match request {
                    Some(Request::Shutdown { done }) => {
                        self.shutdown().await;
                        let _ = done.send(());
                        return;
                    }
                    Some(request) => self.handle(request),
                    None => {
                        self.shutdown().await;
                        return;
                    }
                },
                Some(done) = done_rx.recv() => self.checks.finish(done),
            }
        }
    }

    fn handle(&mut self, request: Request) {
        match request {
            Request::Doc(command) => self.route(command),
            Request::RunChecks { path } => match self.language_of(&path) {
                Some(language) => self.checks.run_for(&path, &language, Trigger::Manual),
                None => self.notice(format!(
                    "no checks for {}: unknown language",
                    path.display()
                )),
            },
            Request::RestartServers => {
                self.routes.retain(|_, route| route.is_some());
                let restarted = self
                    .servers
                    .values()
                    .filter(|server| server.send(DocCommand::Restart).is_ok())
                    .count();
                self.notice(match restarted {
                    0 => "no language server has started yet".to_string(),
                    1 => "restarting 1 language server".to_string(),
                    n => format!("restarting {n} language servers"),
                });
            }
            Request::Shutdown { .. } => {}
        }
    }

    /// A document command goes to the server of its language (started on
    /// first use); saving also runs the on-save checks.
    fn route(&mut self, command: DocCommand) {
        let server = match &command {
            DocCommand::Open {
                path, language_id, ..
            } => {
                self.docs.insert(path.clone(), language_id.clone());
                self.server_for(language_id)
            }
            DocCommand::Change { path, .. }
            | DocCommand::Save { path }
            | DocCommand::Close { path } => self.server_for_doc(path),
            // Sent to every server by the actor itself, never by a caller.
            DocCommand::Restart | DocCommand::Shutdown { .. } => return,
        };
        match &command {
            DocCommand::Save { path } => {
                if let Some(language) = self.language_of(path) {
                    self.checks.run_for(path, &language, Trigger::Save);
                }
            }
            DocCommand::Close { path } => {
                self.docs.remove(path);
            }
            _ => {}
        }
        if let Some(server) = server {
            let _ = server.send(command);
        }
    }

    fn language_of(&self, path: &Path) -> Option<String> {
        self.docs
            .get(path)
            .cloned()
            .or_else(|| language_id_for_path(path).map(str::to_string))
    }

    fn server_for_doc(&mut self, path: &Path) -> Option<mpsc::UnboundedSender<DocCommand>> {
        let language = self.docs.get(path)?.clone();
        self.server_for(&language)
    }

    /// The supervisor for a language, started on first use.
    fn server_for(&mut self, language_id: &str) -> Option<mpsc::UnboundedSender<DocCommand>> {
        let index = match self.routes.get(language_id) {
            Some(route) => (*route)?,
            None => {
                let route = self.pick_server(language_id);
                self.routes.insert(language_id.to_string(), route);
                route?
            }
        };
        if let Some(tx) = self.servers.get(&index) {
            return Some(tx.clone());
        }
        let tx = Supervisor::spawn(
            self.config.servers[index].clone(),
            self.root.clone(),
            self.config.timings.clone(),
            self.events.clone(),
            self.confinement.clone(),
        );
        self.servers.insert(index, tx.clone());
        Some(tx)
    }

    fn pick_server(&self, language_id: &str) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.config.servers.len())
            .filter(|&i| {
                self.config.servers[i]
                    .language_ids
                    .iter()
                    .any(|l| l == language_id)
            })
            .collect();
        let found = candidates
            .iter()
            .copied()
            .find(|&i| which(&self.config.servers[i].command).is_some());
        if found.is_none() && !candidates.is_empty() {
            let tried: Vec<String> = candidates
                .iter()
                .map(|&i| self.config.servers[i].name())
                .collect();
            self.notice(format!(
                "no {language_id} language server on PATH (tried {})",
                tried.join(", ")
            ));
        }
        found
    }

    async fn shutdown(&mut self) {
        self.checks.shutdown();
        let mut waits = Vec::new();
        for (_, server) in self.servers.drain() {
            let (done, wait) = oneshot::channel();
            if server.send(DocCommand::Shutdown { done }).is_ok() {
                waits.push(wait);
            }
        }
        for wait in waits {
            let _ = wait.await;
        }
    }

    fn notice(&self, text: String) {
        let _ = self.events.send(DiagnosticsEvent::Notice(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_sections_replace_defaults_and_missing_ones_keep_them() {
        let config: DiagnosticsConfig = serde_json::from_str(
            r#"{"servers":[{"name":"pyright","language_ids":["python"],"command":"basedpyright-langserver","args":["--stdio"]}]}"#,
        )
        .unwrap();
        assert_eq!(config.servers.len(), 1);
        assert_eq!(config.servers[0].name(), "pyright");
        assert_eq!(config.checks, CheckCommand::defaults());
        assert_eq!(config.timings, LspTimings::default());
    }
}

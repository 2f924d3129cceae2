//! The handle the UI loop calls. Every method only sends a message to a
//! background task, so none of them can block a frame; results come back as
//! [`DiagnosticsEvent`]s on the channel given to [`DiagnosticsService::start`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ropey::Rope;
use tokio::sync::{mpsc, oneshot};

use super::checks::CheckCommand;
use super::checks::scheduler::{CheckScheduler, Trigger};
use super::event::DiagnosticsEvent;
use super::lsp::config::{LspTimings, ServerConfig, language_id_for_path};
use super::lsp::resolve::{self, Route};
use super::lsp::supervisor::{DocCommand, Supervisor};
use crate::editor::TextChange;
use crate::sandbox::Confinement;

/// Everything the service needs to know, usually from the config file
/// (`servers` / `checks` given there replace the defaults; timings are not
/// user settings).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiagnosticsConfig {
    pub servers: Vec<ServerConfig>,
    /// Names of servers never started (`disabled_servers = ["pylsp"]`):
    /// restricts the defaults without restating them.
    pub disabled_servers: Vec<String>,
    pub checks: Vec<CheckCommand>,
    /// Files larger than this many bytes are large documents: language
    /// servers and checks are not asked about them (an answer about a
    /// 37 MB file can be 92 MB, and a syntax check of it takes seconds).
    pub large_file_bytes: u64,
    #[serde(skip)]
    pub timings: LspTimings,
}

/// The default large-document size: 20 MB, where VS Code's large-file
/// mode starts.
pub const DEFAULT_LARGE_FILE_BYTES: u64 = 20_000_000;

/// Says why a large document has no diagnostics, in the same words in the
/// workbench and in `snapshot`: `path` is as the user reads it.
pub(crate) fn large_document_words(path: &str, bytes: u64, limit: u64) -> String {
    format!(
        "{path} is a large document ({}, over the {} of `diagnostics.large_file_bytes`)",
        crate::units::binary_size(bytes),
        crate::units::binary_size(limit),
    )
}

impl Default for DiagnosticsConfig {
    fn default() -> Self {
        DiagnosticsConfig {
            servers: ServerConfig::defaults(),
            disabled_servers: Vec::new(),
            checks: CheckCommand::defaults(),
            large_file_bytes: DEFAULT_LARGE_FILE_BYTES,
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
    /// The user asked for a large document's diagnostics all the same.
    AllowLarge {
        path: PathBuf,
    },
    RestartServers,
    /// The workspace's trust changed: every server stops, and the next
    /// open of each document picks its servers again.
    Trust {
        trusted: bool,
    },
    ServersFor {
        path: PathBuf,
        reply: oneshot::Sender<Vec<String>>,
    },
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
    /// `conftest.py`) the model may have written. `trusted`: the workspace
    /// is trusted (`crate::trust`), so programs inside it may run.
    pub fn start(
        config: DiagnosticsConfig,
        root: PathBuf,
        events: mpsc::UnboundedSender<DiagnosticsEvent>,
        confinement: Confinement,
        trusted: bool,
    ) -> DiagnosticsService {
        let (tx, rx) = mpsc::unbounded_channel();
        let (checks, done_rx) = CheckScheduler::new(
            config.checks.clone(),
            root.clone(),
            events.clone(),
            confinement.clone(),
            trusted,
        );
        let actor = Actor {
            config,
            root,
            trusted,
            confinement,
            events,
            servers: HashMap::new(),
            announced: HashMap::new(),
            docs: HashMap::new(),
            allowed_large: HashSet::new(),
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

    /// Sends a large document (over `large_file_bytes`) to its language
    /// servers and on-save checks from its next open on, as for any other
    /// file: the caller opens it again right after.
    pub fn allow_large(&self, path: impl Into<PathBuf>) {
        self.send(Request::AllowLarge { path: path.into() });
    }

    /// Restarts every language server that was started, including ones
    /// that gave up, with a fresh restart budget; a language whose server
    /// was not on `PATH` is looked up again when its next file opens.
    pub fn restart_servers(&self) {
        self.send(Request::RestartServers);
    }

    /// The workspace became trusted (or no longer is): the servers stop,
    /// and documents opened after this (the workbench sends every open one
    /// again) get the servers chosen under the new trust.
    pub fn set_trust(&self, trusted: bool) {
        self.send(Request::Trust { trusted });
    }

    /// The names of the servers an open document was sent to. Answered
    /// after every request sent before it, so the check runs those started
    /// have already reported `Running`.
    pub(crate) async fn servers_for(&self, path: impl Into<PathBuf>) -> Vec<String> {
        let (reply, answer) = oneshot::channel();
        self.send(Request::ServersFor {
            path: path.into(),
            reply,
        });
        answer.await.unwrap_or_default()
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
    /// Programs inside the workspace may run (see `crate::trust`).
    trusted: bool,
    /// Language servers start under this.
    confinement: Confinement,
    events: mpsc::UnboundedSender<DiagnosticsEvent>,
    /// Running supervisors by index into `config.servers` and the program
    /// run (a project's own `node_modules/.bin/tsc` is a server of its own).
    servers: HashMap<ServerKey, mpsc::UnboundedSender<DocCommand>>,
    /// The last route announced per language (sent again only when it changes).
    announced: HashMap<String, Route>,
    /// Open documents: their language and the servers that have them.
    docs: HashMap<PathBuf, OpenDoc>,
    /// Large documents the user asked to have checked all the same.
    allowed_large: HashSet<PathBuf>,
    checks: CheckScheduler,
}

type ServerKey = (usize, PathBuf);

struct OpenDoc {
    language_id: String,
    servers: Vec<ServerKey>,
    /// Over `large_file_bytes`: no server has it, no on-save check runs.
    large: bool,
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
                    Some(Request::Trust { trusted }) => {
                        self.stop_servers().await;
                        self.trusted = trusted;
                        self.checks.set_trusted(trusted);
                        self.announced.clear();
                        self.docs.clear();
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
            Request::AllowLarge { path } => {
                self.allowed_large.insert(path);
            }
            Request::RunChecks { path } => match self.language_of(&path) {
                Some(language) => self.checks.run_for(&path, &language, Trigger::Manual),
                None => self.notice(format!(
                    "no checks for {}: unknown language",
                    path.display()
                )),
            },
            Request::RestartServers => {
                // Missing servers are looked for again (and said again).
                self.announced.clear();
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
            Request::ServersFor { path, reply } => {
                let names = self.docs.get(&path).map_or_else(Vec::new, |doc| {
                    doc.servers
                        .iter()
                        .map(|(index, _)| self.config.servers[*index].name())
                        .collect()
                });
                let _ = reply.send(names);
            }
            Request::Shutdown { .. } | Request::Trust { .. } => {}
        }
    }

    /// A document command goes to every server of its document (an open
    /// picks them, starting each on first use); saving also runs the
    /// on-save checks. A large document goes nowhere (`large_document`).
    fn route(&mut self, command: DocCommand) {
        let Some(command) = self.large_document(command) else {
            return;
        };
        let servers = match &command {
            DocCommand::Open {
                path, language_id, ..
            } => self.open_route(path, language_id),
            DocCommand::Change { path, .. }
            | DocCommand::Save { path }
            | DocCommand::Close { path } => self
                .docs
                .get(path)
                .map_or_else(Vec::new, |doc| doc.servers.clone()),
            // Sent to every server by the actor itself, never by a caller.
            DocCommand::Restart | DocCommand::Shutdown { .. } => return,
        };
        match &command {
            DocCommand::Save { path } => {
                if let Some(language) = self
                    .language_of(path)
                    .filter(|_| !self.docs.get(path).is_some_and(|doc| doc.large))
                {
                    self.checks.run_for(path, &language, Trigger::Save);
                }
            }
            DocCommand::Close { path } => {
                self.docs.remove(path);
            }
            _ => {}
        }
        for key in servers {
            let Some(command) = command.duplicate() else {
                continue;
            };
            if let Some(server) = self.server(&key) {
                let _ = server.send(command);
            }
        }
    }

    /// Picks the servers of a document being opened; servers that had it
    /// before (an earlier open) but are no longer chosen close it.
    fn open_route(&mut self, path: &Path, language_id: &str) -> Vec<ServerKey> {
        let route = resolve::route(
            &self.config.servers,
            &self.config.disabled_servers,
            language_id,
            path,
            &self.root,
            self.trusted,
        );
        let chosen: Vec<ServerKey> = route.servers.clone();
        if let Some(previous) = self.docs.get(path) {
            for key in previous.servers.iter().filter(|k| !chosen.contains(k)) {
                if let Some(server) = self.servers.get(key) {
                    let _ = server.send(DocCommand::Close {
                        path: path.to_path_buf(),
                    });
                }
            }
        }
        self.docs.insert(
            path.to_path_buf(),
            OpenDoc {
                language_id: language_id.to_string(),
                servers: chosen.clone(),
                large: false,
            },
        );
        self.announce(language_id, route);
        chosen
    }

    /// Large-file mode (VS Code's, above 20 MB by default): a document over
    /// `large_file_bytes` is not sent to language servers or on-save
    /// checks unless the user asked (`allow_large`). An answer about a
    /// 37 MB file can be 92 MB, and servers re-analyse the whole text at
    /// every change. A document that grows past the size is closed on its
    /// servers; one that shrinks below it is opened again. Says so once per
    /// document becoming large. Returns the command still to route.
    fn large_document(&mut self, command: DocCommand) -> Option<DocCommand> {
        let (path, language_id, text) = match &command {
            DocCommand::Open {
                path,
                language_id,
                text,
            } => (path, language_id.clone(), text),
            DocCommand::Change { path, text, .. } => match self.docs.get(path) {
                Some(doc) => (path, doc.language_id.clone(), text),
                None => return Some(command),
            },
            DocCommand::Close { path } => {
                return match self.docs.get(path) {
                    Some(doc) if doc.large => {
                        self.docs.remove(path);
                        None
                    }
                    _ => Some(command),
                };
            }
            _ => return Some(command),
        };
        let bytes = text.len_bytes() as u64;
        let limit = self.config.large_file_bytes;
        let was_large = self.docs.get(path).is_some_and(|doc| doc.large);
        let large = bytes > limit && !self.allowed_large.contains(path);
        match (was_large, large) {
            (false, false) => Some(command),
            // Back under the size: every server gets it as a new document.
            (true, false) => Some(DocCommand::Open {
                path: path.clone(),
                language_id,
                text: text.clone(),
            }),
            (true, true) => None,
            (false, true) => {
                let previous = self.docs.insert(
                    path.clone(),
                    OpenDoc {
                        language_id,
                        servers: Vec::new(),
                        large: true,
                    },
                );
                for key in previous.into_iter().flat_map(|doc| doc.servers) {
                    if let Some(server) = self.servers.get(&key) {
                        let _ = server.send(DocCommand::Close { path: path.clone() });
                    }
                }
                let shown = path.strip_prefix(&self.root).unwrap_or(path);
                self.notice(format!(
                    "{}; language servers and checks are not asked about it \
                     (/lsp-large asks them all the same)",
                    large_document_words(&shown.to_string_lossy(), bytes, limit)
                ));
                None
            }
        }
    }

    /// Tells the UI which servers serve the language when that changed,
    /// and says so plainly when none can.
    fn announce(&mut self, language_id: &str, route: Route) {
        if self.announced.get(language_id) == Some(&route) {
            return;
        }
        let servers: Vec<String> = route
            .servers
            .iter()
            .map(|(index, _)| self.config.servers[*index].name())
            .collect();
        if servers.is_empty() && !route.skipped.is_empty() {
            let tried: Vec<String> = route
                .skipped
                .iter()
                .map(|(name, reason)| format!("{name}: {reason}"))
                .collect();
            self.notice(format!(
                "no {language_id} language server can run ({})",
                tried.join("; ")
            ));
        }
        let _ = self.events.send(DiagnosticsEvent::Routed {
            language_id: language_id.to_string(),
            servers,
            skipped: route.skipped.clone(),
        });
        self.announced.insert(language_id.to_string(), route);
    }

    fn language_of(&self, path: &Path) -> Option<String> {
        self.docs
            .get(path)
            .map(|doc| doc.language_id.clone())
            .or_else(|| language_id_for_path(path).map(str::to_string))
    }

    /// The supervisor of a server, started on first use with the program
    /// the route found.
    fn server(&mut self, key: &ServerKey) -> Option<mpsc::UnboundedSender<DocCommand>> {
        if let Some(tx) = self.servers.get(key) {
            return Some(tx.clone());
        }
        let (index, program) = key;
        let mut config = self.config.servers.get(*index)?.clone();
        // The name stays the configured one (`tsc-lsp`, `ruff`).
        config.name = Some(config.name());
        config.command = program.to_string_lossy().into_owned();
        let tx = Supervisor::spawn(
            config,
            self.root.clone(),
            self.config.timings.clone(),
            self.events.clone(),
            self.confinement.clone(),
        );
        self.servers.insert(key.clone(), tx.clone());
        Some(tx)
    }

    async fn shutdown(&mut self) {
        self.checks.shutdown();
        self.stop_servers().await;
    }

    /// `shutdown`/`exit` to every server, bounded by each supervisor.
    async fn stop_servers(&mut self) {
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
        assert!(config.disabled_servers.is_empty());

        let config: DiagnosticsConfig = serde_json::from_str(
            r#"{"disabled_servers":["pylsp"],"servers":[{"name":"ts","language_ids":["typescript"],"command":"tsc","args":["--lsp","--stdio"],"role":"types","node_modules":true,"min_typescript":7}]}"#,
        )
        .unwrap();
        assert_eq!(config.disabled_servers, ["pylsp"]);
        let ts = &config.servers[0];
        assert_eq!(ts.role_key(), "types");
        assert!(ts.node_modules && ts.fits_typescript(Some(7)) && !ts.fits_typescript(Some(6)));
    }
}

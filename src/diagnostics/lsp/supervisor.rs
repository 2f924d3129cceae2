//! One task per language server: starts it lazily, keeps the open documents
//! (the last text sent, needed to convert positions and to re-open them after
//! a restart), restarts it with backoff when it dies, and gives up visibly.
//! It owns its connection; the service talks to it only through a channel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ropey::Rope;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::LspError;
use super::config::{LspTimings, ServerConfig};
use super::connection::Connection;
use super::convert::convert;
use super::transport::Incoming;
use crate::diagnostics::event::{DiagnosticsEvent, ServerState};
use crate::diagnostics::uri::{path_to_uri, uri_to_path};
use crate::editor::TextChange;
use crate::sandbox::Confinement;

#[derive(Debug)]
pub enum DocCommand {
    Open {
        path: PathBuf,
        language_id: String,
        text: Rope,
    },
    /// `text` is the whole new text (a rope clone: shared, not copied);
    /// `changes`, when known, lead to it from the text sent last.
    Change {
        path: PathBuf,
        text: Rope,
        changes: Option<Vec<TextChange>>,
    },
    Save {
        path: PathBuf,
    },
    Close {
        path: PathBuf,
    },
    /// The user asked for a fresh start (`/lsp-restart`): stop the server if
    /// it runs, start it again with a full restart budget — also after it
    /// gave up.
    Restart,
    Shutdown {
        done: oneshot::Sender<()>,
    },
}

impl DocCommand {
    /// The same document command for another server of the document
    /// (`None` for the control commands, which are never shared).
    pub fn duplicate(&self) -> Option<DocCommand> {
        Some(match self {
            DocCommand::Open {
                path,
                language_id,
                text,
            } => DocCommand::Open {
                path: path.clone(),
                language_id: language_id.clone(),
                text: text.clone(),
            },
            DocCommand::Change {
                path,
                text,
                changes,
            } => DocCommand::Change {
                path: path.clone(),
                text: text.clone(),
                changes: changes.clone(),
            },
            DocCommand::Save { path } => DocCommand::Save { path: path.clone() },
            DocCommand::Close { path } => DocCommand::Close { path: path.clone() },
            DocCommand::Restart | DocCommand::Shutdown { .. } => return None,
        })
    }
}

/// How long edits are gathered before they go out as one `didChange`.
/// Every `didChange` makes a server re-analyse the document (ruff re-lints
/// the whole file, then we convert what it publishes), so at one key per
/// ~30–100 ms a notification per key keeps a core busy on a big file.
/// 100 ms is below what a person notices between typing and a squiggle
/// changing, and the window opens at the first edit of a burst (it is not
/// pushed back by later ones), so steady typing still reaches the server
/// at least every 100 ms. A save or a diagnostics pull flushes at once.
pub const CHANGE_COALESCE: Duration = Duration::from_millis(100);

struct OpenDoc {
    language_id: String,
    /// The newest text, whether or not the server has it yet.
    text: Rope,
    /// The newest version; the server is told it when `pending` flushes.
    version: i32,
    /// Edits the server has not been sent yet.
    pending: Option<Pending>,
    pull_in_flight: bool,
    pull_again: bool,
}

/// Edits gathered during the coalescing window.
#[derive(Debug)]
enum Pending {
    /// The ranges, in order, each against the text the one before left.
    Ranged(Vec<TextChange>),
    /// The whole text must go (the server takes no ranges, or one change
    /// came without them).
    Full,
}

impl Pending {
    fn add(this: Option<Pending>, changes: Option<Vec<TextChange>>) -> Pending {
        match (this, changes) {
            (None, Some(changes)) => Pending::Ranged(changes),
            (Some(Pending::Ranged(mut before)), Some(changes)) => {
                before.extend(changes);
                Pending::Ranged(before)
            }
            _ => Pending::Full,
        }
    }
}

/// The answer to a `textDocument/diagnostic` request, routed back to the loop.
struct Pulled {
    path: PathBuf,
    version: i32,
    result: Result<Value, LspError>,
}

pub struct Supervisor {
    config: ServerConfig,
    name: String,
    root: PathBuf,
    /// Every (re)start of the server goes through this.
    confinement: Confinement,
    timings: LspTimings,
    events: mpsc::UnboundedSender<DiagnosticsEvent>,
    commands: mpsc::UnboundedReceiver<DocCommand>,
    docs: HashMap<PathBuf, OpenDoc>,
    pulled_tx: mpsc::UnboundedSender<Pulled>,
    pulled_rx: mpsc::UnboundedReceiver<Pulled>,
    /// A restart was asked for while the server was starting.
    restart_asked: bool,
    /// What the server last said about a problem (stderr, showMessage),
    /// added to the reason when it fails.
    last_words: super::transport::LastWords,
    /// When the oldest unsent edit must go out (`CHANGE_COALESCE` after it).
    flush_at: Option<Instant>,
}

/// How a phase of the loop ended.
enum Exit {
    /// Shutdown was asked for (or every sender is gone): stop for good.
    Stop(Option<oneshot::Sender<()>>),
    /// The server failed; try again if the budget allows.
    Failed(String),
    /// A restart was asked for: start again at once, budget reset.
    Restart,
}

/// What a command that arrives while no server runs means for the loop.
enum Offline {
    /// Recorded in the document table; carry on.
    Recorded,
    Restart,
    /// Shutdown was asked for (or every sender is gone).
    Stop(Option<oneshot::Sender<()>>),
}

impl Supervisor {
    pub fn spawn(
        config: ServerConfig,
        root: PathBuf,
        timings: LspTimings,
        events: mpsc::UnboundedSender<DiagnosticsEvent>,
        confinement: Confinement,
    ) -> mpsc::UnboundedSender<DocCommand> {
        let (tx, commands) = mpsc::unbounded_channel();
        let (pulled_tx, pulled_rx) = mpsc::unbounded_channel();
        let supervisor = Supervisor {
            name: config.name(),
            config,
            root,
            confinement,
            timings,
            events,
            commands,
            docs: HashMap::new(),
            pulled_tx,
            pulled_rx,
            restart_asked: false,
            last_words: super::transport::LastWords::default(),
            flush_at: None,
        };
        tokio::spawn(supervisor.run());
        tx
    }

    async fn run(mut self) {
        let mut failures: u32 = 0;
        loop {
            self.state(ServerState::Starting);
            let started_at = Instant::now();
            let started = self.start().await;
            if std::mem::take(&mut self.restart_asked) {
                failures = 0; // asked for while starting: this start is the fresh one
            }
            let exit = match started {
                Ok(connection) => self.serve(connection).await,
                Err(exit) => exit,
            };
            let reason = match exit {
                Exit::Stop(done) => {
                    self.stopped(done);
                    return;
                }
                Exit::Restart => {
                    failures = 0;
                    continue;
                }
                Exit::Failed(reason) => match self.last_words.take() {
                    Some(said) => format!("{reason} — the server said: {said}"),
                    None => reason,
                },
            };
            if started_at.elapsed() >= self.timings.stable_after {
                failures = 0;
            }
            failures += 1;
            let Some(&delay) = self.timings.restart_delays.get(failures as usize - 1) else {
                match self.give_up(reason).await {
                    Some(done) => {
                        self.stopped(done);
                        return;
                    }
                    None => {
                        failures = 0;
                        continue;
                    }
                }
            };
            tracing::warn!(server = %self.name, %reason, attempt = failures, "lsp: restarting server");
            self.state(ServerState::Restarting {
                attempt: failures,
                delay,
                reason,
            });
            let sleep = tokio::time::sleep(delay);
            tokio::pin!(sleep);
            loop {
                tokio::select! {
                    _ = &mut sleep => break,
                    command = self.commands.recv() => match self.record_offline(command) {
                        Offline::Recorded => {}
                        Offline::Restart => {
                            failures = 0;
                            break;
                        }
                        Offline::Stop(done) => {
                            self.stopped(done);
                            return;
                        }
                    },
                }
            }
        }
    }

    fn stopped(&self, done: Option<oneshot::Sender<()>>) {
        self.state(ServerState::Stopped);
        if let Some(done) = done {
            let _ = done.send(());
        }
    }

    /// Starts the server while still accepting document commands, so a slow
    /// `initialize` never blocks the caller.
    async fn start(&mut self) -> Result<Connection, Exit> {
        let starting = Connection::start(
            self.config.clone(),
            self.root.clone(),
            self.timings.initialize_timeout,
            self.confinement.clone(),
            self.last_words.clone(),
        );
        tokio::pin!(starting);
        loop {
            tokio::select! {
                result = &mut starting => {
                    return result.map_err(|e| Exit::Failed(e.to_string()));
                }
                command = self.commands.recv() => match self.record_offline(command) {
                    Offline::Recorded => {}
                    // Already starting afresh; the budget is reset (see run).
                    Offline::Restart => self.restart_asked = true,
                    Offline::Stop(done) => return Err(Exit::Stop(done)),
                },
            }
        }
    }

    /// Applies a command to the document table while no server is running.
    fn record_offline(&mut self, command: Option<DocCommand>) -> Offline {
        match command {
            None => Offline::Stop(None),
            Some(DocCommand::Shutdown { done }) => Offline::Stop(Some(done)),
            Some(DocCommand::Restart) => Offline::Restart,
            Some(command) => {
                self.record(&command);
                Offline::Recorded
            }
        }
    }

    fn record(&mut self, command: &DocCommand) {
        match command {
            DocCommand::Open {
                path,
                language_id,
                text,
            } => match self.docs.get_mut(path) {
                // Opened twice (e.g. a second tab): the server sees a change.
                Some(doc) => {
                    doc.text.clone_from(text);
                    doc.version += 1;
                    // The whole text goes now; gathered edits are in it.
                    doc.pending = None;
                }
                None => {
                    self.docs.insert(
                        path.clone(),
                        OpenDoc {
                            language_id: language_id.clone(),
                            text: text.clone(),
                            version: 1,
                            pending: None,
                            pull_in_flight: false,
                            pull_again: false,
                        },
                    );
                }
            },
            DocCommand::Change { path, text, .. } => {
                if let Some(doc) = self.docs.get_mut(path) {
                    doc.text.clone_from(text);
                    doc.version += 1;
                }
            }
            DocCommand::Close { path } => {
                self.docs.remove(path);
            }
            DocCommand::Save { .. } | DocCommand::Restart | DocCommand::Shutdown { .. } => {}
        }
    }

    async fn serve(&mut self, mut connection: Connection) -> Exit {
        self.state(ServerState::Running {
            encoding: connection.encoding.lsp_name(),
        });
        // Pulls in flight died with the previous connection; the newest
        // text goes with didOpen, so nothing gathered is owed.
        self.flush_at = None;
        for doc in self.docs.values_mut() {
            doc.pull_in_flight = false;
            doc.pull_again = false;
            doc.pending = None;
        }
        let paths: Vec<PathBuf> = self.docs.keys().cloned().collect();
        for path in &paths {
            if let Some(doc) = self.docs.get(path) {
                connection.did_open(path, &doc.language_id, doc.version, &doc.text.to_string());
            }
            self.pull(&connection, path);
        }
        loop {
            let flush_at = self.flush_at;
            tokio::select! {
                () = sleep_until(flush_at) => self.flush_all(&connection),
                command = self.commands.recv() => match command {
                    None => {
                        connection.shutdown(self.timings.shutdown_timeout).await;
                        return Exit::Stop(None);
                    }
                    Some(DocCommand::Shutdown { done }) => {
                        connection.shutdown(self.timings.shutdown_timeout).await;
                        return Exit::Stop(Some(done));
                    }
                    Some(DocCommand::Restart) => {
                        connection.shutdown(self.timings.shutdown_timeout).await;
                        return Exit::Restart;
                    }
                    Some(command) => self.forward(&connection, command),
                },
                incoming = connection.incoming.recv() => match incoming {
                    Some(Incoming::Notification { method, params }) => {
                        self.on_notification(&connection, &method, params).await;
                    }
                    Some(Incoming::Closed { reason }) => {
                        let status = match connection.exit_status() {
                            Some(status) => format!("{reason} ({status})"),
                            None => reason,
                        };
                        return Exit::Failed(status);
                    }
                    None => return Exit::Failed("connection lost".into()),
                },
                Some(pulled) = self.pulled_rx.recv() => self.on_pulled(&connection, pulled),
            }
        }
    }

    fn forward(&mut self, connection: &Connection, command: DocCommand) {
        let reopened =
            matches!(&command, DocCommand::Open { path, .. } if self.docs.contains_key(path));
        self.record(&command);
        match command {
            DocCommand::Open { path, .. } => {
                if let Some(doc) = self.docs.get(&path) {
                    if reopened {
                        connection.did_change(&path, doc.version, &doc.text, None);
                    } else {
                        connection.did_open(
                            &path,
                            &doc.language_id,
                            doc.version,
                            &doc.text.to_string(),
                        );
                    }
                }
                self.pull(connection, &path);
            }
            DocCommand::Change { path, changes, .. } => {
                if let Some(doc) = self.docs.get_mut(&path) {
                    // A server without ranges gets the whole text anyway:
                    // no need to keep the edits.
                    let changes = changes.filter(|_| connection.incremental);
                    doc.pending = Some(Pending::add(doc.pending.take(), changes));
                    self.flush_at
                        .get_or_insert_with(|| Instant::now() + CHANGE_COALESCE);
                }
            }
            DocCommand::Save { path } => {
                if self.docs.contains_key(&path) {
                    // The server must check the saved text, not an older one.
                    self.flush(connection, &path);
                    connection.did_save(&path);
                    self.pull(connection, &path);
                }
            }
            DocCommand::Close { path } => {
                // Edits not sent yet are dropped with the document (record
                // removed it): after didClose the server reads the disk.
                connection.did_close(&path);
                // Diagnostics of a closed document go stale; drop ours.
                self.publish(path, Vec::new());
            }
            // Handled by the loop before forwarding.
            DocCommand::Restart | DocCommand::Shutdown { .. } => {}
        }
    }

    /// Sends every document's gathered edits (the coalescing window ended)
    /// and asks pull-model servers about them.
    fn flush_all(&mut self, connection: &Connection) {
        self.flush_at = None;
        let paths: Vec<PathBuf> = self
            .docs
            .iter()
            .filter(|(_, doc)| doc.pending.is_some())
            .map(|(path, _)| path.clone())
            .collect();
        for path in paths {
            self.flush(connection, &path);
            self.pull(connection, &path);
        }
    }

    /// Sends a document's gathered edits as one `didChange` with the newest
    /// version: the ranges in order (each applies to what the one before
    /// left, as LSP specifies) or the whole text.
    fn flush(&mut self, connection: &Connection, path: &Path) {
        let Some(doc) = self.docs.get_mut(path) else {
            return;
        };
        let changes = match doc.pending.take() {
            None => return,
            Some(Pending::Ranged(changes)) => Some(changes),
            Some(Pending::Full) => None,
        };
        connection.did_change(path, doc.version, &doc.text, changes.as_deref());
    }

    /// Asks a pull-model server for a document's diagnostics, at most one
    /// request per document in flight; edits meanwhile trigger one more pull.
    /// Gathered edits go first: the answer must be about the newest text.
    fn pull(&mut self, connection: &Connection, path: &Path) {
        if !connection.pull_diagnostics {
            return;
        }
        self.flush(connection, path);
        let Some(doc) = self.docs.get_mut(path) else {
            return;
        };
        if doc.pull_in_flight {
            doc.pull_again = true;
            return;
        }
        doc.pull_in_flight = true;
        doc.pull_again = false;
        let request = connection.rpc.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": path_to_uri(path)}}),
            self.timings.request_timeout,
        );
        let tx = self.pulled_tx.clone();
        let (path, version) = (path.to_path_buf(), doc.version);
        tokio::spawn(async move {
            let result = request.await;
            let _ = tx.send(Pulled {
                path,
                version,
                result,
            });
        });
    }

    fn on_pulled(&mut self, connection: &Connection, pulled: Pulled) {
        let Some(doc) = self.docs.get_mut(&pulled.path) else {
            return;
        };
        doc.pull_in_flight = false;
        let stale = doc.version != pulled.version || doc.pull_again;
        if stale {
            self.pull(connection, &pulled.path);
            return;
        }
        match pulled.result {
            Ok(report) => {
                if report.get("kind").and_then(Value::as_str) != Some("full") {
                    return; // "unchanged": what we have is still right
                }
                let items = report.get("items").cloned().unwrap_or(Value::Null);
                match serde_json::from_value::<Vec<lsp_types::Diagnostic>>(items) {
                    Ok(items) => {
                        let list = convert(
                            &pulled.path,
                            &doc.text.to_string(),
                            connection.encoding,
                            &self.name,
                            items,
                        );
                        self.publish(pulled.path, list);
                    }
                    Err(error) => {
                        tracing::warn!(server = %self.name, %error, "lsp: unreadable diagnostic report")
                    }
                }
            }
            Err(error) => tracing::debug!(server = %self.name, %error, "lsp: pull failed"),
        }
    }

    async fn on_notification(&mut self, connection: &Connection, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => {
                let params: lsp_types::PublishDiagnosticsParams = match serde_json::from_value(
                    params,
                ) {
                    Ok(params) => params,
                    Err(error) => {
                        tracing::warn!(server = %self.name, %error, "lsp: bad publishDiagnostics");
                        return;
                    }
                };
                let Some(path) = uri_to_path(params.uri.as_str()) else {
                    return;
                };
                let text = match self.docs.get(&path) {
                    Some(doc) => doc.text.to_string(),
                    // A file the user has not opened: the disk is what the server saw.
                    None => {
                        let disk = path.clone();
                        tokio::task::spawn_blocking(move || std::fs::read_to_string(disk))
                            .await
                            .ok()
                            .and_then(Result::ok)
                            .unwrap_or_default()
                    }
                };
                let list = convert(
                    &path,
                    &text,
                    connection.encoding,
                    &self.name,
                    params.diagnostics,
                );
                self.publish(path, list);
            }
            "workspace/diagnostic/refresh" => {
                let paths: Vec<PathBuf> = self.docs.keys().cloned().collect();
                for path in paths {
                    self.pull(connection, &path);
                }
            }
            "window/showMessage" | "window/logMessage" => {
                let message = params.get("message").and_then(Value::as_str).unwrap_or("");
                tracing::debug!(server = %self.name, "{method}: {message}");
                // Type 1 is an error, 2 a warning: the server's own words
                // if it fails next.
                if params
                    .get("type")
                    .and_then(Value::as_u64)
                    .is_some_and(|t| t <= 2)
                {
                    self.last_words.set(message);
                }
            }
            _ => tracing::trace!(server = %self.name, method, "lsp: ignored notification"),
        }
    }

    /// Out of restarts: clear what this server said (it can no longer keep it
    /// current), say so once, and keep the document table current until a
    /// restart is asked for (`None`) or the workbench shuts down (`Some`).
    async fn give_up(&mut self, reason: String) -> Option<Option<oneshot::Sender<()>>> {
        tracing::error!(server = %self.name, %reason, "lsp: giving up on server");
        let paths: Vec<PathBuf> = self.docs.keys().cloned().collect();
        for path in paths {
            self.publish(path, Vec::new());
        }
        // The app says it in the conversation, reason and way back included.
        self.state(ServerState::GaveUp { reason });
        loop {
            let command = self.commands.recv().await;
            match self.record_offline(command) {
                Offline::Recorded => {}
                Offline::Restart => return None,
                Offline::Stop(done) => return Some(done),
            }
        }
    }

    fn publish(&self, path: PathBuf, diagnostics: Vec<crate::diagnostics::Diagnostic>) {
        let _ = self.events.send(DiagnosticsEvent::Published {
            source: self.name.clone(),
            path,
            diagnostics,
        });
    }

    fn state(&self, state: ServerState) {
        let _ = self.events.send(DiagnosticsEvent::ServerState {
            name: self.name.clone(),
            state,
        });
    }
}

/// Sleeps until `at`, or forever when there is nothing to wait for.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

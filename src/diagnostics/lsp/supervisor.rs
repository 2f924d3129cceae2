//! One task per language server: starts it lazily, keeps the open documents
//! (the newest text, to re-open them after a restart, and the texts recently
//! sent, to convert what the server says about each), paces their edits,
//! restarts it with backoff when it dies, and gives up visibly. It owns its
//! connection; the service talks to it only through a channel.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ropey::Rope;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::LspError;
use super::config::{LspTimings, ServerConfig};
use super::connection::Connection;
use super::convert::{WirePublish, WireReport, convert};
use super::transport::{Incoming, Raw, decode};
use crate::diagnostics::event::{DiagnosticsEvent, ServerState};
use crate::diagnostics::position::read_text;
use crate::diagnostics::uri::{path_to_uri, uri_to_path};
use crate::editor::TextChange;
use crate::sandbox::Confinement;

#[derive(Debug)]
pub(crate) enum DocCommand {
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

/// How long edits to an ordinary document are gathered before they go out
/// as one `didChange`. Every `didChange` makes a server re-analyse the
/// document (ruff re-lints the whole file, then we convert what it
/// publishes), so at one key per ~30–100 ms a notification per key keeps a
/// core busy on a big file. 100 ms is below what a person notices between
/// typing and a squiggle changing, and the window opens at the first edit
/// of a burst (it is not pushed back by later ones), so steady typing still
/// reaches the server at least every 100 ms. A save or a diagnostics pull
/// flushes at once. Documents above `PACED_ABOVE_BYTES` are paced instead.
pub(crate) const CHANGE_COALESCE: Duration = Duration::from_millis(100);

/// Above this size a document's edits wait for a pause in typing
/// (`PACED_QUIET`, at most `PACED_MAX_WAIT`) instead of `CHANGE_COALESCE`.
/// A server re-analyses the whole text per `didChange`: ruff lints ~12 MB/s
/// (one lint of the 37 MB bench file takes it ~3 s, BENCHMARKS.md), i.e.
/// ~40 ms at 512 KiB. Below that a lint per 100 ms costs the server under
/// half a core while the user types, and such files (up to ~13 000 lines
/// of Python) are the ones edited by hand, where a squiggle 100 ms after a
/// key matters; above it the server would spend most of a core (a whole one
/// on 2 cores at 37 MB) linting texts the user has already typed past.
pub const PACED_ABOVE_BYTES: usize = 512 * 1024;

/// How long typing must stop before a big document's edits go out. Fluent
/// typing leaves 100–300 ms between keys, so 400 ms of quiet marks the end
/// of a word or a thought rather than the gap before the next key; on a
/// big document the server's own analysis (seconds at 37 MB) dwarfs it, so
/// waiting longer would only delay the answer. Fixed rather than scaled by
/// size: it is about the person, not the text.
pub(crate) const PACED_QUIET: Duration = Duration::from_millis(400);

/// The longest a big document's edits wait while typing goes on without a
/// pause, counted from the first unsent edit: continuous typing still
/// reaches the server every 2 s (not 10 times a second), so its answers are
/// never more than a couple of seconds plus one analysis behind.
pub(crate) const PACED_MAX_WAIT: Duration = Duration::from_secs(2);

/// How many texts recently sent to the server are kept per document, to
/// convert a publish about one of them. Rope clones share all unedited
/// nodes, so keeping a typed-over 37 MB text costs the edited nodes only
/// (a whole-text replacement, such as a reload, is a text of its own).
/// Servers publish about the text they just analysed, which is one of the
/// last few sent: 8 texts span at least 0.8 s of typing on an ordinary
/// document (one `didChange` per 100 ms at most) and 8 pauses in typing on
/// a paced one, while a server answers within one analysis.
const SENT_KEPT: usize = 8;

struct OpenDoc {
    language_id: String,
    /// The newest text, whether or not the server has it yet.
    text: Rope,
    /// The newest version; the server is told it when `pending` flushes.
    version: i32,
    /// The texts the server was sent, by version: what its publishes are about.
    sent: Sent,
    /// Edits the server has not been sent yet.
    pending: Option<Pending>,
    pull_in_flight: bool,
    pull_again: bool,
}

/// The last `SENT_KEPT` texts sent to the server for one document, oldest
/// first, each with the version it went with (`didOpen`/`didChange`).
#[derive(Default)]
struct Sent {
    texts: VecDeque<(i32, Rope)>,
}

impl Sent {
    /// A `didOpen` on a new connection: the server knows only this text.
    fn opened(&mut self, version: i32, text: &Rope) {
        self.texts.clear();
        self.sent(version, text);
    }

    /// A `didChange` went out with `version` and the whole of `text`.
    fn sent(&mut self, version: i32, text: &Rope) {
        if self.texts.len() == SENT_KEPT {
            self.texts.pop_front();
        }
        self.texts.push_back((version, text.clone()));
    }

    /// The text a `publishDiagnostics` about `version` was computed on, or
    /// `None` when the publish is known stale and must be dropped.
    /// - A version we sent and still keep: that text. Older texts are
    ///   forgotten then, since a server analyses its texts in the order it
    ///   got them: a later publish about an older one is out of date.
    /// - No version (servers may omit it): the last text sent — the server
    ///   cannot have seen one we have not sent.
    /// - Older than every text kept: dropped. Either a publish about a
    ///   newer text already came (and must not be overwritten by an older
    ///   one), or `SENT_KEPT` newer texts were sent since, and a push
    ///   server publishes after analysing each change, so one about a
    ///   newer text is still to come. Converting it against a text it is
    ///   not about would put columns in the wrong place.
    /// - Newer than anything sent (a server bug): the last text sent, the
    ///   best guess at what the server has.
    fn for_publish(&mut self, version: Option<i32>) -> Option<&Rope> {
        if let Some(version) = version {
            if self
                .texts
                .front()
                .is_some_and(|(oldest, _)| version < *oldest)
            {
                return None;
            }
            if let Some(at) = self.texts.iter().position(|(v, _)| *v == version) {
                self.texts.drain(..at);
                return self.texts.front().map(|(_, text)| text);
            }
        }
        self.texts.back().map(|(_, text)| text)
    }
}

/// Edits gathered while their `didChange` waits (`Pending::send_at`).
#[derive(Debug)]
struct Pending {
    edits: Edits,
    /// The first edit not sent yet: a burst's window opens here.
    first: Instant,
    /// The newest edit: a big document waits for quiet after it.
    last: Instant,
}

#[derive(Debug)]
enum Edits {
    /// The ranges, in order, each against the text the one before left.
    Ranged(Vec<TextChange>),
    /// The whole text must go (the server takes no ranges, or one change
    /// came without them).
    Full,
}

impl Pending {
    fn add(this: Option<Pending>, changes: Option<Vec<TextChange>>, now: Instant) -> Pending {
        let Some(Pending { edits, first, .. }) = this else {
            return Pending {
                edits: changes.map_or(Edits::Full, Edits::Ranged),
                first: now,
                last: now,
            };
        };
        let edits = match (edits, changes) {
            (Edits::Ranged(mut before), Some(changes)) => {
                before.extend(changes);
                Edits::Ranged(before)
            }
            _ => Edits::Full,
        };
        Pending {
            edits,
            first,
            last: now,
        }
    }

    /// When these edits to a document of `bytes` must go out: 100 ms after
    /// the first for an ordinary one (`CHANGE_COALESCE`); for a big one
    /// (`PACED_ABOVE_BYTES`) after a pause in typing (`PACED_QUIET`), but
    /// no later than `PACED_MAX_WAIT` after the first.
    fn send_at(&self, bytes: usize) -> Instant {
        if bytes <= PACED_ABOVE_BYTES {
            return self.first + CHANGE_COALESCE;
        }
        (self.last + PACED_QUIET).min(self.first + PACED_MAX_WAIT)
    }
}

/// The answer to a `textDocument/diagnostic` request, routed back to the loop.
struct Pulled {
    path: PathBuf,
    version: i32,
    result: Result<Raw, LspError>,
}

pub(crate) struct Supervisor {
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
    /// Documents whose answer from this server was over the message limit:
    /// said once, closed on the server and not sent to it again (a bigger
    /// answer than the limit is a property of the file; sending it again
    /// only makes the server work for an answer that is dropped) until the
    /// user asks for a restart.
    off: HashSet<PathBuf>,
    /// An answer over the limit whose document could not be told was said.
    said_unknown_oversize: bool,
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
            off: HashSet::new(),
            said_unknown_oversize: false,
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
            self.timings.clone(),
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
            Some(DocCommand::Restart) => {
                self.off.clear();
                Offline::Restart
            }
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
                            sent: Sent::default(),
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
        for doc in self.docs.values_mut() {
            doc.pull_in_flight = false;
            doc.pull_again = false;
            doc.pending = None;
        }
        let paths: Vec<PathBuf> = self.docs.keys().cloned().collect();
        for path in &paths {
            if let Some(doc) = self.docs.get_mut(path) {
                connection.did_open(path, &doc.language_id, doc.version, &doc.text.to_string());
                doc.sent.opened(doc.version, &doc.text);
            }
            self.pull(&connection, path);
        }
        loop {
            let send_at = self.next_send();
            tokio::select! {
                () = sleep_until(send_at) => self.send_due(&connection),
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
                        self.off.clear();
                        connection.shutdown(self.timings.shutdown_timeout).await;
                        return Exit::Restart;
                    }
                    Some(command) => self.forward(&connection, command),
                },
                incoming = connection.incoming.recv() => match incoming {
                    Some(Incoming::Notification { method, params }) => {
                        self.on_notification(&connection, &method, params).await;
                    }
                    Some(Incoming::Dropped { bytes, method, uri }) => {
                        let path = uri.as_deref().and_then(uri_to_path);
                        self.too_large(&connection, path, method.as_deref(), bytes);
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
        if let DocCommand::Open { path, .. } = &command
            && self.off.contains(path)
        {
            return; // its answers are too large for us: not sent again
        }
        let known = match &command {
            DocCommand::Close { path } => self.docs.contains_key(path),
            _ => true,
        };
        let reopened =
            matches!(&command, DocCommand::Open { path, .. } if self.docs.contains_key(path));
        self.record(&command);
        match command {
            DocCommand::Open { path, .. } => {
                if let Some(doc) = self.docs.get_mut(&path) {
                    if reopened {
                        connection.did_change(&path, doc.version, &doc.text, None);
                        doc.sent.sent(doc.version, &doc.text);
                    } else {
                        connection.did_open(
                            &path,
                            &doc.language_id,
                            doc.version,
                            &doc.text.to_string(),
                        );
                        doc.sent.opened(doc.version, &doc.text);
                    }
                }
                self.pull(connection, &path);
            }
            DocCommand::Change { path, changes, .. } => {
                if let Some(doc) = self.docs.get_mut(&path) {
                    // A server without ranges gets the whole text anyway:
                    // no need to keep the edits.
                    let changes = changes.filter(|_| connection.incremental);
                    doc.pending = Some(Pending::add(doc.pending.take(), changes, Instant::now()));
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
            // Already closed on the server when its answer was too large.
            DocCommand::Close { .. } if !known => {}
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

    /// When the next document's gathered edits must go out, if any wait.
    fn next_send(&self) -> Option<Instant> {
        self.docs
            .values()
            .filter_map(|doc| Some(doc.pending.as_ref()?.send_at(doc.text.len_bytes())))
            .min()
    }

    /// Sends the gathered edits of every document whose time came (see
    /// `Pending::send_at`) and asks pull-model servers about them.
    fn send_due(&mut self, connection: &Connection) {
        let now = Instant::now();
        let paths: Vec<PathBuf> = self
            .docs
            .iter()
            .filter(|(_, doc)| {
                doc.pending
                    .as_ref()
                    .is_some_and(|p| p.send_at(doc.text.len_bytes()) <= now)
            })
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
            Some(Pending {
                edits: Edits::Ranged(changes),
                ..
            }) => Some(changes),
            Some(Pending {
                edits: Edits::Full, ..
            }) => None,
        };
        connection.did_change(path, doc.version, &doc.text, changes.as_deref());
        doc.sent.sent(doc.version, &doc.text);
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
                // The answer's text (megabytes) goes before the list is built.
                let decoded = decode::<WireReport>(&report);
                drop(report);
                match decoded {
                    Ok(report) if report.kind != "full" => {} // "unchanged": what we have is still right
                    // Not stale: the newest text is the one asked about
                    // (a pull sends gathered edits first).
                    Ok(WireReport { items, .. }) => {
                        let list = convert(
                            &pulled.path,
                            &doc.text,
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
            Err(LspError::TooLarge { bytes }) => {
                self.too_large(connection, Some(pulled.path), None, bytes);
            }
            Err(error) => tracing::debug!(server = %self.name, %error, "lsp: pull failed"),
        }
    }

    /// An answer over the message limit was dropped (`framing`). About a
    /// document: say so once, clear what this server said about it, close
    /// it on the server and send it no more (`off`); the server goes on
    /// with the other files. About nothing we can tell: say so once.
    fn too_large(
        &mut self,
        connection: &Connection,
        path: Option<PathBuf>,
        method: Option<&str>,
        bytes: usize,
    ) {
        let size = crate::units::binary_size(bytes as u64);
        let limit = crate::units::binary_size(self.timings.max_message_bytes as u64);
        let Some(path) = path else {
            if !std::mem::replace(&mut self.said_unknown_oversize, true) {
                let what = method.unwrap_or("a message");
                self.notice(format!(
                    "{} sent {what} of {size}, over the {limit} limit; it was dropped",
                    self.name
                ));
            }
            return;
        };
        if !self.off.insert(path.clone()) {
            return;
        }
        if self.docs.remove(&path).is_some() {
            connection.did_close(&path);
        }
        let shown = path.strip_prefix(&self.root).unwrap_or(&path).display();
        self.notice(format!(
            "{name}'s answer for {shown} is {size}, over the {limit} limit; {name}'s \
             diagnostics for this file are off (/lsp-restart tries again)",
            name = self.name
        ));
        self.publish(path, Vec::new());
    }

    async fn on_notification(&mut self, connection: &Connection, method: &str, params: Raw) {
        match method {
            "textDocument/publishDiagnostics" => {
                // The message's text (megabytes) goes before the list is built.
                let decoded = decode::<WirePublish>(&params);
                drop(params);
                let params = match decoded {
                    Ok(params) => params,
                    Err(error) => {
                        tracing::warn!(server = %self.name, %error, "lsp: bad publishDiagnostics");
                        return;
                    }
                };
                let Some(path) = uri_to_path(&params.uri) else {
                    return;
                };
                if self.off.contains(&path) {
                    return; // cleared when it was turned off; stays so
                }
                let disk;
                let text = match self.docs.get_mut(&path) {
                    // Against the text the server saw, which may be older
                    // than what we hold (and than what it is being sent).
                    Some(doc) => match doc.sent.for_publish(params.version) {
                        Some(text) => text,
                        None => {
                            tracing::debug!(server = %self.name, version = ?params.version, "lsp: stale publish dropped");
                            return;
                        }
                    },
                    // A file the user has not opened: the disk is what the server saw.
                    None => {
                        let read = path.clone();
                        disk = tokio::task::spawn_blocking(move || read_text(&read))
                            .await
                            .ok()
                            .flatten()
                            .unwrap_or_default();
                        &disk
                    }
                };
                let list = convert(
                    &path,
                    text,
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
                let params: Value = decode(&params).unwrap_or(Value::Null);
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

    fn notice(&self, text: String) {
        tracing::warn!(server = %self.name, "lsp: {text}");
        let _ = self.events.send(DiagnosticsEvent::Notice(text));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::lsp::convert::convert;
    use crate::diagnostics::model::Position;
    use crate::diagnostics::position::ColumnUnit;

    /// A warning on `BAD` as a UTF-16 server reports it for `s = "😀"; BAD`
    /// (columns 10..13).
    fn bad_at_utf16_10() -> super::super::convert::WireDiagnostic {
        serde_json::from_value(json!({
            "range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 13}},
            "message": "BAD found",
        }))
        .unwrap()
    }

    fn start_of(text: &Rope) -> Position {
        let list = convert(
            Path::new("/x.py"),
            text,
            ColumnUnit::Utf16,
            "srv",
            vec![bad_at_utf16_10()],
        );
        list[0].range.start
    }

    fn kept(sent: &Sent) -> Vec<i32> {
        sent.texts.iter().map(|(v, _)| *v).collect()
    }

    /// The publish names the version with the emoji; the newer text sent
    /// since removed it. Converted against its own text, `BAD` starts at
    /// char 9; against the newest it would land at char 10, inside it.
    #[test]
    fn a_publish_is_converted_against_the_text_of_its_version() {
        let with_emoji = Rope::from_str("s = \"😀\"; BAD\n");
        let without = Rope::from_str("s = \"\"; BAD\n");
        let mut sent = Sent::default();
        sent.opened(1, &with_emoji);
        sent.sent(2, &without);
        let text = sent.for_publish(Some(1)).expect("version 1 is kept");
        assert_eq!(start_of(text), Position::new(0, 9));
        assert_eq!(start_of(&without), Position::new(0, 10), "the old bug");
        // Version 1 answered: nothing older can be asked about; 2 stays.
        assert_eq!(kept(&sent), vec![1, 2]);
    }

    /// Without a version the last text sent is the one; a publish about a
    /// version older than a newer one already converted, or older than
    /// everything kept, is dropped; a version never sent gets the last one.
    #[test]
    fn which_text_a_publish_is_about() {
        let texts: Vec<Rope> = (0..12).map(|i| Rope::from_str(&format!("v{i}"))).collect();
        let mut sent = Sent::default();
        sent.opened(1, &texts[1]);
        assert_eq!(sent.for_publish(None), Some(&texts[1]));
        for v in 2..=10 {
            sent.sent(v, &texts[v as usize]);
        }
        assert_eq!(kept(&sent), (3..=10).collect::<Vec<_>>(), "the last 8");
        assert_eq!(sent.for_publish(None), Some(&texts[10]));
        assert_eq!(sent.for_publish(Some(2)), None, "older than all kept");
        assert_eq!(sent.for_publish(Some(5)), Some(&texts[5]));
        assert_eq!(kept(&sent), (5..=10).collect::<Vec<_>>());
        assert_eq!(sent.for_publish(Some(4)), None, "5 was already answered");
        assert_eq!(sent.for_publish(Some(11)), Some(&texts[10]), "never sent");
        // A new connection starts over with the text it was opened with.
        sent.opened(11, &texts[11]);
        assert_eq!(kept(&sent), vec![11]);
    }

    /// When the supervisor's loop would send `didChange`s for edits at
    /// `keys` (offsets from a start) to a document of `bytes`: the same
    /// `Pending::add`/`send_at` the loop uses, on a clock of our own.
    fn sends(bytes: usize, keys: &[Duration]) -> Vec<Duration> {
        let start = Instant::now();
        let mut pending: Option<Pending> = None;
        let mut keys = keys.iter().map(|k| start + *k).peekable();
        let mut out = Vec::new();
        loop {
            let due = pending.as_ref().map(|p| p.send_at(bytes));
            match (keys.peek().copied(), due) {
                (Some(key), due) if due.is_none_or(|due| key < due) => {
                    let edit = Some(vec![]);
                    pending = Some(Pending::add(pending.take(), edit, key));
                    keys.next();
                }
                (_, Some(due)) => {
                    out.push(due - start);
                    pending = None;
                }
                (None, None) => return out,
                (Some(_), None) => unreachable!("handled by the first arm"),
            }
        }
    }

    fn every(gap: Duration, count: u32) -> Vec<Duration> {
        (0..count).map(|i| gap * i).collect()
    }

    #[test]
    fn a_burst_on_a_big_document_goes_out_after_the_pause() {
        let ms = Duration::from_millis;
        // 10 keys 30 ms apart: one didChange, PACED_QUIET after the last.
        let burst = every(ms(30), 10);
        assert_eq!(
            sends(PACED_ABOVE_BYTES + 1, &burst),
            vec![ms(270) + PACED_QUIET]
        );
        // The same burst on an ordinary document: every 100 ms.
        assert_eq!(
            sends(PACED_ABOVE_BYTES, &burst),
            vec![ms(100), ms(220), ms(340)]
        );
    }

    #[test]
    fn continuous_typing_on_a_big_document_still_goes_out_every_two_seconds() {
        let ms = Duration::from_millis;
        // 10 s of a key every 30 ms, no pause.
        let keys = every(ms(30), 334);
        let out = sends(PACED_ABOVE_BYTES + 1, &keys);
        assert!(
            out.windows(2)
                .all(|w| w[1] - w[0] <= PACED_MAX_WAIT + ms(30)),
            "{out:?}"
        );
        assert!((5..=6).contains(&out.len()), "{out:?}");
        // The last key (at 9.99 s) goes out with the last send, no later
        // than a quiet period after it.
        let last = *out.last().expect("sent");
        assert!(
            last >= ms(9990) && last <= ms(9990) + PACED_QUIET,
            "{out:?}"
        );
        // An ordinary document: about every 100 ms (each burst's window
        // opens at its first key, 120 ms apart on a 30 ms grid).
        let small = sends(PACED_ABOVE_BYTES, &keys);
        assert!(small.len() >= 80, "{}", small.len());
    }
}

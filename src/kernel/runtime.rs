//! `CodeRuntime`: one persistent Python kernel, driven from async code.
//!
//! A cheap clonable handle. `execute` calls are serialised; `describe`,
//! `interrupt` and capability calls run concurrently with a cell, which is
//! what keeps the inspector live and makes "a capability asks for the runtime
//! state mid-cell" work instead of deadlocking.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use super::capability::{CallContext, CapabilityRegistry};
use super::config::KernelConfig;
use super::error::KernelError;
use super::events::KernelEvent;
use super::framing::LineReader;
use super::lock;
use super::output::CappedText;
use super::process::{self, Spawned};
use super::protocol::{
    HostMessage, KernelMessage, ReplyError, ResultFrame, StreamName, parse_kernel_line,
};
use super::result::{ExecOutcome, ExecResult};
use super::state::RuntimeState;
use super::status::{KernelInfo, KernelStatus};

/// Largest kernel→host frame accepted; the driver's own frames stay far below.
const MAX_FRAME: usize = 16 << 20;

/// Handle to a persistent Python kernel. Clone freely; all clones drive the
/// same kernel. Dropping the last clone kills the kernel process group.
#[derive(Clone)]
pub struct CodeRuntime {
    inner: Arc<Inner>,
}

/// A weak way back into the runtime for capability handlers (e.g. the
/// `context` capability's `get_runtime_state`): no reference cycle between
/// the runtime, its registry and the handlers.
#[derive(Clone)]
pub struct RuntimeStateHandle {
    inner: Weak<Inner>,
}

impl RuntimeStateHandle {
    /// The live variable listing; answered even while a cell (including the
    /// one making the capability call) is running.
    pub async fn describe(&self) -> Result<RuntimeState, KernelError> {
        let inner = self.inner.upgrade().ok_or(KernelError::Gone)?;
        inner.describe().await
    }
}

struct Inner {
    config: KernelConfig,
    registry: CapabilityRegistry,
    conn: Mutex<Option<Arc<Connection>>>,
    /// One cell at a time.
    exec_turn: tokio::sync::Mutex<()>,
    status: watch::Sender<KernelInfo>,
    events: mpsc::UnboundedSender<KernelEvent>,
    ids: AtomicU64,
    generation: AtomicU64,
    /// `sys.executable` reported by the first kernel: later (re)starts run it
    /// directly, skipping e.g. a pyenv shim's few hundred milliseconds.
    resolved_python: Mutex<Option<PathBuf>>,
}

/// One running kernel process.
struct Connection {
    generation: u64,
    pid: u32,
    out: mpsc::UnboundedSender<Vec<u8>>,
    pending: Arc<Mutex<Pending>>,
    exited: watch::Receiver<Option<String>>,
}

#[derive(Default)]
struct Pending {
    exec: Option<PendingExec>,
    describes: HashMap<u64, oneshot::Sender<RuntimeState>>,
    /// Set when the process is gone.
    dead: Option<String>,
}

struct PendingExec {
    id: u64,
    done: oneshot::Sender<Completion>,
    stdout: CappedText,
    stderr: CappedText,
}

enum Completion {
    Finished {
        frame: ResultFrame,
        stdout: String,
        stderr: String,
    },
    Died {
        reason: String,
        stdout: String,
        stderr: String,
    },
}

impl Connection {
    fn send(&self, msg: &HostMessage<'_>) -> bool {
        self.out.send(msg.to_line()).is_ok()
    }

    fn is_alive(&self) -> bool {
        self.exited.borrow().is_none() && lock(&self.pending).dead.is_none()
    }

    fn signal(&self, sig: i32) -> bool {
        self.exited.borrow().is_none() && process::signal_group(self.pid, sig)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

impl CodeRuntime {
    /// Create the runtime (the kernel itself starts on `start` or the first
    /// `execute`). Must be called inside a tokio runtime. Returns the event
    /// stream for the UI loop.
    pub fn new(
        config: KernelConfig,
        registry: CapabilityRegistry,
    ) -> (Self, mpsc::UnboundedReceiver<KernelEvent>) {
        let (events, events_rx) = mpsc::unbounded_channel();
        let (status, status_rx) = watch::channel(KernelInfo::default());
        let refresh = config.auto_refresh;
        let inner = Arc::new(Inner {
            config,
            registry,
            conn: Mutex::new(None),
            exec_turn: tokio::sync::Mutex::new(()),
            status,
            events,
            ids: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            resolved_python: Mutex::new(None),
        });
        if let Some(every) = refresh {
            tokio::spawn(refresh_while_busy(Arc::downgrade(&inner), status_rx, every));
        }
        (Self { inner }, events_rx)
    }

    /// Status and Python version, for the status bar.
    pub fn status(&self) -> watch::Receiver<KernelInfo> {
        self.inner.status.subscribe()
    }

    pub fn state_handle(&self) -> RuntimeStateHandle {
        RuntimeStateHandle {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Start the kernel now instead of on the first execute.
    pub async fn start(&self) -> Result<(), KernelError> {
        let _turn = self.inner.exec_turn.lock().await;
        self.inner.ensure_started().await.map(drop)
    }

    /// Run one cell. Never fails as a Rust error: start failures, timeouts
    /// and crashes are described in the returned `ExecResult`.
    pub async fn execute(&self, code: &str, timeout: Option<Duration>) -> ExecResult {
        let inner = &self.inner;
        let _turn = inner.exec_turn.lock().await;
        let id = inner.next_id();
        let timeout = timeout.unwrap_or(inner.config.default_timeout);
        let conn = match inner.ensure_started().await {
            Ok(conn) => conn,
            Err(err) => {
                return ExecResult::failed(id, "KernelError", err.to_string(), ExecOutcome::NotRun);
            }
        };
        let (done, mut rx) = oneshot::channel();
        {
            let mut pending = lock(&conn.pending);
            if let Some(reason) = pending.dead.clone() {
                // Died between the liveness check and now: the reader is gone.
                return finish(
                    id,
                    Ok(Completion::Died {
                        reason,
                        stdout: String::new(),
                        stderr: String::new(),
                    }),
                    ExecOutcome::Completed,
                    Instant::now(),
                );
            }
            // Room for the driver's own head + notice + tail, so its drop
            // notice survives; this cap only bites if the driver misbehaves.
            let (head, tail) = (
                inner.config.output_head_bytes,
                2 * inner.config.output_tail_bytes + 4096,
            );
            pending.exec = Some(PendingExec {
                id,
                done,
                stdout: CappedText::new(head, tail),
                stderr: CappedText::new(head, tail),
            });
        }
        let started = Instant::now();
        inner.emit(KernelEvent::CellStarted { exec_id: id });
        inner.set_status(&conn, KernelStatus::Busy);
        conn.send(&HostMessage::Execute { id, code });

        let result = match tokio::time::timeout(timeout, &mut rx).await {
            Ok(done) => finish(id, done, ExecOutcome::Completed, started),
            Err(_) => {
                tracing::info!(id, ?timeout, "cell timed out; interrupting");
                conn.signal(libc::SIGINT);
                match tokio::time::timeout(inner.config.interrupt_grace, &mut rx).await {
                    Ok(done) => {
                        let mut result = finish(id, done, ExecOutcome::Completed, started);
                        if result.outcome == ExecOutcome::Interrupted {
                            result.outcome = ExecOutcome::TimedOut { restarted: false };
                            if let Some(err) = result.error.as_mut() {
                                err.type_name = "TimeoutError".to_owned();
                                err.message = format!(
                                    "cell timed out after {} and was interrupted; variables kept",
                                    seconds(timeout)
                                );
                            }
                        }
                        result
                    }
                    Err(_) => {
                        inner
                            .kill_and_restart(conn.clone(), id, rx, timeout, started)
                            .await
                    }
                }
            }
        };
        if !result.lost_state() {
            inner.set_status(&conn, KernelStatus::Idle);
        }
        if inner.config.auto_refresh.is_some() {
            let weak = Arc::downgrade(inner);
            tokio::spawn(async move { publish_state(&weak).await });
        }
        result
    }

    /// The live variable listing (works while a cell runs). A kernel that is
    /// not running answers with an empty, `alive: false` state.
    pub async fn describe(&self) -> Result<RuntimeState, KernelError> {
        self.inner.describe().await
    }

    /// SIGINT to the running cell (`KeyboardInterrupt`; variables kept).
    /// Returns false when no cell is running.
    pub fn interrupt(&self) -> bool {
        let busy = self.inner.status.borrow().status == KernelStatus::Busy;
        let conn = lock(&self.inner.conn).clone();
        match conn {
            Some(conn) if busy => conn.signal(libc::SIGINT),
            _ => false,
        }
    }

    /// Stop the kernel for good (a later execute starts a fresh one).
    pub async fn shutdown(&self) {
        let conn = lock(&self.inner.conn).take();
        let Some(conn) = conn else { return };
        conn.send(&HostMessage::Shutdown);
        let mut exited = conn.exited.clone();
        let _ =
            tokio::time::timeout(Duration::from_secs(1), exited.wait_for(Option::is_some)).await;
        self.inner.generation.fetch_add(1, Ordering::SeqCst);
        self.inner.status.send_modify(|info| {
            info.status = KernelStatus::Dead("shut down".to_owned());
            info.pid = None;
        });
        drop(conn); // kills the group if it is still there
    }
}

impl Inner {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn emit(&self, event: KernelEvent) {
        let _ = self.events.send(event);
    }

    /// Status changes from an old (replaced) kernel are ignored.
    fn set_status(&self, conn: &Connection, status: KernelStatus) {
        if conn.generation != self.generation.load(Ordering::SeqCst) {
            return;
        }
        self.publish_status(status, None);
    }

    fn publish_status(&self, status: KernelStatus, ready: Option<(String, u32)>) {
        let mut changed = false;
        self.status.send_if_modified(|info| {
            if info.status != status {
                info.status = status.clone();
                changed = true;
            }
            if let Some((python, pid)) = &ready {
                info.python = Some(python.clone());
                info.pid = Some(*pid);
                changed = true;
            }
            changed
        });
        if changed {
            self.emit(KernelEvent::Status(self.status.borrow().clone()));
        }
    }

    async fn ensure_started(self: &Arc<Self>) -> Result<Arc<Connection>, KernelError> {
        if let Some(conn) = lock(&self.conn).clone()
            && conn.is_alive()
        {
            return Ok(conn);
        }
        self.spawn_connection().await
    }

    async fn spawn_connection(self: &Arc<Self>) -> Result<Arc<Connection>, KernelError> {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let old = lock(&self.conn).take();
        drop(old);
        self.publish_status(KernelStatus::Starting, None);
        let python = lock(&self.resolved_python)
            .clone()
            .unwrap_or_else(|| self.config.python.clone());
        let spawned = match process::spawn(&self.config, &python, &self.registry.specs()) {
            Ok(spawned) => spawned,
            Err(err) => {
                self.publish_status(KernelStatus::Dead(err.to_string()), None);
                return Err(err);
            }
        };
        let Spawned {
            pid,
            stdout,
            out,
            exited,
            stderr_tail,
        } = spawned;
        let conn = Arc::new(Connection {
            generation,
            pid,
            out,
            pending: Arc::new(Mutex::new(Pending::default())),
            exited,
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        tokio::spawn(read_frames(
            Arc::downgrade(self),
            ReaderParts {
                generation,
                pid,
                pending: Arc::clone(&conn.pending),
                out: conn.out.clone(),
                exited: conn.exited.clone(),
                stderr_tail,
            },
            stdout,
            ready_tx,
        ));
        match tokio::time::timeout(self.config.start_timeout, ready_rx).await {
            Ok(Ok(ready)) => {
                *lock(&self.conn) = Some(Arc::clone(&conn));
                self.publish_status(KernelStatus::Idle, Some(ready));
                Ok(conn)
            }
            Ok(Err(_)) => {
                let reason = lock(&conn.pending)
                    .dead
                    .clone()
                    .unwrap_or_else(|| "no reason given".to_owned());
                Err(KernelError::StartFailed(reason))
            }
            Err(_) => Err(KernelError::StartTimeout(self.config.start_timeout)),
        }
    }

    /// The timeout path when SIGINT did not work: kill the group, collect
    /// what the cell printed, start a fresh kernel, say so plainly.
    async fn kill_and_restart(
        self: &Arc<Self>,
        conn: Arc<Connection>,
        id: u64,
        rx: oneshot::Receiver<Completion>,
        timeout: Duration,
        started: Instant,
    ) -> ExecResult {
        tracing::warn!(id, "cell ignored the interrupt; killing the kernel");
        conn.signal(libc::SIGKILL);
        let (stdout, stderr) = match tokio::time::timeout(Duration::from_secs(3), rx).await {
            Ok(Ok(
                Completion::Died { stdout, stderr, .. }
                | Completion::Finished { stdout, stderr, .. },
            )) => (stdout, stderr),
            _ => (String::new(), String::new()),
        };
        drop(conn);
        let restart = self.spawn_connection().await;
        let mut message = format!(
            "cell timed out after {} and did not stop when interrupted: kernel restarted — variables lost",
            seconds(timeout)
        );
        if let Err(err) = &restart {
            message.push_str(&format!(" (restart failed: {err})"));
        }
        self.emit(KernelEvent::Restarted {
            reason: message.clone(),
        });
        let mut result = ExecResult::failed(
            id,
            "KernelRestarted",
            message,
            ExecOutcome::TimedOut { restarted: true },
        );
        result.stdout = stdout;
        result.stderr = stderr;
        result.duration = started.elapsed();
        result
    }

    async fn describe(&self) -> Result<RuntimeState, KernelError> {
        let conn = lock(&self.conn).clone();
        let Some(conn) = conn else {
            return Ok(RuntimeState::dead());
        };
        let id = self.next_id();
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = lock(&conn.pending);
            if pending.dead.is_some() {
                return Ok(RuntimeState::dead());
            }
            pending.describes.insert(id, tx);
        }
        conn.send(&HostMessage::Describe { id });
        match tokio::time::timeout(self.config.describe_timeout, rx).await {
            Ok(Ok(state)) => Ok(state),
            Ok(Err(_)) => Ok(RuntimeState::dead()),
            Err(_) => {
                lock(&conn.pending).describes.remove(&id);
                Err(KernelError::DescribeTimeout(self.config.describe_timeout))
            }
        }
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

fn finish(
    id: u64,
    done: Result<Completion, oneshot::error::RecvError>,
    outcome: ExecOutcome,
    started: Instant,
) -> ExecResult {
    match done {
        Ok(Completion::Finished {
            frame,
            stdout,
            stderr,
        }) => {
            let interrupted = frame
                .error
                .as_ref()
                .is_some_and(|e| e.type_name == "KeyboardInterrupt");
            let duration = if frame.duration_ms.is_finite() && frame.duration_ms >= 0.0 {
                Duration::from_secs_f64(frame.duration_ms / 1000.0)
            } else {
                started.elapsed()
            };
            ExecResult {
                id,
                ok: frame.ok,
                stdout,
                stderr,
                value_repr: frame.value_repr,
                error: frame.error,
                duration,
                outcome: if interrupted {
                    ExecOutcome::Interrupted
                } else {
                    outcome
                },
            }
        }
        Ok(Completion::Died {
            reason,
            stdout,
            stderr,
        }) => {
            let mut result = ExecResult::failed(
                id,
                "KernelDied",
                format!(
                    "the kernel died ({reason}) — variables lost; a fresh kernel starts on the next execute"
                ),
                ExecOutcome::KernelDied { reason },
            );
            result.stdout = stdout;
            result.stderr = stderr;
            result.duration = started.elapsed();
            result
        }
        Err(_) => ExecResult::failed(
            id,
            "KernelError",
            "the kernel connection closed without an answer".to_owned(),
            ExecOutcome::KernelDied {
                reason: "connection closed".to_owned(),
            },
        ),
    }
}

struct ReaderParts {
    generation: u64,
    pid: u32,
    pending: Arc<Mutex<Pending>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    exited: watch::Receiver<Option<String>>,
    stderr_tail: Arc<Mutex<String>>,
}

/// Reads the driver's frames until the process goes away, then reports the
/// death to whoever is waiting.
async fn read_frames(
    runtime: Weak<Inner>,
    parts: ReaderParts,
    stdout: tokio::process::ChildStdout,
    ready: oneshot::Sender<(String, u32)>,
) {
    let mut ready = Some(ready);
    let mut lines = LineReader::new(stdout, MAX_FRAME);
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(err) => {
                tracing::warn!(%err, "kernel channel read failed");
                break;
            }
        };
        let Some(msg) = parse_kernel_line(line) else {
            continue;
        };
        dispatch(&runtime, &parts, msg, &mut ready);
    }
    on_channel_closed(&runtime, parts).await;
}

fn dispatch(
    runtime: &Weak<Inner>,
    parts: &ReaderParts,
    msg: KernelMessage,
    ready: &mut Option<oneshot::Sender<(String, u32)>>,
) {
    match msg {
        KernelMessage::Ready {
            python,
            pid,
            executable,
        } => {
            if let (Some(inner), Some(exe)) = (runtime.upgrade(), executable) {
                *lock(&inner.resolved_python) = Some(PathBuf::from(exe));
            }
            if let Some(ready) = ready.take() {
                let _ = ready.send((python, pid));
            }
        }
        KernelMessage::Stream { id, name, text } => {
            {
                let mut pending = lock(&parts.pending);
                if let Some(exec) = pending.exec.as_mut().filter(|e| Some(e.id) == id) {
                    match name {
                        StreamName::Stdout => exec.stdout.push(&text),
                        StreamName::Stderr => exec.stderr.push(&text),
                    }
                }
            }
            if let Some(inner) = runtime.upgrade() {
                inner.emit(KernelEvent::Stream {
                    exec_id: id,
                    stream: name,
                    text,
                });
            }
        }
        KernelMessage::Result(frame) => {
            let exec = {
                let mut pending = lock(&parts.pending);
                match &pending.exec {
                    Some(exec) if exec.id == frame.id => pending.exec.take(),
                    _ => None,
                }
            };
            match exec {
                Some(exec) => {
                    let _ = exec.done.send(Completion::Finished {
                        frame,
                        stdout: exec.stdout.finish(),
                        stderr: exec.stderr.finish(),
                    });
                }
                None => tracing::debug!(id = frame.id, "result for a cell nobody waits for"),
            }
        }
        KernelMessage::State { id, state } => {
            let waiter = id.and_then(|id| lock(&parts.pending).describes.remove(&id));
            if let Some(waiter) = waiter {
                let _ = waiter.send(state);
            }
        }
        KernelMessage::Call {
            id,
            cap,
            action,
            args,
        } => {
            let exec_id = lock(&parts.pending).exec.as_ref().map(|e| e.id);
            let ctx = CallContext {
                runtime: RuntimeStateHandle {
                    inner: runtime.clone(),
                },
                exec_id,
            };
            let call = match runtime.upgrade() {
                Some(inner) => inner.registry.dispatch(&cap, &action, args, ctx),
                None => return,
            };
            let out = parts.out.clone();
            tokio::spawn(async move {
                let reply = match call.await {
                    Ok(value) => HostMessage::Reply {
                        id,
                        ok: true,
                        value: Some(value),
                        error: None,
                    },
                    Err(err) => HostMessage::Reply {
                        id,
                        ok: false,
                        value: None,
                        error: Some(ReplyError {
                            type_name: err.python_type().to_owned(),
                            message: err.to_string(),
                        }),
                    },
                };
                let _ = out.send(reply.to_line());
            });
        }
    }
}

async fn on_channel_closed(runtime: &Weak<Inner>, parts: ReaderParts) {
    let mut exited = parts.exited.clone();
    let waited = tokio::time::timeout(Duration::from_secs(1), exited.wait_for(Option::is_some))
        .await
        .is_ok();
    if !waited {
        // The driver closed its channel but lives on: it is useless, end it.
        process::signal_group(parts.pid, libc::SIGKILL);
        let _ =
            tokio::time::timeout(Duration::from_secs(2), exited.wait_for(Option::is_some)).await;
    }
    let mut reason = exited
        .borrow()
        .clone()
        .unwrap_or_else(|| "closed its channel".to_owned());
    let tail = lock(&parts.stderr_tail).trim().to_owned();
    if !tail.is_empty() {
        let last: String = tail
            .lines()
            .last()
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect();
        reason.push_str(&format!(": {last}"));
    }
    tracing::warn!(%reason, "kernel died");
    let exec = {
        let mut pending = lock(&parts.pending);
        pending.dead = Some(reason.clone());
        pending.describes.clear();
        pending.exec.take()
    };
    if let Some(exec) = exec {
        let _ = exec.done.send(Completion::Died {
            reason: reason.clone(),
            stdout: exec.stdout.finish(),
            stderr: exec.stderr.finish(),
        });
    }
    if let Some(inner) = runtime.upgrade()
        && inner.generation.load(Ordering::SeqCst) == parts.generation
    {
        inner.status.send_modify(|info| info.pid = None);
        inner.publish_status(KernelStatus::Dead(reason), None);
    }
}

async fn publish_state(runtime: &Weak<Inner>) {
    let Some(inner) = runtime.upgrade() else {
        return;
    };
    match inner.describe().await {
        Ok(state) if state.alive => inner.emit(KernelEvent::State(state)),
        Ok(_) => {}
        Err(err) => tracing::debug!(%err, "inspector refresh skipped"),
    }
}

/// Keeps the inspector live: a describe every `every` while a cell runs.
async fn refresh_while_busy(
    runtime: Weak<Inner>,
    mut status: watch::Receiver<KernelInfo>,
    every: Duration,
) {
    loop {
        let busy = status.borrow_and_update().status == KernelStatus::Busy;
        if busy {
            tokio::select! {
                changed = status.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(every) => publish_state(&runtime).await,
            }
        } else if status.changed().await.is_err() {
            return;
        }
    }
}

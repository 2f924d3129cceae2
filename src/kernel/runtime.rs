//! `CodeRuntime`: one persistent Python kernel, driven from async code.
//!
//! A cheap clonable handle. `execute` calls are serialised; `describe`,
//! `interrupt` and capability calls run concurrently with a cell, which is
//! what keeps the inspector live and makes "a capability asks for the runtime
//! state mid-cell" work instead of deadlocking.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use super::capability::CapabilityRegistry;
use super::config::KernelConfig;
use super::connection::{
    CellPhase, Completion, Connection, Pending, PendingExec, ReaderParts, finish, read_frames,
};
use super::error::KernelError;
use super::events::KernelEvent;
use super::interpreter;
use super::lock;
use super::output::CappedText;
use super::process::{self, Spawned};
use super::protocol::HostMessage;
use super::result::{ExecOutcome, ExecResult};
use super::state::RuntimeState;
use super::status::{KernelInfo, KernelStatus};

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
    pub(super) inner: Weak<Inner>,
}

impl RuntimeStateHandle {
    /// A handle to no runtime (`describe` says it is gone), for calling a
    /// capability outside a kernel in tests.
    #[cfg(test)]
    pub(crate) fn detached() -> Self {
        Self { inner: Weak::new() }
    }

    /// The live variable listing; answered even while a cell (including the
    /// one making the capability call) is running.
    pub async fn describe(&self) -> Result<RuntimeState, KernelError> {
        let inner = self.inner.upgrade().ok_or(KernelError::Gone)?;
        inner.describe().await
    }
}

pub(super) struct Inner {
    pub(super) config: KernelConfig,
    pub(super) registry: CapabilityRegistry,
    pub(super) conn: Mutex<Option<Arc<Connection>>>,
    /// One cell at a time.
    pub(super) exec_turn: tokio::sync::Mutex<()>,
    pub(super) status: watch::Sender<KernelInfo>,
    pub(super) events: mpsc::UnboundedSender<KernelEvent>,
    pub(super) ids: AtomicU64,
    pub(super) generation: AtomicU64,
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
                        background: String::new(),
                    }),
                    ExecOutcome::Completed,
                    Instant::now(),
                    inner.config.after_a_restart(),
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
                files: Vec::new(),
                phase: CellPhase::Queued,
            });
        }
        let started = Instant::now();
        inner.emit(KernelEvent::CellStarted { exec_id: id });
        inner.set_status(&conn, KernelStatus::Busy);
        conn.send(&HostMessage::Execute { id, code });

        let result = match conn.await_result(&mut rx, timeout).await {
            Some(done) => finish(
                id,
                done,
                ExecOutcome::Completed,
                started,
                inner.config.after_a_restart(),
            ),
            None => {
                tracing::info!(id, ?timeout, "cell timed out; interrupting");
                conn.interrupt();
                match conn
                    .await_result(&mut rx, inner.config.interrupt_grace)
                    .await
                {
                    Some(done) => {
                        let mut result = finish(
                            id,
                            done,
                            ExecOutcome::Completed,
                            started,
                            inner.config.after_a_restart(),
                        );
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
                    None => {
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
    /// Returns false when no cell is running. Asked for before the driver
    /// has begun the cell, it is sent once the cell reports `started`.
    pub fn interrupt(&self) -> bool {
        let conn = lock(&self.inner.conn).clone();
        conn.is_some_and(|conn| conn.interrupt())
    }

    /// Kills the kernel's process group under a running cell that ignored
    /// SIGINT (the user pressed Ctrl+C again): the cell ends as died, and
    /// the next cell starts a fresh kernel, which loads the kept variables
    /// back. False when no cell runs.
    pub fn stop_running(&self) -> bool {
        let conn = lock(&self.inner.conn).clone();
        conn.is_some_and(|conn| conn.kill_under_cell())
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

    pub(super) fn emit(&self, event: KernelEvent) {
        let _ = self.events.send(event);
    }

    /// Status changes from an old (replaced) kernel are ignored.
    fn set_status(&self, conn: &Connection, status: KernelStatus) {
        if conn.generation != self.generation.load(Ordering::SeqCst) {
            return;
        }
        self.publish_status(status, None);
    }

    pub(super) fn publish_status(&self, status: KernelStatus, ready: Option<(String, u32)>) {
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
        // Always the configured interpreter (behind its shim, asked once by
        // the host): the kernel is data, not authority, so nothing it
        // reports may choose what runs next.
        let python = interpreter::resolve(
            &self.config.python,
            &self.config.workspace,
            self.config.pre_spawn.as_ref(),
        )
        .await;
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
            driver,
        } = spawned;
        let conn = Arc::new(Connection {
            generation,
            pid,
            out,
            pending: Arc::new(Mutex::new(Pending::default())),
            exited,
            _driver: driver,
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
            Ok(Ok(python)) => {
                *lock(&self.conn) = Some(Arc::clone(&conn));
                // The pid the host spawned and signals (with the sandbox,
                // its reaper), not the one the kernel names.
                self.publish_status(KernelStatus::Idle, Some((python, pid)));
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
        let (stdout, stderr, background) =
            match tokio::time::timeout(Duration::from_secs(3), rx).await {
                Ok(Ok(
                    Completion::Died {
                        stdout,
                        stderr,
                        background,
                        ..
                    }
                    | Completion::Finished {
                        stdout,
                        stderr,
                        background,
                        ..
                    },
                )) => (stdout, stderr, background),
                _ => (String::new(), String::new(), String::new()),
            };
        drop(conn);
        let restart = self.spawn_connection().await;
        let mut message = format!(
            "cell timed out after {} and did not stop when interrupted: kernel restarted — {}",
            seconds(timeout),
            self.config.after_a_restart()
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
        result.background = background;
        result.duration = started.elapsed();
        result
    }

    async fn describe(&self) -> Result<RuntimeState, KernelError> {
        let conn = lock(&self.conn).clone();
        let Some(conn) = conn else {
            return Ok(RuntimeState::dead());
        };
        // A delta on a listing we lost is answered with `None`: the listing
        // is forgotten then, so the second ask gets a whole one.
        for _ in 0..2 {
            let id = self.next_id();
            let (tx, rx) = oneshot::channel();
            let since = {
                let mut pending = lock(&conn.pending);
                if pending.dead.is_some() {
                    return Ok(RuntimeState::dead());
                }
                pending.describes.insert(id, tx);
                pending.listing.epoch()
            };
            conn.send(&HostMessage::Describe { id, since });
            match tokio::time::timeout(self.config.describe_timeout, rx).await {
                Ok(Ok(Some(state))) => return Ok(state),
                Ok(Ok(None)) => continue,
                Ok(Err(_)) => return Ok(RuntimeState::dead()),
                Err(_) => {
                    lock(&conn.pending).describes.remove(&id);
                    return Err(KernelError::DescribeTimeout(self.config.describe_timeout));
                }
            }
        }
        Err(KernelError::ListingOutOfStep)
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

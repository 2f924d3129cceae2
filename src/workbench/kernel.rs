//! The kernel as a service of the workbench: one task owns the queue of
//! cells, runs them one at a time on the [`CodeRuntime`], and turns the
//! kernel's events into `AppEvent`s tagged with *our* cell ids.
//!
//! Every cell goes through here — `%py` cells typed by the user and the
//! agent's `code_action` calls alike — so the conversation shows each one
//! with its output as it streams, and interrupts reach whatever is running.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::kernel::{CodeRuntime, ExecResult, KernelEvent, KernelInfo, RuntimeState, StreamName};
use crate::workbench::cell_owner::CellOwner;
use crate::workbench::event::{AppEvent, AppEventSender};

/// Who asked for a cell: the conversation labels them differently, the
/// user's own cells have no timeout, and approvals trust only the user's
/// (see [`CellOwner`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellOrigin {
    /// `%py` in the composer.
    User,
    /// A `code_action` tool call of the model.
    Agent,
}

impl CellOrigin {
    /// The timeout a cell gets when its caller gives none. The user's own
    /// cells run until they finish or the user presses Ctrl+C (tokio treats
    /// a deadline past the end of time as none); the model's get the
    /// kernel's configured default (60 s).
    fn default_timeout(self) -> Option<Duration> {
        match self {
            CellOrigin::User => Some(Duration::MAX),
            CellOrigin::Agent => None,
        }
    }
}

/// What the kernel service tells the UI loop.
#[derive(Debug)]
pub enum KernelUpdate {
    /// A cell joined the queue (the conversation shows it at once).
    Queued {
        cell_id: u64,
        code: String,
        origin: CellOrigin,
    },
    Output {
        cell_id: u64,
        stream: StreamName,
        text: String,
    },
    /// The cell ended. `result.duration` is its run time: the kernel's
    /// measure less `waited`, the time it spent blocked on the user's
    /// answers to the questions it asked.
    Finished {
        cell_id: u64,
        result: Box<ExecResult>,
        waited: Duration,
    },
    Status(KernelInfo),
    State(RuntimeState),
    /// The kernel was restarted and its variables are gone.
    Restarted {
        reason: String,
    },
}

enum Request {
    Execute(Job),
    Interrupt,
    Stop,
}

struct Job {
    cell_id: u64,
    origin: CellOrigin,
    code: String,
    timeout: Option<Duration>,
    reply: Option<oneshot::Sender<ExecResult>>,
}

/// A cheap handle for queueing cells and interrupting them. Sending never
/// blocks, so the UI loop can call it from `update`.
#[derive(Clone)]
pub struct KernelClient {
    requests: mpsc::UnboundedSender<Request>,
    app: AppEventSender,
    runtime: CodeRuntime,
}

/// Cell ids are unique in the process, not per kernel: after the kernel is
/// replaced (e.g. a new approval mode), a late update from the old one can
/// never land in a new cell that happens to have the same number.
static NEXT_CELL: AtomicU64 = AtomicU64::new(0);

impl KernelClient {
    /// Queues a cell; the returned receiver gets its result (the agent
    /// awaits it, the UI ignores it and follows the `KernelUpdate`s).
    pub fn execute(
        &self,
        code: String,
        origin: CellOrigin,
        timeout: Option<Duration>,
    ) -> (u64, oneshot::Receiver<ExecResult>) {
        let cell_id = NEXT_CELL.fetch_add(1, Ordering::Relaxed) + 1;
        let (reply, rx) = oneshot::channel();
        let _ = self.app.send(AppEvent::Kernel(KernelUpdate::Queued {
            cell_id,
            code: code.clone(),
            origin,
        }));
        let _ = self.requests.send(Request::Execute(Job {
            cell_id,
            origin,
            code,
            timeout: timeout.or(origin.default_timeout()),
            reply: Some(reply),
        }));
        (cell_id, rx)
    }

    /// SIGINT to the running cell (variables are kept).
    pub fn interrupt(&self) {
        let _ = self.requests.send(Request::Interrupt);
    }

    /// Kills the kernel under a cell that ignored SIGINT
    /// (`CodeRuntime::stop_running`).
    pub fn stop(&self) {
        let _ = self.requests.send(Request::Stop);
    }

    /// The runtime itself, for state queries (`describe`) that must not
    /// wait behind the cell queue.
    pub fn runtime(&self) -> &CodeRuntime {
        &self.runtime
    }
}

/// Starts the service task; the kernel process itself is started at once so
/// the first cell does not pay for it. `owner` is kept up to date with
/// the cell the kernel runs and who queued it (the approval broker's).
pub fn spawn(
    runtime: CodeRuntime,
    kernel_events: mpsc::UnboundedReceiver<KernelEvent>,
    app: AppEventSender,
    owner: CellOwner,
) -> KernelClient {
    let (requests, requests_rx) = mpsc::unbounded_channel();
    let client = KernelClient {
        requests,
        app: app.clone(),
        runtime: runtime.clone(),
    };
    let starter = runtime.clone();
    tokio::spawn(async move {
        if let Err(error) = starter.start().await {
            tracing::warn!(%error, "kernel did not start");
        }
    });
    tokio::spawn(serve(runtime, kernel_events, requests_rx, app, owner));
    client
}

struct Running {
    cell_id: u64,
    reply: Option<oneshot::Sender<ExecResult>>,
    result: BoxFuture<'static, ExecResult>,
}

async fn serve(
    runtime: CodeRuntime,
    mut kernel_events: mpsc::UnboundedReceiver<KernelEvent>,
    mut requests: mpsc::UnboundedReceiver<Request>,
    app: AppEventSender,
    owner: CellOwner,
) {
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut running: Option<Running> = None;
    let send = |update: KernelUpdate| {
        let _ = app.send(AppEvent::Kernel(update));
    };
    loop {
        if running.is_none()
            && let Some(job) = queue.pop_front()
        {
            let rt = runtime.clone();
            // Known before the kernel sees the code, so every request the
            // cell makes finds it.
            owner.start(job.cell_id, job.origin, &job.code);
            running = Some(Running {
                cell_id: job.cell_id,
                reply: job.reply,
                result: Box::pin(async move { rt.execute(&job.code, job.timeout).await }),
            });
        }
        let current = running.as_ref().map(|r| r.cell_id);
        tokio::select! {
            request = requests.recv() => match request {
                Some(Request::Execute(job)) => queue.push_back(job),
                Some(Request::Interrupt) => {
                    runtime.interrupt();
                }
                Some(Request::Stop) => {
                    runtime.stop_running();
                }
                None => break,
            },
            Some(event) = kernel_events.recv() => forward(event, current, &send),
            result = poll_running(&mut running), if running.is_some() => {
                // Output the kernel sent before its result is already queued:
                // deliver it before saying the cell finished.
                while let Ok(event) = kernel_events.try_recv() {
                    forward(event, current, &send);
                }
                if let Some(done) = running.take() {
                    let waited = owner.finish(done.cell_id);
                    let mut result = result;
                    result.duration = result.duration.saturating_sub(waited);
                    if let Some(reply) = done.reply {
                        let _ = reply.send(result.clone());
                    }
                    send(KernelUpdate::Finished {
                        cell_id: done.cell_id,
                        result: Box::new(result),
                        waited,
                    });
                }
            }
        }
    }
}

async fn poll_running(running: &mut Option<Running>) -> ExecResult {
    match running {
        Some(r) => (&mut r.result).await,
        None => std::future::pending().await,
    }
}

fn forward(event: KernelEvent, current: Option<u64>, send: &impl Fn(KernelUpdate)) {
    match event {
        KernelEvent::CellStarted { .. } => {}
        KernelEvent::Stream {
            exec_id,
            stream,
            text,
        } => match (exec_id, current) {
            (Some(_), Some(cell_id)) => send(KernelUpdate::Output {
                cell_id,
                stream,
                text,
            }),
            // Background output (between cells, or a thread an earlier
            // cell started): never pinned on a cell as its own; it comes
            // labelled with the next cell's result (`ExecResult::background`).
            _ => tracing::info!(?stream, %text, "background output from the kernel"),
        },
        KernelEvent::Status(info) => send(KernelUpdate::Status(info)),
        KernelEvent::State(state) => send(KernelUpdate::State(state)),
        KernelEvent::Restarted { reason } => send(KernelUpdate::Restarted { reason }),
    }
}

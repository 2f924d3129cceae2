//! One running kernel process as the runtime sees it: the frames going to
//! it, the calls waiting on it, and the task that reads its frames and
//! reports its death.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use crate::process_group::signal_group;

use super::capability::CallContext;
use super::driver::DriverDir;
use super::events::KernelEvent;
use super::framing::LineReader;
use super::listing::Listing;
use super::lock;
use super::output::CappedText;
use super::protocol::{
    HostMessage, KernelMessage, ReplyError, ResultFrame, StreamName, parse_kernel_line,
};
use super::result::FileChanged;
use super::result::{ExecOutcome, ExecResult};
use super::runtime::{Inner, RuntimeStateHandle};
use super::state::RuntimeState;
use super::status::KernelStatus;

/// Background output kept for the next result: head and tail bytes.
const BACKGROUND_HEAD: usize = 64 << 10;
const BACKGROUND_TAIL: usize = 16 << 10;

/// Largest kernel→host frame accepted. The driver is told (it refuses a
/// capability call whose arguments would not fit, at once and clearly).
pub(super) const MAX_FRAME: usize = 16 << 20;

/// One running kernel process.
pub(super) struct Connection {
    pub(super) generation: u64,
    pub(super) pid: u32,
    pub(super) out: mpsc::UnboundedSender<Vec<u8>>,
    pub(super) pending: Arc<Mutex<Pending>>,
    pub(super) exited: watch::Receiver<Option<String>>,
    /// The files this kernel runs; removed with the connection.
    pub(super) _driver: DriverDir,
}

#[derive(Default)]
pub(super) struct Pending {
    pub(super) exec: Option<PendingExec>,
    /// Describe callers by request id; `None` when the answer was a delta
    /// on a listing we no longer hold (ask again for a whole one).
    pub(super) describes: HashMap<u64, oneshot::Sender<Option<RuntimeState>>>,
    /// The variable listing as of the last `state` frame.
    pub(super) listing: Listing,
    /// Capability calls in flight, so a cell that gives up (interrupt,
    /// timeout) also stops its call: an approval answered later must not
    /// run a command nobody waits for.
    pub(super) calls: HashMap<u64, tokio::task::AbortHandle>,
    /// Set when the process is gone.
    pub(super) dead: Option<String>,
    /// Background output (`stream` frames with no cell: written between
    /// cells, or by a thread an earlier cell started) not yet reported; the
    /// next cell's result carries it as `background`.
    pub(super) background: Option<CappedText>,
}

impl Pending {
    /// The background output received so far, handed to one result.
    pub(super) fn take_background(&mut self) -> String {
        self.background
            .take()
            .map(CappedText::finish)
            .unwrap_or_default()
    }
}

pub(super) struct PendingExec {
    pub(super) id: u64,
    pub(super) done: oneshot::Sender<Completion>,
    pub(super) stdout: CappedText,
    pub(super) stderr: CappedText,
    /// What its `fs.write`/`fs.edit` calls changed.
    pub(super) files: Vec<FileChanged>,
    pub(super) phase: CellPhase,
}

/// Where a cell is, for interrupts. Two races lose a SIGINT: one that
/// reaches the driver before the cell's `started` frame finds it idle (so
/// an interrupt asked for earlier waits for that frame), and one that
/// lands between CPython's last signal check and a blocking call such as
/// `time.sleep` is left pending until the call returns. For that one the
/// kernel is woken with `WAKE` every `INTERRUPT_RESEND`, at most
/// `MAX_WAKES` times, until the handler's `interrupted` frame says the
/// SIGINT got through. The wake's handler does nothing but end the
/// blocking call, so CPython runs the pending SIGINT handler then; it never
/// raises itself, so it cannot cut into the cell's own `except
/// KeyboardInterrupt:` cleanup, and a cell with a SIGINT handler of its
/// own sees one SIGINT per Ctrl+C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CellPhase {
    /// Sent, not yet reported running.
    Queued,
    /// Sent, and an interrupt is waiting for its `started` frame.
    QueuedInterrupted,
    /// Reported running: a SIGINT now raises in the cell.
    Running,
    /// SIGINT sent; its handler has not answered yet. `sent` is when the
    /// last signal (the SIGINT or a wake) went, `wakes` how many wakes.
    Interrupting { sent: Instant, wakes: u8 },
    /// The handler raised `KeyboardInterrupt` in the cell.
    Interrupted,
}

/// How long an unanswered SIGINT waits before the kernel is woken.
pub(super) const INTERRUPT_RESEND: Duration = Duration::from_millis(300);
/// Wakes per interrupt: enough for the race (the first ends it), few
/// enough not to pester a cell that handles SIGINT its own way.
const MAX_WAKES: u8 = 3;
/// The wake: ignored by default, so a child process of the cell that gets
/// it (it goes to the group, like the SIGINT) is not disturbed.
const WAKE: libc::c_int = libc::SIGURG;

pub(super) enum Completion {
    Finished {
        frame: ResultFrame,
        stdout: String,
        stderr: String,
        background: String,
        files: Vec<FileChanged>,
    },
    Died {
        reason: String,
        stdout: String,
        stderr: String,
        background: String,
    },
}

impl Connection {
    pub(super) fn send(&self, msg: &HostMessage<'_>) -> bool {
        self.out.send(msg.to_line()).is_ok()
    }

    /// SIGINT to the cell that runs, or held until it reports `started`.
    /// False when no cell waits for its result. (Asked again, e.g. a second
    /// Ctrl+C for a cell that caught the first, it is sent again.)
    pub(super) fn interrupt(&self) -> bool {
        let mut pending = lock(&self.pending);
        let Some(exec) = pending.exec.as_mut() else {
            return false;
        };
        match exec.phase {
            CellPhase::Queued | CellPhase::QueuedInterrupted => {
                exec.phase = CellPhase::QueuedInterrupted;
                self.exited.borrow().is_none()
            }
            CellPhase::Running | CellPhase::Interrupting { .. } | CellPhase::Interrupted => {
                exec.phase = CellPhase::Interrupting {
                    sent: Instant::now(),
                    wakes: 0,
                };
                self.signal(libc::SIGINT)
            }
        }
    }

    /// Wakes the kernel when its SIGINT went unanswered for
    /// `INTERRUPT_RESEND` (see `CellPhase`). Called while a result is
    /// awaited.
    pub(super) fn wake_unanswered_interrupt(&self) {
        let mut pending = lock(&self.pending);
        if let Some(exec) = pending.exec.as_mut()
            && let CellPhase::Interrupting { sent, wakes } = exec.phase
            && wakes < MAX_WAKES
            && sent.elapsed() >= INTERRUPT_RESEND
        {
            tracing::debug!(id = exec.id, wakes, "SIGINT unanswered; waking the kernel");
            exec.phase = CellPhase::Interrupting {
                sent: Instant::now(),
                wakes: wakes + 1,
            };
            self.signal(WAKE);
        }
    }

    /// Waits up to `limit` for the cell's result, waking the kernel for an
    /// unanswered interrupt meanwhile; `None` when the time ran out.
    pub(super) async fn await_result(
        &self,
        done: &mut oneshot::Receiver<Completion>,
        limit: Duration,
    ) -> Option<Result<Completion, oneshot::error::RecvError>> {
        // No deadline for a limit past what an instant holds ("no timeout").
        let deadline = tokio::time::Instant::now().checked_add(limit);
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(expired);
        loop {
            tokio::select! {
                result = &mut *done => return Some(result),
                () = &mut expired => return None,
                () = tokio::time::sleep(INTERRUPT_RESEND) => self.wake_unanswered_interrupt(),
            }
        }
    }

    /// SIGKILL to the kernel's group while a cell waits for its result.
    pub(super) fn kill_under_cell(&self) -> bool {
        let running = lock(&self.pending).exec.is_some();
        running && self.signal(libc::SIGKILL)
    }

    pub(super) fn is_alive(&self) -> bool {
        self.exited.borrow().is_none() && lock(&self.pending).dead.is_none()
    }

    pub(super) fn signal(&self, sig: i32) -> bool {
        self.exited.borrow().is_none() && signal_group(self.pid, sig)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

pub(super) fn finish(
    id: u64,
    done: Result<Completion, oneshot::error::RecvError>,
    outcome: ExecOutcome,
    started: Instant,
    after_a_restart: &str,
) -> ExecResult {
    match done {
        Ok(Completion::Finished {
            frame,
            stdout,
            stderr,
            background,
            files,
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
                background,
                value_repr: frame.value_repr,
                error: frame.error,
                duration,
                outcome: if interrupted {
                    ExecOutcome::Interrupted
                } else {
                    outcome
                },
                files_changed: files,
            }
        }
        Ok(Completion::Died {
            reason,
            stdout,
            stderr,
            background,
        }) => {
            let mut result = ExecResult::failed(
                id,
                "KernelDied",
                format!(
                    "the kernel died ({reason}); a fresh kernel starts on the next execute — {after_a_restart}"
                ),
                ExecOutcome::KernelDied { reason },
            );
            result.stdout = stdout;
            result.stderr = stderr;
            result.background = background;
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

pub(super) struct ReaderParts {
    pub(super) generation: u64,
    pub(super) pid: u32,
    pub(super) pending: Arc<Mutex<Pending>>,
    pub(super) out: mpsc::UnboundedSender<Vec<u8>>,
    pub(super) exited: watch::Receiver<Option<String>>,
    pub(super) stderr_tail: Arc<Mutex<String>>,
}

/// Reads the driver's frames until the process goes away, then reports the
/// death to whoever is waiting.
pub(super) async fn read_frames(
    runtime: Weak<Inner>,
    parts: ReaderParts,
    stdout: tokio::process::ChildStdout,
    ready: oneshot::Sender<String>,
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
    ready: &mut Option<oneshot::Sender<String>>,
) {
    match msg {
        // The pid it names is the kernel's own word (2, inside the
        // sandbox's PID namespace): the host keeps the one it spawned.
        KernelMessage::Ready { python, .. } => {
            // Only the first `ready` of a start counts; a cell can write
            // frames too, and a later one changes nothing.
            if let Some(ready) = ready.take() {
                let _ = ready.send(python);
            }
        }
        KernelMessage::Stream { id, name, text } => {
            {
                let mut pending = lock(&parts.pending);
                match id {
                    None => pending
                        .background
                        .get_or_insert_with(|| CappedText::new(BACKGROUND_HEAD, BACKGROUND_TAIL))
                        .push(&text),
                    Some(id) => {
                        if let Some(exec) = pending.exec.as_mut().filter(|e| e.id == id) {
                            match name {
                                StreamName::Stdout => exec.stdout.push(&text),
                                StreamName::Stderr => exec.stderr.push(&text),
                            }
                        }
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
                    Some(exec) if exec.id == frame.id => pending
                        .exec
                        .take()
                        .map(|exec| (exec, pending.take_background())),
                    _ => None,
                }
            };
            match exec {
                Some((exec, background)) => {
                    let _ = exec.done.send(Completion::Finished {
                        frame,
                        stdout: exec.stdout.finish(),
                        stderr: exec.stderr.finish(),
                        background,
                        files: exec.files,
                    });
                }
                None => tracing::debug!(id = frame.id, "result for a cell nobody waits for"),
            }
        }
        KernelMessage::State { id, update } => {
            // Applied here, in arrival order, whether or not anyone still
            // waits: the next delta is based on it.
            let (waiter, state) = {
                let mut pending = lock(&parts.pending);
                let state = pending.listing.apply(update).ok();
                (id.and_then(|id| pending.describes.remove(&id)), state)
            };
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
            let pending = Arc::clone(&parts.pending);
            // A file the cell changed goes on its result (before the reply
            // lets the cell go on, so it is there when the cell ends).
            let changes_files =
                cap == "fs" && matches!(action.as_str(), "write" | "edit" | "apply_patch");
            // Held until the handle is stored, so the task's own removal
            // always comes after the insert.
            let mut registered = lock(&parts.pending);
            let task = tokio::spawn(async move {
                let reply = match call.await {
                    Ok(value) => {
                        if changes_files
                            && let Some(exec) = lock(&pending).exec.as_mut()
                            && Some(exec.id) == exec_id
                        {
                            for change in FileChanged::all_from_reply(&value) {
                                change.add_to(&mut exec.files);
                            }
                        }
                        HostMessage::Reply {
                            id,
                            ok: true,
                            value: Some(value),
                            error: None,
                        }
                    }
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
                lock(&pending).calls.remove(&id);
            });
            registered.calls.insert(id, task.abort_handle());
        }
        KernelMessage::Started { id } => {
            let mut pending = lock(&parts.pending);
            if let Some(exec) = pending.exec.as_mut().filter(|e| e.id == id) {
                if exec.phase == CellPhase::QueuedInterrupted {
                    tracing::debug!(id, "cell started: sending the interrupt it was held for");
                    exec.phase = CellPhase::Interrupting {
                        sent: Instant::now(),
                        wakes: 0,
                    };
                    signal_group(parts.pid, libc::SIGINT);
                } else {
                    exec.phase = CellPhase::Running;
                }
            }
        }
        KernelMessage::Interrupted { id } => {
            if let Some(exec) = lock(&parts.pending).exec.as_mut().filter(|e| e.id == id) {
                exec.phase = CellPhase::Interrupted;
            }
        }
        KernelMessage::Cancel { id } => {
            if let Some(call) = lock(&parts.pending).calls.remove(&id) {
                tracing::debug!(id, "capability call cancelled by its cell");
                call.abort();
            }
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
        signal_group(parts.pid, libc::SIGKILL);
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
        for (_, call) in pending.calls.drain() {
            call.abort();
        }
        pending
            .exec
            .take()
            .map(|exec| (exec, pending.take_background()))
    };
    if let Some((exec, background)) = exec {
        let _ = exec.done.send(Completion::Died {
            reason: reason.clone(),
            stdout: exec.stdout.finish(),
            stderr: exec.stderr.finish(),
            background,
        });
    }
    if let Some(inner) = runtime.upgrade()
        && inner.generation.load(Ordering::SeqCst) == parts.generation
    {
        inner.status.send_modify(|info| info.pid = None);
        inner.publish_status(KernelStatus::Dead(reason), None);
    }
}

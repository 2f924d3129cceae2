//! The event loop: one task owns `AppState`, selects over terminal input,
//! background events and frame deadlines, and redraws only after a change.

use std::io;
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::terminal::TerminalGuard;
use crate::app::state::AppState;
use crate::app::update::{self, Command};
use crate::diagnostics::DiagnosticsService;
use crate::kernel::caps::{DirtyPaths, FsWritten};
use crate::theme::Theme;
use crate::ui;
use crate::workbench::Workbench;
use crate::workbench::event::{self, AppEvent, AppEventSender};
use crate::workbench::recovery_mirror::RecoveryMirror;
use crate::workbench::snapshot;

/// Quiet time after the last scene change before the snapshot is rebuilt.
const SNAPSHOT_DEBOUNCE: Duration = Duration::from_millis(150);
/// How long a SIGTERM waits for the loop to quit cleanly before exiting.
const TERMINATE_GRACE: Duration = Duration::from_secs(3);
/// Upper bound of queued events applied before a frame is forced out.
const MAX_BATCH: usize = 512;

/// What the caller prints once the terminal is back.
#[derive(Debug)]
pub struct Exit {
    /// The session this run wrote to, if any (the resume line).
    pub session: Option<String>,
    /// The conversation as `[ui] on_quit` asks (`workbench::quit_transcript`),
    /// sanitized; empty for nothing.
    pub transcript: String,
}

/// Runs the workbench until the user quits. The terminal is restored by the
/// guard whatever happens; what to print after it comes back is returned.
pub async fn run(mut state: AppState, theme: Theme) -> anyhow::Result<Exit> {
    let mut guard = TerminalGuard::enter()?;
    let (tx, mut rx) = event::channel();
    if let Some(highlighter) = &state.highlighter {
        let tx = tx.clone();
        highlighter.wake_when_a_pass_is_done(move || {
            let _ = tx.send(AppEvent::HighlightReady);
        });
    }
    let _workspace = crate::app::workspace_services::start(&mut state, &tx);
    // Before any language server: a workspace never answered for is asked
    // about (over the recovery question, which waits for the answer).
    crate::app::trust::start(&mut state, crate::trust::TrustStore::from_env());
    crate::workbench::hooks::start(&mut state.workbench, &tx);
    let memory = crate::workbench::memory::WorkspaceMemory::of(state.workbench.workspace_root());
    crate::app::memory::restore(&mut state, &memory);
    let recovery = state
        .workbench
        .editors()
        .recovery_dir
        .is_some()
        .then(|| state.workbench.editors().mirror.clone());
    if let Some(mirror) = &recovery {
        mirror.install_panic_hook();
    }
    spawn_signal_watcher(tx.clone(), recovery);
    let checks = crate::workbench::safety::checks_confinement(&mut state.workbench);
    let diagnostics = start_diagnostics(&state, &tx, checks);
    crate::workbench::diagnostics::attach(&mut state.workbench, diagnostics);
    state.workbench.agent_mut().events = Some(tx.clone());
    let fs_links = link_fs_to_editors(&mut state.workbench, &tx);
    crate::workbench::safety::start(&mut state.workbench, &tx, Some(fs_links));

    let mut input = EventStream::new();
    let mut needs_draw = true;
    let mut frame_model = ui::FrameModel::default();
    let mut pacer = super::pacing::FramePacer::new(Instant::now());
    let mut snapshots = SnapshotScheduler::default();
    let mut last_spin = Instant::now();
    let mut typing = super::typing::TypingGuard::default();

    while !state.should_quit {
        if needs_draw && Instant::now() >= pacer.due() {
            state.size = guard.terminal.size()?;
            update::before_frame(&mut state);
            crate::app::frame::prepare(&mut state, &mut frame_model, &theme);
            guard
                .terminal
                .draw(|frame| crate::app::frame::render(&state, &frame_model, &theme, frame))?;
            let drawn_at = Instant::now();
            pacer.drawn(drawn_at);
            typing.drawn(
                crate::app::layers::shown_question(&state),
                drawn_at.into_std(),
            );
            // Highlighting that did not fit in this frame continues in
            // the next one; it stops once the visible lines are done.
            needs_draw = state.workbench.editors().needs_more_work();
        }
        // A pending frame waits out the rest of its interval while input is
        // still applied (coalescing); with nothing pending no timer runs, so
        // an idle workbench never wakes up.
        let frame_due = needs_draw.then_some(pacer.due());
        snapshots.note(&state);
        // The spinner schedules its own frames, and only while a turn runs.
        let spin_due = state
            .workbench
            .agent()
            .busy
            .then_some(last_spin + crate::workbench::agent::SPINNER_INTERVAL);
        // Armed only while a dirty buffer has unsaved recovery work.
        let recovery_due = state
            .workbench
            .editors()
            .recovery_due_at()
            .map(Instant::from_std);
        let step = tokio::select! {
            Some(ev) = rx.recv() => Step::App(ev),
            Some(ev) = input.next() => Step::Term(ev?),
            _ = sleep_until_due(frame_due), if frame_due.is_some() => continue,
            _ = sleep_until_due(spin_due), if spin_due.is_some() => {
                state.workbench.agent_mut().spinner = state.workbench.agent_mut().spinner.wrapping_add(1);
                last_spin = Instant::now();
                needs_draw = true;
                continue;
            }
            _ = sleep_until_due(snapshots.due), if snapshots.due.is_some() => {
                snapshots.start(&state, &tx);
                continue;
            }
            _ = sleep_until_due(recovery_due), if recovery_due.is_some() => Step::App(AppEvent::RecoveryDue),
            else => break,
        };
        if let Step::Term(Event::Key(_)) = &step {
            state.typing_through = typing.key(std::time::Instant::now());
        }
        let answers_input = matches!(
            step,
            Step::Term(Event::Key(_) | Event::Paste(_) | Event::Resize(..))
        );
        let redraw = apply(&mut guard, &mut state, step)?;
        if redraw && answers_input {
            pacer.input();
        }
        needs_draw |= redraw;
        state.typing_through = false;
        if state.should_quit
            && let Some(diagnostics) = &state.workbench.diagnostic_sources().client
        {
            // Language servers get `shutdown`/`exit` (bounded wait) on quit.
            diagnostics.shutdown().await;
        }
        // Background events queued meanwhile are applied before the frame.
        // (Terminal input is not drained the same way: polling crossterm's
        // stream with a throwaway waker would lose its wake-up.)
        for _ in 0..MAX_BATCH {
            let Ok(ev) = rx.try_recv() else { break };
            needs_draw |= apply(&mut guard, &mut state, Step::App(ev))?;
        }
    }
    crate::app::memory::keep(&state, &memory);
    let session = crate::app::agent::session_at_exit(&mut state).await;
    keep_variables_at_exit(&state).await;
    let transcript = crate::workbench::quit_transcript::text(
        state.workbench.transcript(),
        state.workbench.settings().on_quit,
    );
    // The alternate screen is left before the caller prints.
    drop(guard);
    Ok(Exit {
        session,
        transcript,
    })
}

/// The kernel stops between cells (its last cell's variables saved), and
/// the kept variables reach the disk before the process exits; bounded,
/// so quitting never hangs on it.
async fn keep_variables_at_exit(state: &AppState) {
    let services = state.workbench.services();
    let Some(store) = services
        .kernel_launcher
        .as_ref()
        .and_then(|launcher| launcher.kept_variables())
    else {
        return;
    };
    if let Some(kernel) = &services.kernel {
        kernel.runtime().shutdown().await;
    }
    let store = store.clone();
    let flushed = tokio::task::spawn_blocking(move || store.flush(Duration::from_secs(2))).await;
    if !matches!(flushed, Ok(true)) {
        tracing::warn!("kept variables: not all written before exit");
    }
}

/// Rebuilds the snapshot when the scene changed, debounced so a burst of
/// keystrokes costs one build, and off the UI loop (it reads files).
#[derive(Default)]
struct SnapshotScheduler {
    built_key: Option<u64>,
    due: Option<Instant>,
}

impl SnapshotScheduler {
    fn note(&mut self, state: &AppState) {
        let key = crate::app::snapshot::scene_key(state);
        if self.built_key != Some(key) && self.due.is_none() {
            self.due = Some(Instant::now() + SNAPSHOT_DEBOUNCE);
        }
    }

    fn start(&mut self, state: &AppState, tx: &AppEventSender) {
        self.due = None;
        let request = crate::app::snapshot::request(state);
        self.built_key = Some(request.scene_key);
        let tx = tx.clone();
        tokio::task::spawn_blocking(move || {
            let view = snapshot::build(request);
            let _ = tx.send(AppEvent::SnapshotBuilt(view));
        });
    }
}

async fn sleep_until_due(due: Option<Instant>) {
    if let Some(due) = due {
        tokio::time::sleep_until(due).await;
    }
}

/// Starts the diagnostics service (language servers start lazily, on the
/// first file of their language) and forwards its events to the loop.
fn start_diagnostics(
    state: &AppState,
    tx: &AppEventSender,
    checks: crate::sandbox::Confinement,
) -> DiagnosticsService {
    let (events, mut events_rx) = tokio::sync::mpsc::unbounded_channel();
    let service = DiagnosticsService::start(
        state.workbench.settings().diagnostics.clone(),
        state.workbench.workspace_root().clone(),
        events,
        checks,
        state.workbench.trust().trust.is_trusted(),
    );
    let tx = tx.clone();
    tokio::spawn(async move {
        while let Some(event) = events_rx.recv().await {
            if tx.send(AppEvent::Diagnostics(event)).is_err() {
                break;
            }
        }
    });
    service
}

/// The kernel's `fs.write` refuses paths with unsaved edits (the UI
/// publishes them into a watch) and announces its writes so open buffers
/// reload.
fn link_fs_to_editors(
    workbench: &mut Workbench,
    tx: &AppEventSender,
) -> crate::kernel_setup::FsLinks {
    let (dirty_tx, dirty_rx) = tokio::sync::watch::channel(DirtyPaths::default());
    let (written_tx, mut written_rx) = tokio::sync::mpsc::unbounded_channel::<FsWritten>();
    let forward = tx.clone();
    tokio::spawn(async move {
        while let Some(written) = written_rx.recv().await {
            if forward.send(AppEvent::FsWritten(written)).is_err() {
                break;
            }
        }
    });
    workbench.services_mut().dirty_paths = Some(dirty_tx);
    crate::kernel_setup::FsLinks {
        dirty: dirty_rx,
        written: written_tx,
        // The approval broker, once `safety::start` has made it.
        review: None,
    }
}

enum Step {
    Term(crossterm::event::Event),
    App(AppEvent),
}

/// Applies one step; returns whether a frame is needed.
fn apply(guard: &mut TerminalGuard, state: &mut AppState, step: Step) -> io::Result<bool> {
    let command = match step {
        Step::Term(ev) => update::handle_terminal_event(state, ev),
        Step::App(ev) => update::handle_app_event(state, ev),
    };
    match command {
        Command::None => Ok(false),
        Command::Clipboard(text) => {
            use std::io::Write;
            let out = guard.terminal.writer_mut();
            out.write_all(super::osc52::sequence(&text).as_bytes())?;
            out.flush()?;
            Ok(true)
        }
        Command::Redraw | Command::Quit => Ok(true),
        Command::FullRedraw => {
            guard.terminal.clear()?;
            Ok(true)
        }
        Command::Suspend => {
            guard.suspend()?;
            Ok(true)
        }
    }
}

/// SIGTERM becomes a clean quit, so `kill` restores the terminal. SIGHUP
/// means the terminal is gone: crossterm's reader can spin on a hung-up tty
/// without ever returning to the loop, so the process exits from here.
///
/// Both exits write recovery files from the mirror first (the SIGTERM path
/// only when the loop did not quit in time; a clean quit writes them from
/// the state).
fn spawn_signal_watcher(tx: AppEventSender, recovery: Option<RecoveryMirror>) {
    let write_recoveries = move || {
        if let Some(mirror) = &recovery {
            mirror.write_all();
        }
    };
    use tokio::signal::unix::{SignalKind, signal};
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            tracing::warn!("could not install SIGTERM/SIGHUP handlers");
            return;
        };
        tokio::select! {
            _ = term.recv() => {
                tracing::info!("SIGTERM: quitting");
                let _ = tx.send(AppEvent::Terminate);
                // If the loop is wedged and cannot act on it, do not linger.
                tokio::time::sleep(TERMINATE_GRACE).await;
                write_recoveries();
                std::process::exit(143);
            }
            _ = hup.recv() => {
                tracing::warn!("SIGHUP: the terminal hung up; exiting");
                write_recoveries();
                std::process::exit(129);
            }
        }
    });
}

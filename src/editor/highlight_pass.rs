//! The exact highlighting pass, off the UI thread.
//!
//! syntect parses strictly in order (the state before a line is the result
//! of every line above it), at ~20 000 lines/s: after a jump to the end of a
//! 1 000 000-line file the pass takes most of a minute. It runs here, on its
//! own thread, over a rope clone (shared chunks, not a copy), and sends the
//! parse state at every checkpoint line back through a channel; the UI
//! loop only records what has arrived and keeps painting the approximate
//! colours until the checkpoint at the view is there. Dropping the `Pass`
//! (an edit above its target, a reset, another target) cancels it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use ropey::Rope;
use syntect::highlighting::{Highlighter as ThemeHighlighter, Theme};
use syntect::parsing::SyntaxSet;

use super::highlight::{CHECKPOINT_STRIDE, State, highlight_line};

/// A parse state moved between the UI thread and a pass thread.
pub(super) struct Moved(pub(super) State);

// SAFETY: `State` is `!Send` only because syntect's onig backend keeps an
// `onig::Region` (raw pointers to capture offsets) in the parse state of a
// context with back-references. Each region owns that memory alone: `Clone`
// deep-copies it (`onig_region_copy`), `Drop` frees it, and nothing is
// shared or thread-local, so moving the value to another thread is sound.
// A `Moved` state is only ever moved, never shared.
unsafe impl Send for Moved {}

/// Asks the app for a frame (see `Highlighter::wake_when_a_pass_is_done`).
pub(crate) type Wake = Arc<dyn Fn() + Send + Sync>;

/// A running pass: parses from its start up to `target` (a checkpoint
/// line) and sends `(checkpoint index, state before that line)` in order.
pub(super) struct Pass {
    pub(super) target: usize,
    results: mpsc::Receiver<(usize, Moved)>,
    cancel: Arc<AtomicBool>,
}

/// What `Pass::take` found.
pub(super) enum Arrived {
    /// Checkpoints that arrived, in order; the pass is still running.
    Running(Vec<(usize, State)>),
    /// The last checkpoints: the pass is over.
    Finished(Vec<(usize, State)>),
}

impl Pass {
    /// Starts parsing `lines` at `line` in `state` up to `target`; `None`
    /// if no thread could be started (the view stays approximate).
    pub(super) fn start(
        syntaxes: Arc<SyntaxSet>,
        theme: Arc<Theme>,
        lines: Rope,
        line: usize,
        state: State,
        target: usize,
        wake: Option<Wake>,
    ) -> Option<Pass> {
        let (tx, results) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let job = Job {
            syntaxes,
            theme,
            lines,
            line,
            state: Moved(state),
            target,
            tx,
            cancel: Arc::clone(&cancel),
            wake,
        };
        let spawned = std::thread::Builder::new()
            .name("highlight".into())
            .spawn(move || {
                crate::background::lower_this_thread();
                job.run()
            });
        match spawned {
            Ok(_) => Some(Pass {
                target,
                results,
                cancel,
            }),
            Err(error) => {
                tracing::warn!(%error, "highlight: no thread for the exact pass");
                None
            }
        }
    }

    /// What has arrived so far, without waiting.
    pub(super) fn take(&self) -> Arrived {
        let mut got = Vec::new();
        loop {
            match self.results.try_recv() {
                Ok((k, Moved(state))) => got.push((k, state)),
                Err(mpsc::TryRecvError::Empty) => return Arrived::Running(got),
                Err(mpsc::TryRecvError::Disconnected) => return Arrived::Finished(got),
            }
        }
    }

    /// Everything the pass will send, waiting for it to end.
    pub(super) fn wait(&self) -> Vec<(usize, State)> {
        self.results
            .iter()
            .map(|(k, Moved(state))| (k, state))
            .collect()
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// One pass's whole input, moved to its thread.
struct Job {
    syntaxes: Arc<SyntaxSet>,
    theme: Arc<Theme>,
    lines: Rope,
    line: usize,
    state: Moved,
    target: usize,
    tx: mpsc::Sender<(usize, Moved)>,
    cancel: Arc<AtomicBool>,
    wake: Option<Wake>,
}

impl Job {
    fn run(self) {
        let theme = ThemeHighlighter::new(&self.theme);
        let Moved(mut state) = self.state;
        let mut line = self.line;
        let mut buf = String::new();
        loop {
            if line.is_multiple_of(CHECKPOINT_STRIDE)
                && self
                    .tx
                    .send((line / CHECKPOINT_STRIDE, Moved(state.clone())))
                    .is_err()
            {
                return; // the pass was dropped
            }
            if line >= self.target {
                // The checkpoint at the view is sent: the next frame shows
                // exact colours.
                if let Some(wake) = &self.wake {
                    wake();
                }
                return;
            }
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            highlight_line(
                &self.syntaxes,
                &theme,
                &mut state,
                &self.lines,
                line,
                &mut buf,
            );
            line += 1;
        }
    }
}

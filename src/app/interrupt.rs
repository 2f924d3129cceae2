//! Ctrl+C: interrupts the running cell (SIGINT: `KeyboardInterrupt`, the
//! variables stay), else cancels the model's turn. A cell can ignore SIGINT
//! (`signal.signal(SIGINT, SIG_IGN)`, a C extension's loop): a second
//! Ctrl+C at least [`ESCALATE_AFTER`] after the first stops it by killing
//! the kernel, which the next cell starts again with the kept variables.
//! Sooner, the second is one more SIGINT (a cell that caught the first).

use std::time::Duration;

use super::AppState;
use super::command::Command;

/// How long the first interrupt has to work before another Ctrl+C kills.
pub const ESCALATE_AFTER: Duration = Duration::from_secs(1);

pub fn pressed(state: &mut AppState) -> Command {
    let running = crate::workbench::cells::any_running(&state.workbench);
    let Some(kernel) = state
        .workbench
        .services()
        .kernel
        .clone()
        .filter(|_| running)
    else {
        state.interrupted = None;
        return Command::from_changed(crate::workbench::agent::cancel(&mut state.workbench));
    };
    let now = state.clock.now();
    match state.interrupted {
        Some(first) if now.duration_since(first) >= ESCALATE_AFTER => {
            kernel.stop();
            state.interrupted = None;
            state.workbench.notice(
                "The cell ignored Ctrl+C, so the kernel was stopped; the next cell starts it \
                 again with the kept variables.",
            );
            Command::Redraw
        }
        Some(_) => {
            kernel.interrupt();
            Command::None
        }
        None => {
            kernel.interrupt();
            state.interrupted = Some(now);
            // Short: the status bar shares its row with the kernel and
            // the mode, and a longer line was cut before its point.
            state.workbench.set_status("Ctrl+C again stops the kernel");
            Command::Redraw
        }
    }
}

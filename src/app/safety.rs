//! Approval modes as the TUI changes them: F4, `/approval`, the confirmation before `full`, and the kernel restart a mode change across `full` needs (it clears the inspector).

use crate::app::state::AppState;
use crate::overlays::Overlay;
use crate::overlays::confirm::Confirm;
use crate::sandbox::{ApprovalMode, effective_mode, fallback_notice};
use crate::workbench::{KernelView, Question};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells one `/approval full` question from the next.
static LEAVE_SANDBOX_ASKED: AtomicU64 = AtomicU64::new(0);

/// `/approval MODE` and the mode key. Crossing `full` restarts the kernel;
/// entering it is a question of its own ([`Question::LeaveSandbox`]),
/// leaving it is not.
pub(crate) fn set_mode(state: &mut AppState, requested: ApprovalMode) {
    let current = state.workbench.safety().mode;
    let (mode, fallback) = match &state.workbench.safety().sandbox {
        Some(sandbox) => (
            effective_mode(requested, sandbox),
            fallback_notice(requested, sandbox),
        ),
        None => (requested, None),
    };
    if let Some(text) = fallback {
        state.workbench.notice(&text);
    }
    if mode == current {
        state
            .workbench
            .notice(&format!("approval mode is already `{mode}`"));
        return;
    }
    if mode == ApprovalMode::Full {
        // Asked, never typed through: the question takes no key typed
        // before it was drawn (`Question::interrupts`).
        let asked = LEAVE_SANDBOX_ASKED.fetch_add(1, Ordering::Relaxed);
        state
            .overlays
            .push(Overlay::Confirm(Confirm::new(Question::LeaveSandbox {
                asked,
            })));
        return;
    }
    switch_mode(state, mode);
}

/// The answer to [`Question::LeaveSandbox`]: yes switches to `full`, any
/// other answer keeps the mode and says so.
pub(crate) fn answer_leave_sandbox(state: &mut AppState, yes: bool) {
    if yes {
        if state.workbench.safety().mode != ApprovalMode::Full {
            switch_mode(state, ApprovalMode::Full);
        }
    } else {
        let text = format!(
            "approval mode stays `{}`: the sandbox stays on",
            state.workbench.safety().mode
        );
        state.workbench.notice(&text);
    }
}

/// Switches to `mode` (not the current one): tells the broker, answers
/// what waits when the mode does not ask, restarts the kernel when the
/// sandbox comes or goes.
fn switch_mode(state: &mut AppState, mode: ApprovalMode) {
    let current = state.workbench.safety().mode;
    if mode == ApprovalMode::Auto
        && !state.workbench.safety().confined
        && state.workbench.services().kernel_launcher.is_some()
    {
        state.workbench.notice(
            "approval mode `auto` needs a sandboxed kernel, and this one is not; staying in `ask`",
        );
        return;
    }
    if let Some(broker) = &state.workbench.services().approvals {
        broker.set_mode(mode);
    }
    // Questions already waiting get the new mode's answer.
    if let Some(decision) = crate::app::approvals::mode_answer(mode) {
        state.approvals.answer_all(decision);
    }
    state.workbench.safety_mut().mode = mode;
    let restart = mode.sandboxed() != current.sandboxed();
    if restart {
        restart_kernel(state, mode);
    } else {
        state.workbench.notice(&format!(
            "approval mode: {}",
            state.workbench.safety().label()
        ));
    }
}

/// The mode key: `ask` ↔ `auto` (`full` is only ever chosen by name).
pub(crate) fn cycle_mode(state: &mut AppState) {
    let next = match state.workbench.safety().mode {
        ApprovalMode::Ask => ApprovalMode::Auto,
        _ => ApprovalMode::Ask,
    };
    set_mode(state, next);
}

/// `/approval` with no argument shows the mode; with one, sets it.
pub(crate) fn slash_command(state: &mut AppState, args: &str) {
    if args.trim().is_empty() {
        let text = format!(
            "approval mode: {}. Change it with /approval ask|review|auto|full|deny.",
            state.workbench.safety().label()
        );
        state.workbench.notice(&text);
        return;
    }
    match args.parse::<ApprovalMode>() {
        Ok(mode) => set_mode(state, mode),
        Err(error) => state.workbench.notice(&error.to_string()),
    }
}

fn restart_kernel(state: &mut AppState, mode: ApprovalMode) {
    if state.workbench.services().kernel_launcher.is_none() {
        state.workbench.safety_mut().confined =
            mode.sandboxed() && state.workbench.safety_mut().confined;
        state.workbench.notice(&format!(
            "approval mode: {} (no kernel to restart)",
            state.workbench.safety().label()
        ));
        return;
    }
    match relaunch_kernel(state, mode) {
        Ok(launch_notice) => {
            let text = format!(
                "approval mode: {} — {}",
                state.workbench.safety().label(),
                crate::workbench::cells::restart_notice(&state.workbench)
            );
            state.workbench.notice(&text);
            if let Some(text) = launch_notice {
                state.workbench.notice(&text);
            }
        }
        Err(error) => {
            let text = format!("the kernel could not be restarted: {error}");
            state.workbench.notice(&text);
        }
    }
}

/// Starts a new kernel in place of the old one (its variables are gone),
/// confined as `mode` says. `Ok` carries the launcher's own notice (a
/// sandbox that could not be set up, say); on `Err` the kernel is shown
/// dead. Without a launcher (tests, `--no-kernel`) nothing happens.
pub(crate) fn relaunch_kernel(
    state: &mut AppState,
    mode: ApprovalMode,
) -> Result<Option<String>, String> {
    let Some(launcher) = state.workbench.services().kernel_launcher.clone() else {
        return Err("no kernel is configured".into());
    };
    // Dropping the old client ends its service task, which kills the old
    // kernel's process group.
    state.workbench.services_mut().kernel = None;
    state.variables.rows.clear();
    *state.workbench.last_exec_id_mut() = None;
    match launcher.launch(mode) {
        Ok(launched) => {
            state.workbench.safety_mut().confined = launched.confined;
            state.workbench.safety_mut().kernel_sandbox = launched.sandbox;
            state.workbench.safety_mut().appeared_warned = false;
            state.workbench.services_mut().kernel = Some(launched.client);
            *state.workbench.kernel_mut() = KernelView::Starting;
            Ok(launched.notice)
        }
        Err(error) => {
            state.workbench.safety_mut().confined = false;
            *state.workbench.kernel_mut() = KernelView::Dead {
                reason: error.to_string(),
            };
            Err(error.to_string())
        }
    }
}

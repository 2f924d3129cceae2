//! What the kernel's cells do to the workbench: their output in the transcript, how they end, the kernel's view and its variables.

use crate::kernel::{ExecOutcome, ExecResult, KernelInfo, KernelStatus, RuntimeState};
use crate::workbench::Workbench;
use crate::workbench::transcript::{CellStatus, PaneEntry};
use crate::workbench::{KernelView, VariableRow};

pub(crate) fn cell_mut(workbench: &mut Workbench, cell_id: u64) -> Option<&mut PaneEntry> {
    workbench
        .transcript
        .edit_last_where(|m| m.cell.as_ref().is_some_and(|c| c.id == cell_id))
}

pub(crate) fn append_capped(text: &mut String, more: &str) {
    if text.len() >= MAX_CELL_OUTPUT {
        return;
    }
    let room = MAX_CELL_OUTPUT - text.len();
    if more.len() <= room {
        text.push_str(more);
    } else {
        let mut cut = room;
        while !more.is_char_boundary(cut) {
            cut -= 1;
        }
        text.push_str(&more[..cut]);
        text.push_str("\n… output cut here (see the kernel's variables for the rest)\n");
    }
}

/// Cell `cell_id` ended with `result` (whose `duration` is its run time),
/// after waiting `waited` on the user's answers.
pub(crate) fn finish(
    workbench: &mut Workbench,
    cell_id: u64,
    result: &ExecResult,
    waited: std::time::Duration,
) {
    workbench.last_exec_id = Some(result.id);
    workbench
        .changes
        .window
        .cell_ended(std::time::Instant::now());
    let lost = result.lost_state();
    if let Some(message) = cell_mut(workbench, cell_id) {
        show_the_end(&mut message.text, &result.stdout);
        if let Some(value) = &result.value_repr {
            if !message.text.is_empty() && !message.text.ends_with('\n') {
                message.text.push('\n');
            }
            append_capped(&mut message.text, &format!("→ {value}"));
        }
        let status = match &result.error {
            None => CellStatus::Succeeded {
                duration_ms: Some(result.duration.as_millis() as u64),
                waited_ms: waited.as_millis() as u64,
            },
            Some(error) => {
                if !message.text.is_empty() && !message.text.ends_with('\n') {
                    message.text.push('\n');
                }
                append_capped(&mut message.text, error.traceback.trim_end());
                CellStatus::Failed {
                    summary: error.type_name.clone(),
                }
            }
        };
        if !result.background.is_empty() {
            if !message.text.is_empty() && !message.text.ends_with('\n') {
                message.text.push('\n');
            }
            append_capped(
                &mut message.text,
                &crate::kernel::labelled_background(&result.background),
            );
        }
        if let Some(cell) = &mut message.cell {
            cell.status = status;
        }
    }
    // A cell that timed out and cost a restart already says so in its
    // error; a kernel that died under a cell gets the consequence spelled
    // out here.
    if lost && !matches!(result.outcome, ExecOutcome::TimedOut { restarted: true }) {
        workbench.notice(restart_notice(workbench));
    }
    crate::workbench::safety::warn_if_protected_appeared(workbench);
    crate::workbench::agent::record_cell(workbench, cell_id);
}

/// The last of a cell's output is what it ended with (a final line, a
/// result): when the pane's copy was cut at [`MAX_CELL_OUTPUT`] before it,
/// the end of what the kernel kept (`stdout`, its head and tail) goes
/// after the cut, a few KiB past the cap (a tester's `END-MARK` after 600
/// KB never showed).
fn show_the_end(text: &mut String, stdout: &str) {
    const END: usize = 4 * 1024;
    let trimmed = stdout.trim_end();
    if text.len() < MAX_CELL_OUTPUT || trimmed.is_empty() {
        return;
    }
    let mut from = trimmed.len().saturating_sub(END);
    while !trimmed.is_char_boundary(from) {
        from += 1;
    }
    // From a line's start when one is near.
    if let Some(newline) = trimmed[from..].find('\n').filter(|n| *n < END / 2) {
        from += newline + 1;
    }
    let end = &trimmed[from..];
    if text.trim_end().ends_with(end) {
        return;
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("… the end of its output:\n");
    text.push_str(end);
    text.push('\n');
}

/// What a kernel restart costs, as the conversation says it.
pub(crate) fn restart_notice(workbench: &Workbench) -> &'static str {
    if workbench.settings.keep_variables.is_some() {
        "kernel restarted — its kept variables come back when the next cell runs"
    } else {
        "kernel restarted — variables lost"
    }
}

/// What a restarted kernel brought back of its kept variables, in one line.
pub fn kept_variables(workbench: &mut Workbench, report: &crate::session::VarsReport) {
    let listed = |items: &[(String, String)]| {
        items
            .iter()
            .map(|(name, why)| format!("{name} ({why})"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut parts = Vec::new();
    if !report.restored.is_empty() {
        parts.push(format!(
            "restored {}: {}",
            report.restored.len(),
            report.restored.join(", ")
        ));
    }
    if !report.failed.is_empty() {
        parts.push(format!("not restored: {}", listed(&report.failed)));
    }
    if !report.not_kept.is_empty() {
        parts.push(format!("never kept: {}", listed(&report.not_kept)));
    }
    if !parts.is_empty() {
        workbench.notice(&format!("Kernel variables: {}.", parts.join("; ")));
    }
}

pub(crate) fn view_of(info: &KernelInfo) -> KernelView {
    let python = info.python.clone().unwrap_or_else(|| "?".into());
    match &info.status {
        KernelStatus::Starting => KernelView::Starting,
        KernelStatus::Idle => KernelView::Idle { python },
        KernelStatus::Busy => KernelView::Busy { python },
        KernelStatus::Dead(reason) => KernelView::Dead {
            reason: reason.clone(),
        },
    }
}

pub(crate) fn rows_of(runtime: &RuntimeState) -> Vec<VariableRow> {
    runtime
        .variables
        .iter()
        .map(|v| VariableRow {
            name: v.name.clone(),
            type_name: v.type_name.clone(),
            summary: v.summary.clone().unwrap_or_default(),
            preview: v.preview.clone().unwrap_or_default(),
            size: v.size,
            changed_by: v.changed_by,
        })
        .collect()
}

/// Output kept per cell in the conversation; the kernel already caps each
/// stream, this bounds what one pane entry holds.
pub(crate) const MAX_CELL_OUTPUT: usize = 256 * 1024;

/// Is any cell still running (so Ctrl+C means "interrupt it")?
pub(crate) fn any_running(workbench: &Workbench) -> bool {
    workbench.transcript.iter().any(|m| {
        m.cell
            .as_ref()
            .is_some_and(|c| c.status == CellStatus::Running)
    })
}

//! How the kernel service's updates change the state: cells appear in the
//! conversation, stream their output, finish with a status; the status bar
//! and the variables inspector follow the kernel.

use super::state::AppState;
use crate::workbench::cells::{
    MAX_CELL_OUTPUT, any_running, append_capped, cell_mut, finish, rows_of, view_of,
};
use crate::workbench::kernel::{CellOrigin, KernelUpdate};
use crate::workbench::transcript::{PaneEntry, Speaker};

pub fn apply(state: &mut AppState, update: KernelUpdate) {
    match update {
        KernelUpdate::Queued {
            cell_id,
            code,
            origin,
        } => {
            let mut message = PaneEntry::cell(cell_id, code);
            if origin == CellOrigin::User {
                message.role = Speaker::User;
            }
            // A following view shows it; a scrolled one keeps its place.
            state.workbench.transcript_mut().push(message);
        }
        KernelUpdate::Output { cell_id, text, .. } => {
            // Past the cap nothing is added: leave the entry (and its
            // cached layout) alone.
            let full = state
                .workbench
                .transcript()
                .iter()
                .rev()
                .find(|m| m.cell.as_ref().is_some_and(|c| c.id == cell_id))
                .is_none_or(|m| m.text.len() >= MAX_CELL_OUTPUT);
            if !full && let Some(message) = cell_mut(&mut state.workbench, cell_id) {
                append_capped(&mut message.text, &text);
            }
        }
        KernelUpdate::Finished {
            cell_id,
            result,
            waited,
        } => {
            finish(&mut state.workbench, cell_id, &result, waited);
            if !any_running(&state.workbench) {
                state.interrupted = None;
            }
        }
        KernelUpdate::Status(info) => *state.workbench.kernel_mut() = view_of(&info),
        KernelUpdate::State(runtime) => state.variables.replace(rows_of(&runtime)),
        // The cell whose timeout cost the restart reports it when it
        // finishes (its error says why and that the variables are lost):
        // said once, on that cell. Only a restart no running cell will
        // report gets a notice of its own.
        KernelUpdate::Restarted { reason } if !any_running(&state.workbench) => {
            let text = format!(
                "{} ({reason})",
                crate::workbench::cells::restart_notice(&state.workbench)
            );
            state.workbench.notice(&text);
        }
        KernelUpdate::Restarted { .. } => {}
    }
}

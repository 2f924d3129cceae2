//! The draft and the layout of the last run in this workspace, given back
//! at start and kept at quit (`workbench::memory` says where).

use super::state::AppState;
use crate::screen::layout::LayoutChoice;
use crate::workbench::memory::WorkspaceMemory;

/// Puts the remembered layout and draft back (before the first frame).
pub fn restore(state: &mut AppState, memory: &WorkspaceMemory) {
    if let Some(choice) = memory
        .layout()
        .and_then(|json| serde_json::from_str::<LayoutChoice>(&json).ok())
    {
        state.layout_choice = choice.clamped();
    }
    if let Some(draft) = memory.draft()
        && state.draft().trim().is_empty()
    {
        state.conversation.composer.insert_str(draft);
        // A line in the conversation: the status bar's would be gone with
        // the kernel's first report.
        state
            .workbench
            .notice("Your unsent message from the last session here is back in the composer.");
    }
}

/// Keeps the composer's text and the layout for the next run here.
pub fn keep(state: &AppState, memory: &WorkspaceMemory) {
    if let Err(error) = memory.keep_draft(&state.draft()) {
        tracing::warn!(%error, "the unsent message could not be kept");
    }
    // The default layout needs no file (and a workspace opened once
    // leaves nothing behind).
    let kept = if state.layout_choice == LayoutChoice::default() {
        memory.forget_layout()
    } else {
        serde_json::to_string(&state.layout_choice)
            .map_err(std::io::Error::other)
            .and_then(|json| memory.keep_layout(&json))
    };
    if let Err(error) = kept {
        tracing::warn!(%error, "the layout could not be kept");
    }
}

//! Workspace trust in the workbench (`crate::trust`): at start, a
//! workspace never answered for that provides something to run gets the
//! question, listing what would run; the answer is remembered outside the
//! workspace and the language servers start again under it. `/trust` asks
//! again.

use super::state::AppState;
use crate::overlays::Overlay;
use crate::overlays::confirm::Confirm;
use crate::trust::{Trust, TrustStore, Why};
use crate::workbench::Question;
use crate::workbench::trust::inventory;
use crate::workbench::trust_inventory::Provided;

/// At start, before the language servers: decides the trust from the
/// flag, the settings and `store`, and asks when it is unknown and the
/// workspace has something that would run.
pub fn start(state: &mut AppState, store: TrustStore) {
    let trust = crate::trust::decide(
        state.workbench.workspace_root(),
        state.workbench.settings().vouched(),
        &store,
    );
    state.workbench.trust_mut().trust = trust;
    state.workbench.trust_mut().store = store;
    if state.workbench.trust().trust == Trust::Unknown {
        let (found, hooks) = inventory(&state.workbench);
        if !found.is_empty() {
            ask(state, found, hooks);
        }
    }
}

/// `/trust`: the question again, whatever was answered before.
pub fn command(state: &mut AppState) {
    let (found, hooks) = inventory(&state.workbench);
    ask(state, found, hooks);
}

fn ask(state: &mut AppState, found: Vec<Provided>, hooks: crate::hooks::WorkspaceHooks) {
    state.workbench.trust_mut().found = found;
    state.workbench.trust_mut().hooks_shown = hooks;
    // Over whatever is open (the start-up recovery question, the user's
    // search): it comes back after the answer.
    state
        .overlays
        .push(Overlay::Confirm(Confirm::new(Question::TrustWorkspace)));
}

/// The answer: remembered, then the servers start again under it.
pub fn answer(state: &mut AppState, trusted: bool) {
    let remembered = state
        .workbench
        .trust()
        .store
        .set(state.workbench.workspace_root(), trusted);
    let before = state.workbench.trust().trust.is_trusted();
    state.workbench.trust_mut().trust = if trusted {
        Trust::Trusted(Why::Remembered)
    } else {
        Trust::Refused
    };
    let said = if trusted {
        "Workspace trusted: its own programs may run (language servers start again with them; \
         its MCP servers and Python are used from the next kernel start, /new kernel)."
    } else {
        "Workspace not trusted: only programs found outside it run, and its own slash \
         commands are not offered. /trust asks again."
    };
    let kept = match remembered {
        Ok(()) => String::new(),
        Err(error) => format!(" (for this session only: {error})"),
    };
    state.workbench.notice(&format!("{said}{kept}"));
    crate::workbench::hooks::trust_changed(&mut state.workbench, trusted);
    if before != trusted
        && let Some(service) = state.workbench.diagnostic_sources().client.clone()
    {
        service.set_trust(trusted);
        state.workbench.diagnostic_sources_mut().sent.clear();
        crate::workbench::diagnostics::sync_open_documents(&mut state.workbench);
    }
}

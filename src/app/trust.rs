//! Workspace trust in the workbench (`crate::trust`): at start, a
//! workspace never answered for that provides something to run gets the
//! question, listing what would run; the answer is remembered outside the
//! workspace and the language servers start again under it. `/trust` asks
//! again.

use std::path::PathBuf;

use super::state::{AppState, Question};
use crate::overlays::Overlay;
use crate::overlays::confirm::Confirm;
use crate::sanitize::for_display;
use crate::trust::{Provided, Trust, TrustStore, Why};
use crate::workbench::Workbench;

/// The workspace's trust as the workbench holds it.
#[derive(Debug)]
pub struct TrustView {
    pub trust: Trust,
    /// What the question lists (found when it was asked).
    pub found: Vec<Provided>,
    /// Where answers are kept.
    pub store: TrustStore,
    /// An overlay that was open when the question came (the start-up
    /// recovery question): it comes back after the answer.
    pub deferred: Option<Overlay>,
}

impl Default for TrustView {
    /// Untrusted and never asked: what a workbench has until `start` ran.
    fn default() -> Self {
        TrustView {
            trust: Trust::Unknown,
            found: Vec::new(),
            // Nowhere until `start` names the user's store: a workbench
            // built for a test never writes the real one.
            store: TrustStore::nowhere(),
            deferred: None,
        }
    }
}

/// At start, before the language servers: decides the trust from the
/// flag, the settings and `store`, and asks when it is unknown and the
/// workspace has something that would run.
pub fn start(state: &mut AppState, store: TrustStore) {
    state.workbench.trust.trust = crate::trust::decide(
        &state.workbench.workspace_root,
        &state.workbench.settings,
        &store,
    );
    state.workbench.trust.store = store;
    if state.workbench.trust.trust == Trust::Unknown {
        let found = inventory(&state.workbench);
        if !found.is_empty() {
            ask(state, found);
        }
    }
}

/// `/trust`: the question again, whatever was answered before.
pub fn command(state: &mut AppState) {
    let found = inventory(&state.workbench);
    ask(state, found);
}

fn inventory(workbench: &Workbench) -> Vec<Provided> {
    let dirs: Vec<PathBuf> = workbench
        .editors
        .tabs
        .iter()
        .filter_map(|doc| doc.path().parent().map(PathBuf::from))
        .collect();
    crate::trust::what_would_run(&workbench.workspace_root, &workbench.settings, &dirs)
}

fn ask(state: &mut AppState, found: Vec<Provided>) {
    state.workbench.trust.found = found;
    let question = Overlay::Confirm(Confirm::new(Question::TrustWorkspace));
    let previous = state.overlay.replace(question);
    // A question already open (recovery) waits for this one; any other
    // overlay was the user's own and gives way.
    if previous.as_ref().and_then(Overlay::question).is_some() {
        state.workbench.trust.deferred = previous;
    }
}

/// The answer: remembered, then the servers start again under it.
pub fn answer(state: &mut AppState, trusted: bool) {
    state.overlay = state.workbench.trust.deferred.take();
    let remembered = state
        .workbench
        .trust
        .store
        .set(&state.workbench.workspace_root, trusted);
    let before = state.workbench.trust.trust.is_trusted();
    state.workbench.trust.trust = if trusted {
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
    if before != trusted
        && let Some(service) = state.workbench.diagnostic_sources.client.clone()
    {
        service.set_trust(trusted);
        state.workbench.diagnostic_sources.sent.clear();
        super::diagnostics::sync_open_documents(&mut state.workbench);
    }
}

/// The question's text: what would run, and where the answer is kept.
/// Names come from the file system (a folder may be called anything), so
/// each is drawn through the sanitizer. At most `shown` items are listed
/// (what fits the screen, so the answers stay on it).
pub fn question_text(workbench: &Workbench, shown: usize) -> String {
    let mut text = format!(
        "Trust {}? Then these files of it run, or are loaded, on your machine:\n",
        for_display(&workbench.workspace_name)
    );
    for provided in workbench.trust.found.iter().take(shown) {
        text.push_str(&format!("• {}\n", for_display(&provided.to_string())));
    }
    if workbench.trust.found.len() > shown {
        text.push_str(&format!(
            "• and {} more (a taller terminal lists them all)\n",
            workbench.trust.found.len() - shown
        ));
    }
    if workbench.trust.found.is_empty() {
        text.push_str("• nothing found now (a later `npm install` may add some)\n");
    }
    text.push_str(
        "\nUntil you trust it, only programs found outside it run. No is the default (Enter).",
    );
    if let Some(path) = workbench.trust.store.path() {
        text.push_str(&format!(
            " The answer is kept in {} (/trust asks again).",
            for_display(&path.display().to_string())
        ));
    }
    text
}

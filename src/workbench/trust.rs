//! Whether the workspace's own programs may run: the answer, what was
//! found that would run, and the question's text (the TUI asks it,
//! `app::trust`).

use crate::sanitize::for_display;
use crate::trust::{Trust, TrustStore};
use crate::workbench::Workbench;
use crate::workbench::trust_inventory::{Provided, what_would_run};
use std::path::PathBuf;

/// The workspace's trust as the workbench holds it.
#[derive(Debug)]
pub struct TrustView {
    pub trust: Trust,
    /// What the question lists (found when it was asked).
    pub found: Vec<Provided>,
    /// Where answers are kept.
    pub store: TrustStore,
    /// The workspace's hooks as the question listed them: a yes runs and
    /// approves exactly these (read once, so what is shown is what runs).
    pub hooks_shown: crate::hooks::WorkspaceHooks,
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
            hooks_shown: crate::hooks::WorkspaceHooks::default(),
        }
    }
}

/// What the trust question lists, and the workspace's hooks read for it.
pub(crate) fn inventory(workbench: &Workbench) -> (Vec<Provided>, crate::hooks::WorkspaceHooks) {
    let dirs: Vec<PathBuf> = workbench
        .editors
        .tabs
        .iter()
        .filter_map(|doc| doc.path().parent().map(PathBuf::from))
        .collect();
    let hooks = crate::hooks::config::workspace_hooks(&workbench.workspace_root);
    let found = what_would_run(
        &workbench.workspace_root,
        &workbench.settings,
        &dirs,
        &hooks,
    );
    (found, hooks)
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

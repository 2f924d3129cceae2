//! The scene the user is looking at, as the snapshot builder's `Source`,
//! and the latest snapshot built from it (status bar, F2 preview, and the
//! block the next agent turn sends).
//!
//! Building reads project files, so it never runs on the UI loop: the loop
//! takes a [`SceneRequest`] (owned data copied out of the state), debounces,
//! builds on a blocking thread and gets the result back as an `AppEvent`.

use std::hash::{Hash, Hasher};

use crate::app::state::AppState;
use crate::diagnostics::Severity;
use crate::snapshot::{Source, source};
use crate::workbench::diagnostics::DiagnosticRow;
use crate::workbench::snapshot::SceneRequest;

/// A fingerprint of the parts of the state that the snapshot depends on;
/// when it changes, a new snapshot is due.
pub fn scene_key(state: &AppState) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    state.workbench.workspace_root().hash(&mut hasher);
    state.workbench.settings().snapshot_budget.hash(&mut hasher);
    for d in &state.diagnostics.rows {
        (&d.path, d.line, d.column, &d.message, d.severity as u8).hash(&mut hasher);
    }
    state.diagnostics.more.hash(&mut hasher);
    // Every edit, motion, tab change and reload bumps the revision, so the
    // buffers themselves are never hashed here.
    (
        state.workbench.editors().revision,
        state.workbench.editors().active,
        state.workbench.editors().tabs.len(),
    )
        .hash(&mut hasher);
    hasher.finish()
}

/// How many diagnostics the snapshot is handed: it lists 20 at most
/// (`CollectOptions::max_diagnostics`), so copying thousands each time the
/// scene changes would be wasted; the rest are counted.
const SNAPSHOT_DIAGNOSTICS: usize = 200;

/// The rows the snapshot would list first (the active file's, then by
/// severity, path and line, as `snapshot::collect` orders them), at most
/// [`SNAPSHOT_DIAGNOSTICS`], and how many diagnostics are left out (those
/// past a file's cap included).
fn snapshot_rows(state: &AppState) -> (Vec<&DiagnosticRow>, usize) {
    let active = state.workbench.editors().active().map(|doc| doc.path());
    let key = |d: &DiagnosticRow| {
        (
            Some(&*d.abs_path) != active,
            d.severity,
            d.path.clone(),
            d.line,
        )
    };
    let mut rows: Vec<&DiagnosticRow> = state.diagnostics.rows.iter().collect();
    if rows.len() > SNAPSHOT_DIAGNOSTICS {
        rows.select_nth_unstable_by_key(SNAPSHOT_DIAGNOSTICS, |d| key(d));
        rows.truncate(SNAPSHOT_DIAGNOSTICS);
    }
    rows.sort_by_key(|d| key(d));
    let not_listed = state.diagnostics.counts.total().saturating_sub(rows.len());
    (rows, not_listed)
}

/// Copies the scene out of the state (cheap: no file reads).
pub fn request(state: &AppState) -> SceneRequest {
    let root = state.workbench.workspace_root().clone();
    let abs = |relative: &str| root.join(relative).to_string_lossy().into_owned();
    let (rows, not_listed) = snapshot_rows(state);
    let diagnostics = rows
        .into_iter()
        .map(|d| source::SceneDiagnostic {
            path: abs(&d.path),
            severity: Some(
                match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Info => "information",
                    Severity::Hint => "hint",
                }
                .to_owned(),
            ),
            line: Some(d.line.saturating_sub(1)),
            character: Some(d.column.saturating_sub(1)),
            message: d.message.to_string(),
            source: d.source.as_deref().map(str::to_owned),
            code: None,
        })
        .collect();
    SceneRequest {
        scene_key: scene_key(state),
        source: Source {
            workspace: source::SceneWorkspace {
                name: state.workbench.workspace_name().clone(),
                roots: vec![root.to_string_lossy().into_owned()],
            },
            diagnostics: Some(diagnostics),
            diagnostics_not_listed: (not_listed > 0).then_some(not_listed),
            active_editor: crate::workbench::editor_scene::active_editor(&state.workbench),
            open_tabs: Some(crate::workbench::editor_scene::open_tabs(&state.workbench)),
            visible_editors: Some(crate::workbench::editor_scene::visible_editors(
                &state.workbench,
            )),
            ..Source::default()
        },
        root,
        budget: state.workbench.settings().snapshot_budget,
    }
}

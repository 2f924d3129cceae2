//! The snapshot of the scene as the workbench keeps it: what a build needs (`SceneRequest`, taken by the TUI from what is on screen) and what it made.

use crate::snapshot::{self, CollectOptions, Rendered, Source};
use std::path::PathBuf;

/// The latest snapshot, tagged with the scene it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotView {
    pub scene_key: u64,
    pub rendered: Rendered,
    pub used: usize,
    pub max: usize,
    pub truncated: bool,
}

/// Everything needed to build a snapshot, detached from `AppState`.
#[derive(Debug, Clone)]
pub struct SceneRequest {
    pub scene_key: u64,
    pub root: PathBuf,
    pub source: Source,
    pub budget: usize,
}

/// Builds the snapshot (reads project files: call off the UI loop).
pub fn build(mut request: SceneRequest) -> SnapshotView {
    request.source.project_files = Some(snapshot::root_project_files(&request.root));
    let options = CollectOptions {
        budget: request.budget,
        ..CollectOptions::default()
    };
    let (built, rendered) = snapshot::build(&request.source, &options);
    SnapshotView {
        scene_key: request.scene_key,
        used: built.budget.used,
        max: built.budget.max,
        truncated: built.budget.truncated,
        rendered,
    }
}

//! The host-agnostic scene: what the editor, tabs, diagnostics store and
//! workspace know right now, as plain data.
//!
//! This is the boundary between a host (our editor pane, a scene file, a test)
//! and the pure snapshot pipeline. Field names are the wire format of
//! `hello-tui snapshot --scene`, so they are snake_case and stable. Lines and
//! characters are 0-based like LSP; paths are absolute. Everything except
//! `workspace` may be missing or `null`: an empty workspace with no editor is
//! a valid scene.

use serde::{Deserialize, Serialize};

/// A whole scene as the host sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub workspace: SceneWorkspace,
    #[serde(default)]
    pub active_editor: Option<ActiveEditor>,
    #[serde(default)]
    pub visible_editors: Option<Vec<String>>,
    #[serde(default)]
    pub open_tabs: Option<Vec<OpenTab>>,
    #[serde(default)]
    pub diagnostics: Option<Vec<SceneDiagnostic>>,
    /// Diagnostics the host counted but left out of `diagnostics` (the
    /// workbench hands over only the first few of thousands): they count
    /// in the section's total and its "N more" line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics_not_listed: Option<usize>,
    #[serde(default)]
    pub project_files: Option<Vec<ProjectFile>>,
    /// One-line reports from the host about parts it could not provide
    /// (e.g. "diagnostics: language server not running"). Best-effort means a
    /// failing part becomes a note, never a missing snapshot.
    #[serde(default)]
    pub notes: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneWorkspace {
    pub name: String,
    #[serde(default)]
    pub roots: Vec<String>,
}

/// The editor the user is looking at. `text` is the in-memory buffer, which
/// may be ahead of the disk when `is_dirty` is true.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActiveEditor {
    pub path: String,
    #[serde(default)]
    pub language_id: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    /// 0-based line number of the first line of `text` when the host sends
    /// only a window of a big buffer (e.g. the lines around the cursor and
    /// the selection) instead of all of it; 0 or missing = `text` is whole.
    /// Lets an editor with a line-indexed buffer keep the snapshot's cost
    /// independent of the file size.
    #[serde(default)]
    pub text_start_line: Option<usize>,
    /// Total lines in the buffer, if the host knows it cheaply.
    #[serde(default)]
    pub line_count: Option<usize>,
    #[serde(default)]
    pub is_dirty: Option<bool>,
    #[serde(default)]
    pub cursor: Option<ScenePosition>,
    #[serde(default)]
    pub selection: Option<SceneRange>,
}

/// A 0-based position (LSP convention).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ScenePosition {
    pub line: usize,
    pub character: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneRange {
    pub start: ScenePosition,
    pub end: ScenePosition,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenTab {
    pub path: String,
    #[serde(default)]
    pub is_dirty: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneDiagnostic {
    pub path: String,
    /// `error`, `warning`, `information`/`info`, `hint`; anything else is kept
    /// verbatim and sorted last.
    #[serde(default)]
    pub severity: Option<String>,
    #[serde(default)]
    pub line: Option<usize>,
    #[serde(default)]
    pub character: Option<usize>,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
}

/// A diagnostic as the workbench holds it (0-based, in chars).
impl From<&crate::diagnostics::Diagnostic> for SceneDiagnostic {
    fn from(d: &crate::diagnostics::Diagnostic) -> Self {
        SceneDiagnostic {
            path: d.path.to_string_lossy().into_owned(),
            severity: Some(d.severity.as_str().to_owned()),
            line: Some(d.range.start.line),
            character: Some(d.range.start.character),
            message: d.message.to_string(),
            source: Some(d.source.to_string()),
            code: d.code.as_deref().map(str::to_owned),
        }
    }
}

/// A project file worth summarising. Without `text` it is read from disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectFile {
    pub path: String,
    #[serde(default)]
    pub text: Option<String>,
}

/// Why a scene file could not be loaded; `path` is the JSON path of the
/// problem (e.g. `active_editor.cursor.line`) so the user can fix it.
#[derive(Debug, thiserror::Error)]
#[error("invalid scene at `{path}`: {message}")]
pub struct SceneError {
    pub path: String,
    pub message: String,
}

impl Source {
    /// Parses a scene from JSON, naming the JSON path of the first problem.
    pub fn from_json(json: &str) -> Result<Self, SceneError> {
        let mut de = serde_json::Deserializer::from_str(json);
        let parsed: Result<Source, _> = serde_path_to_error::deserialize(&mut de);
        let source = parsed.map_err(|err| SceneError {
            path: err.path().to_string(),
            message: err.inner().to_string(),
        })?;
        de.end().map_err(|err| SceneError {
            path: ".".to_string(),
            message: err.to_string(),
        })?;
        Ok(source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_scene_has_only_a_workspace() {
        let source = Source::from_json(r#"{"workspace":{"name":"w"}}"#).unwrap();
        assert_eq!(source.workspace.name, "w");
        assert!(source.active_editor.is_none());
    }

    #[test]
    fn nulls_are_accepted_everywhere_but_workspace() {
        let json = r#"{"workspace":{"name":"w","roots":[]},"active_editor":{"path":"/r/a.rs","selection":null,"cursor":null,"text":null},
            "visible_editors":null,"open_tabs":null,"diagnostics":null,"project_files":null}"#;
        let source = Source::from_json(json).unwrap();
        assert_eq!(source.active_editor.unwrap().selection, None);
    }

    #[test]
    fn error_names_the_json_path() {
        let json = r#"{"workspace":{"name":"w"},"active_editor":{"path":"/a","cursor":{"line":"x","character":0}}}"#;
        let err = Source::from_json(json).unwrap_err();
        assert_eq!(err.path, "active_editor.cursor.line");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for input in ["", "{", "[]", "null", "{\"workspace\":3}", "\u{0}"] {
            assert!(Source::from_json(input).is_err(), "{input:?}");
        }
    }
}

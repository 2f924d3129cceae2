//! The collected snapshot: normalised, budgeted, privacy-filtered data.
//!
//! This is what the model is allowed to see, as structured data. The
//! Markdown renderer shows exactly this and nothing more, and the same value
//! serialises to JSON for `--format json` and the agent's
//! `context.snapshot()`. Lines and columns here are 1-based, as people and
//! compilers print them.

use serde::Serialize;

use super::paths::PathScope;
use super::project::Summary;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub workspace: WorkspaceInfo,
    pub active_editor: Option<ActiveInfo>,
    /// One-line reports of parts that failed or are missing (best-effort).
    pub notes: Listed<String>,
    pub snippet: Option<CodeSnippet>,
    pub diagnostics: Listed<DiagnosticInfo>,
    pub open_tabs: Listed<TabInfo>,
    pub visible_editors: Listed<String>,
    pub project_files: Listed<ProjectFileInfo>,
    pub budget: BudgetInfo,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkspaceInfo {
    pub name: String,
    /// Root directory names only: absolute paths are never sent.
    pub roots: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActiveInfo {
    pub path: String,
    pub scope: PathScope,
    pub language_id: String,
    /// Lines in the buffer, when the host reported it.
    pub line_count: Option<usize>,
    /// `None` when the host did not say.
    pub is_dirty: Option<bool>,
    pub cursor: Option<LineColumn>,
    pub selection: Option<Span>,
    /// True when a privacy rule matched: the file is named, its content is not sent.
    pub content_withheld: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineColumn {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Span {
    pub start: LineColumn,
    pub end: LineColumn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SnippetKind {
    Selection,
    Cursor,
}

/// Code from the active editor's buffer with its exact 1-based line range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeSnippet {
    pub kind: SnippetKind,
    pub path: String,
    pub language_id: String,
    /// True when the text is an unsaved buffer that may differ from disk.
    pub unsaved: bool,
    pub start_line: usize,
    pub end_line: usize,
    /// The range that was asked for (the whole selection, or the cursor
    /// window clipped to the file); differs from start/end when truncated.
    pub requested_start_line: usize,
    pub requested_end_line: usize,
    /// Lines were dropped or clipped to fit the budget.
    pub truncated: bool,
    /// The file has lines before / after what is shown.
    pub more_above: bool,
    pub more_below: bool,
    pub lines: Vec<String>,
}

/// A list cut to its limit and budget; `total` counts what the host had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub total: usize,
}

impl<T> Default for Listed<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            total: 0,
        }
    }
}

impl<T> Listed<T> {
    pub fn omitted(&self) -> usize {
        self.total.saturating_sub(self.items.len())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiagnosticInfo {
    pub path: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub severity: String,
    /// `None` when the file's content is withheld (messages can quote it).
    pub message: Option<String>,
    pub source: Option<String>,
    pub code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TabInfo {
    pub path: String,
    pub is_dirty: bool,
    pub is_active: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectFileInfo {
    pub path: String,
    #[serde(flatten)]
    pub content: ProjectFileContent,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ProjectFileContent {
    Summary(Summary),
    Withheld,
    /// An `AGENTS.md` (or `CLAUDE.md`) the system prompt carries whole as
    /// the project instructions: listed, not repeated.
    Instructions,
    /// Read failed or file skipped; the reason is one line with no absolute path.
    Unavailable {
        reason: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetInfo {
    /// Characters of the rendered Markdown, header included.
    pub used: usize,
    pub max: usize,
    /// Something was dropped or cut to fit the budget or a limit.
    pub truncated: bool,
}

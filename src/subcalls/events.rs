//! What the front ends see of a sub-call: the workbench nests it under its
//! cell, `exec --json` prints it, the session records the finished ones.

use serde::{Deserialize, Serialize};

/// How much of a prompt or an answer an event carries: enough to tell the
/// calls apart in the pane (Ctrl+O shows it all), never a whole document.
const HEAD_CHARS: usize = 400;

/// One step of one sub-call, in order: `Started` once it holds a
/// concurrency slot and its request goes out, then exactly one `Completed`
/// (also when the call is cancelled: a guard sends it on drop).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum SubcallEvent {
    #[serde(rename = "subcall.started")]
    Started(SubcallStarted),
    #[serde(rename = "subcall.completed")]
    Completed(SubcallCompleted),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubcallStarted {
    /// Unique in the process.
    pub id: u64,
    pub kind: SubcallKind,
    /// The kernel's execute id of the calling cell, when one runs.
    pub exec_id: Option<u64>,
    /// Who answers (the provider's label).
    pub model: String,
    /// The start of the prompt as sent (secrets redacted).
    pub prompt_head: String,
    pub prompt_chars: usize,
}

/// A finished sub-call, self-contained so the session can record it alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubcallCompleted {
    pub id: u64,
    #[serde(default)]
    pub kind: SubcallKind,
    #[serde(default)]
    pub exec_id: Option<u64>,
    pub model: String,
    pub prompt_head: String,
    pub status: SubcallStatus,
    pub answer_head: String,
    pub answer_chars: usize,
    /// The server's count, or an estimate (4 characters a token) when it
    /// reports none.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SubcallCompleted {
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// Which function made the call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubcallKind {
    /// `llm_query` or one prompt of `llm_query_batched`: one answer.
    #[default]
    LlmQuery,
    /// `rlm_query`: a nested code-action loop (its tokens are all of its
    /// model calls').
    RlmQuery,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubcallStatus {
    Ok,
    Failed,
    TimedOut,
    /// The cell was interrupted (Ctrl+C, a turn cancel, a cell timeout) or
    /// a sibling in its batch failed.
    Cancelled,
}

impl SubcallStatus {
    pub fn label(self) -> &'static str {
        match self {
            SubcallStatus::Ok => "ok",
            SubcallStatus::Failed => "failed",
            SubcallStatus::TimedOut => "timed out",
            SubcallStatus::Cancelled => "cancelled",
        }
    }
}

/// The first [`HEAD_CHARS`] characters of `text`.
pub(super) fn head(text: &str) -> String {
    match text.char_indices().nth(HEAD_CHARS) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

//! The prompt: what one model call sends, assembled within the model's
//! context window, and the compaction that keeps long sessions inside it.
//!
//! # Wiring
//!
//! - Before every model call, [`assemble`] the request from the
//!   [`Conversation`](crate::agent::conversation::Conversation) (whose
//!   entries carry their token counts) and the
//!   [`ContextWindow`](crate::tokens::ContextWindow). Send
//!   [`Prompt::request`] as is; after the call feed `usage.prompt_tokens`
//!   and [`Prompt::raw`] to the counter's `observe`.
//! - When [`Prompt::needs_compaction`], run [`compact::compact`] first and
//!   assemble again (the turn loop does both).
//! - [`Prompt::sections`] is what F2 and `exec --json` show; the preview of
//!   the bytes sent is [`crate::agent::provider::openai::messages_json`] of
//!   the request's messages, the same function the HTTP body uses.

mod assemble;
pub mod budget;
pub mod compact;

use std::ops::Range;

pub use assemble::{
    OMITTED_HEADING, RESUME_NOTE, SUMMARY_HEADING, SystemParts, assemble, group_ending_at,
    omitted_note, spans, summary_text, system_parts, tools_tokens,
};

use crate::agent::provider::ChatRequest;
use crate::tokens::ContextWindow;

/// What a part of the prompt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    System,
    /// The project's `AGENTS.md` files, in the system message.
    Instructions,
    Tools,
    Resume,
    Summary,
    Omitted,
    History,
    Current,
    /// Results the user pinned to the current message.
    Pins,
    Snapshot,
    Turn,
    /// Not part of the request: how a budget was derived (F2 lists these
    /// under the sections; they cost nothing).
    Budget,
}

/// One part of the prompt and what it costs, for the F2 breakdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    pub kind: SectionKind,
    pub label: String,
    /// Tokens as the server counts them (corrected estimate or exact).
    pub tokens: usize,
}

impl PromptSection {
    /// A line of F2 saying how a budget was derived (kind `Budget`).
    pub fn budget(label: &str, tokens: usize) -> Self {
        Self::new(SectionKind::Budget, label, tokens)
    }

    fn new(kind: SectionKind, label: &str, tokens: usize) -> Self {
        PromptSection {
            kind,
            label: label.to_owned(),
            tokens,
        }
    }
}

/// One assembled request and its accounting.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub request: ChatRequest,
    pub sections: Vec<PromptSection>,
    /// The whole request in the counter's raw unit (for `observe`).
    pub raw: usize,
    /// The whole request in tokens (server's count, as well as we know it).
    pub tokens: usize,
    /// What the prompt would cost with every message since the summary.
    pub uncompacted: usize,
    pub window: usize,
    /// The window minus the answer's reserve.
    pub budget: usize,
    /// First conversation index sent in order (the current user message is
    /// sent even when it is older).
    pub kept_from: usize,
    /// The current user message's conversation index.
    pub current: Option<usize>,
    /// `context` index ranges left out (what the note names).
    pub omitted: Vec<Range<usize>>,
}

impl Prompt {
    /// Past the auto-compaction threshold.
    pub fn needs_compaction(&self, window: &ContextWindow) -> bool {
        self.uncompacted > window.compact_threshold()
    }

    /// The least this request can cost: everything but the history, which
    /// can be left out or compacted. Over the window, no compaction helps.
    pub fn least_tokens(&self) -> usize {
        self.sections
            .iter()
            .filter(|s| {
                !matches!(
                    s.kind,
                    SectionKind::History
                        | SectionKind::Summary
                        | SectionKind::Omitted
                        | SectionKind::Resume
                        | SectionKind::Budget
                )
            })
            .map(|s| s.tokens)
            .sum()
    }

    /// `ctx 41% · 52k/128k`.
    pub fn gauge(&self) -> String {
        gauge(self.tokens, self.window)
    }

    /// The messages as people read them: a rule naming each message's role
    /// (and its tool calls), then its text exactly as sent. F2 shows this;
    /// [`Prompt::messages_text`] is the same request as JSON.
    pub fn readable(&self) -> String {
        use crate::agent::provider::ChatMessage;
        let mut out = String::new();
        for (i, message) in self.request.messages.iter().enumerate() {
            let (head, text) = match message {
                ChatMessage::System { content } => ("system".to_owned(), content.as_str()),
                ChatMessage::User { content } => ("user".to_owned(), content.as_str()),
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                    ..
                } => {
                    let calls: Vec<String> = tool_calls
                        .iter()
                        .map(|c| format!("{}({}) {}", c.name, c.id, c.arguments))
                        .collect();
                    let head = if calls.is_empty() {
                        "assistant".to_owned()
                    } else {
                        format!("assistant → {}", calls.join(", "))
                    };
                    (head, content.as_deref().unwrap_or(""))
                }
                ChatMessage::Tool {
                    tool_call_id,
                    content,
                } => (format!("tool result for {tool_call_id}"), content.as_str()),
            };
            out.push_str(&format!("──── [{i}] {head} ────\n{text}\n"));
        }
        out
    }

    /// The `messages` of the request body exactly as sent, pretty-printed
    /// (the same serialiser the HTTP body uses, so they cannot drift).
    pub fn messages_text(&self) -> String {
        let messages = crate::agent::provider::openai::messages_json(&self.request.messages);
        serde_json::to_string_pretty(&messages).unwrap_or_default()
    }
}

/// `ctx 41% · 52k/128k` for `used` of `window` tokens.
pub fn gauge(used: usize, window: usize) -> String {
    let percent = (used * 100).checked_div(window).unwrap_or(0);
    format!("ctx {percent}% · {}/{}", short(used), short(window))
}

/// 950 → `950`, 52 300 → `52k`, 1 047 576 → `1.0M`.
pub(crate) fn short(n: usize) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{}k", (n + 500) / 1000),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests;

//! Compaction: when the conversation since the last summary would fill most
//! of the window, the oldest part of it is folded into a summary that the
//! prompt carries instead. The model writes the summary (tools disabled);
//! when it cannot, a deterministic extractive summary stands in. Nothing is
//! deleted: `context`, search and the session keep every message.

use serde_json::Value;

use super::{Prompt, SectionKind, group_ending_at};
use crate::agent::conversation::{Conversation, code_of, prompt_of};
use crate::agent::provider::{ChatMessage, ChatRequest, ModelProvider, TurnAssembler};
use crate::agent::tool_result::{self, cut_middle};
use crate::tokens::ContextWindow;

/// The instructions of the summary call.
pub(crate) const COMPACT_SYSTEM: &str = "You maintain the running summary of a coding session between \
     a user and an assistant that answers by running Python in a persistent kernel. Fold the \
     transcript below into the previous summary (if any). Keep: the user's goals and decisions, \
     facts learned about the code (file paths, function names, errors, values), what was changed \
     and what is still open. Drop chit-chat. Write plain Markdown bullet points, no preamble. \
     Cite context indexes like #12 for details worth looking up later.";

/// Longest piece of one message in the summary call's transcript.
const TRANSCRIPT_MESSAGE_CHARS: usize = 1_500;
/// Longest piece of one message in the extractive summary.
const EXTRACT_CHARS: usize = 160;

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// Messages now summarised: ids `0..through` (what the pane's marker
    /// names; `context.slice(0, through)` returns them).
    pub through: usize,
    pub by_model: bool,
    /// Tokens of the new summary.
    pub tokens: usize,
    /// Why the model's summary was not used, if it was not.
    pub fallback_reason: Option<String>,
}

/// The most tokens a summary may take: an eighth of the prompt budget, and
/// at least enough for a few lines.
pub fn summary_cap(window: &ContextWindow) -> usize {
    (window.prompt_budget() / 8).max(200)
}

/// Where a compaction should end so that what stays verbatim costs at most
/// half of what the threshold leaves after the fixed parts: the next
/// compaction is then a good while away. `None` when there is nothing new
/// to summarise. Never summarises the current user message or what follows.
pub fn plan(conversation: &Conversation, prompt: &Prompt, window: &ContextWindow) -> Option<usize> {
    let counter = conversation.counter();
    let messages = conversation.messages();
    let entries = conversation.entries();
    let start = conversation.compaction().map_or(0, |c| c.through);
    let fixed: usize = prompt
        .sections
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                SectionKind::System
                    | SectionKind::Instructions
                    | SectionKind::Tools
                    | SectionKind::Resume
            )
        })
        .map(|s| s.tokens)
        .sum();
    let keep = counter.to_raw(
        window
            .compact_threshold()
            .saturating_sub(fixed + summary_cap(window)),
    ) / 2;
    let mut through = messages.len();
    let mut used = 0usize;
    while through > start {
        let group = group_ending_at(messages, through - 1);
        let cost: usize = (group..through).map(|i| entries[i].tokens).sum();
        if used + cost > keep {
            break;
        }
        used += cost;
        through = group;
    }
    if let Some(current) = prompt.current {
        through = through.min(current);
    }
    (through > start).then_some(through)
}

/// One message as a transcript line: `[#12 user] text`, cut to `max` chars.
fn transcript_line(conversation: &Conversation, i: usize, max: usize) -> Option<String> {
    let (role, text) = match &conversation.messages()[i] {
        ChatMessage::System { .. } => return None,
        ChatMessage::User { content } => ("user", prompt_of(content).to_owned()),
        ChatMessage::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut text = content.clone().unwrap_or_default();
            for call in tool_calls {
                let code = code_of(&call.arguments).unwrap_or_else(|_| call.arguments.clone());
                text.push_str(&format!("\n[cell] {code}"));
            }
            ("assistant", text)
        }
        ChatMessage::Tool { content, .. } => (
            "result",
            serde_json::from_str::<Value>(content)
                .map(|v| tool_result::readable(&v))
                .unwrap_or_else(|_| content.clone()),
        ),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| format!("[#{i} {role}] {}", cut_middle(text, max)))
}

/// The deterministic summary: one short line per message of `from..to`
/// (user prompts first among equals: they carry the goals), after the
/// previous summary, the whole cut to `cap` tokens by leaving out lines in
/// the middle.
pub fn extractive(
    conversation: &Conversation,
    from: usize,
    to: usize,
    previous: Option<&str>,
    cap: usize,
) -> String {
    let counter = conversation.counter();
    let mut lines: Vec<String> = Vec::new();
    if let Some(previous) = previous {
        // The older summary gets at most half the room.
        let chars = counter.to_raw(cap / 2) * 3;
        lines.push(cut_middle(previous.trim(), chars));
    }
    lines.extend((from..to).filter_map(|i| {
        let limit = if matches!(conversation.messages()[i], ChatMessage::User { .. }) {
            EXTRACT_CHARS * 2
        } else {
            EXTRACT_CHARS
        };
        transcript_line(conversation, i, limit).map(|l| format!("- {}", l.replace('\n', " ")))
    }));
    let mut text = lines.join("\n");
    // Drop lines from the middle (oldest detail after the summary goes
    // first… and the newest stays) until it fits.
    while counter.count(&text) > cap && lines.len() > 2 {
        let middle = lines.len() / 2;
        lines.remove(middle);
        text = lines.join("\n");
    }
    if counter.count(&text) > cap {
        text = cut_middle(&text, counter.to_raw(cap) * 3);
    }
    format!(
        "(extractive summary of context indexes up to #{})\n{text}",
        to.saturating_sub(1)
    )
}

/// The summary call: no tools, the previous summary and as much of the
/// transcript of `from..to` as fits the window next to the answer.
pub(crate) fn summary_request(
    conversation: &Conversation,
    from: usize,
    to: usize,
    focus: Option<&str>,
    window: &ContextWindow,
) -> ChatRequest {
    let counter = conversation.counter();
    let cap = summary_cap(window);
    let room = counter
        .to_raw(window.prompt_budget().saturating_sub(cap + 200))
        .saturating_sub(counter.count(COMPACT_SYSTEM));
    let mut body = String::new();
    if let Some(previous) = conversation.compaction() {
        body.push_str(&format!("Previous summary:\n{}\n\n", previous.summary));
    }
    body.push_str("Transcript to fold in:\n");
    let mut used = counter.count(&body);
    let mut shown = from;
    for i in from..to {
        let Some(line) = transcript_line(conversation, i, TRANSCRIPT_MESSAGE_CHARS) else {
            shown = i + 1;
            continue;
        };
        let cost = counter.count(&line) + 1;
        if used + cost > room {
            break;
        }
        used += cost;
        body.push_str(&line);
        body.push('\n');
        shown = i + 1;
    }
    if shown < to {
        body.push_str(&format!(
            "(… {} more messages are not shown; summarise what is above)\n",
            to - shown
        ));
    }
    if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
        body.push_str(&format!("\nFocus the summary on: {}\n", focus.trim()));
    }
    ChatRequest {
        messages: vec![
            ChatMessage::System {
                content: COMPACT_SYSTEM.to_owned(),
            },
            ChatMessage::User { content: body },
        ],
        tools: Vec::new(),
        temperature: None,
        max_tokens: u32::try_from(cap).ok(),
    }
}

/// Folds `start..through` into the summary: asks the model, falls back to
/// [`extractive`] when the call fails, returns nothing or only tool calls.
/// Records the result in the conversation (and so in the session).
pub async fn compact(
    provider: &dyn ModelProvider,
    conversation: &mut Conversation,
    through: usize,
    focus: Option<&str>,
    window: &ContextWindow,
) -> Compacted {
    let start = conversation.compaction().map_or(0, |c| c.through);
    let cap = summary_cap(window);
    let request = summary_request(conversation, start, through, focus, window);
    let mut stream = provider.stream_chat(request);
    let mut assembler = TurnAssembler::default();
    while let Some(event) = stream.next().await {
        assembler.push(&event);
    }
    let turn = assembler.finish();
    let counter = conversation.counter().clone();
    let answer = turn.text.trim();
    let fallback_reason = if let Some(error) = &turn.error {
        Some(error.to_string())
    } else if turn.partial {
        Some("the summary stream ended early".to_owned())
    } else if answer.is_empty() {
        Some("the model returned no summary text".to_owned())
    } else {
        None
    };
    let (summary, by_model) = match fallback_reason {
        None => {
            let text = if counter.count(answer) > cap + cap / 2 {
                cut_middle(answer, counter.to_raw(cap) * 3)
            } else {
                answer.to_owned()
            };
            (text, true)
        }
        Some(_) => {
            let previous = conversation.compaction().map(|c| c.summary.clone());
            (
                extractive(conversation, start, through, previous.as_deref(), cap),
                false,
            )
        }
    };
    conversation.compact(summary, through, by_model, focus);
    Compacted {
        through,
        by_model,
        tokens: conversation
            .compaction()
            .map_or(0, |c| counter.corrected(c.tokens)),
        fallback_reason,
    }
}

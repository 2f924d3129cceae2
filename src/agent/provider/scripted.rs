//! A provider that replays a recorded conversation, for the offline
//! `--demo` and for tests of everything above the provider. It goes through
//! the same [`ProviderStream`] as the HTTP client, in small pieces with small
//! delays, so the UI streams it exactly like a real model.
//!
//! Script format (JSON):
//! ```json
//! {
//!   "label": "demo (scripted)",
//!   "chunk_chars": 8,
//!   "delay_ms": 20,
//!   "turns": [
//!     { "text": "Let me look.",
//!       "tool_calls": [{ "name": "python", "arguments": { "code": "print(1)" } }] },
//!     { "text": "It prints 1.", "usage": { "prompt_tokens": 90, "completion_tokens": 5 } }
//!   ]
//! }
//! ```
//! `arguments` is any JSON value (sent as its compact JSON text) or a string
//! (sent verbatim, so a script can also show malformed arguments). The turn
//! played is the number of assistant messages already in the request, so a
//! resumed or replayed conversation picks up where it was.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::ModelProvider;
use super::stream::ProviderStream;
use super::types::{ChatMessage, ChatRequest, FinishReason, ProviderError, ProviderEvent, Usage};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default = "default_label")]
    pub label: String,
    /// Characters per text/argument piece.
    #[serde(default = "default_chunk_chars")]
    pub chunk_chars: usize,
    /// Pause before each piece.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: u64,
    pub turns: Vec<ScriptTurn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub text: String,
    /// Said instead of `text` when the last tool result failed (`"ok":
    /// false`): a scripted answer must not claim what did not happen.
    #[serde(default)]
    pub text_after_error: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ScriptToolCall>,
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// Defaults to `call_<turn>_<n>`.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

fn default_label() -> String {
    "scripted demo model".into()
}
fn default_chunk_chars() -> usize {
    8
}
fn default_delay_ms() -> u64 {
    20
}

/// Said when the conversation goes past the end of the script.
pub(crate) const SCRIPT_ENDED: &str = "(This is the scripted demo model and its script has ended. Configure a real model with --model and --base-url.)";

#[derive(Debug, Clone)]
pub struct ScriptedProvider {
    script: Script,
}

impl ScriptedProvider {
    pub fn from_json(text: &str) -> Result<Self, ProviderError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let script: Script = serde_path_to_error::deserialize(de)
            .map_err(|e| ProviderError::Script(format!("at `{}`: {}", e.path(), e.inner())))?;
        Self::new(script)
    }

    pub fn from_file(path: &Path) -> Result<Self, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Script(format!("{}: {e}", path.display())))?;
        Self::from_json(&text)
            .map_err(|e| ProviderError::Script(format!("{}: {e}", path.display())))
    }

    pub fn new(script: Script) -> Result<Self, ProviderError> {
        if script.chunk_chars == 0 {
            return Err(ProviderError::Script(
                "`chunk_chars` must be at least 1".into(),
            ));
        }
        if let Some(n) = script
            .turns
            .iter()
            .position(|t| t.text.is_empty() && t.tool_calls.is_empty())
        {
            return Err(ProviderError::Script(format!(
                "turn {n} has neither text nor tool calls"
            )));
        }
        Ok(ScriptedProvider { script })
    }

    /// Overrides the script's own label (the demo is always called the same).
    pub fn set_label(&mut self, label: &str) {
        label.clone_into(&mut self.script.label);
    }

    /// Which script turn answers `messages`. The script is a series of
    /// exchanges, each ending with a turn without tool calls. Exchanges the
    /// conversation finished (their last answer called no tool and was not
    /// cut off) move the script on; one cut short (cancelled) starts over
    /// on the next prompt instead of skipping a step.
    fn turn_number(&self, messages: &[ChatMessage]) -> usize {
        let mut finished: usize = 0;
        let mut in_exchange = 0;
        let mut answered = false;
        for message in messages {
            match message {
                ChatMessage::User { .. } => {
                    if in_exchange > 0 && answered {
                        finished += 1;
                    }
                    in_exchange = 0;
                }
                ChatMessage::Assistant { tool_calls, .. } => {
                    in_exchange += 1;
                    answered = tool_calls.is_empty() && !message.is_cut_off();
                }
                ChatMessage::System { .. } | ChatMessage::Tool { .. } => {}
            }
        }
        // The current exchange starts after the `finished`-th answer turn.
        let start = match finished.checked_sub(1) {
            None => 0,
            Some(answered) => {
                let answers = self.script.turns.iter().enumerate();
                match answers
                    .filter(|(_, t)| t.tool_calls.is_empty())
                    .nth(answered)
                {
                    Some((i, _)) => i + 1,
                    None => return usize::MAX, // past the script's last exchange
                }
            }
        };
        start + in_exchange
    }

    /// The events of the turn that answers `request`, without delays.
    pub(crate) fn events_for(&self, request: &ChatRequest) -> Vec<ProviderEvent> {
        let number = self.turn_number(&request.messages);
        let pieces = self.script.chunk_chars;
        let Some(turn) = self.script.turns.get(number) else {
            return vec![
                ProviderEvent::TextDelta(SCRIPT_ENDED.into()),
                ProviderEvent::Finished(FinishReason::Stop),
            ];
        };
        let text = match &turn.text_after_error {
            Some(text) if last_tool_failed(&request.messages) => text,
            _ => &turn.text,
        };
        let mut events: Vec<ProviderEvent> = split(&turn.reasoning, pieces)
            .map(|p| ProviderEvent::ReasoningDelta(p.to_owned()))
            .chain(split(text, pieces).map(|p| ProviderEvent::TextDelta(p.to_owned())))
            .collect();
        let mut completion_chars = text.chars().count();
        for (index, call) in turn.tool_calls.iter().enumerate() {
            let arguments = match &call.arguments {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            completion_chars += arguments.chars().count();
            events.push(ProviderEvent::ToolCallStarted {
                index,
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{number}_{index}")),
                name: call.name.clone(),
            });
            events.extend(split(&arguments, pieces).map(|p| {
                ProviderEvent::ToolCallArgumentsDelta {
                    index,
                    delta: p.to_owned(),
                }
            }));
        }
        let usage = turn.usage.map_or_else(
            || {
                // A rough 4-characters-per-token estimate, so the demo's
                // status bar shows plausible numbers.
                let prompt: usize = request.messages.iter().map(message_chars).sum();
                estimate(prompt as u64 / 4, completion_chars as u64 / 4)
            },
            |u| estimate(u.prompt_tokens, u.completion_tokens),
        );
        events.push(ProviderEvent::Usage(usage));
        events.push(ProviderEvent::Finished(if turn.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        }));
        events
    }
}

/// The last message is a tool result that reports a failure.
fn last_tool_failed(messages: &[ChatMessage]) -> bool {
    match messages.last() {
        Some(ChatMessage::Tool { content, .. }) => {
            serde_json::from_str::<Value>(content).is_ok_and(|v| v["ok"] == Value::Bool(false))
        }
        _ => false,
    }
}

impl ModelProvider for ScriptedProvider {
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream {
        let events = self.events_for(&request);
        let delay = Duration::from_millis(self.script.delay_ms);
        ProviderStream::spawn(move |tx| replay(events, delay, tx))
    }

    fn label(&self) -> String {
        self.script.label.clone()
    }
}

async fn replay(events: Vec<ProviderEvent>, delay: Duration, tx: mpsc::Sender<ProviderEvent>) {
    for event in events {
        let streamed = matches!(
            event,
            ProviderEvent::TextDelta(_)
                | ProviderEvent::ReasoningDelta(_)
                | ProviderEvent::ToolCallArgumentsDelta { .. }
        );
        if streamed && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if tx.send(event).await.is_err() {
            return;
        }
    }
}

fn estimate(prompt: u64, completion: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        ..Usage::default()
    }
}

fn message_chars(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::System { content }
        | ChatMessage::User { content }
        | ChatMessage::Tool { content, .. } => content.chars().count(),
        ChatMessage::Assistant {
            content,
            tool_calls,
            ..
        } => {
            content.as_deref().map_or(0, |c| c.chars().count())
                + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>()
        }
    }
}

/// `text` in pieces of `size` characters (never splitting a character).
fn split(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest.char_indices().nth(size).map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::super::types::CUT_OFF_MARK;
    use super::*;

    #[test]
    fn split_respects_characters() {
        let pieces: Vec<&str> = split("日本語のテキスト", 3).collect();
        assert_eq!(pieces, ["日本語", "のテキ", "スト"]);
        assert_eq!(split("", 3).count(), 0);
    }

    #[test]
    fn bad_scripts_are_readable_errors() {
        for (text, needle) in [
            ("{", "EOF"),
            (r#"{"turns":[{"txt":"x"}]}"#, "turns[0]"),
            (r#"{"turns":[{}]}"#, "turn 0"),
            (r#"{"chunk_chars":0,"turns":[]}"#, "chunk_chars"),
        ] {
            let err = ScriptedProvider::from_json(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    fn assistant(calls: bool) -> ChatMessage {
        ChatMessage::Assistant {
            thinking: Vec::new(),
            content: Some("…".into()),
            tool_calls: if calls {
                vec![super::super::types::ToolCall {
                    id: "c".into(),
                    name: "code_action".into(),
                    arguments: "{}".into(),
                }]
            } else {
                Vec::new()
            },
        }
    }

    fn user() -> ChatMessage {
        ChatMessage::User {
            content: "q".into(),
        }
    }

    fn tool() -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: "c".into(),
            content: "r".into(),
        }
    }

    /// Issue 17: the demo's last turn must not say "the file is saved"
    /// when the write was refused.
    #[test]
    fn a_failed_tool_result_picks_the_text_for_it() {
        let provider = ScriptedProvider::from_json(
            r#"{"turns": [
                {"tool_calls": [{"name": "code_action", "arguments": {"code": "x"}}]},
                {"text": "It is saved.", "text_after_error": "It did not go through."}
            ]}"#,
        )
        .unwrap();
        let text_of = |result: &str| {
            let messages = vec![
                user(),
                assistant(true),
                ChatMessage::Tool {
                    tool_call_id: "c".into(),
                    content: result.into(),
                },
            ];
            let request = ChatRequest {
                messages,
                ..ChatRequest::default()
            };
            provider
                .events_for(&request)
                .into_iter()
                .filter_map(|e| match e {
                    ProviderEvent::TextDelta(t) => Some(t),
                    _ => None,
                })
                .collect::<String>()
        };
        assert_eq!(text_of(r#"{"ok": true}"#), "It is saved.");
        assert_eq!(
            text_of(r#"{"ok": false, "error": {}}"#),
            "It did not go through."
        );
    }

    #[test]
    fn turns_follow_exchanges_and_a_cut_short_one_starts_over() {
        // Two exchanges: turns 0,1 (tools) + 2 (answer); turn 3 (answer).
        let p = ScriptedProvider::from_json(
            r#"{"turns":[
                {"tool_calls":[{"name":"code_action","arguments":{}}]},
                {"tool_calls":[{"name":"code_action","arguments":{}}]},
                {"text":"answer one"},
                {"text":"answer two"}]}"#,
        )
        .unwrap();
        assert_eq!(p.turn_number(&[user()]), 0);
        assert_eq!(p.turn_number(&[user(), assistant(true), tool()]), 1);
        let done = [
            user(),
            assistant(true),
            tool(),
            assistant(true),
            tool(),
            assistant(false),
        ];
        assert_eq!(p.turn_number(&[&done[..], &[user()]].concat()), 3);
        // Cancelled while the first tool ran, or while text streamed: the
        // new prompt starts over.
        assert_eq!(p.turn_number(&[user(), assistant(true), tool(), user()]), 0);
        let cut = ChatMessage::Assistant {
            thinking: Vec::new(),
            content: Some(format!("Let me\n\n{CUT_OFF_MARK} cancelled by the user]")),
            tool_calls: Vec::new(),
        };
        assert_eq!(p.turn_number(&[user(), cut, user()]), 0);
        // Past the last exchange: the end of the script.
        let both = [&done[..], &[user(), assistant(false), user()]].concat();
        assert!(p.turn_number(&both) >= 4);
    }

    #[test]
    fn past_the_end_says_so() {
        let p = ScriptedProvider::from_json(r#"{"turns":[]}"#).unwrap();
        let events = p.events_for(&ChatRequest::default());
        assert_eq!(events[0], ProviderEvent::TextDelta(SCRIPT_ENDED.into()));
    }
}

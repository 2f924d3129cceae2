//! Turns a Messages event stream into [`ProviderEvent`]s. Pure and
//! incremental. The documented stream:
//!
//! ```text
//! message_start                       usage: input and cache tokens
//! content_block_start  (index n)      text | tool_use | thinking | redacted_thinking
//! content_block_delta  (index n)…     text_delta | input_json_delta | thinking_delta | signature_delta
//! content_block_stop   (index n)
//! message_delta                       stop_reason, cumulative usage
//! message_stop
//! ```
//!
//! with `ping` anywhere and `error` (e.g. `overloaded_error`) possibly
//! mid-stream. Unknown event and block types are skipped: the API adds
//! them (citations, server tools) and says clients must tolerate that.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::agent::provider::http::{Decoder, preview};
use crate::agent::provider::sse::SseEvent;
use crate::agent::provider::types::{FinishReason, ProviderError, ProviderEvent, Usage};

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        #[serde(default)]
        delta: Option<MessageDelta>,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Anthropic counts the uncached input apart from what the cache served
/// and what it stored; each may be missing.
#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

/// What a content block index is, once started.
enum Open {
    Text,
    /// A tool call (its dense index); `input` from the start event, used
    /// when no `input_json_delta` follows.
    Tool {
        call: usize,
        input: Option<Value>,
        streamed: bool,
    },
    Thinking,
    Skipped,
}

#[derive(Default)]
pub struct EventDecoder {
    blocks: HashMap<u64, Open>,
    calls: usize,
    input_tokens: u64,
    cache_read: u64,
    cache_write: u64,
    output_tokens: u64,
    stop_reason: Option<String>,
    done: bool,
    /// The `type` of the `error` event that ended the stream.
    error_kind: Option<String>,
}

impl EventDecoder {
    /// Decodes one SSE event's `data` (its `type` field names it, the same
    /// as the `event:` line).
    pub fn on_data(&mut self, data: &str) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let event: Event = serde_json::from_str(data)
            .map_err(|e| ProviderError::BadResponse(format!("{e} in event `{}`", preview(data))))?;
        let mut out = Vec::new();
        match event {
            Event::MessageStart { message } => self.count(message.usage.unwrap_or_default()),
            Event::ContentBlockStart {
                index,
                content_block,
            } => self.start(index, content_block, &mut out),
            Event::ContentBlockDelta { index, delta } => self.delta(index, delta, &mut out),
            Event::ContentBlockStop { index } => self.stop(index, &mut out),
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                self.count(usage.unwrap_or_default());
            }
            Event::MessageStop => {
                self.done = true;
                out.extend(self.finish());
            }
            Event::Ping | Event::Unknown => {}
            Event::Error { error } => {
                let message = format!("{} ({})", error.message, error.kind);
                self.error_kind = Some(error.kind);
                return Err(ProviderError::Api(preview(&message)));
            }
        }
        Ok(out)
    }

    /// Counts are cumulative: the latest value of each wins.
    fn count(&mut self, usage: WireUsage) {
        let keep = |slot: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *slot = value;
            }
        };
        keep(&mut self.input_tokens, usage.input_tokens);
        keep(&mut self.output_tokens, usage.output_tokens);
        keep(&mut self.cache_read, usage.cache_read_input_tokens);
        keep(&mut self.cache_write, usage.cache_creation_input_tokens);
    }

    fn start(&mut self, index: u64, block: Block, out: &mut Vec<ProviderEvent>) {
        let open = match block {
            Block::Text { text } => {
                push_text(out, ProviderEvent::TextDelta, text);
                Open::Text
            }
            Block::ToolUse { id, name, input } => {
                let call = self.calls;
                self.calls += 1;
                out.push(ProviderEvent::ToolCallStarted {
                    index: call,
                    id,
                    name,
                });
                Open::Tool {
                    call,
                    input,
                    streamed: false,
                }
            }
            Block::Thinking {
                thinking,
                signature,
            } => {
                push_text(out, ProviderEvent::ReasoningDelta, thinking);
                if let Some(signature) = signature.filter(|s| !s.is_empty()) {
                    out.push(ProviderEvent::ReasoningSigned(signature));
                }
                Open::Thinking
            }
            Block::RedactedThinking { data } => {
                out.push(ProviderEvent::ReasoningRedacted(data));
                Open::Skipped
            }
            Block::Other => Open::Skipped,
        };
        self.blocks.insert(index, open);
    }

    fn delta(&mut self, index: u64, delta: Delta, out: &mut Vec<ProviderEvent>) {
        match (self.blocks.get_mut(&index), delta) {
            (Some(Open::Text), Delta::Text { text }) => {
                push_text(out, ProviderEvent::TextDelta, text);
            }
            (Some(Open::Tool { call, streamed, .. }), Delta::InputJson { partial_json }) => {
                *streamed = true;
                if !partial_json.is_empty() {
                    out.push(ProviderEvent::ToolCallArgumentsDelta {
                        index: *call,
                        delta: partial_json,
                    });
                }
            }
            (Some(Open::Thinking), Delta::Thinking { thinking }) => {
                push_text(out, ProviderEvent::ReasoningDelta, thinking);
            }
            (Some(Open::Thinking), Delta::Signature { signature }) => {
                out.push(ProviderEvent::ReasoningSigned(signature));
            }
            // A delta for a block never started, or of another kind
            // (citations): nothing to show.
            _ => {}
        }
    }

    fn stop(&mut self, index: u64, out: &mut Vec<ProviderEvent>) {
        if let Some(Open::Tool {
            call,
            input: Some(input),
            streamed: false,
        }) = self.blocks.remove(&index)
            && input.as_object().is_some_and(|o| !o.is_empty())
        {
            // The whole input came with the start event.
            out.push(ProviderEvent::ToolCallArgumentsDelta {
                index: call,
                delta: input.to_string(),
            });
        }
    }

    fn finish(&mut self) -> Vec<ProviderEvent> {
        let prompt = self.input_tokens + self.cache_read + self.cache_write;
        let usage = Usage {
            prompt_tokens: prompt,
            completion_tokens: self.output_tokens,
            total_tokens: prompt + self.output_tokens,
            cache_read_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            cuts_silently: false,
        };
        let reason = match self.stop_reason.take() {
            Some(reason) => FinishReason::from_wire(&reason),
            None if self.calls > 0 => FinishReason::ToolCalls,
            None => FinishReason::Stop,
        };
        vec![ProviderEvent::Usage(usage), ProviderEvent::Finished(reason)]
    }
}

fn push_text(out: &mut Vec<ProviderEvent>, event: fn(String) -> ProviderEvent, text: String) {
    if !text.is_empty() {
        out.push(event(text));
    }
}

impl Decoder for EventDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        self.on_data(&event.data)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// Without `message_stop` the answer is incomplete, even when a stop
    /// reason came: the last events may be missing.
    fn on_end(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(ProviderError::StreamInterrupted(
            "the server closed the stream before `message_stop`".into(),
        ))
    }

    /// Overloaded (the 529 of a stream already begun), rate-limited, or the
    /// API's own internal error: worth another try.
    fn is_transient(&self, error: &ProviderError) -> bool {
        matches!(error, ProviderError::Api(_))
            && matches!(
                self.error_kind.as_deref(),
                Some("overloaded_error" | "rate_limit_error" | "api_error")
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::stream::{AssistantTurn, TurnAssembler};

    fn run(events: &[&str]) -> (Vec<ProviderEvent>, AssistantTurn) {
        let mut decoder = EventDecoder::default();
        let mut out = Vec::new();
        for data in events {
            out.extend(decoder.on_data(data).unwrap());
        }
        out.extend(Decoder::on_end(&mut decoder).unwrap());
        let mut assembler = TurnAssembler::default();
        out.iter().for_each(|e| assembler.push(e));
        (out, assembler.finish())
    }

    #[test]
    fn a_thinking_text_and_tool_use_answer() {
        let (_, turn) = run(&[
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Read the file "}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"first."}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading."}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"code_action","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"code\": \"print("}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1)\"}"}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(turn.text, "Reading.");
        assert_eq!(turn.reasoning, "Read the file first.");
        assert_eq!(turn.thinking[0].signature.as_deref(), Some("EqQBCgIYAhIM"));
        assert_eq!(turn.tool_calls[0].id, "toolu_01");
        assert_eq!(turn.tool_calls[0].arguments, "{\"code\": \"print(1)\"}");
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
        let usage = turn.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.cache_write_tokens
            ),
            (2012, 89, 2000)
        );
        assert!(!turn.partial);
    }

    #[test]
    fn unknown_events_blocks_and_deltas_are_skipped() {
        let (_, turn) = run(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"x","name":"web_search"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"ok"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}}"#,
            r#"{"type":"brand_new_event","x":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}"#,
            r#"{"type":"message_stop"}"#,
        ]);
        assert_eq!(turn.text, "ok");
        assert!(turn.tool_calls.is_empty());
        assert_eq!(turn.finish_reason, Some(FinishReason::Length));
    }

    #[test]
    fn an_error_event_is_an_api_error_and_overload_is_transient() {
        let mut d = EventDecoder::default();
        let error = d
            .on_data(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            )
            .unwrap_err();
        assert_eq!(
            error,
            ProviderError::Api("Overloaded (overloaded_error)".into())
        );
        assert!(d.is_transient(&error));
        let mut d = EventDecoder::default();
        let error = d
            .on_data(r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#)
            .unwrap_err();
        assert!(!d.is_transient(&error));
    }

    #[test]
    fn a_stream_without_message_stop_is_interrupted() {
        let mut d = EventDecoder::default();
        d.on_data(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#)
            .unwrap();
        assert!(matches!(
            Decoder::on_end(&mut d),
            Err(ProviderError::StreamInterrupted(_))
        ));
        assert!(matches!(
            d.on_data("{not json"),
            Err(ProviderError::BadResponse(_))
        ));
    }
}

//! Turns the `data:` payloads of a Chat Completions stream into
//! [`ProviderEvent`]s. Pure and incremental, so every server quirk we
//! tolerate has a unit test:
//! - tool-call `arguments` in pieces, interleaved by `index`;
//! - `id`/`name` only on a call's first delta (or repeated on every one);
//! - `index` missing (llama.cpp, old Ollama, some proxies), calls then
//!   often sent whole, several in one chunk; or `index` reused for every
//!   call (Ollama's legacy tool path): a new `id` then means a new call;
//! - reasoning as `reasoning_content`/`reasoning` deltas, or as a
//!   `<think>…</think>` block opening `content` (see `think`);
//! - a final usage chunk with empty `choices`; `[DONE]`;
//! - `{"error": …}` objects sent mid-stream.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::think::{Piece, ThinkSplitter};
use crate::agent::provider::http::{Decoder, preview};
use crate::agent::provider::sse::SseEvent;
use crate::agent::provider::types::{FinishReason, ProviderError, ProviderEvent, Usage};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<Choice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    system_fingerprint: Option<String>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    /// A string per the spec; some servers send an object, which we pass on
    /// as its JSON text.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// One tool call being received.
#[derive(Debug)]
struct Slot {
    id: String,
    name: String,
    /// `ToolCallStarted` was sent (it waits for the name).
    started: bool,
    /// Arguments that arrived before the name.
    pending_args: String,
    /// Every argument piece so far (to tell a finished call from one
    /// still arriving when a server sends neither index nor id).
    arguments: String,
}

#[derive(Debug, Default)]
pub struct StreamDecoder {
    slots: Vec<Slot>,
    /// The server's index → our slot, the latest call that used it.
    by_wire_index: HashMap<u64, usize>,
    finish: Option<FinishReason>,
    done: bool,
    /// Something the user can see was emitted, so a retry would duplicate it.
    emitted_content: bool,
    /// Sorts `<think>` blocks out of `content`.
    think: ThinkSplitter,
    /// The server is Ollama (`system_fingerprint: fp_ollama`): its usage
    /// says so, for `turn::silent_cut`.
    ollama: bool,
}

impl StreamDecoder {
    #[cfg(test)]
    pub(crate) fn emitted_content(&self) -> bool {
        self.emitted_content
    }

    /// Decodes one SSE `data` payload.
    pub fn on_data(&mut self, data: &str) -> Result<Vec<ProviderEvent>, ProviderError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            let mut out = self.end_content();
            out.extend(self.flush());
            return Ok(out);
        }
        if data.is_empty() {
            return Ok(Vec::new());
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| ProviderError::BadResponse(format!("{e} in chunk `{}`", preview(data))))?;
        if let Some(error) = chunk.error {
            // LM Studio says an overflow this way, inside a 200 answer.
            if let Some(overflow) = crate::agent::provider::overflow::from_error(&error) {
                return Err(ProviderError::ContextOverflow(overflow));
            }
            return Err(ProviderError::Api(error_message(&error)));
        }
        self.ollama |= chunk.system_fingerprint.as_deref() == Some("fp_ollama");
        let mut out = Vec::new();
        for choice in chunk.choices.into_iter().flatten() {
            if let Some(delta) = choice.delta {
                self.on_delta(delta, &mut out);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish = Some(FinishReason::from_wire(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            let prompt = usage.prompt_tokens.unwrap_or(0);
            let completion = usage.completion_tokens.unwrap_or(0);
            out.push(ProviderEvent::Usage(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: usage.total_tokens.unwrap_or(prompt + completion),
                cache_read_tokens: usage
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .unwrap_or(0),
                cache_write_tokens: 0,
                cuts_silently: self.ollama,
            }));
        }
        Ok(out)
    }

    /// The body ended. Ok with the final events if the turn completed
    /// (`[DONE]` or a finish reason seen), else the stream broke off.
    pub(crate) fn on_end(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_some() {
            self.done = true;
            let mut out = self.end_content();
            out.extend(self.flush());
            return Ok(out);
        }
        Err(ProviderError::StreamInterrupted(
            "the server closed the stream before the answer was complete".into(),
        ))
    }

    /// What the `<think>` splitter still held back.
    fn end_content(&mut self) -> Vec<ProviderEvent> {
        self.think.finish().into_iter().map(piece_event).collect()
    }

    fn flush(&mut self) -> Vec<ProviderEvent> {
        let mut out = Vec::new();
        // A call whose name never came is still reported, so the turn loop
        // can answer it with an error instead of losing it.
        for index in 0..self.slots.len() {
            self.start_if_ready(index, true, &mut out);
        }
        let reason = self.finish.take().unwrap_or(if self.slots.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        out.push(ProviderEvent::Finished(reason));
        out
    }

    fn on_delta(&mut self, delta: Delta, out: &mut Vec<ProviderEvent>) {
        let reasoning = delta.reasoning_content.or(delta.reasoning);
        if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
            self.emitted_content = true;
            out.push(ProviderEvent::ReasoningDelta(text));
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.emitted_content = true;
            out.extend(self.think.push(&text).into_iter().map(piece_event));
        }
        for (position, call) in delta.tool_calls.into_iter().flatten().enumerate() {
            self.on_tool_call(position, call, out);
        }
    }

    fn on_tool_call(&mut self, position: usize, call: WireToolCall, out: &mut Vec<ProviderEvent>) {
        self.emitted_content = true;
        let id = call.id.filter(|id| !id.is_empty());
        let named = call
            .function
            .as_ref()
            .is_some_and(|f| f.name.as_deref().is_some_and(|n| !n.is_empty()));
        let slot = self.slot_for(call.index, position, id.as_deref(), named);
        let (name, args) = match call.function {
            Some(f) => (
                f.name.filter(|n| !n.is_empty()),
                f.arguments.map(|a| match a {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                }),
            ),
            None => (None, None),
        };
        let s = &mut self.slots[slot];
        if let Some(id) = id.filter(|_| s.id.is_empty()) {
            s.id = id;
        }
        if let Some(name) = name.filter(|_| s.name.is_empty()) {
            s.name = name;
        }
        if let Some(args) = args.filter(|a| !a.is_empty()) {
            s.pending_args.push_str(&args);
            s.arguments.push_str(&args);
        }
        self.start_if_ready(slot, false, out);
    }

    /// Which call a delta belongs to. `named`: the delta names its
    /// function.
    fn slot_for(
        &mut self,
        wire_index: Option<u64>,
        position: usize,
        id: Option<&str>,
        named: bool,
    ) -> usize {
        let known = match wire_index {
            Some(index) => self.by_wire_index.get(&index).copied(),
            // No index: continue the call with this id; without an id, the
            // latest call, unless this is a second call of the same chunk,
            // or names a function after the latest call's arguments were
            // complete (calls sent whole, as llama.cpp and Ollama do; a
            // server repeating the name on every piece still continues).
            None => match id {
                Some(id) => self.slots.iter().position(|s| s.id == id),
                None if position > 0 => None,
                None => self.slots.len().checked_sub(1).filter(|&last| {
                    let s = &self.slots[last];
                    !(named
                        && !s.name.is_empty()
                        && serde_json::from_str::<Value>(&s.arguments).is_ok())
                }),
            },
        };
        let reused_by_new_call = |slot: usize, slots: &[Slot]| {
            id.is_some_and(|id| !slots[slot].id.is_empty() && slots[slot].id != id)
        };
        match known {
            Some(slot) if !reused_by_new_call(slot, &self.slots) => slot,
            _ => {
                self.slots.push(Slot {
                    id: String::new(),
                    name: String::new(),
                    started: false,
                    pending_args: String::new(),
                    arguments: String::new(),
                });
                let slot = self.slots.len() - 1;
                let key = wire_index.unwrap_or(u64::MAX - position as u64);
                self.by_wire_index.insert(key, slot);
                slot
            }
        }
    }

    fn start_if_ready(&mut self, index: usize, force: bool, out: &mut Vec<ProviderEvent>) {
        let s = &mut self.slots[index];
        if !s.started && (force || !s.name.is_empty()) {
            s.started = true;
            if s.id.is_empty() {
                // Some local servers send no id; the tool result must still
                // name the call it answers.
                s.id = format!("call_{index}");
            }
            out.push(ProviderEvent::ToolCallStarted {
                index,
                id: s.id.clone(),
                name: s.name.clone(),
            });
        }
        if s.started && !s.pending_args.is_empty() {
            out.push(ProviderEvent::ToolCallArgumentsDelta {
                index,
                delta: std::mem::take(&mut s.pending_args),
            });
        }
    }
}

fn piece_event(piece: Piece) -> ProviderEvent {
    match piece {
        Piece::Reasoning(text) => ProviderEvent::ReasoningDelta(text),
        Piece::Answer(text) => ProviderEvent::TextDelta(text),
    }
}

impl Decoder for StreamDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError> {
        self.on_data(&event.data)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn on_end(&mut self) -> Result<Vec<ProviderEvent>, ProviderError> {
        StreamDecoder::on_end(self)
    }
}

fn error_message(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| match error {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    preview(&message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::stream::{AssistantTurn, TurnAssembler};

    fn run(chunks: &[&str]) -> (Vec<ProviderEvent>, AssistantTurn) {
        let mut decoder = StreamDecoder::default();
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(decoder.on_data(chunk).unwrap());
        }
        events.extend(decoder.on_end().unwrap());
        let mut assembler = TurnAssembler::default();
        events.iter().for_each(|e| assembler.push(e));
        (events, assembler.finish())
    }

    #[test]
    fn text_then_usage_chunk_with_empty_choices() {
        let (_, turn) = run(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#,
            "[DONE]",
        ]);
        assert_eq!(turn.text, "Hello");
        assert_eq!(turn.finish_reason, Some(FinishReason::Stop));
        assert_eq!(turn.usage.map(|u| u.total_tokens), Some(7));
        assert!(!turn.partial);
    }

    #[test]
    fn interleaved_indexes_and_split_arguments() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":"{\"q\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":\"hi\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(
            (
                turn.tool_calls[0].id.as_str(),
                turn.tool_calls[0].name.as_str()
            ),
            ("a", "f")
        );
        assert_eq!(turn.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(turn.tool_calls[1].arguments, "{\"q\":\"hi\"}");
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn missing_index_with_new_ids_makes_separate_calls() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"n\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        let args: Vec<&str> = turn
            .tool_calls
            .iter()
            .map(|c| c.arguments.as_str())
            .collect();
        assert_eq!(args, ["{\"n\":1}", "{}"]);
    }

    #[test]
    fn reused_index_zero_with_a_new_id_is_a_new_call() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"w","arguments":"{\"p\":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"w","arguments":"{\"p\":2}"}}]}}]}"#,
            "[DONE]",
        ]);
        let ids: Vec<&str> = turn.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(turn.tool_calls[1].arguments, "{\"p\":2}");
        // No finish reason but calls were made: report them as tool calls.
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    }

    #[test]
    fn arguments_before_the_name_wait_and_missing_id_is_generated() {
        let (events, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"late","arguments":":1}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert!(matches!(events[0], ProviderEvent::ToolCallStarted { .. }));
        assert_eq!(turn.tool_calls[0].id, "call_0");
        assert_eq!(turn.tool_calls[0].name, "late");
        assert_eq!(turn.tool_calls[0].arguments, "{\"a\":1}");
    }

    #[test]
    fn object_arguments_are_passed_as_json_text() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":{"k":[1]}}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(turn.tool_calls[0].arguments, "{\"k\":[1]}");
    }

    #[test]
    fn whole_calls_without_index_or_id_in_one_chunk_stay_separate() {
        // llama.cpp / some Ollama versions: every call complete in one
        // delta, no `index`; here not even an `id`.
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"code_action","arguments":"{\"code\":\"1\"}"}},{"type":"function","function":{"name":"code_action","arguments":"{\"code\":\"2\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"code_action","arguments":"{\"code\":\"3\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        ]);
        let calls: Vec<(&str, &str)> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_0", "{\"code\":\"1\"}"),
                ("call_1", "{\"code\":\"2\"}"),
                ("call_2", "{\"code\":\"3\"}"),
            ]
        );
    }

    #[test]
    fn a_name_repeated_on_every_piece_without_index_or_id_is_one_call() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(turn.tool_calls.len(), 1);
        assert_eq!(turn.tool_calls[0].arguments, "{\"a\":1}");
    }

    #[test]
    fn a_think_block_in_content_is_reasoning_not_answer() {
        let (events, turn) = run(&[
            r#"{"choices":[{"delta":{"content":"<thi"}}]}"#,
            r#"{"choices":[{"delta":{"content":"nk>The user wants"}}]}"#,
            r#"{"choices":[{"delta":{"content":" a sum.</th"}}]}"#,
            r#"{"choices":[{"delta":{"content":"ink>\n\n3"}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(turn.reasoning, "The user wants a sum.");
        assert_eq!(turn.text, "3");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, ProviderEvent::TextDelta(t) if t.contains("think"))),
            "{events:?}"
        );
        assert_eq!(
            turn.to_message(),
            Some(crate::agent::provider::ChatMessage::assistant(
                Some("3".into()),
                vec![]
            ))
        );
    }

    #[test]
    fn cached_prompt_tokens_are_reported() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":64}}}"#,
        ]);
        let usage = turn.usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.cache_read_tokens), (100, 64));
    }

    #[test]
    fn reasoning_fields_of_vllm_and_ollama() {
        let (_, turn) = run(&[
            r#"{"choices":[{"delta":{"reasoning_content":"think "}}]}"#,
            r#"{"choices":[{"delta":{"reasoning":"more"}}]}"#,
            r#"{"choices":[{"delta":{"content":"answer"},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(turn.reasoning, "think more");
        assert_eq!(turn.text, "answer");
    }

    #[test]
    fn end_without_done_or_finish_is_interrupted() {
        let mut d = StreamDecoder::default();
        d.on_data(r#"{"choices":[{"delta":{"content":"x"}}]}"#)
            .unwrap();
        assert!(d.emitted_content());
        assert!(matches!(
            d.on_end(),
            Err(ProviderError::StreamInterrupted(_))
        ));
    }

    #[test]
    fn error_objects_and_garbage_are_errors_not_panics() {
        let mut d = StreamDecoder::default();
        assert_eq!(
            d.on_data(r#"{"error":{"message":"model overloaded","type":"server_error"}}"#),
            Err(ProviderError::Api("model overloaded".into()))
        );
        for garbage in ["{", "nonsense", "[1,2]", "{\"choices\":5}", "\u{0}\u{1}"] {
            assert!(matches!(
                d.on_data(garbage),
                Err(ProviderError::BadResponse(_))
            ));
        }
        let huge = "x".repeat(100_000);
        match d.on_data(&huge) {
            Err(ProviderError::BadResponse(m)) => assert!(m.len() < 1000),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn null_choices_and_unknown_fields_are_tolerated() {
        let (_, turn) = run(&[
            r#"{"id":"x","object":"chat.completion.chunk","choices":null,"system_fingerprint":"fp"}"#,
            r#"{"choices":[{"delta":{"content":"ok","role":"assistant","refusal":null},"logprobs":null,"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(turn.text, "ok");
    }
}

//! The JSON body of a streaming Messages request.
//!
//! The conversation is the chat shape every provider shares; here it
//! becomes Anthropic's: the system message moves to the top-level `system`
//! (as blocks, so the stable ones can be cached), tool calls become
//! `tool_use` blocks, tool messages `tool_result` blocks in a user turn,
//! and consecutive messages of one role are merged (the API wants roles to
//! alternate, and every result of a call in the one user turn after it).
//!
//! Prompt caching: `cache_control: {type: "ephemeral"}` marks the end of
//! the tool list, of the system prompt, of the compaction summary (the
//! first user message), and of the last message — four breakpoints, the
//! API's limit. The omitted-messages note, which changes as the window
//! slides, comes after the cached system prompt.

use serde_json::{Map, Value, json};

use crate::agent::prompt::{SUMMARY_HEADING, system_parts};
use crate::agent::provider::types::{ChatMessage, ChatRequest, Thinking, ToolCall, ToolSpec};

use super::config::AnthropicConfig;

/// Extended thinking needs at least this budget (the API's minimum).
const MIN_THINKING_BUDGET: u32 = 1_024;

pub fn request_body(config: &AnthropicConfig, request: &ChatRequest) -> Value {
    let max_tokens = request.max_tokens.unwrap_or(config.max_tokens);
    let mut body = Map::new();
    body.insert("model".into(), json!(config.model));
    let system: Vec<Value> = request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::System { content } => Some(content.as_str()),
            _ => None,
        })
        .flat_map(system_blocks)
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request.tools.iter().map(tool).collect();
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), ephemeral());
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    let thinking = config
        .thinking_budget
        .filter(|budget| *budget >= MIN_THINKING_BUDGET && thinking_allowed(&request.messages));
    match thinking {
        // The budget counts against `max_tokens`: the answer keeps its room.
        Some(budget) => {
            body.insert(
                "max_tokens".into(),
                json!(max_tokens.saturating_add(budget)),
            );
            body.insert(
                "thinking".into(),
                json!({ "type": "enabled", "budget_tokens": budget }),
            );
            // Thinking allows no other temperature: it is left out.
        }
        None => {
            body.insert("max_tokens".into(), json!(max_tokens));
            if let Some(t) = request.temperature {
                body.insert("temperature".into(), json!(t));
            }
        }
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn ephemeral() -> Value {
    json!({ "type": "ephemeral" })
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// The system message as blocks: the prompt cached, the omitted note
/// after it uncached.
fn system_blocks(content: &str) -> Vec<Value> {
    let parts = system_parts(content);
    let mut blocks = Vec::new();
    if !parts.prompt.trim().is_empty() {
        let mut block = text_block(parts.prompt);
        block["cache_control"] = ephemeral();
        blocks.push(block);
    }
    if let Some(note) = parts.omitted {
        blocks.push(text_block(note));
    }
    blocks
}

/// Thinking may be on unless the request ends inside a tool loop (its
/// last user turn carries tool results) whose call came without a signed
/// thinking block — the session ran without thinking, or on another
/// provider: the API refuses to turn thinking on in the middle of an
/// assistant turn.
fn thinking_allowed(messages: &[ChatMessage]) -> bool {
    let Some(last) = messages
        .iter()
        .rposition(|m| matches!(m, ChatMessage::Assistant { .. }))
    else {
        return true;
    };
    let answered = messages[last + 1..]
        .iter()
        .any(|m| matches!(m, ChatMessage::Tool { .. }));
    match &messages[last] {
        ChatMessage::Assistant {
            tool_calls,
            thinking,
            ..
        } if answered && !tool_calls.is_empty() => thinking.iter().any(Thinking::is_verifiable),
        _ => true,
    }
}

/// The conversation as alternating `user` / `assistant` turns of blocks,
/// the last block marked for caching.
fn messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message {
            ChatMessage::System { .. } => continue,
            ChatMessage::User { content } => {
                let mut blocks = non_empty_text(content);
                // The compaction summary (the first user message) changes
                // only at a compaction: cached like the system prompt.
                if content.starts_with(SUMMARY_HEADING)
                    && turns.is_empty()
                    && let Some(Value::Object(block)) = blocks.first_mut()
                {
                    block.insert("cache_control".into(), ephemeral());
                }
                ("user", blocks)
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                thinking,
            } => {
                // Thinking first, unmodified, as the API requires.
                let mut blocks: Vec<Value> = thinking.iter().filter_map(thinking_block).collect();
                blocks.extend(non_empty_text(content.as_deref().unwrap_or_default()));
                blocks.extend(tool_calls.iter().map(tool_use));
                ("assistant", blocks)
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => ("user", vec![tool_result(tool_call_id, content)]),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => {
                // Results answer the calls: they go before any text.
                if role == "user" && blocks[0]["type"] == "tool_result" {
                    let text_at = last_blocks
                        .iter()
                        .position(|b| b["type"] != "tool_result")
                        .unwrap_or(last_blocks.len());
                    last_blocks.splice(text_at..text_at, blocks);
                } else {
                    last_blocks.extend(blocks);
                }
            }
            _ => turns.push((role, blocks)),
        }
    }
    if let Some(Value::Object(last)) = turns.last_mut().and_then(|(_, b)| b.last_mut()) {
        last.insert("cache_control".into(), ephemeral());
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// A call's result; a cell that failed (`"ok": false` in the result JSON)
/// is flagged `is_error`, as the API lets a tool say.
fn tool_result(id: &str, content: &str) -> Value {
    let mut block = json!({ "type": "tool_result", "tool_use_id": id, "content": content });
    let failed = serde_json::from_str::<Value>(content)
        .is_ok_and(|result| result.get("ok") == Some(&Value::Bool(false)));
    if failed {
        block["is_error"] = json!(true);
    }
    block
}

/// The API refuses empty text blocks.
fn non_empty_text(text: &str) -> Vec<Value> {
    if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![text_block(text)]
    }
}

/// A signed or redacted block exactly as it came; an unsigned one cannot
/// be checked by the server and is not sent.
fn thinking_block(thinking: &Thinking) -> Option<Value> {
    match (&thinking.redacted, &thinking.signature) {
        (Some(data), _) => Some(json!({ "type": "redacted_thinking", "data": data })),
        (None, Some(signature)) => Some(json!({
            "type": "thinking",
            "thinking": thinking.text,
            "signature": signature,
        })),
        (None, None) => None,
    }
}

/// `input` must be an object: the arguments as the model wrote them when
/// they are one; `{}` for none; otherwise the raw text in an object (the
/// turn loop already told the model they did not parse).
fn tool_use(call: &ToolCall) -> Value {
    let input = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ if call.arguments.trim().is_empty() => json!({}),
        _ => json!({ "unparsed_arguments": call.arguments }),
    };
    json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input })
}

fn tool(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::prompt::{OMITTED_HEADING, SUMMARY_HEADING};

    fn config() -> AnthropicConfig {
        AnthropicConfig::new(None, "claude-test", "K", &|_| None)
    }

    fn call(id: &str, code: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "code_action".into(),
            arguments: json!({ "code": code }).to_string(),
        }
    }

    fn tool_result(id: &str) -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: id.into(),
            content: "{\"ok\":true}".into(),
        }
    }

    fn user(text: &str) -> ChatMessage {
        ChatMessage::User {
            content: text.into(),
        }
    }

    #[test]
    fn results_merge_into_one_user_turn_before_text_and_roles_alternate() {
        let messages = vec![
            user("hi"),
            ChatMessage::assistant(
                Some("Two cells.".into()),
                vec![call("a", "1"), call("b", "2")],
            ),
            tool_result("a"),
            tool_result("b"),
            user("and then?"),
        ];
        let sent = super::messages(&messages);
        let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        let types: Vec<&str> = sent[2]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["tool_result", "tool_result", "text"]);
        assert_eq!(sent[1]["content"][1]["input"], json!({ "code": "1" }));
        assert!(sent[2]["content"][0].get("is_error").is_none());
        let failed = super::messages(&[ChatMessage::Tool {
            tool_call_id: "c".into(),
            content: "{\"ok\":false,\"error\":{\"type\":\"ZeroDivisionError\"}}".into(),
        }]);
        assert_eq!(failed[0]["content"][0]["is_error"], json!(true));
        assert_eq!(sent[1]["content"][2]["id"], json!("b"));
        // Only the very last block is a cache breakpoint.
        assert_eq!(sent[2]["content"][2]["cache_control"], ephemeral());
        assert!(sent[2]["content"][0].get("cache_control").is_none());
        assert!(sent[0]["content"][0].get("cache_control").is_none());
    }

    #[test]
    fn bad_or_empty_arguments_still_make_an_object_input() {
        let mut bad = call("a", "x");
        bad.arguments = "{\"code\": ".into();
        assert_eq!(
            tool_use(&bad)["input"],
            json!({ "unparsed_arguments": "{\"code\": " })
        );
        bad.arguments = String::new();
        assert_eq!(tool_use(&bad)["input"], json!({}));
    }

    #[test]
    fn the_system_prompt_and_summary_are_cached_and_the_note_is_not() {
        let system = format!("You are an agent.\n\n{OMITTED_HEADING}\n3 earlier messages…");
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System { content: system },
                user(&crate::agent::prompt::summary_text("- earlier work")),
                user("next"),
            ],
            tools: vec![ToolSpec {
                name: "code_action".into(),
                description: "runs".into(),
                parameters: json!({ "type": "object" }),
            }],
            temperature: Some(0.2),
            max_tokens: None,
        };
        let body = request_body(&config(), &request);
        let blocks = body["system"].as_array().unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0]["text"], json!("You are an agent."));
        assert_eq!(blocks[0]["cache_control"], ephemeral());
        assert!(
            blocks[1]["text"]
                .as_str()
                .unwrap()
                .starts_with(OMITTED_HEADING)
        );
        assert!(blocks[1].get("cache_control").is_none());
        // The summary is user-role text, cached; the last block too.
        let turn = &body["messages"][0];
        assert_eq!(turn["role"], json!("user"));
        assert!(
            turn["content"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with(SUMMARY_HEADING)
        );
        assert_eq!(turn["content"][0]["cache_control"], ephemeral());
        assert_eq!(turn["content"][1]["cache_control"], ephemeral());
        assert_eq!(
            body["tools"][0]["input_schema"],
            json!({ "type": "object" })
        );
        assert_eq!(body["tools"][0]["cache_control"], ephemeral());
        assert_eq!(body["max_tokens"], json!(config().max_tokens));
        assert_eq!(body["temperature"], json!(0.2f32));
        assert_eq!(body["stream"], json!(true));
        assert!(body.get("thinking").is_none());
        assert!(
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["role"] != "system")
        );
    }

    #[test]
    fn signed_thinking_goes_back_first_and_unsigned_never() {
        let mut with_thinking = ChatMessage::assistant(None, vec![call("a", "1")]);
        if let ChatMessage::Assistant { thinking, .. } = &mut with_thinking {
            thinking.push(Thinking {
                text: "I should look.".into(),
                signature: Some("sig".into()),
                redacted: None,
            });
            thinking.push(Thinking {
                text: String::new(),
                signature: None,
                redacted: Some("opaque".into()),
            });
        }
        let mut c = config();
        c.thinking_budget = Some(2_000);
        let request = ChatRequest {
            messages: vec![user("go"), with_thinking, tool_result("a")],
            temperature: Some(0.5),
            ..ChatRequest::default()
        };
        let body = request_body(&c, &request);
        let content = &body["messages"][1]["content"];
        assert_eq!(
            content[0],
            json!({ "type": "thinking", "thinking": "I should look.", "signature": "sig" })
        );
        assert_eq!(
            content[1],
            json!({ "type": "redacted_thinking", "data": "opaque" })
        );
        assert_eq!(content[2]["type"], json!("tool_use"));
        assert_eq!(
            body["thinking"],
            json!({ "type": "enabled", "budget_tokens": 2000 })
        );
        assert_eq!(body["max_tokens"], json!(c.max_tokens + 2_000));
        assert!(
            body.get("temperature").is_none(),
            "thinking takes no temperature"
        );

        // A tool loop whose call came without thinking cannot turn it on.
        let request = ChatRequest {
            messages: vec![
                user("go"),
                ChatMessage::assistant(None, vec![call("a", "1")]),
                tool_result("a"),
            ],
            ..ChatRequest::default()
        };
        assert!(request_body(&c, &request).get("thinking").is_none());
        // Nor can a message sent after a cancelled loop (its results and the
        // text are one user turn); after a final answer it can.
        let mut cancelled = request.messages.clone();
        cancelled.push(user("more"));
        let request = ChatRequest {
            messages: cancelled.clone(),
            ..ChatRequest::default()
        };
        assert!(request_body(&c, &request).get("thinking").is_none());
        let mut next = cancelled;
        next.push(ChatMessage::assistant(Some("done".into()), vec![]));
        next.push(user("more"));
        let request = ChatRequest {
            messages: next,
            ..ChatRequest::default()
        };
        assert!(request_body(&c, &request).get("thinking").is_some());
    }
}

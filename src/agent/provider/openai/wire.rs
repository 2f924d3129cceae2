//! The JSON body of a streaming Chat Completions request, in the shape every
//! OpenAI-compatible server accepts.

use serde_json::{Map, Value, json};

use crate::agent::provider::types::{ChatMessage, ChatRequest, ToolSpec};

pub fn request_body(model: &str, request: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), messages_json(&request.messages));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    body.insert("stream".into(), json!(true));
    // Without this the usage is never reported on a stream.
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    Value::Object(body)
}

/// The `messages` array exactly as the request body carries it (F2 shows
/// this, so its preview cannot drift from what is sent).
pub fn messages_json(messages: &[ChatMessage]) -> Value {
    Value::Array(messages.iter().map(message).collect())
}

fn message(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::System { content } => json!({ "role": "system", "content": content }),
        ChatMessage::User { content } => json!({ "role": "user", "content": content }),
        ChatMessage::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            // `null` content with tool calls is the documented form; some
            // servers reject a missing field, none reject null.
            m.insert("content".into(), json!(content));
            if !tool_calls.is_empty() {
                let calls = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": { "name": c.name, "arguments": c.arguments },
                        })
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content }),
    }
}

fn tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::types::ToolCall;

    #[test]
    fn body_has_the_streaming_fields_and_tool_round_trip() {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System {
                    content: "sys".into(),
                },
                ChatMessage::User {
                    content: "hi".into(),
                },
                ChatMessage::Assistant {
                    thinking: Vec::new(),
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "c1".into(),
                        name: "run".into(),
                        arguments: "{\"code\":\"1\"}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "c1".into(),
                    content: "1".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "run".into(),
                description: "runs".into(),
                parameters: json!({"type": "object"}),
            }],
            temperature: None,
            max_tokens: Some(10),
        };
        let body = request_body("m", &request);
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert_eq!(body["max_tokens"], json!(10));
        assert!(body.get("temperature").is_none());
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            json!("{\"code\":\"1\"}")
        );
        assert_eq!(body["messages"][3]["tool_call_id"], json!("c1"));
        assert_eq!(body["tools"][0]["function"]["name"], json!("run"));
    }

    #[test]
    fn no_tools_means_no_tools_field() {
        let body = request_body("m", &ChatRequest::default());
        assert!(body.get("tools").is_none());
    }
}

//! What a session file holds: one [`SessionRecord`] (a timestamp plus a
//! `type`-tagged [`SessionEvent`]) per line.

use serde::{Deserialize, Serialize};

use crate::agent::provider::{ChatMessage, ToolCall};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// RFC 3339 UTC time the event was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(flatten)]
    pub event: SessionEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionEvent {
    #[serde(rename = "session.started")]
    Started {
        id: String,
        workspace: String,
        created_at: String,
        model: String,
    },
    /// A conversation message, exactly as sent to / received from the model.
    #[serde(rename = "message")]
    Message {
        role: Role,
        #[serde(default)]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRecord>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
    },
    /// What running a tool call produced, richer than the tool message the
    /// model gets (success flag, duration).
    #[serde(rename = "tool.result")]
    ToolResult {
        tool_call_id: String,
        ok: bool,
        output: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    #[serde(rename = "usage")]
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
    /// A failure shown to the user (provider error, kernel crash…).
    #[serde(rename = "error")]
    Error { message: String },
    /// The first `through` conversation messages were summarised; the
    /// prompt carries `summary` instead of them from here on. The messages
    /// themselves stay in the file (and in `context`).
    #[serde(rename = "compaction")]
    Compaction {
        summary: String,
        through: usize,
        /// Written by the model (`false`: the extractive fallback).
        #[serde(default)]
        by_model: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// An event type written by a newer version: kept readable, ignored.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl SessionEvent {
    pub fn from_message(message: &ChatMessage) -> Self {
        let plain = |role, content: &str| SessionEvent::Message {
            role,
            content: Some(content.to_owned()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        };
        match message {
            ChatMessage::System { content } => plain(Role::System, content),
            ChatMessage::User { content } => plain(Role::User, content),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => SessionEvent::Message {
                role: Role::Assistant,
                content: content.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolCallRecord {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
                tool_call_id: None,
            },
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => SessionEvent::Message {
                role: Role::Tool,
                content: Some(content.clone()),
                tool_calls: Vec::new(),
                tool_call_id: Some(tool_call_id.clone()),
            },
        }
    }

    /// The message to send the model again when a session is resumed;
    /// `None` for events that are not conversation messages.
    pub fn to_message(&self) -> Option<ChatMessage> {
        let SessionEvent::Message {
            role,
            content,
            tool_calls,
            tool_call_id,
        } = self
        else {
            return None;
        };
        let text = || content.clone().unwrap_or_default();
        Some(match role {
            Role::System => ChatMessage::System { content: text() },
            Role::User => ChatMessage::User { content: text() },
            Role::Assistant => ChatMessage::Assistant {
                content: content.clone(),
                tool_calls: tool_calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect(),
            },
            Role::Tool => ChatMessage::Tool {
                tool_call_id: tool_call_id.clone().unwrap_or_default(),
                content: text(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape_is_a_flat_tagged_object() {
        let record = SessionRecord {
            at: Some("2026-11-30T01:55:00Z".into()),
            event: SessionEvent::Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
            },
        };
        let line = serde_json::to_string(&record).unwrap();
        assert_eq!(
            line,
            r#"{"at":"2026-11-30T01:55:00Z","type":"usage","prompt_tokens":3,"completion_tokens":4}"#
        );
        let back: SessionRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn unknown_types_load_as_unknown() {
        let record: SessionRecord =
            serde_json::from_str(r#"{"type":"cell.started","code":"1"}"#).unwrap();
        assert_eq!(record.event, SessionEvent::Unknown);
    }

    #[test]
    fn messages_round_trip_through_events() {
        for message in [
            ChatMessage::User {
                content: "hi".into(),
            },
            ChatMessage::Assistant {
                content: None,
                tool_calls: vec![ToolCall {
                    id: "c".into(),
                    name: "python".into(),
                    arguments: "{\"code\":\"1\"}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "c".into(),
                content: "1".into(),
            },
        ] {
            let event = SessionEvent::from_message(&message);
            let line = serde_json::to_string(&event).unwrap();
            let back: SessionEvent = serde_json::from_str(&line).unwrap();
            assert_eq!(back.to_message(), Some(message));
        }
    }
}

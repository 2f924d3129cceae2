//! The conversation of one session, kept in three places at once as each
//! message happens: the messages sent to the model, the shared context store
//! (so `context.search` and the search pane find it) and the session file.

use std::collections::HashMap;

use serde_json::Value;

use super::provider::{ChatMessage, Usage};
use super::tool_result;
use crate::context::{self, SharedContext};
use crate::session::{LoadedSession, SessionEvent, SessionWriter};

/// Delimits the snapshot inside a user message.
pub const SNAPSHOT_OPEN: &str = "<runtime-context-snapshot>";
pub const SNAPSHOT_CLOSE: &str = "</runtime-context-snapshot>";

/// The user message as sent: the prompt, then the snapshot in its block.
pub fn user_content(prompt: &str, snapshot: Option<&str>) -> String {
    match snapshot {
        Some(markdown) => format!(
            "{prompt}\n\n{SNAPSHOT_OPEN}\n{}\n{SNAPSHOT_CLOSE}",
            markdown.trim_end()
        ),
        None => prompt.to_owned(),
    }
}

/// The prompt part of a sent user message (what people read and search).
pub fn prompt_of(content: &str) -> &str {
    match content.find(&format!("\n\n{SNAPSHOT_OPEN}")) {
        Some(at) => &content[..at],
        None => content,
    }
}

/// The code of a `code_action` call, or why the arguments are unusable.
pub fn code_of(arguments: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(arguments)
        .map_err(|e| format!("the arguments are not valid JSON ({e}): {arguments:.200}"))?;
    match value.get("code") {
        Some(Value::String(code)) => Ok(code.clone()),
        Some(_) => Err("`code` must be a string of Python source".into()),
        None => Err("missing the `code` argument (expected {\"code\": \"...\"})".into()),
    }
}

/// Messages of one session. Not shared: the turn in progress owns it.
pub struct Conversation {
    messages: Vec<ChatMessage>,
    context: SharedContext,
    session: Option<SessionWriter>,
    /// Code of each tool call by id, so tool messages can carry it.
    codes: HashMap<String, String>,
    /// The first session write error, reported once.
    pub session_error: Option<String>,
}

impl Conversation {
    pub fn new(context: SharedContext, session: Option<SessionWriter>) -> Self {
        Self {
            messages: Vec::new(),
            context,
            session,
            codes: HashMap::new(),
            session_error: None,
        }
    }

    /// Rebuilds a conversation from a session file, filling `context`.
    pub fn resume(loaded: &LoadedSession, context: SharedContext, session: SessionWriter) -> Self {
        let mut conversation = Self::new(context, None);
        for message in loaded.events().filter_map(SessionEvent::to_message) {
            conversation.push(message);
        }
        conversation.session = Some(session);
        conversation
    }

    /// Starts saving to `session` (from the next message on).
    pub fn set_session(&mut self, session: SessionWriter) {
        self.session = Some(session);
    }

    pub fn messages(&self) -> &[ChatMessage] {
        &self.messages
    }

    pub fn context(&self) -> &SharedContext {
        &self.context
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().map(SessionWriter::id)
    }

    /// The code a tool call ran (for resumed conversations' cells).
    pub fn code_for(&self, call_id: &str) -> Option<&str> {
        self.codes.get(call_id).map(String::as_str)
    }

    /// Appends a message everywhere: model history, context store, session.
    pub fn push(&mut self, message: ChatMessage) {
        if let ChatMessage::Assistant { tool_calls, .. } = &message {
            for call in tool_calls {
                let code = code_of(&call.arguments).unwrap_or_else(|_| call.arguments.clone());
                self.codes.insert(call.id.clone(), code);
            }
        }
        if let Some(entry) = self.context_message(&message) {
            self.context.push(entry);
        }
        self.record(&SessionEvent::from_message(&message));
        self.messages.push(message);
    }

    pub fn record_usage(&mut self, usage: Usage) {
        self.record(&SessionEvent::Usage {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        });
    }

    pub fn record_error(&mut self, message: &str) {
        self.record(&SessionEvent::Error {
            message: message.to_owned(),
        });
    }

    pub fn record(&mut self, event: &SessionEvent) {
        if let Some(session) = &mut self.session
            && let Err(error) = session.append(event)
            && self.session_error.is_none()
        {
            self.session_error = Some(format!("the session is no longer saved: {error}"));
        }
    }

    /// How a chat message reads in the context store: prompts without the
    /// snapshot block, tool results as readable output with their code.
    fn context_message(&self, message: &ChatMessage) -> Option<context::Message> {
        match message {
            ChatMessage::System { .. } => None,
            ChatMessage::User { content } => Some(context::Message::user(prompt_of(content))),
            ChatMessage::Assistant { content, .. } => content
                .as_deref()
                .filter(|c| !c.is_empty())
                .map(context::Message::assistant),
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => {
                let text = serde_json::from_str::<Value>(content)
                    .map(|v| tool_result::readable(&v))
                    .unwrap_or_else(|_| content.clone());
                Some(
                    context::Message::tool(text).with_tool_call(context::ToolCall {
                        id: tool_call_id.clone(),
                        name: "code_action".into(),
                        code: self.codes.get(tool_call_id).cloned(),
                    }),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_block_round_trips() {
        let sent = user_content("why?", Some("# Snapshot\n"));
        assert!(
            sent.contains("<runtime-context-snapshot>\n# Snapshot\n</runtime-context-snapshot>")
        );
        assert_eq!(prompt_of(&sent), "why?");
        assert_eq!(prompt_of("plain"), "plain");
    }

    #[test]
    fn code_arguments_are_checked() {
        assert_eq!(code_of(r#"{"code":"1+1"}"#).unwrap(), "1+1");
        assert!(
            code_of("{\"code\":")
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(code_of("{}").unwrap_err().contains("missing"));
        assert!(code_of(r#"{"code":1}"#).unwrap_err().contains("string"));
    }
}

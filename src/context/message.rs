//! One entry of the conversation, in the shape sessions persist (JSONL) and
//! the `context` capability hands to the model.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// A message's place in the conversation, and its one name everywhere:
/// the context store (`context.slice(i, i + 1)`, search hits), the session
/// file (each message line carries it), the prompt's omitted-range note,
/// compaction markers, pins and the conversation pane's entries all speak
/// in it. Messages are only ever appended, so an id never changes meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(pub usize);

impl fmt::Display for MessageId {
    /// `#12`: how people and the model cite a message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Who produced a message. Serialised lower-case, as chat APIs spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::System, Role::User, Role::Assistant, Role::Tool];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// System prompts are instructions, not conversation: searching them would
    /// make every query hit the same boilerplate, so only these roles are indexed.
    pub(crate) fn is_searchable(self) -> bool {
        !matches!(self, Role::System)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of `system`, `user`, `assistant`, `tool`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role `{0}` (expected system, user, assistant or tool)")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownRole(s.to_string()))
    }
}

/// Links an assistant's tool call to the tool message that answers it.
///
/// On an assistant message it describes the call (for `code_action`, `code`
/// holds the Python the model wrote); on a tool message it names the call the
/// output belongs to, usually with `code: None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A conversation message. `timestamp_ms` is Unix time in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<CallRef>,
    #[serde(default)]
    pub timestamp_ms: u64,
}

impl Message {
    /// A message stamped with the current wall-clock time.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_call: None,
            timestamp_ms: now_ms(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    pub fn tool(content: impl Into<String>) -> Self {
        Self::new(Role::Tool, content)
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    pub fn with_tool_call(mut self, call: CallRef) -> Self {
        self.tool_call = Some(call);
        self
    }

    pub fn with_timestamp_ms(mut self, timestamp_ms: u64) -> Self {
        self.timestamp_ms = timestamp_ms;
        self
    }

    /// The text search sees: the content, then the code of the tool call (if
    /// any) on its own line, so `context.search("checkAuth")` also finds the
    /// cell that called it. Borrowed when there is no code, to keep indexing
    /// allocation-free for plain messages.
    pub fn searchable_text(&self) -> std::borrow::Cow<'_, str> {
        match self
            .tool_call
            .as_ref()
            .and_then(|call| call.code.as_deref())
        {
            Some(code) if !code.is_empty() => {
                std::borrow::Cow::Owned(format!("{}\n{}", self.content, code))
            }
            _ => std::borrow::Cow::Borrowed(&self.content),
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

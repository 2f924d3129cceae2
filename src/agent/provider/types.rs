//! The data a provider consumes and produces. Host-agnostic: no HTTP, no
//! terminal, so the turn loop, the scripted demo and the sessions share them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        /// `None` when the model only called tools.
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of a tool call, answering the call with the same id.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// How an answer cut short (cancelled, or a broken stream) ends in the
/// history: `[answer cut off: why]`, so the model (and the scripted demo)
/// can tell it from a finished one.
pub const CUT_OFF_MARK: &str = "[answer cut off:";

impl ChatMessage {
    /// An assistant answer that was cut short (see [`CUT_OFF_MARK`]).
    pub fn is_cut_off(&self) -> bool {
        matches!(self, ChatMessage::Assistant { content: Some(text), .. } if text.contains(CUT_OFF_MARK))
    }
}

/// A function call the model asked for. `arguments` is the raw JSON text
/// exactly as the model wrote it: parsing (and reporting a parse error back
/// to the model) is the turn loop's job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A function tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Everything one model call needs besides the provider's own settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
}

/// Token accounting reported by the server (usually in the last chunk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    /// Hit `max_tokens` or the context limit: the answer is cut.
    Length,
    ToolCalls,
    ContentFilter,
    Other(String),
}

impl FinishReason {
    pub fn from_wire(text: &str) -> Self {
        match text {
            "stop" | "eos" | "end_turn" => FinishReason::Stop,
            "length" | "max_tokens" => FinishReason::Length,
            // `function_call` is the legacy name of the same thing.
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        }
    }
}

/// What a provider stream reports, in order. The stream ends after
/// `Finished` (success) or `Error` (failure); a closed channel without
/// either means the stream was cancelled.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderEvent {
    /// A piece of the answer text.
    TextDelta(String),
    /// A piece of the model's visible reasoning (`reasoning_content` on
    /// vLLM/DeepSeek, `reasoning` on Ollama/LM Studio); not part of the answer.
    ReasoningDelta(String),
    /// A new tool call. `index` is dense (0, 1, 2…) in the order calls
    /// started, even when the server's own indexes are missing or reused.
    ToolCallStarted {
        index: usize,
        id: String,
        name: String,
    },
    /// The next piece of a started call's raw JSON arguments.
    ToolCallArgumentsDelta {
        index: usize,
        delta: String,
    },
    Usage(Usage),
    /// The turn is complete.
    Finished(FinishReason),
    /// The request failed in a way worth retrying; the provider waits `wait`
    /// and tries again (attempt `attempt` of `max_attempts` comes next).
    Retrying {
        attempt: u32,
        max_attempts: u32,
        wait: Duration,
        reason: String,
    },
    /// The turn failed; anything streamed before stays valid but partial.
    Error(ProviderError),
}

/// A failure the user can read. Never contains an API key: the key is
/// redacted from every server message before it gets here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    #[error("{}", unauthorized_message(.status, .key_env, .key_set, .message))]
    Unauthorized {
        status: u16,
        /// The NAME of the environment variable the key is read from.
        key_env: String,
        key_set: bool,
        message: String,
    },
    #[error("the model server answered HTTP {status}: {message}")]
    Http { status: u16, message: String },
    #[error("gave up after {attempts} attempt{}: {last}", if *.attempts == 1 { "" } else { "s" })]
    RetriesExhausted { attempts: u32, last: String },
    #[error("cannot reach the model server: {0}")]
    Connect(String),
    #[error("the stream broke off: {0}")]
    StreamInterrupted(String),
    #[error("the model server sent something unreadable: {0}")]
    BadResponse(String),
    #[error("the model server reported an error: {0}")]
    Api(String),
    #[error("provider configuration: {0}")]
    Config(String),
    #[error("demo script: {0}")]
    Script(String),
}

fn unauthorized_message(status: &u16, key_env: &str, key_set: &bool, message: &str) -> String {
    let hint = if *key_set {
        format!("check the API key in the environment variable {key_env}")
    } else {
        format!("the environment variable {key_env} is not set; export your API key there")
    };
    if message.is_empty() {
        format!("the model server refused the request (HTTP {status}): {hint}")
    } else {
        format!("the model server refused the request (HTTP {status}): {message}; {hint}")
    }
}

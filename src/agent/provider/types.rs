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
        /// The model's signed reasoning blocks, in order, kept only because
        /// Anthropic requires them back, unmodified, with the tool calls
        /// they led to. Unsigned reasoning (OpenAI-compatible servers) is
        /// never stored here: it is shown, not sent back.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        thinking: Vec<Thinking>,
    },
    /// The result of a tool call, answering the call with the same id.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// One reasoning block as the server sent it. Anthropic signs each
/// block (`signature`) or sends it encrypted (`redacted`); a block goes back
/// to the server only whole and unmodified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    /// The reasoning as the user reads it (empty for a redacted block).
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// A `redacted_thinking` block's opaque `data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
}

impl Thinking {
    /// Signed or redacted: the server can check it, so it may go back.
    pub(crate) fn is_verifiable(&self) -> bool {
        self.signature.is_some() || self.redacted.is_some()
    }
}

/// How an answer cut short (cancelled, or a broken stream) ends in the
/// history: `[answer cut off: why]`, so the model (and the scripted demo)
/// can tell it from a finished one.
pub const CUT_OFF_MARK: &str = "[answer cut off:";

impl ChatMessage {
    /// An assistant answer that was cut short (see [`CUT_OFF_MARK`]).
    pub(crate) fn is_cut_off(&self) -> bool {
        matches!(self, ChatMessage::Assistant { content: Some(text), .. } if text.contains(CUT_OFF_MARK))
    }

    /// An assistant message without reasoning blocks (what every caller
    /// but a provider's decoder builds).
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        ChatMessage::Assistant {
            content,
            tool_calls,
            thinking: Vec::new(),
        }
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
/// `prompt_tokens` is the whole prompt, cached parts included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Of `prompt_tokens`, read from the server's prompt cache (Anthropic's
    /// `cache_read_input_tokens`, OpenAI's `prompt_tokens_details.cached_tokens`).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens`, written to the cache by this call (Anthropic's
    /// `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Reported by a server that drops what exceeds its window instead of
    /// refusing the request (Ollama, whose chunks carry
    /// `system_fingerprint: fp_ollama`): a count far below what was sent
    /// is then a cut, not another tokenizer (`turn::silent_cut`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cuts_silently: bool,
}

impl Usage {
    /// Adds another call's counts (a turn makes several calls).
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cuts_silently |= other.cuts_silently;
    }
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
    pub(crate) fn from_wire(text: &str) -> Self {
        match text {
            // `end_turn`, `stop_sequence`: Anthropic's names.
            "stop" | "eos" | "end_turn" | "stop_sequence" => FinishReason::Stop,
            "length" | "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
            // `function_call` is the legacy name of the same thing.
            "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolCalls,
            "content_filter" | "refusal" => FinishReason::ContentFilter,
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
    /// vLLM/DeepSeek, `reasoning` on Ollama/LM Studio, `<think>` in the
    /// content, Anthropic's `thinking` blocks); not part of the answer.
    ReasoningDelta(String),
    /// The reasoning block being streamed is complete and signed
    /// (Anthropic's `signature_delta`): it must go back with the tool
    /// calls that follow. The next `ReasoningDelta` starts a new block.
    ReasoningSigned(String),
    /// A reasoning block the user cannot read (Anthropic's
    /// `redacted_thinking`), passed back as it came.
    ReasoningRedacted(String),
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
    /// The request does not fit the model's window, in the server's words
    /// (see [`super::overflow`]): the turn loop makes room and sends again.
    #[error("{0}")]
    ContextOverflow(super::overflow::Overflow),
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

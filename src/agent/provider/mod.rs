//! Model providers: anything that turns a [`ChatRequest`] into a stream of
//! [`ProviderEvent`]s. The OpenAI-compatible HTTP client and the scripted
//! demo player share one event path, so the UI cannot tell them apart.
//!
//! From a single-threaded UI loop: call [`ModelProvider::stream_chat`] (it
//! spawns a task and returns at once), then either poll
//! [`ProviderStream::try_next`] each tick or move the stream into a task that
//! forwards events as app messages, keeping a [`CancelHandle`] to stop it.
//! Feed events to a [`TurnAssembler`] to get the [`AssistantTurn`].

pub mod openai;
pub(crate) mod redact;
pub(crate) mod scripted;
pub mod sse;
mod stream;
mod types;

pub use openai::{OpenAiConfig, OpenAiProvider};
pub use scripted::ScriptedProvider;
pub use stream::{AssistantTurn, CancelHandle, EVENT_BUFFER, ProviderStream, TurnAssembler};
pub use types::{
    CUT_OFF_MARK, ChatMessage, ChatRequest, FinishReason, ProviderError, ProviderEvent, ToolCall,
    ToolSpec, Usage,
};

/// A source of model answers.
pub trait ModelProvider: Send + Sync {
    /// Starts one model call. Returns immediately (the work runs on a
    /// spawned tokio task); must be called inside a tokio runtime.
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream;

    /// What to show in the status bar, e.g. `gpt-4o @ https://…`.
    fn label(&self) -> String;
}

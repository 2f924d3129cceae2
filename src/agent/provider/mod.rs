//! Model providers: anything that turns a [`ChatRequest`] into a stream of
//! [`ProviderEvent`]s. The OpenAI-compatible HTTP client and the scripted
//! demo player share one event path, so the UI cannot tell them apart.
//!
//! From a single-threaded UI loop: call [`ModelProvider::stream_chat`] (it
//! spawns a task and returns at once), then either poll
//! [`ProviderStream::try_next`] each tick or move the stream into a task that
//! forwards events as app messages, keeping a [`CancelHandle`] to stop it.
//! Feed events to a [`TurnAssembler`] to get the [`AssistantTurn`].

pub mod anthropic;
mod client;
pub(crate) mod http;
pub mod openai;
pub mod overflow;
pub(crate) mod redact;
mod retry;
pub(crate) mod scripted;
pub mod sse;
mod stream;
mod types;

use std::sync::Arc;

use futures_util::future::BoxFuture;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use client::HttpProvider;
pub use http::HttpSettings;
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use overflow::Overflow;
pub use scripted::ScriptedProvider;
pub use stream::{AssistantTurn, CancelHandle, EVENT_BUFFER, ProviderStream, TurnAssembler};
pub use types::{
    CUT_OFF_MARK, ChatMessage, ChatRequest, FinishReason, ProviderError, ProviderEvent, Thinking,
    ToolCall, ToolSpec, Usage,
};

/// A source of model answers.
pub trait ModelProvider: Send + Sync {
    /// Starts one model call. Returns immediately (the work runs on a
    /// spawned tokio task); must be called inside a tokio runtime.
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream;

    /// What to show in the status bar, e.g. `gpt-4o @ https://…`.
    fn label(&self) -> String;

    /// The conversation part of the body [`ModelProvider::stream_chat`]
    /// would send for `request`, for F2's JSON view (built by the same
    /// function as the body, so the preview cannot drift from it).
    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value {
        openai::messages_json(&request.messages)
    }

    /// The model name requests go to (`None`: the provider has no choice
    /// of model, like the scripted demo).
    fn model(&self) -> Option<String> {
        None
    }

    /// The models the server offers (`GET /v1/models`), for `/model`.
    fn list_models(&self) -> BoxFuture<'static, Result<Vec<String>, ProviderError>> {
        Box::pin(async {
            Err(ProviderError::Config(
                "this provider has no list of models".into(),
            ))
        })
    }

    /// The same server and settings with another model, for `/model NAME`
    /// (the caller swaps it in for the next turn).
    fn with_model(&self, _model: &str) -> Result<Arc<dyn ModelProvider>, ProviderError> {
        Err(ProviderError::Config(
            "this provider cannot switch models".into(),
        ))
    }
}

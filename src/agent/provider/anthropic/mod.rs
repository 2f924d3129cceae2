//! The native Anthropic Messages API client (`/v1/messages`): its own
//! request shape (top-level `system`, content blocks, `tool_use` and
//! `tool_result`), its event stream, extended thinking with signed blocks,
//! and prompt caching of the stable prefix.

mod client;
mod config;
mod decode;
mod wire;

pub use client::AnthropicProvider;
pub use config::{API_VERSION, AnthropicConfig, DEFAULT_BASE_URL, DEFAULT_KEY_ENV};
pub use decode::EventDecoder;
pub use wire::request_body;

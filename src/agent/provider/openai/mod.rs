//! The OpenAI-compatible Chat Completions client.

mod client;
mod config;
mod decode;
mod retry;
mod wire;

pub use client::OpenAiProvider;
pub(crate) use client::install_crypto_provider;
pub use config::{ApiKey, DEFAULT_BASE_URL, DEFAULT_KEY_ENV, OpenAiConfig};
pub use decode::StreamDecoder;
pub use retry::parse_http_date;
pub use wire::messages_json;

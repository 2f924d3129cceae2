//! The OpenAI-compatible Chat Completions client.

mod client;
mod config;
mod decode;
mod think;
mod wire;

pub use crate::agent::provider::http::HttpSettings;
pub(crate) use crate::agent::provider::http::install_crypto_provider;
pub use crate::agent::provider::retry::parse_http_date;
pub use client::OpenAiProvider;
pub use config::{ApiKey, DEFAULT_BASE_URL, DEFAULT_KEY_ENV, OpenAiConfig};
pub use decode::StreamDecoder;
pub use wire::messages_json;

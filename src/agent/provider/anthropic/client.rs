//! The Messages client: Anthropic's headers and body, sent through the
//! shared HTTP call (`provider::http`), which retries 429/529 (and an
//! `overloaded_error` that opens a stream) honouring `retry-after`.

use std::sync::Arc;

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderValue};

use super::config::{API_VERSION, AnthropicConfig};
use super::decode::EventDecoder;
use super::wire::request_body;
use crate::agent::provider::client::{HttpApi, HttpProvider, connect};
use crate::agent::provider::http::Endpoint;
use crate::agent::provider::stream::ProviderStream;
use crate::agent::provider::types::{ChatRequest, ProviderError};

/// A client for Anthropic's native Messages API.
pub type AnthropicProvider = HttpProvider<AnthropicConfig>;

impl HttpProvider<AnthropicConfig> {
    /// Validates the settings and builds the HTTP client (no network yet).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        connect(config)
    }
}

impl HttpApi for AnthropicConfig {
    fn model(&self) -> &str {
        &self.model
    }

    fn set_model(&mut self, model: &str) {
        model.clone_into(&mut self.model);
    }

    fn endpoint(&self) -> Result<Endpoint, ProviderError> {
        Endpoint::new(
            AnthropicConfig::endpoint(self)?,
            headers(self)?,
            self.http.clone(),
            self.api_key.clone(),
            &self.api_key_env,
        )
    }

    fn models_url(&self) -> Result<Url, ProviderError> {
        AnthropicConfig::models_url(self)
    }

    fn stream(&self, endpoint: &Arc<Endpoint>, request: &ChatRequest) -> ProviderStream {
        let body = request_body(self, request).to_string().into_bytes();
        endpoint.stream::<EventDecoder>(body)
    }

    /// `system` and `messages`, with their `cache_control` marks.
    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value {
        let mut body = request_body(self, request);
        serde_json::json!({
            "system": body["system"].take(),
            "messages": body["messages"].take(),
        })
    }
}

/// `x-api-key` (not a bearer token) and the API version every request names.
fn headers(config: &AnthropicConfig) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
    if let Some(key) = &config.api_key {
        let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
            ProviderError::Config(format!(
                "the API key in {} contains characters not allowed in a header",
                config.api_key_env
            ))
        })?;
        value.set_sensitive(true);
        headers.insert("x-api-key", value);
    }
    Ok(headers)
}

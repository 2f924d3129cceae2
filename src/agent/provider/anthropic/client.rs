//! The Messages client: Anthropic's headers and body, sent through the
//! shared HTTP call (`provider::http`), which retries 429/529 (and an
//! `overloaded_error` that opens a stream) honouring `retry-after`.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};

use super::config::{API_VERSION, AnthropicConfig};
use super::decode::EventDecoder;
use super::wire::request_body;
use crate::agent::provider::ModelProvider;
use crate::agent::provider::http::{Endpoint, model_ids};
use crate::agent::provider::stream::ProviderStream;
use crate::agent::provider::types::{ChatRequest, ProviderError};

/// A client for Anthropic's native Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: AnthropicConfig,
    endpoint: Arc<Endpoint>,
}

impl AnthropicProvider {
    /// Validates the settings and builds the HTTP client (no network yet).
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        let endpoint = Endpoint::new(
            config.endpoint()?,
            headers(&config)?,
            config.http.clone(),
            config.api_key.clone(),
            &config.api_key_env,
        )?;
        Ok(AnthropicProvider {
            config,
            endpoint: Arc::new(endpoint),
        })
    }

    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

impl ModelProvider for AnthropicProvider {
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream {
        let body = request_body(&self.config, &request)
            .to_string()
            .into_bytes();
        self.endpoint.stream::<EventDecoder>(body)
    }

    fn label(&self) -> String {
        self.endpoint.label(&self.config.model)
    }

    /// `system` and `messages`, with their `cache_control` marks.
    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value {
        let mut body = request_body(&self.config, request);
        serde_json::json!({
            "system": body["system"].take(),
            "messages": body["messages"].take(),
        })
    }

    fn model(&self) -> Option<String> {
        Some(self.config.model.clone())
    }

    fn list_models(&self) -> BoxFuture<'static, Result<Vec<String>, ProviderError>> {
        let endpoint = self.endpoint.clone();
        let url = self.config.models_url();
        Box::pin(async move { model_ids(&endpoint.get_json(url?).await?) })
    }

    fn with_model(&self, model: &str) -> Result<Arc<dyn ModelProvider>, ProviderError> {
        let mut config = self.config.clone();
        config.model = model.to_owned();
        Ok(Arc::new(AnthropicProvider {
            config,
            endpoint: self.endpoint.clone(),
        }))
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

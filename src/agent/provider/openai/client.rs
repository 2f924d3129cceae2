//! The Chat Completions client: the request body and headers of this API,
//! sent through the shared HTTP call (`provider::http`).

use std::sync::Arc;

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use super::config::OpenAiConfig;
use super::decode::StreamDecoder;
use super::wire::request_body;
use crate::agent::provider::client::{HttpApi, HttpProvider, connect};
use crate::agent::provider::http::Endpoint;
use crate::agent::provider::stream::ProviderStream;
use crate::agent::provider::types::{ChatRequest, ProviderError};

/// A Chat Completions client for OpenAI and every server that copies its
/// API (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq…).
pub type OpenAiProvider = HttpProvider<OpenAiConfig>;

impl HttpProvider<OpenAiConfig> {
    /// Validates the settings and builds the HTTP client (no network yet).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        connect(config)
    }
}

impl HttpApi for OpenAiConfig {
    fn model(&self) -> &str {
        &self.model
    }

    fn set_model(&mut self, model: &str) {
        model.clone_into(&mut self.model);
    }

    fn endpoint(&self) -> Result<Endpoint, ProviderError> {
        Endpoint::new(
            OpenAiConfig::endpoint(self)?,
            build_headers(self)?,
            self.http.clone(),
            self.api_key.clone(),
            &self.api_key_env,
        )
    }

    fn models_url(&self) -> Result<Url, ProviderError> {
        OpenAiConfig::models_url(self)
    }

    fn stream(&self, endpoint: &Arc<Endpoint>, request: &ChatRequest) -> ProviderStream {
        let body = request_body(&self.model, request).to_string().into_bytes();
        endpoint.stream::<StreamDecoder>(body)
    }

    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value {
        super::messages_json(&request.messages)
    }
}

fn build_headers(config: &OpenAiConfig) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.extra_headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ProviderError::Config(format!("header name `{name}` is not valid")))?;
        // The value is not quoted: it may be a secret.
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            ProviderError::Config(format!("the value of header `{name}` is not valid"))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    if let Some(key) = &config.api_key {
        let mut value =
            HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                ProviderError::Config(format!(
                    "the API key in {} contains characters not allowed in a header",
                    config.api_key_env
                ))
            })?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

//! The Chat Completions client: the request body and headers of this API,
//! sent through the shared HTTP call (`provider::http`).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

use super::config::OpenAiConfig;
use super::decode::StreamDecoder;
use super::wire::request_body;
use crate::agent::provider::ModelProvider;
use crate::agent::provider::http::{Endpoint, model_ids};
use crate::agent::provider::stream::ProviderStream;
use crate::agent::provider::types::{ChatRequest, ProviderError};

/// A Chat Completions client for OpenAI and every server that copies its
/// API (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq…).
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    endpoint: Arc<Endpoint>,
}

impl OpenAiProvider {
    /// Validates the settings and builds the HTTP client (no network yet).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let endpoint = Endpoint::new(
            config.endpoint()?,
            build_headers(&config)?,
            config.http.clone(),
            config.api_key.clone(),
            &config.api_key_env,
        )?;
        Ok(OpenAiProvider {
            config,
            endpoint: Arc::new(endpoint),
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl ModelProvider for OpenAiProvider {
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream {
        let body = request_body(&self.config.model, &request)
            .to_string()
            .into_bytes();
        self.endpoint.stream::<StreamDecoder>(body)
    }

    fn label(&self) -> String {
        self.endpoint.label(&self.config.model)
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
        Ok(Arc::new(OpenAiProvider {
            config,
            endpoint: self.endpoint.clone(),
        }))
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

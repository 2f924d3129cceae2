//! The one HTTP model client. What the APIs differ in (their URLs, headers,
//! body and stream format) is each config's [`HttpApi`]; the client around
//! it (`label`, `model`, `list_models`, `with_model`, streaming) is written
//! here once, so a fix to one holds for every API.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use reqwest::Url;

use super::ModelProvider;
use super::http::{Endpoint, model_ids};
use super::stream::ProviderStream;
use super::types::{ChatRequest, ProviderError};

/// One API's side of the client, implemented by its config.
pub(crate) trait HttpApi: Clone + Send + Sync + 'static {
    /// The model requests go to.
    fn model(&self) -> &str;
    /// Another model on the same server, for `/model NAME`.
    fn set_model(&mut self, model: &str);
    /// The streaming endpoint with this API's headers (the key among them).
    fn endpoint(&self) -> Result<Endpoint, ProviderError>;
    /// `GET …/models`, what `/model` lists.
    fn models_url(&self) -> Result<Url, ProviderError>;
    /// Sends `request` as this API's body and decodes this API's stream.
    fn stream(&self, endpoint: &Arc<Endpoint>, request: &ChatRequest) -> ProviderStream;
    /// The conversation part of that body, for F2's JSON view.
    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value;
}

/// A model server reached over HTTP through the API `A` (see
/// `OpenAiProvider`, `AnthropicProvider`).
#[derive(Debug, Clone)]
pub struct HttpProvider<A> {
    config: A,
    endpoint: Arc<Endpoint>,
}

/// Validates the settings and builds the HTTP client (no network yet):
/// each API's `new`.
pub(crate) fn connect<A: HttpApi>(config: A) -> Result<HttpProvider<A>, ProviderError> {
    let endpoint = Arc::new(config.endpoint()?);
    Ok(HttpProvider { config, endpoint })
}

impl<A: HttpApi> ModelProvider for HttpProvider<A> {
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream {
        self.config.stream(&self.endpoint, &request)
    }

    fn label(&self) -> String {
        self.endpoint.label(self.config.model())
    }

    fn messages_json(&self, request: &ChatRequest) -> serde_json::Value {
        self.config.messages_json(request)
    }

    fn model(&self) -> Option<String> {
        Some(self.config.model().to_owned())
    }

    fn list_models(&self) -> BoxFuture<'static, Result<Vec<String>, ProviderError>> {
        let endpoint = Arc::clone(&self.endpoint);
        let url = self.config.models_url();
        Box::pin(async move { model_ids(&endpoint.get_json(url?).await?) })
    }

    fn with_model(&self, model: &str) -> Result<Arc<dyn ModelProvider>, ProviderError> {
        let mut config = self.config.clone();
        config.set_model(model);
        Ok(Arc::new(Self {
            config,
            endpoint: Arc::clone(&self.endpoint),
        }))
    }
}

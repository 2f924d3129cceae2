//! Settings of the Anthropic client.

use reqwest::Url;

use crate::agent::provider::http::{HttpSettings, endpoint_url, sibling_url};
use crate::agent::provider::openai::ApiKey;
use crate::agent::provider::types::ProviderError;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The `anthropic-version` header every request carries.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` (required by the Messages API) when neither the request
/// nor `[model] reserve_output` names one.
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8_192;

/// Everything the client needs besides the request itself. `Debug` is
/// safe: [`ApiKey`] never prints the key.
#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    /// `https://api.anthropic.com`, `…/v1`, or the full `…/v1/messages`.
    pub base_url: String,
    pub model: String,
    /// The NAME of the environment variable the key came from, for messages.
    pub api_key_env: String,
    pub api_key: Option<ApiKey>,
    /// The answer's limit when the request sets none.
    pub max_tokens: u32,
    /// Extended thinking's `budget_tokens` (`None`: off). Added on top of
    /// `max_tokens`, which the budget must stay under.
    pub thinking_budget: Option<u32>,
    pub http: HttpSettings,
}

impl AnthropicConfig {
    /// Defaults for `model` at `base_url` (or Anthropic's API), with the
    /// key read from the variable `api_key_env` through `env`.
    pub fn new(
        base_url: Option<&str>,
        model: &str,
        api_key_env: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        AnthropicConfig {
            base_url: base_url.unwrap_or(DEFAULT_BASE_URL).to_owned(),
            model: model.to_owned(),
            api_key_env: api_key_env.to_owned(),
            api_key: env(api_key_env).and_then(ApiKey::new),
            max_tokens: DEFAULT_MAX_TOKENS,
            thinking_budget: None,
            http: HttpSettings::default(),
        }
    }

    /// The Messages URL: `base_url` used as is when it ends in
    /// `/messages`; a bare host gets `/v1/messages`; any other path
    /// (`…/v1`, a proxy's prefix) gets `/messages`.
    pub fn endpoint(&self) -> Result<Url, ProviderError> {
        endpoint_url(&self.base_url, "messages")
    }

    /// `GET …/v1/models`, next to the Messages URL.
    pub(crate) fn models_url(&self) -> Result<Url, ProviderError> {
        sibling_url(&self.endpoint()?, "/messages", "models")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base: Option<&str>) -> AnthropicConfig {
        AnthropicConfig::new(base, "claude", DEFAULT_KEY_ENV, &|_| None)
    }

    #[test]
    fn endpoint_and_models_url_forms() {
        for (base, messages, models) in [
            (
                None,
                "https://api.anthropic.com/v1/messages",
                "https://api.anthropic.com/v1/models",
            ),
            (
                Some("http://127.0.0.1:9/"),
                "http://127.0.0.1:9/v1/messages",
                "http://127.0.0.1:9/v1/models",
            ),
            (
                Some("https://proxy.example/anthropic/v1"),
                "https://proxy.example/anthropic/v1/messages",
                "https://proxy.example/anthropic/v1/models",
            ),
            (
                Some("http://h/v1/messages"),
                "http://h/v1/messages",
                "http://h/v1/models",
            ),
        ] {
            let c = config(base);
            assert_eq!(c.endpoint().unwrap().as_str(), messages, "{base:?}");
            assert_eq!(c.models_url().unwrap().as_str(), models, "{base:?}");
        }
        assert!(matches!(
            config(Some("api.anthropic.com")).endpoint(),
            Err(ProviderError::Config(_))
        ));
    }

    #[test]
    fn the_key_comes_from_the_named_variable_and_never_shows() {
        let secret = "sk-ant-SECRET-0123456789";
        let c = AnthropicConfig::new(None, "claude", "MY_ANTHROPIC", &|name| {
            (name == "MY_ANTHROPIC").then(|| secret.to_owned())
        });
        assert!(c.api_key.is_some());
        let debug = format!("{c:?}");
        assert!(!debug.contains("SECRET"), "{debug}");
        assert!(debug.contains("MY_ANTHROPIC"));
    }
}

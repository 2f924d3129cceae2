//! Settings of the OpenAI-compatible client. The API key lives in
//! [`ApiKey`], whose `Debug` never prints it.

use std::fmt;

use reqwest::Url;

use crate::agent::provider::http::{HttpSettings, endpoint_url, sibling_url};
use crate::agent::provider::types::ProviderError;

/// Used when no base URL is configured.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// A secret API key. No `Display`, and `Debug` prints `ApiKey([REDACTED])`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty string: an empty key is no key. The value is
    /// remembered for redaction (session files, the log), whatever its shape.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into();
        let trimmed = key.trim();
        if trimmed.is_empty() {
            return None;
        }
        crate::agent::provider::redact::remember_secret(trimmed);
        Some(ApiKey(trimmed.to_owned()))
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

/// Everything the client needs besides the request itself.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Any of `http://host:port`, `http://host:port/v1`, `https://host/any/prefix`
    /// or the full `…/chat/completions` URL; see [`OpenAiConfig::endpoint`].
    pub base_url: String,
    pub model: String,
    /// The NAME of the environment variable the key came from, for messages.
    pub api_key_env: String,
    /// `None` is fine for local servers (Ollama, llama.cpp, LM Studio, vLLM).
    pub api_key: Option<ApiKey>,
    /// Sent with every request (e.g. `OpenAI-Organization`, proxies' auth).
    /// Values may be secret too, so `Debug` hides them.
    pub extra_headers: Vec<(String, String)>,
    /// Timeouts and the retry policy (shared with the Anthropic client).
    pub http: HttpSettings,
}

impl OpenAiConfig {
    /// Defaults for `model` at `base_url` (or OpenAI), with the key read
    /// from the variable `api_key_env` through `env` (injected for tests).
    pub fn new(
        base_url: Option<&str>,
        model: &str,
        api_key_env: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        OpenAiConfig {
            base_url: base_url.unwrap_or(DEFAULT_BASE_URL).to_owned(),
            model: model.to_owned(),
            api_key_env: api_key_env.to_owned(),
            api_key: env(api_key_env).and_then(ApiKey::new),
            extra_headers: Vec::new(),
            http: HttpSettings::default(),
        }
    }

    /// `GET …/models`, next to the Chat Completions URL (what `/model` lists).
    pub(crate) fn models_url(&self) -> Result<Url, ProviderError> {
        sibling_url(&self.endpoint()?, "/chat/completions", "models")
    }

    /// The Chat Completions URL. Accepted forms of `base_url` (a trailing
    /// `/` is ignored):
    /// - ends in `/chat/completions`: used as is;
    /// - has a path (`…/v1`, `…/openai/v1`, `…/v1beta/openai`): `/chat/completions` is appended;
    /// - bare host (`http://localhost:11434`): `/v1/chat/completions` is appended.
    pub fn endpoint(&self) -> Result<Url, ProviderError> {
        endpoint_url(&self.base_url, "chat/completions")
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .extra_headers
            .iter()
            .map(|(name, _)| (name.as_str(), "[REDACTED]"))
            .collect();
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key)
            .field("extra_headers", &headers)
            .field("http", &self.http)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(base: &str) -> OpenAiConfig {
        OpenAiConfig::new(Some(base), "m", DEFAULT_KEY_ENV, &|_| None)
    }

    #[test]
    fn endpoint_accepts_the_documented_forms() {
        for (base, want) in [
            (
                "http://localhost:11434",
                "http://localhost:11434/v1/chat/completions",
            ),
            (
                "http://localhost:11434/",
                "http://localhost:11434/v1/chat/completions",
            ),
            (
                "http://localhost:11434/v1",
                "http://localhost:11434/v1/chat/completions",
            ),
            (
                "https://api.openai.com/v1/",
                "https://api.openai.com/v1/chat/completions",
            ),
            (
                "https://api.groq.com/openai/v1",
                "https://api.groq.com/openai/v1/chat/completions",
            ),
            (
                "http://h:8080/v1/chat/completions",
                "http://h:8080/v1/chat/completions",
            ),
        ] {
            assert_eq!(config(base).endpoint().unwrap().as_str(), want, "{base}");
        }
    }

    #[test]
    fn the_models_url_sits_next_to_the_endpoint() {
        for (base, want) in [
            ("http://localhost:11434", "http://localhost:11434/v1/models"),
            (
                "https://api.groq.com/openai/v1",
                "https://api.groq.com/openai/v1/models",
            ),
            (
                "http://h:8080/v1/chat/completions",
                "http://h:8080/v1/models",
            ),
        ] {
            assert_eq!(config(base).models_url().unwrap().as_str(), want, "{base}");
        }
    }

    #[test]
    fn bad_base_urls_are_readable_errors() {
        for base in ["localhost:11434", "not a url", "ftp://x/v1", ""] {
            let err = config(base).endpoint().unwrap_err();
            assert!(matches!(err, ProviderError::Config(_)), "{base}: {err}");
        }
    }

    #[test]
    fn debug_never_shows_the_key_or_header_values() {
        let secret = "sk-test-SUPERSECRET-0123456789abcdef";
        let mut c = OpenAiConfig::new(None, "gpt", "MY_KEY", &|name| {
            (name == "MY_KEY").then(|| secret.to_owned())
        });
        c.extra_headers
            .push(("api-key".into(), "header-secret-value".into()));
        assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some(secret));
        let debug = format!("{c:?} {:#?}", c);
        assert!(!debug.contains("SUPERSECRET"), "{debug}");
        assert!(!debug.contains("header-secret-value"), "{debug}");
        assert!(debug.contains("MY_KEY") && debug.contains("api-key"));
    }

    #[test]
    fn empty_key_is_no_key() {
        let c = OpenAiConfig::new(None, "m", "K", &|_| Some("  ".into()));
        assert!(c.api_key.is_none());
    }
}

//! The HTTP side: send the request, retry what is worth retrying, then
//! stream the body through the SSE parser and the decoder.

use std::sync::Once;
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use tokio::sync::mpsc;

use super::config::OpenAiConfig;
use super::decode::{StreamDecoder, preview};
use super::retry::{backoff, is_retryable, retry_after};
use super::wire::request_body;
use crate::agent::provider::ModelProvider;
use crate::agent::provider::redact::redact_secret;
use crate::agent::provider::sse::SseParser;
use crate::agent::provider::stream::ProviderStream;
use crate::agent::provider::types::{ChatRequest, ProviderError, ProviderEvent};

/// The most of an error body we read, to quote the server's message.
const ERROR_BODY_LIMIT: usize = 16 * 1024;

/// A Chat Completions client for OpenAI and every server that copies its
/// API (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq…).
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: OpenAiConfig,
    endpoint: Url,
    headers: HeaderMap,
    client: Client,
}

impl OpenAiProvider {
    /// Validates the settings and builds the HTTP client (no network yet).
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        install_crypto_provider();
        let endpoint = config.endpoint()?;
        let headers = build_headers(&config)?;
        let client = Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| ProviderError::Config(format!("HTTP client: {e}")))?;
        Ok(OpenAiProvider {
            config,
            endpoint,
            headers,
            client,
        })
    }

    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl ModelProvider for OpenAiProvider {
    fn stream_chat(&self, request: ChatRequest) -> ProviderStream {
        let call = Call {
            provider: self.clone(),
            body: request_body(&self.config.model, &request)
                .to_string()
                .into_bytes(),
        };
        ProviderStream::spawn(move |tx| call.run(tx))
    }

    fn label(&self) -> String {
        // Credentials in the URL (`http://user:pass@host`) are not shown.
        let mut shown = self.endpoint.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        format!("{} @ {shown}", self.config.model)
    }
}

/// rustls needs a process-wide crypto provider; we use ring (no C/asm
/// toolchain beyond cc, unlike aws-lc). An error means one is installed
/// already, which is just as good.
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn build_headers(config: &OpenAiConfig) -> Result<HeaderMap, ProviderError> {
    let mut headers = HeaderMap::new();
    headers.insert("accept", HeaderValue::from_static("text/event-stream"));
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

/// Why one attempt did not produce a stream.
enum AttemptError {
    /// Worth another try after `wait` (the server's, if it said).
    Retry {
        error: ProviderError,
        wait: Option<Duration>,
    },
    Fatal(ProviderError),
}

struct Call {
    provider: OpenAiProvider,
    /// The serialized request, reused unchanged by every attempt.
    body: Vec<u8>,
}

impl Call {
    async fn run(self, tx: mpsc::Sender<ProviderEvent>) {
        let config = &self.provider.config;
        let max_attempts = config.max_attempts.max(1);
        let mut attempt = 1;
        let started = std::time::Instant::now();
        let response = loop {
            let failure = match self.send().await {
                Ok(response) => break response,
                Err(AttemptError::Fatal(error)) => {
                    let _ = tx.send(ProviderEvent::Error(error)).await;
                    return;
                }
                Err(AttemptError::Retry { error, wait }) => (error, wait),
            };
            let (error, server_wait) = failure;
            if attempt >= max_attempts {
                // With retries off, the cause itself is the clearest message.
                let error = if attempt == 1 {
                    error
                } else {
                    ProviderError::RetriesExhausted {
                        attempts: attempt,
                        last: error.to_string(),
                    }
                };
                let _ = tx.send(ProviderEvent::Error(error)).await;
                return;
            }
            let reason = error.to_string();
            let wait = match server_wait {
                Some(wait) if wait > config.max_retry_after => {
                    let error = ProviderError::RetriesExhausted {
                        attempts: attempt,
                        last: format!("{reason} (the server asked to wait {}s)", wait.as_secs()),
                    };
                    let _ = tx.send(ProviderEvent::Error(error)).await;
                    return;
                }
                Some(wait) => wait,
                None => backoff(
                    attempt,
                    config.initial_backoff,
                    config.max_backoff,
                    fastrand::f64(),
                ),
            };
            // The next attempt could take up to the first-byte timeout after
            // the wait: give up now rather than overrun the budget.
            let spent = started.elapsed();
            if spent + wait + config.first_byte_timeout > config.retry_budget {
                let error = ProviderError::RetriesExhausted {
                    attempts: attempt,
                    last: format!(
                        "{reason} (another try would pass the {}s retry budget; {}s spent)",
                        config.retry_budget.as_secs(),
                        spent.as_secs()
                    ),
                };
                let _ = tx.send(ProviderEvent::Error(error)).await;
                return;
            }
            attempt += 1;
            let event = ProviderEvent::Retrying {
                attempt,
                max_attempts,
                wait,
                reason,
            };
            if tx.send(event).await.is_err() {
                return;
            }
            tokio::time::sleep(wait).await;
        };
        self.stream_body(response, &tx).await;
    }

    async fn send(&self) -> Result<Response, AttemptError> {
        let provider = &self.provider;
        let request = provider
            .client
            .post(provider.endpoint.clone())
            .headers(provider.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(self.body.clone())
            .send();
        let first_byte = provider.config.first_byte_timeout;
        let response = match tokio::time::timeout(first_byte, request).await {
            Err(_) => {
                return Err(AttemptError::Retry {
                    error: ProviderError::Connect(format!(
                        "connected, but no answer within {:.1}s (first-byte timeout)",
                        first_byte.as_secs_f64()
                    )),
                    wait: None,
                });
            }
            Ok(Err(error)) => {
                let reason = self.redact(&describe_reqwest_error(&error));
                let error_value = ProviderError::Connect(reason);
                return Err(if error.is_connect() || error.is_timeout() {
                    AttemptError::Retry {
                        error: error_value,
                        wait: None,
                    }
                } else {
                    AttemptError::Fatal(error_value)
                });
            }
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let wait = retry_after(response.headers(), SystemTime::now());
        let message =
            self.redact(&error_body_message(response, provider.config.idle_timeout).await);
        let code = status.as_u16();
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return Err(AttemptError::Fatal(ProviderError::Unauthorized {
                status: code,
                key_env: provider.config.api_key_env.clone(),
                key_set: provider.config.api_key.is_some(),
                message,
            }));
        }
        if is_retryable(status) {
            return Err(AttemptError::Retry {
                error: ProviderError::Http {
                    status: code,
                    message,
                },
                wait,
            });
        }
        Err(AttemptError::Fatal(ProviderError::Http {
            status: code,
            message,
        }))
    }

    async fn stream_body(&self, response: Response, tx: &mpsc::Sender<ProviderEvent>) {
        let idle = self.provider.config.idle_timeout;
        let mut body = response.bytes_stream();
        let mut sse = SseParser::default();
        let mut decoder = StreamDecoder::default();
        let outcome: Result<(), ProviderError> = async {
            loop {
                let next = tokio::time::timeout(idle, body.next()).await.map_err(|_| {
                    ProviderError::StreamInterrupted(format!("no data for {}s", idle.as_secs()))
                })?;
                let ended = next.is_none();
                let events = match next {
                    Some(Ok(bytes)) => sse
                        .push(&bytes)
                        .map_err(|e| ProviderError::BadResponse(e.to_string()))?,
                    Some(Err(error)) => {
                        return Err(ProviderError::StreamInterrupted(
                            self.redact(&describe_reqwest_error(&error)),
                        ));
                    }
                    None => sse.finish().into_iter().collect(),
                };
                for event in events {
                    let decoded = decoder.on_data(&event.data).map_err(|e| match e {
                        // An unreadable event right at the end of the body is
                        // one the connection cut in half, not a server bug.
                        ProviderError::BadResponse(_) if ended => ProviderError::StreamInterrupted(
                            "the connection closed in the middle of an event".into(),
                        ),
                        other => other,
                    })?;
                    for out in decoded {
                        if tx.send(out).await.is_err() {
                            return Ok(()); // the consumer went away
                        }
                    }
                    if decoder.is_done() {
                        return Ok(());
                    }
                }
                if ended {
                    for out in decoder.on_end()? {
                        if tx.send(out).await.is_err() {
                            return Ok(());
                        }
                    }
                    return Ok(());
                }
            }
        }
        .await;
        if let Err(error) = outcome {
            let _ = tx.send(ProviderEvent::Error(error)).await;
        }
    }

    fn redact(&self, text: &str) -> String {
        let key = self.provider.config.api_key.as_ref().map(|k| k.expose());
        redact_secret(text, key)
    }
}

/// reqwest's top-level message is vague ("error sending request"); the
/// cause chain says what happened (refused, DNS, TLS…).
fn describe_reqwest_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The server's own explanation: `error.message` from a JSON body, else
/// the start of the body text.
async fn error_body_message(mut response: Response, idle: Duration) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&body);
    let from_json = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            let error = v.get("error")?;
            error
                .get("message")
                .and_then(|m| m.as_str())
                .or_else(|| error.as_str())
                .map(str::to_owned)
        });
    let message = from_json.unwrap_or_else(|| text.trim().to_owned());
    if message.is_empty() {
        response_reason(response.status())
    } else {
        preview(&message)
    }
}

fn response_reason(status: StatusCode) -> String {
    status.canonical_reason().unwrap_or("no details").to_owned()
}

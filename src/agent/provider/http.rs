//! The HTTP side every provider shares: send the request, retry what is
//! worth retrying (honouring `Retry-After`), then stream the body through
//! the SSE parser and the provider's own [`Decoder`]. A provider supplies
//! the URL, the headers, the body and the decoder; nothing here knows a
//! wire format.

use std::sync::{Arc, Once};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Client, Response, StatusCode, Url};
use serde_json::Value;
use tokio::sync::mpsc;

use super::openai::ApiKey;
use super::overflow::{self, Overflow};
use super::redact::redact_secret;
use super::retry::{backoff, is_retryable, retry_after};
use super::sse::{SseEvent, SseParser};
use super::stream::ProviderStream;
use super::types::{ProviderError, ProviderEvent};

/// The most of an error body we read, to quote the server's message.
const ERROR_BODY_LIMIT: usize = 16 * 1024;

/// Timeouts and the retry policy of one provider's calls.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    pub connect_timeout: Duration,
    /// Longest wait from sending the request to the response headers. A
    /// server that accepts the connection and never answers is given up on
    /// after this (then retried, within `retry_budget`).
    pub first_byte_timeout: Duration,
    /// Longest silence allowed once the response headers came: until the
    /// first content and between two contents. Content is an event the
    /// provider's decoder turns into something; keep-alive comments
    /// (`: ping`) and events that carry nothing do not count, so a server
    /// that only keeps the connection warm is silent. Generous: a model may
    /// think before the next token.
    pub idle_timeout: Duration,
    /// Total tries for one call (1 = no retry).
    pub max_attempts: u32,
    /// First backoff wait; doubles each retry, with jitter, capped at `max_backoff`.
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A `Retry-After` longer than this is not waited for: the call fails
    /// with the server's message instead of freezing the turn for minutes.
    pub max_retry_after: Duration,
    /// Longest time one call may spend on failed attempts and the waits
    /// between them: no retry starts that would end past it.
    pub retry_budget: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(300),
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            retry_budget: Duration::from_secs(180),
        }
    }
}

/// Turns the SSE events of one answer into [`ProviderEvent`]s.
pub(crate) trait Decoder: Default + Send + 'static {
    fn on_event(&mut self, event: &SseEvent) -> Result<Vec<ProviderEvent>, ProviderError>;
    /// The answer is complete: nothing after this matters.
    fn is_done(&self) -> bool;
    /// The body ended: the final events, or why the answer is incomplete.
    fn on_end(&mut self) -> Result<Vec<ProviderEvent>, ProviderError>;
    /// `error` came from the stream itself and the server calls it
    /// transient (Anthropic's `overloaded_error`): when nothing was passed
    /// on yet, the call is tried again like a 529.
    fn is_transient(&self, _error: &ProviderError) -> bool {
        false
    }
}

/// Where and how one provider talks: built once, shared by its calls.
#[derive(Debug)]
pub(crate) struct Endpoint {
    client: Client,
    /// The streaming endpoint (`…/chat/completions`, `…/v1/messages`).
    url: Url,
    /// Authentication and the provider's own headers, sent with every request.
    headers: HeaderMap,
    settings: HttpSettings,
    key: Option<ApiKey>,
    /// The NAME of the variable the key came from, for messages.
    key_env: String,
}

impl Endpoint {
    pub fn new(
        url: Url,
        headers: HeaderMap,
        settings: HttpSettings,
        key: Option<ApiKey>,
        key_env: &str,
    ) -> Result<Self, ProviderError> {
        install_crypto_provider();
        let client = Client::builder()
            .connect_timeout(settings.connect_timeout)
            .build()
            .map_err(|e| ProviderError::Config(format!("HTTP client: {e}")))?;
        Ok(Endpoint {
            client,
            url,
            headers,
            settings,
            key,
            key_env: key_env.to_owned(),
        })
    }

    /// Starts one streaming call with `body` (sent unchanged by every attempt).
    pub fn stream<D: Decoder>(self: &Arc<Self>, body: Vec<u8>) -> ProviderStream {
        let call = Call {
            endpoint: self.clone(),
            body,
        };
        ProviderStream::spawn(move |tx| call.run::<D>(tx))
    }

    /// GETs `url` and reads its JSON (the model list), with the same
    /// headers and error messages as a call; not retried.
    pub(crate) async fn get_json(&self, url: Url) -> Result<Value, ProviderError> {
        let request = self
            .client
            .get(url)
            .headers(self.headers.clone())
            .header(ACCEPT, "application/json")
            .send();
        let response = match tokio::time::timeout(self.settings.first_byte_timeout, request).await {
            Err(_) => {
                return Err(ProviderError::Connect(
                    "no answer within the first-byte timeout".into(),
                ));
            }
            Ok(Err(error)) => {
                return Err(ProviderError::Connect(
                    self.redact(&describe_reqwest_error(&error)),
                ));
            }
            Ok(Ok(response)) => response,
        };
        if let Err(failure) = self.check_status(response.status(), &response) {
            let (message, _) = error_body_message(response, self.settings.idle_timeout).await;
            return Err(failure.with_message(self.redact(&message)).into_error());
        }
        let bytes = tokio::time::timeout(self.settings.idle_timeout, response.bytes())
            .await
            .map_err(|_| ProviderError::StreamInterrupted("the answer stalled".into()))?
            .map_err(|e| ProviderError::StreamInterrupted(self.redact(&e.to_string())))?;
        serde_json::from_slice(&bytes).map_err(|e| ProviderError::BadResponse(e.to_string()))
    }

    /// `model @ url` for the status bar; credentials in the URL
    /// (`http://user:pass@host`) are not shown.
    pub fn label(&self, model: &str) -> String {
        let mut shown = self.url.clone();
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        format!("{model} @ {shown}")
    }

    /// How a non-success status is handled: `Ok` for success.
    fn check_status(&self, status: StatusCode, response: &Response) -> Result<(), StatusFailure> {
        if status.is_success() {
            return Ok(());
        }
        let code = status.as_u16();
        let kind = if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            FailureKind::Unauthorized {
                key_env: self.key_env.clone(),
                key_set: self.key.is_some(),
            }
        } else if is_retryable(status) {
            FailureKind::Retry(retry_after(response.headers(), SystemTime::now()))
        } else {
            FailureKind::Fatal
        };
        Err(StatusFailure {
            status: code,
            kind,
            message: String::new(),
        })
    }

    fn redact(&self, text: &str) -> String {
        redact_secret(text, self.key.as_ref().map(ApiKey::expose))
    }
}

/// A response that was not a success, before its body was read.
struct StatusFailure {
    status: u16,
    kind: FailureKind,
    message: String,
}

enum FailureKind {
    Unauthorized {
        key_env: String,
        key_set: bool,
    },
    /// Transient; the server's wait, if it said.
    Retry(Option<Duration>),
    Fatal,
}

impl StatusFailure {
    fn with_message(mut self, message: String) -> Self {
        self.message = message;
        self
    }

    fn into_error(self) -> ProviderError {
        match self.kind {
            FailureKind::Unauthorized { key_env, key_set } => ProviderError::Unauthorized {
                status: self.status,
                key_env,
                key_set,
                message: self.message,
            },
            FailureKind::Retry(_) | FailureKind::Fatal => ProviderError::Http {
                status: self.status,
                message: self.message,
            },
        }
    }
}

/// A configured base URL, trimmed of whitespace and trailing `/`, with
/// its parsed form and path; only `http` and `https` are accepted.
pub(crate) fn base_url(base: &str) -> Result<(&str, Url), ProviderError> {
    let trimmed = base.trim().trim_end_matches('/');
    let url = Url::parse(trimmed)
        .map_err(|e| ProviderError::Config(format!("base URL `{base}` is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ProviderError::Config(format!(
            "base URL `{base}` must start with http:// or https://"
        )));
    }
    Ok((trimmed, url))
}

/// The API endpoint `tail` (`chat/completions`, `messages`) for a
/// configured base URL: used as is when it already ends in `/{tail}`; a
/// bare host gets `/v1/{tail}`; any other path (`…/v1`, a proxy's prefix)
/// gets `/{tail}`.
pub(crate) fn endpoint_url(base: &str, tail: &str) -> Result<Url, ProviderError> {
    let (trimmed, url) = base_url(base)?;
    let path = url.path().trim_end_matches('/');
    let full = if path.ends_with(&format!("/{tail}")) {
        trimmed.to_owned()
    } else if path.is_empty() {
        format!("{trimmed}/v1/{tail}")
    } else {
        format!("{trimmed}/{tail}")
    };
    Url::parse(&full).map_err(|e| ProviderError::Config(format!("endpoint `{full}`: {e}")))
}

/// `base` with `/{tail}` in place of a trailing `/{replaced}` (the
/// models URL next to a chat endpoint).
pub(crate) fn sibling_url(
    endpoint: &Url,
    replaced: &str,
    tail: &str,
) -> Result<Url, ProviderError> {
    let base = endpoint.as_str().trim_end_matches(replaced);
    Url::parse(&format!("{base}/{tail}"))
        .map_err(|e| ProviderError::Config(format!("{tail} URL: {e}")))
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

/// Why one attempt did not produce a complete stream.
enum AttemptError {
    /// Worth another try after `wait` (the server's, if it said).
    Retry {
        error: ProviderError,
        wait: Option<Duration>,
    },
    Fatal(ProviderError),
}

struct Call {
    endpoint: Arc<Endpoint>,
    /// The serialized request, reused unchanged by every attempt.
    body: Vec<u8>,
}

impl Call {
    async fn run<D: Decoder>(self, tx: mpsc::Sender<ProviderEvent>) {
        let config = &self.endpoint.settings;
        let max_attempts = config.max_attempts.max(1);
        let mut attempt = 1;
        let started = std::time::Instant::now();
        loop {
            let failure = match self.send().await {
                Ok(response) => match stream_body::<D>(&self.endpoint, response, &tx).await {
                    None => return,
                    Some(error) => (error, None),
                },
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
        }
    }

    async fn send(&self) -> Result<Response, AttemptError> {
        let endpoint = &self.endpoint;
        let request = endpoint
            .client
            .post(endpoint.url.clone())
            .headers(endpoint.headers.clone())
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
            .header(CONTENT_TYPE, "application/json")
            .body(self.body.clone())
            .send();
        let first_byte = endpoint.settings.first_byte_timeout;
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
                let reason = endpoint.redact(&describe_reqwest_error(&error));
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
        let Err(failure) = endpoint.check_status(response.status(), &response) else {
            return Ok(response);
        };
        let (message, overflow) =
            error_body_message(response, endpoint.settings.idle_timeout).await;
        if let Some(mut overflow) = overflow {
            // Never worth the same request again: the turn loop makes room.
            overflow.message = endpoint.redact(&overflow.message);
            return Err(AttemptError::Fatal(ProviderError::ContextOverflow(
                overflow,
            )));
        }
        let failure = failure.with_message(endpoint.redact(&message));
        Err(match failure.kind {
            FailureKind::Retry(wait) => AttemptError::Retry {
                error: failure.into_error(),
                wait,
            },
            _ => AttemptError::Fatal(failure.into_error()),
        })
    }
}

/// Streams one answer to `tx`. `None` when the call is over (finished,
/// failed, or the consumer went away); `Some(error)` when the stream
/// reported a transient error before anything was passed on, so the
/// caller may try again.
async fn stream_body<D: Decoder>(
    endpoint: &Endpoint,
    response: Response,
    tx: &mpsc::Sender<ProviderEvent>,
) -> Option<ProviderError> {
    let idle = endpoint.settings.idle_timeout;
    if is_json(&response) {
        // A stream was asked for and a JSON document came back with a
        // success status: LM Studio's way of saying an error (an overflow
        // among them). Read as an error body, never as an empty answer.
        let (message, overflow) = error_body_message(response, idle).await;
        let error = match overflow {
            Some(mut overflow) => {
                overflow.message = endpoint.redact(&overflow.message);
                ProviderError::ContextOverflow(overflow)
            }
            None => ProviderError::BadResponse(format!(
                "a JSON document instead of an event stream: {}",
                endpoint.redact(&message)
            )),
        };
        let _ = tx.send(ProviderEvent::Error(error)).await;
        return None;
    }
    let mut body = response.bytes_stream();
    let mut sse = SseParser::default();
    let mut decoder = D::default();
    let mut forwarded = false;
    // Moved on by content only (see `HttpSettings::idle_timeout`): bytes
    // that decode to nothing leave it where it is.
    let mut silent_until = tokio::time::Instant::now() + idle;
    let outcome: Result<(), ProviderError> = async {
        loop {
            let next = tokio::time::timeout_at(silent_until, body.next())
                .await
                .map_err(|_| {
                    ProviderError::StreamInterrupted(format!(
                        "no data from the model for {:.1}s (keep-alives do not count)",
                        idle.as_secs_f64()
                    ))
                })?;
            let ended = next.is_none();
            let events = match next {
                Some(Ok(bytes)) => sse
                    .push(&bytes)
                    .map_err(|e| ProviderError::BadResponse(e.to_string()))?,
                Some(Err(error)) => {
                    return Err(ProviderError::StreamInterrupted(
                        endpoint.redact(&describe_reqwest_error(&error)),
                    ));
                }
                None => sse.finish().into_iter().collect(),
            };
            for event in events {
                let decoded = decoder.on_event(&event).map_err(|e| match e {
                    // An unreadable event right at the end of the body is
                    // one the connection cut in half, not a server bug.
                    ProviderError::BadResponse(_) if ended => ProviderError::StreamInterrupted(
                        "the connection closed in the middle of an event".into(),
                    ),
                    other => other,
                })?;
                if !decoded.is_empty() {
                    silent_until = tokio::time::Instant::now() + idle;
                }
                for out in decoded {
                    forwarded = true;
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
    match outcome {
        Ok(()) => None,
        Err(error) if !forwarded && decoder.is_transient(&error) => Some(error),
        Err(error) => {
            let _ = tx
                .send(ProviderEvent::Error(endpoint_error(endpoint, error)))
                .await;
            None
        }
    }
}

/// The answer is a JSON document (not an event stream).
fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

fn endpoint_error(endpoint: &Endpoint, error: ProviderError) -> ProviderError {
    match error {
        ProviderError::Api(message) => ProviderError::Api(endpoint.redact(&message)),
        ProviderError::ContextOverflow(mut overflow) => {
            overflow.message = endpoint.redact(&overflow.message);
            ProviderError::ContextOverflow(overflow)
        }
        other => other,
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

/// The server's own explanation: `error.message` from a JSON body (both
/// OpenAI's and Anthropic's errors have it), else the start of the body
/// text; and the overflow it describes, if it is one.
async fn error_body_message(mut response: Response, idle: Duration) -> (String, Option<Overflow>) {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_LIMIT {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&body);
    let json = serde_json::from_str::<Value>(&text).ok();
    let from_json = json.as_ref().and_then(|v| {
        let error = v.get("error")?;
        error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    let overflow = match &json {
        Some(json) => overflow::from_body(json),
        None => overflow::from_message(text.trim(), false),
    };
    let message = from_json.unwrap_or_else(|| text.trim().to_owned());
    let message = if message.is_empty() {
        response
            .status()
            .canonical_reason()
            .unwrap_or("no details")
            .to_owned()
    } else {
        preview(&message)
    };
    (message, overflow)
}

/// At most 300 characters, so a huge garbage chunk makes a readable error.
pub fn preview(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The model ids of a `GET …/models` answer: OpenAI's, Ollama's, vLLM's
/// and Anthropic's all list `{"data": [{"id": …}, …]}`.
pub(crate) fn model_ids(list: &Value) -> Result<Vec<String>, ProviderError> {
    let data = list
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| ProviderError::BadResponse("the model list has no `data` array".into()))?;
    Ok(data
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_ids_of_openai_and_anthropic_lists() {
        let openai = json!({"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"o3"}]});
        assert_eq!(model_ids(&openai).unwrap(), ["gpt-4o", "o3"]);
        let anthropic = json!({"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5"}],"has_more":false});
        assert_eq!(model_ids(&anthropic).unwrap(), ["claude-sonnet-4-5"]);
        assert!(matches!(
            model_ids(&json!({"models": []})),
            Err(ProviderError::BadResponse(_))
        ));
    }
}

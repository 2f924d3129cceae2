//! JSON-RPC over a server's stdio: one task reads (and answers the server's
//! own requests), one writes, one drains stderr into `tracing`. Callers get a
//! cheap, cloneable [`RpcHandle`]; nothing here ever blocks the caller.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::LspError;
use super::framing::{Frame, Oversize, read_frame, write_message};
use super::peek;

/// What the reader passes up besides responses.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A server notification (or a server request we answered and that the
    /// client should also act on, like `workspace/diagnostic/refresh`).
    /// `params` stay JSON text: a `publishDiagnostics` of 20 000 problems
    /// is decoded once, straight into what is kept (`convert`), rather than
    /// into a `Value` tree first (~7 KB a diagnostic).
    Notification { method: String, params: Raw },
    /// A notification (or a server request, refused) over the message limit
    /// was read and dropped: `method` and `uri` as far as its first few KB
    /// tell. A dropped response fails its request instead
    /// (`LspError::TooLarge`).
    Dropped {
        bytes: usize,
        method: Option<String>,
        uri: Option<String>,
    },
    /// The server's stdout ended or became unreadable.
    Closed { reason: String },
}

/// A message's `params` or `result` as the JSON text the server sent.
pub(crate) type Raw = Box<RawValue>;

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Raw, LspError>>>>>;

/// Decodes `params` or a `result` into what the caller wants (a `Value`
/// for small answers, a typed list for diagnostics).
pub(crate) fn decode<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, LspError> {
    serde_json::from_str(raw.get()).map_err(|e| LspError::Protocol(e.to_string()))
}

/// JSON `null`, for a missing `params` or `result`.
fn null() -> Raw {
    RawValue::from_string("null".to_string()).unwrap_or_else(|_| unreachable!("null is JSON"))
}

/// A message as read: `params` and `result` are kept as JSON text, so no
/// `Value` tree is built for a large answer.
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Raw>,
    #[serde(default)]
    result: Option<Raw>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Clone)]
pub(crate) struct RpcHandle {
    name: Arc<str>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
}

impl RpcHandle {
    pub(crate) fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        self.send(&message(None, method, params))
    }

    /// Sends a request now; the returned future (which owns everything it
    /// needs, so it can be spawned) resolves with the result or an error.
    pub fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> impl Future<Output = Result<Raw, LspError>> + Send + 'static {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let sent = self.send(&message(Some(id), method, params));
        let handle = self.clone();
        let method = method.to_string();
        async move {
            sent?;
            match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err(LspError::Closed),
                Err(_) => {
                    lock(&handle.pending).remove(&id);
                    let _ = handle.notify("$/cancelRequest", json!({"id": id}));
                    Err(LspError::Timeout {
                        method,
                        after: timeout,
                    })
                }
            }
        }
    }

    fn send(&self, body: &Value) -> Result<(), LspError> {
        let bytes = serde_json::to_vec(body).map_err(|e| LspError::Protocol(e.to_string()))?;
        self.outgoing.send(bytes).map_err(|_| LspError::Closed)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A request (with `id`) or notification. `Value::Null` params are left
/// out: `shutdown` and `exit` take none, and TypeScript 7 refuses a
/// `"params": null` ("expected no params"), so it never exited politely.
fn message(id: Option<i64>, method: &str, params: Value) -> Value {
    let mut body = json!({"jsonrpc": "2.0", "method": method});
    if let Some(id) = id {
        body["id"] = json!(id);
    }
    if !params.is_null() {
        body["params"] = params;
    }
    body
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned map is still a valid map: a panic elsewhere must not wedge us.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The last thing a server said about a problem in its own words: its
/// last stderr line, or an error or warning it showed (`window/showMessage`).
/// When it fails, that is the reason users need ("Could not find a valid
/// TypeScript installation"), not only our "exit status 1".
#[derive(Clone, Default)]
pub(crate) struct LastWords(Arc<Mutex<Option<String>>>);

impl LastWords {
    pub fn set(&self, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            *lock(&self.0) = Some(text.chars().take(300).collect());
        }
    }

    pub fn take(&self) -> Option<String> {
        lock(&self.0).take()
    }
}

/// Starts the reader, writer and stderr tasks on the given pipes.
/// `settings` answers the server's `workspace/configuration` requests;
/// messages over `max_message` bytes are dropped (see `framing`).
pub(crate) fn spawn_tasks(
    name: &str,
    stdout: impl AsyncRead + Unpin + Send + 'static,
    stdin: impl AsyncWrite + Unpin + Send + 'static,
    stderr: impl AsyncRead + Unpin + Send + 'static,
    last_words: LastWords,
    settings: Value,
    max_message: usize,
) -> (RpcHandle, mpsc::UnboundedReceiver<Incoming>) {
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let handle = RpcHandle {
        name: Arc::from(name),
        outgoing: out_tx,
        pending: Arc::default(),
        next_id: Arc::new(AtomicI64::new(1)),
    };
    tokio::spawn(write_loop(name.to_string(), stdin, out_rx));
    tokio::spawn(stderr_loop(name.to_string(), stderr, last_words));
    tokio::spawn(read_loop(
        handle.clone(),
        stdout,
        in_tx,
        settings,
        max_message,
    ));
    (handle, in_rx)
}

async fn write_loop(
    name: String,
    mut stdin: impl AsyncWrite + Unpin,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(body) = rx.recv().await {
        if let Err(error) = write_message(&mut stdin, &body).await {
            tracing::warn!(server = %name, %error, "lsp: writing to server failed");
            return;
        }
    }
}

async fn stderr_loop(name: String, stderr: impl AsyncRead + Unpin, last_words: LastWords) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                let line: String = line.chars().take(2000).collect();
                tracing::debug!(server = %name, "stderr: {line}");
                last_words.set(&line);
            }
            Ok(None) => return,
            Err(error) => {
                // Non-UTF-8 output; keep draining so the server never blocks on a full pipe.
                tracing::debug!(server = %name, %error, "lsp: unreadable stderr line");
            }
        }
    }
}

async fn read_loop(
    handle: RpcHandle,
    stdout: impl AsyncRead + Unpin,
    incoming: mpsc::UnboundedSender<Incoming>,
    settings: Value,
    max_message: usize,
) {
    let mut reader = BufReader::new(stdout);
    let reason = loop {
        let body = match read_frame(&mut reader, max_message).await {
            Ok(Some(Frame::Body(body))) => body,
            Ok(Some(Frame::Dropped(oversize))) => {
                dropped(&handle, oversize, &incoming);
                continue;
            }
            Ok(None) => break "the server closed its output".to_string(),
            Err(error) => break error.to_string(),
        };
        let message: Envelope = match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(error) => {
                tracing::warn!(server = %handle.name, %error, "lsp: invalid JSON from server, skipped");
                continue;
            }
        };
        drop(body);
        dispatch(&handle, message, &incoming, &settings);
    };
    // Fail every waiting request now instead of letting each one time out.
    lock(&handle.pending).clear();
    let _ = incoming.send(Incoming::Closed { reason });
}

/// A message over the limit was dropped: a response fails its request at
/// once (rather than time out), a server request gets an error answer (so
/// the server does not wait), and the supervisor hears of the rest.
fn dropped(handle: &RpcHandle, oversize: Oversize, incoming: &mpsc::UnboundedSender<Incoming>) {
    let about = peek::about(&oversize.head);
    let bytes = oversize.bytes;
    tracing::warn!(
        server = %handle.name,
        bytes,
        method = about.method.as_deref().unwrap_or("?"),
        uri = about.uri.as_deref().unwrap_or("?"),
        id = %about.id.as_ref().map_or_else(|| "?".to_string(), |id| id.to_string()),
        "lsp: message over the limit dropped"
    );
    match (about.method, about.id) {
        (None, Some(id)) => {
            let waiter = id.as_i64().and_then(|id| lock(&handle.pending).remove(&id));
            if let Some(waiter) = waiter {
                let _ = waiter.send(Err(LspError::TooLarge { bytes }));
            }
        }
        (method, id) => {
            if let Some(id) = id {
                let _ = handle.send(&json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32600,
                    "message": format!("request of {bytes} bytes is over the client's limit")
                }}));
            }
            let _ = incoming.send(Incoming::Dropped {
                bytes,
                method,
                uri: about.uri,
            });
        }
    }
}

fn dispatch(
    handle: &RpcHandle,
    message: Envelope,
    incoming: &mpsc::UnboundedSender<Incoming>,
    settings: &Value,
) {
    let id = message.id.filter(|id| !id.is_null());
    match (message.method, id) {
        (Some(method), Some(id)) => {
            let params = message.params.unwrap_or_else(null);
            let reply = decode::<Value>(&params)
                .map_err(|error| (-32602, error.to_string()))
                .and_then(|value| answer_server_request(&method, &value, settings));
            let body = match reply {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, text)) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}})
                }
            };
            let _ = handle.send(&body);
            if method == "workspace/diagnostic/refresh" {
                let _ = incoming.send(Incoming::Notification { method, params });
            }
        }
        (Some(method), None) => {
            let params = message.params.unwrap_or_else(null);
            let _ = incoming.send(Incoming::Notification { method, params });
        }
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else {
                tracing::warn!(server = %handle.name, "lsp: response with a foreign id, skipped");
                return;
            };
            let Some(waiter) = lock(&handle.pending).remove(&id) else {
                tracing::debug!(server = %handle.name, id, "lsp: response to a request nobody waits for");
                return;
            };
            let result = match message.error {
                Some(error) => Err(LspError::Server {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                }),
                None => Ok(message.result.unwrap_or_else(null)),
            };
            let _ = waiter.send(result);
        }
        (None, None) => {
            tracing::warn!(server = %handle.name, "lsp: message without method or id, skipped")
        }
    }
}

/// The part of `settings` a `workspace/configuration` item names with its
/// dotted `section` (`basedpyright.analysis`); all of them without one;
/// `null` where nothing is set, so the server keeps its own default.
fn setting_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    section
        .split('.')
        .try_fold(settings, |value, key| value.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Our answers to what servers ask of a client: the server's configured
/// `settings` by section, every registration accepted, edits refused (the
/// user owns the buffers).
fn answer_server_request(
    method: &str,
    params: &Value,
    settings: &Value,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => {
            let items = params.get("items").and_then(Value::as_array);
            let answers = items
                .into_iter()
                .flatten()
                .map(|item| setting_section(settings, item.get("section").and_then(Value::as_str)))
                .collect();
            Ok(Value::Array(answers))
        }
        "client/registerCapability"
        | "client/unregisterCapability"
        | "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Ok(Value::Null),
        "workspace/applyEdit" => Ok(json!({"applied": false, "failureReason": "read-only client"})),
        _ => Err((-32601, format!("method not supported: {method}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::lsp::framing::{MAX_BODY, write_message};
    use tokio::io::{AsyncWriteExt, duplex};

    /// A fake server on in-memory pipes: the test plays the server side.
    struct Peer {
        to_client: tokio::io::DuplexStream,
        from_client: BufReader<tokio::io::DuplexStream>,
    }

    impl Peer {
        async fn send_raw(&mut self, bytes: &[u8]) {
            self.to_client.write_all(bytes).await.unwrap();
        }
        async fn send(&mut self, value: Value) {
            write_message(&mut self.to_client, value.to_string().as_bytes())
                .await
                .unwrap();
        }
        async fn recv(&mut self) -> Value {
            match read_frame(&mut self.from_client, MAX_BODY).await {
                Ok(Some(Frame::Body(body))) => serde_json::from_slice(&body).unwrap(),
                other => panic!("expected a message, got {other:?}"),
            }
        }
    }

    fn setup() -> (RpcHandle, mpsc::UnboundedReceiver<Incoming>, Peer) {
        setup_within(MAX_BODY)
    }

    /// A client that drops messages over `max_message` bytes.
    fn setup_within(max_message: usize) -> (RpcHandle, mpsc::UnboundedReceiver<Incoming>, Peer) {
        let (client_out, server_in) = duplex(1 << 16);
        let (server_out, client_in) = duplex(1 << 16);
        let (_err_w, err_r) = duplex(64);
        let (handle, incoming) = spawn_tasks(
            "fake",
            client_in,
            client_out,
            err_r,
            LastWords::default(),
            json!({"fake": {"analysis": {"mode": "standard"}}}),
            max_message,
        );
        let peer = Peer {
            to_client: server_out,
            from_client: BufReader::new(server_in),
        };
        (handle, incoming, peer)
    }

    #[tokio::test]
    async fn responses_are_matched_to_requests_out_of_order() {
        let (handle, _incoming, mut peer) = setup();
        let first = tokio::spawn(handle.request("a", json!({}), Duration::from_secs(10)));
        let second = tokio::spawn(handle.request("b", json!({}), Duration::from_secs(10)));
        let r1 = peer.recv().await;
        let r2 = peer.recv().await;
        peer.send(json!({"jsonrpc":"2.0","id": r2["id"], "result": "B"}))
            .await;
        peer.send(
            json!({"jsonrpc":"2.0","id": r1["id"], "error": {"code": -32000, "message": "nope"}}),
        )
        .await;
        assert_eq!(second.await.unwrap().unwrap().get(), r#""B""#);
        let err = first.await.unwrap().unwrap_err();
        assert!(err.to_string().contains("nope"), "{err}");
    }

    #[tokio::test]
    async fn garbage_is_skipped_and_server_requests_are_answered() {
        let (_handle, mut incoming, mut peer) = setup();
        peer.send_raw(b"Content-Length: 5\r\n\r\n{oops").await;
        peer.send_raw(b"Content-Length: 3\r\n\r\n[1]").await;
        peer.send(json!({"jsonrpc":"2.0","id":7,"method":"workspace/configuration","params":{"items":[{"section":"fake.analysis"},{"section":"other"},{}]}}))
            .await;
        peer.send(json!({"jsonrpc":"2.0","id":"x","method":"weird/thing"}))
            .await;
        peer.send(json!({"jsonrpc":"2.0","method":"window/logMessage","params":{"message":"hi"}}))
            .await;
        let reply = peer.recv().await;
        assert_eq!(reply["id"], 7);
        assert_eq!(
            reply["result"],
            json!([{"mode": "standard"}, null, {"fake": {"analysis": {"mode": "standard"}}}]),
            "each item gets its section of the server's settings"
        );
        let refused = peer.recv().await;
        assert_eq!(refused["id"], "x");
        assert_eq!(refused["error"]["code"], -32601);
        match incoming.recv().await {
            Some(Incoming::Notification { method, .. }) => assert_eq!(method, "window/logMessage"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn closing_fails_pending_requests_and_reports_closed() {
        let (handle, mut incoming, peer) = setup();
        let waiting = handle.request("slow", json!({}), Duration::from_secs(30));
        drop(peer);
        assert!(matches!(waiting.await, Err(LspError::Closed)));
        assert!(matches!(
            incoming.recv().await,
            Some(Incoming::Closed { .. })
        ));
    }

    #[tokio::test]
    async fn null_params_are_left_out() {
        let (handle, _incoming, mut peer) = setup();
        let _shutdown = handle.request("shutdown", Value::Null, Duration::from_secs(10));
        handle.notify("exit", Value::Null).unwrap();
        handle.notify("x/y", json!({"a": 1})).unwrap();
        let shutdown = peer.recv().await;
        assert_eq!(shutdown["method"], "shutdown");
        assert!(shutdown["id"].is_i64());
        assert!(shutdown.get("params").is_none(), "{shutdown}");
        let exit = peer.recv().await;
        assert!(
            exit.get("params").is_none() && exit.get("id").is_none(),
            "{exit}"
        );
        assert_eq!(peer.recv().await["params"], json!({"a": 1}));
    }

    /// Over the limit, the connection stays: a publish is passed up as
    /// dropped with its document, a response fails its request at once, a
    /// server request is refused; what follows is read as usual.
    #[tokio::test]
    async fn oversize_messages_are_dropped_and_the_connection_stays() {
        let (handle, mut incoming, mut peer) = setup_within(200);
        let pad = "x".repeat(300);
        peer.send(
            json!({"jsonrpc":"2.0","method":"textDocument/publishDiagnostics",
            "params":{"uri":"file:///ws/huge.py","diagnostics":[{"message": pad}]}}),
        )
        .await;
        match incoming.recv().await {
            Some(Incoming::Dropped { bytes, method, uri }) => {
                assert!(bytes > 300);
                assert_eq!(method.as_deref(), Some("textDocument/publishDiagnostics"));
                assert_eq!(uri.as_deref(), Some("file:///ws/huge.py"));
            }
            other => panic!("unexpected {other:?}"),
        }
        let waiting = tokio::spawn(handle.request("big", json!({}), Duration::from_secs(30)));
        let request = peer.recv().await;
        peer.send(json!({"jsonrpc":"2.0","id": request["id"], "result": pad}))
            .await;
        let result = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("failed at once, not after the request's timeout")
            .unwrap();
        assert!(
            matches!(result, Err(LspError::TooLarge { bytes }) if bytes > 300),
            "{result:?}"
        );
        peer.send(json!({"jsonrpc":"2.0","id":9,"method":"workspace/configuration","params":{"pad": pad}}))
            .await;
        let refused = peer.recv().await;
        assert_eq!(refused["id"], 9);
        assert_eq!(refused["error"]["code"], -32600);
        // Garbage over the limit is dropped too, knowing nothing.
        peer.send_raw(format!("Content-Length: 300\r\n\r\n{pad}").as_bytes())
            .await;
        peer.send(json!({"jsonrpc":"2.0","method":"window/logMessage","params":{}}))
            .await;
        let mut seen = Vec::new();
        for _ in 0..3 {
            match incoming.recv().await {
                Some(Incoming::Dropped { method, uri, .. }) => {
                    seen.push(format!("{method:?} {uri:?}"))
                }
                Some(Incoming::Notification { method, .. }) => seen.push(method),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            seen,
            [
                "Some(\"workspace/configuration\") None",
                "None None",
                "window/logMessage"
            ]
        );
    }

    #[tokio::test]
    async fn unanswered_request_times_out() {
        let (handle, _incoming, _peer) = setup();
        let result = handle
            .request("never", json!({}), Duration::from_millis(50))
            .await;
        assert!(matches!(result, Err(LspError::Timeout { .. })));
    }
}

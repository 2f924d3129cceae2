//! The model provider against a real (loopback) HTTP server speaking the
//! Chat Completions streaming wire format, the scripted demo provider, and
//! the session files on a real disk.

#[path = "support/loopback.rs"]
mod loopback;

use std::time::{Duration, Instant};

use hello_tui::agent::provider::openai::{DEFAULT_KEY_ENV, OpenAiConfig};
use hello_tui::agent::provider::{
    AssistantTurn, ChatMessage, ChatRequest, FinishReason, ModelProvider, OpenAiProvider,
    ProviderError, ProviderEvent, ScriptedProvider, ToolCall, ToolSpec, TurnAssembler,
};
use loopback::{Framing, LoopbackServer, Part, Reply, byte_pieces, data};
use serde_json::json;

const SECRET: &str = "sk-test-0123456789abcdefghijklmnopqrstuv";

fn config(server: &LoopbackServer, key: Option<&str>) -> OpenAiConfig {
    let key = key.map(str::to_owned);
    let mut config = OpenAiConfig::new(
        Some(&server.base_url),
        "test-model",
        DEFAULT_KEY_ENV,
        &|_| key.clone(),
    );
    config.http.initial_backoff = Duration::from_millis(10);
    config.http.idle_timeout = Duration::from_secs(5);
    config
}

fn provider(config: OpenAiConfig) -> OpenAiProvider {
    OpenAiProvider::new(config).expect("valid config")
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::User {
            content: text.into(),
        }],
        ..ChatRequest::default()
    }
}

/// Collects events and the assembled turn.
async fn run(
    provider: &dyn ModelProvider,
    request: ChatRequest,
) -> (Vec<ProviderEvent>, AssistantTurn) {
    let mut stream = provider.stream_chat(request);
    let mut events = Vec::new();
    let mut assembler = TurnAssembler::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(event) = tokio::time::timeout_at(deadline.into(), stream.next())
        .await
        .expect("the stream ends by itself")
    {
        assembler.push(&event);
        events.push(event);
    }
    (events, assembler.finish())
}

fn text_chunk(text: &str) -> String {
    data(
        &json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}).to_string(),
    )
}

fn finish_chunk(reason: &str) -> String {
    data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}).to_string())
}

fn usage_chunk(prompt: u64, completion: u64) -> String {
    data(
        &json!({"choices":[],"usage":{"prompt_tokens":prompt,"completion_tokens":completion,"total_tokens":prompt+completion}})
            .to_string(),
    )
}

fn tool_chunk(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    data(&json!({"choices":[{"index":0,"delta":{"tool_calls":[call]}}]}).to_string())
}

const DONE: &str = "data: [DONE]\r\n\r\n";

mod streaming {
    use super::*;

    #[tokio::test]
    async fn text_stream_split_anywhere_with_keepalives_and_crlf() {
        let body = [
            ": ping\r\n\r\n".to_owned(),
            text_chunk("Héllo"),
            ": keep-alive\r\n".to_owned(),
            "event: message\r\n".to_owned(),
            text_chunk(", wörld 🦀"),
            // One JSON payload spread over two `data:` lines.
            "data: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\"!\"}}]}\r\n\r\n"
                .to_owned(),
            finish_chunk("stop"),
            usage_chunk(12, 5),
            DONE.to_owned(),
        ]
        .concat();
        // 7-byte pieces cut through CRLFs and multi-byte characters.
        let server =
            LoopbackServer::start(vec![Reply::sse(Framing::Chunked, byte_pieces(&body, 7))]).await;
        let p = provider(config(&server, None));
        let (events, turn) = run(&p, ask("hi")).await;

        assert_eq!(turn.text, "Héllo, wörld 🦀!");
        assert_eq!(turn.finish_reason, Some(FinishReason::Stop));
        assert_eq!(
            turn.usage
                .map(|u| (u.prompt_tokens, u.completion_tokens, u.total_tokens)),
            Some((12, 5, 17))
        );
        assert!(!turn.partial, "{:?}", turn.error);
        assert!(matches!(
            events.last(),
            Some(ProviderEvent::Finished(FinishReason::Stop))
        ));

        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        let sent = &requests[0];
        assert_eq!(sent.method, "POST");
        assert_eq!(sent.path, "/v1/chat/completions");
        assert_eq!(
            sent.header("authorization"),
            None,
            "no key, no Authorization header"
        );
        assert_eq!(sent.header("content-type"), Some("application/json"));
        let body = sent.json();
        assert_eq!(body["model"], json!("test-model"));
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["stream_options"]["include_usage"], json!(true));
        assert_eq!(body["messages"], json!([{"role":"user","content":"hi"}]));
        assert!(body.get("tools").is_none());
    }

    #[tokio::test]
    async fn interleaved_tool_calls_with_split_arguments_close_delimited() {
        let body = [
            text_chunk("Running both."),
            tool_chunk(0, Some("call_a"), Some("python"), ""),
            tool_chunk(1, Some("call_b"), Some("python"), "{\"co"),
            tool_chunk(0, None, None, "{\"code\": \"1 +"),
            tool_chunk(1, None, None, "de\": \"print('é')\"}"),
            tool_chunk(0, None, None, " 1\"}"),
            finish_chunk("tool_calls"),
            usage_chunk(40, 20),
            DONE.to_owned(),
        ]
        .concat();
        let server =
            LoopbackServer::start(vec![Reply::sse(Framing::Close, byte_pieces(&body, 13))]).await;
        let mut c = config(&server, Some(SECRET));
        c.extra_headers.push(("X-Title".into(), "hello-tui".into()));
        let p = provider(c);
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System {
                    content: "be brief".into(),
                },
                ChatMessage::User {
                    content: "compute".into(),
                },
                ChatMessage::Assistant {
                    thinking: Vec::new(),
                    content: None,
                    tool_calls: vec![ToolCall {
                        id: "call_0".into(),
                        name: "python".into(),
                        arguments: "{\"code\":\"x\"}".into(),
                    }],
                },
                ChatMessage::Tool {
                    tool_call_id: "call_0".into(),
                    content: "NameError: x".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "python".into(),
                description: "Run Python in the kernel".into(),
                parameters: json!({"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}),
            }],
            ..ChatRequest::default()
        };
        let (events, turn) = run(&p, request).await;

        assert_eq!(turn.text, "Running both.");
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
        let calls: Vec<(&str, &str, &str)> = turn
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_a", "python", "{\"code\": \"1 + 1\"}"),
                ("call_b", "python", "{\"code\": \"print('é')\"}"),
            ]
        );
        // The argument pieces really arrived as separate, interleaved events.
        let order: Vec<usize> = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCallArgumentsDelta { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(order, [1, 0, 1, 0]);

        let sent = &server.requests()[0];
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {SECRET}").as_str())
        );
        assert_eq!(sent.header("x-title"), Some("hello-tui"));
        let body = sent.json();
        assert_eq!(body["tools"][0]["type"], json!("function"));
        assert_eq!(body["tools"][0]["function"]["name"], json!("python"));
        assert_eq!(
            body["tools"][0]["function"]["parameters"]["required"],
            json!(["code"])
        );
        assert_eq!(body["messages"][2]["tool_calls"][0]["id"], json!("call_0"));
        assert_eq!(body["messages"][2]["content"], json!(null));
        assert_eq!(
            body["messages"][3],
            json!({"role":"tool","tool_call_id":"call_0","content":"NameError: x"})
        );
    }

    #[tokio::test]
    async fn the_idle_timeout_is_between_chunks_not_for_the_whole_answer() {
        let mut parts = Vec::new();
        for word in ["slow ", "but ", "steady"] {
            parts.push(Part::Bytes(text_chunk(word).into_bytes()));
            parts.push(Part::Pause(Duration::from_millis(150)));
        }
        parts.push(Part::Bytes(
            [finish_chunk("stop"), DONE.to_owned()]
                .concat()
                .into_bytes(),
        ));
        let server = LoopbackServer::start(vec![Reply::sse(Framing::Chunked, parts)]).await;
        let mut c = config(&server, None);
        c.http.idle_timeout = Duration::from_millis(400);
        let (_, turn) = run(&provider(c), ask("x")).await;
        assert_eq!(turn.text, "slow but steady");
        assert!(!turn.partial, "{:?}", turn.error);
    }

    #[tokio::test]
    async fn finish_without_done_then_close_is_complete() {
        let body = [text_chunk("ok"), finish_chunk("length")].concat();
        let server =
            LoopbackServer::start(vec![Reply::sse(Framing::Close, byte_pieces(&body, 1000))]).await;
        let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
        assert_eq!(turn.finish_reason, Some(FinishReason::Length));
        assert!(!turn.partial);
    }
}

mod faults {
    use super::*;

    fn ok_stream() -> Reply {
        Reply::sse(
            Framing::Chunked,
            vec![Part::Bytes(
                [text_chunk("finally"), finish_chunk("stop"), DONE.to_owned()]
                    .concat()
                    .into_bytes(),
            )],
        )
    }

    #[tokio::test]
    async fn retries_429_and_500_honouring_retry_after() {
        let server = LoopbackServer::start(vec![
            Reply::status(
                429,
                &[("Retry-After", "1")],
                r#"{"error":{"message":"Rate limit reached"}}"#,
            ),
            Reply::status(500, &[("Retry-After", "1")], "upstream exploded"),
            ok_stream(),
        ])
        .await;
        let started = Instant::now();
        let (events, turn) = run(&provider(config(&server, None)), ask("x")).await;
        let elapsed = started.elapsed();

        assert_eq!(turn.text, "finally");
        assert!(!turn.partial);
        assert_eq!(server.requests().len(), 3);
        let retries: Vec<(u32, Duration, String)> = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::Retrying {
                    attempt,
                    wait,
                    reason,
                    ..
                } => Some((*attempt, *wait, reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(retries.len(), 2);
        assert_eq!((retries[0].0, retries[0].1), (2, Duration::from_secs(1)));
        assert!(
            retries[0].2.contains("429") && retries[0].2.contains("Rate limit reached"),
            "{}",
            retries[0].2
        );
        assert_eq!((retries[1].0, retries[1].1), (3, Duration::from_secs(1)));
        assert!(retries[1].2.contains("500"));
        // Both one-second waits were honoured (loosely: no tight timing).
        assert!(elapsed >= Duration::from_millis(1900), "{elapsed:?}");
    }

    #[tokio::test]
    async fn gives_up_after_max_attempts() {
        let server = LoopbackServer::start(vec![
            Reply::status(503, &[], "busy"),
            Reply::status(503, &[], "still busy"),
            ok_stream(),
        ])
        .await;
        let mut c = config(&server, None);
        c.http.max_attempts = 2;
        let (_, turn) = run(&provider(c), ask("x")).await;
        match turn.error {
            Some(ProviderError::RetriesExhausted {
                attempts: 2,
                ref last,
            }) => assert!(last.contains("still busy"), "{last}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(turn.retries, 1);
        assert_eq!(server.requests().len(), 2);
    }

    #[tokio::test]
    async fn a_retry_after_beyond_the_limit_fails_now_instead_of_freezing() {
        let server = LoopbackServer::start(vec![
            Reply::status(429, &[("Retry-After", "3600")], "quota exceeded"),
            ok_stream(),
        ])
        .await;
        let started = Instant::now();
        let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
        let shown = turn.error.expect("an error").to_string();
        assert!(
            shown.contains("gave up after 1 attempt:") && shown.contains("3600s"),
            "{shown}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(server.requests().len(), 1);
    }

    #[tokio::test]
    async fn unauthorized_names_the_variable_never_the_key() {
        let server = LoopbackServer::start(vec![Reply::status(
            401,
            &[],
            &format!(r#"{{"error":{{"message":"Incorrect API key provided: {SECRET}","type":"invalid_request_error"}}}}"#),
        )])
        .await;
        let c = config(&server, Some(SECRET));
        assert!(!format!("{c:?}").contains(SECRET));
        let p = provider(c);
        assert!(!format!("{p:?} {}", p.label()).contains("0123456789abcdef"));
        let (_, turn) = run(&p, ask("x")).await;
        let error = turn.error.expect("an error");
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("OPENAI_API_KEY"), "{shown}");
        assert!(shown.contains("401"), "{shown}");
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert_eq!(server.requests().len(), 1, "401 is not retried");
    }

    #[tokio::test]
    async fn missing_key_says_the_variable_is_not_set() {
        let server = LoopbackServer::start(vec![Reply::status(403, &[], "")]).await;
        let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
        let shown = turn.error.expect("an error").to_string();
        assert!(shown.contains("OPENAI_API_KEY is not set"), "{shown}");
    }

    #[tokio::test]
    async fn client_errors_quote_the_server_and_do_not_retry() {
        let server = LoopbackServer::start(vec![Reply::status(
            400,
            &[],
            r#"{"error":{"message":"model 'nope' not found"}}"#,
        )])
        .await;
        let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
        assert_eq!(
            turn.error,
            Some(ProviderError::Http {
                status: 400,
                message: "model 'nope' not found".into()
            })
        );
        assert_eq!(server.requests().len(), 1);
    }

    #[tokio::test]
    async fn stream_cut_mid_way_keeps_partial_text_and_does_not_retry() {
        for framing in [Framing::Chunked, Framing::Close] {
            let server = LoopbackServer::start(vec![
                Reply::sse(
                    framing,
                    vec![
                        Part::Bytes(text_chunk("The answer is").into_bytes()),
                        Part::Bytes(text_chunk(" forty").into_bytes()),
                        Part::Bytes(b"data: {\"choices\":[{\"delta\":{\"content\":\" tw".to_vec()),
                        Part::Cut,
                    ],
                ),
                ok_stream(),
            ])
            .await;
            let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
            assert_eq!(turn.text, "The answer is forty", "{framing:?}");
            assert!(turn.partial);
            assert!(
                matches!(turn.error, Some(ProviderError::StreamInterrupted(_))),
                "{framing:?}: {:?}",
                turn.error
            );
            assert_eq!(
                server.requests().len(),
                1,
                "{framing:?}: no retry after content"
            );
        }
    }

    #[tokio::test]
    async fn cancel_mid_stream_closes_the_connection_promptly() {
        let mut server = LoopbackServer::start(vec![Reply::sse(
            Framing::Chunked,
            vec![
                Part::Bytes(text_chunk("thinking").into_bytes()),
                Part::HoldOpen,
            ],
        )])
        .await;
        let p = provider(config(&server, None));
        let mut stream = p.stream_chat(ask("x"));
        let first = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap();
        assert_eq!(first, Some(ProviderEvent::TextDelta("thinking".into())));

        let cancelled_at = Instant::now();
        stream.cancel();
        assert_eq!(stream.next().await, None, "no events after cancel");
        assert!(
            server.wait_client_closed(1, Duration::from_secs(2)).await,
            "the server saw the connection close"
        );
        assert!(cancelled_at.elapsed() < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn dropping_the_stream_also_cancels() {
        let mut server = LoopbackServer::start(vec![Reply::sse(
            Framing::Chunked,
            vec![Part::Bytes(text_chunk("a").into_bytes()), Part::HoldOpen],
        )])
        .await;
        let p = provider(config(&server, None));
        let mut stream = p.stream_chat(ask("x"));
        assert!(stream.next().await.is_some());
        drop(stream);
        assert!(server.wait_client_closed(1, Duration::from_secs(2)).await);
    }

    #[tokio::test]
    async fn silence_longer_than_the_idle_timeout_breaks_the_stream() {
        let mut server = LoopbackServer::start(vec![Reply::sse(
            Framing::Chunked,
            vec![Part::Bytes(text_chunk("slow").into_bytes()), Part::HoldOpen],
        )])
        .await;
        let mut c = config(&server, None);
        c.http.idle_timeout = Duration::from_millis(300);
        let (_, turn) = run(&provider(c), ask("x")).await;
        assert_eq!(turn.text, "slow");
        assert!(turn.partial);
        assert!(
            turn.error
                .as_ref()
                .is_some_and(|e| e.to_string().contains("no data")),
            "{:?}",
            turn.error
        );
        assert!(server.wait_client_closed(1, Duration::from_secs(2)).await);
    }

    /// A body that keeps the connection warm for 25 s and says nothing:
    /// every 100 ms a keep-alive comment, an empty line, and a chunk whose
    /// delta is empty (what servers send around the first token).
    fn keep_alives_only() -> Vec<Part> {
        let mut parts = Vec::new();
        for _ in 0..250 {
            parts.push(Part::Bytes(
                format!(
                    ": ping\n\n\n{}",
                    data(&json!({"choices":[{"index":0,"delta":{}}]}).to_string())
                )
                .into_bytes(),
            ));
            parts.push(Part::Pause(Duration::from_millis(100)));
        }
        parts
    }

    /// Issue 25, "Silent servers": keep-alives are not content. A server
    /// that sends only them, before the first token or after some text, is
    /// given up on after the idle timeout, not waited on for as long as it
    /// keeps pinging.
    #[tokio::test]
    async fn keep_alive_comments_do_not_count_as_content() {
        for before in [None, Some("slow")] {
            let mut body = Vec::new();
            if let Some(text) = before {
                body.push(Part::Bytes(text_chunk(text).into_bytes()));
            }
            body.extend(keep_alives_only());
            let server = LoopbackServer::start(vec![Reply::sse(Framing::Chunked, body)]).await;
            let mut c = config(&server, None);
            c.http.max_attempts = 1;
            c.http.idle_timeout = Duration::from_millis(600);
            let started = Instant::now();
            let (_, turn) = run(&provider(c), ask("x")).await;
            let took = started.elapsed();
            assert_eq!(turn.text, before.unwrap_or(""));
            let error = turn.error.as_ref().map(ToString::to_string);
            assert!(
                error.as_deref().is_some_and(|e| e.contains("no data")),
                "{error:?}"
            );
            assert!(
                took >= Duration::from_millis(600) && took < Duration::from_secs(3),
                "{before:?}: took {took:?}"
            );
        }
    }

    #[tokio::test]
    async fn unreachable_server_is_retried_then_reported() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let mut c = OpenAiConfig::new(
            Some(&format!("http://127.0.0.1:{port}/v1")),
            "m",
            "MY_KEY_VAR",
            &|_| None,
        );
        c.http.max_attempts = 2;
        c.http.initial_backoff = Duration::from_millis(10);
        let (events, turn) = run(&provider(c), ask("x")).await;
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ProviderEvent::Retrying { .. }))
        );
        let shown = turn.error.expect("an error").to_string();
        assert!(shown.contains("gave up after 2 attempts"), "{shown}");
        assert!(
            shown.to_lowercase().contains("connect") || shown.contains("refused"),
            "{shown}"
        );
    }

    /// A listener that accepts connections and never answers (holding them
    /// open), and how many it accepted.
    async fn silent_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(socket);
            }
        });
        (format!("http://127.0.0.1:{port}/v1"), accepted)
    }

    /// A server that accepts and never answers was once waited on for the
    /// 300 s idle timeout per attempt: the first-byte timeout applies.
    #[tokio::test]
    async fn a_server_that_never_answers_hits_the_first_byte_timeout() {
        let (base_url, accepted) = silent_server().await;
        let mut c = OpenAiConfig::new(Some(&base_url), "m", "K", &|_| None);
        c.http.max_attempts = 1;
        c.http.first_byte_timeout = Duration::from_millis(200);
        c.http.idle_timeout = Duration::from_secs(600);
        let (_, turn) = run(&provider(c), ask("x")).await;
        let shown = turn.error.expect("an error").to_string();
        assert!(shown.contains("first-byte timeout"), "{shown}");
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// Retries stop when another try would pass the retry budget, however
    /// many attempts are allowed.
    #[tokio::test]
    async fn retries_stop_at_the_retry_budget() {
        let (base_url, accepted) = silent_server().await;
        let mut c = OpenAiConfig::new(Some(&base_url), "m", "K", &|_| None);
        c.http.max_attempts = 1000;
        c.http.first_byte_timeout = Duration::from_millis(100);
        c.http.initial_backoff = Duration::from_millis(10);
        c.http.max_backoff = Duration::from_millis(20);
        c.http.retry_budget = Duration::from_millis(700);
        let (events, turn) = run(&provider(c), ask("x")).await;
        let shown = turn.error.expect("an error").to_string();
        assert!(shown.contains("retry budget"), "{shown}");
        let retries = events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::Retrying { .. }))
            .count();
        let tries = accepted.load(std::sync::atomic::Ordering::SeqCst);
        assert!(
            retries >= 1 && tries < 1000,
            "{retries} retries, {tries} tries"
        );
    }

    /// Proves the TLS stack is wired (the ring provider is installed, or
    /// reqwest would panic building the client) and that a handshake failure
    /// is a readable error.
    #[tokio::test]
    async fn https_to_a_plain_http_server_is_a_readable_tls_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            if let Ok((mut socket, _)) = listener.accept().await {
                let _ = socket.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await;
            }
        });
        let mut c = OpenAiConfig::new(
            Some(&format!("https://127.0.0.1:{port}/v1")),
            "m",
            "K",
            &|_| None,
        );
        c.http.max_attempts = 1;
        let (_, turn) = run(&provider(c), ask("x")).await;
        let shown = turn.error.expect("an error").to_string();
        assert!(
            shown.starts_with("cannot reach the model server")
                && (shown.contains("corrupt message") || shown.to_lowercase().contains("tls")),
            "{shown}"
        );
        server.abort();
    }

    #[tokio::test]
    async fn error_object_inside_the_stream_is_reported() {
        let body = [
            text_chunk("par"),
            data(r#"{"error":{"message":"context length exceeded"}}"#),
        ]
        .concat();
        let server =
            LoopbackServer::start(vec![Reply::sse(Framing::Chunked, byte_pieces(&body, 5))]).await;
        let (_, turn) = run(&provider(config(&server, None)), ask("x")).await;
        assert_eq!(turn.text, "par");
        assert!(turn.partial);
        // An error that says the window is too small is an overflow (the
        // turn loop makes room and sends again); any other stays `Api`.
        match turn.error {
            Some(ProviderError::ContextOverflow(overflow)) => {
                assert_eq!(overflow.message, "context length exceeded");
            }
            other => panic!("{other:?}"),
        }
    }
}

mod scripted {
    use super::*;

    const SCRIPT: &str = r#"{
        "label": "demo",
        "chunk_chars": 4,
        "delay_ms": 1,
        "turns": [
            { "text": "Let me check the file.",
              "tool_calls": [
                { "name": "python", "arguments": { "code": "print(open('a.txt').read())" } },
                { "id": "raw", "name": "python", "arguments": "{not json" }
              ] },
            { "text": "It says hello.", "usage": { "prompt_tokens": 100, "completion_tokens": 4 } }
        ]
    }"#;

    #[tokio::test]
    async fn replays_turns_in_pieces_through_the_stream() {
        let p = ScriptedProvider::from_json(SCRIPT).unwrap();
        assert_eq!(p.label(), "demo");
        let (events, turn) = run(&p, ask("what is in a.txt?")).await;
        let text_pieces = events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::TextDelta(_)))
            .count();
        let arg_pieces = events
            .iter()
            .filter(|e| matches!(e, ProviderEvent::ToolCallArgumentsDelta { index: 0, .. }))
            .count();
        assert!(
            text_pieces > 1 && arg_pieces > 1,
            "{text_pieces} {arg_pieces}"
        );
        assert_eq!(turn.text, "Let me check the file.");
        assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(turn.tool_calls[0].id, "call_0_0");
        let args: serde_json::Value = serde_json::from_str(&turn.tool_calls[0].arguments).unwrap();
        assert_eq!(args["code"], json!("print(open('a.txt').read())"));
        assert_eq!(turn.tool_calls[1].id, "raw");
        assert_eq!(turn.tool_calls[1].arguments, "{not json");
        assert!(!turn.partial);

        // The next call, with the first answer in the history, plays turn 2.
        let mut request = ask("what is in a.txt?");
        request.messages.push(ChatMessage::Assistant {
            thinking: Vec::new(),
            content: Some(turn.text.clone()),
            tool_calls: turn.tool_calls.clone(),
        });
        request.messages.push(ChatMessage::Tool {
            tool_call_id: "call_0_0".into(),
            content: "hello".into(),
        });
        let (_, second) = run(&p, request).await;
        assert_eq!(second.text, "It says hello.");
        assert_eq!(second.usage.map(|u| u.total_tokens), Some(104));
        assert_eq!(second.finish_reason, Some(FinishReason::Stop));
    }

    #[tokio::test]
    async fn scripted_stream_can_be_cancelled() {
        let p = ScriptedProvider::from_json(
            r#"{"delay_ms": 50, "chunk_chars": 1, "turns": [{"text": "a long long answer"}]}"#,
        )
        .unwrap();
        let mut stream = p.stream_chat(ask("x"));
        assert!(stream.next().await.is_some());
        stream.cancel();
        assert_eq!(stream.next().await, None);
    }

    #[test]
    fn script_file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("demo.json");
        std::fs::write(&path, "{\"turns\": 3}").unwrap();
        let err = ScriptedProvider::from_file(&path).unwrap_err().to_string();
        assert!(err.contains("demo.json") && err.contains("turns"), "{err}");
    }
}

mod sessions {
    use super::*;
    use hello_tui::session::{self, SessionEvent, SessionWriter};
    /// A message line as files written before message ids had them.
    fn message_event(message: &ChatMessage) -> SessionEvent {
        SessionEvent::Message {
            id: None,
            message: message.clone(),
        }
    }

    #[test]
    fn write_and_reload_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let mut w = SessionWriter::create(ws, "test-model", hello_tui::session::SessionOrigin::Tui)
            .unwrap();
        let messages = vec![
            ChatMessage::User {
                content: "list the files".into(),
            },
            ChatMessage::Assistant {
                thinking: Vec::new(),
                content: Some("Running.".into()),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "python".into(),
                    arguments: "{\"code\":\"fs.ls()\"}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "c1".into(),
                content: "['a.txt']".into(),
            },
        ];
        for m in &messages {
            w.append(&message_event(m)).unwrap();
        }
        w.append(&SessionEvent::ToolResult {
            tool_call_id: "c1".into(),
            ok: true,
            output: "['a.txt']".into(),
            duration_ms: Some(12),
        })
        .unwrap();
        w.append(&SessionEvent::Usage {
            prompt_tokens: 10,
            completion_tokens: 3,
        })
        .unwrap();

        assert_eq!(
            w.path(),
            session::sessions_dir(ws).join(format!("{}.jsonl", w.id()))
        );
        assert_eq!(
            std::fs::read_to_string(ws.join(".hello-tui/.gitignore")).unwrap(),
            "*\n"
        );
        // Written and flushed as it happens: the file is complete now, while
        // the writer is still open.
        let loaded = session::load(ws, w.id()).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let events: Vec<&SessionEvent> = loaded.events().collect();
        assert_eq!(events.len(), 6);
        match events[0] {
            SessionEvent::Started {
                id,
                model,
                workspace,
                created_at,
                origin,
            } => {
                assert_eq!(*origin, hello_tui::session::SessionOrigin::Tui);
                assert_eq!(id, w.id());
                assert_eq!(model, "test-model");
                assert_eq!(workspace, &ws.to_string_lossy());
                assert!(created_at.ends_with('Z'), "{created_at}");
            }
            other => panic!("{other:?}"),
        }
        let resumed: Vec<ChatMessage> = loaded
            .events()
            .filter_map(|e| match e {
                SessionEvent::Message { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(resumed, messages);
        assert!(loaded.records.iter().all(|r| r.at.is_some()));
        let text = std::fs::read_to_string(w.path()).unwrap();
        assert_eq!(text.lines().count(), 6);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
        );
    }

    #[test]
    fn truncated_last_line_is_skipped_and_resume_starts_a_clean_line() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let mut w = SessionWriter::create(ws, "m", hello_tui::session::SessionOrigin::Tui).unwrap();
        w.append(&message_event(&ChatMessage::User {
            content: "one".into(),
        }))
        .unwrap();
        let id = w.id().to_owned();
        let path = w.path().to_owned();
        drop(w);
        // A crash in the middle of writing the next line.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"type\":\"message\",\"role\":\"assis");
        std::fs::write(&path, &bytes).unwrap();

        let loaded = session::load(ws, &id).unwrap();
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 3);
        assert!(loaded.warnings[0].message.contains("incomplete"));

        let mut w = SessionWriter::resume(ws, &id).unwrap();
        w.append(&message_event(&ChatMessage::User {
            content: "two".into(),
        }))
        .unwrap();
        let loaded = session::load(ws, &id).unwrap();
        assert_eq!(loaded.records.len(), 3, "{:?}", loaded.warnings);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 3);
        assert!(
            loaded.warnings[0].message.contains("not a session event"),
            "now in the middle"
        );
    }

    #[test]
    fn garbage_in_the_middle_is_reported_with_its_line_and_the_rest_loads() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let sessions = session::sessions_dir(ws);
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::write(
            sessions.join("20260101-000000-0000.jsonl"),
            b"{\"type\":\"session.started\",\"id\":\"20260101-000000-0000\",\"workspace\":\"/w\",\"created_at\":\"2026-01-01T00:00:00Z\",\"model\":\"m\"}\n\xff\xfe garbage\n\n{\"type\":\"message\",\"role\":\"user\",\"content\":\"after\"}\n{\"type\":\"future.event\",\"x\":1}\n",
        )
        .unwrap();
        let loaded = session::load(ws, "20260101-000000-0000").unwrap();
        assert_eq!(loaded.records.len(), 3);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 2);
    }

    #[test]
    fn listing_is_newest_first_with_first_prompt_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        assert!(
            session::list(ws).unwrap().is_empty(),
            "no directory, no sessions"
        );
        assert_eq!(
            session::latest(ws, hello_tui::session::SessionOrigin::Tui).unwrap(),
            None
        );

        let mut ids = Vec::new();
        for (n, prompt) in [
            "first session",
            "second\nsession   prompt",
            &"long ".repeat(40),
        ]
        .iter()
        .enumerate()
        {
            let mut w = SessionWriter::create(
                ws,
                &format!("model-{n}"),
                hello_tui::session::SessionOrigin::Tui,
            )
            .unwrap();
            w.append(&message_event(&ChatMessage::User {
                content: prompt.to_string(),
            }))
            .unwrap();
            for _ in 0..n {
                w.append(&message_event(&ChatMessage::Assistant {
                    thinking: Vec::new(),
                    content: Some("ok".into()),
                    tool_calls: vec![],
                }))
                .unwrap();
            }
            ids.push(w.id().to_owned());
            // created_at has sub-second precision; keep them apart anyway.
            std::thread::sleep(Duration::from_millis(5));
        }
        std::fs::write(session::sessions_dir(ws).join("notes.txt"), "ignored").unwrap();

        let list = session::list(ws).unwrap();
        let listed: Vec<&str> = list.iter().map(|s| s.id.as_str()).collect();
        let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
        assert_eq!(listed, newest_first);
        assert_eq!(list[2].first_prompt, "first session");
        assert_eq!(list[2].message_count, 1);
        assert_eq!(list[1].first_prompt, "second session prompt");
        assert_eq!(list[1].message_count, 2);
        assert_eq!(list[1].model, "model-1");
        assert!(list[0].first_prompt.ends_with('…') && list[0].first_prompt.chars().count() == 81);
        assert_eq!(
            session::latest(ws, hello_tui::session::SessionOrigin::Tui)
                .unwrap()
                .map(|s| s.id),
            Some(ids[2].clone())
        );
    }

    #[test]
    fn key_shaped_strings_never_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        let mut w = SessionWriter::create(ws, "m", hello_tui::session::SessionOrigin::Tui).unwrap();
        w.append(&message_event(&ChatMessage::User {
            content: format!(
                "my key is {SECRET}, also sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAA; use sk-learn"
            ),
        }))
        .unwrap();
        w.append(&SessionEvent::Error {
            message: format!("401 for {SECRET}"),
        })
        .unwrap();
        let text = std::fs::read_to_string(w.path()).unwrap();
        assert!(!text.contains("0123456789abcdefghij"), "{text}");
        assert!(!text.contains("AAAAAAAAAAAAAAAAAAAA"), "{text}");
        assert!(text.contains("[REDACTED]") && text.contains("sk-learn"));
        let loaded = session::load(ws, w.id()).unwrap();
        assert!(loaded.warnings.is_empty());
    }

    #[test]
    fn bad_and_unknown_ids_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            session::load(dir.path(), "../../etc/passwd"),
            Err(session::SessionError::InvalidId(_))
        ));
        assert!(matches!(
            session::load(dir.path(), "20260101-000000-beef"),
            Err(session::SessionError::NotFound { .. })
        ));
        assert!(SessionWriter::resume(dir.path(), "20260101-000000-beef").is_err());
    }
}

/// The context window as each server family reports it, over real HTTP.
mod window_probe {
    use super::*;
    use hello_tui::tokens::probe::probe_window;

    fn json_reply(body: serde_json::Value) -> Reply {
        Reply::status(
            200,
            &[("Content-Type", "application/json")],
            &body.to_string(),
        )
    }

    fn not_found() -> Reply {
        Reply::status(404, &[], "{\"error\":\"not found\"}")
    }

    #[tokio::test]
    async fn vllm_says_max_model_len_in_its_model_list() {
        let server = LoopbackServer::start(vec![json_reply(json!({
            "object": "list",
            "data": [{"id": "test-model", "object": "model", "owned_by": "vllm", "max_model_len": 32768}]
        }))])
        .await;
        let got = probe_window(&config(&server, Some(SECRET))).await;
        assert_eq!(got, Some((32_768, "vllm")));
        let requests = server.requests();
        assert_eq!(requests[0].method, "GET");
        assert_eq!(requests[0].path, "/v1/models");
        assert_eq!(
            requests[0].header("authorization"),
            Some(format!("Bearer {SECRET}").as_str()),
            "vLLM started with --api-key needs the key on /v1/models too"
        );
    }

    #[tokio::test]
    async fn llama_cpp_says_n_ctx_in_props() {
        let server = LoopbackServer::start(vec![
            // llama.cpp's model list has no max_model_len.
            json_reply(json!({"object": "list", "data": [{"id": "test-model", "meta": {"n_ctx_train": 131072}}]})),
            json_reply(json!({"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1})),
        ])
        .await;
        let got = probe_window(&config(&server, None)).await;
        assert_eq!(got, Some((8192, "llama.cpp")));
        let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
        assert_eq!(paths, ["/v1/models", "/props"]);
    }

    #[tokio::test]
    async fn ollama_says_num_ctx_in_api_show() {
        let server = LoopbackServer::start(vec![
            json_reply(
                json!({"object": "list", "data": [{"id": "test-model", "object": "model"}]}),
            ),
            not_found(),
            json_reply(json!({
                "parameters": "num_ctx                        8000\nstop \"<|eot_id|>\"",
                "model_info": {"general.architecture": "llama", "llama.context_length": 131072}
            })),
        ])
        .await;
        let got = probe_window(&config(&server, None)).await;
        assert_eq!(got, Some((8000, "ollama")));
        let requests = server.requests();
        assert_eq!(requests[2].method, "POST");
        assert_eq!(requests[2].path, "/api/show");
        assert_eq!(requests[2].json(), json!({"model": "test-model"}));
    }

    #[tokio::test]
    async fn a_server_that_says_nothing_leaves_the_table_to_decide() {
        let server = LoopbackServer::start(vec![
            Reply::status(401, &[], "{\"error\":\"no\"}"),
            json_reply(json!({"unrelated": true})),
            Reply::status(200, &[], "not json at all"),
        ])
        .await;
        assert_eq!(probe_window(&config(&server, None)).await, None);
        // Nothing listening: also just "does not say".
        let mut dead = config(&server, None);
        dead.base_url = "http://127.0.0.1:9/v1".into();
        assert_eq!(probe_window(&dead).await, None);
    }
}

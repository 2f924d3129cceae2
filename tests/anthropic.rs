//! The native Anthropic client against a loopback server speaking the
//! Messages API's documented event stream (`event:` lines, `ping`,
//! thinking with its `signature_delta`, `tool_use` with `input_json_delta`,
//! `message_delta` usage with cache counts, `error` mid-stream), its
//! retries on 529/429 with `retry-after`, where the request puts
//! `cache_control`, and `GET /v1/models`.

#[path = "support/anthropic_wire.rs"]
#[allow(dead_code)]
mod anthropic_wire;
#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;

use anthropic_wire::{
    block_start, block_stop, delta, event, message_end, message_start, ping, sse, text_answer,
};

use std::time::{Duration, Instant};

use hello_tui::agent::conversation::Conversation;
use hello_tui::agent::prompt::{OMITTED_HEADING, SUMMARY_HEADING};
use hello_tui::agent::provider::anthropic::{API_VERSION, AnthropicConfig};
use hello_tui::agent::provider::{
    AnthropicProvider, AssistantTurn, ChatMessage, ChatRequest, FinishReason, ModelProvider,
    ProviderError, ProviderEvent, TurnAssembler,
};
use hello_tui::agent::turn::next_prompt;
use hello_tui::context::SharedContext;
use hello_tui::tokens::ContextWindow;
use loopback::{LoopbackServer, Reply};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-0123456789abcdefghij";

fn provider(server: &LoopbackServer) -> AnthropicProvider {
    let mut config = AnthropicConfig::new(
        Some(&server.base_url),
        "claude-test",
        "ANTHROPIC_API_KEY",
        &|_| Some(KEY.to_owned()),
    );
    config.http.initial_backoff = Duration::from_millis(10);
    config.http.idle_timeout = Duration::from_secs(5);
    AnthropicProvider::new(config).expect("valid config")
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::User {
            content: text.into(),
        }],
        ..ChatRequest::default()
    }
}

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

#[tokio::test]
async fn thinking_text_and_tool_use_stream_with_the_documented_events_and_headers() {
    let body = [
        message_start(30, 2_000, 0),
        ping(),
        block_start(
            0,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "The file is small; "}),
        ),
        delta(
            0,
            json!({"type": "thinking_delta", "thinking": "read it — ✓."}),
        ),
        delta(
            0,
            json!({"type": "signature_delta", "signature": "EqQBCgIYAhIMsig=="}),
        ),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        delta(1, json!({"type": "text_delta", "text": "Reading "})),
        ping(),
        delta(1, json!({"type": "text_delta", "text": "auth.ts…"})),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_01A", "name": "code_action", "input": {}}),
        ),
        delta(2, json!({"type": "input_json_delta", "partial_json": ""})),
        delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"code\": \"print(fs"}),
        ),
        delta(
            2,
            json!({"type": "input_json_delta", "partial_json": ".read('auth.ts'))\"}"}),
        ),
        block_stop(2),
        message_end("tool_use", 120),
    ];
    let server = LoopbackServer::start(vec![sse(&body)]).await;
    let p = provider(&server);
    let (events, turn) = run(&p, ask("why?")).await;

    assert!(!turn.partial, "{:?}", turn.error);
    assert_eq!(turn.text, "Reading auth.ts…");
    assert_eq!(turn.reasoning, "The file is small; read it — ✓.");
    assert_eq!(turn.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(turn.tool_calls[0].id, "toolu_01A");
    assert_eq!(turn.tool_calls[0].name, "code_action");
    assert_eq!(
        turn.tool_calls[0].arguments,
        "{\"code\": \"print(fs.read('auth.ts'))\"}"
    );
    // The signed block is kept for the next request, the answer is not it.
    match turn.to_message() {
        Some(ChatMessage::Assistant {
            content, thinking, ..
        }) => {
            assert_eq!(content.as_deref(), Some("Reading auth.ts…"));
            assert_eq!(thinking.len(), 1);
            assert_eq!(thinking[0].signature.as_deref(), Some("EqQBCgIYAhIMsig=="));
        }
        other => panic!("{other:?}"),
    }
    let usage = turn.usage.expect("usage at message_stop");
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cache_write_tokens,
            usage.cache_read_tokens
        ),
        (2_030, 120, 2_000, 0)
    );
    assert!(matches!(
        events.last(),
        Some(ProviderEvent::Finished(FinishReason::ToolCalls))
    ));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some(API_VERSION));
    assert_eq!(sent.header("authorization"), None, "no bearer token");
    let body = sent.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["stream"], true);
    assert!(body["max_tokens"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "why?", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

/// The prompt the turn loop assembles — system prompt, tool schema, a
/// compaction summary, the note about left-out messages — is cached up
/// to the summary: four breakpoints (tools, system prompt, summary, last
/// message), never on the note, which changes as the window slides.
#[tokio::test]
async fn cache_control_marks_the_stable_prefix_of_an_assembled_prompt() {
    let server = LoopbackServer::start(vec![sse(&text_answer("ok"))]).await;
    let p = provider(&server);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    for i in 0..6 {
        conversation.push(ChatMessage::User {
            content: format!("question {i}"),
        });
        conversation.push(ChatMessage::assistant(Some(format!("answer {i}")), vec![]));
    }
    conversation.compact("- the user asked six questions".into(), 8, true, None);
    conversation.push(ChatMessage::User {
        content: "and now?".into(),
    });
    let window = ContextWindow::resolve(Some(200_000), None, "claude", None, None);
    let prompt = next_prompt(&conversation, &window);
    let preview = p.messages_json(&prompt.request);
    let (_, turn) = run(&p, prompt.request).await;
    assert!(!turn.partial, "{:?}", turn.error);

    let body = server.requests()[0].json();
    // F2's JSON view is what was sent.
    assert_eq!(
        preview,
        json!({"system": body["system"], "messages": body["messages"]})
    );
    let system = body["system"].as_array().expect("system blocks");
    let marked = |block: &Value| block.get("cache_control") == Some(&json!({"type": "ephemeral"}));
    assert_eq!(system.len(), 2, "{system:#?}");
    assert!(
        system[0]["text"]
            .as_str()
            .unwrap()
            .contains("context.search")
    );
    assert!(marked(&system[0]));
    assert!(
        system[1]["text"]
            .as_str()
            .unwrap()
            .starts_with(OMITTED_HEADING)
    );
    assert!(!marked(&system[1]));
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "code_action");
    assert!(marked(tools.last().unwrap()));
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert!(marked(last.last().unwrap()));
    // The summary opens the history as user-role text (issue 25, route
    // 11: never system text), cached.
    let first = &messages[0];
    assert_eq!(first["role"], "user");
    let summary = &first["content"][0];
    assert!(
        summary["text"]
            .as_str()
            .unwrap()
            .starts_with(SUMMARY_HEADING)
            && summary["text"].as_str().unwrap().contains("six questions"),
        "{summary:#}"
    );
    assert!(marked(summary));
    // Four breakpoints in all: the API's limit.
    let count = body.to_string().matches("\"cache_control\"").count();
    assert_eq!(count, 4, "{body:#}");
    // Only the summary's messages left: the rest of the history is sent,
    // its first user message opened by the summary.
    assert!(
        summary["text"]
            .as_str()
            .unwrap()
            .ends_with("\n\nquestion 4"),
        "{summary:#}"
    );
}

#[tokio::test]
async fn overloaded_529_and_rate_limited_429_are_retried_after_the_servers_wait() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let limited = r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#;
    let server = LoopbackServer::start(vec![
        Reply::status(529, &[("retry-after", "1")], overloaded),
        Reply::status(429, &[("retry-after", "0")], limited),
        sse(&text_answer("at last")),
    ])
    .await;
    let p = provider(&server);
    let started = Instant::now();
    let (events, turn) = run(&p, ask("hi")).await;
    assert_eq!(turn.text, "at last");
    assert!(!turn.partial);
    assert_eq!(turn.retries, 2);
    let waits: Vec<(Duration, String)> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::Retrying { wait, reason, .. } => Some((*wait, reason.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        waits[0].0,
        Duration::from_secs(1),
        "retry-after: 1 is honoured"
    );
    assert!(
        waits[0].1.contains("529") && waits[0].1.contains("Overloaded"),
        "{waits:?}"
    );
    assert_eq!(waits[1].0, Duration::ZERO);
    assert!(
        waits[1].1.contains("429") && waits[1].1.contains("rate limit"),
        "{waits:?}"
    );
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_overloaded_error_event_before_any_content_is_retried() {
    let first = vec![
        message_start(10, 0, 0),
        ping(),
        event(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ];
    let server = LoopbackServer::start(vec![sse(&first), sse(&text_answer("fine"))]).await;
    let (events, turn) = run(&provider(&server), ask("hi")).await;
    assert_eq!(turn.text, "fine");
    assert!(!turn.partial);
    assert!(
        events.iter().any(|e| matches!(e, ProviderEvent::Retrying { reason, .. } if reason.contains("overloaded_error"))),
        "{events:?}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_error_event_mid_answer_fails_the_call_and_keeps_the_text() {
    let body = vec![
        message_start(10, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": "Half an ans"})),
        event(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ];
    // A second reply that must not be asked for: text was already shown.
    let server = LoopbackServer::start(vec![sse(&body), sse(&text_answer("dup"))]).await;
    let (_, turn) = run(&provider(&server), ask("hi")).await;
    assert!(turn.partial);
    assert_eq!(turn.text, "Half an ans");
    assert_eq!(
        turn.error,
        Some(ProviderError::Api("Overloaded (overloaded_error)".into()))
    );
    assert_eq!(server.requests().len(), 1, "not retried after output");
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_interrupted() {
    let mut body = text_answer("almost");
    body.pop(); // message_delta + message_stop
    let server = LoopbackServer::start(vec![sse(&body)]).await;
    let (_, turn) = run(&provider(&server), ask("hi")).await;
    assert!(turn.partial);
    assert!(
        matches!(turn.error, Some(ProviderError::StreamInterrupted(_))),
        "{:?}",
        turn.error
    );
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows_the_key() {
    let body = format!(
        r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
    );
    let server = LoopbackServer::start(vec![Reply::status(401, &[], &body)]).await;
    let (_, turn) = run(&provider(&server), ask("hi")).await;
    let message = turn.error.expect("an error").to_string();
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    assert!(message.contains("invalid x-api-key"), "{message}");
    assert!(!message.contains(KEY), "{message}");
}

#[tokio::test]
async fn models_are_listed_from_v1_models_and_a_switch_keeps_the_server() {
    let list = json!({
        "data": [
            {"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5", "created_at": "2025-09-29T00:00:00Z"},
            {"type": "model", "id": "claude-haiku-4-5", "display_name": "Claude Haiku 4.5", "created_at": "2025-10-01T00:00:00Z"}
        ],
        "has_more": false, "first_id": "claude-sonnet-4-5", "last_id": "claude-haiku-4-5"
    });
    let server = LoopbackServer::start(vec![
        Reply::status(
            200,
            &[("content-type", "application/json")],
            &list.to_string(),
        ),
        sse(&text_answer("hi from haiku")),
    ])
    .await;
    let p = provider(&server);
    let models = p.list_models().await.expect("a list");
    assert_eq!(models, ["claude-sonnet-4-5", "claude-haiku-4-5"]);
    let switched = p.with_model("claude-haiku-4-5").unwrap();
    assert_eq!(switched.model().as_deref(), Some("claude-haiku-4-5"));
    let (_, turn) = run(&*switched, ask("hi")).await;
    assert_eq!(turn.text, "hi from haiku");
    let requests = server.requests();
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert_eq!(requests[0].header("anthropic-version"), Some(API_VERSION));
    assert_eq!(requests[1].json()["model"], "claude-haiku-4-5");
}

/// Issue 25, "Silent servers": Anthropic's `ping` events are events the
/// decoder turns into nothing. A server that starts a message and then
/// only pings every 100 ms is silent: the turn ends at the idle timeout.
#[tokio::test]
async fn a_server_that_only_pings_is_silent() {
    let mut body = vec![loopback::Part::Bytes(
        [
            message_start(20, 0, 0),
            block_start(0, json!({"type": "text", "text": ""})),
        ]
        .concat()
        .into_bytes(),
    )];
    for _ in 0..250 {
        body.push(loopback::Part::Bytes(ping().into_bytes()));
        body.push(loopback::Part::Pause(Duration::from_millis(100)));
    }
    let server = LoopbackServer::start(vec![Reply::sse(loopback::Framing::Chunked, body)]).await;
    let mut config = AnthropicConfig::new(
        Some(&server.base_url),
        "claude-test",
        "ANTHROPIC_API_KEY",
        &|_| Some(KEY.to_owned()),
    );
    config.http.max_attempts = 1;
    config.http.idle_timeout = Duration::from_millis(600);
    let provider = AnthropicProvider::new(config).expect("valid config");
    let started = Instant::now();
    let (_, turn) = run(&provider, ask("x")).await;
    let took = started.elapsed();
    let error = turn.error.as_ref().map(ToString::to_string);
    assert!(
        error.as_deref().is_some_and(|e| e.contains("no data")),
        "{error:?}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
}

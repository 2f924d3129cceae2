//! A request too long for the server's window is recovered from (issue
//! 28): each server's own overflow answer, played by a loopback server in
//! its real shape (llama.cpp, vLLM, OpenAI, LM Studio's 200 with an error
//! body, in a JSON document or in the stream; Anthropic's), is read for the
//! real window and count, the bounded prompt leaves out what no longer
//! fits, and the request goes once more; only a message that cannot fit on
//! its own ends the turn, with the numbers.

#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;

use std::sync::Arc;
use std::time::Duration;

use hello_tui::agent::conversation::Conversation;
use hello_tui::agent::provider::openai::OpenAiConfig;
use hello_tui::agent::provider::{
    AnthropicConfig, AnthropicProvider, ChatMessage, ChatRequest, ModelProvider, OpenAiProvider,
    ProviderError,
};
use hello_tui::agent::turn::{AllowCells, TurnDeps, TurnEvent, TurnOutcome, run_turn};
use hello_tui::context::{SharedContext, snapshot_channel};
use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
use hello_tui::tokens::ContextWindow;
use loopback::{Framing, LoopbackServer, Reply, byte_pieces, data};
use serde_json::json;
use tokio::sync::{mpsc, watch};

/// An answer without usage (the turn counts it itself).
fn answer(text: &str) -> Reply {
    answer_with_usage(text, None, "fp_test")
}

/// An answer, with the usage the server reports (`prompt_tokens`), from a
/// server known by its `system_fingerprint` (`fp_ollama`: Ollama).
fn answer_with_usage(text: &str, prompt_tokens: Option<u64>, fingerprint: &str) -> Reply {
    let mut body = vec![
        data(&json!({"choices":[{"index":0,"delta":{"content":text}}]}).to_string()),
        data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string()),
    ];
    if let Some(prompt) = prompt_tokens {
        body.push(data(
            &json!({"choices":[],"system_fingerprint":fingerprint,"usage":{"prompt_tokens":prompt,"completion_tokens":2,"total_tokens":prompt + 2}})
                .to_string(),
        ));
    }
    body.push("data: [DONE]\r\n\r\n".to_owned());
    Reply::sse(Framing::Chunked, byte_pieces(&body.concat(), 64))
}

fn json_reply(status: u16, body: &serde_json::Value) -> Reply {
    Reply::status(
        status,
        &[("Content-Type", "application/json")],
        &body.to_string(),
    )
}

fn openai(server: &LoopbackServer) -> Arc<dyn ModelProvider> {
    let mut config = OpenAiConfig::new(Some(&server.base_url), "m", "NO_SUCH_KEY_VAR", &|_| None);
    config.http.initial_backoff = Duration::from_millis(10);
    Arc::new(OpenAiProvider::new(config).unwrap())
}

fn deps(root: &std::path::Path, provider: Arc<dyn ModelProvider>, window: usize) -> TurnDeps {
    // The answers are text: no cell runs, so the kernel never starts.
    let (kernel, _) =
        CodeRuntime::new(KernelConfig::for_workspace(root), CapabilityRegistry::new());
    TurnDeps {
        provider,
        runner: Arc::new(kernel),
        approval: Arc::new(AllowCells),
        snapshot_tx: snapshot_channel().0,
        max_steps: 4,
        cell_timeout: None,
        window: ContextWindow::resolve(Some(window), None, "m", None, None),
        hooks: hello_tui::hooks::Hooks::default(),
    }
}

async fn turn(
    deps: &TurnDeps,
    conversation: &mut Conversation,
    prompt: &str,
) -> (TurnOutcome, Vec<TurnEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cancel, cancel_rx) = watch::channel(false);
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        run_turn(deps, conversation, prompt, None, &tx, cancel_rx),
    )
    .await
    .expect("the turn ends");
    drop(tx);
    let mut events = Vec::new();
    while let Some(event) = rx.recv().await {
        events.push(event);
    }
    (outcome, events)
}

/// A first turn with a long message fills the history; the second turn's
/// request is refused with `refusal`. The window the server named makes
/// the history due for compaction (the model writes the summary: the third
/// answer), and the request sent again leaves the long message out; the
/// user is told in one line.
async fn recovers_from(refusal: Reply, server_name: &str) {
    let root = tempfile::tempdir().unwrap();
    let server = LoopbackServer::start(vec![
        answer("one"),
        refusal,
        answer("They talked about long words."),
        answer("two"),
    ])
    .await;
    // Our window is large: only the server knows better.
    let deps = deps(root.path(), openai(&server), 32_000);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let (first, _) = turn(&deps, &mut conversation, &"long words ".repeat(2_000)).await;
    assert!(matches!(first, TurnOutcome::Completed { .. }), "{first:?}");

    let (outcome, events) = turn(&deps, &mut conversation, "and now?").await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}\n{events:#?}"
    );
    let told: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ContextOverflow { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(told.len(), 1, "{events:#?}");
    assert!(told[0].contains(server_name), "{}", told[0]);
    assert!(!told[0].contains('\n'), "one line: {}", told[0]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let refused = requests[1].json();
    assert!(requests[2].json()["tools"].is_null(), "the summary call");
    let again = requests[3].json();
    assert!(
        again.to_string().len() * 2 < refused.to_string().len(),
        "{again:#}"
    );
    assert!(!again.to_string().contains("long words long words"));
    assert_eq!(
        again["messages"].as_array().unwrap().last().unwrap()["content"],
        "and now?"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_400_exceed_context_size_error() {
    let body = json!({"error": {"code": 400, "message": "request (6000 tokens) exceeds the available context size (4096 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 6000, "n_ctx": 4096}});
    recovers_from(json_reply(400, &body), "llama.cpp").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllm_400_maximum_context_length() {
    let body = json!({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 7000 tokens (6000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "param": null, "code": 400});
    recovers_from(json_reply(400, &body), "vLLM").await;
}

/// Ollama's cut at `num_ctx` took the user's message itself: it answers
/// 500, which is never retried as is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ollama_500_no_user_query_found() {
    let body = json!({"error": {"message": "no user query found in messages", "type": "api_error", "param": null, "code": null}});
    recovers_from(json_reply(500, &body), "Ollama").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_context_length_exceeded() {
    let body = json!({"error": {"message": "This model's maximum context length is 4096 tokens. However, your messages resulted in 6000 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}});
    recovers_from(json_reply(400, &body), "OpenAI").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lm_studio_200_with_an_error_document() {
    let body = json!({"error": "Trying to keep the first 6000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"});
    recovers_from(json_reply(200, &body), "LM Studio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lm_studio_200_with_an_error_in_the_stream() {
    let event = data(&json!({"error": {"message": "Trying to keep the first 6000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough."}}).to_string());
    recovers_from(
        Reply::sse(Framing::Close, byte_pieces(&event, 64)),
        "LM Studio",
    )
    .await;
}

/// What no compaction can help: the server's window is smaller than the
/// system prompt and the message. The turn ends with the numbers, and the
/// same request is not sent again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_cannot_fit_alone_is_an_error_with_the_numbers() {
    let root = tempfile::tempdir().unwrap();
    let body = json!({"error": {"code": 400, "message": "request (2100 tokens) exceeds the available context size (1024 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 2100, "n_ctx": 1024}});
    let server = LoopbackServer::start(vec![json_reply(400, &body)]).await;
    let deps = deps(root.path(), openai(&server), 32_000);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let (outcome, _) = turn(&deps, &mut conversation, "hello").await;
    let TurnOutcome::Failed(message) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(message.contains("window is 1024"), "{message}");
    assert!(message.contains("the server counted 2100"), "{message}");
    assert_eq!(server.requests().len(), 1);
}

/// Anthropic's 400 "prompt is too long" is read with its numbers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_prompt_is_too_long() {
    let body = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}});
    let server = LoopbackServer::start(vec![json_reply(400, &body)]).await;
    let mut config = AnthropicConfig::new(Some(&server.base_url), "claude-test", "K", &|_| {
        Some("sk-ant-test-0123456789abcdefghij".to_owned())
    });
    config.http.initial_backoff = Duration::from_millis(10);
    let provider = AnthropicProvider::new(config).unwrap();
    let turn = provider
        .stream_chat(ChatRequest {
            messages: vec![ChatMessage::User {
                content: "hi".into(),
            }],
            ..ChatRequest::default()
        })
        .collect()
        .await;
    match turn.error {
        Some(ProviderError::ContextOverflow(overflow)) => {
            assert_eq!(overflow.server, "Anthropic");
            assert_eq!(
                (overflow.prompt_tokens, overflow.window),
                (Some(208_310), Some(200_000))
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.requests().len(),
        1,
        "an overflow is not retried as is"
    );
}

/// The prompt tokens the turn said it sends.
fn sent(events: &[TurnEvent]) -> usize {
    events
        .iter()
        .find_map(|e| match e {
            TurnEvent::Prompt { tokens, .. } => Some(*tokens),
            _ => None,
        })
        .expect("a request was sent")
}

/// Ollama does not refuse: it keeps the last `num_ctx` tokens and answers
/// (the system prompt and tools go first). Its usage gives it away: far
/// fewer prompt tokens than were sent. The user is told in one line with
/// the window the server really used (the front end keeps it for the next
/// turns), and the counter is not "corrected" by it.
#[tokio::test]
async fn a_silent_cut_is_seen_in_the_usage() {
    let root = tempfile::tempdir().unwrap();
    let server =
        LoopbackServer::start(vec![answer_with_usage("one", Some(1_000), "fp_ollama")]).await;
    let deps = deps(root.path(), openai(&server), 32_000);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let counter = conversation.counter().describe();
    let (first, events) = turn(&deps, &mut conversation, &"long words ".repeat(2_000)).await;
    assert!(matches!(first, TurnOutcome::Completed { .. }), "{first:?}");
    assert!(sent(&events) > 4_000, "{}", sent(&events));
    let told: Vec<(&String, usize)> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ContextOverflow { message, window } => Some((message, window.tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(told.len(), 1, "{events:#?}");
    assert!(
        told[0].0.contains("used only 1000 of the about"),
        "{}",
        told[0].0
    );
    assert!(told[0].0.contains("num_ctx"), "{}", told[0].0);
    assert_eq!(told[0].1, 1_002, "what it kept and wrote");
    assert_eq!(conversation.counter().describe(), counter, "not corrected");
}

/// An honest count a third below ours (another tokenizer) is no cut: the
/// counter learns from it instead.
#[tokio::test]
async fn a_tokenizer_a_third_off_is_not_a_cut() {
    let root = tempfile::tempdir().unwrap();
    let prompt = "long words ".repeat(2_000);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let counter = conversation.counter().describe();
    // What the request will count, asked of a turn that is refused.
    let probe = LoopbackServer::start(vec![answer("probe")]).await;
    let (_, events) = turn(
        &deps(root.path(), openai(&probe), 32_000),
        &mut Conversation::new(SharedContext::default(), None),
        &prompt,
    )
    .await;
    let honest = (sent(&events) * 2 / 3) as u64;
    let server =
        LoopbackServer::start(vec![answer_with_usage("one", Some(honest), "fp_ollama")]).await;
    let deps = deps(root.path(), openai(&server), 32_000);
    let (_, events) = turn(&deps, &mut conversation, &prompt).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TurnEvent::ContextOverflow { .. })),
        "{events:#?}"
    );
    assert_ne!(conversation.counter().describe(), counter, "corrected");
}

/// A server that refuses what does not fit (anything but Ollama) is never
/// taken for one that cut, whatever its usage says.
#[tokio::test]
async fn only_ollama_is_taken_to_cut_silently() {
    let root = tempfile::tempdir().unwrap();
    let server =
        LoopbackServer::start(vec![answer_with_usage("one", Some(1_000), "fp_other")]).await;
    let deps = deps(root.path(), openai(&server), 32_000);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let (_, events) = turn(&deps, &mut conversation, &"long words ".repeat(2_000)).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TurnEvent::ContextOverflow { .. })),
        "{events:#?}"
    );
}

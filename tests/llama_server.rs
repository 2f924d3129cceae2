//! Real turns against a real model server (issue 28): llama.cpp's
//! `llama-server`, built by `scripts/test` from PyPI's source package, with
//! SmolLM2-135M. A 135M model is no agent: these tests check the
//! conversation with the server (the window from `/props`, the counter from
//! `/tokenize`, streaming, usage, an answer that ends by length, the
//! model list, an overflow recovered from), never what the model writes.
//!
//! Without the server they fail, saying how to build it: a silent pass
//! would hide a broken install.

#[path = "support/llama.rs"]
mod llama;

use std::process::Command;

use llama::{LlamaServer, get};
use serde_json::Value;

/// Runs `hello-tui exec --json` on `dir` against `server`; its events.
fn exec(server: &LlamaServer, dir: &std::path::Path, extra: &[&str], prompt: &str) -> Vec<Value> {
    let output = Command::new(env!("CARGO_BIN_EXE_hello-tui"))
        .args(["exec", "--model", "smol", "--base-url"])
        .arg(format!("{}/v1", server.base_url))
        .args([
            "--approval",
            "deny",
            "--diagnostics-wait",
            "0",
            "--json",
            "-C",
        ])
        .arg(dir)
        .args(extra)
        .arg(prompt)
        .env("HELLO_TUI_DATA_DIR", dir.join(".data"))
        .output()
        .expect("exec runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    events
}

fn event<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event in {events:#?}"))
}

/// A first turn: the window comes from `/props`, the counter is the
/// server's `/tokenize`, the answer streams and usage comes back; with
/// `-n 8` the answer ends by length (or before, at the model's own stop).
#[test]
fn a_real_turn_reads_the_window_counts_with_the_server_and_reports_usage() {
    let server = LlamaServer::start(4096, 8);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.py"), "print('hello')\n").unwrap();
    let events = exec(&server, dir.path(), &["--open", "hello.py:1"], "Say hi.");
    let window = event(&events, "context.window");
    assert_eq!(window["tokens"], 4096, "{window}");
    assert_eq!(window["source"], "server (llama.cpp)");
    assert_eq!(window["reserve"], 1024);
    assert_eq!(window["counter"], "server /tokenize");
    let done = event(&events, "turn.completed");
    let usage = &done["usage"];
    let prompt = usage["prompt_tokens"].as_u64().unwrap();
    let completion = usage["completion_tokens"].as_u64().unwrap();
    assert!(prompt > 100, "{usage}");
    assert!((1..=8).contains(&completion), "{usage}");
    // Our count (the server's tokenizer, plus what the chat template adds
    // by our guess) is within a tenth of the server's.
    let counted = event(&events, "prompt")["tokens"].as_u64().unwrap();
    assert!(
        counted.abs_diff(prompt) * 10 <= prompt,
        "{counted} vs {prompt}"
    );
    let cut = events.iter().any(|e| e["type"] == "answer.cut");
    assert_eq!(cut, completion == 8, "{events:#?}");
    assert!(events.iter().any(|e| e["type"] == "assistant.message"));
}

/// The server's model list is what `/model` shows.
#[test]
fn the_model_list_names_the_served_model() {
    let server = LlamaServer::start(2048, 4);
    let list = get(server.port, "/v1/models").expect("a model list");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let ids = runtime.block_on(async {
        use hello_tui::agent::provider::{ModelProvider, OpenAiConfig, OpenAiProvider};
        let config = OpenAiConfig::new(
            Some(&format!("{}/v1", server.base_url)),
            "smol",
            "NO_SUCH_KEY_VAR",
            &|_| None,
        );
        OpenAiProvider::new(config)
            .unwrap()
            .list_models()
            .await
            .unwrap()
    });
    assert!(!ids.is_empty(), "{list}");
    assert!(ids[0].contains("SmolLM2"), "{ids:?}");
}

/// Issue 28's failing case: `-c 3072` and a 400-line file open at line
/// 200. Before the budgets followed the window, every turn was refused
/// before it was sent ("needs about 4245 tokens but the window is 3072").
#[test]
fn a_3072_token_window_with_a_big_file_open_gets_a_turn_that_fits() {
    let server = LlamaServer::start(3072, 8);
    let dir = tempfile::tempdir().unwrap();
    let module: String = (1..=400)
        .map(|i| format!("def function_{i}(x):  # line {i} of a long module\n    return x + {i}\n"))
        .collect();
    std::fs::write(dir.path().join("big.py"), module).unwrap();
    let events = exec(
        &server,
        dir.path(),
        &["--open", "big.py:200"],
        "What does function_100 return?",
    );
    let snapshot = event(&events, "snapshot");
    assert_eq!(snapshot["budget_from"], "¼ of free", "{snapshot}");
    let prompt = event(&events, "prompt")["tokens"].as_u64().unwrap();
    assert!(prompt <= 3072 - 768, "{prompt}");
    let done = event(&events, "turn.completed");
    assert!(done["usage"]["prompt_tokens"].as_u64().unwrap() <= 3072);
}

/// A window set larger than the server's: the first request overflows,
/// llama.cpp says its real `n_ctx` and count, and the turn leaves out what
/// no longer fits and succeeds on the second try, telling the user.
#[test]
fn an_overflow_of_the_real_server_is_recovered_from() {
    // About 1 350 tokens of system prompt and tools; 10 tokens a sentence.
    let server = LlamaServer::start(3072, 8);
    let dir = tempfile::tempdir().unwrap();
    let long = "The quick brown fox jumps over the lazy dog. ".repeat(130);
    let first = exec(
        &server,
        dir.path(),
        &["--context-window", "16000"],
        &format!("Remember this text: {long}"),
    );
    event(&first, "turn.completed");
    let events = exec(
        &server,
        dir.path(),
        &["--context-window", "16000", "--continue"],
        &format!(
            "And this one too: {}",
            "A lazy cat sleeps on the warm mat all day. ".repeat(80)
        ),
    );
    let overflow = event(&events, "context.overflow");
    assert_eq!(overflow["window"], 3072, "{overflow}");
    assert!(
        overflow["message"].as_str().unwrap().contains("llama.cpp"),
        "{overflow}"
    );
    event(&events, "turn.completed");
}

/// A turn through the workbench itself (the TUI's state, keys through the
/// real update loop, no terminal): the prompt is typed and sent with
/// Enter, the answer streams into the conversation, the status bar's
/// gauge reads the window from `/props`, and usage comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_through_the_workbench() {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    use hello_tui::app::update::{handle_app_event, handle_terminal_event};
    let server = LlamaServer::start(4096, 16);
    let dir = tempfile::tempdir().unwrap();
    let mut settings = hello_tui::config::Settings::defaults();
    settings.model = Some("smol".into());
    settings.base_url = Some(format!("{}/v1", server.base_url));
    let mut s = hello_tui::app::AppState::new(dir.path().canonicalize().unwrap(), settings);
    let (tx, mut rx) = hello_tui::workbench::event::channel();
    s.workbench.agent_mut().events = Some(tx.clone());
    hello_tui::workbench::sessions::configure(&mut s.workbench, false, None).unwrap();
    // The kernel the workbench starts (the agent acts through it).
    hello_tui::workbench::safety::start(&mut s.workbench, &tx, None);
    for c in "Say hello.".chars() {
        handle_terminal_event(
            &mut s,
            Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
        );
    }
    handle_terminal_event(
        &mut s,
        Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
    );
    assert!(
        s.workbench.agent().busy,
        "sent: {:#?}",
        s.workbench.transcript()
    );
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    while s.workbench.agent().busy {
        let event = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("the turn ends")
            .expect("channel open");
        handle_app_event(&mut s, event);
    }
    let answered = s.workbench.transcript().iter().any(|entry| {
        entry.role == hello_tui::workbench::transcript::Speaker::Assistant
            && !entry.text.trim().is_empty()
    });
    assert!(answered, "{:#?}", s.workbench.transcript());
    let (used, window) = s.workbench.agent().context_used.expect("the gauge");
    assert_eq!(window, 4096, "the window from /props");
    assert!(used > 0 && used < window);
}

/// `-np 2` splits `-c 4096` between two slots: a request gets one slot's
/// 2 048, which `/props` reports and the workbench takes as the window.
#[test]
fn each_slot_gets_its_share_of_the_window() {
    let server = LlamaServer::with_slots(4096, 4, 2);
    let dir = tempfile::tempdir().unwrap();
    let events = exec(&server, dir.path(), &[], "Hi.");
    let window = event(&events, "context.window");
    assert_eq!(window["tokens"], 2048, "{window}");
    event(&events, "turn.completed");
}

//! The agent loop against a loopback server speaking the real Chat
//! Completions wire format and a real Python kernel: full turns, cancel,
//! malformed arguments, the `context` capability inside cells, sessions and
//! resume, and `exec --json` end to end through the real binary.

#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;
#[path = "support/pty.rs"]
mod pty;

use hello_tui::tokens::ContextWindow;
use std::sync::Arc;
use std::time::Duration;

use hello_tui::agent::conversation::Conversation;
use hello_tui::agent::prompt;
use hello_tui::agent::provider::openai::OpenAiConfig;
use hello_tui::agent::provider::{ModelProvider, OpenAiProvider, ScriptedProvider};
use hello_tui::agent::turn::{
    AllowCells, TurnDeps, TurnEvent, TurnOutcome, TurnSnapshot, run_turn,
};
use hello_tui::context::{self, SharedContext, snapshot_channel};
use hello_tui::kernel::caps::DenyAll;
use hello_tui::kernel::{CodeRuntime, KernelConfig};
use hello_tui::sandbox::{ChildEnv, Confinement};
use hello_tui::session::{self, SessionEvent, SessionWriter};
use loopback::{Framing, LoopbackServer, Part, Reply, byte_pieces, data};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

const AUTH_TS: &str = "export function checkAuth(user) {\n  return user.role === \"admin\";\n}\n";

fn text_chunk(text: &str) -> String {
    data(
        &json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}).to_string(),
    )
}

fn tool_chunk(index: u64, id: Option<&str>, args: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
        call["function"]["name"] = json!("code_action");
    }
    data(&json!({"choices":[{"index":0,"delta":{"tool_calls":[call]}}]}).to_string())
}

fn finish_chunk(reason: &str) -> String {
    data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}).to_string())
}

fn usage_chunk(prompt: u64, completion: u64) -> String {
    data(&json!({"choices":[],"usage":{"prompt_tokens":prompt,"completion_tokens":completion,"total_tokens":prompt+completion}}).to_string())
}

fn done() -> String {
    "data: [DONE]\r\n\r\n".into()
}

fn sse(parts: &[String]) -> Reply {
    Reply::sse(Framing::Chunked, byte_pieces(&parts.concat(), 37))
}

fn answer(text: &str) -> Reply {
    sse(&[
        text_chunk(text),
        finish_chunk("stop"),
        usage_chunk(50, 5),
        done(),
    ])
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("auth.ts"), AUTH_TS).unwrap();
    dir
}

fn openai(server: &LoopbackServer) -> Arc<dyn ModelProvider> {
    let mut config = OpenAiConfig::new(
        Some(&server.base_url),
        "test-model",
        "NO_SUCH_KEY_VAR",
        &|_| None,
    );
    config.http.initial_backoff = Duration::from_millis(10);
    config.http.idle_timeout = Duration::from_secs(10);
    Arc::new(OpenAiProvider::new(config).unwrap())
}

struct Rig {
    deps: TurnDeps,
    kernel: CodeRuntime,
    context: SharedContext,
}

fn rig(root: &std::path::Path, provider: Arc<dyn ModelProvider>) -> Rig {
    let context = SharedContext::default();
    let (snapshot_tx, snapshot_rx) = snapshot_channel();
    let confinement = Confinement::unconfined(ChildEnv::from_host(&[], ""));
    let registry = hello_tui::kernel_setup::registry(
        root,
        &confinement,
        Arc::new(DenyAll::default()),
        None,
        Some(&(context.clone(), snapshot_rx)),
        None,
    )
    .unwrap();
    let mut config = KernelConfig::for_workspace(root);
    config.auto_refresh = None;
    let (kernel, _events) = CodeRuntime::new(config, registry);
    let deps = TurnDeps {
        provider,
        runner: Arc::new(kernel.clone()),
        approval: Arc::new(AllowCells),
        snapshot_tx,
        max_steps: 20,
        cell_timeout: Some(Duration::from_secs(20)),
        window: ContextWindow::resolve(None, None, "gpt-4o", None, None),
        hooks: hello_tui::hooks::Hooks::default(),
    };
    Rig {
        deps,
        kernel,
        context,
    }
}

fn snapshot_of(root: &std::path::Path) -> TurnSnapshot {
    let source =
        hello_tui::snapshot::cli::scene_from_disk(root, Some("auth.ts:2:3"), None).unwrap();
    let (built, rendered) =
        hello_tui::snapshot::build(&source, &hello_tui::snapshot::CollectOptions::default());
    TurnSnapshot {
        markdown: rendered.markdown,
        json: serde_json::to_value(&built).unwrap(),
        used: built.budget.used,
        max: built.budget.max,
        truncated: built.budget.truncated,
    }
}

/// Runs a turn to its end, collecting its events (fails after 30 s).
async fn turn(
    rig: &Rig,
    conversation: &mut Conversation,
    prompt: &str,
    snapshot: Option<TurnSnapshot>,
) -> (TurnOutcome, Vec<TurnEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel_rx) = watch::channel(false);
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        run_turn(&rig.deps, conversation, prompt, snapshot, &tx, cancel_rx),
    )
    .await
    .expect("the turn ends");
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (outcome, events)
}

/// One Anthropic stream event: its name, then its JSON (whose `type`
/// repeats the name).
fn anthropic_event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

fn tool_message<'a>(request: &'a Value, id: &str) -> &'a Value {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no tool message for {id} in {request:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_turn_with_two_tool_calls_against_the_real_kernel() {
    let dir = workspace();
    // Two calls whose arguments arrive in pieces, interleaved by index.
    let first = sse(&[
        text_chunk("Let me look."),
        tool_chunk(
            0,
            Some("call_a"),
            "{\"code\": \"src = fs.read('auth.ts')\\n",
        ),
        tool_chunk(
            1,
            Some("call_b"),
            "{\"code\": \"hits = context.search('auth', role='tool')\\n",
        ),
        tool_chunk(0, None, "print('auth:', len(src))\"}"),
        tool_chunk(1, None, "print(hits.results[0].role)\\nlen(src) + 1\"}"),
        finish_chunk("tool_calls"),
        usage_chunk(120, 30),
        done(),
    ]);
    let server = LoopbackServer::start(vec![first, answer("checkAuth only admits admins.")]).await;
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (outcome, events) = turn(
        &rig,
        &mut conversation,
        "why does checkAuth reject users?",
        Some(snapshot_of(dir.path())),
    )
    .await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { steps: 2, usage } if usage.total_tokens == 205),
        "{outcome:?}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].json();
    assert_eq!(first["tools"][0]["function"]["name"], "code_action");
    assert_eq!(first["tools"].as_array().unwrap().len(), 1);
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("context.search")
    );
    let user = first["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("why does checkAuth reject users?\n\n<runtime-context-snapshot>\n"),
        "{user}"
    );
    assert!(user.trim_end().ends_with("</runtime-context-snapshot>"));
    assert!(
        user.contains("auth.ts"),
        "the snapshot names the active file: {user}"
    );

    // The follow-up carries both results, in order, as JSON.
    let second = requests[1].json();
    let a: Value =
        serde_json::from_str(tool_message(&second, "call_a")["content"].as_str().unwrap()).unwrap();
    assert_eq!(a["ok"], true, "{a:#}");
    assert_eq!(a["stdout"], format!("auth: {}\n", AUTH_TS.len()));
    assert_eq!(a["state"]["alive"], true);
    assert!(
        a["state"]["variables"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "src" && v["type"] == "str")
    );
    let b: Value =
        serde_json::from_str(tool_message(&second, "call_b")["content"].as_str().unwrap()).unwrap();
    // context.search inside the cell found the earlier tool output.
    assert_eq!(b["stdout"], "tool\n", "{b:#}");
    assert_eq!(b["value"], json!((AUTH_TS.len() + 1).to_string()));

    // Events in order, and everything is in the shared context.
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ToolCall { .. } => Some("call"),
            TurnEvent::ToolResult { .. } => Some("result"),
            TurnEvent::AssistantMessage { .. } => Some("message"),
            TurnEvent::Completed { .. } => Some("completed"),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "call",
            "result",
            "call",
            "result",
            "message",
            "completed"
        ]
    );
    let hits = rig
        .context
        .read(|c| c.search(&context::SearchQuery::new("auth")));
    assert!(hits.hits.iter().any(|h| h.role == context::Role::Tool));
    assert_eq!(conversation.messages().len(), 5);
    rig.kernel.shutdown().await;
}

/// Issue 28: a server whose chat template has no tools (llama.cpp without
/// `--jinja`) makes the model write its call as text. The call runs in the
/// real kernel as the call it is, the next request carries its result as
/// a tool message, and the turn says it happened (once, with the hint).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_written_as_text_runs_as_the_call() {
    let dir = workspace();
    let as_text = "<tool_call>\n{\"name\": \"code_action\", \"arguments\": {\"code\": \"print(6 * 7)\"}}\n</tool_call>";
    let server = LoopbackServer::start(vec![answer(as_text), answer("It is 42.")]).await;
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (outcome, events) = turn(&rig, &mut conversation, "what is 6 * 7?", None).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolCallAsText))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolCall { code, .. } if code == "print(6 * 7)"))
    );
    let second = server.requests()[1].json();
    let result: Value = serde_json::from_str(
        tool_message(&second, "text_call_1")["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["stdout"], "42\n", "{result:#}");
    let answers: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::AssistantMessage { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(answers, ["It is 42."], "the call is not shown as an answer");
    rig.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_tool_arguments_go_back_to_the_model() {
    let dir = workspace();
    let bad = sse(&[
        tool_chunk(0, Some("call_x"), "{\"code\": \"print(1)"),
        finish_chunk("tool_calls"),
        done(),
    ]);
    let server = LoopbackServer::start(vec![bad, answer("Sorry, retrying is not needed.")]).await;
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (outcome, events) = turn(&rig, &mut conversation, "go", None).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolRejected { .. }))
    );
    let second = server.requests()[1].json();
    let result: Value =
        serde_json::from_str(tool_message(&second, "call_x")["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["ok"], false);
    assert_eq!(result["error"]["type"], "ValueError");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    rig.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_stream_stops_the_request_and_keeps_the_partial_text() {
    let dir = workspace();
    let mut body = byte_pieces(&text_chunk("Thinking about"), 64);
    body.push(Part::HoldOpen);
    let mut server = LoopbackServer::start(vec![Reply::sse(Framing::Chunked, body)]).await;
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let run = run_turn(&rig.deps, &mut conversation, "go", None, &tx, cancel_rx);
    let cancel = async {
        while let Some(event) = rx.recv().await {
            if matches!(event, TurnEvent::TextDelta(_)) {
                cancel_tx.send(true).unwrap();
                break;
            }
        }
    };
    let (outcome, ()) =
        tokio::time::timeout(Duration::from_secs(10), async { tokio::join!(run, cancel) })
            .await
            .expect("cancel ends the turn");
    assert_eq!(outcome, TurnOutcome::Cancelled);
    assert!(
        server.wait_client_closed(1, Duration::from_secs(5)).await,
        "the connection closes"
    );
    let last = conversation.messages().last().unwrap();
    match last {
        hello_tui::agent::provider::ChatMessage::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let text = content.as_deref().unwrap();
            assert!(text.starts_with("Thinking about"));
            assert!(text.contains("cancelled by the user"));
            assert!(tool_calls.is_empty());
        }
        other => panic!("{other:?}"),
    }
    rig.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_cell_interrupts_it_and_every_call_keeps_a_result() {
    let dir = workspace();
    let calls = sse(&[
        tool_chunk(
            0,
            Some("slow"),
            "{\"code\": \"n = 7\\nimport time\\ntime.sleep(30)\"}",
        ),
        tool_chunk(1, Some("never"), "{\"code\": \"print('not reached')\"}"),
        finish_chunk("tool_calls"),
        done(),
    ]);
    let server = LoopbackServer::start(vec![calls]).await;
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let run = run_turn(&rig.deps, &mut conversation, "go", None, &tx, cancel_rx);
    let cancel = async {
        while let Some(event) = rx.recv().await {
            if matches!(event, TurnEvent::ToolCall { .. }) {
                tokio::time::sleep(Duration::from_millis(500)).await;
                cancel_tx.send(true).unwrap();
                break;
            }
        }
    };
    let (outcome, ()) =
        tokio::time::timeout(Duration::from_secs(15), async { tokio::join!(run, cancel) })
            .await
            .expect("cancel interrupts the cell");
    assert_eq!(outcome, TurnOutcome::Cancelled);
    let results: Vec<Value> = conversation
        .messages()
        .iter()
        .filter_map(|m| match m {
            hello_tui::agent::provider::ChatMessage::Tool { content, .. } => {
                serde_json::from_str(content).ok()
            }
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "both calls have a result");
    assert_eq!(
        results[0]["error"]["type"], "KeyboardInterrupt",
        "{:#}",
        results[0]
    );
    assert_eq!(results[1]["error"]["type"], "Cancelled");
    // The interrupt kept the kernel's variables.
    let state = rig.kernel.describe().await.unwrap();
    assert!(state.get("n").is_some());
    rig.kernel.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_capability_works_inside_a_running_cell() {
    let dir = workspace();
    let rig = rig(
        dir.path(),
        Arc::new(ScriptedProvider::from_json(r#"{"turns":[]}"#).unwrap()),
    );
    rig.context
        .push(context::Message::user("please fix the login"));
    rig.context
        .push(context::Message::assistant("Looking at the code."));
    rig.context
        .push(context::Message::tool("auth token expired for user 7"));
    rig.deps
        .snapshot_tx
        .send_replace(Some(context::PublishedSnapshot {
            markdown: "# Runtime context".into(),
            json: json!({"budget": {"used": 17}}),
        }));
    let code = r#"
users = ["ada", "bob"]
limit = 3
s = context.summarize()
c = context.current()
r = context.get_runtime_state()
r2 = context.getRuntimeState()
hits = context.search("auth")
last = context.slice(-1)
snap = context.snapshot()
names = sorted(v.name for v in r.variables)
print(s.totalMessages, s.message_counts.tool, s.runtimeAlive)
print(names)
print(len(c.messages), c.runtime_state.alive, len(r2["variables"]))
print(hits.total, hits.results[0].role, hits.results[0].index)
print(last.total, last.messages[0].content)
print(snap.markdown)
c.messages.clear()
"#;
    let result = tokio::time::timeout(Duration::from_secs(20), rig.kernel.execute(code, None))
        .await
        .expect("no deadlock");
    assert!(result.ok, "{:?}\n{}", result.error, result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    assert_eq!(lines[0], "3 1 True");
    // The live state, taken while this very cell runs: what it bound so far.
    assert_eq!(lines[1], "['c', 'limit', 's', 'users']");
    assert_eq!(lines[2], "3 True 5");
    assert_eq!(lines[3], "1 tool 2");
    assert_eq!(lines[4], "3 auth token expired for user 7");
    assert_eq!(lines[5], "# Runtime context");
    // Returned copies cannot change the conversation.
    assert_eq!(rig.context.len(), 3);
    rig.kernel.shutdown().await;
}

/// A scripted conversation written to a session, cut mid-line by a
/// "crash", then resumed: the messages, the context store and the pane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_written_as_they_happen_and_resume_after_a_truncated_line() {
    let dir = workspace();
    let script = json!({
        "delay_ms": 0,
        "turns": [
            {"text": "Reading.", "tool_calls": [{"name": "code_action", "arguments": {"code": "print('token audit: ok')"}}]},
            {"text": "All good."}
        ]
    });
    let provider = Arc::new(ScriptedProvider::from_json(&script.to_string()).unwrap());
    let rig = rig(dir.path(), provider);
    let writer = SessionWriter::create(
        dir.path(),
        "scripted",
        hello_tui::session::SessionOrigin::Tui,
    )
    .unwrap();
    let id = writer.id().to_owned();
    let path = writer.path().to_owned();
    let mut conversation = Conversation::new(rig.context.clone(), Some(writer));
    let (outcome, _) = turn(
        &rig,
        &mut conversation,
        "check the tokens",
        Some(snapshot_of(dir.path())),
    )
    .await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    rig.kernel.shutdown().await;
    assert!(conversation.session_error.is_none());
    drop(conversation);

    // Crash mid-write: half a line at the end.
    let mut text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"type\":\"tool.result\"") || text.contains("\"role\":\"tool\""));
    text.push_str("{\"type\":\"message\",\"role\":\"user\",\"cont");
    std::fs::write(&path, text).unwrap();

    let listed = session::list(dir.path()).unwrap();
    assert_eq!(listed[0].id, id);
    assert_eq!(
        listed[0].first_prompt, "check the tokens",
        "without the snapshot block"
    );

    // `--continue` in the workbench: whole conversation shown, a notice.
    let settings = hello_tui::config::Settings::defaults();
    let mut state = hello_tui::app::AppState::new(dir.path().to_path_buf(), settings);
    hello_tui::workbench::sessions::configure(&mut state.workbench, false, Some(None)).unwrap();
    let shown: Vec<(hello_tui::workbench::transcript::Speaker, String)> = state
        .workbench
        .transcript()
        .iter()
        .map(|m| (m.role, m.text.clone()))
        .collect();
    use hello_tui::workbench::transcript::Speaker as R;
    assert_eq!(shown[0], (R::User, "check the tokens".into()));
    assert_eq!(shown[1], (R::Assistant, "Reading.".into()));
    assert_eq!(shown[2].0, R::Tool);
    assert_eq!(shown[2].1, "token audit: ok\n");
    assert_eq!(
        state.workbench.transcript()[2].cell.as_ref().unwrap().code,
        "print('token audit: ok')"
    );
    assert_eq!(shown[3], (R::Assistant, "All good.".into()));
    assert!(
        shown
            .iter()
            .any(|(r, t)| *r == R::Notice && t.contains("line") && t.contains("incomplete"))
    );
    // Kept with the session ([kernel] keep_variables, on by default).
    assert!(
        shown
            .last()
            .unwrap()
            .1
            .contains("The kernel's variables kept with it come back when the first cell runs")
    );
    // The resumed context is searchable (the capability and the pane read it).
    let hits = state
        .workbench
        .agent()
        .context
        .read(|c| c.search(&context::SearchQuery::new("token audit")));
    assert_eq!(hits.hits[0].role, context::Role::Tool);

    // New events go to the same file, on a clean line.
    let loaded = session::load(dir.path(), &id).unwrap();
    let mut resumed = Conversation::resume(
        &loaded,
        SharedContext::default(),
        SessionWriter::resume(dir.path(), &id).unwrap(),
    );
    resumed.push(hello_tui::agent::provider::ChatMessage::User {
        content: "again".into(),
    });
    let reloaded = session::load(dir.path(), &id).unwrap();
    assert_eq!(
        reloaded
            .events()
            .filter(|e| matches!(e, SessionEvent::Message { .. }))
            .count(),
        5
    );
}

mod exec {
    use super::*;
    use std::process::Stdio;

    async fn exec(dir: &std::path::Path, base_url: &str, extra: &[&str]) -> (i32, String, String) {
        exec_with_env(dir, base_url, extra, &[]).await
    }

    async fn exec_with_env(
        dir: &std::path::Path,
        base_url: &str,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> (i32, String, String) {
        let home = tempfile::tempdir().unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"));
        command
            .arg("exec")
            .arg("-C")
            .arg(dir)
            .args(["--base-url", base_url, "--model", "test-model"])
            // The loopback server answers connections in order: a window
            // probe would take the scripted replies.
            .args(["--context-window", "32000"])
            .args(extra)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env_remove("HELLO_TUI_CONFIG")
            .env_remove("OPENAI_API_KEY")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = tokio::time::timeout(Duration::from_secs(60), command.output())
            .await
            .expect("exec finishes")
            .unwrap();
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Issue 25, routes 2 and 3: `hello-tui exec` at a terminal (a pty of
    /// the test's own as its controlling terminal), a model cell that tries
    /// to type a command into that terminal and draw escapes on it. Nothing
    /// waits in the terminal's input queue afterwards (the user's shell
    /// would have run it), and the model is told each try was refused.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cell_cannot_type_into_the_terminal_exec_runs_at() {
        if !matches!(
            hello_tui::sandbox::SandboxStatus::probe(),
            hello_tui::sandbox::SandboxStatus::Enforced { .. }
        ) {
            assert!(std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none());
            eprintln!("\n!!!!! no sandbox here: terminal routes not tried\n");
            return;
        }
        let dir = workspace();
        let arguments = serde_json::json!({ "code": pty::ATTACK }).to_string();
        let first = sse(&[
            tool_chunk(0, Some("c1"), &arguments),
            finish_chunk("tool_calls"),
            done(),
        ]);
        let server = LoopbackServer::start(vec![first, answer("Done.")]).await;
        let home = tempfile::tempdir().unwrap();
        let pty = pty::Pty::open();
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"));
        command
            .arg("exec")
            .arg("-C")
            .arg(dir.path())
            .args(["--base-url", &server.base_url, "--model", "test-model"])
            .args(["--context-window", "32000", "--approval", "auto", "go"])
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path())
            .env_remove("HELLO_TUI_CONFIG")
            .env_remove("OPENAI_API_KEY");
        pty.control(&mut command);
        let status = tokio::task::spawn_blocking(move || command.status())
            .await
            .unwrap()
            .unwrap();
        let drawn = pty.assert_nothing_typed();
        assert!(status.success(), "{drawn}");
        let requests = server.requests();
        let last = requests.last().expect("a request after the cell").json();
        let told = last["messages"]
            .as_array()
            .and_then(|messages| messages.iter().find(|m| m["role"] == "tool"))
            .map(|tool| tool["content"].to_string())
            .unwrap_or_default();
        pty::assert_refused(&told);
    }

    /// Issue 29: `exec` keeps the kernel's variables with its session too:
    /// a `--continue` run's first cell finds what the last run's cell made
    /// (the signing key is the user's: both runs share it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exec_continue_brings_the_kernels_variables_back() {
        let dir = workspace();
        let key = tempfile::tempdir().unwrap();
        let key_file = key.path().join("vars.key");
        let env = [("HELLO_TUI_VARS_KEY_FILE", key_file.to_str().unwrap())];
        let cell = |code: &str| {
            sse(&[
                tool_chunk(
                    0,
                    Some("c1"),
                    &serde_json::json!({ "code": code }).to_string(),
                ),
                finish_chunk("tool_calls"),
                done(),
            ])
        };
        let first = LoopbackServer::start(vec![cell("answer = 41"), answer("Kept.")]).await;
        let (status, _, stderr) = exec_with_env(
            dir.path(),
            &first.base_url,
            &["--json", "--approval", "auto", "remember"],
            &env,
        )
        .await;
        assert_eq!(status, 0, "{stderr}");
        let second = LoopbackServer::start(vec![cell("print(answer + 1)"), answer("42.")]).await;
        let (status, stdout, stderr) = exec_with_env(
            dir.path(),
            &second.base_url,
            &["--json", "--approval", "auto", "--continue", "what was it?"],
            &env,
        )
        .await;
        assert_eq!(status, 0, "{stderr}");
        let result = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|event| event["type"] == "tool.result")
            .expect("the cell ran");
        let printed = result["stdout"].as_str().unwrap();
        assert!(printed.ends_with("42\n"), "{result:#}");
        assert!(
            printed.contains("[hello-tui] restored 1 variable from before: answer"),
            "{result:#}"
        );
    }

    /// Issue 17: headless, a cell's writes are reported as `files.changed`
    /// events (path, counts, unified diff) before the cell's result, and
    /// the result tells the model `files_changed`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn json_reports_the_files_a_cell_changed() {
        let dir = workspace();
        let code = r#"fs.edit('auth.ts', 'user.role === "admin"', 'user.role !== "guest"')
fs.write('NOTES.md', 'fixed\n')"#;
        let arguments = serde_json::json!({ "code": code }).to_string();
        let first = sse(&[
            tool_chunk(0, Some("c1"), &arguments),
            finish_chunk("tool_calls"),
            done(),
        ]);
        let server = LoopbackServer::start(vec![first, answer("Done.")]).await;
        let (status, stdout, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--json", "--approval", "full", "fix it"],
        )
        .await;
        assert_eq!(status, 0, "{stdout}\n{stderr}");
        let events: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect(l))
            .collect();
        let changed: Vec<&Value> = events
            .iter()
            .filter(|e| e["type"] == "files.changed")
            .collect();
        assert_eq!(changed.len(), 2, "{stdout}");
        assert_eq!(changed[0]["path"], "auth.ts");
        assert_eq!(changed[0]["created"], false);
        assert_eq!(
            (changed[0]["added"].as_u64(), changed[0]["removed"].as_u64()),
            (Some(1), Some(1))
        );
        let diff = changed[0]["diff"].as_str().unwrap();
        assert!(
            diff.contains("-  return user.role === \"admin\";"),
            "{diff}"
        );
        assert!(
            diff.contains("+  return user.role !== \"guest\";"),
            "{diff}"
        );
        assert_eq!(changed[1]["path"], "NOTES.md");
        assert_eq!(changed[1]["created"], true);
        let result_at = events
            .iter()
            .position(|e| e["type"] == "tool.result")
            .unwrap();
        let first_change_at = events
            .iter()
            .position(|e| e["type"] == "files.changed")
            .unwrap();
        assert!(first_change_at < result_at, "{stdout}");
        assert_eq!(
            events[result_at]["files_changed"],
            serde_json::json!([
                { "path": "auth.ts", "added": 1, "removed": 1 },
                { "path": "NOTES.md", "added": 1, "removed": 0 }
            ])
        );
    }

    /// What a model controls, as terminal escapes: OSC 52 writes the
    /// clipboard, OSC 2 sets the window title, U+202E reverses the line.
    const HOSTILE: &str = "\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}]2;title\u{7}\u{202e}";

    /// Issue 25, route 16: in plain mode `exec` printed the model's answer
    /// and the cell's progress line raw, so a model set the terminal's
    /// title and clipboard. Now neither stdout nor stderr carries an ESC.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_output_carries_no_terminal_escapes() {
        let dir = workspace();
        // The cell's first line (the progress line) holds the raw escapes;
        // the cell prints them too.
        let code = format!("# {HOSTILE} first line\nprint({HOSTILE:?})");
        let arguments = serde_json::json!({ "code": code }).to_string();
        let first = sse(&[
            tool_chunk(0, Some("c1"), &arguments),
            finish_chunk("tool_calls"),
            done(),
        ]);
        let text = format!("Done{HOSTILE}: all good");
        let server = LoopbackServer::start(vec![first, answer(&text)]).await;
        let (status, stdout, stderr) =
            exec(dir.path(), &server.base_url, &["--approval", "auto", "go"]).await;
        assert_eq!(status, 0, "{stdout}\n{stderr}");
        for (name, out) in [("stdout", &stdout), ("stderr", &stderr)] {
            assert!(
                !out.contains(['\u{1b}', '\u{7}', '\u{9d}', '\u{202e}']),
                "{name}: {out:?}"
            );
        }
        // What the model said is still there, its hidden parts visible.
        assert_eq!(stdout.trim_end(), "Done<U+202E>: all good");
        assert!(
            stderr.contains("[cell c1] # <U+202E> first line"),
            "{stderr}"
        );
    }

    /// Issue 25, route 20: a key a cell prints is redacted in the session
    /// and the log, and now in `exec --json` stdout too (CI logs keep it),
    /// whichever event carries it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn json_events_redact_the_configured_key() {
        const KEY: &str = "loopback-key-0815-QwErTy";
        let dir = workspace();
        // The cell rebuilds the key (it is not in the kernel's environment)
        // and prints it; the model repeats it in its answer.
        let code = "print('loopback-key-' + '0815-QwErTy')";
        let arguments = serde_json::json!({ "code": code }).to_string();
        let first = sse(&[
            tool_chunk(0, Some("c1"), &arguments),
            finish_chunk("tool_calls"),
            done(),
        ]);
        let server =
            LoopbackServer::start(vec![first, answer(&format!("The key is {KEY}."))]).await;
        let (status, stdout, stderr) = exec_with_env(
            dir.path(),
            &server.base_url,
            &["--json", "--approval", "auto", "show me the key"],
            &[("OPENAI_API_KEY", KEY)],
        )
        .await;
        assert_eq!(status, 0, "{stdout}\n{stderr}");
        assert!(!stdout.contains(KEY), "{stdout}");
        assert!(!stderr.contains(KEY), "{stderr}");
        let events: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect(l))
            .collect();
        let result = events
            .iter()
            .find(|e| e["type"] == "tool.result")
            .expect("a tool.result");
        assert_eq!(result["stdout"], "[REDACTED]\n", "{result}");
        let message = events
            .iter()
            .rev()
            .find(|e| e["type"] == "assistant.message")
            .expect("an answer");
        assert_eq!(message["text"], "The key is [REDACTED].");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn json_events_end_to_end() {
        let dir = workspace();
        let first = sse(&[
            text_chunk("Reading the file."),
            tool_chunk(
                0,
                Some("c1"),
                "{\"code\": \"text = fs.read('auth.ts')\\nprint(text.splitlines()[1])\"}",
            ),
            finish_chunk("tool_calls"),
            usage_chunk(200, 20),
            done(),
        ]);
        let server = LoopbackServer::start(vec![first, answer("Only admins pass.")]).await;
        let (code, stdout, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--json", "--open", "auth.ts:2", "why?"],
        )
        .await;
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let events: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).expect(l))
            .collect();
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            [
                "session.started",
                "context.window",
                "snapshot",
                "prompt",
                "assistant.message",
                "tool.call",
                "tool.result",
                "prompt",
                "assistant.message",
                "turn.completed"
            ]
        );
        assert!(events[0]["session_id"].is_string());
        assert_eq!(events[1]["tokens"], 32_000);
        assert_eq!(events[1]["source"], "setting");
        assert!(events[2]["used_chars"].as_u64().unwrap() > 0);
        assert_eq!(events[2]["max_chars"], 12_000);
        assert_eq!(events[3]["window"], 32_000);
        assert_eq!(events[3]["omitted"], 0);
        assert_eq!(events[5]["name"], "code_action");
        assert_eq!(events[5]["id"], "c1");
        let result = &events[6];
        assert_eq!(result["ok"], true, "{result}");
        assert_eq!(result["stdout"], "  return user.role === \"admin\";\n");
        assert_eq!(result["state"]["alive"], true);
        assert!(result["state"]["variables"][0]["preview"].is_string());
        assert!(events[7]["tokens"].as_u64().unwrap() > 0);
        assert_eq!(events[8]["text"], "Only admins pass.");
        assert_eq!(events[9]["steps"], 2);
        assert_eq!(events[9]["usage"]["total_tokens"], 275);
        // The snapshot reached the model with the opened file.
        let sent = server.requests()[0].json();
        assert!(
            sent["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("auth.ts")
        );
        // The session was saved in the workspace.
        let sessions = session::list(dir.path()).unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].id, events[0]["session_id"].as_str().unwrap());
    }

    /// Issue 18: `exec --open FILE` starts the file's language servers for
    /// a bounded wait, so the model hears of the error the user would see
    /// in the TUI's diagnostics pane (here ruff's, on a file from disk).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exec_open_tells_the_model_the_files_diagnostics() {
        assert!(
            hello_tui::diagnostics::which("ruff").is_some(),
            "this test needs the real ruff (scripts/test installs it)"
        );
        // Headless diagnostics start nothing without the sandbox.
        if !hello_tui::sandbox::SandboxStatus::probe().is_enforced() {
            assert!(std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none());
            return;
        }
        let dir = workspace();
        std::fs::write(
            dir.path().join("bad.py"),
            "import os\n\nprint(undefined_name)\n",
        )
        .unwrap();
        let server = LoopbackServer::start(vec![answer("Seen.")]).await;
        let (code, stdout, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--open", "bad.py", "what is wrong?"],
        )
        .await;
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let sent = server.requests()[0].json();
        let scene = sent["messages"][1]["content"].as_str().unwrap();
        assert!(
            scene.contains(
                "`bad.py:3:7` error, reported by Ruff [F821]: Undefined name `undefined_name`"
            ),
            "{scene}"
        );
    }

    /// Route 7: where the sandbox cannot be prepared (here: no temp dir for
    /// its private one), exec refuses to run model code unconfined: a JSON
    /// `error` event, exit 1, no request to the model. `--approval full`
    /// (the user's explicit choice) still runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exec_fails_closed_when_the_sandbox_cannot_be_prepared() {
        let dir = workspace();
        let server = LoopbackServer::start(vec![answer("Ran without a sandbox.")]).await;
        let broken = [("TMPDIR", "/nonexistent/hello-tui-tmp")];
        let (code, stdout, stderr) = exec_with_env(
            dir.path(),
            &server.base_url,
            &["--json", "--approval", "auto", "hi"],
            &broken,
        )
        .await;
        assert_eq!(code, 1, "{stdout}{stderr}");
        let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "error", "{stdout}");
        let message = last["message"].as_str().unwrap();
        assert!(
            message.contains("refusing to run model-written code unconfined")
                && message.contains("/nonexistent/hello-tui-tmp"),
            "{message}"
        );
        assert!(server.requests().is_empty(), "the model was asked anyway");
        let (code, stdout, stderr) = exec_with_env(
            dir.path(),
            &server.base_url,
            &["--approval", "full", "hi"],
            &broken,
        )
        .await;
        assert_eq!(
            (code, stdout.as_str()),
            (0, "Ran without a sandbox.\n"),
            "{stderr}"
        );
    }

    /// exec once set up its own kernel and ignored `[kernel]` settings: it
    /// now shares the workbench's setup, so `cell_timeout_secs` holds.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exec_honours_the_kernel_settings() {
        let dir = workspace();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "[kernel]\ncell_timeout_secs = 1\n").unwrap();
        let first = sse(&[
            tool_chunk(
                0,
                Some("c1"),
                "{\"code\": \"import time\\ntime.sleep(20)\"}",
            ),
            finish_chunk("tool_calls"),
            done(),
        ]);
        let server = LoopbackServer::start(vec![first, answer("Too slow.")]).await;
        let (code, stdout, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--json", "--config", config.to_str().unwrap(), "wait"],
        )
        .await;
        assert_eq!(code, 0, "{stdout}{stderr}");
        let result: Value = stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|e| e["type"] == "tool.result")
            .expect("a tool result");
        assert_eq!(result["error"]["type"], "TimeoutError", "{result}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plain_output_is_the_answer_and_errors_exit_1() {
        let dir = workspace();
        let server = LoopbackServer::start(vec![
            answer("Hello there."),
            Reply::status(401, &[], "{\"error\":{\"message\":\"bad key\"}}"),
        ])
        .await;
        let (code, stdout, _) = exec(dir.path(), &server.base_url, &["hi"]).await;
        assert_eq!((code, stdout.as_str()), (0, "Hello there.\n"));
        let (code, stdout, stderr) = exec(dir.path(), &server.base_url, &["--json", "hi"]).await;
        assert_eq!(code, 1, "{stdout}{stderr}");
        let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "error");
        assert!(
            last["message"]
                .as_str()
                .unwrap()
                .contains("NO_SUCH_KEY_VAR")
                || last["message"].as_str().unwrap().contains("OPENAI_API_KEY"),
            "{last}"
        );
    }

    /// `exec --continue` / `--resume ID` run one more turn of a saved
    /// session: the model gets the earlier messages and is told the
    /// kernel's variables are gone; the turn lands in the same file.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn exec_continue_and_resume_add_a_turn_to_a_saved_session() {
        let dir = workspace();
        let server = LoopbackServer::start(vec![
            answer("Hello there."),
            answer("Still here."),
            answer("And again."),
        ])
        .await;
        let (code, _, stderr) = exec(dir.path(), &server.base_url, &["remember 7"]).await;
        assert_eq!(code, 0, "{stderr}");
        let id = session::list(dir.path()).unwrap()[0].id.clone();
        let (code, stdout, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--continue", "--json", "what did I say?"],
        )
        .await;
        assert_eq!(code, 0, "{stdout}{stderr}");
        let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
        assert_eq!(first["type"], "session.resumed");
        assert_eq!(first["session_id"], id.as_str());
        assert_eq!(first["messages"], 2);
        let sent = server.requests()[1].json();
        let messages = sent["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap();
        assert!(system.contains(prompt::RESUME_NOTE), "{system}");
        assert!(
            messages[1]["content"]
                .as_str()
                .unwrap()
                .starts_with("remember 7")
        );
        assert_eq!(messages[2]["content"], "Hello there.");
        assert!(
            messages[3]["content"]
                .as_str()
                .unwrap()
                .starts_with("what did I say?")
        );
        // By id, too; still one session, now with three turns.
        let (code, _, stderr) = exec(
            dir.path(),
            &server.base_url,
            &["--resume", &id, "once more"],
        )
        .await;
        assert_eq!(code, 0, "{stderr}");
        let sessions = session::list(dir.path()).unwrap();
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].message_count, 6);
        // A first turn of a new session has nothing to be told about.
        let fresh = server.requests()[0].json();
        assert!(
            !fresh["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("Resumed session")
        );
        // Unknown ids and empty workspaces are usage errors.
        let (code, _, stderr) =
            exec(dir.path(), &server.base_url, &["--resume", "nope", "x"]).await;
        assert_eq!(code, 2, "{stderr}");
        let empty = workspace();
        let (code, _, stderr) = exec(empty.path(), &server.base_url, &["--continue", "x"]).await;
        assert_eq!(code, 2);
        assert!(stderr.contains("no session"), "{stderr}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bad_usage_exits_2() {
        let dir = workspace();
        for args in [
            vec!["--open", "missing.ts", "hi"],
            vec!["--approval", "sometimes", "hi"],
            vec!["--cell-timeout", "-1", "hi"],
            vec!["   "],
        ] {
            let (code, _, stderr) = exec(dir.path(), "http://127.0.0.1:9", &args).await;
            assert_eq!(code, 2, "{args:?}: {stderr}");
        }
    }
}

/// Measurement for BENCHMARKS.md (run with `--release --ignored --nocapture`):
/// `context.*` round trips from inside a cell over 10 000 messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement"]
async fn measure_context_calls_from_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    let rig = rig(
        dir.path(),
        Arc::new(ScriptedProvider::from_json(r#"{"turns":[]}"#).unwrap()),
    );
    for i in 0..10_000 {
        rig.context.push(context::Message::tool(format!(
            "message {i} about checkAuth token refresh handler {} {}",
            i * 7,
            "lorem ipsum ".repeat(40)
        )));
    }
    let code = r#"
import time
xs = list(range(1000))
def t(f, n=50):
    ts = []
    for _ in range(n):
        a = time.perf_counter(); f(); ts.append((time.perf_counter() - a) * 1000)
    ts.sort()
    return f"p50 {ts[len(ts)//2]:.2f} ms  p99 {ts[int(len(ts)*0.99)-1]:.2f} ms"
print("search   ", t(lambda: context.search("checkAuth refresh", limit=10)))
print("summarize", t(lambda: context.summarize()))
print("runtime  ", t(lambda: context.get_runtime_state()))
print("slice(-5)", t(lambda: context.slice(-5)))
"#;
    let result = rig.kernel.execute(code, None).await;
    assert!(result.ok, "{:?}", result.error);
    println!("{}", result.stdout);
    rig.kernel.shutdown().await;
}

/// What a server counts for a request: every message's text, tool calls and
/// the tool schema under o200k, plus a few tokens a message. A different
/// tokenizer from the client's estimate on purpose: the client must learn
/// the server's count from `usage`.
fn server_tokens(body: &Value) -> u64 {
    let bpe = tiktoken_rs::o200k_base_singleton();
    let count = |text: &str| bpe.count_ordinary(text) as u64;
    let mut total = 3 + body.get("tools").map_or(0, |t| count(&t.to_string()));
    for message in body["messages"].as_array().unwrap() {
        total += 4 + count(message["content"].as_str().unwrap_or(""));
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            total += 8 + count(call["function"]["arguments"].as_str().unwrap_or(""));
        }
    }
    total
}

/// The text of the request's user messages.
fn user_texts(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The issue's acceptance test: 200 turns with long answers against an
/// 8 000-token window. Every request fits, the left-out messages are named,
/// a fact from turn 1 is found by `context.search` in a cell at turn 200
/// (real kernel), and compaction ran — the first time with the model
/// failing (extractive fallback), then by the model — with its summary in
/// the requests that follow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_turns_stay_inside_an_8k_window_and_turn_one_is_still_found() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    const FACT: &str = "zebra-pineapple-77";
    const WINDOW: u64 = 8_000;
    let summaries = Arc::new(AtomicUsize::new(0));
    let seen = summaries.clone();
    let server = LoopbackServer::respond_with(Duration::from_secs(600), move |request| {
        let body = request.json();
        let prompt = server_tokens(&body);
        if body.get("tools").is_none() {
            // A summary call (tools disabled). The first one fails.
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                return Reply::status(400, &[], "{\"error\":{\"message\":\"model overloaded\"}}");
            }
            return sse(&[
                text_chunk("- MODEL-SUMMARY: the user walks through numbered steps."),
                finish_chunk("stop"),
                usage_chunk(prompt, 20),
                done(),
            ]);
        }
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        let text = if last["role"] == "tool" {
            vec![text_chunk("Found it."), finish_chunk("stop")]
        } else if last["content"].as_str().unwrap_or("").starts_with("turn 200:") {
            vec![
                tool_chunk(
                    0,
                    Some("find"),
                    &json!({"code": format!("hits = context.search('{FACT}')\nprint(hits.results[0].index, hits.results[0].snippet)")}).to_string(),
                ),
                finish_chunk("tool_calls"),
            ]
        } else {
            let long = "The quick brown fox jumps over the lazy dog while we refactor. ".repeat(20);
            vec![text_chunk(&format!("Here is the step in detail. {long}")), finish_chunk("stop")]
        };
        let mut parts = text;
        parts.push(usage_chunk(prompt, 300));
        parts.push(done());
        sse(&parts)
    })
    .await;
    let dir = workspace();
    let mut rig = rig(dir.path(), openai(&server));
    rig.deps.window = ContextWindow::resolve(Some(WINDOW as usize), None, "test-model", None, None);
    let writer =
        SessionWriter::create(dir.path(), "test", hello_tui::session::SessionOrigin::Tui).unwrap();
    let id = writer.id().to_owned();
    let mut conversation = Conversation::new(rig.context.clone(), Some(writer));
    let snapshot = |i: usize| TurnSnapshot {
        markdown: format!("# Runtime context\nturn {i}: the editor shows auth.ts line {i}\n"),
        json: Value::Null,
        used: 60,
        max: 12_000,
        truncated: false,
    };
    let mut compacted = Vec::new();
    for i in 1..=200 {
        let prompt = if i == 1 {
            format!("turn 1: remember the launch code {FACT}, we need it at the end")
        } else {
            format!("turn {i}: explain step {i} of the migration in detail")
        };
        let (outcome, events) = turn(&rig, &mut conversation, &prompt, Some(snapshot(i))).await;
        assert!(
            matches!(outcome, TurnOutcome::Completed { .. }),
            "turn {i}: {outcome:?}"
        );
        compacted.extend(events.into_iter().filter_map(|e| match e {
            TurnEvent::Compacted(done) => Some(done.by_model),
            _ => None,
        }));
    }
    let requests = server.requests();
    let chat: Vec<Value> = requests
        .iter()
        .map(|r| r.json())
        .filter(|b| b.get("tools").is_some())
        .collect();
    assert_eq!(chat.len(), 201, "one call a turn, two at turn 200");
    // Every request fits the window, as the server counts it.
    for (n, body) in requests.iter().map(|r| r.json()).enumerate() {
        let tokens = server_tokens(&body);
        assert!(tokens <= WINDOW, "request {n}: {tokens} tokens");
    }
    // The prompt stopped growing: the last hundred requests are flat.
    let sizes: Vec<u64> = chat.iter().map(server_tokens).collect();
    assert!(
        sizes[199] < 2 * sizes[100] && sizes[150] > 2_000,
        "{sizes:?}"
    );
    // Left-out messages are named, with the way back.
    let last = &chat[200];
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains(prompt::OMITTED_HEADING), "{system}");
    assert!(system.contains("context.slice(0, "), "{system}");
    // Compaction ran: first the extractive fallback, then the model's.
    assert_eq!(compacted.first(), Some(&false), "{compacted:?}");
    assert!(compacted.contains(&true), "{compacted:?}");
    assert!(summaries.load(Ordering::SeqCst) >= 2);
    // The summary is user-role text, never system text (issue 25, route 11).
    assert!(!system.contains(prompt::SUMMARY_HEADING), "{system}");
    let summary = last["messages"][1]["content"].as_str().unwrap();
    assert_eq!(last["messages"][1]["role"], "user");
    assert!(summary.starts_with(prompt::SUMMARY_HEADING), "{summary}");
    assert!(summary.contains("MODEL-SUMMARY"), "{summary}");
    // Only the current snapshot is sent in full.
    assert_eq!(
        user_texts(last)
            .matches("<runtime-context-snapshot>")
            .count(),
        1
    );
    assert!(user_texts(last).contains("turn 200: the editor shows"));
    // Turn 200's cell found turn 1's fact in `context` (index 0).
    let result: Value =
        serde_json::from_str(tool_message(last, "find")["content"].as_str().unwrap()).unwrap();
    let stdout = result["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with("0 ") && stdout.contains(FACT),
        "{result:#}"
    );
    // Nothing was deleted: the session has every message and the markers.
    let loaded = session::load(dir.path(), &id).unwrap();
    let messages = loaded
        .events()
        .filter(|e| matches!(e, SessionEvent::Message { .. }))
        .count();
    assert_eq!(messages, conversation.messages().len());
    let markers: Vec<bool> = loaded
        .events()
        .filter_map(|e| match e {
            session::SessionEvent::Compaction { by_model, .. } => Some(*by_model),
            _ => None,
        })
        .collect();
    assert_eq!(markers, compacted);
    // One transcript: 200 prompts, 200 answers, the cell's call and its
    // result, each under the same id in `context` as in the conversation.
    assert_eq!(rig.context.len(), 402);
    assert_eq!(rig.context.len(), conversation.messages().len());
    rig.kernel.shutdown().await;
}

/// F2's preview of the next request is byte for byte what the turn then
/// sends: the pretty-printed `messages`, and their compact form inside the
/// raw HTTP body. The preview says when a compaction will run first; once
/// it has, the preview is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_preview_is_the_request_that_is_sent() {
    // The first answer reports about what the client estimated, so the
    // estimate stays uncorrected and the numbers below are predictable.
    let first = sse(&[
        text_chunk("First answer."),
        finish_chunk("stop"),
        usage_chunk(3_500, 5),
        done(),
    ]);
    let server = LoopbackServer::start(vec![
        first,
        answer("- the user asked a long first question"),
        answer("Second."),
    ])
    .await;
    let dir = workspace();
    let mut rig = rig(dir.path(), openai(&server));
    rig.deps.window = ContextWindow::resolve(Some(4_400), None, "test-model", Some(200), None);
    let mut conversation = Conversation::new(rig.context.clone(), None);
    // Fits the window alone, but not with what follows it.
    let long = "a long first question ".repeat(300);
    let (outcome, _) = turn(
        &rig,
        &mut conversation,
        &long,
        Some(snapshot_of(dir.path())),
    )
    .await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let snapshot = snapshot_of(dir.path());
    let preview = |conversation: &Conversation| {
        hello_tui::agent::turn::preview_prompt(
            conversation,
            "and now?",
            Some(&snapshot.markdown),
            &rig.deps.window,
        )
    };
    let before = preview(&conversation);
    assert!(before.needs_compaction(&rig.deps.window));
    let through = prompt::compact::plan(&conversation, &before, &rig.deps.window).unwrap();
    let done = prompt::compact::compact(
        &*rig.deps.provider,
        &mut conversation,
        through,
        Some("the question"),
        &rig.deps.window,
    )
    .await;
    assert!(done.by_model, "{done:?}");
    let shown = preview(&conversation);
    assert!(!shown.needs_compaction(&rig.deps.window));
    assert!(!shown.omitted.is_empty());
    let (outcome, events) = turn(&rig, &mut conversation, "and now?", Some(snapshot.clone())).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{events:?}"
    );
    let requests = server.requests();
    // The summary call had no tools and carried the focus.
    let summary_call = requests[1].json();
    assert!(summary_call.get("tools").is_none());
    assert!(
        summary_call
            .to_string()
            .contains("Focus the summary on: the question")
    );
    let sent = &requests[2];
    assert_eq!(
        serde_json::to_string_pretty(&sent.json()["messages"]).unwrap(),
        shown.messages_text()
    );
    let compact = serde_json::to_string(&hello_tui::agent::provider::openai::messages_json(
        &shown.request.messages,
    ))
    .unwrap();
    let body = String::from_utf8(sent.body.clone()).unwrap();
    assert!(
        body.contains(&compact),
        "the body carries the previewed bytes"
    );
    assert!(body.contains(prompt::OMITTED_HEADING));
    assert!(body.contains("the user asked a long first question"));
}

/// A message that cannot fit the window even alone is refused with a
/// readable error instead of being sent to a server that may cut it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_larger_than_the_window_fails_clearly() {
    let dir = workspace();
    let mut rig = rig(
        dir.path(),
        Arc::new(ScriptedProvider::from_json(r#"{"turns":[{"text":"never"}]}"#).unwrap()),
    );
    rig.deps.window = ContextWindow::resolve(Some(2_000), None, "local", None, None);
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let huge = "paste ".repeat(5_000);
    let (outcome, events) = turn(&rig, &mut conversation, &huge, None).await;
    let TurnOutcome::Failed(why) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(why.contains("window is 2000"), "{why}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TurnEvent::AssistantMessage { .. }))
    );
    // The next, normal message still goes out: the huge one leaves the prompt.
    let (outcome, _) = turn(&rig, &mut conversation, "short", None).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
}

/// Pins are a section of the request while their message is the current
/// one: counted apart from the message (F2's preview is the body sent),
/// sent in full on every call of that turn, and one line in history on
/// later turns, while `context` still finds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pins_are_a_section_of_their_turn_and_one_line_afterwards() {
    use hello_tui::agent::conversation::{PINS_SHRUNK, SNAPSHOT_SHRUNK, with_pins};
    use hello_tui::agent::prompt::SectionKind;
    use hello_tui::agent::turn::preview_prompt;
    let server = LoopbackServer::start(vec![
        sse(&[
            tool_chunk(0, Some("call_1"), r#"{"code":"print(1)"}"#),
            finish_chunk("tool_calls"),
            usage_chunk(50, 5),
            done(),
        ]),
        answer("Pinned answer."),
        answer("Second."),
    ])
    .await;
    let dir = workspace();
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let pinned = "PINNED-XYZZY checkAuth rejects plain users ".repeat(20);
    let prompt = with_pins("why?".into(), [("#3 tool", pinned.as_str())]);
    let snapshot = snapshot_of(dir.path());
    let window = &rig.deps.window;
    let preview = preview_prompt(&conversation, &prompt, Some(&snapshot.markdown), window);
    let plain = preview_prompt(&conversation, "why?", Some(&snapshot.markdown), window);
    let section =
        |p: &prompt::Prompt, kind| p.sections.iter().find(|s| s.kind == kind).map(|s| s.tokens);
    let pins = section(&preview, SectionKind::Pins).expect("a pins section");
    assert!(pins > 100, "{:?}", preview.sections);
    assert_eq!(section(&plain, SectionKind::Pins), None);
    // Counted on their own: the message and the snapshot cost what they
    // cost without pins, and the pins are what the request grew by.
    assert_eq!(
        section(&preview, SectionKind::Current),
        section(&plain, SectionKind::Current)
    );
    assert_eq!(
        section(&preview, SectionKind::Snapshot),
        section(&plain, SectionKind::Snapshot)
    );
    assert!(
        preview.tokens.abs_diff(plain.tokens + pins) <= 2,
        "{} vs {} + {pins}",
        preview.tokens,
        plain.tokens
    );

    let (outcome, _) = turn(&rig, &mut conversation, &prompt, Some(snapshot.clone())).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let (outcome, _) = turn(&rig, &mut conversation, "and then?", Some(snapshot.clone())).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        serde_json::to_string_pretty(&requests[0].json()["messages"]).unwrap(),
        preview.messages_text(),
        "F2's preview is the first request"
    );
    // Both calls of the pinned turn carry the pins in full...
    for request in &requests[..2] {
        assert!(request.json().to_string().contains(&pinned));
    }
    // ...the next turn's request has one line in their place.
    let later = requests[2].json();
    let first_user = later["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap();
    assert_eq!(
        first_user["content"],
        format!("why?\n\n{PINS_SHRUNK}\n\n{SNAPSHOT_SHRUNK}")
    );
    assert!(!later.to_string().contains("PINNED-XYZZY"));
    // The pinned text is still in `context`, as the line says.
    let found = rig
        .context
        .read(|c| c.search(&context::SearchQuery::new("XYZZY").limit(5)));
    assert_eq!(found.hits.first().map(|h| h.id.0), Some(0));
}

/// A native Anthropic turn against the real kernel: the model thinks
/// (signed), calls the tool, gets the cell's real output back as a
/// `tool_result` in the next request — after its thinking block, sent back
/// unmodified with its signature, as the API requires — and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_tool_use_turn_round_trips_through_the_real_kernel() {
    use hello_tui::agent::provider::AnthropicProvider;
    use hello_tui::agent::provider::anthropic::AnthropicConfig;
    let event = anthropic_event;
    let start = |cache_read: u64| {
        event(
            json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 40, "cache_creation_input_tokens": 0, "cache_read_input_tokens": cache_read, "output_tokens": 1}}}),
        )
    };
    let end = |reason: &str| {
        [
            event(json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": 30}})),
            event(json!({"type": "message_stop"})),
        ]
        .concat()
    };
    let first = [
        start(0),
        event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Count the lines of auth.ts."}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2lnbmVk"}}),
        ),
        event(json!({"type": "content_block_stop", "index": 0})),
        event(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "code_action", "input": {}}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"code\": \"print(len(fs.read('auth.ts')"}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ".splitlines()))\"}"}}),
        ),
        event(json!({"type": "content_block_stop", "index": 1})),
        end("tool_use"),
    ];
    let second = [
        start(1_500),
        event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "auth.ts has 3 lines."}}),
        ),
        event(json!({"type": "content_block_stop", "index": 0})),
        end("end_turn"),
    ];
    let server = LoopbackServer::start(vec![sse(&first), sse(&second)]).await;
    let mut config = AnthropicConfig::new(Some(&server.base_url), "claude-test", "K", &|_| {
        Some("sk-ant-test".into())
    });
    config.thinking_budget = Some(1_024);
    let dir = workspace();
    let rig = rig(
        dir.path(),
        Arc::new(AnthropicProvider::new(config).unwrap()),
    );
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (outcome, events) = turn(&rig, &mut conversation, "how long is auth.ts?", None).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { steps: 2, usage } if usage.cache_read_tokens == 1_500),
        "{outcome:?}"
    );
    assert!(
        events.iter().any(
            |e| matches!(e, TurnEvent::ReasoningDelta(t) if t == "Count the lines of auth.ts.")
        )
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first_body = requests[0].json();
    assert_eq!(
        first_body["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    let second = requests[1].json();
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Count the lines of auth.ts.", "signature": "c2lnbmVk"},
            {"type": "tool_use", "id": "toolu_1", "name": "code_action",
             "input": {"code": "print(len(fs.read('auth.ts').splitlines()))"}},
        ])
    );
    let result = &messages[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_1");
    let output: Value = serde_json::from_str(result["content"].as_str().unwrap()).unwrap();
    assert_eq!(output["ok"], true, "{output:#}");
    assert_eq!(output["stdout"], "3\n");
    assert_eq!(
        second["thinking"]["type"], "enabled",
        "the loop keeps thinking on"
    );
    // The answer is the text, not the reasoning.
    let answer = conversation.messages().last().unwrap();
    assert_eq!(
        answer,
        &hello_tui::agent::provider::ChatMessage::assistant(
            Some("auth.ts has 3 lines.".into()),
            vec![]
        )
    );
    rig.kernel.shutdown().await;
}

/// A reasoning model on an OpenAI-compatible server: reasoning arrives as
/// `reasoning_content` in one call and as a `<think>` block split across
/// chunks in the next; it is shown as reasoning events, never sent back as
/// assistant content, and the answer is only what follows it. A call cut
/// by `finish_reason: length` is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_is_shown_not_sent_back_and_a_cut_answer_is_told() {
    let reasoning = |text: &str| {
        data(&json!({"choices":[{"index":0,"delta":{"reasoning_content":text}}]}).to_string())
    };
    let first = sse(&[
        reasoning("I should run code."),
        tool_chunk(0, Some("call_r"), "{\"code\": \"print(6 * 7)\"}"),
        finish_chunk("tool_calls"),
        done(),
    ]);
    let second = sse(&[
        text_chunk("<th"),
        text_chunk("ink>It printed 42, so"),
        text_chunk(" the answer is 42.</thi"),
        text_chunk("nk>\n\nThe answer is 4"),
        finish_chunk("length"),
        done(),
    ]);
    let server = LoopbackServer::start(vec![first, second]).await;
    let dir = workspace();
    let rig = rig(dir.path(), openai(&server));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (outcome, events) = turn(&rig, &mut conversation, "what is 6*7?", None).await;
    assert!(
        matches!(outcome, TurnOutcome::Completed { steps: 2, .. }),
        "{outcome:?}"
    );
    let thought: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        thought,
        "I should run code.It printed 42, so the answer is 42."
    );
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            TurnEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "The answer is 4");
    assert!(events.iter().any(|e| matches!(e, TurnEvent::OutputLimit)));

    let second = server.requests()[1].json();
    let assistant = &second["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"],
        Value::Null,
        "reasoning is not content"
    );
    assert!(!second.to_string().contains("I should run code"));
    assert_eq!(
        conversation.messages().last().unwrap(),
        &hello_tui::agent::provider::ChatMessage::assistant(Some("The answer is 4".into()), vec![])
    );
    rig.kernel.shutdown().await;
}

/// Issue 18's "done when": one session talks to a local reasoning model
/// through an OpenAI-compatible server and to a native Anthropic endpoint,
/// and back. Each request is valid for its API: no reasoning is ever sent
/// as content, Anthropic gets its own signed thinking back (and thinking
/// on, since the earlier tool loop is closed), the OpenAI server never sees
/// a signature, and the kernel's variables carry across providers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_moves_between_a_reasoning_model_and_anthropic() {
    use hello_tui::agent::provider::AnthropicProvider;
    use hello_tui::agent::provider::anthropic::AnthropicConfig;
    let reasoning = |text: &str| {
        data(&json!({"choices":[{"index":0,"delta":{"reasoning_content":text}}]}).to_string())
    };
    let local = LoopbackServer::start(vec![
        sse(&[
            reasoning("Set x first."),
            tool_chunk(0, Some("call_local"), "{\"code\": \"x = 41\"}"),
            finish_chunk("tool_calls"),
            done(),
        ]),
        sse(&[
            text_chunk("<think>x is set.</think>Done: x is 41."),
            finish_chunk("stop"),
            done(),
        ]),
        answer("Back on the local model."),
    ])
    .await;
    let event = anthropic_event;
    let claude_turn = |blocks: Vec<Value>, stop: &str| {
        let mut events = vec![event(
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        )];
        for (i, block) in blocks.into_iter().enumerate() {
            events.push(event(
                json!({"type": "content_block_start", "index": i, "content_block": block["start"]}),
            ));
            for delta in block["deltas"].as_array().unwrap() {
                events.push(event(
                    json!({"type": "content_block_delta", "index": i, "delta": delta}),
                ));
            }
            events.push(event(json!({"type": "content_block_stop", "index": i})));
        }
        events.push(event(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}})));
        events.push(event(json!({"type": "message_stop"})));
        sse(&events)
    };
    let claude = LoopbackServer::start(vec![
        claude_turn(
            vec![
                json!({"start": {"type": "thinking", "thinking": "", "signature": ""}, "deltas": [
                    {"type": "thinking_delta", "thinking": "x should still be in the kernel."},
                    {"type": "signature_delta", "signature": "U0lH"}]}),
                json!({"start": {"type": "tool_use", "id": "toolu_9", "name": "code_action", "input": {}}, "deltas": [
                    {"type": "input_json_delta", "partial_json": "{\"code\": \"print(x + 1)\"}"}]}),
            ],
            "tool_use",
        ),
        claude_turn(
            vec![json!({"start": {"type": "text", "text": ""}, "deltas": [
                {"type": "text_delta", "text": "x + 1 is 42."}]})],
            "end_turn",
        ),
    ])
    .await;
    let mut config = AnthropicConfig::new(Some(&claude.base_url), "claude-test", "K", &|_| {
        Some("sk-ant-test".into())
    });
    config.thinking_budget = Some(2_048);
    let anthropic: Arc<dyn ModelProvider> = Arc::new(AnthropicProvider::new(config).unwrap());

    let dir = workspace();
    let mut rig = rig(dir.path(), openai(&local));
    let mut conversation = Conversation::new(rig.context.clone(), None);
    let (first, _) = turn(&rig, &mut conversation, "set x", None).await;
    assert!(
        matches!(first, TurnOutcome::Completed { steps: 2, .. }),
        "{first:?}"
    );

    rig.deps.provider = anthropic;
    let (second, _) = turn(&rig, &mut conversation, "what is x + 1?", None).await;
    assert!(
        matches!(second, TurnOutcome::Completed { steps: 2, .. }),
        "{second:?}"
    );
    let to_claude = claude.requests();
    let opening = to_claude[0].json();
    assert_eq!(
        opening["thinking"]["type"], "enabled",
        "the local tool loop is closed"
    );
    let opening_text = opening["messages"].to_string();
    assert!(!opening_text.contains("Set x first") && !opening_text.contains("x is set"));
    assert!(opening_text.contains("Done: x is 41."));
    let follow_up = to_claude[1].json();
    let messages = follow_up["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    assert_eq!(call["content"][0]["signature"], "U0lH");
    assert_eq!(call["content"][1]["id"], "toolu_9");
    let result: Value = serde_json::from_str(
        messages.last().unwrap()["content"][0]["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["stdout"], "42\n", "the kernel kept x: {result:#}");

    rig.deps.provider = openai(&local);
    let (third, _) = turn(&rig, &mut conversation, "thanks", None).await;
    assert!(
        matches!(third, TurnOutcome::Completed { steps: 1, .. }),
        "{third:?}"
    );
    let back = local.requests().last().unwrap().json();
    let back_text = back.to_string();
    assert!(!back_text.contains("U0lH") && !back_text.contains("should still be"));
    assert!(
        back["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["tool_calls"][0]["id"] == "toolu_9" && m["content"].is_null())
    );
    rig.kernel.shutdown().await;
}

/// `PreCompact` (hooks): a hook that exits 2 holds an automatic compaction
/// back (the turn still fits: older messages are left out instead, and no
/// summary is asked of the model); without it the same turn compacts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_compact_hook_holds_the_compaction_back() {
    use hello_tui::agent::provider::ChatMessage;
    use hello_tui::hooks::{HookEntry, HookEvent, Hooks, Matcher, Origin};
    for held in [true, false] {
        let server = LoopbackServer::respond_with(Duration::from_secs(30), |_| {
            sse(&[
                text_chunk("a summary, or the answer"),
                finish_chunk("stop"),
                done(),
            ])
        })
        .await;
        let dir = workspace();
        let mut rig = rig(dir.path(), openai(&server));
        rig.deps.window = ContextWindow::resolve(Some(6_000), None, "test-model", None, None);
        if held {
            rig.deps.hooks = Hooks::new(
                dir.path(),
                ChildEnv::from_host(&[], ""),
                vec![HookEntry {
                    event: HookEvent::PreCompact,
                    matcher: Matcher::parse("auto").unwrap(),
                    command: "echo 'keep the history whole' >&2; exit 2".into(),
                    timeout: Duration::from_secs(10),
                    origin: Origin::User,
                    pinned: Vec::new(),
                }],
            );
        }
        let mut conversation = Conversation::new(rig.context.clone(), None);
        let long = "The migration moves every table to the new schema. ".repeat(40);
        for i in 0..12 {
            conversation.push(ChatMessage::User {
                content: format!("question {i}: {long}"),
            });
            conversation.push(ChatMessage::assistant(
                Some(format!("answer {i}: {long}")),
                Vec::new(),
            ));
        }
        let (outcome, events) = turn(&rig, &mut conversation, "and now?", None).await;
        assert!(
            matches!(outcome, TurnOutcome::Completed { .. }),
            "{outcome:?}"
        );
        let held_event = events.iter().find_map(|e| match e {
            TurnEvent::CompactionHeld { reason } => Some(reason.clone()),
            _ => None,
        });
        let compacted = events.iter().any(|e| matches!(e, TurnEvent::Compacted(_)));
        if held {
            assert_eq!(held_event.as_deref(), Some("keep the history whole"));
            assert!(!compacted);
            assert_eq!(server.requests().len(), 1, "no summary was asked for");
        } else {
            assert_eq!(held_event, None);
            assert!(compacted, "{events:?}");
        }
    }
}

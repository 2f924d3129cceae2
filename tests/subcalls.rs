//! `llm_query` / `llm_query_batched` (issue 19) from a real Python kernel
//! against a loopback server speaking the Chat Completions wire format:
//! answers in order, the concurrency limit, the per-turn caps, cancel,
//! timeouts, the sub-model setting, redaction, approval and the session.

#[path = "support/exec_json.rs"]
mod exec_json;
#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use hello_tui::agent::provider::openai::OpenAiConfig;
use hello_tui::agent::provider::{ModelProvider, OpenAiProvider};
use hello_tui::config::Settings;
use hello_tui::kernel::caps::{AllowAll, Approval, ApprovalPolicy, DenyAll};
use hello_tui::kernel::{CodeRuntime, ExecResult, KernelConfig, KernelStatus};
use hello_tui::sandbox::{ChildEnv, Confinement};
use hello_tui::subcalls::{Approvals, SubcallEvent, SubcallSection, SubcallStatus, Subcalls};
use loopback::{Framing, LoopbackServer, Part, Recorded, Reply, data};
use serde_json::json;

fn chunk(text: &str) -> String {
    data(
        &json!({"choices":[{"index":0,"delta":{"content":text},"finish_reason":null}]}).to_string(),
    )
}

/// The user message of a recorded request.
fn prompt_of(request: &Recorded) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Answers `answer:<prompt>` after `delay`, with 10 + 2 tokens of usage.
fn answering(delay: Duration) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |request| {
        let text = format!("answer:{}", prompt_of(request));
        let body = [
            chunk(&text),
            data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string()),
            data(&json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}).to_string()),
            "data: [DONE]\r\n\r\n".to_owned(),
        ]
        .concat();
        Reply::sse(
            Framing::Chunked,
            vec![Part::Pause(delay), Part::Bytes(body.into_bytes())],
        )
    }
}

/// Answers `text` at once.
fn answering_with(text: &str) -> Reply {
    let body = [
        chunk(text),
        data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string()),
        "data: [DONE]\r\n\r\n".to_owned(),
    ]
    .concat();
    Reply::sse(Framing::Chunked, vec![Part::Bytes(body.into_bytes())])
}

/// Starts streaming, then never finishes (until the client hangs up).
fn hanging(_: &Recorded) -> Reply {
    Reply::sse(
        Framing::Chunked,
        vec![Part::Bytes(chunk("thinking").into_bytes()), Part::HoldOpen],
    )
}

fn provider(server: &LoopbackServer, model: &str) -> Arc<dyn ModelProvider> {
    let mut config = OpenAiConfig::new(Some(&server.base_url), model, "NO_SUCH_KEY_VAR", &|_| None);
    config.http.max_attempts = 1;
    Arc::new(OpenAiProvider::new(config).unwrap())
}

fn settings(server: &LoopbackServer, subcalls: SubcallSection) -> Settings {
    let mut settings = Settings::defaults();
    settings.model = Some("main-model".into());
    settings.base_url = Some(server.base_url.clone());
    settings.api_key_env = "NO_SUCH_KEY_VAR".into();
    settings.subcalls = subcalls;
    settings
}

struct Rig {
    kernel: CodeRuntime,
    subcalls: Subcalls,
    events: Arc<Mutex<Vec<SubcallEvent>>>,
    dir: tempfile::TempDir,
}

fn rig_with(
    server: &LoopbackServer,
    section: SubcallSection,
    approval: Arc<dyn ApprovalPolicy>,
) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let settings = settings(server, section);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let subcalls = Subcalls::new(
        &settings,
        dir.path(),
        Some(provider(server, "main-model")),
        Approvals {
            calls: approval,
            cells: Arc::new(hello_tui::agent::turn::AllowCells),
        },
        Some(Arc::new(move |event| sink.lock().unwrap().push(event))),
        &|_| None,
    );
    subcalls.begin_turn();
    // As the front ends register it, so `rlm_query` can start its kernel.
    let registry = hello_tui::kernel_setup::registry(
        dir.path(),
        &Confinement::unconfined(ChildEnv::from_host(&[], "")),
        Arc::new(DenyAll::default()),
        None,
        None,
        Some(&subcalls),
    )
    .unwrap();
    let mut config = KernelConfig::for_workspace(dir.path());
    config.auto_refresh = None;
    let (kernel, _events) = CodeRuntime::new(config, registry);
    Rig {
        kernel,
        subcalls,
        events,
        dir,
    }
}

fn rig(server: &LoopbackServer, section: SubcallSection) -> Rig {
    rig_with(server, section, Arc::new(AllowAll))
}

async fn run(rig: &Rig, code: &str) -> ExecResult {
    rig.kernel
        .execute(code, Some(Duration::from_secs(30)))
        .await
}

async fn ok(rig: &Rig, code: &str) -> ExecResult {
    let result = run(rig, code).await;
    assert!(result.ok, "cell failed: {code}\n{:?}", result.error);
    result
}

fn completed(rig: &Rig) -> Vec<hello_tui::subcalls::SubcallCompleted> {
    rig.events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            SubcallEvent::Completed(done) => Some(done.clone()),
            SubcallEvent::Started(_) => None,
        })
        .collect()
}

/// The finished calls once there are `n` (an aborted call reports as its
/// task is dropped, a moment after the cell has ended).
async fn wait_completed(rig: &Rig, n: usize) -> Vec<hello_tui::subcalls::SubcallCompleted> {
    for _ in 0..250 {
        if completed(rig).len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    completed(rig)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_over_eight_chunks_answers_in_order_within_the_concurrency_limit() {
    // Later prompts answer sooner, so order is the code's doing.
    let server = LoopbackServer::respond_with(Duration::from_secs(30), move |request| {
        let n: u64 = prompt_of(request)
            .trim_start_matches("chunk ")
            .parse()
            .unwrap_or(0);
        answering(Duration::from_millis(400 - 40 * n))(request)
    })
    .await;
    let rig = rig(
        &server,
        SubcallSection {
            concurrency: Some(3),
            ..SubcallSection::default()
        },
    );
    let result = ok(
        &rig,
        "big = [f'chunk {i}' for i in range(8)]\n\
         answers = llm_query_batched(big)\n\
         print(answers)",
    )
    .await;
    let expected: Vec<String> = (0..8).map(|i| format!("answer:chunk {i}")).collect();
    assert_eq!(
        result.stdout.trim(),
        format!("{expected:?}").replace('"', "'")
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    assert_eq!(server.max_open(), 3, "three at a time, never more");
    for request in &requests {
        let body = request.json();
        assert_eq!(
            body["model"], "main-model",
            "the session's model by default"
        );
        assert!(
            body.get("tools").is_none() || body["tools"] == json!([]),
            "a sub-call offers no tools: {body}"
        );
    }
    let done = completed(&rig);
    assert_eq!(done.len(), 8);
    assert!(
        done.iter()
            .all(|d| d.status == SubcallStatus::Ok && d.tokens() == 12)
    );
    assert_eq!(rig.subcalls.used(), (8, 96));
    // A single query returns a plain string.
    let one = ok(&rig, "print(repr(llm_query('hi', system='be brief')))").await;
    assert_eq!(one.stdout.trim(), "'answer:hi'");
    let last = server.requests().pop().unwrap().json();
    assert_eq!(
        last["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sub_model_setting_and_the_model_argument_are_honoured() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let rig = rig(
        &server,
        SubcallSection {
            model: Some("small-model".into()),
            ..SubcallSection::default()
        },
    );
    ok(
        &rig,
        "a = llm_query('x')\nb = llm_query('y', model='other-model')",
    )
    .await;
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.json()["model"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(models, ["small-model", "other-model"]);
    let done = completed(&rig);
    assert!(done[0].model.contains("small-model"), "{:?}", done[0].model);
    // Positional use of a keyword-only parameter is refused, like Python.
    let err = run(&rig, "llm_query('x', 'other-model')")
        .await
        .error
        .unwrap();
    assert_eq!(err.type_name, "TypeError", "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_a_cap_the_cell_gets_subcall_limit_error_and_keeps_its_state() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let rig = rig(
        &server,
        SubcallSection {
            max_calls_per_turn: Some(3),
            max_tokens_per_turn: Some(30),
            max_depth: Some(0),
            ..SubcallSection::default()
        },
    );
    // Four calls at once are refused before any is sent.
    let result = run(&rig, "kept = 41\nllm_query_batched(['a', 'b', 'c', 'd'])").await;
    let err = result.error.unwrap();
    assert_eq!(err.type_name, "SubcallLimitError", "{err:?}");
    assert!(
        err.message.contains("max_calls_per_turn"),
        "{}",
        err.message
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    // `max_depth = 0` turns rlm_query off.
    let err = run(&rig, "rlm_query('x')").await.error.unwrap();
    assert_eq!(err.type_name, "SubcallLimitError", "{err:?}");
    assert!(err.message.contains("max_depth"), "{}", err.message);
    let r = ok(&rig, "print(kept + 1)").await;
    assert_eq!(r.stdout.trim(), "42", "the cell's variables are kept");
    // 12 tokens a call: the third call finds 24 of 30 used and goes; the
    // fourth finds 36 and is refused (the call cap is 3, so begin a turn).
    ok(&rig, "llm_query('a'); llm_query('b'); llm_query('c')").await;
    rig.subcalls.begin_turn();
    ok(&rig, "llm_query('a'); llm_query('b'); llm_query('c')").await;
    assert_eq!(rig.subcalls.used(), (3, 36));
    rig.subcalls.begin_turn();
    let r = ok(
        &rig,
        "try:\n    [llm_query(p) for p in 'abcd']\nexcept SubcallLimitError as e:\n    print('caught', e)",
    )
    .await;
    assert!(
        r.stdout.contains("caught llm_query: sub-call"),
        "{}",
        r.stdout
    );
    assert_eq!(server.requests().len(), 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_the_cell_aborts_its_in_flight_sub_calls() {
    let mut server = LoopbackServer::respond_with(Duration::from_secs(30), hanging).await;
    let rig = rig(&server, SubcallSection::default());
    let kernel = rig.kernel.clone();
    let cell = tokio::spawn(async move {
        kernel
            .execute(
                "x = 1\nllm_query_batched(['a', 'b', 'c'])",
                Some(Duration::from_secs(30)),
            )
            .await
    });
    let mut status = rig.kernel.status();
    status
        .wait_for(|i| i.status == KernelStatus::Busy)
        .await
        .unwrap();
    for _ in 0..200 {
        if server.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.requests().len(), 3, "all three in flight");
    assert!(rig.kernel.interrupt());
    let result = cell.await.unwrap();
    assert_eq!(result.error.unwrap().type_name, "KeyboardInterrupt");
    assert!(
        server.wait_client_closed(3, Duration::from_secs(5)).await,
        "every connection was closed"
    );
    let done = wait_completed(&rig, 3).await;
    assert_eq!(done.len(), 3, "each call reported once");
    assert!(
        done.iter().all(|d| d.status == SubcallStatus::Cancelled),
        "{done:?}"
    );
    ok(&rig, "print(x)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_time_raises_timeout_error() {
    let server = LoopbackServer::respond_with(Duration::from_secs(30), hanging).await;
    let rig = rig(
        &server,
        SubcallSection {
            call_timeout_secs: Some(0.3),
            ..SubcallSection::default()
        },
    );
    let err = run(&rig, "llm_query('slow')").await.error.unwrap();
    assert_eq!(err.type_name, "TimeoutError", "{err:?}");
    assert!(err.message.contains("call_timeout_secs"), "{}", err.message);
    assert_eq!(completed(&rig)[0].status, SubcallStatus::TimedOut);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_redacted_before_they_leave() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let rig = rig(&server, SubcallSection::default());
    ok(
        &rig,
        "llm_query('key: sk-proj-abcdefghijklmnopqrstuvwxyz0123 end')",
    )
    .await;
    let sent = prompt_of(&server.requests()[0]);
    assert_eq!(sent, "key: [REDACTED] end");
}

/// The snapshot's privacy rules hold for sub-calls: a prompt quoting a
/// secrets file of the workspace is refused before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_quoting_a_secrets_file_is_refused() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let rig = rig(&server, SubcallSection::default());
    std::fs::write(
        rig.dir.path().join(".env"),
        "DATABASE_URL=postgres://app:correct-horse-battery@db/app\n",
    )
    .unwrap();
    let err = run(
        &rig,
        "llm_query('check this config: ' + open('.env').read())",
    )
    .await
    .error
    .unwrap();
    assert_eq!(err.type_name, "PermissionError", "{err:?}");
    assert!(err.message.contains(".env"), "{}", err.message);
    assert!(server.requests().is_empty(), "nothing was sent");
    assert_eq!(rig.subcalls.used(), (0, 0), "a refused prompt uses no call");
    ok(&rig, "llm_query('what is a DATABASE_URL?')").await;
    assert_eq!(server.requests().len(), 1);
}

/// Counts questions and answers them from a list.
struct Asker {
    asked: Mutex<Vec<String>>,
    allow: bool,
}

impl ApprovalPolicy for Asker {
    fn check(&self, what: &str) -> BoxFuture<'static, Approval> {
        self.asked.lock().unwrap().push(what.to_owned());
        let verdict = if self.allow {
            Approval::Allow
        } else {
            Approval::Deny("not today".into())
        };
        Box::pin(async move { verdict })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_sub_call_of_a_turn_asks_and_a_refusal_raises() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let asker = Arc::new(Asker {
        asked: Mutex::default(),
        allow: true,
    });
    let rig = rig_with(&server, SubcallSection::default(), asker.clone());
    ok(
        &rig,
        "llm_query_batched(['first', 'second']); llm_query('third')",
    )
    .await;
    {
        let asked = asker.asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "asked once for the turn: {asked:?}");
        assert!(
            asked[0].contains("2 sub-calls") && asked[0].contains("first"),
            "{}",
            asked[0]
        );
    }
    rig.subcalls.begin_turn();
    ok(&rig, "llm_query('next turn')").await;
    assert_eq!(
        asker.asked.lock().unwrap().len(),
        2,
        "a new turn asks again"
    );

    let refuser = Arc::new(Asker {
        asked: Mutex::default(),
        allow: false,
    });
    let rig = rig_with(&server, SubcallSection::default(), refuser);
    let err = run(&rig, "llm_query('x')").await.error.unwrap();
    assert_eq!(err.type_name, "PermissionError");
    assert!(err.message.contains("not today"), "{}", err.message);
    assert_eq!(server.requests().len(), 4, "the refused call was not sent");
    assert_eq!(rig.subcalls.used().0, 0, "a refused call is not counted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_records_each_finished_sub_call() {
    let server =
        LoopbackServer::respond_with(Duration::from_secs(30), answering(Duration::ZERO)).await;
    let rig = rig(&server, SubcallSection::default());
    let workspace = tempfile::tempdir().unwrap();
    let writer = hello_tui::session::SessionWriter::create(
        workspace.path(),
        "m",
        hello_tui::session::SessionOrigin::Exec,
    )
    .unwrap();
    let id = writer.id().to_owned();
    rig.subcalls.record_to(Some(writer));
    ok(&rig, "llm_query_batched(['p1', 'p2'])").await;
    let loaded = hello_tui::session::load(workspace.path(), &id).unwrap();
    let recorded: Vec<_> = loaded
        .events()
        .filter_map(|e| match e {
            hello_tui::session::SessionEvent::Subcall(done) => Some(done.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(recorded.len(), 2);
    let mut answers: Vec<&str> = recorded.iter().map(|d| d.answer_head.as_str()).collect();
    answers.sort_unstable();
    assert_eq!(answers, ["answer:p1", "answer:p2"]);
    assert!(
        recorded
            .iter()
            .all(|d| d.tokens() == 12 && d.status == SubcallStatus::Ok)
    );
}

/// A model that calls `code` once through `code_action`, then answers
/// "Done."; sub-calls (requests without tools) go to `sub`.
fn model_calling(
    code: &'static str,
    sub: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |request| {
        let body = request.json();
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        if !has_tools {
            return sub(request);
        }
        let after_cell = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        let parts = if after_cell {
            vec![chunk("Done.")]
        } else {
            let call = json!({"index":0,"id":"c1","type":"function","function":{"name":"code_action","arguments":json!({"code": code}).to_string()}});
            vec![data(
                &json!({"choices":[{"index":0,"delta":{"tool_calls":[call]}}]}).to_string(),
            )]
        };
        let reason = if after_cell { "stop" } else { "tool_calls" };
        let mut body = parts.concat();
        body.push_str(&data(
            &json!({"choices":[{"index":0,"delta":{},"finish_reason":reason}]}).to_string(),
        ));
        body.push_str("data: [DONE]\r\n\r\n");
        Reply::sse(Framing::Chunked, vec![Part::Bytes(body.into_bytes())])
    }
}

/// Cancelling the turn (Esc in the workbench, Ctrl+C in exec) interrupts
/// the cell, which aborts the sub-calls it is waiting on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_turn_aborts_in_flight_sub_calls() {
    use hello_tui::agent::conversation::Conversation;
    use hello_tui::agent::turn::{AllowCells, TurnDeps, TurnOutcome, run_turn};
    use hello_tui::context::{SharedContext, snapshot_channel};

    let mut server = LoopbackServer::respond_with(
        Duration::from_secs(30),
        model_calling("notes = llm_query_batched(['a', 'b'])", hanging),
    )
    .await;
    let rig = rig(&server, SubcallSection::default());
    let (snapshot_tx, _) = snapshot_channel();
    let deps = TurnDeps {
        provider: provider(&server, "main-model"),
        runner: Arc::new(rig.kernel.clone()),
        approval: Arc::new(AllowCells),
        snapshot_tx,
        max_steps: 4,
        cell_timeout: Some(Duration::from_secs(30)),
        window: hello_tui::tokens::ContextWindow::resolve(Some(32_000), None, "", None, None),
        hooks: hello_tui::hooks::Hooks::default(),
    };
    let mut conversation = Conversation::new(SharedContext::default(), None);
    let (events, _events_rx) = tokio::sync::mpsc::unbounded_channel();
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let canceller = async {
        // The model's request, then both sub-calls in flight.
        for _ in 0..300 {
            if server.requests().len() == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = cancel_tx.send(true);
    };
    let (outcome, ()) = tokio::join!(
        run_turn(
            &deps,
            &mut conversation,
            "summarise",
            None,
            &events,
            cancel_rx
        ),
        canceller
    );
    assert!(matches!(outcome, TurnOutcome::Cancelled), "{outcome:?}");
    assert_eq!(
        server.requests().len(),
        3,
        "one model call and two sub-calls"
    );
    assert!(
        server.wait_client_closed(2, Duration::from_secs(5)).await,
        "both sub-call connections were closed"
    );
    let done = wait_completed(&rig, 2).await;
    assert_eq!(done.len(), 2);
    assert!(
        done.iter().all(|d| d.status == SubcallStatus::Cancelled),
        "{done:?}"
    );
}

/// `exec --json` prints `subcall.started` and `subcall.completed` for the
/// sub-calls of the model's cell, and the session file records them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_json_reports_sub_calls() {
    let server = LoopbackServer::respond_with(
        Duration::from_secs(60),
        model_calling(
            "print(llm_query_batched(['one', 'two']))",
            answering(Duration::ZERO),
        ),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        "[subcalls]\nmodel = \"small-model\"\nconcurrency = 2\n",
    )
    .unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"));
    command
        .arg("exec")
        .arg("-C")
        .arg(dir.path())
        .args(["--base-url", &server.base_url, "--model", "main-model"])
        .args(["--context-window", "32000", "--approval", "full", "--json"])
        .arg("--config")
        .arg(&config)
        .arg("summarise")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env_remove("HELLO_TUI_CONFIG")
        .env_remove("OPENAI_API_KEY");
    let (events, stdout) = exec_json::run(command, Duration::from_secs(60)).await;
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["type"] == kind).collect()
    };
    let started = of("subcall.started");
    let finished = of("subcall.completed");
    assert_eq!((started.len(), finished.len()), (2, 2), "{stdout}");
    assert!(
        started[0]["model"]
            .as_str()
            .unwrap()
            .contains("small-model")
    );
    let mut answers: Vec<&str> = finished
        .iter()
        .map(|e| e["answer_head"].as_str().unwrap())
        .collect();
    answers.sort_unstable();
    assert_eq!(answers, ["answer:one", "answer:two"]);
    assert!(
        finished
            .iter()
            .all(|e| e["status"] == "ok" && e["prompt_tokens"] == 10)
    );
    let result = &of("tool.result")[0];
    assert!(
        result["stdout"]
            .as_str()
            .unwrap()
            .contains("['answer:one', 'answer:two']"),
        "{result}"
    );
    let turn = &of("turn.completed")[0];
    assert_eq!(
        turn["subcalls"],
        json!({"calls": 2, "tokens": 24}),
        "{turn}"
    );
    let position = |kind: &str| events.iter().position(|e| e["type"] == kind).unwrap();
    assert!(position("subcall.completed") < position("tool.result"));
    let session_id = events[0]["session_id"].as_str().unwrap();
    let loaded = hello_tui::session::load(dir.path(), session_id).unwrap();
    let recorded = loaded
        .events()
        .filter(|e| matches!(e, hello_tui::session::SessionEvent::Subcall(_)))
        .count();
    assert_eq!(recorded, 2);
}

/// `rlm_query`: a nested loop with a kernel of its own (in the same
/// workspace); its cells have `llm_query` but cannot nest deeper than
/// `max_depth` (1); its model calls come out of the turn's allowance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rlm_query_runs_a_nested_loop_one_level_deep() {
    const NESTED: &str = "import os\n\
                          note = llm_query('inner question')\n\
                          try:\n    rlm_query('deeper')\n\
                          except SubcallLimitError as e:\n    print('depth:', e)\n\
                          print(note, os.getcwd(), 'outer_only' in globals())";
    let server = LoopbackServer::respond_with(Duration::from_secs(30), move |request| {
        let body = request.json();
        let after_cell = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        match (has_tools, after_cell) {
            (true, true) => answering_with("the nested answer"),
            (true, false) => model_calling(NESTED, answering(Duration::ZERO))(request),
            (false, _) => answering(Duration::ZERO)(request),
        }
    })
    .await;
    let rig = rig(&server, SubcallSection::default());
    let r = ok(&rig, "outer_only = 1\nprint(rlm_query('outer question'))").await;
    assert_eq!(r.stdout.trim(), "the nested answer");
    let requests = server.requests();
    let nested: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| r.json())
        .filter(|b| b["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    assert_eq!(nested.len(), 2, "the nested loop: a cell, then the answer");
    let messages = nested[1]["messages"].as_array().unwrap();
    let user = messages.iter().find(|m| m["role"] == "user").unwrap();
    assert!(user["content"].as_str().unwrap().contains("outer question"));
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    let result: serde_json::Value =
        serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("cannot nest deeper than 1"), "{stdout}");
    let workspace = rig.dir.path().canonicalize().unwrap();
    assert!(
        stdout.contains(&format!(
            "answer:inner question {} False",
            workspace.display()
        )),
        "the nested kernel is a fresh one in the workspace: {stdout}"
    );
    let done = completed(&rig);
    let rlm = done
        .iter()
        .find(|d| d.kind == hello_tui::subcalls::SubcallKind::RlmQuery)
        .unwrap_or_else(|| panic!("no rlm call in {done:?}"));
    assert_eq!(rlm.status, SubcallStatus::Ok);
    assert_eq!(rlm.answer_head, "the nested answer");
    // rlm_query itself, its two model calls, the inner llm_query.
    assert_eq!(rig.subcalls.used().0, 4);
}

/// Interrupting the cell that called `rlm_query` ends the nested loop and
/// kills its kernel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_rlm_query_kills_the_nested_kernel() {
    const NESTED: &str =
        "import os, time\nopen('nested.pid', 'w').write(str(os.getpid()))\ntime.sleep(60)";
    let server = LoopbackServer::respond_with(
        Duration::from_secs(30),
        model_calling(NESTED, answering(Duration::ZERO)),
    )
    .await;
    let rig = rig(&server, SubcallSection::default());
    let kernel = rig.kernel.clone();
    let cell = tokio::spawn(async move {
        kernel
            .execute("rlm_query('wait')", Some(Duration::from_secs(30)))
            .await
    });
    let pid_file = rig.dir.path().join("nested.pid");
    let mut pid = None;
    for _ in 0..500 {
        if let Some(n) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.parse::<u32>().ok())
        {
            pid = Some(n);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = pid.expect("the nested cell runs");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    assert!(rig.kernel.interrupt());
    let result = cell.await.unwrap();
    assert_eq!(result.error.unwrap().type_name, "KeyboardInterrupt");
    let gone = async {
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), gone)
        .await
        .expect("the nested kernel was killed");
    let done = wait_completed(&rig, 1).await;
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0].status, SubcallStatus::Cancelled);
    assert_eq!(done[0].kind, hello_tui::subcalls::SubcallKind::RlmQuery);
}

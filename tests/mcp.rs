//! The kernel's `mcp` capability against a real MCP server no one here
//! wrote: the reference `@modelcontextprotocol/server-everything` from npm,
//! installed by `scripts/test` (which CI's `.ci/run` calls). Each kernel is
//! the workbench's own (`KernelLauncher`), sandboxed where the machine can,
//! so the server runs under the kernel's confinement. On CI (`CI` set) a
//! missing server fails the tests; locally they say so and skip.

#[path = "support/exec_json.rs"]
mod exec_json;
#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/test_deps.rs"]
mod test_deps;

use std::path::PathBuf;
use std::time::Duration;

use hello_tui::app::AppEvent;
use hello_tui::config::GlobalOptions;
use hello_tui::config::{ConfigFile, Settings};
use hello_tui::kernel::ExecResult;
use hello_tui::kernel::caps::ApprovalDecision;
use hello_tui::mcp::{McpDirectory, ServerState};
use hello_tui::sandbox::{ApprovalMode, SandboxStatus};
use hello_tui::workbench::approvals::{ApprovalBroker, ApprovalSubject};
use hello_tui::workbench::event::{self, AppEventReceiver};
use hello_tui::workbench::kernel::{CellOrigin, KernelClient};
use hello_tui::workbench::safety::KernelLauncher;

/// Where `scripts/test` installed the server's entry point, or `None`
/// (after saying why) when it is not there and this is not CI.
fn server_entry() -> Option<PathBuf> {
    test_deps::installed(
        "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "the MCP reference server",
    )
}

struct Kernel {
    client: KernelClient,
    events: AppEventReceiver,
    directory: McpDirectory,
    _workspace: tempfile::TempDir,
}

fn launch(entry: &std::path::Path, mode: ApprovalMode) -> Kernel {
    let config = format!(
        "[[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\nenv = {{ GREETING = \"hello from the config\" }}\n",
        entry.display().to_string()
    );
    launch_config(&config, mode)
}

fn launch_config(config: &str, mode: ApprovalMode) -> Kernel {
    let file = ConfigFile::parse(config, std::path::Path::new("c.toml")).unwrap();
    let settings = Settings::merge(file, None, &GlobalOptions::default(), &|_: &str| None).unwrap();
    let workspace = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
    let (tx, events) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), mode);
    let directory = McpDirectory::default();
    let launcher = KernelLauncher::new(
        tx,
        settings,
        workspace.path().to_path_buf(),
        broker,
        SandboxStatus::probe(),
    )
    .with_mcp(directory.clone());
    let launched = launcher.launch(mode).unwrap();
    Kernel {
        client: launched.client,
        events,
        directory,
        _workspace: workspace,
    }
}

async fn run(k: &Kernel, code: &str) -> ExecResult {
    let (_, rx) = k.client.execute(code.to_owned(), CellOrigin::Agent, None);
    tokio::time::timeout(Duration::from_secs(90), rx)
        .await
        .expect("the cell finished in time")
        .expect("the service answered")
}

/// The cell's value, failing with its error when it raised.
async fn value(k: &Kernel, code: &str) -> String {
    let r = run(k, code).await;
    assert!(r.error.is_none(), "{code}: {:?}", r.error);
    r.value_repr.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cell_lists_the_tools_and_calls_them_with_arguments_getting_python_data() {
    let Some(entry) = server_entry() else { return };
    let k = launch(&entry, ApprovalMode::Auto);
    let listing = value(
        &k,
        "s = mcp.servers()[0]\n(s.name, s.state, 'echo' in s.tools, 'get_sum' in s.tools, 'get_structured_content' in s.tools)",
    )
    .await;
    assert_eq!(listing, "('everything', 'running', True, True, True)");
    // Arguments in, the tool's text out.
    assert_eq!(
        value(&k, "mcp.everything.echo(message='hi there')").await,
        "'Echo: hi there'"
    );
    assert_eq!(
        value(&k, "mcp.everything.get_sum(a=2, b=3)").await,
        "'The sum of 2 and 3 is 5.'"
    );
    // structuredContent arrives as a dict (attribute access too), not text.
    let weather = value(
        &k,
        "w = mcp.everything.get_structured_content(location='Chicago')\n(type(w).__mro__[1].__name__, sorted(w), type(w.temperature).__name__)",
    )
    .await;
    assert_eq!(
        weather,
        "('dict', ['conditions', 'humidity', 'temperature'], 'int')"
    );
    // The server runs with the configured env on top of the allowlist.
    let env = value(
        &k,
        "'hello from the config' in str(mcp.everything.get_env())",
    )
    .await;
    assert_eq!(env, "True");
}

#[tokio::test(flavor = "multi_thread")]
async fn help_shows_a_tools_input_schema() {
    let Some(entry) = server_entry() else { return };
    let k = launch(&entry, ApprovalMode::Auto);
    let doc = value(
        &k,
        "import pydoc\npydoc.render_doc(mcp.everything.get_sum, renderer=pydoc.plaintext)",
    )
    .await;
    for needle in [
        "mcp.everything.get_sum(a, b)",
        "Returns the sum of two numbers",
        "a (number; required): First number",
        "\"required\"",
    ] {
        assert!(doc.contains(needle), "{needle:?} not in {doc}");
    }
    let r = run(&k, "mcp.everything.no_such_tool").await;
    let error = r.error.expect("an unknown tool is an error");
    assert_eq!(error.type_name, "AttributeError");
    assert!(
        error.message.contains("get_sum"),
        "lists the real ones: {error:?}"
    );
    let r = run(&k, "mcp.everything.echo('positional')").await;
    assert_eq!(
        r.error.expect("keyword arguments only").type_name,
        "TypeError"
    );
    let r = run(&k, "mcp.nowhere").await;
    assert_eq!(r.error.expect("no such server").type_name, "AttributeError");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_error_comes_back_as_a_python_exception_with_the_servers_message() {
    let Some(entry) = server_entry() else { return };
    let k = launch(&entry, ApprovalMode::Auto);
    let r = run(&k, "mcp.everything.get_sum(a='two', b=3)").await;
    let error = r.error.expect("the tool refused");
    assert_eq!(error.type_name, "RuntimeError", "{error:?}");
    assert!(
        error.message.starts_with("mcp.everything.get_sum: ")
            && error.message.contains("expected number"),
        "the server's own words: {error:?}"
    );
    // The kernel and the server go on.
    assert_eq!(
        value(&k, "mcp.everything.echo(message='still here')").await,
        "'Echo: still here'"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashed_server_is_restarted_by_the_next_call() {
    let Some(entry) = server_entry() else { return };
    let k = launch(&entry, ApprovalMode::Auto);
    let pid: i32 = value(&k, "mcp.servers()[0].pid").await.parse().unwrap();
    // SAFETY: kill has no memory preconditions; pid is our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // The host notices on the next call, not before.
    while std::path::Path::new(&format!("/proc/{pid}/stat")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
    {
        assert!(std::time::Instant::now() < deadline, "the server died");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Listed as crashed until a call needs it.
    assert_eq!(
        value(
            &k,
            "s = mcp.servers()[0]\n(s.state, s.pid, len(s.tools) > 0)"
        )
        .await,
        "('crashed', None, True)"
    );
    assert_eq!(
        value(&k, "mcp.everything.echo(message='back')").await,
        "'Echo: back'"
    );
    let after = value(&k, "s = mcp.servers()[0]\n(s.state, s.pid)").await;
    assert!(
        after.starts_with("('running', ") && !after.contains(&format!(" {pid})")),
        "a new process: {after}"
    );
}

/// Ask mode asks per tool: "once" allows this call only, "always" every
/// later call of that tool (any arguments), a denial raises the reason;
/// another tool of the same server is asked about on its own.
#[tokio::test(flavor = "multi_thread")]
async fn ask_mode_asks_per_tool_once_always_or_deny() {
    let Some(entry) = server_entry() else { return };
    let mut k = launch(&entry, ApprovalMode::Ask);
    let code = "r = [mcp.everything.echo(message=m) for m in ('one', 'two', 'three')]\n\
                try:\n    mcp.everything.get_sum(a=1, b=2)\n    r.append('ran')\n\
                except PermissionError as e:\n    r.append(str(e))\n\
                r";
    let (_, mut result) = k.client.execute(code.to_owned(), CellOrigin::Agent, None);
    let mut asked = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let r = loop {
        tokio::select! {
            r = &mut result => break r.expect("the service answered"),
            ev = k.events.recv() => {
                if let Some(AppEvent::ApprovalRequested(pending)) = ev {
                    let ApprovalSubject::ToolCall { server, tool, text } = &pending.subject else {
                        panic!("not a tool call: {:?}", pending.subject);
                    };
                    assert_eq!(server, "everything");
                    // The arguments as sent: `"message": "one"` for the first echo.
                    let argument = text.lines().find(|l| l.contains('"')).unwrap_or_default();
                    asked.push(format!("{tool} {}", argument.trim()));
                    let decision = match asked.len() {
                        1 => ApprovalDecision::AllowOnce,
                        2 => ApprovalDecision::AllowAlways,
                        _ => ApprovalDecision::Deny { reason: "not that one".into() },
                    };
                    pending.answer(decision);
                }
            }
            _ = tokio::time::sleep_until(deadline) => panic!("the cell did not finish"),
        }
    };
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        asked,
        [
            "echo \"message\": \"one\"",
            "echo \"message\": \"two\"",
            "get-sum \"a\": 1,",
        ],
        "echo asked twice (once, then always), not a third time; get-sum on its own"
    );
    let value = r.value_repr.unwrap_or_default();
    assert!(
        value.starts_with("['Echo: one', 'Echo: two', 'Echo: three', ")
            && value.contains("tool call refused: not that one"),
        "{value}"
    );
}

/// In `ask` mode the user's own `%py` cell calls the tools it names
/// without a question (it is not model-written), while a tool it reaches
/// only through a variable — as a model's leftover thread or an alias
/// would — is still asked about.
#[tokio::test(flavor = "multi_thread")]
async fn the_users_own_cell_calls_the_tools_it_names_without_a_question() {
    let Some(entry) = server_entry() else { return };
    let mut k = launch(&entry, ApprovalMode::Ask);
    let code = "r = [mcp.everything.echo(message='mine'), mcp.everything.get_sum(a=1, b=2)]\n\
                alias = getattr(mcp.everything, 'get_env')\n\
                try:\n    r.append(alias())\n\
                except PermissionError as e:\n    r.append(str(e))\n\
                r";
    let (_, mut result) = k.client.execute(code.to_owned(), CellOrigin::User, None);
    let mut asked = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let r = loop {
        tokio::select! {
            r = &mut result => break r.expect("the service answered"),
            ev = k.events.recv() => {
                if let Some(AppEvent::ApprovalRequested(pending)) = ev {
                    if let ApprovalSubject::ToolCall { tool, .. } = &pending.subject {
                        asked.push(tool.clone());
                    }
                    pending.answer(ApprovalDecision::Deny { reason: "not named".into() });
                }
            }
            _ = tokio::time::sleep_until(deadline) => panic!("the cell did not finish"),
        }
    };
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        asked,
        ["get-env"],
        "only the tool the cell does not name is asked about (get_sum is get-sum's Python name)"
    );
    let value = r.value_repr.unwrap_or_default();
    assert!(
        value.starts_with("['Echo: mine', ") && value.contains("tool call refused: not named"),
        "{value}"
    );
}

/// Issue 25, route 12: the "tool called by name in your own cell"
/// exemption keyed on the tool only, so while the user's cell called
/// `echo(message='mine')`, a thread a model cell left called the same tool
/// with `PRODUCTION-DB` and no question was shown. Once model code has run
/// in the session, every call is asked about, the user's included.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_thread_cannot_borrow_the_users_named_tool() {
    let Some(entry) = server_entry() else { return };
    let mut k = launch(&entry, ApprovalMode::Ask);
    let plant = "import threading, time\n\
                 stolen = []\n\
                 def later():\n\
                 \x20   for _ in range(40):\n\
                 \x20       try:\n\
                 \x20           stolen.append(mcp.everything.echo(message='PRODUCTION-DB'))\n\
                 \x20       except Exception as e:\n\
                 \x20           stolen.append(type(e).__name__)\n\
                 \x20       time.sleep(0.05)\n\
                 threading.Thread(target=later, daemon=True).start()";
    let (_, planted) = k.client.execute(plant.to_owned(), CellOrigin::Agent, None);
    let code = "import time\n\
                deadline = time.time() + 60\n\
                while not stolen and time.time() < deadline:\n\
                \x20   time.sleep(0.05)\n\
                try:\n    mcp.everything.echo(message='mine')\n\
                except PermissionError:\n    pass\n\
                time.sleep(0.5)\n\
                stolen";
    let (_, mut result) = k.client.execute(code.to_owned(), CellOrigin::User, None);
    let mut asked = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let r = loop {
        tokio::select! {
            r = &mut result => break r.expect("the service answered"),
            ev = k.events.recv() => {
                if let Some(AppEvent::ApprovalRequested(pending)) = ev {
                    asked.push(pending.subject.text().to_owned());
                    pending.answer(ApprovalDecision::Deny { reason: "not mine".into() });
                }
            }
            _ = tokio::time::sleep_until(deadline) => panic!("the cell did not finish"),
        }
    };
    assert!(planted.await.unwrap().error.is_none());
    let value = r.value_repr.unwrap_or_default();
    assert!(!value.contains("Echo: PRODUCTION-DB"), "{value} {asked:?}");
    assert!(
        asked.iter().any(|a| a.contains("PRODUCTION-DB")),
        "{asked:?}"
    );
    assert!(asked.iter().any(|a| a.contains("mine")), "{asked:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_system_prompt_lists_the_servers_tools_one_line_each() {
    let Some(entry) = server_entry() else { return };
    let k = launch(&entry, ApprovalMode::Auto);
    k.directory.settled(Duration::from_secs(60)).await;
    let servers = k.directory.servers();
    assert_eq!(servers[0].state, ServerState::Running, "{servers:?}");
    let section = k.directory.prompt_section().expect("a section");
    assert!(section.starts_with("## MCP tools"), "{section}");
    assert!(section.contains("\n- `mcp.everything`: "), "{section}");
    assert!(
        section.contains("\n- `mcp.everything.echo(message)`: Echoes back the input string\n"),
        "{section}"
    );
    assert!(
        section.contains("\n- `mcp.everything.get_sum(a, b)`: Returns the sum of two numbers\n"),
        "{section}"
    );
    // One line per tool: as many tool lines as the server listed.
    let tool_lines = section
        .lines()
        .filter(|l| l.starts_with("- `mcp.everything."))
        .count();
    assert_eq!(tool_lines, servers[0].tools.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_runs_inside_the_kernels_sandbox() {
    let Some(entry) = server_entry() else { return };
    if !matches!(SandboxStatus::probe(), SandboxStatus::Enforced { .. }) {
        assert!(
            std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none(),
            "HELLO_TUI_REQUIRE_LANDLOCK is set but the sandbox is unavailable"
        );
        eprintln!("\n!!!!! sandbox unavailable; the MCP server's confinement is not checked\n");
        return;
    }
    let k = launch(&entry, ApprovalMode::Auto);
    // The spawned process is the sandbox's reaper; the server runs below it
    // in a PID namespace of its own, as `shell.run` commands do.
    let pid: u32 = value(&k, "mcp.servers()[0].pid").await.parse().unwrap();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let init = children
        .split_whitespace()
        .next()
        .expect("the sandbox's init");
    let ns = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/pid")).unwrap();
    assert_ne!(ns(init), ns("self"), "the server has its own PID namespace");
    assert_eq!(
        value(&k, "mcp.everything.echo(message='confined')").await,
        "'Echo: confined'"
    );
}

/// A server that cannot start is listed as failed with the reason, the
/// prompt says it is not available, and a call says why (trying again).
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_is_failed_with_its_reason() {
    let k = launch_config(
        "[[mcp.servers]]\nname = \"broken\"\ncommand = \"/nonexistent/mcp-server\"\n",
        ApprovalMode::Auto,
    );
    let listing = value(
        &k,
        "s = mcp.servers()[0]\n(s.state, s.tools, 'mcp-server' in s.error)",
    )
    .await;
    assert_eq!(listing, "('failed', [], True)");
    let section = k.directory.prompt_section().expect("a section");
    assert!(
        section
            .contains("- `mcp.broken`: not available (could not start `/nonexistent/mcp-server`"),
        "{section}"
    );
    let r = run(&k, "mcp.broken.anything").await;
    let error = r.error.expect("no tools to find");
    assert_eq!(error.type_name, "RuntimeError", "{error:?}");
    assert!(error.message.contains("could not start"), "{error:?}");
}

/// One Chat Completions stream: `deltas` as SSE events, then `finish`.
fn stream(deltas: &[serde_json::Value], finish: &str) -> loopback::Reply {
    let mut events: Vec<String> = deltas
        .iter()
        .map(|delta| {
            let chunk = serde_json::json!({"choices": [{"index": 0, "delta": delta}]});
            loopback::data(&chunk.to_string())
        })
        .collect();
    let end = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    events.push(loopback::data(&end.to_string()));
    events.push("data: [DONE]\r\n\r\n".into());
    loopback::Reply::sse(
        loopback::Framing::Close,
        vec![loopback::Part::Bytes(events.concat().into_bytes())],
    )
}

/// `hello-tui exec` with `config` against a loopback model that writes
/// one `code_action` cell of `code`, then answers; the cell's result and
/// the server (its requests).
async fn exec_one_cell(
    workspace: &std::path::Path,
    home: &std::path::Path,
    config: &std::path::Path,
    code: &str,
    prompt: &str,
) -> (serde_json::Value, loopback::LoopbackServer) {
    let code = serde_json::json!({ "code": code }).to_string();
    let call = serde_json::json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
        "function": {"name": "code_action", "arguments": code}}]});
    let server = loopback::LoopbackServer::start(vec![
        stream(&[call], "tool_calls"),
        stream(&[serde_json::json!({"content": "It is 42."})], "stop"),
    ])
    .await;
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"));
    command
        .arg("exec")
        .arg("-C")
        .arg(workspace)
        .args(["--base-url", &server.base_url, "--model", "test-model"])
        .args(["--context-window", "32000", "--json", "--approval", "auto"])
        .arg("--config")
        .arg(config)
        .arg(prompt)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env_remove("HELLO_TUI_CONFIG")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null());
    let (events, _) = exec_json::run(command, Duration::from_secs(90)).await;
    let result = events
        .into_iter()
        .find(|event| event["type"] == "tool.result")
        .expect("a tool result");
    (result, server)
}

/// Done when: a model's cell calls a real MCP server's tool. Headless, end
/// to end: `hello-tui exec` with the server configured sends a system
/// prompt listing its tools, and the cell the model writes against them
/// gets the tool's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_lists_the_tools_in_the_prompt_and_a_model_cell_calls_one() {
    let Some(entry) = server_entry() else { return };
    let workspace = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}]\n",
            entry.display().to_string()
        ),
    )
    .unwrap();
    let (result, server) = exec_one_cell(
        workspace.path(),
        home.path(),
        &config,
        "mcp.everything.get_sum(a=20, b=22)",
        "add 20 and 22",
    )
    .await;
    assert!(
        result.to_string().contains("The sum of 20 and 22 is 42."),
        "{result}"
    );
    let requests = server.requests();
    let system = requests[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        system.contains("\n- `mcp.everything.get_sum(a, b)`: Returns the sum of two numbers\n"),
        "{system}"
    );
}

/// MCP tool calls are tools for hooks too, named as Claude Code names
/// them (`mcp__<server>__<tool>`): a `PreToolUse` hook that matches the
/// server's tools refuses one call by its arguments, and a `PostToolUse`
/// hook's context for the call that went through reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_mcp_tool_calls_by_their_claude_code_names() {
    let Some(entry) = server_entry() else { return };
    let workspace = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let guard = home.path().join("guard.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\ncase \"$(cat)\" in *'\"a\":13'*) echo 'not 13' >&2; exit 2;; esac\n",
    )
    .unwrap();
    let post = home.path().join("post.sh");
    std::fs::write(
        &post,
        "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"sum checked\"}}'\n",
    )
    .unwrap();
    for script in [&guard, &post] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}]\n\
             [[hooks.PreToolUse]]\nmatcher = \"mcp__everything__.*\"\ncommand = {:?}\n\
             [[hooks.PostToolUse]]\nmatcher = \"mcp__everything__get-sum\"\ncommand = {:?}\n",
            entry.display().to_string(),
            guard.display().to_string(),
            post.display().to_string()
        ),
    )
    .unwrap();
    let (result, _server) = exec_one_cell(
        workspace.path(),
        home.path(),
        &config,
        "print(mcp.everything.get_sum(a=20, b=22))\ntry:\n    mcp.everything.get_sum(a=13, b=1)\nexcept PermissionError as e:\n    print('refused:', e)",
        "add",
    )
    .await;
    let stdout = result["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("The sum of 20 and 22 is 42."), "{result}");
    assert!(
        stdout.contains("refused:") && stdout.contains("not 13"),
        "{result}"
    );
    let hooks = result["hooks"].as_str().unwrap_or_default();
    assert!(
        hooks.contains("PostToolUse hook on mcp__everything__get-sum: sum checked"),
        "{result}"
    );
}

/// What the server writes on stderr is its log, and goes to ours.
#[tokio::test(flavor = "multi_thread")]
async fn the_servers_stderr_goes_to_the_log() {
    use std::sync::{Arc, Mutex};
    let Some(entry) = server_entry() else { return };
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // The only subscriber in this test binary; other tests' lines are fine.
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let k = launch(&entry, ApprovalMode::Auto);
    k.directory.settled(Duration::from_secs(60)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
        // server-everything announces itself on stderr at start.
        if log.contains("server=everything")
            && log.contains("stderr: Starting default (STDIO) server")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not in the log:\n{log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A streamable HTTP server (`url = …`) is reached the same way: the
/// reference server in its HTTP mode, on a free port, called from a cell.
#[tokio::test(flavor = "multi_thread")]
async fn a_streamable_http_server_is_called_like_a_stdio_one() {
    let Some(entry) = server_entry() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new("node")
        .arg(&entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server listens"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let k = launch_config(
        &format!("[[mcp.servers]]\nname = \"remote\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
        ApprovalMode::Auto,
    );
    let listing = value(
        &k,
        "s = mcp.servers()[0]\n(s.state, s.pid, 'get_sum' in s.tools)",
    )
    .await;
    assert_eq!(listing, "('running', None, True)");
    assert_eq!(
        value(&k, "mcp.remote.get_sum(a=40, b=2)").await,
        "'The sum of 40 and 2 is 42.'"
    );
    let _ = server.kill().await;
}

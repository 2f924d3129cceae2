//! `hello-tui exec`: one agent turn without a terminal UI.
//!
//! The scene comes from disk (`-C DIR --open FILE:LINE:COL --select …`),
//! the kernel runs in-process through [`CodeRuntime`], and the turn's
//! events are printed: the final answer on stdout (progress on stderr), or
//! with `--json` one JSON object per line. Exit 0 on a completed turn, 1 on
//! a model/transport error or when the sandbox cannot be prepared (then no
//! cell runs unless `--approval full`), 2 on bad usage. `--resume ID` /
//! `--continue` run the turn as one more turn of a saved session.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};
use tokio::sync::{Mutex, mpsc, watch};

use crate::agent::conversation::Conversation;
use crate::agent::prompt::budget;
use crate::agent::provider::redact::redact_known;
use crate::agent::turn::{
    AllowCells, DEFAULT_MAX_STEPS, TurnDeps, TurnEvent, TurnOutcome, TurnSnapshot,
};
use crate::agent::{self, provider::ModelProvider};
use crate::agent_session::{AgentSession, SessionStore, TurnInput};
use crate::config::GlobalOptions;
use crate::config::Settings;
use crate::context::{SharedContext, snapshot_channel};
use crate::hooks::Fired;
use crate::hooks::Hooks;
use crate::hooks::gate::{Gated, GatedSubcalls, WriteAll};
use crate::kernel::caps::{AllowAll, ApprovalPolicy, DenyAll, DirtyPaths, FsWritten, Prior};
use crate::kernel_launch::{self, KernelLaunch, McpLink, Variables};
use crate::kernel_setup;
use crate::mcp::{McpDirectory, ToolCallApproval};
use crate::sandbox::{ApprovalMode, SandboxStatus};
use crate::sanitize;
use crate::session::{SessionOrigin, VarStore, VarsPlace};
use crate::snapshot;
use crate::subcalls::{Approvals, SubcallEvent, Subcalls};
use crate::tokens::ContextWindow;

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Workspace directory to run in.
    #[arg(short = 'C', value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// File the "editor" has open: `FILE`, `FILE:LINE` or `FILE:LINE:COL`.
    #[arg(long, value_name = "FILE[:LINE[:COL]]")]
    pub open: Option<String>,
    /// Selection in the opened file: `L1:C1-L2:C2` or `L1-L2`.
    #[arg(long, value_name = "L1:C1-L2:C2", requires = "open")]
    pub select: Option<String>,
    /// Seconds to wait for the opened file's language servers and checks
    /// (their diagnostics go in the snapshot); 0 starts none.
    #[arg(long, value_name = "SECS", default_value_t = snapshot::cli::DEFAULT_DIAGNOSTICS_WAIT, value_parser = snapshot::cli::parse_wait)]
    pub diagnostics_wait: f64,
    /// Print one JSON event per line instead of the answer.
    #[arg(long)]
    pub json: bool,
    /// Model calls allowed in this turn.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: u32,
    /// Per-cell time limit in seconds (default 60).
    #[arg(long, value_name = "SECS")]
    pub cell_timeout: Option<f64>,
    /// Continue the session with this id (see `hello-tui sessions`): one
    /// more turn, appended to the same session file.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Continue the latest session of the workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,
    /// The prompt; `-` reads it from stdin.
    #[arg(value_name = "PROMPT")]
    pub prompt: String,
}

pub fn run(args: &ExecArgs, options: &GlobalOptions) -> anyhow::Result<ExitCode> {
    let usage = |message: String| {
        warn(&message);
        Ok(ExitCode::from(2))
    };
    let settings = match Settings::load(options, &|name| std::env::var(name).ok()) {
        Ok(settings) => settings,
        Err(error) => return usage(error.to_string()),
    };
    // `--approval` (a global flag) or `[safety] approval`; nobody can answer
    // a question in exec, so `ask` and no setting mean shell commands are
    // refused.
    let settings_approval = settings.approval.unwrap_or(ApprovalMode::Deny).headless();
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        if let Err(error) = std::io::stdin().read_to_string(&mut text) {
            return usage(format!("cannot read the prompt from stdin: {error}"));
        }
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return usage("the prompt is empty".into());
    }
    if let Some(secs) = args.cell_timeout
        && !(secs.is_finite() && secs > 0.0)
    {
        return usage(format!(
            "--cell-timeout must be a positive number of seconds, not {secs}"
        ));
    }
    let mut source = match snapshot::cli::scene_from_disk(
        &args.dir,
        args.open.as_deref(),
        args.select.as_deref(),
    ) {
        Ok(source) => source,
        Err(error) => return usage(error.to_string()),
    };
    let root = match std::fs::canonicalize(&args.dir) {
        Ok(root) => root,
        Err(error) => return usage(format!("{}: {error}", args.dir.display())),
    };
    let provider = match agent::setup::from_settings(&settings, &|n| std::env::var(n).ok()) {
        Ok(Some(provider)) => provider,
        Ok(None) => return usage(agent::setup::not_configured_message(&settings)),
        Err(error) => return usage(error),
    };
    // What the user would see in the TUI's diagnostics pane.
    snapshot::cli::add_diagnostics(&mut source, &settings, args.diagnostics_wait, &mut |w| {
        warn(&w)
    });
    let resume = (args.continue_session || args.resume.is_some()).then(|| args.resume.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let window = runtime.block_on(agent::setup::context_window(&settings, &|n| {
        std::env::var(n).ok()
    }));
    let job = Job {
        resume,
        window,
        root,
        settings,
        provider,
        prompt,
        source,
        json: args.json,
        max_steps: args.max_steps,
        cell_timeout: args.cell_timeout.map(Duration::from_secs_f64),
        // `--approval` is a global flag; nobody can answer a question in
        // exec, so `ask` (and no flag) means shell commands are refused.
        approval: settings_approval,
    };
    let code = runtime.block_on(job.run())?;
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(code)
}

struct Job {
    /// `Some(None)`: the latest session; `Some(Some(id))`: that one.
    resume: Option<Option<String>>,
    window: ContextWindow,
    root: PathBuf,
    settings: Settings,
    provider: Arc<dyn ModelProvider>,
    prompt: String,
    /// The scene; its snapshot is built once the window and the counter
    /// are known (its budget follows the window unless set).
    source: snapshot::source::Source,
    json: bool,
    max_steps: u32,
    cell_timeout: Option<Duration>,
    approval: ApprovalMode,
}

impl Job {
    async fn run(self) -> anyhow::Result<ExitCode> {
        let mut out = Printer {
            json: self.json,
            subcalls: None,
        };
        let context = SharedContext::default();
        let conversation = match &self.resume {
            Some(id) => match Conversation::open(
                &self.root,
                id.as_deref(),
                SessionOrigin::Exec,
                context.clone(),
            ) {
                Ok((conversation, warnings)) => {
                    for warning in warnings {
                        warn(&format!("session: {warning}"));
                    }
                    conversation
                }
                Err(error) => {
                    warn(&error);
                    return Ok(ExitCode::from(2));
                }
            },
            None => {
                let store = SessionStore {
                    workspace: self.root.clone(),
                    origin: SessionOrigin::Exec,
                };
                let session = match store.create(&self.provider.label()) {
                    Ok(session) => Some(session),
                    Err(error) => {
                        warn(&format!("the session is not saved: {error}"));
                        None
                    }
                };
                Conversation::new(context.clone(), session)
            }
        };
        let counter = match agent::setup::server_token_counter(
            &self.settings,
            &|n| std::env::var(n).ok(),
            &self.window,
        )
        .await
        {
            Some(server) => server,
            None => agent::setup::token_counter(&self.settings),
        };
        out.event(json!({
            "type": if self.resume.is_some() { "session.resumed" } else { "session.started" },
            "session_id": conversation.session_id(),
            "messages": conversation.messages().len(),
            "workspace": self.root.to_string_lossy(),
            "model": self.provider.label(),
        }));
        // The user's hooks, and the workspace's own once it is trusted
        // (exec never asks: `--trust` or `[safety] trusted_workspaces`).
        let hooks = Hooks::load(
            &self.root,
            crate::kernel_setup::child_env(&self.settings),
            &self.settings.hooks,
            crate::trust::decide_here(&self.root, self.settings.vouched()),
            &crate::trust::TrustStore::from_env(),
        );
        hooks.set_mode(self.approval);
        let (waiting, _) = hooks.waiting_for_trust();
        if !waiting.is_empty() {
            let why = if hooks.changed_since_trusted() {
                "they changed since they were approved: run the workbench and /trust to see them"
            } else {
                "the workspace is not trusted (--trust, or [safety] trusted_workspaces)"
            };
            if !self.json {
                warn(&format!(
                    "the workspace's {} hook(s) do not run: {why}",
                    waiting.len()
                ));
            }
            let commands: Vec<&str> = waiting.iter().map(|e| e.command.as_str()).collect();
            out.event(json!({ "type": "hooks.waiting", "reason": why, "commands": commands }));
        }
        hooks.set_session(
            conversation.session_id(),
            conversation
                .session_writer()
                .map(|writer| writer.path().to_path_buf()),
        );
        let (hook_tx, mut hook_rx) = mpsc::unbounded_channel();
        hooks.set_reporter(Arc::new(move |fired: &Fired| {
            let _ = hook_tx.send(fired.clone());
        }));
        hooks
            .session_started(if self.resume.is_some() {
                "resume"
            } else {
                "startup"
            })
            .await;
        while let Ok(fired) = hook_rx.try_recv() {
            out.hook(&fired);
        }
        let instructions = agent::instructions::load(&self.root, None);
        let budget = budget::for_turn(
            &self.window,
            &counter,
            &budget::system_text(&conversation, instructions.as_ref()),
            self.settings
                .snapshot_budget_set
                .then_some(self.settings.snapshot_budget),
        )
        .await;
        let snapshot = TurnSnapshot::build(&self.source, budget.chars);
        out.event(json!({
            "type": "context.window",
            "tokens": self.window.tokens,
            "source": self.window.source.to_string(),
            "reserve": self.window.reserve,
            "reserve_from": self.window.reserve_derivation(),
            "counter": counter.describe(),
        }));
        out.event(json!({
            "type": "snapshot",
            "used_chars": snapshot.used,
            "max_chars": snapshot.max,
            "budget_from": budget.derivation,
            "truncated": snapshot.truncated,
        }));
        let shell: Arc<dyn ApprovalPolicy> = match self.approval {
            ApprovalMode::Deny | ApprovalMode::Ask | ApprovalMode::Review => Arc::new(DenyAll {
                reason: "shell commands are refused in `hello-tui exec` unless it runs with \
                         --approval auto or --approval full"
                    .into(),
            }),
            ApprovalMode::Auto | ApprovalMode::Full => Arc::new(AllowAll),
        };
        let shell: Arc<dyn ApprovalPolicy> = Arc::new(Gated {
            hooks: hooks.clone(),
            inner: shell,
        });
        // Model-written code runs inside the sandbox unless `full` says not
        // to; where the sandbox cannot be prepared nothing runs (fail closed).
        let confinement = match kernel_launch::confine(
            &self.settings,
            self.approval,
            &SandboxStatus::probe(),
            &self.root,
        ) {
            Ok(confined) => confined.confinement,
            Err(error) => {
                let message = format!(
                    "{error}; refusing to run model-written code unconfined \
                     (pass --approval full to run it without the sandbox)"
                );
                if !self.json {
                    warn(&message);
                }
                out.event(json!({ "type": "error", "message": message }));
                return Ok(ExitCode::from(1));
            }
        };
        let (snapshot_tx, snapshot_rx) = snapshot_channel();
        // No editor here, so nothing is dirty; the writes are reported as
        // `files.changed` events.
        let (_no_dirty_paths, dirty) = watch::channel(DirtyPaths::default());
        let (written, mut written_rx) = mpsc::unbounded_channel();
        // Sub-calls need no question here: like the model's cells (and the
        // cells of an `rlm_query` loop), they run in every exec mode, within
        // the `[subcalls]` bounds.
        let (subcall_tx, mut subcall_rx) = mpsc::unbounded_channel();
        let subcalls = Subcalls::new(
            &self.settings,
            &self.root,
            Some(self.provider.clone()),
            // An `rlm_query` loop's cells and the sub-calls meet the hooks
            // as the agent's own do.
            Approvals {
                calls: Arc::new(GatedSubcalls {
                    hooks: hooks.clone(),
                    inner: Arc::new(AllowAll),
                }),
                cells: Arc::new(Gated::<dyn crate::agent::turn::CellApproval> {
                    hooks: hooks.clone(),
                    inner: Arc::new(AllowCells),
                }),
            },
            Some(Arc::new(move |event| {
                let _ = subcall_tx.send(event);
            })),
            &|n| std::env::var(n).ok(),
        );
        out.subcalls = Some(subcalls.clone());
        // MCP tool calls follow `--approval` as shell commands do.
        let tool_calls: Arc<dyn ToolCallApproval> = match self.approval {
            ApprovalMode::Deny | ApprovalMode::Ask | ApprovalMode::Review => Arc::new(DenyAll {
                reason: "MCP tool calls are refused in `hello-tui exec` unless it runs with \
                         --approval auto or --approval full"
                    .into(),
            }),
            ApprovalMode::Auto | ApprovalMode::Full => Arc::new(AllowAll),
        };
        let tool_calls: Arc<dyn ToolCallApproval> = Arc::new(Gated {
            hooks: hooks.clone(),
            inner: tool_calls,
        });
        let mcp = McpDirectory::default();
        // The kernel's variables are kept with the session, and a
        // continued one brings them back, as in the workbench.
        let keep = self.settings.keep_variables.and_then(|limits| {
            let place = VarsPlace {
                workspace: self.root.clone(),
                session: conversation.session_id()?.to_owned(),
            };
            let store = VarStore::new(limits.within_a_frame());
            if self.resume.is_some() {
                store.resume_from(place);
            } else {
                store.keep_in(place);
            }
            Some(store)
        });
        let (kernel, _kernel_events) = KernelLaunch {
            settings: &self.settings,
            root: &self.root,
            confinement: &confinement,
            shell_policy: shell,
            fs_links: Some(&kernel_setup::FsLinks {
                dirty,
                written,
                // Nobody is shown a diff here; the hooks see each write.
                review: Some(Arc::new(Gated {
                    hooks: hooks.clone(),
                    inner: Arc::new(WriteAll),
                })),
            }),
            context: Some(&(context.clone(), snapshot_rx)),
            subcalls: Some(&subcalls),
            mcp: Some(McpLink {
                approval: tool_calls,
                directory: &mcp,
            }),
            variables: Variables::NotShown,
            keep: keep.as_ref(),
        }
        .start()?;
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let session = AgentSession {
            deps: TurnDeps {
                provider: self.provider.clone(),
                runner: Arc::new(kernel.clone()),
                approval: Arc::new(Gated::<dyn crate::agent::turn::CellApproval> {
                    hooks: hooks.clone(),
                    inner: Arc::new(AllowCells),
                }),
                snapshot_tx,
                max_steps: self.max_steps,
                cell_timeout: self.cell_timeout,
                window: self.window.clone(),
                hooks,
            },
            counter: Some(counter),
            subcalls: Some(subcalls),
            mcp: Some(mcp),
            // Made above (the first event names it), or resumed.
            store: None,
        };
        let input = TurnInput {
            prompt: self.prompt.clone(),
            snapshot: Some(snapshot),
            instructions,
            // exec's turns go to the configured model (flags included),
            // never to a profile the session's workbench turns chose:
            // recorded as such, a later `--continue` does not go back to
            // that profile's server.
            profile: None,
        };
        let (cancel_tx, cancel_rx) = watch::channel(false);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = cancel_tx.send(true);
            }
        });
        let (tx, mut rx) = mpsc::unbounded_channel();
        let conversation = Mutex::new(conversation);
        let turn = async move {
            let end = session
                .run_turn(&conversation, input, &tx, cancel_rx, &|_| {})
                .await;
            if let Some(error) = end.session_error {
                warn(&error);
            }
            end.outcome
        };
        let print = async {
            let mut answer = String::new();
            loop {
                // A write is announced during its cell, before the cell's
                // result: it is printed first.
                tokio::select! {
                    biased;
                    Some(change) = written_rx.recv() => out.file_changed(&root, &change),
                    Some(subcall) = subcall_rx.recv() => out.subcall(&subcall),
                    Some(fired) = hook_rx.recv() => out.hook(&fired),
                    event = rx.recv() => match event {
                        Some(event) => out.turn_event(&event, &mut answer),
                        None => break,
                    },
                }
            }
            while let Ok(change) = written_rx.try_recv() {
                out.file_changed(&root, &change);
            }
            while let Ok(subcall) = subcall_rx.try_recv() {
                out.subcall(&subcall);
            }
            while let Ok(fired) = hook_rx.try_recv() {
                out.hook(&fired);
            }
            answer
        };
        let (outcome, answer) = tokio::join!(turn, print);
        // Shutting down waits for the last cell's save; then it goes to disk.
        kernel.shutdown().await;
        if let Some(store) = &keep
            && !store.flush(std::time::Duration::from_secs(5))
        {
            warn("the kernel's variables may not all be kept: writing them took too long");
        }
        Ok(match outcome {
            TurnOutcome::Completed { .. } => {
                if !self.json {
                    println!("{}", for_terminal(answer.trim_end()));
                }
                ExitCode::SUCCESS
            }
            TurnOutcome::Failed(_) | TurnOutcome::Cancelled => ExitCode::from(1),
        })
    }
}

/// Text for the user's terminal or a CI log: a model's answer, a cell's
/// code, a server's error, a workspace's file name. Sanitized (no escape
/// sequence sets the title or the clipboard, no bidi override reorders the
/// line), then redacted as the session file is.
fn for_terminal(text: &str) -> String {
    redact_known(&sanitize::for_display(text))
}

/// `hello-tui exec: MESSAGE` on stderr, through [`for_terminal`].
fn warn(message: &str) {
    eprintln!("{}", for_terminal(&format!("hello-tui exec: {message}")));
}

struct Printer {
    json: bool,
    /// What the turn's `llm_query` calls used, for `turn.completed`.
    subcalls: Option<Subcalls>,
}

impl Printer {
    /// `files.changed`: a file a cell wrote (`fs.write`/`fs.edit`), with
    /// its line counts and unified diff.
    fn file_changed(&mut self, root: &std::path::Path, change: &FsWritten) {
        let path = change.path.strip_prefix(root).unwrap_or(&change.path);
        let name = path.display().to_string();
        let after = String::from_utf8_lossy(&change.after);
        let before = match &change.before {
            Prior::Bytes(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
            Prior::Absent => Some(String::new()),
            Prior::Unrecorded => None,
        };
        let (added, removed, diff) = match &before {
            Some(before) => {
                let (added, removed) = crate::text_diff::counts_or_rewrite(before, &after);
                let diff = crate::text_diff::small_enough(before, &after)
                    .then(|| crate::text_diff::unified(before, &after, Some(&name), 3));
                (added, removed, diff)
            }
            None => (after.lines().count(), 0, None),
        };
        self.event(json!({
            "type": "files.changed",
            "path": name,
            "created": change.before == Prior::Absent,
            "added": added,
            "removed": removed,
            "diff": diff,
        }));
    }

    /// `subcall.started` / `subcall.completed`: an `llm_query` of a cell.
    fn subcall(&mut self, event: &SubcallEvent) {
        if let SubcallEvent::Completed(done) = event
            && !self.json
        {
            eprintln!(
                "{}",
                for_terminal(&format!(
                    "[sub-call {}] {} · {} tok · {} ms",
                    done.id,
                    done.status.label(),
                    done.tokens(),
                    done.elapsed_ms
                ))
            );
        }
        self.event(serde_json::to_value(event).unwrap_or(Value::Null));
    }

    /// `hook`: a hook that refused, asked, added context or failed (a
    /// silent success is not told).
    fn hook(&mut self, fired: &Fired) {
        if !self.json {
            eprintln!("{}", for_terminal(&fired.summary()));
        }
        let answer = &fired.answer;
        self.event(json!({
            "type": "hook",
            "event": fired.event.name(),
            "command": fired.command,
            "origin": fired.origin.to_string(),
            "target": fired.target,
            "ms": fired.took.as_millis() as u64,
            "blocked": answer.block,
            "permission": answer.permission.map(|p| match p {
                crate::hooks::Permission::Allow => "allow",
                crate::hooks::Permission::Deny => "deny",
                crate::hooks::Permission::Ask => "ask",
            }),
            "stop": answer.stop,
            "failed": answer.failed,
            "context": answer.context,
            "message": answer.message,
        }));
    }

    /// One JSON event on stdout, redacted as the session file is (a key a
    /// cell printed stays out of CI logs too), with what a terminal would
    /// obey escaped (the values are unchanged for a JSON reader).
    fn event(&mut self, value: Value) {
        if self.json {
            let line = redact_known(&sanitize::json_text(value.to_string()));
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
            let _ = stdout.flush();
        }
    }

    /// Prints one turn event; `answer` collects the last assistant message.
    fn turn_event(&mut self, event: &TurnEvent, answer: &mut String) {
        let progress = |line: String| {
            if !self.json {
                eprintln!("{}", for_terminal(&line));
            }
        };
        match event {
            TurnEvent::AssistantMessage { text, .. } => {
                answer.clone_from(text);
                self.event(json!({ "type": "assistant.message", "text": text }));
            }
            TurnEvent::ToolCall { id, code } => {
                progress(format!("[cell {id}] {}", code.lines().next().unwrap_or("")));
                self.event(
                    json!({ "type": "tool.call", "id": id, "name": "code_action", "code": code }),
                );
            }
            TurnEvent::ToolRejected { id, reason } => {
                progress(format!("[cell {id}] not run: {reason}"));
                self.event(json!({ "type": "tool.call", "id": id, "name": "code_action", "code": null, "rejected": reason }));
            }
            TurnEvent::ToolResult { id, result, .. } => {
                let mut event = json!({ "type": "tool.result", "id": id });
                if let (Some(map), Some(fields)) = (event.as_object_mut(), result.as_object()) {
                    map.extend(fields.clone());
                }
                self.event(event);
            }
            TurnEvent::Retrying {
                attempt,
                max_attempts,
                wait,
                reason,
            } => {
                progress(format!(
                    "retrying ({attempt}/{max_attempts}) in {:.1}s: {reason}",
                    wait.as_secs_f64()
                ));
                self.event(json!({ "type": "retry", "attempt": attempt, "max_attempts": max_attempts, "wait_ms": wait.as_millis() as u64, "reason": reason }));
            }
            TurnEvent::Completed {
                steps,
                usage,
                max_steps_reached,
            } => {
                if *max_steps_reached {
                    progress(format!("stopped after {steps} steps (--max-steps)"));
                }
                let (calls, tokens) = self.subcalls.as_ref().map_or((0, 0), Subcalls::used);
                let subcalls = json!({ "calls": calls, "tokens": tokens });
                self.event(json!({ "type": "turn.completed", "steps": steps, "usage": usage, "max_steps_reached": max_steps_reached, "subcalls": subcalls }));
            }
            TurnEvent::Failed { message } => {
                if !self.json {
                    warn(message);
                }
                self.event(json!({ "type": "error", "message": message }));
            }
            TurnEvent::Cancelled => {
                progress("cancelled".into());
                self.event(json!({ "type": "error", "message": "cancelled by the user" }));
            }
            TurnEvent::Prompt {
                tokens,
                window,
                omitted,
            } => {
                self.event(json!({ "type": "prompt", "tokens": tokens, "window": window, "omitted": omitted }));
            }
            TurnEvent::Compacted(crate::agent::prompt::compact::Compacted {
                through,
                by_model,
                tokens,
                fallback_reason,
            }) => {
                progress(format!(
                    "compacted the first {through} messages into a {tokens}-token summary{}",
                    fallback_reason
                        .as_ref()
                        .map_or_else(String::new, |why| format!(" (extractive: {why})"))
                ));
                self.event(json!({ "type": "compacted", "through": through, "by_model": by_model, "tokens": tokens, "fallback_reason": fallback_reason }));
            }
            TurnEvent::ContextOverflow { message, window } => {
                progress(message.clone());
                self.event(json!({ "type": "context.overflow", "message": message, "window": window.tokens, "reserve": window.reserve, "source": window.source.to_string() }));
            }
            TurnEvent::ToolCallAsText => {
                progress(format!(
                    "the model wrote its tool call as text; it runs as code_action ({})",
                    crate::agent::text_tool_call::HINT
                ));
                self.event(json!({ "type": "tool.call.as_text", "hint": crate::agent::text_tool_call::HINT }));
            }
            TurnEvent::PromptBlocked { reason } => {
                if !self.json {
                    warn(&format!(
                        "a UserPromptSubmit hook held the prompt back: {reason}"
                    ));
                }
                self.event(json!({ "type": "prompt.blocked", "reason": reason }));
            }
            TurnEvent::SentOn { reason } => {
                progress(format!("a Stop hook sent the model on: {reason}"));
                self.event(json!({ "type": "turn.sent_on", "reason": reason }));
            }
            TurnEvent::HookStopped { reason } => {
                progress(format!("a hook ended the turn: {reason}"));
                self.event(json!({ "type": "turn.stopped_by_hook", "reason": reason }));
            }
            TurnEvent::CompactionHeld { reason } => {
                progress(format!(
                    "a PreCompact hook held the compaction back: {reason}"
                ));
                self.event(json!({ "type": "compaction.held", "reason": reason }));
            }
            TurnEvent::OutputLimit => {
                progress("the answer was cut: the model reached its output limit".into());
                self.event(json!({ "type": "answer.cut", "reason": "length" }));
            }
            TurnEvent::Snapshot { .. }
            | TurnEvent::UserMessage { .. }
            | TurnEvent::Step(_)
            | TurnEvent::TextDelta(_)
            | TurnEvent::ReasoningDelta(_)
            | TurnEvent::Usage(_) => {}
        }
    }
}

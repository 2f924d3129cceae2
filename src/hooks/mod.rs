//! Hooks: the user's own programs, run at fixed points of a session with
//! the event as JSON on stdin, in the format Claude Code made the standard
//! (Codex and Crush run the same hooks). A hook can refuse a tool (exit 2,
//! or a JSON `deny`), let it through without a question (`allow`), ask
//! even in `auto` (`ask`), hold back a prompt, send the model on after its
//! final answer, and add context the model reads.
//!
//! [`Hooks`] is a cheap clonable handle shared by the front end (which
//! reports what fired and lists it in `/hooks`), the approvals (which run
//! `PreToolUse` before anything model-written runs) and the turn loop
//! (`UserPromptSubmit`, `PostToolUse` of a cell, `Stop`, `PreCompact`).
//! With nothing configured every call returns at once.
//!
//! Hooks run as the user's programs, outside the sandbox (they are the
//! user's policy, and may need to reach what the kernel may not), with
//! the kernel's environment allowlist (no API keys), in the workspace, in
//! a process group killed at the hook's timeout. A workspace's own hooks
//! (`.claude/settings.json`) join only once the workspace is trusted.

pub mod answer;
pub mod config;
pub mod event;
pub mod gate;
pub mod matcher;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

pub use answer::{Answer, Permission, Ran};
pub use config::{HookEntry, HooksConfig, Origin, WorkspaceHooks};
pub use event::{HookEvent, ToolUse};
pub use matcher::Matcher;

use crate::process_group::{self, Limits, RunError};
use crate::sandbox::ChildEnv;

/// How many fired hooks `/hooks` remembers.
const FIRED_KEPT: usize = 50;

/// Bytes of a hook's stdout and stderr kept (head and tail each).
const OUTPUT_KEPT: usize = 32 * 1024;

/// One hook that ran, and what it said.
#[derive(Debug, Clone, PartialEq)]
pub struct Fired {
    pub event: HookEvent,
    pub command: String,
    pub origin: Origin,
    /// The tool (or source, trigger) it ran for.
    pub target: Option<String>,
    pub took: Duration,
    pub answer: Answer,
}

impl Fired {
    /// One line for the transcript and `/hooks`.
    pub fn summary(&self) -> String {
        let what = match &self.target {
            Some(target) => format!("{} hook for {target}", self.event),
            None => format!("{} hook", self.event),
        };
        let said = said(&self.answer);
        format!(
            "{what} `{}` ({}, {} ms): {said}",
            crate::sanitize::for_display(&self.command),
            self.origin,
            self.took.as_millis()
        )
    }

    /// Whether the user should hear of it (anything but a silent success).
    pub fn is_notable(&self) -> bool {
        self.answer != Answer::default()
    }
}

fn said(answer: &Answer) -> String {
    let show = |text: &str| crate::sanitize::for_display(text).into_owned();
    let mut parts = Vec::new();
    if let Some(why) = &answer.failed {
        parts.push(format!("failed: {}", show(why)));
    }
    if let Some(reason) = &answer.block {
        parts.push(format!("blocked: {}", show(reason)));
    }
    match answer.permission {
        Some(Permission::Allow) => parts.push("allowed".to_owned()),
        Some(Permission::Ask) => parts.push(match &answer.reason {
            Some(reason) => format!("asks you: {}", show(reason)),
            None => "asks you".to_owned(),
        }),
        Some(Permission::Deny) | None => {}
    }
    if let Some(context) = &answer.context {
        parts.push(format!(
            "added {} characters of context",
            context.chars().count()
        ));
    }
    if let Some(message) = &answer.message {
        parts.push(show(message));
    }
    if let Some(reason) = &answer.stop {
        parts.push(format!("ends the turn: {}", show(reason)));
    }
    if parts.is_empty() {
        "ok".to_owned()
    } else {
        parts.join("; ")
    }
}

/// What `PreToolUse` decided about one tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// No hook had an opinion: the approval mode decides.
    Proceed,
    /// A hook allowed it: no question (the `deny` mode still refuses).
    Allow,
    /// Ask the user, whatever the mode, saying why.
    Ask(String),
    /// Refused; the reason reaches the model.
    Deny(String),
}

/// What `UserPromptSubmit` decided about a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptGate {
    /// Held back; the reason is for the user.
    Blocked(String),
    /// Sent, with the context hooks added (`None`: nothing).
    Go(Option<String>),
}

/// Where reports of notable hooks go (the transcript, `exec`'s events).
pub type Reporter = Arc<dyn Fn(&Fired) + Send + Sync>;

#[derive(Default)]
struct Session {
    id: Option<String>,
    transcript: Option<PathBuf>,
    mode: &'static str,
}

struct Inner {
    root: PathBuf,
    env: ChildEnv,
    user: Vec<HookEntry>,
    workspace: Mutex<WorkspaceState>,
    session: Mutex<Session>,
    fired: Mutex<VecDeque<Fired>>,
    /// Context for the next prompt (`SessionStart`).
    for_prompt: Mutex<Vec<String>>,
    /// Context and refusals for the model, from hooks of tools a cell used:
    /// they go with that cell's result.
    for_result: Mutex<Vec<String>>,
    report: Mutex<Option<Reporter>>,
    /// A hook answered `"continue": false`: the turn ends (the reason).
    stop: Mutex<Option<String>>,
}

#[derive(Default)]
struct WorkspaceState {
    found: WorkspaceHooks,
    trusted: bool,
    /// Trusted, but its hooks changed since the answer: they wait.
    changed: bool,
}

/// The hooks of a session: see the module's docs.
#[derive(Clone)]
pub struct Hooks {
    inner: Arc<Inner>,
}

impl Default for Hooks {
    /// No hooks: every event passes at once.
    fn default() -> Self {
        Hooks::new(Path::new("."), ChildEnv::default(), Vec::new())
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("configured", &self.configured().len())
            .finish_non_exhaustive()
    }
}

/// Locks a mutex whose holder may have panicked: the data is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hooks {
    /// Hooks for the workspace at `root`, run with `env`: the user's own
    /// `entries` (their config file).
    pub fn new(root: &Path, env: ChildEnv, mut entries: Vec<HookEntry>) -> Self {
        for entry in &mut entries {
            entry.pin(root);
        }
        Hooks {
            inner: Arc::new(Inner {
                root: root.to_path_buf(),
                env,
                user: entries,
                workspace: Mutex::default(),
                session: Mutex::new(Session {
                    mode: "ask",
                    ..Session::default()
                }),
                fired: Mutex::default(),
                for_prompt: Mutex::default(),
                for_result: Mutex::default(),
                report: Mutex::default(),
                stop: Mutex::default(),
            }),
        }
    }

    /// The hooks `config` (the user's `[[hooks.…]]`) sets for `root`, with
    /// the workspace's own read; `env` is what a hook's environment is
    /// (the kernel's allowlist: no API key; `kernel_setup::child_env`). Those run when the workspace is trusted by `--trust` or
    /// `[safety] trusted_workspaces`, or trusted by an answer that saw
    /// exactly these hooks (`store`); otherwise they wait for
    /// [`Hooks::set_trusted`].
    pub fn load(
        root: &Path,
        env: ChildEnv,
        config: &HooksConfig,
        trust: crate::trust::Trust,
        store: &crate::trust::TrustStore,
    ) -> Self {
        use crate::trust::{Trust, Why};
        let hooks = Hooks::new(root, env, config.entries());
        let found = config::workspace_hooks(root);
        let now: Vec<String> = found.entries.iter().map(HookEntry::identity).collect();
        let approved = store.approved_hooks(root);
        let trusted = match trust {
            // The flag and the setting vouch for the workspace as it is
            // the first time they are used; what changes after that (a
            // cell can write the workspace) waits for the question.
            Trust::Trusted(Why::Flag | Why::Setting) => match approved {
                None => {
                    let _ = store.approve_hooks(root, now.clone());
                    true
                }
                Some(then) => now.is_empty() || then == now,
            },
            Trust::Trusted(Why::Remembered) => {
                now.is_empty() || approved.is_some_and(|then| then == now)
            }
            Trust::Refused | Trust::Unknown => false,
        };
        let mut workspace = lock(&hooks.inner.workspace);
        workspace.changed = trust.is_trusted() && !trusted;
        workspace.found = found;
        workspace.trusted = trusted;
        drop(workspace);
        hooks
    }

    /// The user answered the trust question, which listed `shown` (read
    /// once, for the question): yes runs exactly those from now on; no
    /// stops the workspace's hooks.
    pub fn set_trusted(&self, trusted: bool, shown: WorkspaceHooks) {
        let mut workspace = lock(&self.inner.workspace);
        if trusted {
            workspace.found = shown;
        }
        workspace.trusted = trusted;
        workspace.changed = false;
    }

    /// A hook answered `"continue": false` since the last call: the turn
    /// ends, for this reason.
    pub fn take_stop(&self) -> Option<String> {
        lock(&self.inner.stop).take()
    }

    /// The workspace's own hooks as the user approves them.
    pub fn workspace_identities(&self) -> Vec<String> {
        lock(&self.inner.workspace)
            .found
            .entries
            .iter()
            .map(HookEntry::identity)
            .collect()
    }

    /// Whether the workspace is trusted but its hooks are not the ones the
    /// user saw when they said so.
    pub fn changed_since_trusted(&self) -> bool {
        lock(&self.inner.workspace).changed
    }

    pub fn set_reporter(&self, report: Reporter) {
        *lock(&self.inner.report) = Some(report);
    }

    /// The session hooks are told about (`session_id`, `transcript_path`).
    pub fn set_session(&self, id: Option<&str>, transcript: Option<PathBuf>) {
        let mut session = lock(&self.inner.session);
        session.id = id.map(str::to_owned);
        session.transcript = transcript;
    }

    /// The approval mode, sent as `permission_mode`.
    pub fn set_mode(&self, mode: crate::sandbox::ApprovalMode) {
        lock(&self.inner.session).mode = mode.as_str();
    }

    /// Every hook that runs now, in the order they were configured.
    pub fn configured(&self) -> Vec<HookEntry> {
        let workspace = lock(&self.inner.workspace);
        let mut all = self.inner.user.clone();
        if workspace.trusted {
            all.extend(workspace.found.entries.iter().cloned());
        }
        all
    }

    /// The workspace's hooks that wait for trust (listed before the user
    /// trusts it), and what of its settings cannot run at all.
    pub fn waiting_for_trust(&self) -> (Vec<HookEntry>, Vec<String>) {
        let workspace = lock(&self.inner.workspace);
        let waiting = if workspace.trusted {
            Vec::new()
        } else {
            workspace.found.entries.clone()
        };
        (waiting, workspace.found.skipped.clone())
    }

    /// The hooks that ran, oldest first (the last [`FIRED_KEPT`]).
    pub fn fired(&self) -> Vec<Fired> {
        lock(&self.inner.fired).iter().cloned().collect()
    }

    /// Runs `PreToolUse` for the tool `tool` makes (made only when a hook
    /// of the event is configured: a write's diff is not computed for
    /// nothing). Refusals win over questions, questions over allows; a
    /// hook that failed asks the user rather than letting the tool run
    /// unchecked.
    pub async fn pre_tool_use(&self, tool: impl FnOnce() -> ToolUse) -> Gate {
        if !self.wants(HookEvent::PreToolUse) {
            return Gate::Proceed;
        }
        let tool = tool();
        let answers = self
            .fire(
                HookEvent::PreToolUse,
                Some(&tool.name),
                json!({ "tool_name": tool.name, "tool_input": tool.input }),
            )
            .await;
        self.keep_for_result(&answers, false);
        let mut denied = Vec::new();
        let mut asked = Vec::new();
        let mut allowed = false;
        for (fired, answer) in &answers {
            if let Some(reason) = answer.block.as_ref().or(answer.stop.as_ref()) {
                denied.push(reason.clone());
            } else if let Some(why) = &answer.failed {
                asked.push(format!(
                    "the hook `{}` failed ({why})",
                    crate::sanitize::for_display(&fired.command)
                ));
            } else if answer.permission == Some(Permission::Ask) {
                asked.push(
                    answer
                        .reason
                        .clone()
                        .unwrap_or_else(|| "a hook asks for your approval".to_owned()),
                );
            } else if answer.permission == Some(Permission::Allow) {
                allowed = true;
            }
        }
        if !denied.is_empty() {
            Gate::Deny(format!("a hook refused it: {}", denied.join("; ")))
        } else if !asked.is_empty() {
            Gate::Ask(asked.join("; "))
        } else if allowed {
            Gate::Allow
        } else {
            Gate::Proceed
        }
    }

    /// Runs `PostToolUse` for `tool`, which answered `response`: what the
    /// hooks say for the model waits for [`Hooks::take_for_result`].
    pub async fn post_tool_use(&self, tool: &ToolUse, response: &Value) {
        let answers = self
            .fire(
                HookEvent::PostToolUse,
                Some(&tool.name),
                json!({
                    "tool_name": tool.name,
                    "tool_input": tool.input,
                    "tool_response": response,
                }),
            )
            .await;
        self.keep_for_result(&answers, true);
    }

    /// What hooks said for the model since the last call: it goes with the
    /// result of the cell that ran the tools. `None` when nothing.
    pub fn take_for_result(&self) -> Option<String> {
        let notes = std::mem::take(&mut *lock(&self.inner.for_result));
        (!notes.is_empty()).then(|| notes.join("\n"))
    }

    fn keep_for_result(&self, answers: &[(Fired, Answer)], blocks_too: bool) {
        let mut notes = lock(&self.inner.for_result);
        for (fired, answer) in answers {
            let target = fired.target.as_deref().unwrap_or("the tool");
            if blocks_too && let Some(reason) = &answer.block {
                notes.push(format!("{} hook on {target}: {reason}", fired.event));
            }
            if let Some(context) = &answer.context {
                notes.push(format!("{} hook on {target}: {context}", fired.event));
            }
        }
    }

    /// Runs `UserPromptSubmit` for `prompt`. The context of this session's
    /// `SessionStart` hooks (not yet sent) comes first.
    pub async fn prompt_submitted(&self, prompt: &str) -> PromptGate {
        // A stop asked for in an earlier turn is not this one's.
        self.take_stop();
        let answers = self
            .fire(
                HookEvent::UserPromptSubmit,
                None,
                json!({ "prompt": prompt }),
            )
            .await;
        let blocked: Vec<&str> = answers
            .iter()
            .filter_map(|(_, a)| a.block.as_deref().or(a.stop.as_deref()))
            .collect();
        if !blocked.is_empty() {
            self.take_stop();
            return PromptGate::Blocked(blocked.join("; "));
        }
        let mut context = std::mem::take(&mut *lock(&self.inner.for_prompt));
        context.extend(answers.into_iter().filter_map(|(_, a)| a.context));
        PromptGate::Go((!context.is_empty()).then(|| context.join("\n\n")))
    }

    /// What `SessionStart` hooks said that the next prompt will carry
    /// (F2 shows it before Enter).
    pub fn pending_context(&self) -> Option<String> {
        let pending = lock(&self.inner.for_prompt);
        (!pending.is_empty()).then(|| pending.join("\n\n"))
    }

    /// Runs `SessionStart` (`source`: `startup`, `resume`, `clear`,
    /// `compact`); what it adds goes with the next prompt.
    pub async fn session_started(&self, source: &str) {
        let answers = self
            .fire(
                HookEvent::SessionStart,
                Some(source),
                json!({ "source": source }),
            )
            .await;
        lock(&self.inner.for_prompt).extend(answers.into_iter().filter_map(|(_, a)| a.context));
    }

    /// Runs `Stop` after the model's final answer: `Some(reason)` sends it
    /// on with the reason. `active` is true when a `Stop` hook already sent
    /// this turn on (a hook that checks it avoids looping).
    pub async fn stopping(&self, active: bool, last_message: &str) -> Option<String> {
        let answers = self
            .fire(
                HookEvent::Stop,
                None,
                json!({ "stop_hook_active": active, "last_assistant_message": last_message }),
            )
            .await;
        // `"continue": false` is the stronger word: the turn ends.
        if answers.iter().any(|(_, a)| a.stop.is_some()) {
            self.take_stop();
            return None;
        }
        let reasons: Vec<String> = answers.into_iter().filter_map(|(_, a)| a.block).collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// Runs `PreCompact` (`trigger`: `auto` or `manual`): `Some(reason)`
    /// holds the compaction back.
    pub async fn compacting(&self, trigger: &str, instructions: Option<&str>) -> Option<String> {
        let answers = self
            .fire(
                HookEvent::PreCompact,
                Some(trigger),
                json!({ "trigger": trigger, "custom_instructions": instructions.unwrap_or("") }),
            )
            .await;
        let reasons: Vec<String> = answers.into_iter().filter_map(|(_, a)| a.block).collect();
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// Runs `Notification` in the background (an approval waits): it never
    /// delays the question.
    pub fn notify(&self, message: String) {
        if !self.wants(HookEvent::Notification) {
            return;
        }
        let hooks = self.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                hooks
                    .fire(
                        HookEvent::Notification,
                        Some("permission_prompt"),
                        json!({ "message": message, "notification_type": "permission_prompt" }),
                    )
                    .await;
            });
        }
    }

    /// Whether a hook of `event` is configured (callers skip building what
    /// only a hook would read).
    pub fn wants(&self, event: HookEvent) -> bool {
        self.configured().iter().any(|entry| entry.event == event)
    }

    /// Runs every hook of `event` whose matcher takes `target` (all of
    /// them at once, a command configured twice once), records and reports
    /// each, and returns what each said.
    async fn fire(
        &self,
        event: HookEvent,
        target: Option<&str>,
        fields: Value,
    ) -> Vec<(Fired, Answer)> {
        let mut entries: Vec<HookEntry> = Vec::new();
        for entry in self.configured() {
            let matches = target.is_none_or(|t| entry.matcher.matches(t));
            if entry.event == event
                && matches
                && !entries.iter().any(|e| e.command == entry.command)
            {
                entries.push(entry);
            }
        }
        if entries.is_empty() {
            return Vec::new();
        }
        let input = self.input(event, fields);
        let runs = entries.into_iter().map(|entry| {
            let input = input.clone();
            async move {
                let started = Instant::now();
                let ran = self.run(&entry, input).await;
                let answer = Answer::read(event, ran);
                let fired = Fired {
                    event,
                    command: entry.command,
                    origin: entry.origin,
                    target: target.map(str::to_owned),
                    took: started.elapsed(),
                    answer: answer.clone(),
                };
                (fired, answer)
            }
        });
        let answers = futures_util::future::join_all(runs).await;
        if let Some(reason) = answers.iter().find_map(|(_, a)| a.stop.clone()) {
            lock(&self.inner.stop).get_or_insert(reason);
        }
        let report = lock(&self.inner.report).clone();
        let mut fired = lock(&self.inner.fired);
        for (one, _) in &answers {
            if fired.len() == FIRED_KEPT {
                fired.pop_front();
            }
            fired.push_back(one.clone());
            if one.is_notable()
                && let Some(report) = &report
            {
                report(one);
            }
        }
        answers
    }

    /// The JSON a hook reads: the fields every event has, then `fields`.
    fn input(&self, event: HookEvent, fields: Value) -> Vec<u8> {
        let session = lock(&self.inner.session);
        let mut input = Map::new();
        input.insert(
            "session_id".into(),
            json!(session.id.as_deref().unwrap_or("")),
        );
        input.insert(
            "transcript_path".into(),
            json!(
                session
                    .transcript
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
        );
        input.insert("cwd".into(), json!(self.inner.root.to_string_lossy()));
        input.insert("hook_event_name".into(), json!(event.name()));
        input.insert("permission_mode".into(), json!(session.mode));
        if let Value::Object(fields) = fields {
            input.extend(fields);
        }
        serde_json::to_vec(&Value::Object(input)).unwrap_or_default()
    }

    async fn run(&self, entry: &HookEntry, input: Vec<u8>) -> Ran {
        if let Some(path) = entry.changed_file() {
            return Ran::Failed(format!(
                "{} changed since the hook was read (a cell can write the workspace), so it \
                 was not run",
                crate::sanitize::for_display(&path.to_string_lossy())
            ));
        }
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(&entry.command)
            .current_dir(&self.inner.root);
        self.inner.env.apply(command.as_std_mut());
        command
            .env("CLAUDE_PROJECT_DIR", &self.inner.root)
            .env("HELLO_TUI_PROJECT_DIR", &self.inner.root);
        let limits = Limits {
            timeout: entry.timeout,
            head: OUTPUT_KEPT,
            tail: OUTPUT_KEPT,
        };
        let ended = process_group::AfterExit::EndGroup;
        match process_group::run_with_input(command, Some(input), limits, ended).await {
            Ok(done) if !done.complete => Ran::Failed(
                "left a process holding its output open, so its answer may be cut; \
                 it was not taken"
                    .to_owned(),
            ),
            Ok(done) => match done.status.code() {
                Some(code) => Ran::Exited {
                    code,
                    stdout: done.stdout,
                    stderr: done.stderr,
                },
                None => Ran::Failed(format!("ended by a signal ({})", done.status)),
            },
            Err(RunError::TimedOut(after)) => Ran::Failed(format!(
                "took longer than its timeout of {} s and was killed",
                after.as_secs()
            )),
            Err(error) => Ran::Failed(error.to_string()),
        }
    }
}

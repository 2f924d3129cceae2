//! The agent in the workbench: sending a prompt starts a turn task
//! (an [`AgentSession`](crate::agent_session::AgentSession) turn) whose events come back as
//! `AppEvent::Agent`; this module applies them to the conversation pane and
//! the status bar. Cells run through the kernel service (`KernelClient`), so
//! the model's code shows up as cells with streamed output, and Esc (or
//! Ctrl+C with no cell running) cancels.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{Mutex, mpsc, watch};

use crate::agent::conversation::{Conversation, shown_prompt};
use crate::agent::prompt::budget;
use crate::agent::provider::{ModelProvider, Usage};
use crate::agent::setup;
use crate::agent::tool_result;
use crate::agent::turn::{
    AllowCells, CellApproval, CodeRunner, DEFAULT_MAX_STEPS, RunningCell, TurnDeps, TurnEvent,
    TurnSnapshot,
};
use crate::agent_session::{AgentSession, SessionNote, SessionStore, TurnInput};
use crate::context::{PublishedSnapshot, SharedContext, snapshot_channel};
use crate::kernel::{ExecOutcome, ExecResult, RuntimeState};
use crate::tokens::{ContextWindow, TokenCounter};
use crate::workbench::Workbench;
use crate::workbench::event::{AppEvent, AppEventSender};
use crate::workbench::kernel::{CellOrigin, KernelClient};
use crate::workbench::transcript::{CellChange, CellStatus, PaneEntry, Speaker};

/// Spinner frames for the status bar while a turn runs.
pub(crate) const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// How often the spinner advances (frames are scheduled only while busy).
pub(crate) const SPINNER_INTERVAL: Duration = Duration::from_millis(100);

/// What the turn task tells the loop.
#[derive(Debug)]
pub enum AgentUpdate {
    Turn(TurnEvent),
    Notice(String),
    /// The conversation got its session (at its first prompt): what is
    /// kept with the session (the change log) starts saving under `id`.
    SessionStarted(String),
    /// The turn task ended (whatever happened).
    Finished,
}

/// The agent's part of `AppState`.
pub struct AgentState {
    provider: Option<Arc<dyn ModelProvider>>,
    /// Shared with the kernel's `context` capability and the search pane.
    pub context: SharedContext,
    snapshot_tx: watch::Sender<Option<PublishedSnapshot>>,
    conversation: Arc<Mutex<Conversation>>,
    /// Set by the event loop: where the turn task sends its updates.
    pub events: Option<AppEventSender>,
    /// Asked before each of the model's cells. Defaults to allowing (`auto`);
    /// the approval overlay (`app::approvals`) plugs in here.
    pub approval: Arc<dyn CellApproval>,
    /// The user's hooks (`workbench::hooks` sets them up); each turn gets
    /// them.
    pub hooks: crate::hooks::Hooks,
    pub max_steps: u32,
    pub cell_timeout: Option<Duration>,
    cancel: Option<watch::Sender<bool>>,
    pub busy: bool,
    pub step: u32,
    pub usage: Usage,
    /// Tokens this turn's `llm_query` sub-calls used (the status bar adds
    /// them to the model's own).
    pub subcall_tokens: u64,
    /// The kernel's `llm` capability: a new turn resets its allowances,
    /// and the turn's session records its calls.
    pub subcalls: Option<crate::subcalls::Subcalls>,
    pub retry: Option<String>,
    /// The model's window, asked of the server once, at the first turn.
    window: Arc<tokio::sync::OnceCell<ContextWindow>>,
    /// The model's token counter, made once off the UI loop: loading a BPE
    /// vocabulary takes around a second.
    counter: Arc<std::sync::OnceLock<Arc<TokenCounter>>>,
    /// The snapshot budget the scene is built with and how it was chosen
    /// (F2 shows it); follows the window unless the user set one.
    pub(crate) snapshot_budget: Option<budget::SnapshotBudget>,
    /// Tokens of the last request and the window (the status-bar gauge).
    pub context_used: Option<(usize, usize)>,
    pub spinner: usize,
    /// The conversation entry the model's text is streaming into.
    streaming: Option<usize>,
    /// A tool call came as text before in this session (the hint on how
    /// to give the server tool support is said once).
    text_calls_seen: bool,
    /// The entry the model's reasoning is streaming into.
    thinking: Option<usize>,
    /// The pane entry of the prompt the running turn sends, until the turn
    /// says where `context` stored it.
    prompt_entry: Option<usize>,
    /// Pane entries of tool calls refused before running, by call id, until
    /// their results are stored.
    refused_calls: std::collections::HashMap<String, usize>,
    /// The MCP servers every kernel of this workbench reports into; the
    /// system prompt lists their tools.
    pub mcp: crate::mcp::McpDirectory,
    /// The `[models.NAME]` profile `/model` chose, with its settings.
    profile: Option<(String, crate::config::Settings)>,
    /// A second writer on the session file, for what the loop records
    /// while a turn holds the conversation: how each cell ended
    /// ([`record_cell`]).
    cell_log: Option<crate::session::SessionWriter>,
    /// The model's cells (by kernel-service id) and the tool call and
    /// message each answers, once the turn stored its result.
    cell_calls: std::collections::HashMap<u64, (String, crate::context::MessageId)>,
}

impl Default for AgentState {
    fn default() -> Self {
        let context = SharedContext::default();
        let (snapshot_tx, _) = snapshot_channel();
        Self {
            provider: None,
            conversation: Arc::new(Mutex::new(Conversation::new(context.clone(), None))),
            context,
            snapshot_tx,
            events: None,
            approval: Arc::new(AllowCells),
            hooks: crate::hooks::Hooks::default(),
            max_steps: DEFAULT_MAX_STEPS,
            cell_timeout: None,
            cancel: None,
            busy: false,
            step: 0,
            usage: Usage::default(),
            subcall_tokens: 0,
            subcalls: None,
            retry: None,
            window: Arc::default(),
            counter: Arc::default(),
            snapshot_budget: None,
            context_used: None,
            spinner: 0,
            streaming: None,
            text_calls_seen: false,
            thinking: None,
            prompt_entry: None,
            refused_calls: std::collections::HashMap::new(),
            mcp: crate::mcp::McpDirectory::default(),
            profile: None,
            cell_log: None,
            cell_calls: std::collections::HashMap::new(),
        }
    }
}

impl AgentState {
    /// The status-bar segment: spinner, step, tokens, retries.
    pub fn status_segment(&self) -> Option<String> {
        let agent = self;
        let tokens = format!(
            "{} tok",
            short_tokens(agent.usage.total_tokens + agent.subcall_tokens)
        );
        if agent.busy {
            let spin = SPINNER[agent.spinner % SPINNER.len()];
            let mut text = format!("{spin} step {}", agent.step.max(1));
            if agent.usage.total_tokens + agent.subcall_tokens > 0 {
                text.push_str(&format!(" · {tokens}"));
            }
            if let Some(retry) = &agent.retry {
                text.push_str(&format!(" · {retry}"));
            }
            Some(text)
        } else if agent.step > 0 {
            let plural = if agent.step == 1 { "" } else { "s" };
            Some(format!("{} step{plural} · {tokens}", agent.step))
        } else {
            None
        }
    }

    /// The status bar's cache segment: of this turn's prompt tokens, how
    /// many the server's prompt cache served and how many it stored.
    /// `None` while the server reported neither.
    pub(crate) fn cache_segment(&self) -> Option<String> {
        let usage = &self.usage;
        (usage.cache_read_tokens + usage.cache_write_tokens > 0).then(|| {
            format!(
                "cache {} read, {} written",
                short_tokens(usage.cache_read_tokens),
                short_tokens(usage.cache_write_tokens)
            )
        })
    }

    pub fn set_provider(&mut self, provider: Arc<dyn ModelProvider>) {
        self.provider = Some(provider);
    }

    /// `/model` chose another model: its window and token counter are
    /// learned again at the next turn (the settings name the old one).
    pub(crate) fn switch_provider(&mut self, provider: Arc<dyn ModelProvider>) {
        self.provider = Some(provider);
        self.window = Arc::default();
        self.counter = Arc::default();
    }

    /// `/model NAME` chose profile `name` (`[models.NAME]`), whose settings
    /// are `settings`: its own API, server and window from the next turn.
    pub(crate) fn switch_profile(
        &mut self,
        name: &str,
        settings: crate::config::Settings,
        provider: Arc<dyn ModelProvider>,
    ) {
        self.switch_provider(provider);
        self.profile = Some((name.to_owned(), settings));
    }

    /// The profile the next turn goes to, if `/model` chose one.
    pub fn profile_name(&self) -> Option<&str> {
        self.profile.as_ref().map(|(name, _)| name.as_str())
    }

    /// The settings the model is resolved with (its window, its counter):
    /// the configured ones — or the chosen profile's — naming the model the
    /// provider now uses.
    pub(crate) fn model_settings(
        &self,
        settings: &crate::config::Settings,
    ) -> crate::config::Settings {
        let mut settings = match &self.profile {
            Some((_, profile)) => profile.clone(),
            None => settings.clone(),
        };
        if let Some(model) = self.provider.as_ref().and_then(|p| p.model()) {
            settings.model = Some(model);
        }
        settings
    }

    /// The model's name for the status bar ("no model" without one).
    /// A model is configured (or the demo's scripted one): prompts go out.
    pub fn has_model(&self) -> bool {
        self.provider.is_some()
    }

    pub fn label(&self) -> String {
        self.provider
            .as_ref()
            .map_or_else(|| "no model".to_owned(), |p| p.label())
    }

    /// For the kernel's `context.snapshot()`.
    pub fn snapshot_receiver(&self) -> watch::Receiver<Option<PublishedSnapshot>> {
        self.snapshot_tx.subscribe()
    }

    pub fn provider(&self) -> Option<Arc<dyn ModelProvider>> {
        self.provider.clone()
    }

    pub fn conversation(&self) -> &Arc<Mutex<Conversation>> {
        &self.conversation
    }

    /// Whether the conversation holds earlier messages (a resumed session).
    pub(crate) fn has_history(&self) -> bool {
        self.conversation
            .try_lock()
            .is_ok_and(|conversation| !conversation.messages().is_empty())
    }

    /// The window the first turn learned (`None` before it).
    pub fn window(&self) -> Option<ContextWindow> {
        self.window.get().cloned()
    }

    pub(crate) fn window_cell(&self) -> Arc<tokio::sync::OnceCell<ContextWindow>> {
        self.window.clone()
    }

    /// Starts loading the model's token counter on a thread of its own,
    /// so the first turn finds it ready (start-up calls this).
    pub(crate) fn warm_counter(&self, settings: &crate::config::Settings) {
        let cell = self.counter.clone();
        let settings = settings.clone();
        if setup::window_is_probed(&settings) {
            // The first turn's probe may find a server that counts for us.
            return;
        }
        std::thread::spawn(move || {
            cell.get_or_init(|| setup::token_counter(&settings));
        });
    }

    /// `/new`: an empty conversation over the same store (emptied in place,
    /// so the kernel's `context` sees it), saved as a new session from its
    /// first prompt. The model and settings stay. Returns the old session's
    /// id; `None` from the outer option when a turn or a compaction holds
    /// the conversation.
    pub(crate) fn start_over(&mut self) -> Option<Option<String>> {
        let old_session = {
            let conversation = self.conversation.try_lock().ok()?;
            conversation.session_id().map(str::to_owned)
        };
        self.context.clear();
        self.conversation = Arc::new(Mutex::new(Conversation::new(self.context.clone(), None)));
        // A `%py llm_query(…)` before the next prompt is not the old
        // session's.
        if let Some(subcalls) = &self.subcalls {
            subcalls.record_to(None);
        }
        self.usage = Usage::default();
        self.subcall_tokens = 0;
        self.step = 0;
        self.retry = None;
        self.context_used = None;
        self.streaming = None;
        self.thinking = None;
        self.prompt_entry = None;
        self.refused_calls.clear();
        self.cell_log = None;
        self.cell_calls.clear();
        Some(old_session)
    }

    /// Replaces the conversation with a resumed one.
    pub fn set_conversation(&mut self, conversation: Conversation) {
        self.context = conversation.context().clone();
        self.conversation = Arc::new(Mutex::new(conversation));
    }
}

/// `950`, `1.5k`.
fn short_tokens(tokens: u64) -> String {
    if tokens >= 1000 {
        format!("{:.1}k", tokens as f64 / 1000.0)
    } else {
        tokens.to_string()
    }
}

/// Reads the project instructions again (at start, and when an
/// `AGENTS.md`/`CLAUDE.md` changes on disk), so F2 shows what the next
/// turn sends. A running turn holds the conversation: it is left alone,
/// and the next turn reads them anyway.
pub(crate) fn refresh_instructions(workbench: &mut Workbench) {
    let active = workbench
        .editors
        .active()
        .map(|doc| doc.path().to_path_buf());
    let instructions =
        crate::agent::instructions::load(&workbench.workspace_root, active.as_deref());
    if let Ok(mut conversation) = workbench.agent.conversation.try_lock() {
        conversation.set_instructions(instructions);
    }
}

/// Resumes a session into the state: the whole conversation in the pane,
/// plus a notice that kernel variables are not restored.
pub fn resume(workbench: &mut Workbench, conversation: Conversation, warnings: &[String]) {
    let shown = pane_messages(&conversation);
    let id = conversation.session_id().unwrap_or("?").to_owned();
    if let Some(id) = conversation.session_id() {
        crate::workbench::changes::resume(workbench, id);
    }
    workbench.agent.cell_log = conversation.session_writer();
    workbench.agent.set_conversation(conversation);
    workbench.transcript.extend(shown);
    for warning in warnings {
        workbench.notice(&format!("session {id}: {warning}"));
    }
    let variables = if workbench.settings.keep_variables.is_some() {
        "The kernel's variables kept with it come back when the first cell runs."
    } else {
        "Kernel variables are not restored ([kernel] keep_variables is off): earlier cells \
         are shown but their variables are gone until code runs again."
    };
    workbench.notice(&format!("Resumed session {id}. {variables}"));
}

/// The pane entries of a resumed conversation, each tied to its message.
fn pane_messages(conversation: &Conversation) -> Vec<PaneEntry> {
    use crate::agent::provider::ChatMessage as Sent;
    let mut shown = Vec::new();
    for (id, message) in conversation.messages().iter().enumerate() {
        let stored = |mut shown: PaneEntry| {
            shown.message = Some(crate::context::MessageId(id));
            shown
        };
        match message {
            Sent::System { .. } => {}
            Sent::User { content } => {
                shown.push(stored(PaneEntry::new(Speaker::User, shown_prompt(content))));
            }
            Sent::Assistant {
                content, thinking, ..
            } => {
                let reasoning: Vec<&str> = thinking
                    .iter()
                    .map(|t| t.text.as_str())
                    .filter(|t| !t.is_empty())
                    .collect();
                // Not tied to the message: search lands on its answer.
                if !reasoning.is_empty() {
                    shown.push(PaneEntry::new(Speaker::Thinking, reasoning.join("\n\n")));
                }
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    shown.push(stored(PaneEntry::new(Speaker::Assistant, text)));
                }
            }
            Sent::Tool {
                tool_call_id,
                content,
            } => {
                let code = conversation.code_for(tool_call_id).unwrap_or("").to_owned();
                let result: Value = serde_json::from_str(content).unwrap_or(Value::Null);
                let mut entry = PaneEntry::cell(0, code);
                entry.text = tool_result::readable(&result);
                let ended = conversation.resumed_cell(id);
                if let Some(cell) = &mut entry.cell {
                    cell.changes = ended
                        .map(|ended| ended.changes.iter().map(CellChange::from).collect())
                        .unwrap_or_default();
                    cell.status = if result["ok"].as_bool().unwrap_or(false) {
                        CellStatus::Succeeded {
                            duration_ms: ended.and_then(|ended| ended.run_ms),
                            waited_ms: ended.map_or(0, |ended| ended.waited_ms),
                        }
                    } else {
                        CellStatus::Failed {
                            summary: result["error"]["type"]
                                .as_str()
                                .unwrap_or("error")
                                .to_owned(),
                        }
                    };
                }
                shown.push(stored(entry));
            }
        }
    }
    shown
}

/// Starts a turn for `prompt`, whose snapshot shows `scene`.
pub(crate) fn start_turn(
    workbench: &mut Workbench,
    prompt: String,
    scene: crate::workbench::snapshot::SceneRequest,
) {
    workbench
        .transcript
        .push(PaneEntry::new(Speaker::User, shown_prompt(&prompt)));
    let prompt_entry = workbench.transcript.len() - 1;
    let Some(provider) = workbench.agent.provider.clone() else {
        let message = setup::not_configured_message(&workbench.settings);
        workbench.notice(&message);
        return;
    };
    let (Some(kernel), Some(events)) = (
        workbench.services.kernel.clone(),
        workbench.agent.events.clone(),
    ) else {
        workbench.notice("The Python kernel is not running, so the agent cannot act.");
        return;
    };
    // What this answer writes is one group for `/undo`.
    let head: String = prompt.chars().take(40).collect();
    let more = if prompt.chars().count() > 40 {
        "…"
    } else {
        ""
    };
    workbench
        .changes
        .start_group(format!("the agent's answer to “{head}{more}”"));
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let agent = &mut workbench.agent;
    agent.cancel = Some(cancel_tx);
    agent.busy = true;
    agent.step = 0;
    agent.usage = Usage::default();
    agent.subcall_tokens = 0;
    agent.retry = None;
    agent.streaming = None;
    agent.thinking = None;
    agent.prompt_entry = Some(prompt_entry);
    agent.refused_calls.clear();
    let counter_cell = agent.counter.clone();
    let window_cell = agent.window.clone();
    let settings = agent.model_settings(&workbench.settings);
    let mut deps = TurnDeps {
        provider,
        runner: Arc::new(kernel),
        approval: agent.approval.clone(),
        snapshot_tx: agent.snapshot_tx.clone(),
        max_steps: agent.max_steps,
        cell_timeout: agent.cell_timeout,
        window: ContextWindow::resolve(None, None, "", None, None),
        hooks: agent.hooks.clone(),
    };
    let subcalls = agent.subcalls.clone();
    let conversation = agent.conversation.clone();
    let profile = agent.profile_name().map(str::to_owned);
    let mcp = agent.mcp.clone();
    let workspace = workbench.workspace_root.clone();
    let active = workbench
        .editors
        .active()
        .map(|doc| doc.path().to_path_buf());
    tokio::spawn(async move {
        let send = |update: AgentUpdate| {
            let _ = events.send(AppEvent::Agent(update));
        };
        // Read at every turn: an edit to AGENTS.md applies from the next.
        let root = workspace.clone();
        let instructions = tokio::task::spawn_blocking(move || {
            crate::agent::instructions::load(&root, active.as_deref())
        })
        .await
        .ok()
        .flatten();
        deps.window = window_cell
            .get_or_init(|| setup::context_window(&settings, &|n| std::env::var(n).ok()))
            .await
            .clone();
        if counter_cell.get().is_none()
            && let Some(server) =
                setup::server_token_counter(&settings, &|n| std::env::var(n).ok(), &deps.window)
                    .await
        {
            let _ = counter_cell.set(server);
        }
        let budget_set = settings.snapshot_budget_set;
        // Made once, off the loop: loading a BPE vocabulary takes a while.
        let counter = tokio::task::spawn_blocking(move || {
            counter_cell
                .get_or_init(|| setup::token_counter(&settings))
                .clone()
        })
        .await
        .unwrap_or_else(|_| Arc::new(TokenCounter::estimate()));
        // The snapshot's share of the window now known (unless set).
        let mut scene = scene;
        if !budget_set {
            let system = {
                let conversation = conversation.lock().await;
                budget::system_text(&conversation, instructions.as_ref())
            };
            let fitted = budget::for_turn(&deps.window, &counter, &system, None).await;
            scene.budget = fitted.chars;
        }
        let snapshot = tokio::task::spawn_blocking(move || build_snapshot(scene))
            .await
            .ok();
        let session = AgentSession {
            deps,
            counter: Some(counter),
            subcalls,
            mcp: Some(mcp),
            store: Some(SessionStore {
                workspace,
                origin: crate::session::SessionOrigin::Tui,
            }),
        };
        let input = TurnInput {
            prompt,
            snapshot,
            instructions,
            profile,
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let forward = async {
            while let Some(event) = rx.recv().await {
                send(AgentUpdate::Turn(event));
            }
        };
        let note = |note: SessionNote| {
            send(match note {
                SessionNote::Started(id) => AgentUpdate::SessionStarted(id),
                SessionNote::NotSaved(error) => {
                    AgentUpdate::Notice(format!("This conversation is not saved: {error}"))
                }
            });
        };
        let turn = async {
            let end = session
                .run_turn(&conversation, input, &tx, cancel_rx, &note)
                .await;
            drop(tx);
            end
        };
        let (end, ()) = tokio::join!(turn, forward);
        if let Some(error) = end.session_error {
            send(AgentUpdate::Notice(error));
        }
        // The turn let go of the conversation before the loop hears of it,
        // so the gauge can look.
        send(AgentUpdate::Finished);
    });
}

/// Builds the snapshot of the scene (reads files: off the loop).
fn build_snapshot(mut scene: crate::workbench::snapshot::SceneRequest) -> TurnSnapshot {
    scene.source.project_files = Some(crate::snapshot::root_project_files(&scene.root));
    TurnSnapshot::build(&scene.source, scene.budget)
}

/// Esc / Ctrl+C: stop the turn. Returns whether there was one.
pub fn cancel(workbench: &mut Workbench) -> bool {
    match &workbench.agent.cancel {
        Some(cancel) if workbench.agent.busy => {
            let _ = cancel.send(true);
            workbench.agent.retry = Some("cancelling…".into());
            true
        }
        _ => false,
    }
}

/// Applies one update from the turn task.
pub fn apply(workbench: &mut Workbench, update: AgentUpdate) {
    match update {
        AgentUpdate::Turn(event) => apply_turn_event(workbench, event),
        AgentUpdate::Notice(text) => workbench.notice(&text),
        AgentUpdate::SessionStarted(id) => {
            crate::workbench::changes::attach(workbench, &id);
            // The kernel's variables are kept with the session from now on.
            if let Some(store) = workbench
                .services
                .kernel_launcher
                .as_ref()
                .and_then(|launcher| launcher.kept_variables())
            {
                store.keep_in(crate::session::VarsPlace {
                    workspace: workbench.workspace_root.clone(),
                    session: id.clone(),
                });
            }
            workbench.agent.cell_log =
                match crate::session::SessionWriter::resume(&workbench.workspace_root, &id) {
                    Ok(writer) => Some(writer),
                    Err(error) => {
                        tracing::warn!(%error, "cells' run times and changes are not saved");
                        None
                    }
                };
        }
        AgentUpdate::Finished => {
            let agent = &mut workbench.agent;
            agent.busy = false;
            agent.cancel = None;
            agent.streaming = None;
            agent.thinking = None;
            agent.retry = None;
            crate::workbench::context_window::fit_snapshot_budget(workbench);
            crate::workbench::context_window::refresh_gauge(workbench);
            record_tabs(workbench);
        }
    }
}

/// The open tabs go into the session at the end of each turn too (quitting
/// records them last), so a workbench that dies still resumes with them.
fn record_tabs(workbench: &mut Workbench) {
    let tabs = crate::workbench::editors::open_tabs(workbench);
    if let Some(log) = &mut workbench.agent.cell_log
        && let Err(error) = log.append(&crate::session::SessionEvent::Tabs(tabs))
    {
        tracing::warn!(%error, "the open tabs were not saved");
    }
}

fn apply_turn_event(workbench: &mut Workbench, event: TurnEvent) {
    if !matches!(event, TurnEvent::ReasoningDelta(_) | TurnEvent::Usage(_)) {
        // Reasoning ends where anything else begins.
        workbench.agent.thinking = None;
    }
    match event {
        TurnEvent::ReasoningDelta(text) => {
            let messages = &mut workbench.transcript;
            match workbench.agent.thinking.and_then(|i| messages.edit(i)) {
                Some(entry) => entry.text.push_str(&text),
                None => {
                    messages.push(PaneEntry::new(Speaker::Thinking, text));
                    workbench.agent.thinking = Some(messages.len() - 1);
                }
            }
        }
        TurnEvent::ContextOverflow { message, window } => {
            // The server's real window, for F2, the gauge and later turns.
            workbench.agent.window = Arc::new(tokio::sync::OnceCell::new_with(Some(window)));
            workbench.notice(&message);
            crate::workbench::context_window::fit_snapshot_budget(workbench);
        }
        TurnEvent::OutputLimit => workbench.notice("The answer was cut: the model reached its output limit (max tokens). Ask it to \
             continue, or raise [model] reserve_output.",
        ),
        TurnEvent::PromptBlocked { reason } => workbench.notice(&format!(
            "A UserPromptSubmit hook held this prompt back, and nothing was sent: {}. \
             Up in the composer brings it back.",
            crate::sanitize::for_display(&reason)
        )),
        TurnEvent::SentOn { reason } => workbench.notice(&format!(
            "A Stop hook sent the model on: {}",
            crate::sanitize::for_display(&reason)
        )),
        TurnEvent::HookStopped { reason } => workbench.notice(&format!(
            "A hook ended the turn: {}",
            crate::sanitize::for_display(&reason)
        )),
        TurnEvent::CompactionHeld { reason } => workbench.notice(&format!(
            "A PreCompact hook held the compaction back ({}); earlier messages are left out \
             of the prompt instead.",
            crate::sanitize::for_display(&reason)
        )),
        TurnEvent::Step(step) => {
            workbench.agent.step = step;
            workbench.agent.retry = None;
        }
        TurnEvent::ToolCallAsText => {
            // What streamed was the call, not an answer: the line says what
            // happened instead (the cell shows the code).
            let first = !workbench.agent.text_calls_seen;
            workbench.agent.text_calls_seen = true;
            let text = if first {
                format!(
                    "The model wrote its code_action call as text; it runs as the call. {}.",
                    crate::agent::text_tool_call::HINT
                )
            } else {
                "The model wrote its code_action call as text; it runs as the call.".to_owned()
            };
            match workbench
                .agent
                .streaming
                .take()
                .and_then(|i| workbench.transcript.edit(i))
            {
                Some(entry) => {
                    entry.role = Speaker::Notice;
                    entry.text = text;
                }
                None => workbench.notice(&text),
            }
        }
        TurnEvent::TextDelta(text) => {
            let messages = &mut workbench.transcript;
            match workbench.agent.streaming.and_then(|i| messages.edit(i)) {
                Some(message) => message.text.push_str(&text),
                None => {
                    messages.push(PaneEntry::new(Speaker::Assistant, text));
                    workbench.agent.streaming = Some(messages.len() - 1);
                }
            }
        }
        TurnEvent::UserMessage { message: id } => {
            let entry = workbench.agent.prompt_entry.take();
            if let Some(message) = entry.and_then(|i| workbench.transcript.edit(i)) {
                message.message = Some(id);
            }
        }
        TurnEvent::AssistantMessage { text, message: id } => {
            let messages = &mut workbench.transcript;
            match workbench.agent.streaming.take().and_then(|i| messages.edit(i)) {
                Some(message) => {
                    message.text = text;
                    message.message = Some(id);
                }
                None => {
                    let mut message = PaneEntry::new(Speaker::Assistant, text);
                    message.message = Some(id);
                    messages.push(message);
                }
            }
        }
        TurnEvent::ToolResult {
            id,
            message: stored,
            cell,
            ..
        } => {
            workbench.agent.streaming = None;
            let messages = &mut workbench.transcript;
            let shown = match cell {
                Some(cell) => {
                    messages.edit_last_where(|m| m.cell.as_ref().is_some_and(|c| c.id == cell))
                }
                None => workbench
                    .agent
                    .refused_calls
                    .remove(&id)
                    .and_then(|i| messages.edit(i)),
            };
            if let Some(message) = shown {
                message.message = Some(stored);
            }
            if let Some(cell) = cell {
                workbench.agent.cell_calls.insert(cell, (id, stored));
                record_cell(workbench, cell);
            }
        }
        TurnEvent::ToolCall { .. } | TurnEvent::Snapshot { .. } => {
            workbench.agent.streaming = None;
        }
        TurnEvent::ToolRejected { id, reason } => {
            workbench.agent.streaming = None;
            workbench.transcript.push(PaneEntry::new(
                Speaker::Tool,
                format!("code_action not run: {reason}"),
            ));
            let entry = workbench.transcript.len() - 1;
            workbench.agent.refused_calls.insert(id, entry);
        }
        TurnEvent::Retrying {
            attempt,
            max_attempts,
            wait,
            reason,
        } => {
            workbench.agent.retry = Some(format!(
                "retry {attempt}/{max_attempts} in {:.0}s ({reason})",
                wait.as_secs_f64().ceil()
            ));
        }
        TurnEvent::Usage(usage) => workbench.agent.usage = usage,
        TurnEvent::Prompt { tokens, window, .. } => {
            workbench.agent.context_used = Some((tokens, window));
        }
        TurnEvent::Compacted(crate::agent::prompt::compact::Compacted {
            through,
            by_model,
            fallback_reason,
            ..
        }) => workbench.notice(&format!(
                "── compacted: context messages {} are now a summary ({}) in the prompt; \
                 every message stays searchable, and context.slice({}, {}) returns them ──",
                crate::agent::prompt::spans(std::slice::from_ref(&(0..through))),
                fallback_reason.map_or_else(
                    || if by_model {
                        "by the model".to_owned()
                    } else {
                        "extractive".to_owned()
                    },
                    |why| format!("extractive: {why}")
                ),
                0,
                through
            ),
        ),
        TurnEvent::Completed {
            steps,
            max_steps_reached: true,
            ..
        } => workbench.notice(&format!(
                "Stopped after {steps} model calls (the step limit) without a final answer. Send a message to continue."
            ),
        ),
        TurnEvent::Completed { .. } => {}
        TurnEvent::Failed { message } => workbench.notice(&format!("The model call failed: {message}. Send the message again to retry."),
        ),
        TurnEvent::Cancelled => workbench.notice("Cancelled. Every cell that ran kept its result."),
    }
    // No `follow()` here: a following view shows new text anyway, and a
    // user who scrolled up to read keeps their place while the turn runs.
}

/// Writes how the model's cell `cell_id` ended to the session (its run
/// time, its wait, its changes), once it has ended and its result is
/// stored; again when a write it made is announced after that (the latest
/// record wins on resume). Nothing for the user's `%py` cells, which the
/// session does not keep.
pub(crate) fn record_cell(workbench: &mut Workbench, cell_id: u64) {
    let Some((call, message)) = workbench.agent.cell_calls.get(&cell_id) else {
        return;
    };
    let Some(cell) = workbench
        .transcript
        .iter()
        .rev()
        .find_map(|m| m.cell.as_ref().filter(|c| c.id == cell_id))
    else {
        return;
    };
    let (run_ms, waited_ms) = match cell.status {
        CellStatus::Running => return,
        CellStatus::Succeeded {
            duration_ms,
            waited_ms,
        } => (duration_ms, waited_ms),
        CellStatus::Failed { .. } => (None, 0),
    };
    let record = crate::session::CellRecord {
        tool_call_id: call.clone(),
        message: Some(*message),
        run_ms,
        waited_ms,
        changes: cell.changes.iter().map(CellChange::record).collect(),
    };
    if let Some(log) = &mut workbench.agent.cell_log
        && let Err(error) = log.append(&crate::session::SessionEvent::Cell(record))
    {
        tracing::warn!(%error, "a cell's run time and changes were not saved");
    }
}

/// The model's cells go through the kernel service, so they appear in the
/// conversation as cells with streamed output like `%py` ones.
impl CodeRunner for KernelClient {
    fn run(&self, code: String, timeout: Option<Duration>) -> RunningCell {
        let (cell_id, result) = self.execute(code, CellOrigin::Agent, timeout);
        RunningCell {
            shown_as: Some(cell_id),
            result: Box::pin(async move {
                result.await.unwrap_or_else(|_| {
                    ExecResult::failed(
                        cell_id,
                        "RuntimeError",
                        "the kernel service stopped before the cell finished".into(),
                        ExecOutcome::NotRun,
                    )
                })
            }),
        }
    }

    fn interrupt(&self) {
        KernelClient::interrupt(self);
    }

    fn state(&self) -> BoxFuture<'static, RuntimeState> {
        let runtime = self.runtime().clone();
        Box::pin(async move {
            runtime
                .describe()
                .await
                .unwrap_or_else(|_| RuntimeState::dead())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppState;
    use crate::app::agent::send;
    use crate::config::Settings;

    fn state() -> AppState {
        let settings = Settings::defaults();
        let mut s = AppState::new("/w".into(), settings);
        s.workbench.agent.busy = true;
        s
    }

    fn turn(s: &mut AppState, event: TurnEvent) {
        apply(&mut s.workbench, AgentUpdate::Turn(event));
    }

    /// Who said what in the conversation, in order.
    fn shown(s: &AppState) -> Vec<(Speaker, &str)> {
        s.workbench
            .transcript
            .iter()
            .map(|m| (m.role, m.text.as_str()))
            .collect()
    }

    /// A call written as text streamed in as if it were the answer: the
    /// entry becomes one line saying what happened, with the hint on how
    /// to give the server tools the first time only.
    #[test]
    fn a_call_written_as_text_is_not_left_as_the_answer() {
        let mut s = state();
        let call = r#"{"name": "code_action", "arguments": {"code": "x"}}"#;
        for _ in 0..2 {
            turn(&mut s, TurnEvent::TextDelta(call.into()));
            turn(&mut s, TurnEvent::ToolCallAsText);
        }
        let shown = shown(&s);
        assert_eq!(shown.len(), 2);
        assert!(shown.iter().all(|(role, text)| *role == Speaker::Notice
            && text.starts_with("The model wrote its code_action call as text")));
        assert!(shown[0].1.contains("--jinja"), "{}", shown[0].1);
        assert!(!shown[1].1.contains("--jinja"), "said once: {}", shown[1].1);
    }

    #[test]
    fn deltas_grow_one_entry_and_the_final_text_replaces_it() {
        let mut s = state();
        turn(&mut s, TurnEvent::TextDelta("Hel".into()));
        turn(&mut s, TurnEvent::TextDelta("lo".into()));
        assert_eq!(s.workbench.transcript.len(), 1);
        assert_eq!(s.workbench.transcript[0].text, "Hello");
        turn(
            &mut s,
            TurnEvent::AssistantMessage {
                text: "Hello!".into(),
                message: crate::context::MessageId(1),
            },
        );
        turn(&mut s, TurnEvent::TextDelta("Next".into()));
        let texts: Vec<&str> = s
            .workbench
            .transcript
            .iter()
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(texts, ["Hello!", "Next"]);
    }

    #[test]
    fn the_status_shows_step_tokens_and_retries_until_finished() {
        let mut s = state();
        turn(&mut s, TurnEvent::Step(3));
        turn(
            &mut s,
            TurnEvent::Usage(Usage {
                prompt_tokens: 900,
                completion_tokens: 600,
                total_tokens: 1500,
                ..Usage::default()
            }),
        );
        turn(
            &mut s,
            TurnEvent::Retrying {
                attempt: 2,
                max_attempts: 4,
                wait: Duration::from_millis(1500),
                reason: "HTTP 429".into(),
            },
        );
        assert_eq!(
            s.workbench.agent.status_segment().unwrap(),
            "⠋ step 3 · 1.5k tok · retry 2/4 in 2s (HTTP 429)"
        );
        apply(&mut s.workbench, AgentUpdate::Finished);
        assert_eq!(
            s.workbench.agent.status_segment().unwrap(),
            "3 steps · 1.5k tok"
        );
        assert_eq!(s.workbench.agent.cache_segment(), None);
        turn(
            &mut s,
            TurnEvent::Usage(Usage {
                prompt_tokens: 20_300,
                completion_tokens: 200,
                total_tokens: 20_500,
                cache_read_tokens: 18_000,
                cache_write_tokens: 2_100,
                cuts_silently: false,
            }),
        );
        assert_eq!(
            s.workbench.agent.status_segment().unwrap(),
            "3 steps · 20.5k tok"
        );
        assert_eq!(
            s.workbench.agent.cache_segment().unwrap(),
            "cache 18.0k read, 2.1k written"
        );
    }

    #[test]
    fn reasoning_streams_into_its_own_entry_and_a_cut_answer_is_told() {
        let mut s = state();
        turn(&mut s, TurnEvent::ReasoningDelta("The user ".into()));
        turn(&mut s, TurnEvent::ReasoningDelta("wants a sum.".into()));
        turn(&mut s, TurnEvent::TextDelta("3".into()));
        turn(&mut s, TurnEvent::ReasoningDelta("Another thought.".into()));
        let shown = shown(&s);
        assert_eq!(
            shown,
            [
                (Speaker::Thinking, "The user wants a sum."),
                (Speaker::Assistant, "3"),
                (Speaker::Thinking, "Another thought."),
            ]
        );
        turn(&mut s, TurnEvent::OutputLimit);
        let last = s.workbench.transcript.iter().last().unwrap();
        assert_eq!(last.role, Speaker::Notice);
        assert!(last.text.contains("answer was cut"), "{}", last.text);
    }

    #[test]
    fn sending_while_busy_keeps_the_text_in_the_composer() {
        let mut s = state();
        send(&mut s, "second question".into());
        assert_eq!(
            s.conversation.composer.lines().join("\n"),
            "second question"
        );
        assert_eq!(s.workbench.transcript.len(), 1);
        assert_eq!(s.workbench.transcript[0].role, Speaker::Notice);
    }
}

//! One approval queue for everything model-written code wants to do: shell
//! commands a cell runs (`shell.run`) and, for the agent, the cells
//! themselves. Requests travel to the UI loop as `AppEvent`s; the user's
//! answer goes back on a oneshot, so nothing here ever blocks the loop.
//!
//! For the agent (ask mode, a cell the model wants to run):
//!
//! ```no_run
//! # async fn turn(broker: hello_tui::workbench::approvals::ApprovalBroker) {
//! use hello_tui::kernel::caps::Approval;
//! match broker.approve_cell("import os\nos.listdir('.')").await {
//!     Approval::Allow => { /* queue it on the KernelClient */ }
//!     Approval::Deny(reason) => { /* tell the model: the user refused, because {reason} */ }
//! }
//! # }
//! ```
//!
//! The broker reads the *current* approval mode on every request, so
//! switching between `ask` and `auto` takes effect at once without a kernel
//! restart: `auto` and `full` allow, `deny` refuses, `ask` queues a question.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use crate::hooks::{Gate, HookEvent, Hooks, ToolUse};
use crate::kernel::caps::{
    Approval, ApprovalDecision, ApprovalPolicy, Prior, WriteProposal, WriteReview, WriteVerdict,
};
use crate::sandbox::ApprovalMode;
use crate::workbench::cell_owner::CellOwner;
use crate::workbench::event::{AppEvent, AppEventSender};

/// What the user is asked to approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalSubject {
    /// A `shell.run` command, exactly as the cell passed it to `sh -c`.
    Command(String),
    /// A cell the model wants to run in the kernel.
    Cell(String),
    /// A write `fs` is about to make: its diff, whole (`ask`) or hunk by
    /// hunk (`review`).
    Write(Box<crate::workbench::write_review::WriteReviewState>),
    /// The first `llm_query` sub-call(s) of a turn: how many, to which
    /// model, the turn's bounds and the first prompt's head.
    Subcalls(String),
    /// An MCP tool call a cell makes: server, tool and the arguments as
    /// sent (`text` is `mcp::ToolCall::text`).
    ToolCall {
        server: String,
        tool: String,
        text: String,
    },
}

impl ApprovalSubject {
    /// What is asked about, in a few words (a `Notification` hook's
    /// message).
    pub fn kind(&self) -> &'static str {
        match self {
            ApprovalSubject::Command(_) => "a shell command",
            ApprovalSubject::Cell(_) => "a cell",
            ApprovalSubject::Write(_) => "a write",
            ApprovalSubject::Subcalls(_) => "sub-calls to the model",
            ApprovalSubject::ToolCall { .. } => "an MCP tool call",
        }
    }

    /// What the overlay shows: the command, the code, or the diff.
    pub fn text(&self) -> &str {
        match self {
            ApprovalSubject::Command(text)
            | ApprovalSubject::Cell(text)
            | ApprovalSubject::Subcalls(text) => text,
            ApprovalSubject::Write(review) => review.text(),
            ApprovalSubject::ToolCall { text, .. } => text,
        }
    }
}

/// One question waiting in the queue. Dropping it without an answer denies
/// (the waiting side sees the channel close).
#[derive(Debug)]
pub struct PendingApproval {
    pub subject: ApprovalSubject,
    /// Unique in the process, so "this question was drawn" names it.
    pub id: u64,
    /// A `PreToolUse` hook asked for this question, saying why: the user
    /// answers it whatever the mode (`auto` does not answer it for them).
    pub hook_asks: Option<String>,
    respond: oneshot::Sender<ApprovalDecision>,
}

static NEXT_APPROVAL: AtomicU64 = AtomicU64::new(0);

impl PendingApproval {
    pub fn new(subject: ApprovalSubject) -> (Self, oneshot::Receiver<ApprovalDecision>) {
        let (respond, answer) = oneshot::channel();
        let id = NEXT_APPROVAL.fetch_add(1, Ordering::Relaxed);
        (
            Self {
                subject,
                id,
                hook_asks: None,
                respond,
            },
            answer,
        )
    }

    /// The question a hook asked for, with its reason.
    pub fn asked_by_hook(mut self, reason: String) -> Self {
        self.hook_asks = Some(reason);
        self
    }

    /// Whether the approval mode may answer it (a hook's question is the
    /// user's to answer, except that `deny` refuses everything).
    pub fn mode_may_answer(&self, decision: &ApprovalDecision) -> bool {
        self.hook_asks.is_none() || matches!(decision, ApprovalDecision::Deny { .. })
    }

    pub fn answer(self, decision: ApprovalDecision) {
        let _ = self.respond.send(decision);
    }

    /// The asker gave up (its cell was interrupted or timed out).
    pub(crate) fn is_abandoned(&self) -> bool {
        self.respond.is_closed()
    }
}

/// The approval mode, shared between the UI loop (which changes it) and the
/// broker's futures (which read it per request).
#[derive(Debug, Clone)]
struct SharedMode(Arc<AtomicU8>);

impl SharedMode {
    fn new(mode: ApprovalMode) -> Self {
        Self(Arc::new(AtomicU8::new(Self::code(mode))))
    }

    fn code(mode: ApprovalMode) -> u8 {
        ApprovalMode::ALL
            .iter()
            .position(|m| *m == mode)
            .unwrap_or(0) as u8
    }

    fn get(&self) -> ApprovalMode {
        ApprovalMode::ALL
            .get(self.0.load(Ordering::Relaxed) as usize)
            .copied()
            .unwrap_or(ApprovalMode::Ask)
    }

    fn set(&self, mode: ApprovalMode) {
        self.0.store(Self::code(mode), Ordering::Relaxed);
    }
}

/// A cheap, clonable (Send) handle that asks the user through the UI loop.
/// Give one to the kernel's `shell` capability (it is an
/// [`ApprovalPolicy`]) and one to the agent for its cells.
#[derive(Clone)]
pub struct ApprovalBroker {
    app: AppEventSender,
    mode: SharedMode,
    /// "Always" answers for shell commands: this exact command, this session.
    always_commands: Arc<Mutex<HashSet<String>>>,
    /// "Always" for a cell approves every later cell this session.
    always_cells: Arc<AtomicBool>,
    /// "Always" for a write (`ask` mode) makes every later write without
    /// showing it.
    always_writes: Arc<AtomicBool>,
    /// "Always" for sub-calls approves them for every later turn.
    always_subcalls: Arc<AtomicBool>,
    /// "Always" for an MCP tool call: (server, tool), any arguments.
    always_tools: Arc<Mutex<HashSet<(String, String)>>>,
    asked: Arc<AtomicU64>,
    /// The cell the kernel service runs now and who queued it: a command
    /// the user typed into their own running cell needs no question.
    cell_owner: CellOwner,
    /// `PreToolUse` runs before the mode decides; `Notification` when a
    /// question waits; `PostToolUse` once a command, call or write is done.
    hooks: Hooks,
}

/// What the `PreToolUse` hooks leave to the broker.
enum Hooked {
    /// Decided: no question, no mode.
    Decided(Approval),
    /// Ask the user, even in `auto` or after an "always", saying why.
    Ask(String),
    /// No hook had an opinion: the mode and the "always" answers decide.
    Proceed,
}

impl ApprovalBroker {
    pub fn new(app: AppEventSender, mode: ApprovalMode) -> Self {
        Self {
            app,
            mode: SharedMode::new(mode),
            always_commands: Arc::default(),
            always_cells: Arc::default(),
            always_writes: Arc::default(),
            always_subcalls: Arc::default(),
            always_tools: Arc::default(),
            asked: Arc::default(),
            cell_owner: CellOwner::default(),
            hooks: Hooks::default(),
        }
    }

    /// Runs `hooks` in front of every question from now on.
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        hooks.set_mode(self.mode());
        self.hooks = hooks;
        self
    }

    /// The answer for `tool` when no question is needed (`Ok`): a hook's,
    /// else (unless a hook asks) the mode's or an earlier "always"'s.
    /// `Err` is a question, with the hook's reason when a hook asks for it.
    async fn settled(
        &self,
        tool: impl FnOnce() -> ToolUse,
        always: impl FnOnce() -> bool,
    ) -> Result<Approval, Option<String>> {
        match self.hooked(false, tool).await {
            Hooked::Decided(verdict) => Ok(verdict),
            Hooked::Ask(reason) => Err(Some(reason)),
            Hooked::Proceed => self
                .without_asking()
                .or_else(|| always().then_some(Approval::Allow))
                .ok_or(None),
        }
    }

    /// What the `PreToolUse` hooks say of `tool`. A hook's "allow" or
    /// "ask" never overrides the `deny` mode.
    async fn hooked(&self, cell: bool, tool: impl FnOnce() -> ToolUse) -> Hooked {
        // A running cell waits on the user's hooks as on a question: the
        // time is its wait, not its run time (a cell's own hook runs
        // before it starts).
        let _wait = (!cell).then(|| self.cell_owner.wait_begins()).flatten();
        let gate = self.hooks.pre_tool_use(tool).await;
        let deny_mode = matches!(self.without_asking(), Some(Approval::Deny(_)));
        match gate {
            Gate::Deny(reason) => Hooked::Decided(Approval::Deny(reason)),
            Gate::Allow | Gate::Ask(_) if deny_mode => Hooked::Proceed,
            Gate::Allow => Hooked::Decided(Approval::Allow),
            Gate::Ask(reason) => Hooked::Ask(reason),
            Gate::Proceed => Hooked::Proceed,
        }
    }

    /// For the kernel service (`app::kernel::spawn`), which records there
    /// the cell it runs and who queued it.
    pub fn cell_owner(&self) -> CellOwner {
        self.cell_owner.clone()
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode.get()
    }

    /// Called by the UI loop when the user switches modes. An "always"
    /// for writes given in one mode does not carry into another.
    pub(crate) fn set_mode(&self, mode: ApprovalMode) {
        if mode != self.mode.get() {
            self.always_writes.store(false, Ordering::Relaxed);
        }
        self.mode.set(mode);
        self.hooks.set_mode(mode);
    }

    /// How many questions this broker has put to the user (for tests and
    /// the session log).
    pub fn asked(&self) -> u64 {
        self.asked.load(Ordering::Relaxed)
    }

    /// May the model's cell run? Resolves at once outside `ask` mode or
    /// after an "always" for cells; otherwise when the user answers.
    pub fn approve_cell(&self, code: &str) -> BoxFuture<'static, Approval> {
        let broker = self.clone();
        let code = code.to_owned();
        Box::pin(async move {
            let hook_asks = match broker.hooked(true, || ToolUse::cell(&code)).await {
                Hooked::Decided(verdict) => return verdict,
                Hooked::Ask(reason) => Some(reason),
                Hooked::Proceed => {
                    if let Some(verdict) = broker.without_asking() {
                        return verdict;
                    }
                    if broker.always_cells.load(Ordering::Relaxed) {
                        return Approval::Allow;
                    }
                    None
                }
            };
            let decision = broker.ask(ApprovalSubject::Cell(code), hook_asks).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                broker.always_cells.store(true, Ordering::Relaxed);
            }
            verdict_of(decision)
        })
    }

    /// May this turn's cells call the model (`llm_query`)? Asked once a
    /// turn (`crate::subcalls` remembers the answer for the turn); the
    /// user's own running `%py` cell needs no question.
    pub(crate) fn approve_subcalls(&self, what: &str) -> BoxFuture<'static, Approval> {
        let broker = self.clone();
        let what = what.to_owned();
        Box::pin(async move {
            if broker.cell_owner.users_cell_runs() {
                return Approval::Allow;
            }
            let always = || broker.always_subcalls.load(Ordering::Relaxed);
            let hook_asks = match broker.settled(|| ToolUse::subcalls(&what), always).await {
                Ok(verdict) => return verdict,
                Err(hook_asks) => hook_asks,
            };
            let decision = broker.ask(ApprovalSubject::Subcalls(what), hook_asks).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                broker.always_subcalls.store(true, Ordering::Relaxed);
            }
            verdict_of(decision)
        })
    }

    /// The mode's answer when it needs no question.
    fn without_asking(&self) -> Option<Approval> {
        match self.mode() {
            ApprovalMode::Ask | ApprovalMode::Review => None,
            ApprovalMode::Auto | ApprovalMode::Full => Some(Approval::Allow),
            ApprovalMode::Deny => Some(Approval::Deny(
                "the approval mode is `deny`: nothing model-written may run".to_owned(),
            )),
        }
    }

    /// Puts the question to the user; `hook_asks` is a hook's reason when
    /// a hook asked for it (then no mode answers it).
    async fn ask(
        &self,
        subject: ApprovalSubject,
        hook_asks: Option<String>,
    ) -> Result<ApprovalDecision, oneshot::error::RecvError> {
        // A question a running cell asks (a command, a write, a tool
        // call, its sub-calls) blocks it: the time to answer is its wait,
        // not its run time. A cell's own question comes before it runs.
        let _wait = match subject {
            ApprovalSubject::Cell(_) => None,
            _ => self.cell_owner.wait_begins(),
        };
        self.hooks.notify(format!(
            "hello-tui needs your approval for {}",
            subject.kind()
        ));
        let (mut pending, answer) = PendingApproval::new(subject);
        if let Some(reason) = hook_asks {
            pending = pending.asked_by_hook(reason);
        }
        self.asked.fetch_add(1, Ordering::Relaxed);
        // A closed app channel drops `pending`, which closes `answer`: denied.
        let _ = self.app.send(AppEvent::ApprovalRequested(pending));
        answer.await
    }
}

fn verdict_of(decision: Result<ApprovalDecision, oneshot::error::RecvError>) -> Approval {
    match decision {
        Ok(
            ApprovalDecision::AllowOnce
            | ApprovalDecision::AllowAlways
            | ApprovalDecision::AllowPart { .. },
        ) => Approval::Allow,
        Ok(ApprovalDecision::Deny { reason }) => Approval::Deny(reason),
        Err(_) => Approval::Deny("the approval request was dismissed".to_owned()),
    }
}

impl ApprovalPolicy for ApprovalBroker {
    fn check(&self, command: &str) -> BoxFuture<'static, Approval> {
        let broker = self.clone();
        let command = command.to_owned();
        Box::pin(async move {
            // The user's own `%py` cell running a command they typed: not
            // model-written, so no mode refuses or asks about it.
            if broker.cell_owner.typed_by_user(&command) {
                return Approval::Allow;
            }
            let always = || crate::kernel::lock(&broker.always_commands).contains(&command);
            let hook_asks = match broker.settled(|| ToolUse::shell(&command), always).await {
                Ok(verdict) => return verdict,
                Err(hook_asks) => hook_asks,
            };
            let decision = broker
                .ask(ApprovalSubject::Command(command.clone()), hook_asks)
                .await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                crate::kernel::lock(&broker.always_commands).insert(command);
            }
            verdict_of(decision)
        })
    }

    fn ran(&self, command: &str, result: &serde_json::Value) -> BoxFuture<'static, ()> {
        // The user's own command is not a tool the model used.
        if !self.hooks.wants(HookEvent::PostToolUse) || self.cell_owner.typed_by_user(command) {
            return Box::pin(async {});
        }
        let hooks = self.hooks.clone();
        let tool = ToolUse::shell(command);
        let result = result.clone();
        Box::pin(async move { hooks.post_tool_use(&tool, &result).await })
    }
}

/// A write's diff goes through the same queue (and mode) as commands and
/// cells: `auto` and `full` write at once, `deny` refuses, `ask` shows the
/// whole diff, `review` walks its hunks. A write to a path the user's own
/// running `%py` cell names literally is theirs, and is made at once.
impl WriteReview for ApprovalBroker {
    fn review(&self, proposal: WriteProposal) -> BoxFuture<'static, WriteVerdict> {
        let broker = self.clone();
        Box::pin(async move {
            let whole = WriteVerdict::Write {
                text: proposal.after.clone(),
                rejected: 0,
            };
            // The user's own write, or one that changes nothing (asking
            // about it would only offer an "always" for nothing).
            if broker.cell_owner.wrote_by_user(&proposal.user_path)
                || proposal.before == Prior::Bytes(proposal.after.clone())
            {
                return whole;
            }
            let mode = broker.mode();
            let per_hunk = mode == ApprovalMode::Review;
            let tool = || {
                ToolUse::write(
                    &proposal.path,
                    &proposal.after,
                    &crate::hooks::gate::diff_of(&proposal),
                )
            };
            let always = || !per_hunk && broker.always_writes.load(Ordering::Relaxed);
            let hook_asks = match broker.settled(tool, always).await {
                Ok(Approval::Allow) => return whole,
                Ok(Approval::Deny(reason)) => return WriteVerdict::Deny(reason),
                Err(hook_asks) => hook_asks,
            };
            let review = crate::workbench::write_review::WriteReviewState::new(&proposal, per_hunk);
            let decision = broker
                .ask(ApprovalSubject::Write(Box::new(review)), hook_asks)
                .await;
            match decision {
                Ok(ApprovalDecision::AllowOnce) => whole,
                Ok(ApprovalDecision::AllowAlways) => {
                    broker.always_writes.store(true, Ordering::Relaxed);
                    whole
                }
                Ok(ApprovalDecision::AllowPart { text, rejected }) => {
                    WriteVerdict::Write { text, rejected }
                }
                Ok(ApprovalDecision::Deny { reason }) => WriteVerdict::Deny(reason),
                Err(_) => WriteVerdict::Deny("the review was dismissed".to_owned()),
            }
        })
    }

    fn hears_written(&self) -> bool {
        self.hooks.wants(HookEvent::PostToolUse)
    }

    fn written(&self, path: std::path::PathBuf, text: Vec<u8>) -> BoxFuture<'static, ()> {
        crate::hooks::gate::written(&self.hooks, path, text)
    }
}

/// An MCP tool call goes through the same queue and mode; in `ask` (and
/// `review`) mode it is asked per tool, and "always" covers every later
/// call of that server's tool, whatever its arguments.
impl crate::mcp::ToolCallApproval for ApprovalBroker {
    fn approve_tool_call(&self, call: &crate::mcp::ToolCall) -> BoxFuture<'static, Approval> {
        let broker = self.clone();
        let key = (call.server.clone(), call.tool.clone());
        let users_own = self
            .cell_owner
            .calls_tool_by_user(&call.server, &call.called_as);
        let subject = ApprovalSubject::ToolCall {
            server: call.server.clone(),
            tool: call.tool.clone(),
            text: call.text(),
        };
        let tool = ToolUse::mcp(call);
        Box::pin(async move {
            // The user's own `%py` cell calling a tool it names.
            if users_own {
                return Approval::Allow;
            }
            let always = || crate::kernel::lock(&broker.always_tools).contains(&key);
            let hook_asks = match broker.settled(|| tool, always).await {
                Ok(verdict) => return verdict,
                Err(hook_asks) => hook_asks,
            };
            let decision = broker.ask(subject, hook_asks).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                crate::kernel::lock(&broker.always_tools).insert(key);
            }
            verdict_of(decision)
        })
    }

    fn ran(
        &self,
        call: &crate::mcp::ToolCall,
        result: &serde_json::Value,
    ) -> BoxFuture<'static, ()> {
        if !self.hooks.wants(HookEvent::PostToolUse)
            || self
                .cell_owner
                .calls_tool_by_user(&call.server, &call.called_as)
        {
            return Box::pin(async {});
        }
        let hooks = self.hooks.clone();
        let tool = ToolUse::mcp(call);
        let result = result.clone();
        Box::pin(async move { hooks.post_tool_use(&tool, &result).await })
    }
}

/// The agent asks before each of the model's cells through the same queue
/// (and mode) as `shell.run`.
impl crate::agent::turn::CellApproval for ApprovalBroker {
    fn approve_cell(&self, code: &str) -> BoxFuture<'static, crate::agent::turn::Verdict> {
        let pending = ApprovalBroker::approve_cell(self, code);
        Box::pin(async move {
            match pending.await {
                Approval::Allow => crate::agent::turn::Verdict::Allow,
                Approval::Deny(reason) => crate::agent::turn::Verdict::Deny(reason),
            }
        })
    }
}

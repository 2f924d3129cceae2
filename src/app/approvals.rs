//! One approval queue for everything model-written code wants to do: shell
//! commands a cell runs (`shell.run`) and, for the agent, the cells
//! themselves. Requests travel to the UI loop as `AppEvent`s; the user's
//! answer goes back on a oneshot, so nothing here ever blocks the loop.
//!
//! For the agent (ask mode, a cell the model wants to run):
//!
//! ```no_run
//! # async fn turn(broker: hello_tui::app::approvals::ApprovalBroker) {
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

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::oneshot;

use super::cell_owner::CellOwner;
use super::event::{AppEvent, AppEventSender};
use crate::kernel::caps::{
    Approval, ApprovalDecision, ApprovalPolicy, Prior, WriteProposal, WriteReview, WriteVerdict,
};
use crate::sandbox::ApprovalMode;

/// What the user is asked to approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalSubject {
    /// A `shell.run` command, exactly as the cell passed it to `sh -c`.
    Command(String),
    /// A cell the model wants to run in the kernel.
    Cell(String),
    /// A write `fs` is about to make: its diff, whole (`ask`) or hunk by
    /// hunk (`review`).
    Write(Box<super::write_review::WriteReviewState>),
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
                respond,
            },
            answer,
        )
    }

    pub fn answer(self, decision: ApprovalDecision) {
        let _ = self.respond.send(decision);
    }

    /// The asker gave up (its cell was interrupted or timed out).
    pub fn is_abandoned(&self) -> bool {
        self.respond.is_closed()
    }
}

/// A request arrived. In a mode that does not ask (the user switched while
/// it was on its way) it is answered at once.
pub fn request(state: &mut super::state::AppState, pending: PendingApproval) {
    state.workbench.approvals.prune();
    if !state.workbench.safety.mode.asks() && state.workbench.services.approvals.is_some() {
        pending.answer(ApprovalDecision::AllowOnce);
        return;
    }
    state.workbench.approvals.pending.push_back(pending);
}

/// The queue the approval overlay shows, front first, and the deny reason
/// being typed (`Some` while the reason line has the keyboard).
#[derive(Debug, Default)]
pub struct ApprovalQueue {
    pub pending: VecDeque<PendingApproval>,
    pub reason: Option<super::line_input::LineInput>,
    /// Rows (as drawn, long lines broken) of the front request's text
    /// scrolled past.
    pub scroll: usize,
    /// The question a frame has shown (`app::update::before_frame`). Until
    /// the front one is drawn it takes no keys: what the user typed before
    /// it appeared was meant for something else. A write reviewed hunk by
    /// hunk is a new question at each hunk.
    shown: Option<(u64, usize)>,
    /// When the shown question was first drawn: a later hunk takes a
    /// decision only [`HUNK_SETTLE`] after it appeared, so a fast `yy`
    /// (the second key lands a frame after the first) never accepts a
    /// hunk nobody read (review finding).
    shown_since: Option<std::time::Instant>,
    /// The shown question's last row has been on screen (all of it fit,
    /// or the user scrolled to its end). Until then no key or click
    /// approves it: what is approved must have been seen whole (a long
    /// line's tail included).
    end_seen: bool,
    /// An approve key came before the end was seen: the overlay says why
    /// nothing happened.
    refused: bool,
}

/// How long a hunk after the first is on screen before a key decides it.
pub const HUNK_SETTLE: std::time::Duration = std::time::Duration::from_millis(250);

impl ApprovalQueue {
    pub fn front(&self) -> Option<&PendingApproval> {
        self.pending.front()
    }

    /// The front request has been drawn (for a review, any of its hunks),
    /// so the approval layer takes the keys.
    pub fn front_shown(&self) -> bool {
        self.front()
            .is_some_and(|p| self.shown.is_some_and(|(id, _)| id == p.id))
    }

    /// A frame is about to draw the queue on `screen`: remember what it
    /// shows, since when, and whether the text's end is in sight.
    pub fn drawn(&mut self, screen: ratatui::layout::Rect) {
        let question = self.front_question();
        if question != self.shown {
            self.shown = question;
            self.shown_since = question.map(|_| std::time::Instant::now());
            self.end_seen = false;
            self.refused = false;
        }
        if let Some(pending) = self.front() {
            let g = crate::screen::approval::geometry(pending, screen);
            self.scroll = self.scroll.min(g.max_scroll());
            self.end_seen |= g.shows_end(self.scroll);
        }
    }

    /// Every row of the shown question has been on screen.
    pub fn end_seen(&self) -> bool {
        self.end_seen && self.front_question().is_some_and(|q| self.shown == Some(q))
    }

    /// An approve key was refused because the end was not seen yet.
    pub fn refused(&self) -> bool {
        self.refused
    }

    /// May an approval take effect now? When not, remembers that it was
    /// tried, so the overlay says why nothing happened.
    pub(crate) fn may_approve(&mut self) -> bool {
        let ready = self.end_seen();
        self.refused = !ready;
        ready
    }

    /// May a key decide the hunk on screen? The first hunk once drawn; a
    /// later one once it has been on screen for [`HUNK_SETTLE`].
    pub fn hunk_ready(&self) -> bool {
        let Some(question) = self.front_question() else {
            return false;
        };
        self.shown == Some(question)
            && (question.1 == 0
                || self
                    .shown_since
                    .is_some_and(|since| since.elapsed() >= HUNK_SETTLE))
    }

    /// The front request and, for a hunk-by-hunk review, the hunk shown.
    pub fn front_question(&self) -> Option<(u64, usize)> {
        self.front().map(|p| {
            let hunk = match &p.subject {
                ApprovalSubject::Write(review) if review.per_hunk => review.current(),
                _ => 0,
            };
            (p.id, hunk)
        })
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Drops questions nobody waits for any more.
    pub fn prune(&mut self) {
        let before = self.pending.len();
        self.pending.retain(|p| !p.is_abandoned());
        if self.pending.len() != before && self.pending.is_empty() {
            self.reason = None;
        }
    }

    /// Answers the front request.
    pub fn answer_front(&mut self, decision: ApprovalDecision) -> bool {
        self.reason = None;
        self.scroll = 0;
        match self.pending.pop_front() {
            Some(pending) => {
                pending.answer(decision);
                true
            }
            None => false,
        }
    }

    /// Answers every waiting request the same way (switching to `auto`).
    pub fn answer_all(&mut self, decision: ApprovalDecision) {
        self.reason = None;
        self.scroll = 0;
        for pending in self.pending.drain(..) {
            pending.answer(decision.clone());
        }
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
    pub fn set_mode(&self, mode: ApprovalMode) {
        if mode != self.mode.get() {
            self.always_writes.store(false, Ordering::Relaxed);
        }
        self.mode.set(mode);
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
            if let Some(verdict) = broker.without_asking() {
                return verdict;
            }
            if broker.always_cells.load(Ordering::Relaxed) {
                return Approval::Allow;
            }
            let decision = broker.ask(ApprovalSubject::Cell(code)).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                broker.always_cells.store(true, Ordering::Relaxed);
            }
            verdict_of(decision)
        })
    }

    /// May this turn's cells call the model (`llm_query`)? Asked once a
    /// turn (`crate::subcalls` remembers the answer for the turn); the
    /// user's own running `%py` cell needs no question.
    pub fn approve_subcalls(&self, what: &str) -> BoxFuture<'static, Approval> {
        let broker = self.clone();
        let what = what.to_owned();
        Box::pin(async move {
            if broker.cell_owner.users_cell_runs() {
                return Approval::Allow;
            }
            if let Some(verdict) = broker.without_asking() {
                return verdict;
            }
            if broker.always_subcalls.load(Ordering::Relaxed) {
                return Approval::Allow;
            }
            let decision = broker.ask(ApprovalSubject::Subcalls(what)).await;
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

    async fn ask(
        &self,
        subject: ApprovalSubject,
    ) -> Result<ApprovalDecision, oneshot::error::RecvError> {
        let (pending, answer) = PendingApproval::new(subject);
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
            if let Some(verdict) = broker.without_asking() {
                return verdict;
            }
            if crate::kernel::lock(&broker.always_commands).contains(&command) {
                return Approval::Allow;
            }
            let decision = broker.ask(ApprovalSubject::Command(command.clone())).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                crate::kernel::lock(&broker.always_commands).insert(command);
            }
            verdict_of(decision)
        })
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
            match broker.without_asking() {
                Some(Approval::Allow) => return whole,
                Some(Approval::Deny(reason)) => return WriteVerdict::Deny(reason),
                None => {}
            }
            let per_hunk = mode == ApprovalMode::Review;
            if !per_hunk && broker.always_writes.load(Ordering::Relaxed) {
                return whole;
            }
            let review = super::write_review::WriteReviewState::new(&proposal, per_hunk);
            let decision = broker.ask(ApprovalSubject::Write(Box::new(review))).await;
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
        Box::pin(async move {
            // The user's own `%py` cell calling a tool it names.
            if users_own {
                return Approval::Allow;
            }
            if let Some(verdict) = broker.without_asking() {
                return verdict;
            }
            if crate::kernel::lock(&broker.always_tools).contains(&key) {
                return Approval::Allow;
            }
            let decision = broker.ask(subject).await;
            if matches!(decision, Ok(ApprovalDecision::AllowAlways)) {
                crate::kernel::lock(&broker.always_tools).insert(key);
            }
            verdict_of(decision)
        })
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

//! Recursive model calls from the kernel: `llm_query(prompt)` and
//! `llm_query_batched(prompts)` in a cell ask a model and return its text,
//! so the model's code can map a question over chunks of a big variable
//! and reduce the answers in Python; `rlm_query(prompt)` runs a nested
//! code-action loop in a kernel of its own (`nested`).
//!
//! Wiring: a front end builds one [`Subcalls`] (`Subcalls::new` with the
//! settings, the workspace, the session's provider, its [`Approvals`] and a
//! sink for [`SubcallEvent`]s), passes it to `kernel_setup::registry` (it
//! is the `llm` capability, whose actions are also the globals
//! `llm_query`/`llm_query_batched`/`rlm_query`), calls
//! [`Subcalls::begin_turn`] when a turn starts and [`Subcalls::record_to`]
//! once the conversation has a session file.
//!
//! The capability runs in the workbench, outside the kernel's sandbox: the
//! kernel's network confinement does not apply to it, on purpose: it only
//! reaches the configured model server. What bounds it instead: a sub-call
//! has no tools (it cannot run code; only `rlm_query` recurses, at most
//! `max_depth` deep), a prompt that holds text of a secrets file is refused
//! (`privacy`, the snapshot's rules) and the rest is redacted like session
//! files, every turn has a call and token allowance, calls run at most
//! `concurrency` at once and each within a timeout, an interrupted cell
//! aborts its calls, and in `ask` mode the first sub-call of a turn needs
//! the user's approval.

mod capability;
pub mod config;
mod events;
mod ledger;
mod metered;
mod nested;
mod privacy;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Semaphore;

pub use config::{Limits, SubcallSection};
use events::head;
pub use events::{SubcallCompleted, SubcallEvent, SubcallKind, SubcallStarted, SubcallStatus};
pub use nested::NestedKernel;

use crate::agent::provider::ModelProvider;
use crate::agent::turn::{AllowCells, CellApproval};
use crate::config::Settings;
use crate::kernel::caps::{AllowAll, ApprovalPolicy};
use crate::kernel::{CapabilityError, lock};
use crate::session::{SessionEvent, SessionWriter};
use ledger::Ledger;

/// Where sub-call events go (the app's channel, `exec`'s printer).
pub(crate) type SubcallSink = Arc<dyn Fn(SubcallEvent) + Send + Sync>;

/// A model that answers sub-calls, and the name events show for it.
#[derive(Clone)]
struct Target {
    provider: Arc<dyn ModelProvider>,
    label: String,
}

/// The shared state of the `llm` capability. Cheap to clone: the front end
/// keeps one (turn boundaries, session) and each kernel's registry another,
/// which also knows how deep `rlm_query` may still go from that kernel and
/// how to start the kernel of a nested loop.
#[derive(Clone)]
pub struct Subcalls {
    inner: Arc<Hub>,
    depth_left: u32,
    nested: Option<Arc<NestedKernel>>,
}

/// Who is asked: about the sub-calls of a turn (`calls`, once a turn), and
/// about each cell an `rlm_query` loop wants to run (`cells`, as the
/// agent's own cells are).
#[derive(Clone)]
pub struct Approvals {
    pub calls: Arc<dyn ApprovalPolicy>,
    pub cells: Arc<dyn CellApproval>,
}

impl Approvals {
    /// Nothing is asked (`exec`, tests).
    pub fn allow_all() -> Self {
        Self {
            calls: Arc::new(AllowAll),
            cells: Arc::new(AllowCells),
        }
    }
}

struct Hub {
    /// Who answers when a call names no model: `[subcalls] model`, else
    /// the session's provider; `Err` says why there is none.
    default: Result<Target, String>,
    /// Settings a per-call `model=` provider is built from.
    settings: Settings,
    /// Where the secrets files a prompt must not quote are looked for.
    workspace: PathBuf,
    /// The last look at them and when it was taken (see `secret_files`).
    secrets: Mutex<Option<(Instant, Arc<privacy::SecretFiles>)>>,
    limits: Limits,
    slots: Semaphore,
    ledger: Ledger,
    approvals: Approvals,
    /// Held while the user is asked, so concurrent first calls ask once.
    asking: tokio::sync::Mutex<()>,
    sink: Option<SubcallSink>,
    session: Mutex<Option<SessionWriter>>,
    next_id: AtomicU64,
    /// Providers built for a `model=` argument, by name.
    named: Mutex<HashMap<String, Target>>,
}

impl Subcalls {
    /// Sub-calls answered by `[subcalls] model` when set (on its own
    /// `base_url`/`api_key_env`, else the session's), else by `session`;
    /// `approvals.calls` is asked before the first sub-call of each turn;
    /// every [`SubcallEvent`] goes to `sink`; prompts quoting a secrets
    /// file of `workspace` are refused.
    pub fn new(
        settings: &Settings,
        workspace: &Path,
        session: Option<Arc<dyn ModelProvider>>,
        approvals: Approvals,
        sink: Option<SubcallSink>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let default = match &settings.subcalls.model {
            Some(model) => build(settings, model, env),
            None => session
                .map(|provider| Target {
                    label: provider.label(),
                    provider,
                })
                .ok_or_else(|| {
                    "no model is configured, so llm_query has no one to ask \
                     (set [model] name, or [subcalls] model)"
                        .to_owned()
                }),
        };
        let limits = settings.subcalls.limits();
        Self {
            inner: Arc::new(Hub {
                default,
                settings: settings.clone(),
                workspace: workspace.to_path_buf(),
                secrets: Mutex::default(),
                limits,
                slots: Semaphore::new(limits.concurrency),
                ledger: Ledger::default(),
                approvals,
                asking: tokio::sync::Mutex::new(()),
                sink,
                session: Mutex::new(None),
                next_id: AtomicU64::new(0),
                named: Mutex::default(),
            }),
            depth_left: limits.max_depth,
            nested: None,
        }
    }

    /// The capability for one kernel: `rlm_query` there starts its nested
    /// loop's kernel like `nested` says (`kernel_setup::registry`).
    pub fn in_kernel(&self, nested: NestedKernel) -> Self {
        Self {
            nested: Some(Arc::new(nested)),
            ..self.clone()
        }
    }

    /// A new turn: the call and token allowances start again, and in `ask`
    /// mode the next sub-call asks again (unless the user said "always").
    pub fn begin_turn(&self) {
        self.inner.ledger.begin_turn();
    }

    /// Records each finished sub-call in this session file (`None`: in
    /// none, until the next conversation's session starts — after `/new`).
    pub fn record_to(&self, session: Option<SessionWriter>) {
        *lock(&self.inner.session) = session;
    }

    /// Calls and tokens the current turn's sub-calls used.
    pub fn used(&self) -> (u32, u64) {
        self.inner.ledger.used()
    }
}

/// A provider for `model` on the sub-call server (`[subcalls] base_url` and
/// `api_key_env`, else the session's), through the one place providers
/// are chosen (`agent::setup`).
fn build(
    settings: &Settings,
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Target, String> {
    let mut sub = settings.clone();
    sub.model = Some(model.to_owned());
    if let Some(url) = &settings.subcalls.base_url {
        sub.base_url = Some(url.clone());
    }
    if let Some(key_env) = &settings.subcalls.api_key_env {
        sub.api_key_env = key_env.clone();
    }
    match crate::agent::setup::from_settings(&sub, env) {
        Ok(Some(provider)) => Ok(Target {
            label: provider.label(),
            provider,
        }),
        Ok(None) => Err(format!("no provider for the sub-call model {model:?}")),
        Err(error) => Err(format!("the sub-call model {model:?}: {error}")),
    }
}

impl Hub {
    /// The model a call asks: `model=` when given, else the default.
    fn target(&self, model: Option<&str>) -> Result<Target, CapabilityError> {
        let Some(model) = model else {
            return self.default.clone().map_err(CapabilityError::Failed);
        };
        let mut named = lock(&self.named);
        if let Some(target) = named.get(model) {
            return Ok(target.clone());
        }
        let target = build(&self.settings, model, &|name| std::env::var(name).ok())
            .map_err(CapabilityError::InvalidArgument)?;
        named.insert(model.to_owned(), target.clone());
        Ok(target)
    }

    /// Takes `n` calls from the turn's allowance and, in `ask` mode for
    /// the first sub-call of a turn, waits for the user (a refusal gives
    /// the calls back); `calls` says what is about to be made.
    async fn take_and_approve(
        &self,
        target: &Target,
        n: u32,
        calls: &str,
        first: &str,
    ) -> Result<(), CapabilityError> {
        self.ledger.take_calls(n, &self.limits)?;
        let approved = self.approve(target, calls, first).await;
        if approved.is_err() {
            self.ledger.give_back(n);
        }
        approved
    }

    async fn approve(
        &self,
        target: &Target,
        calls: &str,
        first: &str,
    ) -> Result<(), CapabilityError> {
        if self.ledger.approved() {
            return Ok(());
        }
        let _asking = self.asking.lock().await;
        if self.ledger.approved() {
            return Ok(());
        }
        let limits = &self.limits;
        // Three short lines: the overlay shows them as they are, uncut.
        let first_line: String = first
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(120)
            .collect();
        let what = format!(
            "{calls} to {}\n\
             this turn: at most {} calls and {} tokens\n\
             first prompt: {first_line}",
            target.label, limits.max_calls_per_turn, limits.max_tokens_per_turn,
        );
        match self.approvals.calls.check(&what).await {
            crate::kernel::caps::Approval::Allow => {
                self.ledger.approve();
                Ok(())
            }
            crate::kernel::caps::Approval::Deny(reason) => Err(CapabilityError::PermissionDenied(
                format!("sub-calls refused: {reason}"),
            )),
        }
    }

    fn emit(&self, event: SubcallEvent) {
        if let SubcallEvent::Completed(done) = &event
            && let Some(session) = lock(&self.session).as_mut()
            && let Err(error) = session.append(&SessionEvent::Subcall(done.clone()))
        {
            tracing::warn!(%error, "a sub-call was not recorded in the session");
        }
        if let Some(sink) = &self.sink {
            sink(event);
        }
    }
}

/// One sub-call on its way: sends `Started` when made and exactly one
/// `Completed`, a cancelled one if it is dropped unfinished (the cell was
/// interrupted, which aborts the call's task).
struct InFlight<'a> {
    hub: &'a Hub,
    started: Instant,
    done: Option<SubcallCompleted>,
}

impl<'a> InFlight<'a> {
    fn start(
        hub: &'a Hub,
        kind: SubcallKind,
        exec_id: Option<u64>,
        model: &str,
        prompt: &str,
    ) -> Self {
        let id = hub.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let prompt_head = head(prompt);
        hub.emit(SubcallEvent::Started(SubcallStarted {
            id,
            kind,
            exec_id,
            model: model.to_owned(),
            prompt_head: prompt_head.clone(),
            prompt_chars: prompt.chars().count(),
        }));
        Self {
            hub,
            started: Instant::now(),
            // What is sent if nothing else is: the cancelled outcome.
            done: Some(SubcallCompleted {
                id,
                kind,
                exec_id,
                model: model.to_owned(),
                prompt_head,
                status: SubcallStatus::Cancelled,
                answer_head: String::new(),
                answer_chars: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
                elapsed_ms: 0,
                error: None,
            }),
        }
    }

    fn finish(
        mut self,
        status: SubcallStatus,
        answer: &str,
        tokens: (u64, u64),
        error: Option<String>,
    ) {
        if let Some(done) = &mut self.done {
            done.status = status;
            done.answer_head = head(answer);
            done.answer_chars = answer.chars().count();
            (done.prompt_tokens, done.completion_tokens) = tokens;
            done.error = error;
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(mut done) = self.done.take() {
            done.elapsed_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.hub.emit(SubcallEvent::Completed(done));
        }
    }
}

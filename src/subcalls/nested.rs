//! `rlm_query(prompt)`: a nested code-action loop. The sub-call model gets
//! the `code_action` tool and a kernel of its own — a fresh one, started
//! like the calling kernel (same workspace, sandbox, `shell` policy and
//! editor links, its own conversation for `context`) — and the loop
//! (`agent::turn::run_turn`, the agent's own) runs until it answers in
//! text. Its cells are approved like the agent's, its model calls come out
//! of the turn's allowance, and its kernel's `llm` has one level of depth
//! less, so recursion ends at `[subcalls] max_depth`.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{Mutex, mpsc, watch};

use super::metered::{Metered, Spent};
use super::{Hub, InFlight, SubcallKind, SubcallStatus, Subcalls};
use crate::agent::conversation::Conversation;
use crate::agent::provider::ChatMessage;
use crate::agent::turn::{TurnDeps, TurnOutcome};
use crate::agent_session::{AgentSession, TurnInput};
use crate::context::{SharedContext, snapshot_channel};
use crate::kernel::CapabilityError;
use crate::kernel::caps::ApprovalPolicy;
use crate::kernel_launch::{KernelLaunch, Variables};
use crate::kernel_setup::FsLinks;
use crate::sandbox::Confinement;
use crate::tokens::ContextWindow;

/// How the kernel of a nested loop is started: as the kernel whose cell
/// called `rlm_query` was (`kernel_setup::registry` fills it in).
#[derive(Clone)]
pub struct NestedKernel {
    pub root: PathBuf,
    pub confinement: Confinement,
    pub shell_policy: Arc<dyn ApprovalPolicy>,
    pub fs_links: Option<FsLinks>,
}

impl Hub {
    /// Runs one nested loop for `prompt` and returns its final answer.
    pub(super) async fn ask_nested(
        self: &Arc<Self>,
        from: &Subcalls,
        prompt: String,
        options: &super::capability::Options,
        exec_id: Option<u64>,
    ) -> Result<String, CapabilityError> {
        let max_depth = self.limits.max_depth;
        if from.depth_left == 0 {
            return Err(CapabilityError::SubcallLimit(format!(
                "rlm_query cannot nest deeper than {max_depth} ([subcalls] max_depth); \
                 llm_query still works here"
            )));
        }
        let Some(nested) = from.nested.clone() else {
            return Err(CapabilityError::Failed(
                "rlm_query has no kernel to run its loop in here".to_owned(),
            ));
        };
        let target = self.target(options.model.as_deref())?;
        let prompt = match &options.system {
            Some(system) => format!("{system}\n\n{prompt}"),
            None => prompt,
        };
        self.refuse_secrets(std::slice::from_ref(&prompt), options)
            .await?;
        let what = "a nested agent loop (rlm_query; its cells are asked about as the agent's)";
        self.take_and_approve(&target, 1, what, &prompt).await?;
        let prompt = crate::agent::provider::redact::redact_known(&prompt);
        let flight = InFlight::start(self, SubcallKind::RlmQuery, exec_id, &target.label, &prompt);
        let child = Subcalls {
            inner: Arc::clone(self),
            depth_left: from.depth_left - 1,
            nested: None,
        };
        let spent = Arc::new(Spent::default());
        let metered = Metered {
            inner: target.provider.clone(),
            hub: Arc::clone(self),
            max_tokens: options.max_tokens.or(self.limits.max_tokens),
            spent: Arc::clone(&spent),
        };
        let answer = self
            .run_loop(&nested, child, Arc::new(metered), &prompt)
            .await;
        let tokens = (
            spent.prompt_tokens.load(Ordering::Relaxed),
            spent.completion_tokens.load(Ordering::Relaxed),
        );
        match answer {
            Ok(text) => {
                flight.finish(SubcallStatus::Ok, &text, tokens, None);
                Ok(text)
            }
            Err(message) => {
                flight.finish(SubcallStatus::Failed, "", tokens, Some(message.clone()));
                if spent.limited.load(Ordering::Relaxed) {
                    Err(CapabilityError::SubcallLimit(message))
                } else {
                    Err(CapabilityError::Failed(message))
                }
            }
        }
    }

    /// Starts the nested kernel, runs the loop, ends the kernel.
    async fn run_loop(
        &self,
        nested: &NestedKernel,
        child: Subcalls,
        provider: Arc<Metered>,
        prompt: &str,
    ) -> Result<String, String> {
        let context = SharedContext::default();
        let (snapshot_tx, snapshot_rx) = snapshot_channel();
        let settings = &self.settings;
        let (kernel, _kernel_events) = KernelLaunch {
            settings,
            root: &nested.root,
            confinement: &nested.confinement,
            shell_policy: Arc::clone(&nested.shell_policy),
            fs_links: nested.fs_links.as_ref(),
            context: Some(&(context.clone(), snapshot_rx)),
            subcalls: Some(&child),
            // The calling kernel's servers are not started again per loop.
            mcp: None,
            variables: Variables::NotShown,
            keep: None,
        }
        .start()
        .map_err(|e| format!("rlm_query could not set up its kernel: {e}"))?;
        let session = AgentSession {
            deps: TurnDeps {
                provider,
                runner: Arc::new(kernel.clone()),
                approval: Arc::clone(&self.approvals.cells),
                snapshot_tx,
                max_steps: self.limits.max_steps,
                cell_timeout: settings.cell_timeout_secs.map(Duration::from_secs),
                window: ContextWindow::resolve(
                    settings.context_window,
                    None,
                    settings.model.as_deref().unwrap_or_default(),
                    settings.reserve_output,
                    settings.compact_at,
                ),
                // A loop inside a cell: the calling turn's hooks saw the
                // prompt and will see the cell's result; its own tools go
                // through the approvals, which run `PreToolUse`.
                hooks: crate::hooks::Hooks::default(),
            },
            counter: None,
            // The calling turn's allowances hold for the loop's sub-calls.
            subcalls: None,
            mcp: None,
            // A throwaway conversation: the calling cell's result is what
            // the session keeps.
            store: None,
        };
        let conversation = Mutex::new(Conversation::new(context, None));
        let input = TurnInput {
            prompt: prompt.to_owned(),
            snapshot: None,
            instructions: None,
            profile: None,
        };
        // Nobody watches the nested turn's events or cancels it: the
        // calling cell's interrupt drops this whole future, kernel included.
        let (events, _unread) = mpsc::unbounded_channel();
        let (_never, cancel) = watch::channel(false);
        let end = session
            .run_turn(&conversation, input, &events, cancel, &|_| {})
            .await;
        kernel.shutdown().await;
        let conversation = conversation.into_inner();
        match end.outcome {
            TurnOutcome::Completed { steps, .. } => {
                let answer = last_answer(conversation.messages());
                if answer.is_empty() {
                    Err(format!(
                        "the rlm_query loop stopped after {steps} model calls without an \
                         answer ([subcalls] max_steps)"
                    ))
                } else {
                    Ok(answer)
                }
            }
            TurnOutcome::Failed(message) => Err(format!("the rlm_query loop failed: {message}")),
            TurnOutcome::Cancelled => Err("the rlm_query loop was cancelled".to_owned()),
        }
    }
}

/// The loop's final text (empty when it stopped at its step limit without
/// one).
fn last_answer(messages: &[ChatMessage]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } if tool_calls.is_empty() => content.clone(),
            _ => None,
        })
        .unwrap_or_default()
}

//! The hooks in front of the approvals of a front end that can ask no one
//! (`exec`): a `PreToolUse` refusal refuses, a hook that asks (or fails)
//! refuses too, since nobody is there to answer, and otherwise the mode's
//! own policy decides. `PostToolUse` hears of what ran. The workbench's
//! broker applies the same [`Gate`] with a question where this refuses
//! (`workbench::approvals`).

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Gate, HookEvent, Hooks, ToolUse};
use crate::agent::turn::{CellApproval, Verdict};
use crate::kernel::caps::{Approval, ApprovalPolicy, WriteProposal, WriteReview, WriteVerdict};
use crate::mcp::{ToolCall, ToolCallApproval};

/// `inner`, with the hooks asked first.
pub struct Gated<T: ?Sized> {
    pub hooks: Hooks,
    pub inner: Arc<T>,
}

/// Writes are made as proposed once the hooks let them (`exec` shows no
/// diff to anyone).
pub struct WriteAll;

/// A refusal when the hooks refuse or want a question nobody can answer.
fn refusal(gate: Gate) -> Option<String> {
    match gate {
        Gate::Deny(reason) => Some(reason),
        Gate::Ask(reason) => Some(format!(
            "{reason}; nobody can be asked here (`hello-tui exec`), so it was refused"
        )),
        Gate::Allow | Gate::Proceed => None,
    }
}

impl ApprovalPolicy for Gated<dyn ApprovalPolicy> {
    fn check(&self, command: &str) -> BoxFuture<'static, Approval> {
        let hooks = self.hooks.clone();
        let inner = Arc::clone(&self.inner);
        let command = command.to_owned();
        Box::pin(async move {
            match refusal(hooks.pre_tool_use(|| ToolUse::shell(&command)).await) {
                Some(reason) => Approval::Deny(reason),
                None => inner.check(&command).await,
            }
        })
    }

    fn ran(&self, command: &str, result: &Value) -> BoxFuture<'static, ()> {
        if !self.hooks.wants(HookEvent::PostToolUse) {
            return Box::pin(async {});
        }
        let hooks = self.hooks.clone();
        let tool = ToolUse::shell(command);
        let result = result.clone();
        Box::pin(async move { hooks.post_tool_use(&tool, &result).await })
    }
}

/// `inner` (the sub-calls' policy), with the hooks asked first about a
/// turn's `llm_query` sub-calls.
pub struct GatedSubcalls {
    pub hooks: Hooks,
    pub inner: Arc<dyn ApprovalPolicy>,
}

impl ApprovalPolicy for GatedSubcalls {
    fn check(&self, what: &str) -> BoxFuture<'static, Approval> {
        let hooks = self.hooks.clone();
        let inner = Arc::clone(&self.inner);
        let what = what.to_owned();
        Box::pin(async move {
            match refusal(hooks.pre_tool_use(|| ToolUse::subcalls(&what)).await) {
                Some(reason) => Approval::Deny(reason),
                None => inner.check(&what).await,
            }
        })
    }
}

impl ToolCallApproval for Gated<dyn ToolCallApproval> {
    fn approve_tool_call(&self, call: &ToolCall) -> BoxFuture<'static, Approval> {
        let hooks = self.hooks.clone();
        let inner = Arc::clone(&self.inner);
        let call = call.clone();
        Box::pin(async move {
            match refusal(hooks.pre_tool_use(|| ToolUse::mcp(&call)).await) {
                Some(reason) => Approval::Deny(reason),
                None => inner.approve_tool_call(&call).await,
            }
        })
    }

    fn ran(&self, call: &ToolCall, result: &Value) -> BoxFuture<'static, ()> {
        if !self.hooks.wants(HookEvent::PostToolUse) {
            return Box::pin(async {});
        }
        let hooks = self.hooks.clone();
        let tool = ToolUse::mcp(call);
        let result = result.clone();
        Box::pin(async move { hooks.post_tool_use(&tool, &result).await })
    }
}

impl CellApproval for Gated<dyn CellApproval> {
    fn approve_cell(&self, code: &str) -> BoxFuture<'static, Verdict> {
        let hooks = self.hooks.clone();
        let inner = Arc::clone(&self.inner);
        let code = code.to_owned();
        Box::pin(async move {
            match refusal(hooks.pre_tool_use(|| ToolUse::cell(&code)).await) {
                Some(reason) => Verdict::Deny(reason),
                None => inner.approve_cell(&code).await,
            }
        })
    }
}

impl WriteReview for Gated<WriteAll> {
    fn review(&self, proposal: WriteProposal) -> BoxFuture<'static, WriteVerdict> {
        let hooks = self.hooks.clone();
        Box::pin(async move {
            let tool = || ToolUse::write(&proposal.path, &proposal.after, &diff_of(&proposal));
            match refusal(hooks.pre_tool_use(tool).await) {
                Some(reason) => WriteVerdict::Deny(reason),
                None => WriteVerdict::Write {
                    text: proposal.after,
                    rejected: 0,
                },
            }
        })
    }

    fn hears_written(&self) -> bool {
        self.hooks.wants(HookEvent::PostToolUse)
    }

    fn written(&self, path: PathBuf, text: Vec<u8>) -> BoxFuture<'static, ()> {
        written(&self.hooks, path, text)
    }
}

/// `PostToolUse` for a write that was made.
pub(crate) fn written(hooks: &Hooks, path: PathBuf, text: Vec<u8>) -> BoxFuture<'static, ()> {
    let hooks = hooks.clone();
    Box::pin(async move {
        let tool = ToolUse::write(&path, &text, "");
        let response = serde_json::json!({ "filePath": path.to_string_lossy(), "success": true });
        hooks.post_tool_use(&tool, &response).await;
    })
}

/// The proposal's unified diff, as a hook reads it.
pub(crate) fn diff_of(proposal: &WriteProposal) -> String {
    let before = match &proposal.before {
        crate::kernel::caps::Prior::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        _ => String::new(),
    };
    let after = String::from_utf8_lossy(&proposal.after);
    crate::text_diff::unified(&before, &after, Some(&proposal.user_path), 3)
}

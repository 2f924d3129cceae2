//! The `context` object in the kernel's globals: a [`Capability`] over the
//! [`SharedContext`], answering with [`super::capability`]'s pure functions.
//!
//! Actions that need the runtime state ask the kernel through
//! `CallContext.runtime.describe()`, which the driver answers on its control
//! thread even while the calling cell is blocked on this very call — so
//! `context.current()` inside a cell completes instead of deadlocking as it
//! did in the original design.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::capability;
use super::shared::{PublishedSnapshot, SharedContext};
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, RuntimeState,
};

pub struct ContextCapability {
    context: SharedContext,
    snapshot: watch::Receiver<Option<PublishedSnapshot>>,
}

impl ContextCapability {
    pub fn new(
        context: SharedContext,
        snapshot: watch::Receiver<Option<PublishedSnapshot>>,
    ) -> Self {
        Self { context, snapshot }
    }
}

/// `{alive, variables: [{name, type, kind, summary, preview}], truncated}`,
/// the shape `context.get_runtime_state()` returns.
pub(crate) fn runtime_state_json(state: &RuntimeState) -> Value {
    let variables: Vec<Value> = state
        .variables
        .iter()
        .map(|v| {
            json!({
                "name": v.name,
                "type": v.type_name,
                "kind": v.kind,
                "summary": v.summary,
                "preview": v.preview,
            })
        })
        .collect();
    json!({ "alive": state.alive, "variables": variables, "truncated": state.truncated })
}

impl Capability for ContextCapability {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "context".into(),
            description: "The conversation and the runtime state, as data you can query.".into(),
            actions: vec![
                ActionSpec::new(
                    "current",
                    "All messages plus the runtime state: {messages, runtime_state}.",
                ),
                ActionSpec::new(
                    "search",
                    "Ranked (BM25) search over user, assistant and tool messages: {results: [{index, role, snippet, score}], total}.",
                )
                .param("query")
                .param_default("limit", json!(10))
                .param_default("role", Value::Null),
                ActionSpec::new(
                    "slice",
                    "Messages [start:end] with Python slice semantics: {messages, total}.",
                )
                .param("start")
                .param_default("end", Value::Null),
                ActionSpec::new(
                    "summarize",
                    "{message_counts, total_messages, runtime_variables, runtime_alive}.",
                ),
                ActionSpec::new("get_runtime_state", "The kernel's variables: {alive, variables}.")
                    .alias("getRuntimeState"),
                ActionSpec::new(
                    "snapshot",
                    "The latest runtime-context snapshot: {markdown, json}.",
                ),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let context = self.context.clone();
        let action = action.to_owned();
        let snapshot = self.snapshot.borrow().clone();
        Box::pin(async move {
            match action.as_str() {
                "snapshot" => Ok(match snapshot {
                    Some(s) => json!({ "markdown": s.markdown, "json": s.json }),
                    None => json!({ "markdown": null, "json": null }),
                }),
                "get_runtime_state" => Ok(runtime_state_json(&describe(&ctx).await)),
                "current" | "summarize" => {
                    let runtime = runtime_state_json(&describe(&ctx).await);
                    context.read(|c| call_pure(c, &action, &args, runtime))
                }
                _ => context.read(|c| call_pure(c, &action, &args, Value::Null)),
            }
        })
    }
}

/// The live state; a dead or unreachable kernel reads as "not alive".
async fn describe(ctx: &CallContext) -> RuntimeState {
    ctx.runtime
        .describe()
        .await
        .unwrap_or_else(|_| RuntimeState::dead())
}

fn call_pure(
    context: &super::AgentContext,
    action: &str,
    args: &Value,
    runtime: Value,
) -> Result<Value, CapabilityError> {
    capability::call(context, action, args, runtime)
        .map_err(|e| CapabilityError::InvalidArgument(e.to_string()))
}

//! Who decides whether a cell may call an MCP tool. In the workbench it is
//! the approval broker (`ask` mode asks per tool: once, always, deny);
//! `exec` allows or refuses by its `--approval`, as for `shell.run`.

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::kernel::caps::{AllowAll, Approval, DenyAll};

/// One call a cell wants to make, exactly as it would be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub server: String,
    /// The tool's name as the server knows it.
    pub tool: String,
    /// The tool's Python name (`get_sum` for `get-sum`): what a user's
    /// cell that names the tool spells (`mcp.server.get_sum(…)`).
    pub called_as: String,
    pub arguments: Value,
}

impl ToolCall {
    /// What the approval overlay shows: server, tool and the arguments as
    /// indented JSON.
    pub fn text(&self) -> String {
        let arguments = serde_json::to_string_pretty(&self.arguments)
            .unwrap_or_else(|_| self.arguments.to_string());
        format!(
            "server:    {}\ntool:      {}\narguments: {arguments}",
            self.server, self.tool
        )
    }
}

pub trait ToolCallApproval: Send + Sync + 'static {
    fn approve_tool_call(&self, call: &ToolCall) -> BoxFuture<'static, Approval>;

    /// The call was made and answered `result` (`PostToolUse` hooks hear
    /// of it); nothing by default.
    fn ran(&self, _call: &ToolCall, _result: &Value) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

impl ToolCallApproval for AllowAll {
    fn approve_tool_call(&self, _call: &ToolCall) -> BoxFuture<'static, Approval> {
        Box::pin(async { Approval::Allow })
    }
}

impl ToolCallApproval for DenyAll {
    fn approve_tool_call(&self, _call: &ToolCall) -> BoxFuture<'static, Approval> {
        let reason = self.reason.clone();
        Box::pin(async move { Approval::Deny(reason) })
    }
}

//! The kernel's `mcp` capability. The driver's `mcp` object
//! (`assets/kernel/hello_tui_kernel/mcp.py`) turns attribute access into
//! these actions: `servers()`, `tool(server, tool)` for `help()` and the
//! function's signature, and `call(server, tool, arguments)`.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::approval::{ToolCall, ToolCallApproval};
use super::directory::SETTLE_WAIT;
use super::servers::McpServers;
use super::tools::python_value;
use super::{McpError, ToolInfo};
use crate::kernel::caps::Approval;
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, arg_str,
};

/// JSON-RPC's "invalid params": the arguments did not fit the schema.
const INVALID_PARAMS: i32 = -32602;

#[derive(Clone)]
pub struct McpCapability {
    servers: McpServers,
    approval: Arc<dyn ToolCallApproval>,
}

impl McpCapability {
    pub fn new(servers: McpServers, approval: Arc<dyn ToolCallApproval>) -> Self {
        Self { servers, approval }
    }

    /// The servers as they stand once none is still starting (waiting at
    /// most [`SETTLE_WAIT`]): a cell that asks right after the kernel
    /// started sees their tools, not "starting".
    async fn servers_listing(&self) -> Value {
        self.servers.directory().settled(SETTLE_WAIT).await;
        self.servers.notice_crashes();
        let listed: Vec<Value> = self
            .servers
            .directory()
            .servers()
            .into_iter()
            .map(|server| {
                let tools: Vec<&str> = server
                    .tools
                    .iter()
                    .map(|t| t.python_name.as_str())
                    .collect();
                json!({
                    "name": server.name,
                    "state": server.state,
                    "tools": tools,
                    "error": server.error,
                    "pid": server.pid,
                })
            })
            .collect();
        Value::Array(listed)
    }

    async fn find_tool(&self, server: &str, tool: &str) -> Result<(usize, ToolInfo), McpError> {
        let slot = self.servers.find(server)?;
        let tools = self.servers.tools(slot).await?;
        match tools.iter().find(|t| t.answers_to(tool)) {
            Some(found) => Ok((slot, found.clone())),
            None => Err(McpError::UnknownTool {
                server: server.to_owned(),
                tool: tool.to_owned(),
                known: tools.into_iter().map(|t| t.python_name).collect(),
            }),
        }
    }

    async fn call_tool(&self, args: &Value) -> Result<Value, CapabilityError> {
        let server = arg_str(args, "server")?;
        let tool = arg_str(args, "tool")?;
        let arguments = match args.get("arguments") {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                return Err(CapabilityError::InvalidArgument(
                    "a tool's arguments are keyword arguments (a dict)".to_owned(),
                ));
            }
        };
        let (slot, info) = self.find_tool(server, tool).await.map_err(to_capability)?;
        let call = ToolCall {
            server: server.to_owned(),
            tool: info.name.clone(),
            called_as: info.python_name.clone(),
            arguments: Value::Object(arguments.clone()),
        };
        if let Approval::Deny(reason) = self.approval.approve_tool_call(&call).await {
            return Err(CapabilityError::PermissionDenied(format!(
                "tool call refused: {reason}"
            )));
        }
        let result = self
            .servers
            .call(slot, &info.name, arguments)
            .await
            .map_err(to_capability)?;
        let value = python_value(&result).map_err(to_capability)?;
        self.approval.ran(&call, &value).await;
        Ok(value)
    }
}

impl Capability for McpCapability {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "mcp".to_owned(),
            description: "Tools of the configured MCP servers: mcp.<server>.<tool>(**kwargs)."
                .to_owned(),
            actions: vec![
                ActionSpec::new(
                    "servers",
                    "The configured MCP servers: [{name, state, tools, error, pid}].",
                ),
                ActionSpec::new(
                    "tool",
                    "One tool's {name, python_name, description, input_schema}.",
                )
                .param("server")
                .param("tool"),
                ActionSpec::new(
                    "call",
                    "Call a tool; returns its structured result, else its content.",
                )
                .param("server")
                .param("tool")
                .param_default("arguments", json!({})),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let cap = self.clone();
        let action = action.to_owned();
        Box::pin(async move {
            match action.as_str() {
                "servers" => Ok(cap.servers_listing().await),
                "tool" => {
                    let server = arg_str(&args, "server")?;
                    let tool = arg_str(&args, "tool")?;
                    let (_, info) = cap.find_tool(server, tool).await.map_err(to_capability)?;
                    serde_json::to_value(info).map_err(|e| CapabilityError::Failed(e.to_string()))
                }
                "call" => cap.call_tool(&args).await,
                other => Err(CapabilityError::no_action("mcp", other)),
            }
        })
    }
}

/// The Python exception for each failure: a refused argument is a
/// `ValueError`, a name that is not there a `LookupError`-like `KeyError`
/// (the driver turns it into `AttributeError`), the rest `RuntimeError`
/// with the server's own message.
fn to_capability(error: McpError) -> CapabilityError {
    match error {
        McpError::UnknownServer { .. } | McpError::UnknownTool { .. } => CapabilityError::Os {
            python_type: "KeyError",
            message: error.to_string(),
        },
        McpError::Rpc {
            code: INVALID_PARAMS,
            ..
        } => CapabilityError::InvalidArgument(error.to_string()),
        other => CapabilityError::Failed(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON-RPC error is an exception with the server's message, as an
    /// `isError` result is (that one is tested against the real server).
    #[test]
    fn json_rpc_errors_become_python_exceptions_with_the_servers_message() {
        let invalid = to_capability(McpError::Rpc {
            code: INVALID_PARAMS,
            message: "a must be a number".into(),
        });
        assert_eq!(invalid.python_type(), "ValueError");
        assert!(invalid.to_string().contains("a must be a number"));
        let other = to_capability(McpError::Rpc {
            code: -32603,
            message: "disk on fire".into(),
        });
        assert_eq!(other.python_type(), "RuntimeError");
        assert_eq!(other.to_string(), "disk on fire (JSON-RPC error -32603)");
        let unknown = to_capability(McpError::UnknownServer {
            name: "gh".into(),
            known: vec!["everything".into()],
        });
        assert_eq!(
            unknown.python_type(),
            "KeyError",
            "the driver makes it AttributeError"
        );
    }
}

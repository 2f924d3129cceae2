//! MCP servers as a kernel capability, the code-action way: a cell calls
//! `mcp.<server>.<tool>(**args)` and gets Python data back, instead of the
//! model getting one more tool per MCP tool.
//!
//! Wiring: `config` reads `[[mcp.servers]]`; `kernel_setup::add_mcp` builds
//! an [`McpServers`] per kernel (same root and `Confinement` as the kernel
//! and `shell.run`), starts them, and registers [`McpCapability`] as `mcp`
//! with a [`ToolCallApproval`] (the workbench's approval broker). The
//! front end keeps one [`McpDirectory`] for its lifetime; the system prompt
//! reads its tool lines (`Conversation::set_kernel_tools`). The Python side
//! is `assets/kernel/hello_tui_kernel/mcp.py`.

mod approval;
mod capability;
mod config;
mod connection;
mod directory;
mod servers;
mod tools;

pub use approval::{ToolCall, ToolCallApproval};
pub use capability::McpCapability;
pub use config::{McpConfig, McpServerConfig, ServerName, Transport};
pub use directory::{McpDirectory, SETTLE_WAIT, ServerListing, ServerState};
pub use servers::McpServers;
pub use tools::ToolInfo;

use std::time::Duration;

/// What can go wrong with a server or a call; each becomes the Python
/// exception `McpCapability` maps it to.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("no MCP server named `{name}` (configured: {})", known.join(", "))]
    UnknownServer { name: String, known: Vec<String> },
    #[error("MCP server `{server}` has no tool `{tool}` (it has: {})", known.join(", "))]
    UnknownTool {
        server: String,
        tool: String,
        known: Vec<String>,
    },
    #[error("could not start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("the server did not complete the MCP handshake: {0}")]
    Handshake(String),
    #[error("the server did not start within {} s", .0.as_secs())]
    StartTimeout(Duration),
    #[error("{0}")]
    Closed(String),
    /// A JSON-RPC error response (`-32602` invalid params, …).
    #[error("{message} (JSON-RPC error {code})")]
    Rpc { code: i32, message: String },
    /// The tool ran and reported an error (`isError: true`).
    #[error("{0}")]
    Tool(String),
    #[error("unexpected answer from the server: {0}")]
    Protocol(String),
}

//! One running MCP server: the child spawned under the kernel's
//! [`Confinement`] (as `shell.run` and the language servers are), its
//! stderr drained into the log, and the protocol spoken by the official
//! SDK (`rmcp`) over the child's stdio: `initialize` with version
//! negotiation, `notifications/initialized`, `tools/list` (every page),
//! `tools/call`.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use super::McpError;
use super::config::McpServerConfig;
use super::tools::ToolInfo;
use crate::sandbox::Confinement;

/// The last line a server wrote to stderr: what an error about it quotes.
type LastWords = Arc<Mutex<Option<String>>>;

pub struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    child: Child,
    last_words: LastWords,
    pub tools: Vec<ToolInfo>,
}

impl Connection {
    /// Spawns the server in `root` and completes the handshake and the
    /// tool listing within `timeout`.
    pub async fn start(
        config: &McpServerConfig,
        root: &Path,
        confinement: &Confinement,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let spawn_error = |source| McpError::Spawn {
            command: config.command.clone(),
            source,
        };
        let mut command = Command::new(&config.command);
        command
            .args(&config.args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // The allowlisted environment first (apply replaces it), then what
        // the user gave this server alone.
        confinement
            .apply(command.as_std_mut())
            .map_err(spawn_error)?;
        command.envs(&config.env);
        let mut child = command.spawn().map_err(spawn_error)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(McpError::Closed(
                "the server's pipes are unavailable".into(),
            ));
        };
        let last_words = LastWords::default();
        tokio::spawn(drain_stderr(
            config.name.to_string(),
            stderr,
            Arc::clone(&last_words),
        ));
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("hello-tui", env!("CARGO_PKG_VERSION")),
        );
        let started = async {
            let service = client
                .serve((stdout, stdin))
                .await
                .map_err(|e| McpError::Handshake(e.to_string()))?;
            let tools = service
                .list_all_tools()
                .await
                .map_err(|e| from_service(e, &last_words))?;
            Ok::<_, McpError>((service, tools))
        };
        let (service, tools) = match tokio::time::timeout(timeout, started).await {
            Ok(Ok(started)) => started,
            Ok(Err(error)) => return Err(with_last_words(error, &last_words)),
            Err(_) => {
                return Err(with_last_words(
                    McpError::StartTimeout(timeout),
                    &last_words,
                ));
            }
        };
        let tools = tools
            .into_iter()
            .filter_map(|tool| serde_json::to_value(tool).ok())
            .map(|tool| ToolInfo::from_json(&tool))
            .collect();
        if let Some(info) = service.peer_info() {
            tracing::info!(
                server = %config.name,
                protocol = %info.protocol_version,
                "mcp: server started"
            );
        }
        Ok(Self {
            service,
            child,
            last_words,
            tools,
        })
    }

    /// The process id (the sandbox's outer process when confined).
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Whether the server is still there to answer.
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None)) && !self.service.is_transport_closed()
    }

    /// A handle for calls that does not borrow the connection, so a long
    /// tool call never keeps others from the server's state.
    pub fn caller(&self) -> Caller {
        Caller {
            peer: self.service.peer().clone(),
            last_words: Arc::clone(&self.last_words),
        }
    }
}

/// Sends `tools/call` to one running server.
#[derive(Clone)]
pub struct Caller {
    peer: Peer<RoleClient>,
    last_words: LastWords,
}

impl Caller {
    /// One `tools/call`; the result as the server sent it (JSON).
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, McpError> {
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let result = self
            .peer
            .call_tool(params)
            .await
            .map_err(|e| from_service(e, &self.last_words))?;
        serde_json::to_value(result).map_err(|e| McpError::Protocol(e.to_string()))
    }
}

fn from_service(error: ServiceError, last_words: &LastWords) -> McpError {
    match error {
        ServiceError::McpError(data) => McpError::Rpc {
            code: data.code.0,
            message: data.message.into_owned(),
        },
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            with_last_words(McpError::Closed("the server exited".into()), last_words)
        }
        other => McpError::Protocol(other.to_string()),
    }
}

/// Adds what the server last said on stderr to a start or crash error.
fn with_last_words(error: McpError, last_words: &LastWords) -> McpError {
    let said = crate::kernel::lock(last_words).clone();
    match (error, said) {
        (McpError::Closed(what), Some(line)) => {
            McpError::Closed(format!("{what}; it said: {line}"))
        }
        (McpError::Handshake(what), Some(line)) => {
            McpError::Handshake(format!("{what}; it said: {line}"))
        }
        (error, _) => error,
    }
}

/// A server's stderr is its log: every line goes to ours.
async fn drain_stderr(name: String, stderr: impl AsyncRead + Unpin, last_words: LastWords) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                tracing::info!(target: "mcp", server = %name, "stderr: {line}");
                if !line.trim().is_empty() {
                    *crate::kernel::lock(&last_words) = Some(line);
                }
            }
            Ok(None) => break,
            Err(error) => {
                tracing::debug!(target: "mcp", server = %name, %error, "unreadable stderr");
                break;
            }
        }
    }
}

//! One running MCP server: a stdio child spawned under the kernel's
//! [`Confinement`] (as `shell.run` and the language servers are), its
//! stderr drained into the log, or a streamable HTTP endpoint; the
//! protocol spoken by the official SDK (`rmcp`): `initialize` with version
//! negotiation, `notifications/initialized`, `tools/list` (every page),
//! `tools/call`.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

use super::McpError;
use super::config::{McpServerConfig, Transport};
use super::tools::ToolInfo;
use crate::sandbox::Confinement;

/// The last line a server wrote to stderr: what an error about it quotes.
type LastWords = Arc<Mutex<Option<String>>>;

pub struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    /// The stdio server's process (`None` for an HTTP server).
    child: Option<Child>,
    last_words: LastWords,
    pub tools: Vec<ToolInfo>,
}

impl Connection {
    /// Reaches the server (spawns a stdio one in `root` under
    /// `confinement`; connects to an HTTP one) and completes the handshake
    /// and the tool listing within `timeout`.
    pub async fn start(
        config: &McpServerConfig,
        root: &Path,
        confinement: &Confinement,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("hello-tui", env!("CARGO_PKG_VERSION")),
        );
        let last_words = LastWords::default();
        let (child, handshake) = match config.transport() {
            Transport::Stdio { command } => {
                let mut spawn = Command::new(command);
                spawn.args(&config.args).current_dir(root);
                // The allowlisted environment, then this server's own `env`.
                // A child whose start fails is dropped, and so killed.
                let server = confinement
                    .spawn_piped(spawn, &config.env)
                    .map_err(|source| McpError::Spawn {
                        command: command.to_owned(),
                        source,
                    })?;
                let name = config.name.to_string();
                tokio::spawn(drain_stderr(name, server.stderr, Arc::clone(&last_words)));
                let pipes = (server.stdout, server.stdin);
                let handshake = tokio::time::timeout(timeout, client.serve(pipes)).await;
                (Some(server.child), handshake)
            }
            Transport::Http { url } => {
                // reqwest's rustls needs the process's crypto provider (https).
                crate::agent::provider::http::install_crypto_provider();
                let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
                (
                    None,
                    tokio::time::timeout(timeout, client.serve(transport)).await,
                )
            }
        };
        let service = match handshake {
            Ok(Ok(service)) => service,
            Ok(Err(error)) => {
                let error = McpError::Handshake(error.to_string());
                return Err(with_last_words(error, &last_words));
            }
            Err(_) => {
                let error = McpError::StartTimeout(timeout);
                return Err(with_last_words(error, &last_words));
            }
        };
        let listed = tokio::time::timeout(timeout, service.list_all_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => return Err(from_service(error, &last_words)),
            Err(_) => return Err(McpError::StartTimeout(timeout)),
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

    /// The process id of a stdio server (the sandbox's outer process when
    /// confined).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// Whether the server is still there to answer.
    pub(crate) fn is_alive(&mut self) -> bool {
        let running = match self.child.as_mut() {
            Some(child) => matches!(child.try_wait(), Ok(None)),
            None => true,
        };
        running && !self.service.is_transport_closed()
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
pub(crate) struct Caller {
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

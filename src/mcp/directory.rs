//! What is known about the configured servers, for whoever must tell:
//! `mcp.servers()` and the system prompt's tool lines. The hub
//! ([`super::McpServers`]) writes it; one directory lives as long as the
//! front end, so every kernel the workbench starts (a mode switch starts a
//! new one) reports into the same place the prompt reads.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;

use super::tools::ToolInfo;

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Spawned, handshake or tool listing under way.
    Starting,
    Running,
    /// It exited after starting; the next call starts it again.
    Crashed,
    /// Its last start failed; the next call tries again after the backoff.
    Failed,
}

/// One server as `mcp.servers()` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerListing {
    pub name: String,
    pub state: ServerState,
    /// The tools it listed when it last started (kept while it is down).
    #[serde(skip)]
    pub tools: Vec<ToolInfo>,
    /// Why it is down, when it is.
    pub error: Option<String>,
    pub pid: Option<u32>,
}

/// The prompt's words on `mcp`, before the generated lines.
const PROMPT_INTRO: &str = include_str!("../../assets/prompts/mcp.md");

/// How long a turn waits for servers still starting before it builds its
/// prompt without their tools.
pub const SETTLE_WAIT: Duration = Duration::from_secs(15);

/// A cheap, clonable view of every configured server.
#[derive(Clone)]
pub struct McpDirectory {
    servers: Arc<watch::Sender<Listing>>,
}

/// The servers of the kernel that reset the directory last; `generation`
/// tells its reports from those of a kernel it replaced.
#[derive(Default)]
struct Listing {
    generation: u64,
    servers: Vec<ServerListing>,
}

impl Default for McpDirectory {
    fn default() -> Self {
        Self {
            servers: Arc::new(watch::Sender::new(Listing::default())),
        }
    }
}

impl McpDirectory {
    pub fn servers(&self) -> Vec<ServerListing> {
        self.servers.borrow().servers.clone()
    }

    /// Replaces the whole listing (a new kernel's servers); returns the
    /// generation its updates must name.
    pub(super) fn reset(&self, servers: Vec<ServerListing>) -> u64 {
        let mut generation = 0;
        self.servers.send_modify(|listing| {
            listing.generation += 1;
            listing.servers = servers;
            generation = listing.generation;
        });
        generation
    }

    /// Changes one server's entry, unless a newer kernel has reset the
    /// directory since (a replaced kernel's late start reports nothing).
    pub(super) fn update(
        &self,
        generation: u64,
        name: &str,
        change: impl FnOnce(&mut ServerListing),
    ) {
        self.servers.send_if_modified(|listing| {
            let current = listing.generation == generation;
            match listing.servers.iter_mut().find(|s| s.name == name) {
                Some(entry) if current => {
                    change(entry);
                    true
                }
                _ => false,
            }
        });
    }

    /// Waits (at most `limit`) until no server is starting.
    pub async fn settled(&self, limit: Duration) {
        let mut rx = self.servers.subscribe();
        let starting = |listing: &Listing| {
            listing
                .servers
                .iter()
                .any(|s| s.state == ServerState::Starting)
        };
        let _ = tokio::time::timeout(limit, rx.wait_for(|listing| !starting(listing))).await;
    }

    /// The system prompt's part about `mcp`: the intro, then one line per
    /// server and one per tool. `None` without servers. Only what changes
    /// when the tools change is in it (not whether a server is up right
    /// now), so the prompt stays a cacheable prefix.
    pub fn prompt_section(&self) -> Option<String> {
        let listing = self.servers.borrow();
        let servers = &listing.servers;
        if servers.is_empty() {
            return None;
        }
        let mut text = PROMPT_INTRO.trim_end().to_owned();
        text.push('\n');
        for server in servers {
            text.push('\n');
            if server.tools.is_empty() {
                let why = match (&server.state, &server.error) {
                    (ServerState::Failed | ServerState::Crashed, Some(error)) => {
                        let short: String = error.chars().take(160).collect();
                        format!("not available ({short})")
                    }
                    (ServerState::Starting, _) => {
                        "still starting; `mcp.servers()` says when it is up".to_owned()
                    }
                    _ => "no tools".to_owned(),
                };
                text.push_str(&format!("- `mcp.{}`: {why}", server.name));
                continue;
            }
            text.push_str(&format!(
                "- `mcp.{}`: {} tools",
                server.name,
                server.tools.len()
            ));
            for tool in &server.tools {
                text.push('\n');
                text.push_str(&tool.prompt_line(&server.name));
            }
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(name: &str) -> ServerListing {
        ServerListing {
            name: name.to_owned(),
            state: ServerState::Starting,
            tools: Vec::new(),
            error: None,
            pid: None,
        }
    }

    /// A kernel replaced by a mode switch may still finish starting its
    /// servers: what it reports must not overwrite the new kernel's.
    #[test]
    fn a_replaced_kernels_late_report_is_ignored() {
        let directory = McpDirectory::default();
        let old = directory.reset(vec![listing("gh")]);
        let new = directory.reset(vec![listing("gh")]);
        directory.update(old, "gh", |s| s.state = ServerState::Failed);
        assert_eq!(directory.servers()[0].state, ServerState::Starting);
        directory.update(new, "gh", |s| s.state = ServerState::Running);
        assert_eq!(directory.servers()[0].state, ServerState::Running);
    }
}

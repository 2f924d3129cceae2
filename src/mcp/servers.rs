//! The configured servers of one kernel: started at kernel start (the
//! system prompt needs their tools before the model writes code against
//! them), each behind its own lock, restarted on the next call after a
//! crash or a failed start, no sooner than the backoff allows.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Mutex;

use super::McpError;
use super::config::McpServerConfig;
use super::connection::{Caller, Connection};
use super::directory::{McpDirectory, ServerListing, ServerState};
use super::tools::ToolInfo;
use crate::sandbox::Confinement;

/// How long a server has to spawn, answer `initialize` and list its tools
/// (`npx` may download the package first).
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The wait before the first restart; it doubles with every failure in a
/// row, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The servers, as the `mcp` capability reaches them. Clone freely.
#[derive(Clone)]
pub struct McpServers {
    inner: Arc<Inner>,
}

struct Inner {
    root: PathBuf,
    confinement: Confinement,
    slots: Vec<Slot>,
    directory: McpDirectory,
    /// This kernel's generation in the directory.
    generation: u64,
    start_timeout: Duration,
}

struct Slot {
    config: McpServerConfig,
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    conn: Option<Connection>,
    /// Failed starts and crashes since the last successful call.
    failures: u32,
    last_failure: Option<Instant>,
}

impl SlotState {
    /// How long the next start must still wait.
    fn backoff_left(&self, now: Instant) -> Option<Duration> {
        let since = now.duration_since(self.last_failure?);
        let steps = self.failures.saturating_sub(1).min(16);
        let backoff = FIRST_BACKOFF.saturating_mul(1 << steps).min(MAX_BACKOFF);
        backoff.checked_sub(since).filter(|left| !left.is_zero())
    }

    fn failed(&mut self) {
        self.failures = self.failures.saturating_add(1);
        self.last_failure = Some(Instant::now());
    }
}

impl McpServers {
    /// The servers of `configs`, spawned in `root` under `confinement`,
    /// reporting into `directory` (which forgets any earlier kernel's).
    pub fn new(
        configs: &[McpServerConfig],
        root: PathBuf,
        confinement: Confinement,
        directory: McpDirectory,
    ) -> Self {
        let generation = directory.reset(
            configs
                .iter()
                .map(|config| ServerListing {
                    name: config.name.to_string(),
                    state: ServerState::Starting,
                    tools: Vec::new(),
                    error: None,
                    pid: None,
                })
                .collect(),
        );
        let slots = configs
            .iter()
            .map(|config| Slot {
                config: config.clone(),
                state: Mutex::new(SlotState::default()),
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                root,
                confinement,
                slots,
                directory,
                generation,
                start_timeout: START_TIMEOUT,
            }),
        }
    }

    /// Starts every server in the background (needs a tokio runtime; a
    /// server that fails is tried again on its first call).
    pub(crate) fn start_all(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for slot in 0..self.inner.slots.len() {
            let servers = self.clone();
            runtime.spawn(async move {
                let _ = servers.caller(slot).await;
            });
        }
    }

    pub fn directory(&self) -> &McpDirectory {
        &self.inner.directory
    }

    /// The server named `name` (its index).
    pub fn find(&self, name: &str) -> Result<usize, McpError> {
        self.inner
            .slots
            .iter()
            .position(|slot| slot.config.name.as_str() == name)
            .ok_or_else(|| McpError::UnknownServer {
                name: name.to_owned(),
                known: self
                    .inner
                    .slots
                    .iter()
                    .map(|slot| slot.config.name.to_string())
                    .collect(),
            })
    }

    /// The server's tools, starting it when none are known yet.
    pub async fn tools(&self, slot: usize) -> Result<Vec<ToolInfo>, McpError> {
        let name = self.name(slot);
        let known = || {
            let servers = self.inner.directory.servers();
            let server = servers.into_iter().find(|s| s.name == name);
            server.map(|s| s.tools).unwrap_or_default()
        };
        let tools = known();
        if !tools.is_empty() {
            return Ok(tools);
        }
        self.caller(slot).await?;
        Ok(known())
    }

    /// Marks servers that died since their last call as crashed, so a
    /// listing says so before the next call restarts them. A server busy
    /// starting is left alone.
    pub(crate) fn notice_crashes(&self) {
        for (index, slot) in self.inner.slots.iter().enumerate() {
            let Ok(mut state) = slot.state.try_lock() else {
                continue;
            };
            if state.conn.as_mut().is_some_and(|conn| !conn.is_alive()) {
                state.conn = None;
                state.failed();
                let why = "the server exited; the next call starts it again".to_owned();
                self.publish(index, ServerState::Crashed, Some(why), None);
            }
        }
    }

    /// Calls `tool` (its server name) with `arguments`; the result as the
    /// server sent it. A server that is down is started first.
    pub async fn call(
        &self,
        slot: usize,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<Value, McpError> {
        let caller = self.caller(slot).await?;
        let result = caller.call(tool, arguments).await;
        let mut state = self.slot(slot).state.lock().await;
        match &result {
            Err(McpError::Closed(why)) => {
                // Crashed during the call: the call is not repeated (a tool
                // may have done half its work); the next call restarts it.
                let why = why.clone();
                if state.conn.as_mut().is_none_or(|conn| !conn.is_alive()) {
                    state.conn = None;
                    state.failed();
                    self.publish(slot, ServerState::Crashed, Some(why), None);
                }
            }
            _ => state.failures = 0,
        }
        result
    }

    fn slot(&self, slot: usize) -> &Slot {
        &self.inner.slots[slot]
    }

    fn name(&self, slot: usize) -> String {
        self.slot(slot).config.name.to_string()
    }

    /// A caller for a running server: the one there is, or a new start
    /// (after the backoff when the last start failed or it crashed).
    async fn caller(&self, index: usize) -> Result<Caller, McpError> {
        let slot = self.slot(index);
        let mut state = slot.state.lock().await;
        if let Some(conn) = state.conn.as_mut() {
            if conn.is_alive() {
                return Ok(conn.caller());
            }
            state.conn = None;
            state.failed();
            tracing::warn!(target: "mcp", server = %slot.config.name, "server exited; restarting it");
        }
        if let Some(wait) = state.backoff_left(Instant::now()) {
            tokio::time::sleep(wait).await;
        }
        self.publish(index, ServerState::Starting, None, None);
        let started = Connection::start(
            &slot.config,
            &self.inner.root,
            &self.inner.confinement,
            self.inner.start_timeout,
        )
        .await;
        match started {
            Ok(conn) => {
                let caller = conn.caller();
                let tools = conn.tools.clone();
                let pid = conn.pid();
                state.conn = Some(conn);
                let generation = self.inner.generation;
                let name = slot.config.name.as_str();
                self.inner.directory.update(generation, name, |entry| {
                    entry.tools = tools;
                });
                self.publish(index, ServerState::Running, None, pid);
                Ok(caller)
            }
            Err(error) => {
                state.failed();
                tracing::warn!(target: "mcp", server = %slot.config.name, %error, "server did not start");
                self.publish(index, ServerState::Failed, Some(error.to_string()), None);
                Err(error)
            }
        }
    }

    fn publish(&self, slot: usize, state: ServerState, error: Option<String>, pid: Option<u32>) {
        let generation = self.inner.generation;
        self.inner
            .directory
            .update(generation, &self.name(slot), |entry| {
                entry.state = state;
                entry.error = error;
                entry.pid = pid;
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_with_each_failure_up_to_its_cap() {
        let mut state = SlotState::default();
        let now = Instant::now();
        assert_eq!(state.backoff_left(now), None, "never failed: no wait");
        state.failed();
        let at = state.last_failure.unwrap();
        assert_eq!(state.backoff_left(at), Some(FIRST_BACKOFF));
        state.failed();
        let at = state.last_failure.unwrap();
        assert_eq!(state.backoff_left(at), Some(FIRST_BACKOFF * 2));
        assert_eq!(state.backoff_left(at + FIRST_BACKOFF * 2), None);
        state.failures = 40;
        assert_eq!(state.backoff_left(at), Some(MAX_BACKOFF));
    }
}

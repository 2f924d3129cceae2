//! The conversation store shared by everyone who reads it.
//!
//! Three parties read the same [`AgentContext`]: the turn loop (which also
//! appends to it), the kernel's `context` capability — whose calls arrive on
//! the kernel's own tasks *while a cell runs*, when the turn loop is parked
//! waiting for that cell — and the TUI's search pane. A plain owned value
//! could serve only one of them, so it lives behind an `Arc<RwLock<…>>`.
//!
//! The lock is a std `RwLock`, held only for the synchronous body of a
//! closure ([`SharedContext::read`] / [`SharedContext::push`]): never across
//! an `.await`, so a capability call can never wait on a writer that is
//! itself waiting for the cell to finish.

use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;

use super::message::{Message, MessageId};
use super::store::AgentContext;

/// A cheap-to-clone handle on the shared conversation store.
#[derive(Clone, Default)]
pub struct SharedContext(Arc<RwLock<AgentContext>>);

impl SharedContext {
    pub fn new(context: AgentContext) -> Self {
        Self(Arc::new(RwLock::new(context)))
    }

    /// Appends a message (indexed at once); returns its id.
    pub fn push(&self, message: Message) -> MessageId {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message)
    }

    /// Runs `f` with the store read-locked. Keep `f` synchronous and short.
    pub fn read<R>(&self, f: impl FnOnce(&AgentContext) -> R) -> R {
        f(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn len(&self) -> usize {
        self.read(AgentContext::len)
    }

    /// Empties the store in place (`/new`): every holder — the kernel's
    /// `context` capability, the search pane — sees the new, empty
    /// conversation, with no handle left on the old one.
    pub fn clear(&self) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = AgentContext::default();
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The latest runtime-context snapshot, as `context.snapshot()` returns it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishedSnapshot {
    pub markdown: String,
    /// The normalised snapshot (the `snapshot --format json` shape).
    pub json: serde_json::Value,
}

/// Where the turn loop (or the app) publishes each snapshot it builds, and
/// where the capability reads the latest without waiting for anyone.
pub fn snapshot_channel() -> (
    watch::Sender<Option<PublishedSnapshot>>,
    watch::Receiver<Option<PublishedSnapshot>>,
) {
    watch::channel(None)
}

//! The conversation store and its search: the `context` the agent can query
//! from inside the kernel and the user can search from the context pane.
//!
//! Host-agnostic: no terminal, no kernel, no I/O. [`AgentContext`] owns the
//! messages and keeps a [`SearchIndex`] current on every append;
//! [`capability`] answers the kernel's `context.*` calls as JSON.

pub mod capability;
pub mod index;
pub mod message;
pub mod slice;
pub mod snippet;
pub mod store;
pub mod tokenize;

pub use capability::{ContextError, SearchArgs};
pub use index::{IndexStats, SearchIndex};
pub use message::{Message, Role, ToolCall, UnknownRole};
pub use snippet::Snippet;
pub use store::{AgentContext, SearchHit, SearchOutcome, SearchQuery};

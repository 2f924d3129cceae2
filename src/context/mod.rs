//! The conversation store and its search: the `context` the agent can query
//! from inside the kernel and the user can search from the context pane.
//!
//! Host-agnostic: no terminal, no kernel, no I/O. [`AgentContext`] owns the
//! messages and keeps a [`SearchIndex`] current on every append;
//! [`capability`] answers the kernel's `context.*` calls as JSON.
//!
//! # Wiring
//!
//! - One [`SharedContext`] (`Arc<RwLock<AgentContext>>`) is shared by the
//!   turn loop (which pushes every user, assistant and tool message), the
//!   kernel's [`ContextCapability`] and the TUI search pane; see `shared.rs`
//!   for why, and why the lock is never held across an await.
//! - The search pane calls [`AgentContext::search`] directly on the loop: it
//!   takes well under a millisecond on 10 000 messages, so per-keystroke
//!   search needs no background task. Each [`SearchHit`] carries the message
//!   index, role, score and a [`Snippet`] whose `char_highlights` are char
//!   ranges into `snippet.text`, ready for styled spans.
//! - When the kernel sends `call{cap: "context", action, args}`, answer with
//!   [`capability::call`]`(&context, action, &args, runtime_state)` and send
//!   back the `Ok` value, or the `Err`'s `to_string()` as the error. It is a
//!   plain synchronous function of `&AgentContext`, so a cell never waits
//!   on anything but the loop turning once.
//! - Sessions persist [`Message`]s (serde, one per JSONL line) and rebuild
//!   with `messages.into_iter().collect::<AgentContext>()`.

pub mod capability;
pub(crate) mod index;
pub(crate) mod kernel_capability;
pub(crate) mod message;
pub(crate) mod shared;
pub(crate) mod slice;
pub(crate) mod snippet;
pub(crate) mod store;
pub mod tokenize;

pub use capability::{ContextError, SearchArgs};
pub use index::{IndexStats, SearchIndex};
pub use kernel_capability::ContextCapability;
pub use message::{CallRef, Message, MessageId, Role, UnknownRole};
pub use shared::{PublishedSnapshot, SharedContext, snapshot_channel};
pub use snippet::Snippet;
pub use store::{AgentContext, SearchHit, SearchOutcome, SearchQuery};

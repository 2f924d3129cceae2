//! Token accounting: how many tokens a prompt costs and how many the model
//! can take. Host-agnostic (no terminal); the probe is the only I/O.
//!
//! # Wiring
//!
//! - [`TokenCounter::for_model`] once per model. Count each message once
//!   when it enters the conversation (the prompt assembler caches counts),
//!   and after every call feed the server's `usage.prompt_tokens` to
//!   [`TokenCounter::observe`] so estimates for non-OpenAI models track the
//!   server's own tokenizer. A long text counted again (the gauge counts
//!   the draft's message on every key) costs only its changed pieces
//!   (`pieces`).
//! - [`ContextWindow::resolve`] with the setting, [`probe::probe_window`]'s
//!   answer (async, at most a few seconds, only for OpenAI-compatible
//!   servers) and the model name.

pub(crate) mod counter;
mod pieces;
pub mod probe;
pub(crate) mod window;

pub use counter::{PER_MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter};
pub use window::{
    ContextWindow, DEFAULT_COMPACT_AT, DEFAULT_RESERVE, DEFAULT_WINDOW, WindowSource, reserve_for,
};

//! The agent: the model provider, the conversation (history + context
//! store + session file) and the turn loop that drives model calls and
//! kernel cells. No terminal code: the TUI (`app::agent`) and `exec` both
//! drive [`turn::run_turn`].

pub mod conversation;
pub mod instructions;
pub mod prompt;
pub mod provider;
pub mod setup;
pub mod text_tool_call;
pub mod tool_result;
pub mod turn;

//! The terminal front end: the event loop that owns the state and the
//! terminal, feeds `app::update` and draws with `ui`, the guard that puts the
//! terminal back on every exit, and the clipboard escape. It is the one
//! place that knows both `app` (behaviour) and `ui` (drawing), so neither of
//! those imports the other.

pub mod frame_writer;
pub(crate) mod osc52;
mod pacing;
pub mod run;
mod scroll;
pub(crate) mod terminal;
mod typing;

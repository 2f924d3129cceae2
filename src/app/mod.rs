//! The application: state, the update function and the event loop.

pub mod agent;
pub mod cells;
pub mod composer;
pub mod event;
pub mod kernel;
pub mod run;
pub mod search;
pub mod sessions;
pub mod snapshot;
pub mod state;
pub mod terminal;
pub mod update;

pub use event::AppEvent;
pub use state::AppState;

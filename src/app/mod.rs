//! The application: state, the update function and the event loop.

pub mod agent;
pub mod approvals;
pub(crate) mod cells;
pub(crate) mod composer;
pub mod context_window;
pub(crate) mod copy;
pub mod diagnostics;
pub mod editors;
pub(crate) mod effects;
pub mod find_count;
pub(crate) mod layers;
pub(crate) mod line_input;
pub mod safety;
pub mod snapshot;
pub(crate) mod start_over;
pub mod state;
pub mod trust;
pub mod update;
pub(crate) mod workspace_services;

pub use crate::workbench::event::AppEvent;
pub use state::AppState;

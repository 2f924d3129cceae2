//! The application: state, the update function and the event loop.

pub mod agent;
pub mod approvals;
pub(crate) mod cells;
pub mod command;
pub(crate) mod copy;
pub(crate) mod deliver;
pub mod diagnostics;
pub mod editors;
pub(crate) mod effects;
pub mod find_count;
pub mod frame;
pub mod interrupt;
pub(crate) mod layers;
pub(crate) mod memory;
pub mod safety;
pub mod snapshot;
pub(crate) mod start_over;
pub mod state;
pub(crate) mod status_bar;
pub mod trust;
pub mod update;
pub(crate) mod workspace_services;

pub use crate::workbench::event::AppEvent;
pub use state::AppState;

#[cfg(test)]
mod tests;

//! The application: state, the update function and the event loop.

pub mod agent;
pub mod approval_flow;
pub mod approvals;
pub mod cell_owner;
pub mod cells;
pub mod composer;
pub mod context_window;
pub mod diagnostics;
pub mod editor_scene;
pub mod editors;
pub mod effects;
pub mod event;
pub mod kernel;
pub mod layers;
pub mod line_input;
pub mod python_literals;
pub mod recovery_mirror;
pub mod safety;
pub mod sessions;
pub mod snapshot;
pub mod state;
pub mod transcript;
pub mod update;
pub mod workspace_services;

pub use event::AppEvent;
pub use state::AppState;

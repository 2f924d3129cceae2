//! The application: state, the update function and the event loop.

pub mod agent;
pub mod approvals;
pub mod cell_owner;
pub(crate) mod cells;
pub(crate) mod changes;
pub(crate) mod composer;
pub mod context_window;
pub(crate) mod copy;
pub mod diagnostics;
pub(crate) mod editor_scene;
pub mod editors;
pub(crate) mod effects;
pub mod event;
pub mod find_count;
pub mod kernel;
pub(crate) mod layers;
pub(crate) mod line_input;
pub mod lsp_status;
pub mod models;
pub mod prompt_history;
pub(crate) mod python_literals;
pub(crate) mod recovery_mirror;
pub mod safety;
pub mod sessions;
pub mod slash;
pub mod snapshot;
pub(crate) mod start_over;
pub mod state;
pub mod subcalls;
pub mod trust;
pub mod update;
pub(crate) mod workspace_services;
pub mod write_review;

pub use event::AppEvent;
pub use state::AppState;

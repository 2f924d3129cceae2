//! The application: state, the update function and the event loop.

pub mod cells;
pub mod composer;
pub mod editor_scene;
pub mod editors;
pub mod event;
pub mod file_picker;
pub mod kernel;
pub mod osc52;
pub mod recovery_mirror;
pub mod run;
pub mod search;
pub mod snapshot;
pub mod state;
pub mod terminal;
pub mod update;
pub mod workspace_services;

pub use event::AppEvent;
pub use state::AppState;

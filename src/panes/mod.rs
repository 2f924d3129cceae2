//! Panes as components (`crate::component`): a pane owns its state,
//! answers the input the layer stack gives it when it has the focus (or
//! the pointer), and paints itself in its rectangle.
//!
//! The variables and diagnostics panes are; the conversation and the file
//! view still keep their input handling in `app` and their painting in
//! `ui` (see ARCHITECTURE.md, "Frames").

pub mod diagnostics;
pub mod variables;

//! Panes as components (`crate::component`): a pane owns its state,
//! answers the input the layer stack gives it when it has the focus (or
//! the pointer), and paints itself in its rectangle.
//!
//! The conversation, variables and diagnostics panes are; the file view
//! still keeps its input handling in `app::editors` and its painting in
//! `ui::file_view`.

pub mod conversation;
pub mod diagnostics;
pub mod variables;

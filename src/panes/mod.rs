//! Panes as components (`crate::component`): a pane owns its state,
//! answers the input the layer stack gives it when it has the focus (or
//! the pointer), and paints itself in its rectangle.
//!
//! Each pane is one here (conversation, file view, variables, diagnostics).
//! **Add a pane:** see ARCHITECTURE.md, "Where to add" (steps in
//! docs/design/ui.md, "How to add a pane").

pub mod conversation;
pub mod diagnostics;
pub(crate) mod file_view;
pub(crate) mod mention_list;
pub(crate) mod pasted;
pub(crate) mod undo_words;
pub(crate) mod variables;

//! The file editor core: documents, saving, external changes, crash
//! recovery, syntax highlighting and the file-view widget.
//!
//! The app owns `Document`s and one `Highlighter`; keys become
//! `EditCommand`s in the app's keymap (this module never sees key events).
//! Per frame: `doc.prepare_frame(&hl, area)` (mutates viewport and
//! highlight cache), then `render_file_view(&doc, &styles, area, buf)`
//! (pure); if `doc.needs_more_work()` schedule another frame.

mod commands;
mod disk;
mod document;
mod error;
mod external;
mod hash;
mod highlight;
mod line_cursor;
mod moves;
mod recovery;
mod search;
mod text;
mod view;
mod width;

pub use commands::{ApplyOutcome, EditCommand, SearchReport};
pub use disk::DiskVersion;
pub use document::{DiskState, Document, MAX_EDITABLE_BYTES, MAX_EDITABLE_LINES, Viewport};
pub use error::{EditorError, ReadOnlyReason};
pub use external::DiskChange;
pub use highlight::{CHECKPOINT_STRIDE, HighlightCache, Highlighter, MAX_HIGHLIGHT_LINE_BYTES};
pub use moves::Move;
pub use recovery::{RECOVERY_INTERVAL, Recovery, discard as discard_recovery, list_recoveries};
pub use search::TextRange;
pub use text::LineEnding;
pub use view::{FileViewStyles, ViewLayout, cursor_screen_position, layout, render_file_view};

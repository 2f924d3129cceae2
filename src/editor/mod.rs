//! The file editor core: documents, saving, external changes, crash
//! recovery, syntax highlighting and the file-view widget.
//!
//! How the app drives it from its single-threaded UI loop:
//! - Once: `Highlighter::new(theme_name)` (~3 ms), `FileViewStyles` from
//!   the theme (`dark()`/`light()` are defaults).
//! - Open: `Document::open(path)` → `Ok(doc)` (maybe read-only with a
//!   `read_only_reason()`/`notice()`: binary or invalid UTF-8; there is no
//!   size cap) or an `EditorError` to show. Then recovery (below). The
//!   text is a rope (`ropey`); tab width and the Tab key follow the file's
//!   `.editorconfig`.
//! - Keys: the keymap turns keys into `EditCommand`s; `doc.apply(cmd)`
//!   returns `ApplyOutcome` (`copied` text for the app clipboard + OSC 52,
//!   `search`: the match a find selected and, for a text up to
//!   `COUNT_INLINE_BYTES`, its "3 of 10"; a bigger text is counted with
//!   `doc.match_counter(current)` on another thread) or an error value
//!   (edit on a read-only doc). Paste
//!   passes the app clipboard: `EditCommand::Paste(text)`. Motions and
//!   deletions step by grapheme cluster; undo groups typing like VS Code.
//! - Mouse: `doc.click(area, col, row, shift)`, `doc.drag_to(area, col,
//!   row)`, `doc.scroll_by(lines)`, with `area` the rect the view is drawn in.
//! - Frame: `doc.prepare_frame(&hl, area)` (mutates viewport and highlight
//!   cache), then `render_file_view(&doc, &styles, area, buf)` (pure); if
//!   `doc.needs_more_work()`, request another frame (the pass to a far view
//!   runs on its own thread; `doc.finish_highlight_pass()` waits for it in
//!   tests and measurements).
//! - Disk: on watcher events / focus, `doc.check_disk()` → `DiskChange`;
//!   conflicts: `keep_mine()`, `load_theirs()`, `diff()`. `save()`.
//! - Recovery: `RecoveryHome::claim(base, workspace)` once (a locked folder
//!   of this instance, `dir()`); call `doc.recovery_tick(dir, Instant::now())`
//!   after edits and at `doc.recovery_due_at()` and hand the write it returns
//!   to a `RecoveryWriter` (its own thread); `write_recovery_now(dir)`
//!   from the panic hook; at start `home.adopt_orphans()` (this workspace's
//!   files whose instance is gone) → `Document::restore(&r)` or
//!   `discard_recovery(&r)`.
//! - Snapshot builder: `path()`, `line_count()`, `lines_text(range)`,
//!   `text()`, `cursor()` (line, char in code points; 0-based),
//!   `selection()`, `is_dirty()`, `language()`; `generation()` changes with
//!   every edit, so observers copy the text only when it moved. The status
//!   bar shows `cursor_column()` (clusters, tabs to their stop).

mod commands;
mod disk;
mod document;
mod error;
mod external;
mod grapheme;
mod hash;
mod highlight;
mod highlight_pass;
mod history;
mod indent;
mod journal;
mod marks;
mod moves;
mod recovery;
pub(crate) mod recovery_home;
mod search;
mod text;
mod view;
mod width;

pub use commands::{ApplyOutcome, COUNT_INLINE_BYTES, EditCommand, SearchReport};
pub use disk::DiskVersion;
pub(crate) use disk::write_atomic;
pub use document::{DiskState, Document, Viewport};
pub use error::{EditorError, ReadOnlyReason};
pub use external::DiskChange;
pub use highlight::{CHECKPOINT_STRIDE, Highlighter, MAX_HIGHLIGHT_LINE_BYTES};
pub use journal::{LinePosition, TextChange};
pub use moves::Motion;
pub use recovery::{
    RECOVERY_INTERVAL, Recovery, RecoveryWrite, RecoveryWriter, discard as discard_recovery,
    list_recoveries,
};
pub use recovery_home::RecoveryHome;
pub use search::{MAX_QUERY_CHARS, MatchCount, MatchCounter, Query, TextRange};
pub use text::LineEnding;
pub use view::{FileViewStyles, ViewLayout, cursor_screen_position, layout, render_file_view};
pub use width::display_col;

//! The widgets the panes and overlays are drawn with — the conversation's
//! laid-out history, Markdown, the one-line input, a pane's frame — and
//! the frame model that caches layout between frames. Nothing here knows
//! the app, a pane or an overlay; nothing mutates state or does I/O, which
//! is what makes the insta snapshots cheap and honest.

pub(crate) mod code_style;
pub(crate) mod file_status;
pub mod history;
pub(crate) mod line_input;
pub(crate) mod list_cursor;
pub mod markdown;
pub mod pane;
pub(crate) mod severity;

/// What a frame shows beyond the state itself, kept between frames so
/// nothing is laid out twice: the conversation's laid-out entries (cached
/// per entry revision) and the rows the last frame showed. The loop owns
/// it next to the state; `app::frame::prepare` fills it and `render` only reads it.
#[derive(Default)]
pub struct FrameModel {
    pub history: history::HistoryLayout,
}

//! The file view: what the user is looking at. Until a file is open it says
//! so; the editor fills it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::pane;
use crate::app::AppState;
use crate::theme::Theme;

pub fn render(_state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let block = pane::block(Line::from("No file"), Some('2'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);
    pane::empty_state("No file open.", theme, inner, buf);
}

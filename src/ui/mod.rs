//! Rendering: a pure function of `&AppState`. Nothing here mutates state or
//! does I/O, which is what makes the insta snapshots cheap and honest.
//! One file per pane.

pub mod approval;
pub mod code_style;
pub mod confirm;
pub mod conversation;
pub mod diagnostics;
pub mod file_overlays;
pub mod file_status;
pub mod file_view;
pub mod help;
pub mod history;
pub mod line_input;
pub mod markdown;
pub mod pane;
pub mod problem_detail;
pub mod request_preview;
pub mod search;
pub mod status_bar;
pub mod variable_detail;
pub mod variables;

use std::sync::Arc;

use ratatui::Frame;

use crate::app::AppState;
use crate::app::state::Overlay;
use crate::keymap::PaneId;
use crate::screen;
use crate::theme::Theme;

/// What a frame shows beyond the state itself, kept between frames so
/// nothing is laid out twice: the conversation's laid-out entries (cached
/// per entry revision) and the rows the last frame showed. The loop owns
/// it next to the state; `prepare` fills it and `render` only reads it.
#[derive(Default)]
pub struct FrameModel {
    pub history: history::HistoryLayout,
}

/// Brings derived state up to date for the next frame: the only step
/// between `update` and `render` that needs the theme (layout of styled
/// text). Called by the loop before every draw.
pub fn prepare(state: &mut AppState, model: &mut FrameModel, theme: &Theme) {
    let area = ratatui::layout::Rect::new(0, 0, state.size.width, state.size.height);
    if let Some(rect) = screen::layout::compute(area, state.focus).conversation {
        let inner = screen::conversation::history_area(state, rect);
        // Syntax colours would defeat NO_COLOR.
        let styling = match &state.highlighter {
            Some(hl) if !state.settings.no_color => history::Styling {
                theme,
                code: hl.as_ref(),
                code_id: Arc::as_ptr(hl) as usize,
            },
            _ => history::Styling::plain(theme),
        };
        model
            .history
            .prepare(&mut state.conversation, &styling, inner);
    }
    if let Some(Overlay::Help { scroll }) = &mut state.overlay {
        let width = help::area(area).width.saturating_sub(2);
        *scroll = (*scroll).min(help::row_count(usize::from(width)));
    }
    file_view::prepare(state);
}

/// Draws one frame.
pub fn render(state: &AppState, model: &FrameModel, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    let layout = screen::layout::compute(area, state.focus);
    for pane in PaneId::ALL {
        let Some(rect) = layout.rect(pane) else {
            continue;
        };
        let focused = state.focus == pane && state.overlay.is_none();
        match pane {
            PaneId::Conversation => {
                conversation::render(state, &model.history, theme, focused, rect, frame)
            }
            PaneId::FileView => file_view::render(state, theme, focused, rect, frame.buffer_mut()),
            PaneId::Variables => variables::render(state, theme, focused, rect, frame.buffer_mut()),
            PaneId::Diagnostics => {
                diagnostics::render(state, theme, focused, rect, frame.buffer_mut())
            }
        }
    }
    status_bar::render(state, theme, layout.status, frame.buffer_mut());
    match &state.overlay {
        Some(Overlay::Help { scroll }) => help::render(*scroll, theme, area, frame.buffer_mut()),
        Some(Overlay::RequestPreview(preview)) => {
            request_preview::render(state, preview, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Search(search)) => search::render(search, theme, area, frame),
        Some(Overlay::Confirm(question)) => {
            confirm::render(state, question, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Problem { index, scroll }) => {
            problem_detail::render(state, *index, *scroll, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Variable { name, scroll }) => {
            variable_detail::render(state, name, *scroll, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Picker(picker)) => {
            file_overlays::picker(state, picker, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Prompt(prompt)) => {
            file_overlays::prompt(state, prompt, theme, area, frame.buffer_mut())
        }
        Some(Overlay::Conflict) => file_overlays::conflict(state, theme, area, frame.buffer_mut()),
        Some(Overlay::Diff { text, scroll }) => {
            file_overlays::diff(text, *scroll, theme, area, frame.buffer_mut())
        }
        None => {}
    }
    // Questions from running code come first, over any other overlay.
    approval::render(state, theme, area, frame.buffer_mut());
}

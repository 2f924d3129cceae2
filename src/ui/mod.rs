//! Rendering: a pure function of `&AppState`. Nothing here mutates state or
//! does I/O, which is what makes the insta snapshots cheap and honest.
//! One file per pane.

pub(crate) mod code_style;
pub(crate) mod file_status;
pub(crate) mod history;
pub(crate) mod line_input;
pub mod markdown;
pub mod pane;
pub(crate) mod severity;
pub(crate) mod status_bar;

use std::sync::Arc;

use ratatui::Frame;

use crate::app::AppState;
use crate::component::Component;
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
            Some(hl) if !state.workbench.settings.no_color => history::Styling {
                theme,
                code: hl.as_ref(),
                code_id: Arc::as_ptr(hl) as usize,
            },
            _ => history::Styling::plain(theme),
        };
        model.history.prepare(
            &state.workbench.transcript,
            &mut state.conversation,
            &styling,
            inner,
        );
    }
    crate::panes::file_view::prepare(state);
}

/// Draws one frame.
pub fn render(state: &AppState, model: &FrameModel, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    let layout = screen::layout::compute(area, state.focus);
    let view = crate::component::View {
        app: state,
        model,
        theme,
    };
    for pane in PaneId::ALL {
        let Some(rect) = layout.rect(pane) else {
            continue;
        };
        state.pane(pane).render(&view, rect, frame);
    }
    status_bar::render(state, theme, layout.status, frame.buffer_mut());
    for overlay in state.overlays.iter() {
        overlay.component().render(&view, area, frame);
    }
    // Questions from running code come first, over any other overlay.
    state.approvals.render(&view, area, frame);
}

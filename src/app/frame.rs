//! A frame of the terminal UI: bring derived state up to date
//! ([`prepare`]), then paint it ([`render`]). Painting is a pure function
//! of the state and the frame model.

use std::sync::Arc;

use ratatui::Frame;

use super::state::AppState;
use crate::component::Component;
use crate::keymap::PaneId;
use crate::panes::conversation::ShownRows;
use crate::screen;
use crate::theme::Theme;
use crate::ui::{FrameModel, history};

/// Brings derived state up to date for the next frame: the only step
/// between `update` and `render` that needs the theme (layout of styled
/// text). Called by the loop before every draw.
pub fn prepare(state: &mut AppState, model: &mut FrameModel, theme: &Theme) {
    if let Some(rect) = state.layout().conversation {
        let inner = state
            .conversation
            .history_area(state.workbench.pins().len(), rect);
        // Syntax colours would defeat NO_COLOR.
        let styling = match &state.highlighter {
            Some(hl) if !state.workbench.settings().no_color => history::Styling {
                theme,
                code: hl.as_ref(),
                code_id: Arc::as_ptr(hl) as usize,
            },
            _ => history::Styling::plain(theme),
        };
        model.history.prepare(
            state.workbench.transcript(),
            &mut state.conversation.place,
            &styling,
            inner,
        );
        state.conversation.shown = ShownRows {
            area: inner,
            rows: model.history.shown_rows(),
        };
    }
    prepare_file_view(state);
}

/// Draws one frame.
pub fn render(state: &AppState, model: &FrameModel, theme: &Theme, frame: &mut Frame) {
    let area = frame.area();
    let layout = state.layout();
    let view = crate::component::View {
        around: state.around(),
        model,
        theme,
    };
    for pane in PaneId::ALL {
        let Some(rect) = layout.rect(pane) else {
            continue;
        };
        state.pane(pane).render(&view, rect, frame);
    }
    super::status_bar::render(state, theme, layout.status, frame.buffer_mut());
    for overlay in state.overlays.iter() {
        overlay.component().render(&view, area, frame);
    }
    // Questions from running code come first, over any other overlay.
    state.approvals.render(&view, area, frame);
}

/// Scrolls the viewport to the cursor and highlights what will be visible
/// (bounded work per frame; the loop asks for another frame while
/// `needs_more_work`).
fn prepare_file_view(state: &mut AppState) {
    let Some(rect) = state.layout().rect(PaneId::FileView) else {
        return;
    };
    let area = screen::file_view::text_area(rect);
    let Some(hl) = state.highlighter.clone() else {
        return;
    };
    let covered = covered_top_rows(state, area);
    if let Some(doc) = state.workbench.editors_mut().active_mut() {
        doc.keep_clear_of_top(covered);
        doc.prepare_frame(&hl, area);
    }
}

/// How many rows at the top of the file view's `text` an open overlay
/// hides (the find bar hides two): the view keeps the cursor below them.
fn covered_top_rows(state: &AppState, text: ratatui::layout::Rect) -> usize {
    let around = state.around();
    state
        .overlays
        .iter()
        .filter_map(|overlay| overlay.component().covers(&around))
        .map(|hidden| hidden.intersection(text))
        .filter(|hidden| hidden.height > 0 && hidden.y == text.y)
        .map(|hidden| usize::from(hidden.height))
        .max()
        .unwrap_or(0)
}

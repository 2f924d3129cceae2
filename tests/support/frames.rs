//! Drawing the app as its loop does: frames until the file view's
//! highlighting is done. One frame's highlighting budget is 12 ms, which a
//! loaded machine can spend before the last visible line is coloured, so a
//! test drawing a single frame would see plain text now and then. The
//! background pass to a far view is waited for, so the colours are the
//! exact ones.

use crossterm::event::Event;
use hello_tui::app::AppState;
use hello_tui::app::update::handle_terminal_event;
use hello_tui::theme::Theme;
use hello_tui::ui;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn draw_settled(
    state: &mut AppState,
    theme: &Theme,
    width: u16,
    height: u16,
) -> Terminal<TestBackend> {
    handle_terminal_event(state, Event::Resize(width, height));
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    for _ in 0..20 {
        if let Some(doc) = state.workbench.editors.active_mut() {
            doc.finish_highlight_pass();
        }
        let mut frame_model = ui::FrameModel::default();
        hello_tui::app::update::before_frame(state);
        hello_tui::app::frame::prepare(state, &mut frame_model, theme);
        terminal
            .draw(|frame| hello_tui::app::frame::render(state, &frame_model, theme, frame))
            .expect("draw");
        if !state.workbench.editors.needs_more_work() {
            break;
        }
    }
    terminal
}

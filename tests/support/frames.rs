//! Drawing the app as its loop does: frames until the file view's
//! highlighting is done. One frame's highlighting budget is 12 ms, which a
//! loaded machine can spend before the last visible line is coloured, so a
//! test drawing a single frame would see plain text now and then. The
//! background pass to a far view is waited for, so the colours are the
//! exact ones.
// Each test binary that includes this file uses its own part of it.
#![allow(dead_code)]

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
        if let Some(doc) = state.workbench.editors_mut().active_mut() {
            doc.finish_highlight_pass();
        }
        let mut frame_model = ui::FrameModel::default();
        hello_tui::app::update::before_frame(state);
        hello_tui::app::frame::prepare(state, &mut frame_model, theme);
        terminal
            .draw(|frame| hello_tui::app::frame::render(state, &frame_model, theme, frame))
            .expect("draw");
        if !state.workbench.editors().needs_more_work() {
            break;
        }
    }
    terminal
}

/// The terminal loop as `tui::run` drives it: a key goes through `update`,
/// and a frame is drawn only when the command it returns asks for one.
/// What the user sees after a key is the last frame drawn, so a key that
/// changes the state but forgets to ask for a frame shows here as a screen
/// that did not change.
pub struct Loop {
    pub state: AppState,
    pub terminal: Terminal<TestBackend>,
    pub theme: Theme,
}

impl Loop {
    /// `state` drawn once at `width` x `height`, as the loop starts.
    pub fn new(mut state: AppState, width: u16, height: u16) -> Self {
        let theme = Theme::builtin_default();
        let terminal = draw_settled(&mut state, &theme, width, height);
        Self {
            state,
            terminal,
            theme,
        }
    }

    /// One key through `update`; a frame when it asked for one. Whether
    /// it drew.
    pub fn key(
        &mut self,
        code: crossterm::event::KeyCode,
        modifiers: crossterm::event::KeyModifiers,
    ) -> bool {
        self.event(Event::Key(crossterm::event::KeyEvent::new(code, modifiers)))
    }

    /// Any terminal event (a mouse event, a paste) through `update`; a
    /// frame when it asked for one. Whether it drew.
    pub fn event(&mut self, event: Event) -> bool {
        let command = handle_terminal_event(&mut self.state, event);
        let wants_frame = !matches!(command, hello_tui::app::update::Command::None);
        if wants_frame {
            self.draw();
        }
        wants_frame
    }

    /// Text typed a key at a time.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(
                crossterm::event::KeyCode::Char(c),
                crossterm::event::KeyModifiers::NONE,
            );
        }
    }

    /// A frame, as the loop draws one.
    pub fn draw(&mut self) {
        let mut frame_model = ui::FrameModel::default();
        hello_tui::app::update::before_frame(&mut self.state);
        hello_tui::app::frame::prepare(&mut self.state, &mut frame_model, &self.theme);
        let (state, theme) = (&self.state, &self.theme);
        self.terminal
            .draw(|frame| hello_tui::app::frame::render(state, &frame_model, theme, frame))
            .expect("draw");
    }

    /// The screen's text, row by row.
    pub fn screen(&self) -> String {
        self.terminal.backend().to_string()
    }

    /// The cells drawn in the theme's cursor style (a text input's cursor
    /// is a styled cell, not the terminal's cursor) within `area`.
    pub fn cursor_cells(&self, area: ratatui::layout::Rect) -> Vec<(u16, u16)> {
        let buffer = self.terminal.backend().buffer();
        let cursor = self.theme.roles.cursor;
        let area = area.intersection(buffer.area);
        (area.top()..area.bottom())
            .flat_map(|y| (area.left()..area.right()).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let cell = &buffer[(x, y)];
                cursor.bg.is_some_and(|bg| cell.bg == bg)
                    || !cursor.add_modifier.is_empty()
                        && cell.modifier.contains(cursor.add_modifier)
            })
            .collect()
    }
}

//! A terminal emulator (the `vt100` crate) fed what `FrameTerminal` wrote,
//! to see the screen a terminal would show: every cell's text and look,
//! and the cursor.

// Each test binary that includes this uses a different part of it.
#![allow(dead_code)]

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use hello_tui::tui::frame_writer::FrameTerminal;
use ratatui::Frame;
use ratatui::layout::Size;

/// Bytes written, shared with the test that reads them.
#[derive(Clone, Default)]
pub struct Tape(Arc<Mutex<Vec<u8>>>);

impl Tape {
    /// What was written since the last take.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().expect("tape"))
    }
}

impl Write for Tape {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().expect("tape").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `FrameTerminal` writing into an emulated terminal of the same size.
pub struct Emulated {
    pub terminal: FrameTerminal<Tape>,
    tape: Tape,
    pub parser: vt100::Parser,
    /// Bytes of every frame drawn so far.
    pub bytes: usize,
    /// Scrolls the frames used (each ends by resetting the region).
    pub scrolls: usize,
}

impl Emulated {
    pub fn new(size: Size, scrolling: bool) -> Self {
        let tape = Tape::default();
        Self {
            terminal: FrameTerminal::fixed(tape.clone(), size).scrolling(scrolling),
            tape,
            parser: vt100::Parser::new(size.height, size.width, 0),
            bytes: 0,
            scrolls: 0,
        }
    }

    /// The terminal (and the emulator, as a terminal emulator would be)
    /// resized.
    pub fn resize(&mut self, size: Size) {
        self.terminal.resize(size);
        self.parser.screen_mut().set_size(size.height, size.width);
    }

    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) {
        self.terminal.draw(render).expect("draw");
        let bytes = self.tape.take();
        self.bytes += bytes.len();
        self.scrolls += bytes.windows(3).filter(|w| w == b"\x1b[r").count();
        self.parser.process(&bytes);
    }

    pub fn screen(&self) -> Screen {
        Screen::of(self.parser.screen())
    }
}

/// What a terminal shows.
#[derive(Debug, PartialEq, Eq)]
pub struct Screen {
    /// The text of each row.
    pub text: Vec<String>,
    /// The look of each row: where it changes, and to what (colours and
    /// attributes; on a blank cell only what shows on a blank: the
    /// background, inverse and underline).
    pub looks: Vec<String>,
    /// Where the cursor is, when it is shown.
    pub cursor: Option<(u16, u16)>,
}

impl Screen {
    fn of(screen: &vt100::Screen) -> Self {
        let (height, width) = screen.size();
        let (mut text, mut looks) = (Vec::new(), Vec::new());
        for row in 0..height {
            let (mut line, mut look_line, mut last) = (String::new(), String::new(), String::new());
            for col in 0..width {
                let Some(cell) = screen.cell(row, col) else {
                    continue;
                };
                if cell.is_wide_continuation() {
                    continue;
                }
                let blank = !cell.has_contents() || cell.contents() == " ";
                line.push_str(if blank { " " } else { cell.contents() });
                let look = if blank {
                    format!(
                        "bg {:?} {}{}",
                        cell.bgcolor(),
                        if cell.inverse() { "inverse " } else { "" },
                        if cell.underline() { "underline" } else { "" },
                    )
                } else {
                    format!(
                        "fg {:?} bg {:?} {}{}{}{}{}",
                        cell.fgcolor(),
                        cell.bgcolor(),
                        if cell.bold() { "bold " } else { "" },
                        if cell.dim() { "dim " } else { "" },
                        if cell.italic() { "italic " } else { "" },
                        if cell.inverse() { "inverse " } else { "" },
                        if cell.underline() { "underline" } else { "" },
                    )
                };
                if look != last {
                    look_line.push_str(&format!("{col}: {look}; "));
                    last = look;
                }
            }
            text.push(line);
            looks.push(look_line);
        }
        let cursor = (!screen.hide_cursor()).then(|| screen.cursor_position());
        Screen {
            text,
            looks,
            cursor,
        }
    }

    /// The rows where `self` and `other` differ, for messages.
    pub fn differences(&self, other: &Screen) -> String {
        let mut out = String::new();
        for (row, (a, b)) in self.text.iter().zip(&other.text).enumerate() {
            if a != b || self.looks.get(row) != other.looks.get(row) {
                out.push_str(&format!(
                    "row {row}:\n  {a}\n  {}\nvs\n  {b}\n  {}\n",
                    self.looks[row], other.looks[row]
                ));
            }
        }
        if self.cursor != other.cursor {
            out.push_str(&format!("cursor {:?} vs {:?}\n", self.cursor, other.cursor));
        }
        out
    }
}

/// Draws `render` as a full redraw: on a fresh, blank terminal.
pub fn full_redraw(size: Size, render: impl FnOnce(&mut Frame)) -> Screen {
    let mut fresh = Emulated::new(size, false);
    fresh.draw(render);
    fresh.screen()
}

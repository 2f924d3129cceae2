//! Whole frames: everything one frame writes reaches the terminal in one
//! `write()`, inside a synchronized-update bracket (`ESC[?2026h` …
//! `ESC[?2026l`), and a frame whose rows moved is scrolled by the terminal
//! before the rest is drawn (`tui::scroll`).
//!
//! Why one write: ratatui's crossterm backend flushes several times per
//! frame (cursor hide/show/move use `execute!`), and stdout is
//! line-buffered with 1 KiB, so a 3 KB frame used to leave in 2–4 pieces
//! and a terminal could show a half-drawn frame (flicker). Terminals that
//! know mode 2026 hold the screen until the bracket closes; the others
//! ignore the two sequences.
//!
//! Why a terminal of our own ([`FrameTerminal`]): ratatui's `Terminal`
//! diffs each frame against the last one it drew and keeps that buffer to
//! itself, so it cannot be told that the terminal moved rows. Here ratatui
//! paints into a canvas (a `Terminal` whose backend writes nothing and
//! remembers the cursor), and the frame is diffed against `shown`, our
//! copy of what the terminal shows, after any scroll was applied to both.

use std::io::{self, Write};

use crossterm::QueueableCommand;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::{Buffer, Cell, CellWidth};
use ratatui::layout::{Position, Rect, Size};
use ratatui::{Frame, Terminal};

/// A writer that collects bytes and hands them on in one `write_all` when
/// flushed, except while a frame is open: then flushes are deferred to the
/// end of the frame. The buffer keeps its capacity, so after the first
/// frame it is sized for a frame and drawing allocates nothing.
pub struct FrameWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
    in_frame: bool,
}

impl<W: Write> FrameWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            in_frame: false,
        }
    }

    /// The writer the bytes go to (tests and benches read their counts).
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    fn begin_frame(&mut self) -> io::Result<()> {
        self.in_frame = true;
        self.pending.queue(BeginSynchronizedUpdate)?;
        Ok(())
    }

    /// Closes the bracket and sends the frame. Also on an error inside the
    /// frame, so the terminal is never left holding an open update.
    fn end_frame(&mut self) -> io::Result<()> {
        self.in_frame = false;
        self.pending.queue(EndSynchronizedUpdate)?;
        self.send()
    }

    fn send(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let sent = self.inner.write_all(&self.pending);
            // Dropped even when the write failed: a half-sent frame must
            // not be sent again in front of the next one.
            self.pending.clear();
            sent?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.in_frame {
            return Ok(());
        }
        self.send()
    }
}

/// The terminal the loop draws on: ratatui paints a frame into the
/// canvas, and what changed since the last frame goes to `W` through a
/// [`FrameWriter`], scrolled first when rows moved.
pub struct FrameTerminal<W: Write> {
    canvas: Terminal<Canvas>,
    backend: CrosstermBackend<FrameWriter<W>>,
    /// What the terminal shows: the last frame sent, moved as the
    /// terminal moved it. Empty after a clear, so everything is drawn.
    shown: Buffer,
    /// The size to draw at; `None`: ask the terminal before each frame.
    fixed: Option<Size>,
    /// Whether moved rows are scrolled by the terminal (`tui::scroll`).
    scroll: bool,
}

impl<W: Write> FrameTerminal<W> {
    /// A terminal on a tty (a new alternate screen, blank): its size is
    /// asked before each frame.
    pub fn new(out: W) -> io::Result<Self> {
        let mut terminal = Self::with_size(out, None);
        let size = terminal.size()?;
        terminal.start_at(size);
        Ok(terminal)
    }

    /// A terminal of a fixed size, blank (tests and benches write to
    /// something that is not a tty); [`Self::resize`] changes it.
    pub fn fixed(out: W, size: Size) -> Self {
        let mut terminal = Self::with_size(out, Some(size));
        terminal.start_at(size);
        terminal
    }

    fn with_size(out: W, fixed: Option<Size>) -> Self {
        let canvas = Terminal::new(Canvas::default());
        Self {
            // `Terminal::new` on a backend that cannot fail.
            canvas: canvas.unwrap_or_else(|never| match never {}),
            backend: CrosstermBackend::new(FrameWriter::new(out)),
            shown: Buffer::empty(Rect::default()),
            fixed,
            scroll: true,
        }
    }

    /// Whether moved rows are scrolled by the terminal (on by default).
    /// Off, every frame is ratatui's diff alone, as before issue 30's
    /// scrolling: the benches and tests compare the two.
    #[must_use]
    pub fn scrolling(mut self, on: bool) -> Self {
        self.scroll = on;
        self
    }

    /// A fixed terminal's new size, as a terminal emulator's resize: the
    /// next frame clears the screen and draws everything.
    pub fn resize(&mut self, size: Size) {
        self.fixed = Some(size);
    }

    pub fn size(&self) -> io::Result<Size> {
        match self.fixed {
            Some(size) => Ok(size),
            None => self.backend.size(),
        }
    }

    /// The writer the frames go to: the clipboard escape is written
    /// through it, and tests and benches read what reached it.
    pub fn writer(&self) -> &FrameWriter<W> {
        self.backend.writer()
    }

    pub fn writer_mut(&mut self) -> &mut FrameWriter<W> {
        self.backend.writer_mut()
    }

    /// Clears the screen; the next frame draws everything.
    pub fn clear(&mut self) -> io::Result<()> {
        self.backend.clear_region(ClearType::All)?;
        self.shown.reset();
        Backend::flush(&mut self.backend)
    }

    /// The screen is `size` and blank, and the canvas paints at that size.
    fn start_at(&mut self, size: Size) {
        self.shown = Buffer::empty(Rect::from((Position::ORIGIN, size)));
        self.canvas.backend_mut().size = size;
    }

    /// Draws one frame and sends it whole: one write, bracketed. The event
    /// loop draws only through this.
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> io::Result<()> {
        self.backend.writer_mut().begin_frame()?;
        let drawn = self.paint_and_send(render);
        let sent = self.backend.writer_mut().end_frame();
        drawn.and(sent)
    }

    fn paint_and_send(&mut self, render: impl FnOnce(&mut Frame)) -> io::Result<()> {
        let size = self.size()?;
        if Rect::from((Position::ORIGIN, size)) != self.shown.area {
            // What a resized terminal shows is its own business (it may
            // have rewrapped or cropped): clear it and draw everything.
            self.start_at(size);
            self.clear()?;
        }
        let next = self
            .canvas
            .draw(render)
            .unwrap_or_else(|never| match never {})
            .buffer;
        if self.scroll
            && let Some(scroll) = super::scroll::plan(&self.shown, next)
        {
            if scroll.up {
                self.backend
                    .scroll_region_up(scroll.rows.clone(), scroll.by)?;
            } else {
                self.backend
                    .scroll_region_down(scroll.rows.clone(), scroll.by)?;
            }
            super::scroll::apply(&scroll, &mut self.shown);
        }
        forget_orphaned_halves(&mut self.shown, next);
        self.backend.draw(self.shown.diff_iter(next))?;
        self.shown.clone_from(next);
        match self.canvas.backend().cursor {
            None => self.backend.hide_cursor()?,
            Some(at) => {
                self.backend.show_cursor()?;
                self.backend.set_cursor_position(at)?;
            }
        }
        Backend::flush(&mut self.backend)
    }
}

/// A cell no frame draws (a Unicode noncharacter): what `shown` holds
/// where the terminal's content is not known, so the diff sends the
/// frame's cell there.
const UNKNOWN: Cell = Cell::new("\u{FFFF}");

/// A wide character whose left half the next frame overwrites leaves its
/// right half to the terminal, which blanks it in colours of its choosing
/// (often those in effect, the new cell's: an inverse or coloured blank
/// where the frame has none). ratatui's diff sends that half again only
/// when the old character's own colours would show on a blank; marking it
/// unknown sends it always.
fn forget_orphaned_halves(shown: &mut Buffer, next: &Buffer) {
    let width = usize::from(shown.area.width);
    if next.area != shown.area || width == 0 {
        return;
    }
    for i in 0..shown.content.len() {
        let old = &shown.content[i];
        // ASCII is one column: the common case costs a length check.
        if old.symbol().len() < 2 || old == &next.content[i] {
            continue;
        }
        let wide = usize::from(old.cell_width());
        let row_end = (i / width + 1) * width;
        for half in shown
            .content
            .iter_mut()
            .take(row_end.min(i + wide))
            .skip(i + 1)
        {
            *half = UNKNOWN;
        }
    }
}

/// The backend ratatui paints through: it writes nothing (the frame is
/// sent by [`FrameTerminal`]) and remembers where the frame put the
/// cursor. Its `draw` never looks at the diff, so ratatui's own diff is
/// not even computed.
#[derive(Debug, Default)]
struct Canvas {
    size: Size,
    /// Where the cursor is shown; `None`: hidden.
    cursor: Option<Position>,
    at: Position,
}

impl Backend for Canvas {
    type Error = std::convert::Infallible;

    fn draw<'a, I>(&mut self, _content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        Ok(())
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor = None;
        Ok(())
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.cursor = Some(self.at);
        Ok(())
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        Ok(self.at)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.at = position.into();
        if self.cursor.is_some() {
            self.cursor = Some(self.at);
        }
        Ok(())
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn clear_region(&mut self, _: ClearType) -> Result<(), Self::Error> {
        Ok(())
    }

    fn size(&self) -> Result<Size, Self::Error> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn scroll_region_up(&mut self, _: std::ops::Range<u16>, _: u16) -> Result<(), Self::Error> {
        Ok(())
    }

    fn scroll_region_down(&mut self, _: std::ops::Range<u16>, _: u16) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::widgets::Paragraph;

    /// Counts `write()` calls and keeps the bytes, like a tty would see them.
    #[derive(Default)]
    struct Counting {
        writes: usize,
        bytes: Vec<u8>,
    }

    impl Write for Counting {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A frame that moves and shows the cursor (ratatui flushes for each of
    /// those) still leaves in one write, bracketed.
    #[test]
    fn a_frame_with_cursor_moves_is_one_bracketed_write() {
        let mut terminal = FrameTerminal::fixed(Counting::default(), Size::new(80, 24));
        for text in ["first frame", "second frame, longer"] {
            let before = terminal.writer().get_ref().writes;
            terminal
                .draw(|f| {
                    f.render_widget(Paragraph::new(text.repeat(40)), f.area());
                    f.set_cursor_position((3, 4));
                })
                .expect("draw");
            let out = terminal.writer().get_ref();
            assert_eq!(out.writes, before + 1, "one write for the frame");
        }
        let bytes = String::from_utf8_lossy(&terminal.writer().get_ref().bytes).into_owned();
        assert_eq!(bytes.matches("\x1b[?2026h").count(), 2);
        assert_eq!(bytes.matches("\x1b[?2026l").count(), 2);
        assert!(bytes.starts_with("\x1b[?2026h"));
        assert!(bytes.ends_with("\x1b[?2026l"));
    }

    /// Outside a frame (the clipboard escape, a clear) a flush sends what
    /// was written at once, unbracketed: nothing waits for a next frame.
    #[test]
    fn writes_outside_a_frame_leave_on_flush() {
        let mut out = FrameWriter::new(Counting::default());
        out.write_all(b"\x1b]52;c;aGk=\x07").expect("write");
        assert_eq!(out.get_ref().writes, 0, "held until the flush");
        out.flush().expect("flush");
        assert_eq!(out.get_ref().writes, 1);
        assert_eq!(out.get_ref().bytes, b"\x1b]52;c;aGk=\x07");
    }
}

//! Whole frames: everything one frame writes reaches the terminal in one
//! `write()`, inside a synchronized-update bracket (`ESC[?2026h` …
//! `ESC[?2026l`).
//!
//! Why: ratatui's crossterm backend flushes several times per frame (cursor
//! hide/show/move use `execute!`), and stdout is line-buffered with 1 KiB,
//! so a 3 KB frame used to leave in 2–4 pieces and a terminal could show a
//! half-drawn frame (flicker). Terminals that know mode 2026 hold the screen
//! until the bracket closes; the others ignore the two sequences.

use std::io::{self, Write};

use crossterm::QueueableCommand;
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use ratatui::backend::CrosstermBackend;
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

/// A terminal whose backend writes through a [`FrameWriter`].
pub type FrameTerminal<W> = Terminal<CrosstermBackend<FrameWriter<W>>>;

/// Draws one frame and sends it whole: one write, bracketed. The event
/// loop draws only through this.
pub fn draw_whole<W: Write>(
    terminal: &mut FrameTerminal<W>,
    render: impl FnOnce(&mut Frame),
) -> io::Result<()> {
    terminal.backend_mut().writer_mut().begin_frame()?;
    let drawn = terminal.draw(render).map(|_| ());
    let sent = terminal.backend_mut().writer_mut().end_frame();
    drawn.and(sent)
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
        let backend = CrosstermBackend::new(FrameWriter::new(Counting::default()));
        let mut terminal = Terminal::with_options(
            backend,
            ratatui::TerminalOptions {
                viewport: ratatui::Viewport::Fixed(ratatui::layout::Rect::new(0, 0, 80, 24)),
            },
        )
        .expect("terminal");
        for text in ["first frame", "second frame, longer"] {
            let before = terminal.backend().writer().get_ref().writes;
            draw_whole(&mut terminal, |f| {
                f.render_widget(Paragraph::new(text.repeat(40)), f.area());
                f.set_cursor_position((3, 4));
            })
            .expect("draw");
            let out = terminal.backend().writer().get_ref();
            assert_eq!(out.writes, before + 1, "one write for the frame");
        }
        let bytes =
            String::from_utf8_lossy(&terminal.backend().writer().get_ref().bytes).into_owned();
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

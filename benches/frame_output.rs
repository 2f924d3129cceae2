//! What reaches the terminal per frame while an answer streams: bytes and
//! `write()` calls, through the real crossterm backend. The same frames are
//! drawn three ways in the same run:
//! - "line-buffered": as the workbench drew until issue 30
//!   (`Terminal::draw` into stdout's 1 KiB line buffer, here a `LineWriter`
//!   of that capacity over a counting writer);
//! - "whole, diff only": `tui::frame_writer::FrameTerminal` with scrolling
//!   off (one write, bracketed; ratatui's diff of the last frame);
//! - "whole, scrolled": as it draws now (rows that moved are scrolled by
//!   the terminal, `tui::scroll`, and only the new ones drawn).
//!
//! In three layouts: the conversation beside the inspector (what the
//! workbench shows with no file open), beside an open file, and zoomed.
//!
//! Run: `cargo bench --bench frame_output`.

use std::io::{self, LineWriter, Write};
use std::time::{Duration, Instant};

use hello_tui::theme::Theme;
use hello_tui::tui::frame_writer::FrameTerminal;
use hello_tui::ui;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::{Rect, Size};
use ratatui::{Terminal, TerminalOptions, Viewport};

#[path = "../tests/support/streaming.rs"]
mod streaming;
use streaming::{CHUNK, Layout};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

/// Counts `write()` calls and the bytes of each one.
#[derive(Default)]
struct Counting {
    writes: usize,
    bytes: usize,
    brackets: usize,
    scrolls: usize,
    /// Bytes of the largest `write()`.
    largest: usize,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        self.bytes += buf.len();
        self.largest = self.largest.max(buf.len());
        self.brackets += buf.windows(8).filter(|w| w == b"\x1b[?2026h").count();
        // Every scroll ends by resetting the region.
        self.scrolls += buf.windows(3).filter(|w| w == b"\x1b[r").count();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Default)]
struct PerFrame {
    bytes: Vec<usize>,
    writes: Vec<usize>,
    /// Painting and sending the frame (`draw`), in microseconds.
    micros: Vec<f64>,
}

impl PerFrame {
    fn record(&mut self, out: &Counting, before: (usize, usize), took: Duration) {
        self.writes.push(out.writes - before.0);
        self.bytes.push(out.bytes - before.1);
        self.micros.push(took.as_secs_f64() * 1e6);
    }

    fn report(&mut self, layout: &str, name: &str, answer_bytes: usize, out: &Counting) {
        let frames = self.bytes.len();
        let total: usize = self.bytes.iter().sum();
        let one_write = self.writes.iter().filter(|&&w| w == 1).count();
        self.bytes.sort_unstable();
        self.micros.sort_unstable_by(f64::total_cmp);
        let p = |q: f64| self.bytes[((frames as f64 - 1.0) * q) as usize];
        println!(
            "| {layout} | {name} | {frames} | {:.0} | {} | {} | {} | {:.2} | {:.0}% | {} | {} | {:.0}x | {:.0} µs |",
            total as f64 / frames as f64,
            p(0.5),
            p(0.9),
            p(1.0),
            self.writes.iter().sum::<usize>() as f64 / frames as f64,
            100.0 * one_write as f64 / frames as f64,
            out.brackets,
            out.scrolls,
            total as f64 / answer_bytes as f64,
            self.micros[frames / 2],
        );
    }
}

fn stream(layout: Layout) {
    let theme = Theme::builtin_default();
    let size = Size::new(WIDTH, HEIGHT);
    let mut state = streaming::workbench(layout, size);
    let mut line_buffered = Terminal::with_options(
        CrosstermBackend::new(LineWriter::with_capacity(1024, Counting::default())),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
        },
    )
    .expect("terminal");
    let mut diff_only = FrameTerminal::fixed(Counting::default(), size).scrolling(false);
    let mut scrolled = FrameTerminal::fixed(Counting::default(), size);
    let mut model = ui::FrameModel::default();
    let text = streaming::answer();
    let (mut old, mut diff, mut new) = (
        PerFrame::default(),
        PerFrame::default(),
        PerFrame::default(),
    );
    for chunk in streaming::chunks(&text) {
        streaming::append(&mut state, chunk);
        hello_tui::app::update::before_frame(&mut state);
        hello_tui::app::frame::prepare(&mut state, &mut model, &theme);
        let render = |f: &mut ratatui::Frame| {
            hello_tui::app::frame::render(&state, &model, &theme, f);
        };

        let c = line_buffered.backend().writer().get_ref();
        let before = (c.writes, c.bytes);
        let start = Instant::now();
        line_buffered.draw(render).expect("draw");
        old.record(
            line_buffered.backend().writer().get_ref(),
            before,
            start.elapsed(),
        );

        for (terminal, per_frame) in [(&mut diff_only, &mut diff), (&mut scrolled, &mut new)] {
            let c = terminal.writer().get_ref();
            let before = (c.writes, c.bytes);
            let start = Instant::now();
            terminal.draw(render).expect("draw");
            per_frame.record(terminal.writer().get_ref(), before, start.elapsed());
        }
    }
    let name = layout.name();
    old.report(
        name,
        "line-buffered",
        text.len(),
        line_buffered.backend().writer().get_ref(),
    );
    diff.report(
        name,
        "whole, diff only",
        text.len(),
        diff_only.writer().get_ref(),
    );
    new.report(
        name,
        "whole, scrolled",
        text.len(),
        scrolled.writer().get_ref(),
    );
}

fn main() {
    println!(
        "a {} B answer streamed in {CHUNK} B chunks, one frame per chunk, {WIDTH}x{HEIGHT}",
        streaming::answer().len()
    );
    println!(
        "| conversation | draw | frames | bytes/frame mean | p50 | p90 | max | write()s/frame | frames in one write | ESC[?2026h | scrolls | bytes / answer | draw p50 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for layout in [Layout::BesideInspector, Layout::BesideFile, Layout::Zoomed] {
        stream(layout);
    }
}

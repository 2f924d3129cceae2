//! What reaches the terminal per frame while an answer streams: bytes and
//! `write()` calls, through the real crossterm backend. The same frames are
//! drawn two ways in the same run: "before" as the workbench drew until
//! issue 30 (`Terminal::draw` into stdout's 1 KiB line buffer, here a
//! `LineWriter` of that capacity over a counting writer) and "after" as it
//! draws now (`tui::frame_writer::draw_whole`: one write, bracketed).
//!
//! Run: `cargo bench --bench frame_output`.

use std::io::{self, LineWriter, Write};

use crossterm::event::Event;
use hello_tui::app::AppState;
use hello_tui::app::update::handle_terminal_event;
use hello_tui::config::Settings;
use hello_tui::theme::Theme;
use hello_tui::tui::frame_writer::{FrameWriter, draw_whole};
use hello_tui::ui;
use hello_tui::workbench::transcript::{PaneEntry, Speaker};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
/// Bytes of answer text added per streamed chunk (a model's delta).
const CHUNK: usize = 24;

/// Counts `write()` calls and the bytes of each one.
#[derive(Default)]
struct Counting {
    writes: usize,
    bytes: usize,
    brackets: usize,
    /// Bytes of the last `write()`, to see the largest piece.
    largest: usize,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        self.bytes += buf.len();
        self.largest = self.largest.max(buf.len());
        self.brackets += buf.windows(8).filter(|w| w == b"\x1b[?2026h").count();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An answer of about 4 KB, prose and a code block, as a model streams it.
fn answer() -> String {
    let mut s = String::from("## Why the test fails\n\n");
    for i in 0..18 {
        s.push_str(&format!(
            "Step {i}: the handler reads `request.user` before the session is \
             loaded, so the **role** is empty and the check refuses it.\n\n"
        ));
        if i % 6 == 5 {
            s.push_str("```python\ndef check(user):\n    return user.role in (\"admin\", \"user\")\n```\n\n");
        }
    }
    s
}

struct PerFrame {
    bytes: Vec<usize>,
    writes: Vec<usize>,
}

impl PerFrame {
    fn report(&mut self, name: &str, answer_bytes: usize, brackets: usize, largest: usize) {
        let frames = self.bytes.len();
        let total: usize = self.bytes.iter().sum();
        let one_write = self.writes.iter().filter(|&&w| w == 1).count();
        self.bytes.sort_unstable();
        let p = |q: f64| self.bytes[((frames as f64 - 1.0) * q) as usize];
        println!(
            "| {name} | {frames} | {:.0} | {} | {} | {} | {:.2} | {} | {:.0}% | {largest} | {brackets} | {:.0}x |",
            total as f64 / frames as f64,
            p(0.5),
            p(0.9),
            p(1.0),
            self.writes.iter().sum::<usize>() as f64 / frames as f64,
            self.writes.iter().max().copied().unwrap_or(0),
            100.0 * one_write as f64 / frames as f64,
            total as f64 / answer_bytes as f64,
        );
    }
}

fn main() {
    let theme = Theme::builtin_default();
    let mut state = AppState::new("/bench".into(), Settings::defaults());
    handle_terminal_event(&mut state, Event::Resize(WIDTH, HEIGHT));
    for i in 0..4 {
        state.workbench.transcript_mut().push(PaneEntry::new(
            Speaker::User,
            format!("question {i}: why does the auth test fail?"),
        ));
        state
            .workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::Assistant, answer()));
    }
    state
        .workbench
        .transcript_mut()
        .push(PaneEntry::new(Speaker::User, "and the last one?"));
    state
        .workbench
        .transcript_mut()
        .push(PaneEntry::new(Speaker::Assistant, String::new()));
    let options = || TerminalOptions {
        viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)),
    };
    let mut before = Terminal::with_options(
        CrosstermBackend::new(LineWriter::with_capacity(1024, Counting::default())),
        options(),
    )
    .expect("terminal");
    let mut after = Terminal::with_options(
        CrosstermBackend::new(FrameWriter::new(Counting::default())),
        options(),
    )
    .expect("terminal");
    let mut model = ui::FrameModel::default();
    let text = answer();
    let mut old = PerFrame {
        bytes: Vec::new(),
        writes: Vec::new(),
    };
    let mut new = PerFrame {
        bytes: Vec::new(),
        writes: Vec::new(),
    };
    let mut sent = 0;
    while sent < text.len() {
        let mut end = (sent + CHUNK).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let last = state.workbench.transcript().len() - 1;
        if let Some(entry) = state.workbench.transcript_mut().edit(last) {
            entry.text.push_str(&text[sent..end]);
        }
        sent = end;
        hello_tui::app::update::before_frame(&mut state);
        hello_tui::app::frame::prepare(&mut state, &mut model, &theme);

        let (w0, b0) = {
            let c = before.backend().writer().get_ref();
            (c.writes, c.bytes)
        };
        before
            .draw(|f| hello_tui::app::frame::render(&state, &model, &theme, f))
            .expect("draw");
        let c = before.backend().writer().get_ref();
        old.writes.push(c.writes - w0);
        old.bytes.push(c.bytes - b0);

        let (w0, b0) = {
            let c = after.backend().writer().get_ref();
            (c.writes, c.bytes)
        };
        draw_whole(&mut after, |f| {
            hello_tui::app::frame::render(&state, &model, &theme, f)
        })
        .expect("draw");
        let c = after.backend().writer().get_ref();
        new.writes.push(c.writes - w0);
        new.bytes.push(c.bytes - b0);
    }
    println!(
        "a {} B answer streamed in {CHUNK} B chunks, one frame per chunk, {WIDTH}x{HEIGHT}",
        text.len()
    );
    println!(
        "| draw | frames | bytes/frame mean | p50 | p90 | max | write()s/frame | max | frames in one write | largest write | ESC[?2026h | bytes / answer |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let c = before.backend().writer().get_ref();
    let (brackets, largest) = (c.brackets, c.largest);
    old.report("before", text.len(), brackets, largest);
    let c = after.backend().writer().get_ref();
    let (brackets, largest) = (c.brackets, c.largest);
    new.report("after", text.len(), brackets, largest);
}

//! An answer streaming into the workbench, as the frame tests and the
//! frame-output bench draw it: earlier questions and answers, the newest
//! answer growing by a chunk per frame, in one of the layouts the
//! conversation has.

// Each test binary that includes this uses a different part of it.
#![allow(dead_code)]

use crossterm::event::Event;
use hello_tui::app::AppState;
use hello_tui::app::update::handle_terminal_event;
use hello_tui::config::Settings;
use hello_tui::keymap::PaneId;
use hello_tui::workbench::transcript::{PaneEntry, Speaker};
use ratatui::layout::Size;

/// Bytes of answer text a chunk adds (a model's delta).
pub const CHUNK: usize = 24;

/// An answer of about 2.5 KB, prose (some of it wide characters) and code
/// blocks.
pub fn answer() -> String {
    let mut s = String::from("## Why the test fails\n\n");
    for i in 0..18 {
        s.push_str(&format!(
            "Step {i}: the handler reads `request.user` before the session is \
             loaded, so the **role** is empty and 日本語 the check refuses it.\n\n"
        ));
        if i % 6 == 5 {
            s.push_str("```python\ndef check(user):\n    return user.role in (\"admin\", \"user\")\n```\n\n");
        }
    }
    s
}

/// `text` in chunks of about [`CHUNK`] bytes, cut between characters.
pub fn chunks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut sent = 0;
    while sent < text.len() {
        let mut end = (sent + CHUNK).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[sent..end]);
        sent = end;
    }
    out
}

/// Where the conversation is on the screen.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// Beside the variables and the diagnostics (no file open).
    BesideInspector,
    /// Beside an open file.
    BesideFile,
    /// Zoomed: the whole screen.
    Zoomed,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::BesideInspector => "beside the inspector",
            Layout::BesideFile => "beside a file",
            Layout::Zoomed => "zoomed",
        }
    }
}

/// The workbench at `size`, four questions and three answers in, the
/// fourth answer empty and about to stream.
pub fn workbench(layout: Layout, size: Size) -> AppState {
    let mut state = AppState::new("/nowhere".into(), Settings::defaults());
    handle_terminal_event(&mut state, Event::Resize(size.width, size.height));
    for i in 0..3 {
        let transcript = state.workbench.transcript_mut();
        transcript.push(PaneEntry::new(Speaker::User, format!("question {i}?")));
        transcript.push(PaneEntry::new(Speaker::Assistant, answer()));
    }
    let transcript = state.workbench.transcript_mut();
    transcript.push(PaneEntry::new(Speaker::User, "and the last one?"));
    transcript.push(PaneEntry::new(Speaker::Assistant, String::new()));
    match layout {
        Layout::BesideInspector => {}
        Layout::BesideFile => {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/run.rs");
            hello_tui::app::editors::open(&mut state, &file, Some((120, 1)));
            state.focus = PaneId::Conversation;
        }
        Layout::Zoomed => state.layout_choice.zoomed = true,
    }
    state
}

/// Adds `chunk` to the newest answer.
pub fn append(state: &mut AppState, chunk: &str) {
    let last = state.workbench.transcript().len() - 1;
    if let Some(entry) = state.workbench.transcript_mut().edit(last) {
        entry.text.push_str(chunk);
    }
}

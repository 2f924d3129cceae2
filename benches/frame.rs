//! What one frame of the workbench costs as the conversation grows: the
//! whole `prepare` + `render` on a 120x40 `TestBackend`, with entries of
//! realistic Markdown (prose, a 13-line Python block, some TypeScript
//! blocks and tables), next to the same frame with an empty conversation
//! measured in the same run (the baseline: a flat frame has ratio ~1).
//!
//! Then typing in a draft that mentions a file (`@big.py`), next to the
//! same draft without the mention: each key moves the context gauge,
//! which assembles what Enter would send, mentioned files included.
//!
//! Run: `cargo bench --bench frame` (sizes: `FRAME_BENCH_SIZES=0,10,100`).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use hello_tui::app::AppState;
use hello_tui::app::update::handle_terminal_event;
use hello_tui::config::Settings;
use hello_tui::editor::Highlighter;
use hello_tui::theme::Theme;
use hello_tui::tokens::TokenCounter;
use hello_tui::ui;
use hello_tui::workbench::transcript::{PaneEntry, Speaker};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[path = "support/python_file.rs"]
mod python_file;

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;

/// An assistant answer of about 1.5 KB, like a model writes about code.
fn assistant_answer(i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## Step {i}: why `check_auth` rejects users\n\nThe handler compares the \
         **role** against `\"admin\"` only, so every *plain* user is refused before \
         the token is even read. Here is the fixed version, with the comparison \
         moved behind the token check:\n"
    );
    s.push_str("```python\n");
    for line in 0..13 {
        let _ = writeln!(
            s,
            "def handler_{i}_{line}(request, *args, **kwargs):  # step {line}"
        );
    }
    s.push_str("```\n\n");
    if i.is_multiple_of(3) {
        s.push_str(
            "```ts\nexport function checkAuth(user: User): boolean {\n  \
             return user.role === \"admin\" || user.role === \"user\";\n}\n```\n\n",
        );
    }
    if i.is_multiple_of(4) {
        s.push_str("| file | line | change |\n|---|---:|---|\n| auth.ts | 3 | role check |\n| api.ts | 17 | caller |\n\n");
    }
    s.push_str(
        "- the test `test_plain_user_allowed` now passes\n- nothing else calls it\n\n\
         Run the suite again to confirm; the kernel still holds `users` and `token`.",
    );
    s
}

fn state_with(entries: usize, highlighter: &Arc<Highlighter>) -> AppState {
    let mut s = AppState::new("/work/bench".into(), Settings::defaults());
    s.highlighter = Some(highlighter.clone());
    for i in 0..entries {
        let message = if i.is_multiple_of(2) {
            PaneEntry::new(
                Speaker::User,
                format!("question {i}: why does checkAuth fail?"),
            )
        } else {
            PaneEntry::new(Speaker::Assistant, assistant_answer(i))
        };
        s.workbench.transcript_mut().push(message);
    }
    handle_terminal_event(&mut s, Event::Resize(WIDTH, HEIGHT));
    s
}

fn frame(
    state: &mut AppState,
    model: &mut ui::FrameModel,
    theme: &Theme,
    terminal: &mut Terminal<TestBackend>,
) {
    hello_tui::app::update::before_frame(state);
    hello_tui::app::frame::prepare(state, model, theme);
    terminal
        .draw(|f| hello_tui::app::frame::render(state, model, theme, f))
        .expect("draw on a test backend");
}

fn key(state: &mut AppState, code: KeyCode, modifiers: KeyModifiers) {
    handle_terminal_event(state, Event::Key(KeyEvent::new(code, modifiers)));
}

/// Times `f` until `budget` is spent (at least 3, at most 200 runs).
fn measure(budget: Duration, mut f: impl FnMut()) -> (Duration, usize) {
    let started = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || (started.elapsed() < budget && times.len() < 200) {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    (times[times.len() / 2], times.len())
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let sizes: Vec<usize> = std::env::var("FRAME_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![0, 10, 100, 500, 2000]);
    let theme = Theme::builtin_default();
    let budget = Duration::from_secs(2);
    // Syntect compiles a language's grammar the first time it is used; that
    // one-off cost is measured apart, so "first frame" is the layout alone.
    let highlighter = Arc::new(Highlighter::new(Highlighter::DEFAULT_DARK).expect("bundled theme"));
    let t = Instant::now();
    {
        let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
        let mut state = state_with(8, &highlighter);
        let mut model = ui::FrameModel::default();
        frame(&mut state, &mut model, &theme, &mut terminal);
    }
    println!(
        "syntect warm-up (first Python and TypeScript blocks ever): {}",
        ms(t.elapsed())
    );
    println!("frame on a {WIDTH}x{HEIGHT} TestBackend, p50 (runs)");
    println!(
        "| entries | first frame | steady frame | keystroke → frame | Ctrl+Home → frame | steady / empty |"
    );
    println!("|---|---|---|---|---|---|");
    let mut empty_steady = None;
    for n in sizes {
        let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
        let mut state = state_with(n, &highlighter);
        let mut model = ui::FrameModel::default();
        let t = Instant::now();
        frame(&mut state, &mut model, &theme, &mut terminal);
        let first = t.elapsed();
        let (steady, runs) = measure(budget, || {
            frame(&mut state, &mut model, &theme, &mut terminal)
        });
        let (typing, _) = measure(budget, || {
            key(&mut state, KeyCode::Char('a'), KeyModifiers::NONE);
            frame(&mut state, &mut model, &theme, &mut terminal);
        });
        let (top, _) = measure(budget, || {
            key(&mut state, KeyCode::End, KeyModifiers::CONTROL);
            frame(&mut state, &mut model, &theme, &mut terminal);
            key(&mut state, KeyCode::Home, KeyModifiers::CONTROL);
            frame(&mut state, &mut model, &theme, &mut terminal);
        });
        let base = *empty_steady.get_or_insert(steady);
        println!(
            "| {n} | {} | {} ({runs}) | {} | {} | {:.2} |",
            ms(first),
            ms(steady),
            ms(typing),
            ms(top / 2),
            steady.as_secs_f64() / base.as_secs_f64().max(1e-9),
        );
    }
    mention_typing(&theme, &highlighter, budget);
}

/// Keystroke → frame in a draft that mentions a file, against the same
/// draft without a mention (the ratio's baseline), counted with o200k.
fn mention_typing(theme: &Theme, highlighter: &Arc<Highlighter>, budget: Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    // ~900 KB: under the 1 MiB a mention reads, over a 128k window's share.
    std::fs::write(
        dir.path().join("big.py"),
        python_file::python_source(22_000),
    )
    .expect("write big.py");
    std::fs::write(dir.path().join("small.py"), python_file::python_source(200))
        .expect("write small.py");
    println!();
    println!("typing in a draft that mentions a file (gpt-4o, o200k), keystroke → frame, p50");
    println!("| draft | keystroke → frame | ratio to no mention |");
    println!("|---|---|---|");
    let mut base = None;
    for draft in ["explain ", "explain @small.py ", "explain @big.py "] {
        let mut settings = Settings::defaults();
        settings.model = Some("gpt-4o".into());
        let mut state = AppState::new(dir.path().to_path_buf(), settings);
        state.highlighter = Some(highlighter.clone());
        // As after the first turn, which installs the model's counter.
        state
            .workbench
            .agent()
            .conversation()
            .try_lock()
            .expect("no turn runs")
            .set_counter(Arc::new(TokenCounter::for_model("gpt-4o")));
        handle_terminal_event(&mut state, Event::Resize(WIDTH, HEIGHT));
        let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal");
        let mut model = ui::FrameModel::default();
        for c in draft.chars() {
            key(&mut state, KeyCode::Char(c), KeyModifiers::NONE);
        }
        frame(&mut state, &mut model, theme, &mut terminal);
        let (typing, runs) = measure(budget, || {
            key(&mut state, KeyCode::Char('a'), KeyModifiers::NONE);
            frame(&mut state, &mut model, theme, &mut terminal);
        });
        let base = *base.get_or_insert(typing);
        println!(
            "| `{}` | {} ({runs}) | {:.2} |",
            draft.trim_end(),
            ms(typing),
            typing.as_secs_f64() / base.as_secs_f64().max(1e-9)
        );
    }
}

//! Editor frame costs, each next to a baseline measured in the same run:
//! highlighting the whole file in one syntect pass.
//!
//! Run: `cargo bench --bench editor`

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use hello_tui::editor::{Document, EditCommand, FileViewStyles, Highlighter, render_file_view};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use syntect::easy::HighlightLines;
use syntect::highlighting::ThemeSet;

const AREA: Rect = Rect {
    x: 0,
    y: 0,
    width: 120,
    height: 40,
};

fn python_source(lines: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < lines {
        let _ = writeln!(s, "def handler_{i}(request, *args, **kwargs):");
        let _ = writeln!(s, "    \"\"\"Handle request {i}.\"\"\"");
        let _ = writeln!(
            s,
            "    value = compute(request.data[{i}], factor=3.5)  # note"
        );
        let _ = writeln!(s, "    return {{'id': {i}, 'value': value, 'ok': True}}");
        let _ = writeln!(s);
        i += 5;
    }
    s
}

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn measure(warmup: usize, iters: usize, mut f: impl FnMut()) -> Stats {
    for _ in 0..warmup {
        f();
    }
    let mut times: Vec<Duration> = (0..iters)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    Stats {
        p50: times[times.len() / 2],
        p99: times[(times.len() * 99 / 100).min(times.len() - 1)],
    }
}

fn report(name: &str, s: &Stats, baseline: Duration) {
    println!(
        "{name:<58} p50 {:>10.3?}  p99 {:>10.3?}  = {:>7.4}x baseline",
        s.p50,
        s.p99,
        s.p50.as_secs_f64() / baseline.as_secs_f64()
    );
}

/// The baseline: highlight every line of the file in one pass.
fn whole_file_pass(text: &str) -> Duration {
    let ss = two_face::syntax::extra_newlines();
    let themes = ThemeSet::load_defaults();
    let syntax = ss.find_syntax_by_extension("py").expect("python syntax");
    let t = Instant::now();
    let mut h = HighlightLines::new(syntax, &themes.themes[Highlighter::DEFAULT_DARK]);
    let mut spans = 0;
    for line in text.split_inclusive('\n') {
        spans += h.highlight_line(line, &ss).map_or(0, |v| v.len());
    }
    assert!(spans > 0);
    t.elapsed()
}

fn frame(doc: &mut Document, hl: &Highlighter, buf: &mut Buffer) {
    doc.prepare_frame(hl, AREA);
    render_file_view(doc, &FileViewStyles::dark(), AREA, buf);
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    let hl = Highlighter::new(Highlighter::DEFAULT_DARK).expect("theme");
    println!(
        "Highlighter::new (syntaxes + theme, once per app): {:.3?}",
        t.elapsed()
    );
    let mut buf = Buffer::empty(AREA);

    // --- 100 000-line file (opens read-only: too big for the engine) ---
    let big = python_source(100_000);
    let big_path = dir.path().join("big.py");
    std::fs::write(&big_path, &big).expect("write");
    let base_big = whole_file_pass(&big);
    println!(
        "\n100 000 lines, {} bytes; baseline whole-file highlight: {base_big:.3?}",
        big.len()
    );
    let s = measure(2, 10, || {
        let mut doc = Document::open(&big_path).expect("open");
        frame(&mut doc, &hl, &mut buf);
    });
    report("open + first frame (prepare + render 120x40)", &s, base_big);

    let mut doc = Document::open(&big_path).expect("open");
    let t = Instant::now();
    doc.apply(EditCommand::GoToLine(50_000)).expect("goto");
    frame(&mut doc, &hl, &mut buf);
    let first = t.elapsed();
    let mut frames = 1;
    let t_all = Instant::now();
    while doc.needs_more_work() {
        frame(&mut doc, &hl, &mut buf);
        frames += 1;
    }
    println!(
        "jump to line 50 000: first frame {first:.3?} (plain where not reached), \
         {frames} frames until fully highlighted, {:.3?} for the rest",
        t_all.elapsed()
    );
    let mut down = true;
    let s = measure(20, 400, || {
        doc.apply(EditCommand::Move(if down {
            hello_tui::editor::Motion::PageDown
        } else {
            hello_tui::editor::Motion::PageUp
        }))
        .expect("move");
        down = !down;
        // Cursor stays on screen, so scroll with the wheel instead.
        doc.scroll_by(if down { 1 } else { -1 });
        frame(&mut doc, &hl, &mut buf);
    });
    report("scroll frame in the middle (line ~50 000)", &s, base_big);

    // --- 20 000-line file: keystroke → frame ---
    let mid = python_source(20_000);
    let mid_path = dir.path().join("mid.py");
    std::fs::write(&mid_path, &mid).expect("write");
    let base_mid = whole_file_pass(&mid);
    println!(
        "\n20 000 lines, {} bytes; baseline whole-file highlight: {base_mid:.3?}",
        mid.len()
    );
    let mut doc = Document::open(&mid_path).expect("open");
    doc.apply(EditCommand::GoToLine(10_003)).expect("goto");
    doc.apply(EditCommand::Move(hello_tui::editor::Motion::LineEnd))
        .expect("end");
    frame(&mut doc, &hl, &mut buf);
    while doc.needs_more_work() {
        frame(&mut doc, &hl, &mut buf);
    }
    let mut insert = false;
    let s = measure(20, 500, || {
        // Alternate insert and delete so the line stays short and the
        // buffer flips dirty/clean: both dirty-check outcomes are timed.
        insert = !insert;
        let cmd = if insert {
            EditCommand::InsertChar('x')
        } else {
            EditCommand::DeleteBack
        };
        doc.apply(cmd).expect("edit");
        frame(&mut doc, &hl, &mut buf);
    });
    report(
        "keystroke -> frame (edit, dirty check, rehighlight, render)",
        &s,
        base_mid,
    );
    assert!(!doc.is_dirty());

    let lines = doc.lines().to_vec();
    let s = measure(20, 500, || {
        std::hint::black_box(doc.lines() == lines.as_slice());
    });
    report(
        "  worst-case dirty check: full compare with saved text",
        &s,
        base_mid,
    );
    let mut doc2 = Document::open(&mid_path).expect("open");
    doc2.apply(EditCommand::GoToLine(10_003)).expect("goto");
    let s = measure(20, 500, || {
        doc2.apply(EditCommand::InsertChar('x')).expect("edit");
    });
    report("  edit engine + dirty check only (no frame)", &s, base_mid);

    // --- the editable-size limit: keystroke cost near 65 535 lines ---
    let edge = python_source(65_000);
    let edge_path = dir.path().join("edge.py");
    std::fs::write(&edge_path, &edge).expect("write");
    let base_edge = whole_file_pass(&edge);
    let mut doc = Document::open(&edge_path).expect("open");
    assert!(doc.read_only_reason().is_none());
    doc.apply(EditCommand::GoToLine(32_000)).expect("goto");
    frame(&mut doc, &hl, &mut buf);
    while doc.needs_more_work() {
        frame(&mut doc, &hl, &mut buf);
    }
    let s = measure(10, 200, || {
        doc.apply(EditCommand::InsertChar('x')).expect("edit");
        frame(&mut doc, &hl, &mut buf);
    });
    println!(
        "\n65 000 lines, {} bytes; baseline {base_edge:.3?}",
        edge.len()
    );
    report("keystroke -> frame at the editable limit", &s, base_edge);
}

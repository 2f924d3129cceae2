//! Editor costs at every file size, each next to a baseline measured in the
//! same run: highlighting the whole file in one syntect pass (with the
//! regex backend this build uses), and the file's size for memory.
//!
//! Run: `cargo bench --bench editor`
//! The other regex backend (syntect's are exclusive in one binary): swap
//! `default-onig` for `default-fancy` (syntect) and `syntect-default-onig`
//! for `syntect-default-fancy` (two-face) in Cargo.toml and run it again.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use hello_tui::editor::{
    Document, EditCommand, FileViewStyles, Highlighter, Motion, render_file_view,
};
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

/// Resident memory of this process, in bytes (Linux).
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
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

/// Distinct foreground colours in the text area: more than two means the
/// visible lines are syntax-coloured (not plain).
fn colours(buf: &Buffer) -> usize {
    let mut seen: Vec<_> = (0..AREA.height)
        .flat_map(|y| (8..AREA.width).map(move |x| (x, y)))
        .map(|p| buf[p].fg)
        .collect();
    seen.sort_by_key(|c| format!("{c:?}"));
    seen.dedup();
    seen.len()
}

/// Keystroke → frame at the end of the middle line of a `lines`-line file
/// (highlighting settled first): insert and delete alternately, so the
/// buffer flips dirty/clean and both dirty-check outcomes are timed.
fn keystroke(path: &std::path::Path, lines: usize, hl: &Highlighter, buf: &mut Buffer) -> Stats {
    let mut doc = Document::open(path).expect("open");
    doc.apply(EditCommand::GoToLine(lines / 2 + 3))
        .expect("goto");
    doc.apply(EditCommand::Move(Motion::LineEnd)).expect("end");
    frame(&mut doc, hl, buf);
    doc.finish_highlight_pass();
    while doc.needs_more_work() {
        frame(&mut doc, hl, buf);
    }
    let mut insert = false;
    let s = measure(20, 500, || {
        insert = !insert;
        let cmd = if insert {
            EditCommand::InsertChar('x')
        } else {
            EditCommand::DeleteBack
        };
        doc.apply(cmd).expect("edit");
        frame(&mut doc, hl, buf);
    });
    assert!(!doc.is_dirty());
    s
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut buf = Buffer::empty(AREA);

    // --- RSS with a 100 000-line file open (first, in a fresh process) ---
    let big = python_source(100_000);
    let big_path = dir.path().join("big.py");
    std::fs::write(&big_path, &big).expect("write");
    let t = Instant::now();
    let hl = Highlighter::new(Highlighter::DEFAULT_DARK).expect("theme");
    println!(
        "Highlighter::new (syntaxes + theme, once per app): {:.3?}",
        t.elapsed()
    );
    {
        let mut doc = Document::open(&big_path).expect("open");
        frame(&mut doc, &hl, &mut buf);
        doc.apply(EditCommand::GoToLine(100_000)).expect("goto");
        frame(&mut doc, &hl, &mut buf);
        println!(
            "RSS with the 100 000-line file ({:.1} MB) open and drawn at its end: {:.1} MB",
            mb(big.len()),
            mb(rss())
        );
    }

    // --- 1 000 000 lines: memory, open, jump, keystroke ---
    let huge = python_source(1_000_000);
    let huge_path = dir.path().join("huge.py");
    std::fs::write(&huge_path, &huge).expect("write");
    let huge_len = huge.len();
    drop(huge);
    let before = rss();
    let doc = Document::open(&huge_path).expect("open");
    let held = rss().saturating_sub(before);
    println!(
        "\n1 000 000 lines, {:.1} MB: the open document holds {:.1} MB = {:.2}x the file",
        mb(huge_len),
        mb(held),
        held as f64 / huge_len as f64
    );
    drop(doc);
    // Timed up to the first frame; dropping the document is not.
    let (mut first_frame, mut open_only) = (Vec::new(), Vec::new());
    for round in 0..8 {
        let t = Instant::now();
        let mut doc = Document::open(&huge_path).expect("open");
        let opened = t.elapsed();
        frame(&mut doc, &hl, &mut buf);
        if round > 0 {
            first_frame.push(t.elapsed());
            open_only.push(opened);
        }
    }
    first_frame.sort();
    open_only.sort();
    let s = Stats {
        p50: first_frame[first_frame.len() / 2],
        p99: first_frame[first_frame.len() - 1],
    };
    report("open + first frame (120x40)", &s, s.p50);
    println!(
        "  of which Document::open: p50 {:.3?}",
        open_only[open_only.len() / 2]
    );

    let mut doc = Document::open(&huge_path).expect("open");
    frame(&mut doc, &hl, &mut buf);
    let t = Instant::now();
    doc.apply(EditCommand::GoToLine(1_000_000)).expect("goto");
    frame(&mut doc, &hl, &mut buf);
    println!(
        "jump to the last line: first frame {:.3?}, {} colours in view (>2: highlighted)",
        t.elapsed(),
        colours(&buf)
    );
    let s = measure(3, 50, || {
        doc.apply(EditCommand::Move(Motion::DocStart)).expect("top");
        frame(&mut doc, &hl, &mut buf);
        doc.apply(EditCommand::Move(Motion::DocEnd)).expect("end");
        frame(&mut doc, &hl, &mut buf);
    });
    report("  top ↔ end, two jumps, each with a frame", &s, s.p50);
    drop(doc);

    // --- keystroke → frame across sizes (flat is the goal) ---
    println!();
    let mut results = Vec::new();
    for (lines, path) in [
        (20_000, None),
        (100_000, Some(&big_path)),
        (1_000_000, Some(&huge_path)),
    ] {
        let owned;
        let path = match path {
            Some(p) => p,
            None => {
                owned = dir.path().join("mid.py");
                std::fs::write(&owned, python_source(lines)).expect("write");
                &owned
            }
        };
        let s = keystroke(path, lines, &hl, &mut buf);
        results.push((lines, s));
    }
    let base = results[0].1.p50;
    for (lines, s) in &results {
        report(
            &format!("keystroke -> frame at {lines} lines (vs 20 000)"),
            s,
            base,
        );
    }

    // --- a minified file: one 2 MB line, cursor at its start, then its end ---
    let line: String = (0..200_000).map(|i| format!("f({i});")).collect();
    let min_path = dir.path().join("min.js");
    std::fs::write(&min_path, format!("{line}\n")).expect("write");
    let mut doc = Document::open(&min_path).expect("open");
    let s = measure(3, 50, || {
        doc.apply(EditCommand::InsertChar('x')).expect("edit");
        frame(&mut doc, &hl, &mut buf);
    });
    println!("\none line of {:.1} MB (minified):", mb(line.len()));
    report("  keystroke -> frame at the start of the line", &s, s.p50);
    doc.apply(EditCommand::Move(Motion::LineEnd)).expect("end");
    let s = measure(3, 50, || {
        doc.apply(EditCommand::InsertChar('x')).expect("edit");
        frame(&mut doc, &hl, &mut buf);
    });
    report("  keystroke -> frame at the end of the line", &s, s.p50);

    // --- whole-file highlighting throughput with this build's regex backend ---
    let pass = whole_file_pass(&big);
    println!(
        "\nwhole-file highlight, 100 000 lines: {pass:.3?} = {:.1} k lines/s",
        100.0 / pass.as_secs_f64()
    );
}

//! Editor costs at every file size, each next to a baseline measured in the
//! same run: highlighting the whole file in one syntect pass (with the
//! regex backend this build uses), and the file's size for memory.
//!
//! Run: `cargo bench --bench editor`; `cargo bench --bench editor -- find`
//! runs only Find in the file view (FindNext at 1 000 000 lines, the
//! background count, next to the whole-text search it replaced);
//! `cargo bench --bench editor -- typing` runs only the last part: frames while the background highlighting pass
//! runs, and typing at 1 000 000 lines with and without `ruff server`
//! (process CPU per key from `getrusage`, ruff's own from `/proc`).
//! The other regex backend (syntect's are exclusive in one binary): swap
//! `default-onig` for `default-fancy` (syntect) and `syntect-default-onig`
//! for `syntect-default-fancy` (two-face) in Cargo.toml and run it again.

#[path = "support/python_file.rs"]
mod python_file;

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

/// The next key of a typing run that leaves the text as it was: an `x`,
/// then a Backspace, so the buffer flips dirty/clean.
fn alternate_key(insert: &mut bool) -> EditCommand {
    *insert = !*insert;
    if *insert {
        EditCommand::InsertChar('x')
    } else {
        EditCommand::DeleteBack
    }
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
        doc.apply(alternate_key(&mut insert)).expect("edit");
        frame(&mut doc, hl, buf);
    });
    assert!(!doc.is_dirty());
    s
}

/// Open → first frame, `rounds` times (the first not counted: it warms the
/// page cache). The baseline, in the same rounds, is reading the file's
/// bytes and nothing else: the floor an open cannot go below.
fn open_rounds(path: &std::path::Path, hl: &Highlighter, buf: &mut Buffer, rounds: usize) {
    // Timed up to the first frame; dropping the document is not.
    let (mut first_frame, mut open_only, mut read_only) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let t = Instant::now();
        let bytes = std::fs::read(path).expect("read");
        let read = t.elapsed();
        drop(bytes);
        let t = Instant::now();
        let mut doc = Document::open(path).expect("open");
        let opened = t.elapsed();
        frame(&mut doc, hl, buf);
        if round > 0 {
            first_frame.push(t.elapsed());
            open_only.push(opened);
            read_only.push(read);
        }
    }
    let stats = |mut v: Vec<Duration>| {
        v.sort();
        Stats {
            p50: v[v.len() / 2],
            p99: v[v.len() - 1],
        }
    };
    let read = stats(read_only);
    report("baseline: std::fs::read of the file", &read, read.p50);
    let s = stats(first_frame);
    report("open + first frame (120x40)", &s, read.p50);
    let s = stats(open_only);
    report("  of which Document::open", &s, read.p50);
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut buf = Buffer::empty(AREA);
    if std::env::args().any(|a| a == "open") {
        let path = dir.path().join("huge.py");
        std::fs::write(&path, python_file::python_source(1_000_000)).expect("write");
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).expect("theme");
        println!("1 000 000 lines:");
        open_rounds(&path, &hl, &mut buf, 16);
        return;
    }
    if std::env::args().any(|a| a == "find") {
        find();
        return;
    }
    if std::env::args().any(|a| a == "typing") {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).expect("theme");
        let path = dir.path().join("typed.py");
        // `compute` defined: a clean file, as real code mostly is (ruff
        // would otherwise report 200 000 undefined names).
        let text = format!(
            "def compute(x, factor):\n    return x * factor\n\n\n{}",
            python_file::python_source(1_000_000)
        );
        std::fs::write(&path, text).expect("write");
        frames_during_the_pass(&path, &hl, &mut buf);
        typing_with_servers(dir.path(), &path, &hl, &mut buf);
        return;
    }

    // --- RSS with a 100 000-line file open (first, in a fresh process) ---
    let big = python_file::python_source(100_000);
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
    let huge = python_file::python_source(1_000_000);
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
    open_rounds(&huge_path, &hl, &mut buf, 8);

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
                std::fs::write(&owned, python_file::python_source(lines)).expect("write");
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

/// FindNext in 1 000 000 lines (about 40 MB) of Python: the match a few
/// lines below the cursor, far away (wrapping), and no match; the
/// background count; the inline count at its 4 MiB limit. The baseline is
/// the search FindNext ran before (every line lowercased and every match
/// collected on each Enter), measured on the same text.
fn find() {
    let text = python_file::python_source(1_000_000);
    let mut doc = Document::from_text("/tmp/find.py", &text);
    println!(
        "Find, 1 000 000 lines, {:.1} MB; cursor on line 500 000",
        mb(text.len())
    );
    let rope = ropey::Rope::from_str(&text);
    let old = measure(1, 3, || {
        assert_eq!(old_find::find_all(&rope, "handler_500010(").len(), 1);
    });
    report("old FindNext: whole-text search (baseline)", &old, old.p50);
    let base = old.p50;
    let mut case = |name: &str, line: usize, query: &str, forward: bool| {
        let mut report_of = None;
        let s = measure(3, 30, || {
            doc.apply(EditCommand::GoToLine(line)).expect("goto");
            let command = if forward {
                EditCommand::FindNext(query.into())
            } else {
                EditCommand::FindPrev(query.into())
            };
            report_of = doc.apply(command).expect("find").search;
        });
        let r = report_of.expect("a find report");
        report(
            &format!("{name} ({:.0} KB read)", r.scanned as f64 / 1024.0),
            &s,
            base,
        );
    };
    case(
        "FindNext, match 10 lines below",
        500_000,
        "handler_500010(",
        true,
    );
    case(
        "FindPrev, match 10 lines above",
        500_000,
        "handler_499990(",
        false,
    );
    case(
        "FindNext, case-sensitive query, match 10 lines below",
        500_000,
        "Handle request 500010.",
        true,
    );
    case(
        "FindNext, match above: wraps (rest + top)",
        500_000,
        "handler_10(",
        true,
    );
    case(
        "FindNext, no match (whole text)",
        500_000,
        "no_such_name",
        true,
    );
    // A new query each time: the matcher is compiled on every find.
    let mut flip = false;
    let s = measure(3, 30, || {
        doc.apply(EditCommand::GoToLine(500_000)).expect("goto");
        flip = !flip;
        let query = if flip {
            "handler_500010("
        } else {
            "handler_500015("
        };
        doc.apply(EditCommand::FindNext(query.into()))
            .expect("find");
    });
    report(
        "FindNext, match 10 lines below, a new query each time",
        &s,
        base,
    );
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let mut count = |query: &str| {
        doc.apply(EditCommand::GoToLine(500_000)).expect("goto");
        let r = doc
            .apply(EditCommand::FindNext(query.into()))
            .expect("find");
        let current = r.search.and_then(|r| r.current).expect("a match");
        let counter = doc.match_counter(current).expect("a query");
        let mut total = 0;
        let s = measure(1, 5, || {
            total = counter.count(&cancel).expect("not cancelled").total;
        });
        report(
            &format!("background count, `{query}` (total {total})"),
            &s,
            base,
        );
    };
    count("handler_500010(");
    count("Handle request 500010.");
    count("value");
    // The inline limit: a text of COUNT_INLINE_BYTES counts on the find.
    let cut = text[..hello_tui::editor::COUNT_INLINE_BYTES]
        .rfind('\n')
        .expect("lines");
    let mut small = Document::from_text("/tmp/small.py", &text[..=cut]);
    for query in ["handler_50010(", "value"] {
        let s = measure(3, 30, || {
            small.apply(EditCommand::GoToLine(50_000)).expect("goto");
            let r = small
                .apply(EditCommand::FindNext(query.into()))
                .expect("find");
            assert!(r.search.and_then(|r| r.count).is_some());
        });
        report(
            &format!("FindNext + inline count at 4 MiB, `{query}`"),
            &s,
            base,
        );
    }
}

/// The search FindNext ran before, kept here as the benchmark's baseline:
/// each line copied and lowercased, every match collected.
mod old_find {
    fn find_in_line(line: &str, query: &str) -> Vec<(usize, usize)> {
        let ignore_case = !query.chars().any(char::is_uppercase);
        let qlen = query.chars().count();
        let (hay, needle) = if ignore_case {
            (line.to_ascii_lowercase(), query.to_ascii_lowercase())
        } else {
            (line.to_string(), query.to_string())
        };
        let mut out = Vec::new();
        let (mut last_byte, mut last_char) = (0, 0);
        for (byte, _) in hay.match_indices(&needle) {
            let start = last_char + line[last_byte..byte].chars().count();
            out.push((start, start + qlen));
            (last_byte, last_char) = (byte, start);
        }
        out
    }

    /// (line, start, end) of every match (ASCII queries only, as here).
    pub fn find_all(rope: &ropey::Rope, query: &str) -> Vec<(usize, usize, usize)> {
        (0..rope.len_lines())
            .flat_map(|n| {
                let line = rope.line(n).to_string();
                let line = line.strip_suffix('\n').unwrap_or(&line).to_string();
                find_in_line(&line, query)
                    .into_iter()
                    .map(move |(s, e)| (n, s, e))
            })
            .collect()
    }
}

/// CPU time (user + system) of this thread, or of the whole process.
fn cpu(who: libc::c_int) -> Duration {
    // SAFETY: getrusage fills the struct it is given and nothing else.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(who, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// CPU time of every process descended from this one (the language
/// servers), from `/proc/<pid>/stat` (clock ticks, 100 per second).
fn descendants_cpu() -> Duration {
    let total: u64 = descendants().iter().map(|(_, ticks)| ticks).sum();
    Duration::from_millis(total * 10)
}

/// The processes this one started, and those they started: (pid, CPU
/// ticks so far).
fn descendants() -> Vec<(u32, u64)> {
    let me = std::process::id();
    let mut parent = std::collections::HashMap::new();
    let mut ticks = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces).
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split(' ').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        parent.insert(pid, num(1) as u32);
        ticks.insert(pid, num(11) + num(12));
    }
    let descends = |mut pid: u32| {
        while let Some(&up) = parent.get(&pid) {
            if up == me {
                return true;
            }
            pid = up;
        }
        false
    };
    ticks
        .into_iter()
        .filter(|(pid, _)| descends(*pid))
        .collect()
}

/// Sets every thread of every descendant to `nice` (raising priority back
/// needs root): the baseline of "servers run at a lower priority".
fn renice_descendants(nice: i32) -> bool {
    let mut all = true;
    for (pid, _) in descendants() {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
        for task in tasks.into_iter().flatten().flatten() {
            let Ok(tid) = task.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            // SAFETY: a plain syscall on another process's thread id.
            all &= unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } == 0;
        }
    }
    all
}

/// Frames drawn (one every 16 ms, like the loop) right after a jump to the
/// end of a 1 000 000-line file, while the exact highlighting pass runs on
/// its own thread: the UI thread's CPU per frame, against frames of the
/// same view once the pass is done.
fn frames_during_the_pass(path: &std::path::Path, hl: &Highlighter, buf: &mut Buffer) {
    let mut doc = Document::open(path).expect("open");
    frame(&mut doc, hl, buf);
    doc.apply(EditCommand::GoToLine(1_000_000)).expect("goto");
    let per_frame = |doc: &mut Document, buf: &mut Buffer, n: u32| {
        let mut wall = Vec::new();
        let cpu_before = cpu(libc::RUSAGE_THREAD);
        for _ in 0..n {
            let t = Instant::now();
            frame(doc, hl, buf);
            wall.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(16));
        }
        wall.sort();
        (cpu(libc::RUSAGE_THREAD) - cpu_before) / n
    };
    let t = Instant::now();
    let running = per_frame(&mut doc, buf, 100);
    assert!(doc.needs_more_work(), "the pass should still be running");
    println!(
        "\nframes while the exact pass runs (jump to line 1 000 000, first 100 frames, {:.1?}):",
        t.elapsed()
    );
    doc.finish_highlight_pass();
    let t = Instant::now();
    frame(&mut doc, hl, buf);
    let exact = t.elapsed();
    let idle = per_frame(&mut doc, buf, 100);
    println!(
        "  UI-thread CPU per frame {running:.3?} while the pass runs; {idle:.3?} per frame once exact (first exact frame {exact:.3?})"
    );
}

/// Typing at the middle of the file, one key every 30 ms, each key applied,
/// drawn and sent to the diagnostics service as the UI loop does; first
/// with no language server, then with `ruff server` (if on PATH).
fn typing_with_servers(
    root: &std::path::Path,
    path: &std::path::Path,
    hl: &Highlighter,
    buf: &mut Buffer,
) {
    use hello_tui::diagnostics::{
        DiagnosticsConfig, DiagnosticsEvent, DiagnosticsService, ServerConfig,
    };
    use hello_tui::sandbox::{ChildEnv, Confinement};
    const KEYS: u32 = 200;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let _entered = runtime.enter();
    println!("\ntyping at line 500 000 of 1 000 000, one key every 30 ms, {KEYS} keys:");
    let with_ruff = hello_tui::diagnostics::which("ruff").is_some();
    // Language servers run at `nice` 10 (`background::lower_child`); the
    // second run puts ruff back at 0 (as before, root only) for the ratio.
    for (servers, server_nice) in [(false, 10), (true, 0), (true, 10)] {
        if servers && !with_ruff {
            println!("  ruff is not on PATH: no measurement with a server");
            break;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let service = servers.then(|| {
            let config = DiagnosticsConfig {
                servers: vec![ServerConfig::new(&["python"], "ruff", &["server"])],
                checks: Vec::new(),
                // The 37 MB file is a large document: sent anyway, as
                // `/lsp-large` asks, since typing with ruff is the point.
                large_file_bytes: u64::MAX,
                ..DiagnosticsConfig::default()
            };
            let env = ChildEnv::from_host(&[], "");
            // ruff from PATH, outside the scratch workspace: untrusted is fine.
            let trusted = false;
            DiagnosticsService::start(
                config,
                root.to_path_buf(),
                tx,
                Confinement::unconfined(env),
                trusted,
            )
        });
        let mut doc = Document::open(path).expect("open");
        doc.apply(EditCommand::GoToLine(500_003)).expect("goto");
        doc.apply(EditCommand::Move(Motion::LineEnd)).expect("end");
        frame(&mut doc, hl, buf);
        doc.finish_highlight_pass();
        frame(&mut doc, hl, buf);
        let published = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        if let Some(service) = &service {
            service.open(path, "python", doc.rope().clone());
            let t = Instant::now();
            let ready = runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(300), async {
                    while let Some(event) = rx.recv().await {
                        if matches!(event, DiagnosticsEvent::Published { .. }) {
                            return true;
                        }
                    }
                    false
                })
                .await
                .unwrap_or(false)
            });
            assert!(ready, "ruff never published for the file");
            if server_nice != 10 && !renice_descendants(server_nice) {
                println!("  (could not set ruff's nice to {server_nice}: not root)");
            }
            println!(
                "  ruff's first diagnostics for the file after {:.1?}",
                t.elapsed()
            );
            let count = std::sync::Arc::clone(&published);
            runtime.spawn(async move {
                while let Some(event) = rx.recv().await {
                    if matches!(event, DiagnosticsEvent::Published { .. }) {
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
        let mut sent = doc.generation();
        let mut insert = false;
        let mut wall = Vec::new();
        let (process_before, servers_before) = (cpu(libc::RUSAGE_SELF), descendants_cpu());
        let started = Instant::now();
        for key in 0..KEYS {
            let due = started + Duration::from_millis(30) * key;
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            let t = Instant::now();
            doc.apply(alternate_key(&mut insert)).expect("edit");
            frame(&mut doc, hl, buf);
            if let Some(service) = &service {
                let changes = doc.changes_since(sent).expect("journal");
                service.edit(path, doc.rope().clone(), changes);
                sent = doc.generation();
            }
            wall.push(t.elapsed());
        }
        // What the last keys set off (a flush, a lint, its diagnostics
        // converted): counted until the server's answer about the last
        // text arrives (at most 60 s), else for 3 s.
        let typed = Instant::now();
        let before = published.load(std::sync::atomic::Ordering::Relaxed);
        let answered = loop {
            std::thread::sleep(Duration::from_millis(10));
            let now = published.load(std::sync::atomic::Ordering::Relaxed);
            if service.is_some() && now > before {
                break Some(typed.elapsed());
            }
            if typed.elapsed() > Duration::from_secs(if service.is_some() { 60 } else { 3 }) {
                break None;
            }
        };
        let process = (cpu(libc::RUSAGE_SELF) - process_before) / KEYS;
        let server = (descendants_cpu() - servers_before) / KEYS;
        wall.sort();
        let name = match (servers, server_nice) {
            (false, _) => "no language server".to_owned(),
            (true, nice) => format!("ruff server, nice {nice}"),
        };
        println!(
            "  {name:<20} keystroke -> frame p50 {:.3?} p99 {:.3?}; process CPU per key {process:.3?}; server CPU per key {server:.3?}; diagnostics published while typing {before}, first after the last key {answered:.1?}",
            wall[wall.len() / 2],
            wall[wall.len() * 99 / 100],
        );
        if let Some(service) = service {
            runtime.block_on(service.shutdown());
        }
    }
}

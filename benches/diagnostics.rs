//! Measures the diagnostics hot paths with a baseline from the same run:
//!
//! 1. F8 (`next_after`) on a store of 10 000 diagnostics in 200 files, against
//!    the naive "sort everything, scan linearly" approach.
//! 2. LSP framing + JSON decoding of `publishDiagnostics` messages, against
//!    JSON decoding of the same bodies alone (so the ratio is framing overhead).
//! 3. UTF-16 → char conversion of 1 000 positions in a 5 000-line CJK file,
//!    against building the line index alone.
//!
//! Run: `cargo bench --bench diagnostics`

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hello_tui::diagnostics::lsp::framing::{Frame, MAX_BODY, read_frame};
use hello_tui::diagnostics::position::{ColumnUnit, to_position};
use hello_tui::diagnostics::{Diagnostic, DiagnosticsStore, Position, Range, Severity};

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.50), at(0.99))
}

type Stats = (Duration, Duration);

/// Samples subject and baseline alternately so both see the same machine
/// load (the build box is shared), after a warm-up of each.
fn measure_pair(
    iterations: usize,
    mut subject: impl FnMut(),
    mut baseline: impl FnMut(),
) -> (Stats, Stats) {
    for _ in 0..iterations / 10 + 1 {
        subject();
        baseline();
    }
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..iterations {
        a.push(time(&mut subject));
        b.push(time(&mut baseline));
    }
    (percentiles(a), percentiles(b))
}

fn report(name: &str, (subject, baseline): (Stats, Stats), baseline_name: &str) {
    println!(
        "{name}: p50 {:?} p99 {:?} | baseline ({baseline_name}) p50 {:?} p99 {:?} | subject/baseline p50 {:.4}",
        subject.0,
        subject.1,
        baseline.0,
        baseline.1,
        subject.0.as_secs_f64() / baseline.0.as_secs_f64().max(1e-12)
    );
}

fn big_store() -> DiagnosticsStore {
    let mut store = DiagnosticsStore::new();
    for file in 0..200 {
        let path = PathBuf::from(format!("/w/src/file{file:03}.rs"));
        let list = (0..50)
            .map(|i| Diagnostic {
                path: path.as_path().into(),
                range: Range::new(Position::new(i * 7, 4), Position::new(i * 7, 9)),
                severity: if i % 3 == 0 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                message: format!("problem {i}").into(),
                source: if i % 2 == 0 {
                    "ruff".into()
                } else {
                    "cargo check".into()
                },
                code: None,
                related: Vec::new(),
            })
            .collect();
        store.set("ruff", &path, list);
    }
    store
}

fn bench_navigation() {
    let store = big_store();
    let path = Path::new("/w/src/file100.rs");
    let pos = Position::new(200, 0);
    let stats = measure_pair(
        300,
        || {
            black_box(store.next_after(black_box(path), pos));
        },
        || {
            let all = store.all_sorted();
            black_box(all.iter().find(|d| (&*d.path, d.range.start) > (path, pos)));
        },
    );
    report(
        "F8 next_after, 10k diagnostics",
        stats,
        "sort all + linear scan",
    );
}

fn publish_message(n: usize) -> Vec<u8> {
    let diagnostics: Vec<serde_json::Value> = (0..50)
        .map(|i| {
            serde_json::json!({
                "range": {"start": {"line": i, "character": 4}, "end": {"line": i, "character": 9}},
                "severity": 2, "code": "F401", "source": "Ruff",
                "message": format!("`os` imported but unused ({n})"),
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
        "params": {"uri": format!("file:///w/f{n}.py"), "diagnostics": diagnostics}
    }))
    .unwrap_or_default()
}

fn bench_framing() {
    let bodies: Vec<Vec<u8>> = (0..200).map(publish_message).collect();
    let mut stream = Vec::new();
    for body in &bodies {
        stream.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        stream.extend_from_slice(body);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("tokio runtime for the bench");
    let stats = measure_pair(
        60,
        || {
            runtime.block_on(async {
                let mut reader = tokio::io::BufReader::new(stream.as_slice());
                while let Ok(Some(Frame::Body(body))) = read_frame(&mut reader, MAX_BODY).await {
                    black_box(serde_json::from_slice::<serde_json::Value>(&body).ok());
                }
            })
        },
        || {
            for body in &bodies {
                black_box(serde_json::from_slice::<serde_json::Value>(body).ok());
            }
        },
    );
    let mib = stream.len() as f64 / (1024.0 * 1024.0);
    report(
        &format!("framing+decode of 200 publishDiagnostics ({mib:.2} MiB)"),
        stats,
        "JSON decode only",
    );
}

fn bench_positions() {
    let line = "    名前 = \"😀 データ\"; print(名前, undefined_name)  # コメント";
    let text: String = (0..5000).map(|_| format!("{line}\n")).collect();
    let text = ropey::Rope::from_str(&text);
    let stats = measure_pair(
        200,
        || {
            for i in 0..1000 {
                black_box(to_position(&text, i * 5, 40, ColumnUnit::Utf16));
            }
        },
        || {
            black_box(text.len_lines());
        },
    );
    report(
        "1000 UTF-16 positions on a 5000-line CJK file (on the rope)",
        stats,
        "the rope's line count only",
    );
}

fn main() {
    bench_navigation();
    bench_framing();
    bench_positions();
}

//! Snapshot cost vs. buffer size: a cursor in the middle of a 1 000-line
//! (baseline), 10 000-line and 1 000 000-line buffer, a cursor near the top
//! of the 1 000 000-line buffer, and the seed scene. Run with
//! `cargo bench --bench snapshot`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use hello_tui::snapshot::source::{
    ActiveEditor, ProjectFile, ScenePosition, SceneWorkspace, Source,
};
use hello_tui::snapshot::{CollectOptions, DiskReader, collect, render};

const ROOT: &str = "/home/bench/demo";

fn buffer(lines: usize) -> String {
    (1..=lines)
        .map(|n| {
            format!(
                "    let value_{n} = compute(value_{}, {n}); // line {n}\n",
                n.saturating_sub(1)
            )
        })
        .collect()
}

fn cursor_scene(text: String, line: usize) -> Source {
    Source {
        workspace: SceneWorkspace {
            name: "demo".to_string(),
            roots: vec![ROOT.to_string()],
        },
        active_editor: Some(ActiveEditor {
            path: format!("{ROOT}/src/big.rs"),
            language_id: None,
            text: Some(text),
            text_start_line: None,
            line_count: None,
            is_dirty: Some(true),
            cursor: Some(ScenePosition { line, character: 4 }),
            selection: None,
        }),
        ..Source::default()
    }
}

/// What a line-indexed editor sends for a cursor at line 500 000 of a
/// 1 000 000-line buffer: only the lines around the cursor.
fn windowed_scene() -> Source {
    let all = buffer(1_000_000);
    let from = hello_tui::snapshot::text::line_start(&all, 500_000 - 100).unwrap_or(0);
    let to = hello_tui::snapshot::text::line_start(&all, 500_000 + 101).unwrap_or(all.len());
    let mut source = cursor_scene(all[from..to].to_string(), 500_000);
    if let Some(active) = source.active_editor.as_mut() {
        active.text_start_line = Some(500_000 - 100);
        active.line_count = Some(1_000_000);
    }
    source
}

fn seed_scene() -> Source {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/snapshot/seed");
    let path = format!("{root}/src/auth/token.ts");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let mut source = cursor_scene(text, 41);
    source.workspace.roots = vec![root.to_string()];
    if let Some(active) = source.active_editor.as_mut() {
        active.path = path;
    }
    source.project_files = Some(
        ["package.json", "README.md", "tsconfig.json"]
            .iter()
            .map(|name| ProjectFile {
                path: format!("{root}/{name}"),
                text: None,
            })
            .collect(),
    );
    source
}

fn measure(source: &Source, options: &CollectOptions, iterations: usize) -> (Duration, Duration) {
    for _ in 0..iterations / 10 + 1 {
        black_box(render(&collect(source, options, &DiskReader)));
    }
    let mut samples: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            black_box(render(&collect(black_box(source), options, &DiskReader)));
            start.elapsed()
        })
        .collect();
    samples.sort();
    let p50 = samples[samples.len() / 2];
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    (p50, p99)
}

fn main() {
    let options = CollectOptions::default();
    let iterations = 300;
    let baseline_source = cursor_scene(buffer(1_000), 500);
    let (base_p50, base_p99) = measure(&baseline_source, &options, iterations);
    let cases = [
        (
            "cursor mid 10 000 lines",
            cursor_scene(buffer(10_000), 5_000),
        ),
        (
            "cursor mid 1 000 000 lines",
            cursor_scene(buffer(1_000_000), 500_000),
        ),
        (
            "cursor top 1 000 000 lines",
            cursor_scene(buffer(1_000_000), 500),
        ),
        ("1 000 000 lines, editor sends a window", windowed_scene()),
        ("seed scene (3 project files from disk)", seed_scene()),
    ];
    println!(
        "snapshot bench: budget {} chars, {iterations} iterations per case",
        options.budget
    );
    println!(
        "{:<40} {:>10} {:>10} {:>8}",
        "case", "p50", "p99", "p50/base"
    );
    println!(
        "{:<40} {:>10.1?} {:>10.1?} {:>8}",
        "cursor mid 1 000 lines (baseline)", base_p50, base_p99, "1.00"
    );
    // The part that still grows with the buffer: finding the cursor's line
    // in a plain string (a SIMD newline count up to it).
    let big = buffer(1_000_000);
    let mut scans: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            black_box(hello_tui::snapshot::text::line_start(
                black_box(&big),
                499_920,
            ));
            start.elapsed()
        })
        .collect();
    scans.sort();
    for (name, source) in &cases {
        let (p50, p99) = measure(source, &options, iterations);
        let ratio = p50.as_secs_f64() / base_p50.as_secs_f64();
        println!("{name:<40} {p50:>10.1?} {p99:>10.1?} {ratio:>8.2}");
    }
    let scan_p50 = scans[scans.len() / 2];
    println!(
        "{:<40} {:>10.1?} {:>10.1?} {:>8.2}",
        format!("locate line 500 000 in {} MB string", big.len() / 1_000_000),
        scan_p50,
        scans[scans.len() * 99 / 100],
        scan_p50.as_secs_f64() / base_p50.as_secs_f64()
    );
}

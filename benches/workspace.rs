//! Workspace benchmarks: index build over a generated 100 000-file tree
//! (time to first batch and to done, against a plain recursive `read_dir`
//! walk of the same tree), and fuzzy matching per keystroke over 100 000
//! paths (against a naive lowercase `contains` filter over the same paths).
//!
//! Run: `cargo bench --bench workspace`

use std::fs;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use hello_tui::workspace::{
    FileIndex, FuzzyMatcher, IndexUpdate, WatchOptions, WorkspaceEvent, WorkspaceMessage,
    WorkspaceWatcher, spawn_index_build,
};
use tokio::sync::mpsc::unbounded_channel;

const EXTENSIONS: &[&str] = &[
    "rs", "py", "ts", "md", "json", "toml", "c", "h", "go", "txt",
];
const WORDS: &[&str] = &[
    "core", "util", "render", "parser", "main", "config", "widget", "server", "client", "model",
    "view", "index", "event", "buffer", "layout", "theme", "search", "kernel", "agent", "session",
];

/// 100 top dirs × 10 sub dirs × 100 files = 100 000 files with varied names.
fn generate_tree(root: &Path) -> usize {
    let mut count = 0;
    for top in 0..100 {
        for sub in 0..10 {
            let dir = root.join(format!(
                "{}_{top}/{}_{sub}",
                WORDS[top % WORDS.len()],
                WORDS[(top + sub) % WORDS.len()]
            ));
            fs::create_dir_all(&dir).expect("create dir");
            for file in 0..100 {
                let name = format!(
                    "{}_{}{file}.{}",
                    WORDS[(file * 7 + sub) % WORDS.len()],
                    WORDS[(file + top) % WORDS.len()],
                    EXTENSIONS[(file + sub + top) % EXTENSIONS.len()]
                );
                fs::write(dir.join(name), "").expect("write file");
                count += 1;
            }
        }
    }
    fs::create_dir_all(root.join("src")).expect("create src");
    fs::write(root.join("src/main.rs"), "fn main() {}").expect("write main");
    count + 1
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One index build as the UI loop sees it.
struct IndexRun {
    first_batch: Duration,
    done: Duration,
    /// Time spent in `FileIndex::apply` (on the UI thread) in all.
    applying: Duration,
    files: usize,
}

fn index_once(root: &Path) -> IndexRun {
    let (tx, mut rx) = unbounded_channel();
    let started = Instant::now();
    let _build = spawn_index_build(root, tx);
    let mut index = FileIndex::new();
    let mut first = None;
    let mut applying = Duration::ZERO;
    while let Some(WorkspaceMessage::Index(update)) = rx.blocking_recv() {
        if first.is_none() && matches!(update, IndexUpdate::Batch(_)) {
            first = Some(started.elapsed());
        }
        let apply_started = Instant::now();
        index.apply(&update);
        applying += apply_started.elapsed();
        if matches!(update, IndexUpdate::Done { .. }) {
            break;
        }
    }
    IndexRun {
        first_batch: first.unwrap_or_default(),
        done: started.elapsed(),
        applying,
        files: index.len(),
    }
}

/// Time from starting a watcher to `WatchReady` (it walks and watches
/// every listed directory first).
fn watcher_ready_once(root: &Path) -> Duration {
    let (tx, mut rx) = unbounded_channel();
    let started = Instant::now();
    let _watcher = WorkspaceWatcher::start(root, WatchOptions::default(), tx).expect("watcher");
    while let Some(message) = rx.blocking_recv() {
        if let WorkspaceMessage::Event(WorkspaceEvent::WatchReady) = message {
            break;
        }
    }
    started.elapsed()
}

/// The baseline: a single-threaded recursive `read_dir`, no ignore rules.
fn raw_walk(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => raw_walk(&path, out),
            Ok(_) => out.push(path.to_string_lossy().into_owned()),
            Err(_) => {}
        }
    }
}

fn bench_index(root: &Path) -> FileIndex {
    const RUNS: usize = 7;
    index_once(root); // warm-up (page cache, thread start)
    let (mut firsts, mut dones, mut raws) = (Vec::new(), Vec::new(), Vec::new());
    let (mut applies, mut readies) = (Vec::new(), Vec::new());
    let mut files = 0;
    for _ in 0..RUNS {
        let run = index_once(root);
        firsts.push(run.first_batch);
        dones.push(run.done);
        applies.push(run.applying);
        files = run.files;
        readies.push(watcher_ready_once(root));
        let started = Instant::now();
        let mut out = Vec::new();
        raw_walk(root, &mut out);
        black_box(&out);
        raws.push(started.elapsed());
    }
    let raw = percentile(&mut raws, 0.5);
    let done = percentile(&mut dones, 0.5);
    println!("index build, {files} files, {RUNS} runs (p50 / p99):");
    println!(
        "  first batch     {:8.2} ms / {:8.2} ms",
        ms(percentile(&mut firsts, 0.5)),
        ms(percentile(&mut firsts, 0.99))
    );
    println!(
        "  done (applied)  {:8.2} ms / {:8.2} ms",
        ms(done),
        ms(percentile(&mut dones, 0.99))
    );
    println!(
        "  baseline: single-thread read_dir walk {:8.2} ms; index/baseline = {:.2}x",
        ms(raw),
        done.as_secs_f64() / raw.as_secs_f64()
    );
    println!(
        "  UI-thread time in FileIndex::apply {:8.2} ms / {:8.2} ms",
        ms(percentile(&mut applies, 0.5)),
        ms(percentile(&mut applies, 0.99))
    );
    println!(
        "  watcher start to WatchReady {:8.2} ms / {:8.2} ms",
        ms(percentile(&mut readies, 0.5)),
        ms(percentile(&mut readies, 0.99))
    );
    let mut index = FileIndex::new();
    let (tx, mut rx) = unbounded_channel();
    let _build = spawn_index_build(root, tx);
    while let Some(WorkspaceMessage::Index(update)) = rx.blocking_recv() {
        index.apply(&update);
        if matches!(update, IndexUpdate::Done { .. }) {
            break;
        }
    }
    index
}

/// The baseline: what a picker without fuzzy matching would do on each
/// keystroke (scan every path, keep the matches, show the first `limit`).
fn naive_filter<'a>(query: &str, paths: &'a [String], limit: usize) -> Vec<&'a String> {
    let query = query.to_lowercase();
    let mut found: Vec<&String> = paths
        .iter()
        .filter(|p| p.to_lowercase().contains(&query))
        .collect();
    found.truncate(limit);
    found
}

fn bench_fuzzy(index: &FileIndex) {
    const ITERS: usize = 40;
    const LIMIT: usize = 200;
    let paths = index.paths();
    println!(
        "\nfuzzy match per keystroke over {} paths, limit {LIMIT}, {ITERS} iterations (p50 / p99):",
        paths.len()
    );
    println!(
        "  {:<22} {:>7} {:>18} {:>18} {:>7}",
        "query", "hits", "nucleo ms", "contains ms", "ratio"
    );
    let typed = ["m", "ma", "mai", "main", "mainr", "mainrs"];
    let cold = ["widget", "srvcfg", "kernel/agent", "Theme", "zzzz"];
    let mut cases: Vec<(String, Vec<&str>)> = Vec::new();
    for (i, query) in typed.iter().enumerate() {
        // Typing: the matcher has just seen the previous keystroke.
        let prefix = if i == 0 { vec![] } else { vec![typed[i - 1]] };
        cases.push((format!("{query} (typed)"), [prefix, vec![*query]].concat()));
    }
    for query in typed.iter().chain(cold.iter()) {
        cases.push((format!("{query} (cold)"), vec![*query]));
    }
    for (label, steps) in &cases {
        let Some((query, before)) = steps.split_last() else {
            continue;
        };
        let (mut fuzzy, mut naive) = (Vec::new(), Vec::new());
        let mut hits = 0;
        for iteration in 0..ITERS + 3 {
            // A fresh matcher state each time: either cold or primed with
            // exactly the previous keystroke.
            let mut matcher = FuzzyMatcher::new();
            for step in before {
                black_box(matcher.matches_index(step, index, LIMIT));
            }
            let started = Instant::now();
            hits = black_box(matcher.matches_index(query, index, LIMIT)).len();
            let fuzzy_time = started.elapsed();
            let started = Instant::now();
            black_box(naive_filter(query, paths, LIMIT));
            let naive_time = started.elapsed();
            if iteration >= 3 {
                fuzzy.push(fuzzy_time);
                naive.push(naive_time);
            }
        }
        let (f50, n50) = (percentile(&mut fuzzy, 0.5), percentile(&mut naive, 0.5));
        println!(
            "  {:<22} {:>7} {:>8.2} / {:>7.2} {:>8.2} / {:>7.2} {:>6.2}x",
            label,
            hits,
            ms(f50),
            ms(percentile(&mut fuzzy, 0.99)),
            ms(n50),
            ms(percentile(&mut naive, 0.99)),
            f50.as_secs_f64() / n50.as_secs_f64()
        );
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().canonicalize().expect("canonical temp dir");
    let started = Instant::now();
    let files = generate_tree(&root);
    println!(
        "generated {files} files in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let index = bench_index(&root);
    bench_fuzzy(&index);
}

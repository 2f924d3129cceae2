//! Context search benchmark: index build, append, and query latency against a
//! naive lower-cased substring scan (what the original capability does)
//! measured in the same run.
//!
//! Corpus: `python3 /work/shared/bench/gen_corpus.py /tmp/corpus.json`, then
//! `cargo bench --bench context_search -- /tmp/corpus.json`
//! (or set `CONTEXT_CORPUS=/path/to/corpus.json`; default `/tmp/corpus.json`).
//! Add `--show` to print the top three hits of every query with their
//! marked snippets, to judge ranking quality by eye.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use hello_tui::context::tokenize::{Mode, tokenize};
use hello_tui::context::{AgentContext, Message, Role, SearchIndex, SearchQuery};

const QUERY_ROUNDS: usize = 50;
const NAIVE_ROUNDS: usize = 5;
const APPENDS: usize = 2_000;
const BUILDS: usize = 5;

struct Corpus {
    messages: Vec<Message>,
    queries: Vec<String>,
}

fn load(path: &str) -> Result<Corpus, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let messages = doc["messages"]
        .as_array()
        .ok_or("corpus has no \"messages\" array")?
        .iter()
        .map(|m| {
            let role = m["role"]
                .as_str()
                .unwrap_or("user")
                .parse::<Role>()
                .map_err(|e| e.to_string())?;
            let content = m["content"]
                .as_str()
                .ok_or("message without string content")?;
            Ok(Message::new(role, content).with_timestamp_ms(0))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let queries = doc["queries"]
        .as_array()
        .ok_or("corpus has no \"queries\" array")?
        .iter()
        .filter_map(|q| q.as_str().map(str::to_string))
        .collect();
    Ok(Corpus { messages, queries })
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let rank = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples.get(rank).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn report(label: &str, samples: &mut [Duration]) -> (Duration, Duration) {
    let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
    println!(
        "{label:<44} p50 {:>9.3} ms   p99 {:>9.3} ms   (n={})",
        ms(p50),
        ms(p99),
        samples.len()
    );
    (p50, p99)
}

fn main() -> ExitCode {
    let path = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .or_else(|| std::env::var("CONTEXT_CORPUS").ok())
        .unwrap_or_else(|| "/tmp/corpus.json".to_string());
    let corpus = match load(&path) {
        Ok(corpus) => corpus,
        Err(e) => {
            eprintln!(
                "{e}\nGenerate the corpus first:\n  python3 /work/shared/bench/gen_corpus.py {path}"
            );
            return ExitCode::FAILURE;
        }
    };
    let bytes: usize = corpus.messages.iter().map(|m| m.content.len()).sum();
    println!(
        "corpus {path}: {} messages, {:.1} MB, {} queries",
        corpus.messages.len(),
        bytes as f64 / 1e6,
        corpus.queries.len()
    );

    // Index build: the bare index, and the whole AgentContext (index + store).
    let mut index_builds = Vec::new();
    let mut context_builds = Vec::new();
    for _ in 0..BUILDS {
        let start = Instant::now();
        let mut index = SearchIndex::new();
        for m in &corpus.messages {
            index.add(m.role, &m.content);
        }
        index_builds.push(start.elapsed());
        black_box(&index);
        let copies = corpus.messages.clone();
        let start = Instant::now();
        let context: AgentContext = copies.into_iter().collect();
        context_builds.push(start.elapsed());
        black_box(&context);
    }
    let mut tokenize_only = Vec::new();
    for _ in 0..BUILDS {
        let start = Instant::now();
        let mut tokens = 0usize;
        for m in &corpus.messages {
            tokenize(&m.content, Mode::Document, |t| tokens += t.term.len());
        }
        tokenize_only.push(start.elapsed());
        black_box(tokens);
    }
    let context: AgentContext = corpus.messages.iter().cloned().collect();
    let stats = context.index_stats();
    println!(
        "index: {} terms, {} postings, {} positions",
        stats.distinct_terms, stats.postings, stats.positions
    );
    report("build SearchIndex (10k msgs)", &mut index_builds);
    report("build AgentContext (10k msgs)", &mut context_builds);
    report("  of which: tokenising alone", &mut tokenize_only);

    // Append: one message onto a 10k-message context, many times.
    let mut grown = context.clone();
    let mut appends = Vec::with_capacity(APPENDS);
    for i in 0..APPENDS {
        let message = corpus.messages[i % corpus.messages.len()].clone();
        let start = Instant::now();
        grown.push(message);
        appends.push(start.elapsed());
    }
    let (a50, a99) = (
        percentile(&mut appends, 0.5),
        percentile(&mut appends, 0.99),
    );
    println!(
        "{:<44} p50 {:>9.1} µs   p99 {:>9.1} µs   (n={APPENDS}, 10k→12k msgs)",
        "append one message",
        us(a50),
        us(a99)
    );
    drop(grown);

    // Queries: full search (rank + snippets), warm-up round first.
    let queries: Vec<SearchQuery> = corpus
        .queries
        .iter()
        .map(|q| SearchQuery::new(q.as_str()))
        .collect();
    for q in &queries {
        black_box(context.search(q));
    }
    let mut searches = Vec::with_capacity(queries.len() * QUERY_ROUNDS);
    let mut worst: Vec<(Duration, &str)> = Vec::new();
    for _ in 0..QUERY_ROUNDS {
        for (q, text) in queries.iter().zip(&corpus.queries) {
            let start = Instant::now();
            let out = black_box(context.search(q));
            let took = start.elapsed();
            searches.push(took);
            worst.push((took, text));
            black_box(out.total);
        }
    }
    let (q50, q99) = report("indexed search (BM25 + snippets, top 10)", &mut searches);

    // Baseline: what the original did, per query: lower-case every message
    // and test `contains`. Plus a kinder variant with contents pre-lowered.
    let lowered: Vec<String> = corpus
        .messages
        .iter()
        .map(|m| m.content.to_lowercase())
        .collect();
    let mut naive = Vec::new();
    let mut prelowered = Vec::new();
    for round in 0..=NAIVE_ROUNDS {
        for q in &corpus.queries {
            let needle = q.to_lowercase();
            let start = Instant::now();
            let hits = corpus
                .messages
                .iter()
                .filter(|m| m.content.to_lowercase().contains(&needle))
                .count();
            let took = start.elapsed();
            black_box(hits);
            let start = Instant::now();
            let hits = lowered.iter().filter(|m| m.contains(&needle)).count();
            let took_pre = start.elapsed();
            black_box(hits);
            if round > 0 {
                naive.push(took);
                prelowered.push(took_pre);
            }
        }
    }
    let (n50, _) = report("naive scan: to_lowercase + contains", &mut naive);
    let (p50, _) = report("naive scan: pre-lowered contains", &mut prelowered);
    println!(
        "ratio p50: naive/indexed = {:.1}x, pre-lowered/indexed = {:.1}x (indexed p99 {:.3} ms)",
        n50.as_secs_f64() / q50.as_secs_f64(),
        p50.as_secs_f64() / q50.as_secs_f64(),
        ms(q99)
    );

    // Per query: the slowest and what it found, so regressions are visible.
    println!("\nper query (p50 over {QUERY_ROUNDS} rounds, total matches):");
    for (q, text) in queries.iter().zip(&corpus.queries) {
        let mut mine: Vec<Duration> = worst
            .iter()
            .filter(|(_, t)| *t == text.as_str())
            .map(|(d, _)| *d)
            .collect();
        let total = context.search(q).total;
        println!(
            "  {:<32} {:>8.3} ms  {:>6} matches",
            format!("{text:?}"),
            ms(percentile(&mut mine, 0.5)),
            total
        );
    }
    if std::env::args().any(|a| a == "--show") {
        for q in &queries {
            println!("\n{:?}", q.text);
            for hit in context.search(&q.clone().limit(3)).hits {
                println!(
                    "  #{:<5} {:<9} {:>7.3}  {}",
                    hit.id.0,
                    hit.role.as_str(),
                    hit.score,
                    hit.snippet.marked()
                );
            }
        }
    }
    ExitCode::SUCCESS
}

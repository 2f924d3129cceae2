//! `llm_query` against a loopback Chat Completions server, next to a
//! baseline measured in the same run:
//! - overhead: one `llm_query` from a kernel cell (cell → call frame → host
//!   → secrets-file check of this repository, ledger, redaction, events →
//!   provider → answer back to Python) vs. one direct
//!   `ModelProvider::stream_chat` of the same request from Rust;
//! - batching: `llm_query_batched` over 16 prompts against a server that
//!   waits a fixed 100 ms before each answer, with `concurrency` 1, 4, 8.
//!
//! Run: `cargo bench --bench subcalls`

#[path = "../tests/support/loopback.rs"]
#[allow(dead_code)]
mod loopback;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hello_tui::agent::provider::openai::OpenAiConfig;
use hello_tui::agent::provider::{ChatMessage, ChatRequest, ModelProvider, OpenAiProvider};
use hello_tui::config::Settings;
use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
use hello_tui::subcalls::{Approvals, SubcallSection, Subcalls};
use loopback::{Framing, LoopbackServer, Part, Recorded, Reply, data};
use serde_json::json;

const DELAY: Duration = Duration::from_millis(100);
const BATCH: usize = 16;
const ROUNDS: usize = 200;

fn answer(delay: Duration) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |_| {
        let body = [
            data(&json!({"choices":[{"index":0,"delta":{"content":"an answer of a few words"},"finish_reason":null}]}).to_string()),
            data(&json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string()),
            data(&json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}).to_string()),
            "data: [DONE]\r\n\r\n".to_owned(),
        ]
        .concat();
        let mut parts = Vec::new();
        if !delay.is_zero() {
            parts.push(Part::Pause(delay));
        }
        parts.push(Part::Bytes(body.into_bytes()));
        Reply::sse(Framing::Chunked, parts)
    }
}

fn provider(server: &LoopbackServer) -> Arc<dyn ModelProvider> {
    let config = OpenAiConfig::new(Some(&server.base_url), "bench-model", "NO_KEY", &|_| None);
    Arc::new(OpenAiProvider::new(config).expect("client"))
}

fn kernel(server: &LoopbackServer, concurrency: usize, dir: &std::path::Path) -> CodeRuntime {
    let mut settings = Settings::defaults();
    settings.subcalls = SubcallSection {
        concurrency: Some(concurrency),
        max_calls_per_turn: Some(u32::MAX),
        max_tokens_per_turn: Some(u64::MAX),
        ..SubcallSection::default()
    };
    let subcalls = Subcalls::new(
        &settings,
        dir,
        Some(provider(server)),
        Approvals::allow_all(),
        Some(Arc::new(|_| {})),
        &|_| None,
    );
    subcalls.begin_turn();
    let mut config = KernelConfig::for_workspace(dir);
    config.auto_refresh = None;
    CodeRuntime::new(config, CapabilityRegistry::new().with(Arc::new(subcalls))).0
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

/// Times `code`'s per-iteration cost from inside the cell (so the cell's own
/// start and result are not counted): the cell prints one duration per line.
async fn cell_samples(kernel: &CodeRuntime, code: &str) -> Vec<Duration> {
    let result = kernel.execute(code, Some(Duration::from_secs(300))).await;
    assert!(result.ok, "{:?}", result.error);
    result
        .stdout
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .collect()
}

async fn overhead(server: &LoopbackServer) {
    let direct = provider(server);
    let request = ChatRequest {
        messages: vec![ChatMessage::User {
            content: "What does this do?".into(),
        }],
        ..ChatRequest::default()
    };
    let mut baseline = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS + 20 {
        let start = Instant::now();
        let turn = direct.stream_chat(request.clone()).collect().await;
        assert!(turn.error.is_none(), "{:?}", turn.error);
        baseline.push(start.elapsed());
    }
    baseline.drain(..20);
    // This repository as the workspace: each call's secrets-file check
    // walks a real tree (some 300 files four folders deep).
    let kernel = kernel(server, 4, std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let mut subcall = cell_samples(
        &kernel,
        &format!(
            "import time\n\
             for i in range({}):\n    \
                 t = time.perf_counter(); llm_query('What does this do?'); print(time.perf_counter() - t)",
            ROUNDS + 20
        ),
    )
    .await;
    subcall.drain(..20);
    let (b50, b99) = (
        percentile(&mut baseline, 0.5),
        percentile(&mut baseline, 0.99),
    );
    let (s50, s99) = (
        percentile(&mut subcall, 0.5),
        percentile(&mut subcall, 0.99),
    );
    println!(
        "one llm_query from a cell: p50 {s50:.2?} p99 {s99:.2?} | direct stream_chat: p50 {b50:.2?} p99 {b99:.2?} | overhead p50 {:.2?} ({:.2}x)",
        s50.saturating_sub(b50),
        s50.as_secs_f64() / b50.as_secs_f64()
    );
    kernel.shutdown().await;
}

async fn batching(server: &LoopbackServer, dir: &std::path::Path) {
    let mut sequential = None;
    for concurrency in [1, 4, 8] {
        let kernel = kernel(server, concurrency, dir);
        let mut samples = cell_samples(
            &kernel,
            &format!(
                "import time\n\
                 prompts = [f'chunk {{i}}' for i in range({BATCH})]\n\
                 for _ in range(3):\n    \
                     t = time.perf_counter(); llm_query_batched(prompts); print(time.perf_counter() - t)"
            ),
        )
        .await;
        let p50 = percentile(&mut samples, 0.5);
        let base = *sequential.get_or_insert(p50);
        println!(
            "llm_query_batched of {BATCH} prompts, {}ms per answer, concurrency {concurrency}: p50 {p50:.2?} (speed-up {:.2}x; ideal {:.2?})",
            DELAY.as_millis(),
            base.as_secs_f64() / p50.as_secs_f64(),
            DELAY * BATCH.div_ceil(concurrency) as u32,
        );
        kernel.shutdown().await;
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    runtime.block_on(async {
        let server =
            LoopbackServer::respond_with(Duration::from_secs(600), answer(Duration::ZERO)).await;
        overhead(&server).await;
        let slow = LoopbackServer::respond_with(Duration::from_secs(600), answer(DELAY)).await;
        batching(&slow, dir.path()).await;
    });
}

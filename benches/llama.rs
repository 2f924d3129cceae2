//! A real turn against llama.cpp's `llama-server` with SmolLM2-135M (the
//! binary and model `scripts/test` builds): time to the first token and
//! to the end through our client, the tokens per second the server itself
//! reports for the same request, and our client's own work per streamed
//! chunk (the real stream's bytes decoded again, with nothing else in the
//! way). Then each token counter against the server's `/tokenize` on the
//! same texts.
//!
//! Run: `scripts/test --no-run` once (it builds the server), then
//! `cargo bench --bench llama`.

#[path = "../tests/support/llama.rs"]
mod llama;

use std::time::{Duration, Instant};

use hello_tui::agent::provider::openai::{OpenAiConfig, StreamDecoder};
use hello_tui::agent::provider::sse::SseParser;
use hello_tui::agent::provider::{
    ChatMessage, ChatRequest, ModelProvider, OpenAiProvider, ProviderEvent,
};
use hello_tui::tokens::TokenCounter;
use llama::LlamaServer;
use serde_json::{Value, json};

const TURNS: usize = 5;
const PROMPT: &str = "Write a short Python function that adds two numbers, then explain it.";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn post(client: &reqwest::Client, url: &str, body: Value) -> reqwest::Response {
    client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the server answers")
}

/// One streamed turn through our client: (first token, end, chunks).
async fn turn(provider: &OpenAiProvider) -> (Duration, Duration, usize) {
    let request = ChatRequest {
        messages: vec![ChatMessage::User {
            content: PROMPT.to_owned(),
        }],
        tools: Vec::new(),
        temperature: Some(0.0),
        max_tokens: Some(128),
    };
    let started = Instant::now();
    let mut stream = provider.stream_chat(request);
    let (mut first, mut chunks) = (None, 0);
    while let Some(event) = stream.next().await {
        if let ProviderEvent::TextDelta(_) = event {
            first.get_or_insert_with(|| started.elapsed());
            chunks += 1;
        }
    }
    (first.unwrap_or_default(), started.elapsed(), chunks)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = LlamaServer::start(4096, 128);
    // reqwest is built without a TLS provider of its own (as the crate
    // builds its clients): the bench's direct requests need one set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let api = format!("{}/v1", server.base_url);
    let provider = OpenAiProvider::new(OpenAiConfig::new(
        Some(&api),
        "smol",
        "NO_SUCH_KEY_VAR",
        &|_| None,
    ))
    .expect("a provider");

    // Warm the server (model load, first allocation), then time.
    turn(&provider).await;
    let (mut first, mut whole, mut chunks) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..TURNS {
        let (f, w, c) = turn(&provider).await;
        first.push(ms(f));
        whole.push(ms(w));
        chunks.push(c as f64);
    }
    println!(
        "streamed turn through our client, median of {TURNS}: first token {:.1} ms, end {:.1} ms, {:.0} chunks",
        median(first),
        median(whole),
        median(chunks)
    );

    // What the server says of the same request (not streamed: its timings).
    let body = json!({
        "model": "smol", "temperature": 0.0, "max_tokens": 128,
        "messages": [{"role": "user", "content": PROMPT}],
    });
    let answer: Value = post(&client, &format!("{api}/chat/completions"), body.clone())
        .await
        .json()
        .await
        .expect("JSON");
    let timings = &answer["timings"];
    println!(
        "server timings: prompt {:.0} tokens/s, generation {:.1} tokens/s ({} tokens)",
        timings["prompt_per_second"].as_f64().unwrap_or_default(),
        timings["predicted_per_second"].as_f64().unwrap_or_default(),
        timings["predicted_n"]
    );

    // Our work per chunk: the real stream's bytes, decoded again.
    let mut streamed = body;
    streamed["stream"] = json!(true);
    let bytes = post(&client, &format!("{api}/chat/completions"), streamed)
        .await
        .bytes()
        .await
        .expect("the stream");
    let rounds = 2000;
    let started = Instant::now();
    let mut events = 0;
    for _ in 0..rounds {
        let mut parser = SseParser::default();
        let mut decoder = StreamDecoder::default();
        for slice in bytes.chunks(1400) {
            for event in parser.push(slice).expect("bounded lines") {
                if event.data != "[DONE]" {
                    events += decoder.on_data(&event.data).expect("valid chunks").len();
                }
            }
        }
    }
    let per_round = started.elapsed() / rounds;
    let per_stream = events / rounds as usize;
    println!(
        "our decoding of the real stream ({} bytes, {per_stream} events): {:.1} µs, {:.2} µs per event",
        bytes.len(),
        per_round.as_secs_f64() * 1e6,
        per_round.as_secs_f64() * 1e6 / per_stream.max(1) as f64
    );

    // Each counter against the server's tokenizer, on the same texts.
    let texts = [
        (
            "system prompt",
            include_str!("../assets/prompts/system.md").to_owned(),
        ),
        (
            "Rust source",
            include_str!("../src/agent/turn.rs")
                .chars()
                .take(8000)
                .collect(),
        ),
        (
            "English prose",
            include_str!("../README.md").chars().take(8000).collect(),
        ),
    ];
    let counters = [
        ("estimate", TokenCounter::estimate()),
        ("o200k", TokenCounter::for_model("gpt-4o")),
        ("cl100k", TokenCounter::for_model("gpt-4")),
    ];
    println!("| text | server /tokenize | estimate | o200k | cl100k |");
    println!("|---|---|---|---|---|");
    for (label, text) in &texts {
        let tokens: Value = post(
            &client,
            &format!("{}/tokenize", server.base_url),
            json!({ "content": text }),
        )
        .await
        .json()
        .await
        .expect("JSON");
        let server_count = tokens["tokens"].as_array().map_or(0, Vec::len);
        let row: Vec<String> = counters
            .iter()
            .map(|(_, counter)| {
                let ours = counter.count(text);
                format!(
                    "{ours} ({:+.0}%)",
                    (ours as f64 / server_count as f64 - 1.0) * 100.0
                )
            })
            .collect();
        println!("| {label} | {server_count} | {} |", row.join(" | "));
    }
}

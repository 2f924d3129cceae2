//! Cost of the client-side stream path and of session appends, each next to
//! a baseline measured in the same run:
//! - decode: SSE parsing + chunk decoding of a realistic answer, fed in
//!   network-sized slices, vs. only `serde_json::from_str::<Value>` of the
//!   same payloads (the JSON work any client has to do);
//! - append: `SessionWriter::append` (serialize, redact, write, flush) vs. a
//!   raw `write_all` of the same line to an append-mode file.
//!
//! Run: `cargo bench --bench provider`

use std::fs::OpenOptions;
use std::io::Write;
use std::time::{Duration, Instant};

use hello_tui::agent::provider::openai::StreamDecoder;
use hello_tui::agent::provider::sse::SseParser;
use hello_tui::agent::provider::{ChatMessage, ToolCall};
use hello_tui::session::{SessionEvent, SessionRecord, SessionWriter};
use serde_json::json;

const NETWORK_SLICE: usize = 1400;

/// 2 000 text deltas, a tool call whose arguments come in 500 pieces, a
/// usage chunk and `[DONE]`, with CRLF endings and keep-alives.
fn realistic_stream() -> (Vec<u8>, Vec<String>) {
    let mut payloads = Vec::new();
    for i in 0..2000 {
        payloads.push(
            json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",
                   "choices":[{"index":0,"delta":{"content":format!("token{i} ")},"finish_reason":null}]})
            .to_string(),
        );
    }
    payloads.push(
        json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"python","arguments":""}}]}}]})
            .to_string(),
    );
    for i in 0..500 {
        payloads.push(
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":format!("x{i} = {i}\\n")}}]}}]})
                .to_string(),
        );
    }
    payloads
        .push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}).to_string());
    payloads.push(json!({"choices":[],"usage":{"prompt_tokens":900,"completion_tokens":2600,"total_tokens":3500}}).to_string());
    let mut body = String::new();
    for (i, p) in payloads.iter().enumerate() {
        if i % 100 == 0 {
            body.push_str(": keep-alive\r\n\r\n");
        }
        body.push_str("data: ");
        body.push_str(p);
        body.push_str("\r\n\r\n");
    }
    body.push_str("data: [DONE]\r\n\r\n");
    (body.into_bytes(), payloads)
}

fn decode_stream(body: &[u8]) -> usize {
    let mut parser = SseParser::default();
    let mut decoder = StreamDecoder::default();
    let mut events = 0;
    for slice in body.chunks(NETWORK_SLICE) {
        for event in parser.push(slice).expect("bounded lines") {
            events += decoder.on_data(&event.data).expect("valid chunks").len();
        }
    }
    events
}

fn json_only(payloads: &[String]) -> usize {
    payloads
        .iter()
        .map(|p| {
            serde_json::from_str::<serde_json::Value>(p)
                .map_or(0, |v| v.as_object().map_or(0, |o| o.len()))
        })
        .sum()
}

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn measure(warmup: usize, iterations: usize, mut f: impl FnMut() -> usize) -> Stats {
    let mut sink = 0usize;
    for _ in 0..warmup {
        sink = sink.wrapping_add(f());
    }
    let mut samples: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            sink = sink.wrapping_add(std::hint::black_box(f()));
            start.elapsed()
        })
        .collect();
    std::hint::black_box(sink);
    samples.sort();
    Stats {
        p50: samples[samples.len() / 2],
        p99: samples[samples.len() * 99 / 100],
    }
}

fn report(name: &str, ours: &Stats, baseline: &Stats, unit: &str) {
    println!(
        "{name:<8} ours p50 {:>10.1?} p99 {:>10.1?} | baseline p50 {:>10.1?} p99 {:>10.1?} | ratio p50 {:.2}x {unit}",
        ours.p50,
        ours.p99,
        baseline.p50,
        baseline.p99,
        ours.p50.as_secs_f64() / baseline.p50.as_secs_f64().max(1e-12),
    );
}

fn main() {
    let (body, payloads) = realistic_stream();
    let events = decode_stream(&body);
    println!(
        "stream: {} bytes, {} chunks, {} events, slices of {NETWORK_SLICE} bytes",
        body.len(),
        payloads.len(),
        events
    );
    let ours = measure(10, 200, || decode_stream(&body));
    let baseline = measure(10, 200, || json_only(&payloads));
    report("decode", &ours, &baseline, "(per whole stream)");
    let mb = body.len() as f64 / 1e6;
    println!(
        "decode   throughput at p50: {:.0} MB/s, {:.0} ns per chunk",
        mb / ours.p50.as_secs_f64(),
        ours.p50.as_nanos() as f64 / payloads.len() as f64
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let mut writer = SessionWriter::create(
        dir.path(),
        "bench-model",
        hello_tui::session::SessionOrigin::Tui,
    )
    .expect("session");
    let event = SessionEvent::Message {
        id: Some(hello_tui::context::MessageId(1)),
        message: ChatMessage::Assistant {
            thinking: Vec::new(),
            content: Some("Here is the change you asked for. ".repeat(12)),
            tool_calls: vec![ToolCall {
                id: "call_1".into(),
                name: "python".into(),
                arguments: json!({"code": "import os\nprint(sorted(os.listdir('.')))\n"})
                    .to_string(),
            }],
        },
    };
    let line = serde_json::to_string(&SessionRecord {
        at: Some("2026-11-30T02:00:00Z".into()),
        event: event.clone(),
    })
    .expect("json")
        + "\n";
    let mut raw = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("raw.jsonl"))
        .expect("raw file");
    let ours = measure(50, 2000, || {
        writer.append(&event).expect("append");
        1
    });
    let baseline = measure(50, 2000, || {
        raw.write_all(line.as_bytes()).expect("write");
        raw.flush().expect("flush");
        1
    });
    report(
        "append",
        &ours,
        &baseline,
        &format!("(per {}-byte line)", line.len()),
    );
}

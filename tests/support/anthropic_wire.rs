//! The Anthropic Messages API's event stream as the documentation shows
//! it (`event:` lines, each event's JSON repeating its name), for loopback
//! servers in the tests.

use serde_json::{Value, json};

use super::loopback::{Framing, Reply, byte_pieces};

/// One event as the API sends it: its name, then its JSON (whose `type`
/// repeats the name).
pub fn event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap()
    )
}

pub fn message_start(input: u64, cache_write: u64, cache_read: u64) -> String {
    event(json!({
        "type": "message_start",
        "message": {
            "id": "msg_01", "type": "message", "role": "assistant", "content": [],
            "model": "claude-test", "stop_reason": null, "stop_sequence": null,
            "usage": {
                "input_tokens": input,
                "cache_creation_input_tokens": cache_write,
                "cache_read_input_tokens": cache_read,
                "output_tokens": 1,
            },
        },
    }))
}

pub fn block_start(index: u64, block: Value) -> String {
    event(json!({"type": "content_block_start", "index": index, "content_block": block}))
}

pub fn delta(index: u64, delta: Value) -> String {
    event(json!({"type": "content_block_delta", "index": index, "delta": delta}))
}

pub fn block_stop(index: u64) -> String {
    event(json!({"type": "content_block_stop", "index": index}))
}

pub fn message_end(stop_reason: &str, output: u64) -> String {
    [
        event(json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": output},
        })),
        event(json!({"type": "message_stop"})),
    ]
    .concat()
}

pub fn ping() -> String {
    event(json!({"type": "ping"}))
}

pub fn text_answer(text: &str) -> Vec<String> {
    vec![
        message_start(20, 0, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        delta(0, json!({"type": "text_delta", "text": text})),
        block_stop(0),
        message_end("end_turn", 4),
    ]
}

/// Sent in 23-byte pieces: events are cut anywhere, across lines and
/// multi-byte characters.
pub fn sse(events: &[String]) -> Reply {
    Reply::sse(Framing::Chunked, byte_pieces(&events.concat(), 23))
}

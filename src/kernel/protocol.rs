//! Wire format between the host and the Python driver: one JSON object per
//! line on the driver's private channel (never the stdout user code writes).
//!
//! Parsing never panics: a line that is not a known message is logged with
//! `tracing` and skipped, so a confused or hostile kernel cannot take the host
//! down.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::listing::StateUpdate;

/// Which of the user's output streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    Stdout,
    Stderr,
}

/// A Python exception as the driver reports it: traceback already trimmed to
/// the user's own frames.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ExecError {
    /// Exception class name, e.g. `ZeroDivisionError` or `mymod.MyError`.
    #[serde(rename = "type")]
    pub type_name: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub traceback: String,
}

/// The driver's report that a cell finished.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct ResultFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    pub id: u64,
    pub ok: bool,
    #[serde(default)]
    pub value_repr: Option<String>,
    #[serde(default)]
    pub error: Option<ExecError>,
    #[serde(default)]
    pub duration_ms: f64,
}

/// Kernel → host messages.
#[derive(Debug, Clone)]
pub enum KernelMessage {
    Ready {
        python: String,
        pid: u32,
    },
    Stream {
        /// The cell the output belongs to; `None` for output written between
        /// cells (e.g. by a background thread).
        id: Option<u64>,
        name: StreamName,
        text: String,
    },
    Result(ResultFrame),
    State {
        id: Option<u64>,
        update: StateUpdate,
    },
    Call {
        id: u64,
        cap: String,
        action: String,
        args: Value,
    },
    /// The cell stopped waiting for call `id` (interrupted or timed out).
    Cancel {
        id: u64,
    },
    /// Cell `id` runs: from now on a SIGINT raises `KeyboardInterrupt` in
    /// it (before this frame the driver may still be idle, and drops one).
    Started {
        id: u64,
    },
    /// The SIGINT handler raised `KeyboardInterrupt` in cell `id`: stop
    /// repeating the signal.
    Interrupted {
        id: u64,
    },
}

// Frame bodies also name their `type` (ignored: the tag was read first),
// so that in tests they can deny unknown fields: the golden frames in
// `assets/kernel/golden/` then fail to parse when the driver adds or
// renames a field the host does not read.

/// Only the `type` field, read first; the body is then parsed straight into
/// its own struct (an internally tagged enum would buffer every frame, and
/// state frames are the big ones).
#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

#[derive(Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
struct ReadyFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    python: String,
    pid: u32,
}

#[derive(Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
struct StreamFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    #[serde(default)]
    id: Option<u64>,
    name: StreamName,
    text: String,
}

#[derive(Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
struct StateFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    #[serde(default)]
    id: Option<u64>,
    alive: bool,
    #[serde(default)]
    variables: Vec<super::state::Variable>,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    running: Option<u64>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    elapsed_ms: Option<f64>,
    #[serde(default)]
    epoch: Option<u64>,
    #[serde(default)]
    base: Option<u64>,
    #[serde(default)]
    removed: Vec<String>,
    #[serde(default)]
    order: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
struct CancelFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    id: u64,
}

/// `started` and `interrupted` carry only the cell's id, as `cancel`
/// carries the call's.
type CellFrame = CancelFrame;

#[derive(Deserialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
struct CallFrame {
    #[serde(rename = "type", default)]
    _kind: IgnoredAny,
    id: u64,
    cap: String,
    action: String,
    #[serde(default)]
    args: Value,
}

fn parse_body(kind: &str, line: &[u8]) -> Result<Option<KernelMessage>, serde_json::Error> {
    Ok(Some(match kind {
        "ready" => {
            let f: ReadyFrame = serde_json::from_slice(line)?;
            KernelMessage::Ready {
                python: f.python,
                pid: f.pid,
            }
        }
        "stream" => {
            let f: StreamFrame = serde_json::from_slice(line)?;
            KernelMessage::Stream {
                id: f.id,
                name: f.name,
                text: f.text,
            }
        }
        "result" => KernelMessage::Result(serde_json::from_slice(line)?),
        "state" => {
            let f: StateFrame = serde_json::from_slice(line)?;
            KernelMessage::State {
                id: f.id,
                update: StateUpdate {
                    alive: f.alive,
                    truncated: f.truncated,
                    running: f.running,
                    error: f.error,
                    elapsed_ms: f.elapsed_ms,
                    epoch: f.epoch,
                    base: f.base,
                    variables: f.variables,
                    removed: f.removed,
                    order: f.order,
                },
            }
        }
        "call" => {
            let f: CallFrame = serde_json::from_slice(line)?;
            KernelMessage::Call {
                id: f.id,
                cap: f.cap,
                action: f.action,
                args: f.args,
            }
        }
        "cancel" => {
            let f: CancelFrame = serde_json::from_slice(line)?;
            KernelMessage::Cancel { id: f.id }
        }
        "started" => {
            let f: CellFrame = serde_json::from_slice(line)?;
            KernelMessage::Started { id: f.id }
        }
        "interrupted" => {
            let f: CellFrame = serde_json::from_slice(line)?;
            KernelMessage::Interrupted { id: f.id }
        }
        _ => return Ok(None),
    }))
}

/// Error half of a `reply`: `type` names the Python exception raised in the cell.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct ReplyError {
    #[serde(rename = "type")]
    pub type_name: String,
    pub message: String,
}

/// Host → kernel messages.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum HostMessage<'a> {
    Execute {
        id: u64,
        code: &'a str,
    },
    Describe {
        id: u64,
        /// Epoch of the listing the host holds: the driver may answer with
        /// only what changed since (see `kernel::listing`).
        since: Option<u64>,
    },
    Reply {
        id: u64,
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<ReplyError>,
    },
    Shutdown,
}

impl HostMessage<'_> {
    /// One frame, newline-terminated. JSON escapes every control character, so
    /// the only raw `\n` is the terminator.
    pub(crate) fn to_line(&self) -> Vec<u8> {
        let mut line = match serde_json::to_vec(self) {
            Ok(line) => line,
            Err(err) => {
                // Only non-string map keys can fail here; our types have none.
                tracing::error!(%err, "could not encode host message");
                return Vec::new();
            }
        };
        line.push(b'\n');
        line
    }
}

/// Parse one line from the kernel; `None` (and a log entry) for anything that
/// is not a well-formed message.
pub fn parse_kernel_line(line: &[u8]) -> Option<KernelMessage> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let parsed =
        serde_json::from_slice::<Tag<'_>>(line).and_then(|tag| parse_body(&tag.kind, line));
    match parsed {
        Ok(Some(msg)) => Some(msg),
        Ok(None) => {
            tracing::warn!("skipping kernel frame of unknown type");
            None
        }
        Err(err) => {
            let shown = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
            tracing::warn!(%err, line = %shown, "skipping unreadable kernel frame");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_lines_are_skipped_not_fatal() {
        for line in [
            &b""[..],
            b"not json",
            b"{\"type\":\"nope\"}",
            b"[1,2]",
            b"{\"type\":\"result\"}",
            b"\xff\xfe\x00",
            b"{\"type\":\"stream\",\"name\":\"stdout\"}",
        ] {
            assert!(parse_kernel_line(line).is_none(), "{line:?}");
        }
    }

    #[test]
    fn parses_every_kernel_message() {
        let ready = parse_kernel_line(b"{\"type\":\"ready\",\"python\":\"3.11.7\",\"pid\":42}\n");
        assert!(matches!(ready, Some(KernelMessage::Ready { pid: 42, .. })));
        let stream =
            parse_kernel_line(br#"{"type":"stream","id":null,"name":"stderr","text":"a\u0000b"}"#);
        match stream {
            Some(KernelMessage::Stream { id, name, text }) => {
                assert_eq!(
                    (id, name, text.as_str()),
                    (None, StreamName::Stderr, "a\0b")
                );
            }
            other => panic!("{other:?}"),
        }
        let state = parse_kernel_line(
            br#"{"type":"state","id":3,"alive":true,"variables":[{"name":"x","type":"int","preview":"1"}]}"#,
        );
        match state {
            Some(KernelMessage::State { id, update }) => {
                assert_eq!(id, Some(3));
                assert_eq!(update.variables[0].name, "x");
                assert_eq!(update.base, None, "no base: a whole listing");
            }
            other => panic!("{other:?}"),
        }
        let call = parse_kernel_line(
            br#"{"type":"call","id":1,"cap":"fs","action":"read","args":{"path":"a"}}"#,
        );
        assert!(matches!(call, Some(KernelMessage::Call { id: 1, .. })));
    }

    #[test]
    fn host_frames_are_single_lines() {
        let line = HostMessage::Execute {
            id: 1,
            code: "print('a')\nprint('b')",
        }
        .to_line();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert!(line.ends_with(b"\n"));
        let shutdown = HostMessage::Shutdown.to_line();
        assert_eq!(shutdown, b"{\"type\":\"shutdown\"}\n");
    }

    /// One frame of `assets/kernel/golden/`, as a value and as the line
    /// that travels.
    fn golden(name: &str) -> (Value, Vec<u8>) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/kernel/golden")
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        let line = serde_json::to_vec(&value).unwrap();
        (value, line)
    }

    /// `null`s dropped, and a variable's default kind (the driver omits it):
    /// the fields a frame carries, whichever side leaves defaults out.
    fn without_defaults(value: Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(key, v)| !(v.is_null() || key == "kind" && v == "value"))
                    .map(|(key, v)| (key, without_defaults(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(without_defaults).collect()),
            other => other,
        }
    }

    /// The golden kernel frames (which the driver's tests produce) parse,
    /// with no field the host does not know (unknown fields are denied in
    /// tests), and every value lands where the host reads it: the frame
    /// rebuilt from what was parsed is the golden frame again.
    #[test]
    fn golden_kernel_frames_parse_whole() {
        use serde_json::json;
        let names = [
            "ready",
            "stream",
            "stream_background",
            "result_ok",
            "result_error",
            "state",
            "state_delta",
            "state_error",
            "call",
            "cancel",
            "started",
            "interrupted",
        ];
        for name in names {
            let (expected, line) = golden(name);
            let rebuilt = match parse_kernel_line(&line) {
                Some(KernelMessage::Ready { python, pid }) => {
                    json!({"type": "ready", "python": python, "pid": pid})
                }
                Some(KernelMessage::Stream { id, name, text }) => {
                    json!({"type": "stream", "id": id, "name": name, "text": text})
                }
                Some(KernelMessage::Result(f)) => json!({
                    "type": "result",
                    "id": f.id,
                    "ok": f.ok,
                    "value_repr": f.value_repr,
                    "error": f.error,
                    "duration_ms": f.duration_ms,
                }),
                Some(KernelMessage::State { id, update }) => {
                    let mut frame = json!({
                        "type": "state",
                        "id": id,
                        "alive": update.alive,
                        "truncated": update.truncated,
                        "running": update.running,
                        "error": update.error,
                        "epoch": update.epoch,
                        "base": update.base,
                        "elapsed_ms": update.elapsed_ms,
                        "variables": update.variables,
                        "order": update.order,
                    });
                    if !update.removed.is_empty() {
                        frame["removed"] = json!(update.removed);
                    }
                    frame
                }
                Some(KernelMessage::Call {
                    id,
                    cap,
                    action,
                    args,
                }) => json!({"type": "call", "id": id, "cap": cap, "action": action, "args": args}),
                Some(KernelMessage::Cancel { id }) => json!({"type": "cancel", "id": id}),
                Some(KernelMessage::Started { id }) => json!({"type": "started", "id": id}),
                Some(KernelMessage::Interrupted { id }) => {
                    json!({"type": "interrupted", "id": id})
                }
                None => panic!(
                    "golden frame {name} does not parse: a field the host does not know, or one it needs is missing"
                ),
            };
            assert_eq!(
                without_defaults(rebuilt),
                without_defaults(expected),
                "golden frame {name}"
            );
        }
    }

    /// What the host sends is exactly the golden host frames (which the
    /// driver's tests read).
    #[test]
    fn host_frames_are_the_golden_frames() {
        let cases = [
            (
                "execute",
                HostMessage::Execute {
                    id: 3,
                    code: "print('a')\n1 + 1",
                },
            ),
            (
                "describe",
                HostMessage::Describe {
                    id: 9,
                    since: Some(4),
                },
            ),
            (
                "reply_ok",
                HostMessage::Reply {
                    id: 1,
                    ok: true,
                    value: Some(serde_json::json!({"text": "hi"})),
                    error: None,
                },
            ),
            (
                "reply_error",
                HostMessage::Reply {
                    id: 2,
                    ok: false,
                    value: None,
                    error: Some(ReplyError {
                        type_name: "PermissionError".into(),
                        message: "outside the workspace".into(),
                    }),
                },
            ),
            ("shutdown", HostMessage::Shutdown),
        ];
        for (name, message) in cases {
            let (expected, _) = golden(name);
            let sent: Value = serde_json::from_slice(&message.to_line()).unwrap();
            assert_eq!(sent, expected, "golden frame {name}");
        }
    }
}

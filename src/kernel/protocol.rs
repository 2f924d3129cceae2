//! Wire format between the host and the Python driver: one JSON object per
//! line on the driver's private channel (never the stdout user code writes).
//!
//! Parsing never panics: a line that is not a known message is logged with
//! `tracing` and skipped, so a confused or hostile kernel cannot take the host
//! down.

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
pub struct ResultFrame {
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
}

/// Only the `type` field, read first; the body is then parsed straight into
/// its own struct (an internally tagged enum would buffer every frame, and
/// state frames are the big ones).
#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

#[derive(Deserialize)]
struct ReadyFrame {
    python: String,
    pid: u32,
}

#[derive(Deserialize)]
struct StreamFrame {
    #[serde(default)]
    id: Option<u64>,
    name: StreamName,
    text: String,
}

#[derive(Deserialize)]
struct StateFrame {
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
struct CancelFrame {
    id: u64,
}

#[derive(Deserialize)]
struct CallFrame {
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
        _ => return Ok(None),
    }))
}

/// Error half of a `reply`: `type` names the Python exception raised in the cell.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReplyError {
    #[serde(rename = "type")]
    pub type_name: String,
    pub message: String,
}

/// Host → kernel messages.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostMessage<'a> {
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
    pub fn to_line(&self) -> Vec<u8> {
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
}

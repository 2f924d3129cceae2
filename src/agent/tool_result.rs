//! What a `code_action` call returns to the model: one JSON object, cut to
//! a fixed size so a chatty cell cannot flood the context window.

use serde_json::{Value, json};

use crate::kernel::{ExecOutcome, ExecResult, RuntimeState, dropped_markers_in};

/// Largest stdout/stderr/traceback kept per field, in characters.
pub const MAX_STREAM_CHARS: usize = 6_000;
/// Largest preview per variable, in characters.
const MAX_PREVIEW_CHARS: usize = 160;
/// Variables listed in a result; the rest are counted.
const MAX_VARIABLES: usize = 40;

/// Keeps the head and the tail of `text` (`max` characters in all) and
/// says in the middle how much was dropped: the characters cut here, plus
/// the bytes earlier cuts (the driver's, the host's) had already dropped
/// inside them, so a cell printing 200 MB is reported as that.
pub fn cut_middle(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let head = max / 2;
    let tail = max - head;
    let dropped = total - head - tail;
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text
        .char_indices()
        .nth(total - tail)
        .map_or(text.len(), |(i, _)| i);
    // Markers of earlier cuts in the middle are not output: their text is
    // not counted as dropped characters, the bytes they stand for are.
    let (earlier, marker_chars) = dropped_markers_in(&text[head_end..tail_start]);
    let dropped = dropped - marker_chars;
    let what = if earlier > 0 {
        format!("{dropped} characters and {earlier} more bytes of output dropped")
    } else {
        format!("{dropped} characters dropped")
    };
    format!(
        "{}\n… [{what}] …\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// `{alive, variables: [{name, type, preview}]}`, bounded.
pub fn state_json(state: &RuntimeState) -> Value {
    let mut variables: Vec<Value> = state
        .variables
        .iter()
        .take(MAX_VARIABLES)
        .map(|v| {
            json!({
                "name": v.name,
                "type": v.type_name,
                "preview": v.preview.as_deref().map(|p| cut_middle(p, MAX_PREVIEW_CHARS)),
            })
        })
        .collect();
    let more = state.variables.len().saturating_sub(MAX_VARIABLES);
    if more > 0 {
        variables.push(json!({ "name": format!("… {more} more (context.get_runtime_state())"), "type": null, "preview": null }));
    }
    json!({ "alive": state.alive, "variables": variables })
}

/// The tool result for a cell that ran (or was stopped).
pub fn from_exec(result: &ExecResult, state: &RuntimeState) -> Value {
    let error = result.error.as_ref().map(|e| {
        json!({
            "type": e.type_name,
            "message": e.message,
            "traceback": cut_middle(&e.traceback, MAX_STREAM_CHARS),
        })
    });
    let mut value = json!({
        "ok": result.ok,
        "stdout": cut_middle(&result.stdout, MAX_STREAM_CHARS),
        "stderr": cut_middle(&result.stderr, MAX_STREAM_CHARS),
        "value": result.value_repr.as_deref().map(|v| cut_middle(v, MAX_STREAM_CHARS)),
        "error": error,
        "state": state_json(state),
    });
    let note = match &result.outcome {
        ExecOutcome::Completed => None,
        ExecOutcome::Interrupted => Some("interrupted (variables kept)".to_owned()),
        ExecOutcome::TimedOut { restarted: false } => {
            Some("timed out and was interrupted (variables kept)".to_owned())
        }
        ExecOutcome::TimedOut { restarted: true } => {
            Some("timed out; the kernel was restarted and all variables are lost".to_owned())
        }
        ExecOutcome::KernelDied { reason } => Some(format!(
            "the kernel died ({reason}); it restarts on the next cell with no variables"
        )),
        ExecOutcome::NotRun => Some("the kernel could not start; the cell did not run".into()),
    };
    if let (Some(note), Some(map)) = (note, value.as_object_mut()) {
        map.insert("outcome".into(), json!(note));
    }
    value
}

/// The tool result for a call that never reached the kernel (malformed
/// arguments, unknown tool, refused, cancelled).
pub fn refused(error_type: &str, message: &str, state: Option<&RuntimeState>) -> Value {
    json!({
        "ok": false,
        "stdout": "",
        "stderr": "",
        "value": null,
        "error": { "type": error_type, "message": message, "traceback": null },
        "state": state.map_or_else(|| json!({"alive": null, "variables": []}), state_json),
    })
}

/// A human-readable rendering of a tool result (what the conversation
/// pane shows and what `context.search` indexes): output, value, error.
pub fn readable(result: &Value) -> String {
    let mut out = String::new();
    let mut add = |text: &str| {
        if !text.is_empty() {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(text);
        }
    };
    add(result["stdout"].as_str().unwrap_or_default());
    add(result["stderr"].as_str().unwrap_or_default());
    if let Some(value) = result["value"].as_str() {
        add(&format!("→ {value}"));
    }
    if let Some(error) = result["error"].as_object() {
        let traceback = error.get("traceback").and_then(Value::as_str);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let kind = error.get("type").and_then(Value::as_str).unwrap_or("Error");
        add(traceback
            .map_or_else(|| format!("{kind}: {message}"), str::to_owned)
            .trim_end());
    }
    if let Some(note) = result["outcome"].as_str() {
        add(&format!("({note})"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_head_and_tail_and_counts() {
        let text: String = "a".repeat(50) + &"b".repeat(50);
        let cut = cut_middle(&text, 20);
        assert!(cut.starts_with("aaaaaaaaaa\n"));
        assert!(cut.ends_with("\nbbbbbbbbbb"));
        assert!(cut.contains("[80 characters dropped]"));
        assert_eq!(cut_middle("short", 20), "short");
        assert!(cut_middle(&"日本".repeat(30), 10).contains("[50 characters dropped]"));
        // An earlier cut's count survives this one.
        let text = format!(
            "{}\n{}\n{}",
            "a".repeat(100),
            crate::kernel::dropped_marker(200_000_000),
            "b".repeat(100)
        );
        let cut = cut_middle(&text, 20);
        assert!(
            cut.contains("characters and 200000000 more bytes of output dropped"),
            "{cut}"
        );
    }

    #[test]
    fn refused_results_read_as_errors() {
        let r = refused("ValueError", "bad arguments", None);
        assert_eq!(r["ok"], false);
        assert_eq!(readable(&r), "ValueError: bad arguments");
    }
}

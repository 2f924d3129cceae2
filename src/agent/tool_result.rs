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
pub(crate) fn cut_middle(text: &str, max: usize) -> String {
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

fn variable_json(v: &crate::kernel::Variable) -> Value {
    json!({
        "name": v.name,
        "type": v.type_name,
        "preview": v.preview.as_deref().map(|p| cut_middle(p, MAX_PREVIEW_CHARS)),
    })
}

/// Same binding as far as the model can tell from a listing.
fn same_variable(a: &crate::kernel::Variable, b: &crate::kernel::Variable) -> bool {
    a.type_name == b.type_name && a.preview == b.preview && a.summary == b.summary
}

/// `{alive, variables: [{name, type, preview}], removed, unchanged, total}`,
/// bounded. With `previous` (the state the last result reported) only the
/// variables that are new or changed since then are listed, `removed` names
/// the ones gone and `unchanged` counts the rest: a session with 40 stable
/// variables no longer re-sends all 40 after every cell.
pub(crate) fn state_json(state: &RuntimeState, previous: Option<&RuntimeState>) -> Value {
    let before: std::collections::HashMap<&str, &crate::kernel::Variable> = previous
        .map(|p| p.variables.iter().map(|v| (v.name.as_str(), v)).collect())
        .unwrap_or_default();
    let changed: Vec<&crate::kernel::Variable> = state
        .variables
        .iter()
        .filter(|v| {
            before
                .get(v.name.as_str())
                .is_none_or(|old| !same_variable(old, v))
        })
        .collect();
    let mut variables: Vec<Value> = changed
        .iter()
        .take(MAX_VARIABLES)
        .map(|v| variable_json(v))
        .collect();
    let more = changed.len().saturating_sub(MAX_VARIABLES);
    if more > 0 {
        variables.push(json!({ "name": format!("… {more} more (context.get_runtime_state())"), "type": null, "preview": null }));
    }
    let mut value = json!({ "alive": state.alive, "variables": variables });
    if let (Some(previous), Some(map)) = (previous, value.as_object_mut()) {
        let now: std::collections::HashSet<&str> =
            state.variables.iter().map(|v| v.name.as_str()).collect();
        let removed: Vec<&str> = previous
            .variables
            .iter()
            .map(|v| v.name.as_str())
            .filter(|name| !now.contains(name))
            .collect();
        map.insert("removed".into(), json!(removed));
        map.insert(
            "unchanged".into(),
            json!(state.variables.len() - changed.len()),
        );
        map.insert("total".into(), json!(state.variables.len()));
    }
    value
}

/// The tool result for a cell that ran (or was stopped); `previous` is the
/// state the last result reported (see [`state_json`]).
pub fn from_exec(
    result: &ExecResult,
    state: &RuntimeState,
    previous: Option<&RuntimeState>,
) -> Value {
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
        "state": state_json(state, previous),
    });
    if !result.background.is_empty()
        && let Some(map) = value.as_object_mut()
    {
        map.insert(
            "background".into(),
            json!(cut_middle(&result.background, MAX_STREAM_CHARS)),
        );
    }
    if !result.files_changed.is_empty()
        && let Some(map) = value.as_object_mut()
    {
        let files: Vec<Value> = result
            .files_changed
            .iter()
            .map(|f| json!({ "path": f.path, "added": f.added, "removed": f.removed }))
            .collect();
        map.insert("files_changed".into(), json!(files));
    }
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
        "state": state.map_or_else(
            || json!({"alive": null, "variables": []}),
            |s| state_json(s, None),
        ),
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
    if let Some(background) = result["background"].as_str() {
        add(&crate::kernel::labelled_background(background));
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

    fn var(name: &str, preview: &str) -> crate::kernel::Variable {
        serde_json::from_value(json!({"name": name, "type": "int", "preview": preview})).unwrap()
    }

    fn state(vars: Vec<crate::kernel::Variable>) -> RuntimeState {
        RuntimeState {
            alive: true,
            variables: std::sync::Arc::new(vars),
            ..RuntimeState::dead()
        }
    }

    #[test]
    fn state_lists_only_what_changed_since_the_previous_result() {
        let first = state(vec![var("a", "1"), var("b", "2"), var("c", "3")]);
        let all = state_json(&first, None);
        assert_eq!(all["variables"].as_array().unwrap().len(), 3);
        assert!(all.get("unchanged").is_none());

        let second = state(vec![var("a", "1"), var("b", "20"), var("d", "4")]);
        let delta = state_json(&second, Some(&first));
        let names: Vec<&str> = delta["variables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["b", "d"]);
        assert_eq!(delta["removed"], json!(["c"]));
        assert_eq!(delta["unchanged"], 1);
        assert_eq!(delta["total"], 3);

        let same = state_json(&second, Some(&second));
        assert_eq!(same["variables"], json!([]));
        assert_eq!(same["unchanged"], 3);
    }

    #[test]
    fn refused_results_read_as_errors() {
        let r = refused("ValueError", "bad arguments", None);
        assert_eq!(r["ok"], false);
        assert_eq!(readable(&r), "ValueError: bad arguments");
    }

    /// Issue 12: background output reaches the model and the pane labelled,
    /// apart from the cell's own stdout.
    #[test]
    fn background_output_is_labelled_apart_from_stdout() {
        let mut result = ExecResult::failed(7, "X", "m".into(), ExecOutcome::Completed);
        result.ok = true;
        result.error = None;
        result.stdout = "mine\n".into();
        result.background = "LATE\n".into();
        let value = from_exec(&result, &state(vec![]), None);
        assert_eq!(value["stdout"], "mine\n");
        assert_eq!(value["background"], "LATE\n");
        let text = readable(&value);
        assert!(
            text.ends_with("[background output: printed by no running cell]\nLATE"),
            "{text}"
        );
        result.background.clear();
        let quiet = from_exec(&result, &state(vec![]), None);
        assert!(
            quiet.get("background").is_none(),
            "no key when there is none"
        );
    }

    /// Issue 17: the model is told which files its cell changed, with line
    /// counts; a cell that changed none has no such key.
    #[test]
    fn the_files_a_cell_changed_are_listed_with_line_counts() {
        let mut result = ExecResult::failed(3, "X", "m".into(), ExecOutcome::Completed);
        result.ok = true;
        result.error = None;
        let quiet = from_exec(&result, &state(vec![]), None);
        assert!(quiet.get("files_changed").is_none());
        result.files_changed = vec![crate::kernel::FileChanged {
            path: "src/auth.ts".into(),
            added: 3,
            removed: 1,
        }];
        let value = from_exec(&result, &state(vec![]), None);
        assert_eq!(
            value["files_changed"],
            serde_json::json!([{ "path": "src/auth.ts", "added": 3, "removed": 1 }])
        );
    }
}

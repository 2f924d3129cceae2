//! The `context` capability as pure functions of the conversation.
//!
//! The kernel's registry calls [`call`] with the action name and the
//! arguments the Python side sent (JSON), plus the runtime state it holds
//! (embedded as-is). Answers are JSON with snake_case keys. Nothing here
//! blocks or waits on the kernel, so a cell can use every action freely.
//!
//! `current` and `slice` return message contents whole, however long: the
//! kernel caps reply sizes, and a silently cut message would mislead the
//! model more than a refused oversize reply.

use serde_json::{Map, Value, json};

use super::message::{Message, Role};
use super::slice::python_slice;
use super::store::{AgentContext, SearchQuery};

/// Why a capability call was refused; the message is shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    #[error("context.{action}(): {problem}")]
    InvalidArgument {
        action: &'static str,
        problem: String,
    },
    #[error("context has no action `{0}` (available: current, search, slice, summarize)")]
    UnknownAction(String),
}

fn invalid(action: &'static str, problem: impl Into<String>) -> ContextError {
    ContextError::InvalidArgument {
        action,
        problem: problem.into(),
    }
}

/// Runs one action. `args` may be `null`, a positional array, an object of
/// named arguments, or (for `search` and `slice`) a bare first argument.
pub fn call(
    context: &AgentContext,
    action: &str,
    args: &Value,
    runtime_state: Value,
) -> Result<Value, ContextError> {
    match action {
        "current" => Ok(current(context, runtime_state)),
        "search" => search(context, &SearchArgs::from_json(args)?),
        "slice" => {
            let (start, end) = slice_args(args)?;
            Ok(slice(context, start, end))
        }
        "summarize" => Ok(summarize(context, &runtime_state)),
        other => Err(ContextError::UnknownAction(other.to_string())),
    }
}

/// `{messages: [...], runtime_state}`.
pub fn current(context: &AgentContext, runtime_state: Value) -> Value {
    let messages: Vec<Value> = context
        .messages()
        .iter()
        .enumerate()
        .map(|(i, m)| message_json(i, m))
        .collect();
    json!({ "messages": messages, "runtime_state": runtime_state })
}

/// Validated arguments of `context.search(query, limit=10, role=None)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchArgs {
    pub query: String,
    pub limit: usize,
    pub role: Option<Role>,
}

impl SearchArgs {
    pub fn from_json(args: &Value) -> Result<Self, ContextError> {
        const A: &str = "search";
        let (query, limit, role) = match args {
            Value::String(_) => (Some(args), None, None),
            Value::Array(items) if items.len() <= 3 => (items.first(), items.get(1), items.get(2)),
            Value::Array(items) => {
                return Err(invalid(
                    A,
                    format!("takes at most 3 arguments, got {}", items.len()),
                ));
            }
            Value::Object(map) => {
                reject_unknown_keys(A, map, &["query", "limit", "role"])?;
                (map.get("query"), map.get("limit"), map.get("role"))
            }
            other => {
                return Err(invalid(
                    A,
                    format!("query must be a string, got {}", type_name(other)),
                ));
            }
        };
        let query = match query {
            Some(Value::String(q)) => q.clone(),
            None => return Err(invalid(A, "missing required argument `query`")),
            Some(other) => {
                return Err(invalid(
                    A,
                    format!("query must be a string, got {}", type_name(other)),
                ));
            }
        };
        let limit = match limit {
            None | Some(Value::Null) => SearchQuery::DEFAULT_LIMIT,
            Some(v) => match v.as_i64() {
                Some(n) if n < 0 => return Err(invalid(A, format!("limit must be >= 0, got {n}"))),
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                None if v.as_u64().is_some() => usize::MAX,
                None => {
                    return Err(invalid(
                        A,
                        format!("limit must be an integer, got {}", type_name(v)),
                    ));
                }
            },
        };
        let role = match role {
            None | Some(Value::Null) => None,
            Some(Value::String(r)) => match r.parse::<Role>() {
                Ok(role) if role.is_searchable() => Some(role),
                _ => {
                    return Err(invalid(
                        A,
                        format!("role must be \"user\", \"assistant\" or \"tool\", got {r:?}"),
                    ));
                }
            },
            Some(other) => {
                return Err(invalid(
                    A,
                    format!("role must be a string or None, got {}", type_name(other)),
                ));
            }
        };
        Ok(Self { query, limit, role })
    }
}

/// `{results: [{index, role, snippet, score, highlights}], total}`.
///
/// `snippet` is plain text around the best match; `highlights` lists the
/// matched spans as `[start, end]` character offsets into it (Python string
/// indices). `total` counts every message matching any query term.
pub fn search(context: &AgentContext, args: &SearchArgs) -> Result<Value, ContextError> {
    let outcome = context.search(
        &SearchQuery::new(args.query.as_str())
            .limit(args.limit)
            .role(args.role),
    );
    let results: Vec<Value> = outcome
        .hits
        .iter()
        .map(|hit| {
            let highlights: Vec<[usize; 2]> = hit
                .snippet
                .char_highlights
                .iter()
                .map(|r| [r.start, r.end])
                .collect();
            json!({
                "index": hit.id.0,
                "role": hit.role.as_str(),
                "snippet": hit.snippet.text,
                "score": round4(hit.score),
                "highlights": highlights,
            })
        })
        .collect();
    Ok(json!({ "results": results, "total": outcome.total }))
}

fn slice_args(args: &Value) -> Result<(Option<i64>, Option<i64>), ContextError> {
    let (start, end) = match args {
        Value::Null => (None, None),
        Value::Number(_) => (Some(args), None),
        Value::Array(items) if items.len() <= 2 => (items.first(), items.get(1)),
        Value::Array(items) => {
            return Err(invalid(
                "slice",
                format!("takes at most 2 arguments, got {}", items.len()),
            ));
        }
        Value::Object(map) => {
            reject_unknown_keys("slice", map, &["start", "end"])?;
            (map.get("start"), map.get("end"))
        }
        other => {
            return Err(invalid(
                "slice",
                format!("start must be an integer or None, got {}", type_name(other)),
            ));
        }
    };
    Ok((slice_bound("start", start)?, slice_bound("end", end)?))
}

fn slice_bound(name: &str, value: Option<&Value>) -> Result<Option<i64>, ContextError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match (v.as_i64(), v.as_u64()) {
            (Some(n), _) => Ok(Some(n)),
            (None, Some(_)) => Ok(Some(i64::MAX)),
            _ => Err(invalid(
                "slice",
                format!("{name} must be an integer or None, got {}", type_name(v)),
            )),
        },
    }
}

/// `{messages: [...], total}` for `messages[start:end]` with Python slice
/// semantics; `total` is the length of the whole conversation.
pub fn slice(context: &AgentContext, start: Option<i64>, end: Option<i64>) -> Value {
    let range = python_slice(context.len(), start, end);
    let messages: Vec<Value> = context.messages()[range.clone()]
        .iter()
        .zip(range)
        .map(|(m, i)| message_json(i, m))
        .collect();
    json!({ "messages": messages, "total": context.len() })
}

/// `{message_counts: {user, assistant, tool}, total_messages,
/// runtime_variables, runtime_alive}`, reading the variable count and
/// liveness from `runtime_state` (`{alive, variables: [...]}`); a missing or
/// malformed state counts as zero variables, not alive.
pub fn summarize(context: &AgentContext, runtime_state: &Value) -> Value {
    let variables = runtime_state
        .get("variables")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let alive = runtime_state
        .get("alive")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    json!({
        "message_counts": {
            "user": context.count(Role::User),
            "assistant": context.count(Role::Assistant),
            "tool": context.count(Role::Tool),
        },
        "total_messages": context.len(),
        "runtime_variables": variables,
        "runtime_alive": alive,
    })
}

/// One message as the capability shows it; `index` is its position in the
/// whole conversation, so results of `search` and `slice` line up.
fn message_json(index: usize, message: &Message) -> Value {
    let mut object = Map::new();
    object.insert("index".into(), json!(index));
    object.insert("role".into(), json!(message.role.as_str()));
    object.insert("content".into(), json!(message.content));
    if let Some(call) = &message.tool_call {
        let mut tool_call = Map::new();
        tool_call.insert("id".into(), json!(call.id));
        tool_call.insert("name".into(), json!(call.name));
        if let Some(code) = &call.code {
            tool_call.insert("code".into(), json!(code));
        }
        object.insert("tool_call".into(), Value::Object(tool_call));
    }
    object.insert("timestamp_ms".into(), json!(message.timestamp_ms));
    Value::Object(object)
}

fn reject_unknown_keys(
    action: &'static str,
    map: &Map<String, Value>,
    known: &[&str],
) -> Result<(), ContextError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(invalid(
            action,
            format!(
                "unexpected argument `{key}` (expected {})",
                known.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// Python-ish type names, since the reader wrote Python.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn round4(score: f32) -> f64 {
    (f64::from(score) * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::message::CallRef;

    fn sample() -> AgentContext {
        let mut ctx = AgentContext::new();
        ctx.push(Message::system("You are a coding agent.").with_timestamp_ms(1));
        ctx.push(Message::user("Where is checkAuth?").with_timestamp_ms(2));
        ctx.push(
            Message::assistant("Let me look.")
                .with_tool_call(CallRef {
                    id: "call_1".into(),
                    name: "code_action".into(),
                    code: Some("print(fs.read('auth.ts'))".into()),
                })
                .with_timestamp_ms(3),
        );
        ctx.push(
            Message::tool("export function checkAuth(user) {}")
                .with_tool_call(CallRef {
                    id: "call_1".into(),
                    name: "code_action".into(),
                    code: None,
                })
                .with_timestamp_ms(4),
        );
        ctx.push(Message::assistant("It is in auth.ts.").with_timestamp_ms(5));
        ctx
    }

    fn state() -> Value {
        json!({"alive": true, "variables": [{"name": "content"}, {"name": "lines"}]})
    }

    #[test]
    fn current_embeds_messages_and_runtime_state() {
        let out = call(&sample(), "current", &Value::Null, state()).unwrap();
        assert_eq!(out["runtime_state"], state());
        let messages = out["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 5);
        assert_eq!(
            messages[2],
            json!({
                "index": 2, "role": "assistant", "content": "Let me look.",
                "tool_call": {"id": "call_1", "name": "code_action", "code": "print(fs.read('auth.ts'))"},
                "timestamp_ms": 3
            })
        );
        assert_eq!(
            messages[3]["tool_call"],
            json!({"id": "call_1", "name": "code_action"})
        );
        assert!(messages[1].get("tool_call").is_none());
    }

    #[test]
    fn search_returns_ranked_results_with_highlights() {
        let ctx = sample();
        let out = call(&ctx, "search", &json!("checkAuth"), Value::Null).unwrap();
        assert_eq!(out["total"], 2);
        let results = out["results"].as_array().unwrap();
        let first = &results[0];
        assert_eq!(first.as_object().unwrap().len(), 5);
        let snippet = first["snippet"].as_str().unwrap();
        let [start, end] = [
            first["highlights"][0][0].as_u64().unwrap(),
            first["highlights"][0][1].as_u64().unwrap(),
        ];
        let highlighted: String = snippet
            .chars()
            .skip(start as usize)
            .take((end - start) as usize)
            .collect();
        assert_eq!(highlighted, "checkAuth");
        assert!(first["score"].as_f64().unwrap() > 0.0);

        let named = call(
            &ctx,
            "search",
            &json!({"query": "checkAuth", "limit": 1, "role": "tool"}),
            Value::Null,
        )
        .unwrap();
        assert_eq!(named["total"], 1);
        assert_eq!(named["results"][0]["index"], 3);
        assert_eq!(named["results"][0]["role"], "tool");
        let positional = call(
            &ctx,
            "search",
            &json!(["checkAuth", 1, "tool"]),
            Value::Null,
        )
        .unwrap();
        assert_eq!(positional, named);
        let empty = call(&ctx, "search", &json!({"query": "   "}), Value::Null).unwrap();
        assert_eq!(empty, json!({"results": [], "total": 0}));
    }

    #[test]
    fn search_rejects_bad_arguments_with_readable_errors() {
        let ctx = sample();
        let err = |args: Value| {
            call(&ctx, "search", &args, Value::Null)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(json!({"query": "x", "limit": -1})),
            "context.search(): limit must be >= 0, got -1"
        );
        assert_eq!(
            err(json!(42)),
            "context.search(): query must be a string, got int"
        );
        assert_eq!(
            err(json!([null])),
            "context.search(): query must be a string, got None"
        );
        assert_eq!(
            err(json!({"limit": 3})),
            "context.search(): missing required argument `query`"
        );
        assert_eq!(
            err(json!({"query": "x", "limit": 2.5})),
            "context.search(): limit must be an integer, got float"
        );
        assert!(err(json!({"query": "x", "role": "system"})).contains("role must be"));
        assert!(err(json!({"query": "x", "role": "robot"})).contains("\"robot\""));
        assert!(err(json!({"query": "x", "k": 3})).contains("unexpected argument `k`"));
        assert!(err(json!(["a", 1, "user", 4])).contains("at most 3"));
    }

    #[test]
    fn slice_follows_python_semantics() {
        let ctx = sample();
        let indices = |args: Value| -> Vec<u64> {
            let out = call(&ctx, "slice", &args, Value::Null).unwrap();
            assert_eq!(out["total"], 5);
            out["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["index"].as_u64().unwrap())
                .collect()
        };
        assert_eq!(indices(json!([-2])), [3, 4]);
        assert_eq!(indices(json!({"start": -2, "end": null})), [3, 4]);
        assert_eq!(indices(json!([1, -1])), [1, 2, 3]);
        assert_eq!(indices(json!([-100, 2])), [0, 1]);
        assert_eq!(indices(json!([3, 100])), [3, 4]);
        assert_eq!(indices(json!([4, 2])), Vec::<u64>::new());
        assert_eq!(indices(json!(3)), [3, 4]);
        assert_eq!(indices(Value::Null), [0, 1, 2, 3, 4]);
        assert_eq!(indices(json!([u64::MAX])), Vec::<u64>::new());
        let err = call(&ctx, "slice", &json!([0.5]), Value::Null).unwrap_err();
        assert_eq!(
            err.to_string(),
            "context.slice(): start must be an integer or None, got float"
        );
        assert!(call(&ctx, "slice", &json!({"end": "3"}), Value::Null).is_err());
        assert!(call(&ctx, "slice", &json!([1, 2, 3]), Value::Null).is_err());
    }

    #[test]
    fn summarize_counts_roles_and_reads_runtime_state() {
        let out = call(&sample(), "summarize", &Value::Null, state()).unwrap();
        assert_eq!(
            out,
            json!({
                "message_counts": {"user": 1, "assistant": 2, "tool": 1},
                "total_messages": 5,
                "runtime_variables": 2,
                "runtime_alive": true,
            })
        );
        let out = summarize(&AgentContext::new(), &json!("garbage"));
        assert_eq!(out["runtime_variables"], 0);
        assert_eq!(out["runtime_alive"], false);
    }

    #[test]
    fn unknown_action_is_an_error_value() {
        let err = call(&sample(), "getRuntimeStat", &Value::Null, Value::Null).unwrap_err();
        assert_eq!(err, ContextError::UnknownAction("getRuntimeStat".into()));
        assert!(
            err.to_string()
                .contains("available: current, search, slice, summarize")
        );
    }
}

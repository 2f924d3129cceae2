//! What the kernel and the prompt say about a tool, and what a call's
//! result becomes in Python.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::McpError;

/// One tool as `tools/list` described it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    /// The name the server knows it by (`get-sum`).
    pub name: String,
    /// How Python reaches it (`get_sum`): `mcp.<server>.<python_name>`.
    pub python_name: String,
    pub description: String,
    /// The tool's JSON Schema for its arguments.
    pub input_schema: Value,
}

impl ToolInfo {
    /// From a `Tool` object of `tools/list` (as JSON, so this does not
    /// depend on the SDK's struct layout).
    pub fn from_json(tool: &Value) -> Self {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Self {
            python_name: python_name(&name),
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            input_schema: tool
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"})),
            name,
        }
    }

    /// Whether `asked` names this tool: its own name or its Python one.
    pub(crate) fn answers_to(&self, asked: &str) -> bool {
        self.name == asked || self.python_name == asked
    }

    /// The parameters as `a, b, note=…` (required first, as the schema lists
    /// them), for the prompt line.
    pub fn signature(&self) -> String {
        let required = self.required();
        let mut names: Vec<String> = Vec::new();
        let mut optional: Vec<String> = Vec::new();
        for (name, _) in self.properties() {
            if required.contains(&name.as_str()) {
                names.push(name.clone());
            } else {
                optional.push(format!("{name}=…"));
            }
        }
        names.extend(optional);
        names.join(", ")
    }

    /// The prompt's line for this tool: `- mcp.s.get_sum(a, b): Returns …`,
    /// the description cut to its first line and 100 characters.
    pub(crate) fn prompt_line(&self, server: &str) -> String {
        let first = self.description.lines().next().unwrap_or_default().trim();
        let mut description: String = first.chars().take(100).collect();
        if first.chars().count() > 100 {
            description.push('…');
        }
        let mut line = format!(
            "- `mcp.{server}.{}({})`",
            self.python_name,
            self.signature()
        );
        if !description.is_empty() {
            line.push_str(": ");
            line.push_str(&description);
        }
        line
    }

    fn properties(&self) -> Vec<(&String, &Value)> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.iter().collect())
            .unwrap_or_default()
    }

    fn required(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A tool name as a Python attribute: every character that cannot be in an
/// identifier becomes `_` (`get-sum` → `get_sum`).
fn python_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with(|c: char| c.is_ascii_digit()) || out.is_empty() {
        out.insert(0, '_');
    }
    out
}

/// A `tools/call` result as the cell gets it: `structuredContent` when the
/// server sent it; otherwise the content blocks, a lone text block as its
/// string, else a list (text blocks as strings, others as dicts). A result
/// with `isError: true` is the tool's error, its text the message.
pub(super) fn python_value(result: &Value) -> Result<Value, McpError> {
    let blocks: Vec<Value> = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().map(block_value).collect())
        .unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: Vec<String> = blocks
            .iter()
            .map(|block| match block {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect();
        let message = text.join("\n");
        return Err(McpError::Tool(if message.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            message
        }));
    }
    if let Some(structured) = result.get("structuredContent") {
        return Ok(structured.clone());
    }
    match blocks.as_slice() {
        [Value::String(text)] => Ok(Value::String(text.clone())),
        _ => Ok(Value::Array(blocks)),
    }
}

fn block_value(block: &Value) -> Value {
    match (block.get("type").and_then(Value::as_str), block.get("text")) {
        (Some("text"), Some(Value::String(text))) => Value::String(text.clone()),
        _ => match block {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(key, _)| key.as_str() != "annotations")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum_tool() -> ToolInfo {
        ToolInfo::from_json(&json!({
            "name": "get-sum",
            "description": "Returns the sum of two numbers\nMore text.",
            "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number"}, "note": {"type": "string"}, "b": {"type": "number"}
            }, "required": ["a", "b"]}
        }))
    }

    #[test]
    fn a_tool_gets_a_python_name_and_a_one_line_prompt_entry() {
        let tool = sum_tool();
        assert_eq!(tool.python_name, "get_sum");
        assert!(tool.answers_to("get-sum") && tool.answers_to("get_sum"));
        assert_eq!(
            tool.prompt_line("everything"),
            "- `mcp.everything.get_sum(a, b, note=…)`: Returns the sum of two numbers"
        );
        assert_eq!(python_name("9lives.x"), "_9lives_x");
    }

    #[test]
    fn results_become_python_data_and_errors_become_errors() {
        let structured = json!({"content": [{"type": "text", "text": "{\"t\": 1}"}],
                                "structuredContent": {"t": 1}});
        assert_eq!(python_value(&structured).unwrap(), json!({"t": 1}));
        let text = json!({"content": [{"type": "text", "text": "Echo: hi"}]});
        assert_eq!(python_value(&text).unwrap(), json!("Echo: hi"));
        let mixed = json!({"content": [{"type": "text", "text": "a"},
            {"type": "image", "data": "AAA", "mimeType": "image/png", "annotations": {"x": 1}}]});
        assert_eq!(
            python_value(&mixed).unwrap(),
            json!(["a", {"type": "image", "data": "AAA", "mimeType": "image/png"}])
        );
        let error = json!({"isError": true, "content": [{"type": "text", "text": "bad a"}]});
        assert!(matches!(python_value(&error), Err(McpError::Tool(m)) if m == "bad a"));
    }
}

//! A tool call written as text. A local server whose chat template has no
//! tool support (llama.cpp without `--jinja`, an older Ollama template)
//! passes the tool schema to the model as prose, and the model answers
//! with the call as text: `{"name": "code_action", "arguments": {"code":
//! …}}`, often inside `<tool_call>` tags (Hermes, Qwen) or a ```json
//! fence, or with `parameters` (Llama 3). Left alone, the turn would end
//! with that JSON as the "answer" and nothing run. An answer that starts
//! with such a call — and made no real one — is taken as the call.

use serde_json::Value;

/// How to give a local server real tool calls, said when a call came as
/// text.
pub const HINT: &str = "the server's chat template has no tool support: start llama.cpp's \
    llama-server with --jinja, or use a model whose Ollama template has tools";

/// A `code_action` call found at the start of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextToolCall {
    pub code: String,
    /// What the answer says besides the call (usually nothing).
    pub rest: String,
}

/// The call `text` starts with, if it is one (after whitespace, an
/// opening `<tool_call>` tag or a ```json fence).
pub fn parse(text: &str) -> Option<TextToolCall> {
    let mut body = text.trim_start();
    let mut closers: Vec<&str> = Vec::new();
    if let Some(rest) = body.strip_prefix("<tool_call>") {
        body = rest.trim_start();
        closers.push("</tool_call>");
    }
    if let Some(rest) = body.strip_prefix("```") {
        let rest = rest.strip_prefix("json").unwrap_or(rest);
        body = rest.trim_start();
        closers.push("```");
    }
    if !body.starts_with('{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    let call = values.next()?.ok()?;
    let end = values.byte_offset();
    let code = code_of(&call)?;
    let mut rest = body[end..].trim_start();
    for closer in closers.iter().rev() {
        rest = rest.strip_prefix(closer).unwrap_or(rest).trim_start();
    }
    Some(TextToolCall {
        code,
        rest: rest.trim_end().to_owned(),
    })
}

/// The code of a `code_action` call in any of the shapes models write.
fn code_of(call: &Value) -> Option<String> {
    let object = call.as_object()?;
    let name = ["name", "tool", "function", "tool_name"]
        .iter()
        .find_map(|key| object.get(*key))?;
    // `{"function": {"name": …, "arguments": …}}`, as OpenAI nests it.
    if let Some(nested) = name.as_object() {
        return code_of(&Value::Object(nested.clone()));
    }
    if name.as_str()? != "code_action" {
        return None;
    }
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|key| object.get(*key))?;
    let arguments = match arguments {
        // Some templates put the arguments as a JSON string.
        Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    arguments.get("code")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<String> {
        parse(text).map(|call| call.code)
    }

    #[test]
    fn the_shapes_models_write_are_calls() {
        let want = Some("print(1)".to_owned());
        assert_eq!(
            code(r#"{"name": "code_action", "arguments": {"code": "print(1)"}}"#),
            want
        );
        assert_eq!(
            code(
                "<tool_call>\n{\"name\": \"code_action\", \"arguments\": {\"code\": \"print(1)\"}}\n</tool_call>"
            ),
            want
        );
        assert_eq!(
            code(
                "```json\n{\"name\": \"code_action\", \"parameters\": {\"code\": \"print(1)\"}}\n```"
            ),
            want
        );
        assert_eq!(
            code(r#"  {"name": "code_action", "arguments": "{\"code\": \"print(1)\"}"}"#),
            want
        );
        assert_eq!(
            code(r#"{"function": {"name": "code_action", "arguments": {"code": "print(1)"}}}"#),
            want
        );
    }

    #[test]
    fn what_follows_the_call_is_kept() {
        let call = parse(
            "<tool_call>{\"name\": \"code_action\", \"arguments\": {\"code\": \"x\"}}</tool_call>\nThen I check.",
        )
        .unwrap();
        assert_eq!(call.rest, "Then I check.");
    }

    #[test]
    fn prose_other_tools_and_broken_json_are_not_calls() {
        assert_eq!(code("The answer is 42."), None);
        assert_eq!(
            code("Here: {\"name\": \"code_action\"}"),
            None,
            "not at the start"
        );
        assert_eq!(
            code(r#"{"name": "web_search", "arguments": {"code": "x"}}"#),
            None
        );
        assert_eq!(code(r#"{"name": "code_action", "arguments": {}}"#), None);
        assert_eq!(
            code(r#"{"name": "code_action", "arguments": {"code": "#),
            None
        );
        assert_eq!(code(r#"{"a": 1}"#), None);
    }
}

//! What a dropped message was about, from its first few KB (a JSON prefix
//! cut anywhere, even inside a string). A small scanner, not a parser: it
//! follows nesting and takes the top-level `method` and `id` and the
//! `params.uri`, whatever their order and however deep the rest goes. A
//! value the prefix does not reach is simply unknown; nothing here fails.

use serde_json::Value;

/// What the start of a message says about it.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct About {
    pub method: Option<String>,
    /// A request's or response's id (a number or a string).
    pub id: Option<Value>,
    /// `params.uri`: the document a notification such as
    /// `textDocument/publishDiagnostics` is about.
    pub uri: Option<String>,
}

/// One open object or array.
struct Level {
    object: bool,
    /// The key this container is the value of (`None` in arrays).
    under: Option<String>,
    /// The key whose value comes next (objects only).
    key: Option<String>,
}

enum Token {
    Open {
        object: bool,
    },
    Close,
    Colon,
    Comma,
    Text(String),
    /// A number, `true`, `false` or `null`, as written.
    Scalar(String),
}

pub(crate) fn about(head: &[u8]) -> About {
    let mut about = About::default();
    let mut levels: Vec<Level> = Vec::new();
    let mut at = 0;
    while let Some(token) = next_token(head, &mut at) {
        match token {
            Token::Open { object } => {
                let under = levels.last_mut().and_then(|level| level.key.take());
                levels.push(Level {
                    object,
                    under,
                    key: None,
                });
            }
            Token::Close => {
                levels.pop();
                if levels.is_empty() {
                    break;
                }
            }
            Token::Colon => {}
            Token::Comma => {
                if let Some(level) = levels.last_mut() {
                    level.key = None;
                }
            }
            Token::Text(text) => match levels.last_mut() {
                Some(level) if level.object && level.key.is_none() => level.key = Some(text),
                _ => take(&mut about, &mut levels, Value::String(text)),
            },
            Token::Scalar(scalar) => {
                let value = serde_json::from_str(&scalar).unwrap_or(Value::Null);
                take(&mut about, &mut levels, value);
            }
        }
    }
    about
}

/// A scalar value: kept when it is one of the fields we look for.
fn take(about: &mut About, levels: &mut [Level], value: Value) {
    let depth = levels.len();
    let Some(level) = levels.last_mut() else {
        return;
    };
    let Some(key) = level.key.take() else {
        return;
    };
    match (depth, key.as_str(), value) {
        (1, "method", Value::String(method)) => about.method = Some(method),
        (1, "id", id @ (Value::Number(_) | Value::String(_))) => about.id = Some(id),
        (2, "uri", Value::String(uri)) if level.under.as_deref() == Some("params") => {
            about.uri = Some(uri);
        }
        _ => {}
    }
}

/// The next token at `*at`, or `None` at the end of the prefix (or inside
/// a token it cuts).
fn next_token(bytes: &[u8], at: &mut usize) -> Option<Token> {
    while bytes.get(*at)?.is_ascii_whitespace() {
        *at += 1;
    }
    let byte = *bytes.get(*at)?;
    *at += 1;
    Some(match byte {
        b'{' => Token::Open { object: true },
        b'[' => Token::Open { object: false },
        b'}' | b']' => Token::Close,
        b':' => Token::Colon,
        b',' => Token::Comma,
        b'"' => Token::Text(string(bytes, at)?),
        _ => {
            let start = *at - 1;
            while bytes
                .get(*at)
                .is_some_and(|b| !b",:]}".contains(b) && !b.is_ascii_whitespace())
            {
                *at += 1;
            }
            // A scalar the prefix ends in may be cut short: unknown.
            if *at == bytes.len() {
                return None;
            }
            Token::Scalar(String::from_utf8_lossy(&bytes[start..*at]).into_owned())
        }
    })
}

/// A JSON string's contents after its opening quote, unescaped; `None` if
/// the prefix ends inside it.
fn string(bytes: &[u8], at: &mut usize) -> Option<String> {
    let mut out = Vec::new();
    loop {
        let byte = *bytes.get(*at)?;
        *at += 1;
        match byte {
            b'"' => return Some(String::from_utf8_lossy(&out).into_owned()),
            b'\\' => {
                let escaped = *bytes.get(*at)?;
                *at += 1;
                let plain = match escaped {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'u' => {
                        let hex = std::str::from_utf8(bytes.get(*at..*at + 4)?).ok()?;
                        *at += 4;
                        let c = u32::from_str_radix(hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .unwrap_or(char::REPLACEMENT_CHARACTER);
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        continue;
                    }
                    other => other, // `"`, `\`, `/`
                };
                out.push(plain);
            }
            _ => out.push(byte),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cut(text: &str, len: usize) -> About {
        about(&text.as_bytes()[..len.min(text.len())])
    }

    #[test]
    fn a_publish_names_its_document_even_when_cut_inside_the_diagnostics() {
        // ruff's order: method, params { uri, diagnostics, version }.
        let text = r#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"file:///ws/huge.py","diagnostics":[{"range":{"start":{"line":0,"character":0}},"message":"Undefined name `x`","relatedInformation":[{"location":{"uri":"file:///ws/other.py"}}]},{"message":"cut he"#;
        assert_eq!(
            about(text.as_bytes()),
            About {
                method: Some("textDocument/publishDiagnostics".into()),
                id: None,
                uri: Some("file:///ws/huge.py".into()),
            }
        );
    }

    #[test]
    fn a_uri_deeper_than_params_is_not_the_document() {
        // Diagnostics first: the only uri in reach is a related location's.
        let text = r#"{"method":"textDocument/publishDiagnostics","params":{"diagnostics":[{"relatedInformation":[{"location":{"uri":"file:///ws/other.py"}}]}"#;
        let found = about(text.as_bytes());
        assert_eq!(found.uri, None);
        assert_eq!(
            found.method.as_deref(),
            Some("textDocument/publishDiagnostics")
        );
    }

    #[test]
    fn a_response_gives_its_id_in_either_order() {
        let text = r#"{"jsonrpc":"2.0","id":17,"result":{"kind":"full","items":[{"id":3,"#;
        assert_eq!(about(text.as_bytes()).id, Some(json!(17)));
        let text = r#"{"result":{"kind":"full","items":[]},"id":"a\"b","jsonrpc":"2.0"}"#;
        assert_eq!(about(text.as_bytes()).id, Some(json!("a\"b")));
    }

    #[test]
    fn every_cut_of_a_message_is_safe_and_never_wrong() {
        let text = r#"{ "jsonrpc" : "2.0", "method" : "textDocument/publishDiagnostics", "params" : { "uri" : "file:///ws/caf\u00e9 \/x.py", "version" : 12, "diagnostics" : [ ] } }"#;
        let whole = about(text.as_bytes());
        assert_eq!(whole.uri.as_deref(), Some("file:///ws/café /x.py"));
        for len in 0..text.len() {
            let part = cut(text, len);
            assert!(
                part.uri.is_none() || part.uri == whole.uri,
                "{len}: {part:?}"
            );
            assert!(
                part.method.is_none() || part.method == whole.method,
                "{len}"
            );
        }
        // Not JSON at all: nothing known.
        assert_eq!(
            about(b"\xff\xfe garbage ]]]}}} \"unterminated"),
            About::default()
        );
        assert_eq!(about(b""), About::default());
    }
}

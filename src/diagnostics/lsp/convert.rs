//! LSP diagnostics → our model, using the text the server saw to turn its
//! column units into char indices. Pulled reports and pushed publishes both
//! come through here, on the rope itself (`position::to_position`).

use std::path::Path;
use std::sync::Arc;

use lsp_types::{DiagnosticSeverity, NumberOrString};
use ropey::Rope;
use serde::Deserialize;

use crate::diagnostics::model::{Diagnostic, Interner, Range, Related, Severity};
use crate::diagnostics::position::{ColumnUnit, to_position};

/// A diagnostic as a server sends it, with only what is kept: decoding
/// skips the rest (`data` with ruff's fixes, `codeDescription`, `tags`)
/// without allocating it, where `lsp_types::Diagnostic` would hold it as a
/// `Value` tree.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireDiagnostic {
    range: lsp_types::Range,
    #[serde(default)]
    severity: Option<DiagnosticSeverity>,
    #[serde(default)]
    code: Option<NumberOrString>,
    #[serde(default)]
    source: Option<String>,
    message: String,
    #[serde(default)]
    related_information: Option<Vec<WireRelated>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireRelated {
    location: WireLocation,
    message: String,
}

#[derive(Debug, Deserialize)]
struct WireLocation {
    uri: String,
    range: lsp_types::Range,
}

/// `textDocument/publishDiagnostics`'s params.
#[derive(Debug, Deserialize)]
pub(crate) struct WirePublish {
    pub uri: String,
    #[serde(default)]
    pub version: Option<i32>,
    pub diagnostics: Vec<WireDiagnostic>,
}

/// A `textDocument/diagnostic` report: `full` with its items, or
/// `unchanged`.
#[derive(Debug, Deserialize)]
pub(crate) struct WireReport {
    pub kind: String,
    #[serde(default)]
    pub items: Vec<WireDiagnostic>,
}

pub(crate) fn convert(
    path: &Path,
    text: &Rope,
    encoding: ColumnUnit,
    server_name: &str,
    items: Vec<WireDiagnostic>,
) -> Vec<Diagnostic> {
    let path: Arc<Path> = Arc::from(path);
    let mut strings = Interner::default();
    let server = strings.intern(server_name);
    let mut list: Vec<Diagnostic> = items
        .into_iter()
        .map(|item| {
            let start = to_position(
                text,
                item.range.start.line as usize,
                item.range.start.character as usize,
                encoding,
            );
            let end = to_position(
                text,
                item.range.end.line as usize,
                item.range.end.character as usize,
                encoding,
            );
            Diagnostic {
                path: path.clone(),
                range: Range::new(start, end.max(start)),
                severity: match item.severity {
                    Some(DiagnosticSeverity::WARNING) => Severity::Warning,
                    Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
                    Some(DiagnosticSeverity::HINT) => Severity::Hint,
                    _ => Severity::Error,
                },
                message: Arc::from(item.message),
                source: item
                    .source
                    .map_or_else(|| server.clone(), |source| strings.intern(&source)),
                code: item.code.map(|code| match code {
                    NumberOrString::Number(n) => strings.intern(&n.to_string()),
                    NumberOrString::String(s) => strings.intern(&s),
                }),
                related: item
                    .related_information
                    .unwrap_or_default()
                    .into_iter()
                    .map(|info| Related {
                        path: crate::diagnostics::uri::uri_to_path(&info.location.uri)
                            .unwrap_or_else(|| info.location.uri.into()),
                        line: info.location.range.start.line as usize,
                        character: info.location.range.start.character as usize,
                        message: info.message,
                    })
                    .collect(),
            }
        })
        .collect();
    // `collect` may reuse the decoded items' larger buffer in place.
    list.shrink_to_fit();
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::model::Position;

    fn lsp_diag(line: u32, start: u32, end: u32) -> WireDiagnostic {
        serde_json::from_value(serde_json::json!({
            "range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
            "severity": 2,
            "code": 401,
            "message": "m",
            "data": {"fix": {"edits": [{"newText": "x"}]}},
        }))
        .unwrap()
    }

    #[test]
    fn utf16_columns_after_emoji_map_to_chars() {
        let text = Rope::from_str("s = \"😀😀\"; bad\n");
        // "s = \"😀😀\"; " is 4 + 1 + 4 + 1 + 2 = 12 UTF-16 units; `bad` at char 10.
        let out = convert(
            Path::new("/a.py"),
            &text,
            ColumnUnit::Utf16,
            "srv",
            vec![lsp_diag(0, 12, 15)],
        );
        assert_eq!(out[0].range.start, Position::new(0, 10));
        assert_eq!(out[0].range.end, Position::new(0, 13));
        assert_eq!(out[0].severity, Severity::Warning);
        assert_eq!(out[0].code.as_deref(), Some("401"));
        assert_eq!(&*out[0].source, "srv");
    }

    #[test]
    fn utf8_columns_after_cjk_map_to_chars() {
        let text = Rope::from_str("名前 = x\n");
        let col = "名前 = ".len() as u32;
        let out = convert(
            Path::new("/a.py"),
            &text,
            ColumnUnit::Utf8,
            "srv",
            vec![lsp_diag(0, col, col + 1)],
        );
        assert_eq!(out[0].range.start, Position::new(0, 5));
    }
}

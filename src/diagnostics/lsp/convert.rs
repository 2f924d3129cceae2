//! LSP diagnostics → our model, using the text the server saw to turn its
//! column units into char indices. Pulled reports and pushed publishes both
//! come through here, on the rope itself (`position::to_position`).

use std::path::Path;

use lsp_types::{DiagnosticSeverity, NumberOrString};
use ropey::Rope;

use crate::diagnostics::model::{Diagnostic, Range, Related, Severity};
use crate::diagnostics::position::{ColumnUnit, to_position};

pub(crate) fn convert(
    path: &Path,
    text: &Rope,
    encoding: ColumnUnit,
    server_name: &str,
    items: Vec<lsp_types::Diagnostic>,
) -> Vec<Diagnostic> {
    items
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
                path: path.to_path_buf(),
                range: Range::new(start, end.max(start)),
                severity: match item.severity {
                    Some(DiagnosticSeverity::WARNING) => Severity::Warning,
                    Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
                    Some(DiagnosticSeverity::HINT) => Severity::Hint,
                    _ => Severity::Error,
                },
                message: item.message,
                source: item.source.unwrap_or_else(|| server_name.to_string()),
                code: item.code.map(|code| match code {
                    NumberOrString::Number(n) => n.to_string(),
                    NumberOrString::String(s) => s,
                }),
                related: item
                    .related_information
                    .unwrap_or_default()
                    .into_iter()
                    .map(|info| Related {
                        path: crate::diagnostics::uri::uri_to_path(info.location.uri.as_str())
                            .unwrap_or_else(|| info.location.uri.to_string().into()),
                        line: info.location.range.start.line as usize,
                        character: info.location.range.start.character as usize,
                        message: info.message,
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::model::Position;

    fn lsp_diag(line: u32, start: u32, end: u32) -> lsp_types::Diagnostic {
        lsp_types::Diagnostic {
            range: lsp_types::Range::new(
                lsp_types::Position::new(line, start),
                lsp_types::Position::new(line, end),
            ),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::Number(401)),
            message: "m".into(),
            ..Default::default()
        }
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
        assert_eq!(out[0].source, "srv");
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

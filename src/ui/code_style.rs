//! Code in the conversation (message code blocks, cells) is highlighted by
//! the same syntect setup as the file view.

use ratatui::style::Style;

use super::markdown::CodeStyler;
use crate::editor::Highlighter;

impl CodeStyler for Highlighter {
    fn style_code(&self, language: &str, code: &str) -> Vec<Vec<(Style, String)>> {
        let language = match language {
            "" => "txt",
            "py" | "python3" => "python",
            other => other,
        };
        self.highlight_snippet(language, code)
            .into_iter()
            .map(|(line, ranges)| {
                if ranges.is_empty() {
                    return vec![(Style::default(), line.to_owned())];
                }
                ranges
                    .into_iter()
                    .filter_map(|(style, range)| line.get(range).map(|t| (style, t.to_owned())))
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_keywords_get_a_colour_and_text_is_kept() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let lines = hl.style_code("python", "def f(x):\n    return x");
        assert_eq!(lines.len(), 2);
        let text: String = lines[0].iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(text, "def f(x):");
        let def = lines[0].iter().find(|(_, t)| t.contains("def")).unwrap();
        assert!(def.0.fg.is_some(), "keywords are coloured");
        let plain = hl.style_code("no-such-language", "a b");
        assert_eq!(
            plain[0].iter().map(|(_, t)| t.as_str()).collect::<String>(),
            "a b"
        );
    }
}

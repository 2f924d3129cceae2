//! Fitting text to display width: word wrapping where wide characters
//! (CJK, emoji) take two cells, tabs expand and a word longer than the line
//! is broken; and cutting styled text to a width with an ellipsis.

use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

const TAB_WIDTH: usize = 4;

/// Wraps `text` to `width` columns. Every input line yields at least one
/// output line, so blank lines survive.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for line in text.split('\n') {
        wrap_line(line, width, &mut out);
    }
    out
}

fn wrap_line(line: &str, width: usize, out: &mut Vec<String>) {
    let mut row = Row::default();
    for c in line.chars() {
        if c == '\t' {
            // A tab is as many single spaces as reach the next tab stop.
            for _ in 0..TAB_WIDTH - row.width % TAB_WIDTH {
                row.push(' ', 1, width, out);
            }
        } else {
            row.push(c, c.width().unwrap_or(0), width, out);
        }
    }
    out.push(row.text);
}

/// The row being filled, and where its last space is so a break can happen
/// between words instead of inside one.
#[derive(Default)]
struct Row {
    text: String,
    width: usize,
    last_space: Option<(usize, usize)>,
}

impl Row {
    fn push(&mut self, c: char, w: usize, max: usize, out: &mut Vec<String>) {
        if self.width + w > max && !self.text.is_empty() {
            match self.last_space.take() {
                Some((byte, cols)) if cols > 0 => {
                    let rest = self.text.split_off(byte + 1);
                    out.push(self.text.trim_end().to_owned());
                    self.text = rest;
                    self.width -= cols + 1;
                }
                _ => {
                    out.push(std::mem::take(&mut self.text));
                    self.width = 0;
                }
            }
        }
        if c == ' ' {
            self.last_space = Some((self.text.len(), self.width));
        }
        self.text.push(c);
        self.width += w;
    }
}

/// Cuts styled text to `width` cells, ending with `…` when something was
/// cut, so a long text never looks complete when it is not.
pub fn fit(spans: &[Span<'static>], width: usize) -> Vec<Span<'static>> {
    let total: usize = spans.iter().map(|s| s.width()).sum();
    if total <= width {
        return spans.to_vec();
    }
    if width == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut used = 0;
    let budget = width.saturating_sub(1);
    for span in spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > budget {
                break;
            }
            used += w;
            text.push(c);
        }
        out.push(Span::styled(text, span.style));
        if used >= budget {
            break;
        }
    }
    out.push(Span::raw("…"));
    out
}

/// [`fit`] for plain text.
pub(crate) fn fit_text(text: &str, width: usize) -> String {
    fit(&[Span::raw(text.to_owned())], width)
        .iter()
        .map(|s| s.content.as_ref())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_width::UnicodeWidthStr;

    #[test]
    fn fit_text_marks_a_cut_and_never_overflows() {
        assert_eq!(fit_text("short", 10), "short");
        assert_eq!(fit_text("a long preview", 6), "a lon…");
        assert_eq!(fit_text("你好世界", 5), "你好…");
        assert_eq!(fit_text("anything", 0), "");
        assert_eq!(fit_text("ab", 1), "…");
    }

    #[test]
    fn breaks_at_spaces() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
    }

    #[test]
    fn long_words_are_broken_and_blank_lines_kept() {
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\n\nb", 10), ["a", "", "b"]);
    }

    #[test]
    fn wide_characters_count_two_cells() {
        let lines = wrap("你好世界你好", 5);
        assert_eq!(lines, ["你好", "世界", "你好"]);
        for line in &lines {
            assert!(line.width() <= 5);
        }
        assert!(wrap("🦀🦀🦀", 4).iter().all(|l| l.width() <= 4));
    }

    #[test]
    fn never_exceeds_width() {
        let text = "fn main() {\n\tprintln!(\"héllo wörld 你好 🦀 with a fairly long line\");\n}";
        for width in 1..40 {
            for line in wrap(text, width) {
                assert!(line.width() <= width.max(2), "{line:?} at {width}");
            }
        }
    }
}

//! Conversion between the column units tools speak (UTF-16 code units for LSP
//! by default, UTF-8 bytes when negotiated or for gcc, chars for rustc/ruff)
//! and our model's 0-based char index. Needs the exact text the tool saw.

use super::model::Position;

/// The unit a tool counts columns in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum ColumnUnit {
    /// UTF-8 bytes (LSP `utf-8`, gcc with `-fdiagnostics-column-unit=byte`).
    #[serde(rename = "utf-8")]
    Utf8,
    /// UTF-16 code units (LSP default, TypeScript).
    #[serde(rename = "utf-16")]
    Utf16,
    /// Unicode scalar values (LSP `utf-32`, rustc, ruff).
    #[serde(rename = "chars")]
    Chars,
}

impl ColumnUnit {
    /// The LSP name of this encoding.
    pub fn lsp_name(self) -> &'static str {
        match self {
            ColumnUnit::Utf8 => "utf-8",
            ColumnUnit::Utf16 => "utf-16",
            ColumnUnit::Chars => "utf-32",
        }
    }

    /// Parses an LSP `PositionEncodingKind`; unknown kinds fall back to the
    /// protocol's default, UTF-16.
    pub fn from_lsp_name(name: &str) -> ColumnUnit {
        match name {
            "utf-8" => ColumnUnit::Utf8,
            "utf-32" => ColumnUnit::Chars,
            _ => ColumnUnit::Utf16,
        }
    }
}

/// Line starts of one text, so many positions can be converted without
/// rescanning. Lines end at `\n`; a `\r` before it is not part of the line.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// The text of `line` without its line ending, or `None` past the end.
    pub fn line(&self, line: usize) -> Option<&'a str> {
        let start = *self.starts.get(line)?;
        let end = self
            .starts
            .get(line + 1)
            .map_or(self.text.len(), |next| next - 1);
        let raw = &self.text[start..end];
        Some(raw.strip_suffix('\r').unwrap_or(raw))
    }

    /// Converts `(line, column in unit)` to our position. Past-the-end lines
    /// clamp to the end of the text; past-the-end columns to the end of the line.
    pub fn to_position(&self, line: usize, column: usize, unit: ColumnUnit) -> Position {
        let last = self.line_count() - 1;
        if line > last {
            let chars = self.line(last).map_or(0, |l| l.chars().count());
            return Position::new(last, chars);
        }
        let text = self.line(line).unwrap_or("");
        Position::new(line, char_index(text, column, unit))
    }
}

/// The char index of `column` (counted in `unit`) within `line`. A column that
/// falls inside a character (half a surrogate pair, the middle of a UTF-8
/// sequence) maps to that character; past the end clamps to the line length.
pub fn char_index(line: &str, column: usize, unit: ColumnUnit) -> usize {
    if unit == ColumnUnit::Chars {
        return column.min(line.chars().count());
    }
    let mut units = 0;
    for (index, ch) in line.chars().enumerate() {
        let width = match unit {
            ColumnUnit::Utf8 => ch.len_utf8(),
            ColumnUnit::Utf16 => ch.len_utf16(),
            ColumnUnit::Chars => 1,
        };
        if units + width > column {
            return index;
        }
        units += width;
    }
    line.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_identity_in_every_unit() {
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Chars] {
            assert_eq!(char_index("hello", 3, unit), 3);
        }
    }

    #[test]
    fn utf16_surrogate_pairs_count_as_one_char() {
        // "😀" is 2 UTF-16 units, 4 UTF-8 bytes, 1 char.
        let line = "a😀b = x";
        assert_eq!(char_index(line, 3, ColumnUnit::Utf16), 2); // 'b'
        assert_eq!(char_index(line, 5, ColumnUnit::Utf8), 2);
        // Half a surrogate pair points at the emoji itself.
        assert_eq!(char_index(line, 2, ColumnUnit::Utf16), 1);
    }

    #[test]
    fn cjk_is_one_utf16_unit_but_three_utf8_bytes() {
        let line = "名前 = undefined_name";
        let col_utf16 = 5; // "名前 = " is 5 UTF-16 units
        let col_utf8 = "名前 = ".len();
        assert_eq!(char_index(line, col_utf16, ColumnUnit::Utf16), 5);
        assert_eq!(char_index(line, col_utf8, ColumnUnit::Utf8), 5);
        assert_eq!(line.chars().nth(5), Some('u'));
    }

    #[test]
    fn past_the_end_columns_and_lines_are_clamped() {
        let text = "ab\ncd😀\n";
        let index = LineIndex::new(text);
        assert_eq!(
            index.to_position(1, 99, ColumnUnit::Utf16),
            Position::new(1, 3)
        );
        // Line 2 is the empty line after the final newline; line 7 clamps to it.
        assert_eq!(
            index.to_position(7, 4, ColumnUnit::Utf16),
            Position::new(2, 0)
        );
        assert_eq!(char_index("", 5, ColumnUnit::Chars), 0);
    }

    #[test]
    fn crlf_line_endings_are_not_part_of_the_line() {
        let index = LineIndex::new("x = 1\r\n名 = 2\r\n");
        assert_eq!(index.line(1), Some("名 = 2"));
        assert_eq!(
            index.to_position(1, 100, ColumnUnit::Utf8),
            Position::new(1, 5)
        );
    }
}

//! Conversion between the column units tools speak (UTF-16 code units for LSP
//! by default, UTF-8 bytes when negotiated or for gcc, chars for rustc/ruff)
//! and our model's 0-based char index. Needs the exact text the tool saw.

use ropey::{Rope, RopeSlice};

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
    pub(crate) fn lsp_name(self) -> &'static str {
        match self {
            ColumnUnit::Utf8 => "utf-8",
            ColumnUnit::Utf16 => "utf-16",
            ColumnUnit::Chars => "utf-32",
        }
    }

    /// Parses an LSP `PositionEncodingKind`; unknown kinds fall back to the
    /// protocol's default, UTF-16.
    pub(crate) fn from_lsp_name(name: &str) -> ColumnUnit {
        match name {
            "utf-8" => ColumnUnit::Utf8,
            "utf-32" => ColumnUnit::Chars,
            _ => ColumnUnit::Utf16,
        }
    }
}

/// A file as a tool reads it from the disk, to convert what the tool says
/// about it; `None` when it cannot be read as UTF-8.
pub(crate) fn read_text(path: &std::path::Path) -> Option<Rope> {
    let file = std::fs::File::open(path).ok()?;
    Rope::from_reader(std::io::BufReader::new(file)).ok()
}

/// Converts `(line, column in unit)` to our position in `text`, the text
/// the tool saw. Lines end at `\n` (the rope counts no other break); a `\r`
/// before it is not part of the line. Past-the-end lines clamp to the end of
/// the text; past-the-end columns to the end of the line. Works on the rope
/// in place: the cost is finding the line plus the columns walked, never a
/// copy of the text (a publish about a 37 MB file converts in microseconds).
pub fn to_position(text: &Rope, line: usize, column: usize, unit: ColumnUnit) -> Position {
    let last = text.len_lines() - 1;
    if line > last {
        return Position::new(last, line_of(text, last).len_chars());
    }
    Position::new(line, char_index(line_of(text, line), column, unit))
}

/// `line` of `text` without its line ending.
fn line_of(text: &Rope, line: usize) -> RopeSlice<'_> {
    let slice = text.line(line);
    let mut len = slice.len_chars();
    for ending in ['\n', '\r'] {
        if len > 0 && slice.char(len - 1) == ending {
            len -= 1;
        }
    }
    slice.slice(..len)
}

/// The char index of `column` (counted in `unit`) within `line`. A column that
/// falls inside a character (half a surrogate pair, the middle of a UTF-8
/// sequence) maps to that character; past the end clamps to the line length.
pub(crate) fn char_index(line: RopeSlice<'_>, column: usize, unit: ColumnUnit) -> usize {
    if unit == ColumnUnit::Chars {
        return column.min(line.len_chars());
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
    line.len_chars()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_identity_in_every_unit() {
        for unit in [ColumnUnit::Utf8, ColumnUnit::Utf16, ColumnUnit::Chars] {
            assert_eq!(char_index("hello".into(), 3, unit), 3);
        }
    }

    #[test]
    fn utf16_surrogate_pairs_count_as_one_char() {
        // "😀" is 2 UTF-16 units, 4 UTF-8 bytes, 1 char.
        let line = RopeSlice::from("a😀b = x");
        assert_eq!(char_index(line, 3, ColumnUnit::Utf16), 2); // 'b'
        assert_eq!(char_index(line, 5, ColumnUnit::Utf8), 2);
        // Half a surrogate pair points at the emoji itself.
        assert_eq!(char_index(line, 2, ColumnUnit::Utf16), 1);
    }

    #[test]
    fn cjk_is_one_utf16_unit_but_three_utf8_bytes() {
        let line = RopeSlice::from("名前 = undefined_name");
        let col_utf16 = 5; // "名前 = " is 5 UTF-16 units
        let col_utf8 = "名前 = ".len();
        assert_eq!(char_index(line, col_utf16, ColumnUnit::Utf16), 5);
        assert_eq!(char_index(line, col_utf8, ColumnUnit::Utf8), 5);
        assert_eq!(line.chars().nth(5), Some('u'));
    }

    #[test]
    fn past_the_end_columns_and_lines_are_clamped() {
        let text = Rope::from_str("ab\ncd😀\n");
        assert_eq!(
            to_position(&text, 1, 99, ColumnUnit::Utf16),
            Position::new(1, 3)
        );
        // Line 2 is the empty line after the final newline; line 7 clamps to it.
        assert_eq!(
            to_position(&text, 7, 4, ColumnUnit::Utf16),
            Position::new(2, 0)
        );
        assert_eq!(char_index("".into(), 5, ColumnUnit::Chars), 0);
    }

    /// A line far longer than a rope chunk (~1 KiB): the columns are
    /// counted across the chunks, as on one string.
    #[test]
    fn a_line_spanning_many_rope_chunks_converts_like_one_string() {
        let line = format!("{}BAD", "名😀a".repeat(3000));
        let text = Rope::from_str(&format!("first\n{line}\nlast"));
        assert!(text.chunks().count() > 10);
        let before = "名😀a".repeat(3000);
        let chars = before.chars().count();
        let utf16 = before.encode_utf16().count();
        for (unit, column) in [
            (ColumnUnit::Utf16, utf16),
            (ColumnUnit::Utf8, before.len()),
            (ColumnUnit::Chars, chars),
        ] {
            assert_eq!(to_position(&text, 1, column, unit), Position::new(1, chars));
            assert_eq!(
                to_position(&text, 1, column + 99, unit),
                Position::new(1, chars + 3),
                "clamped to the line's end"
            );
        }
    }

    #[test]
    fn crlf_line_endings_are_not_part_of_the_line() {
        let text = Rope::from_str("x = 1\r\n名 = 2\r\n");
        assert_eq!(line_of(&text, 1), "名 = 2");
        assert_eq!(
            to_position(&text, 1, 100, ColumnUnit::Utf8),
            Position::new(1, 5)
        );
    }
}

//! Text shape of a file: the original line ending and byte-order mark, and
//! writing the buffer back in that form so a save reproduces the original.
//! The buffer itself always holds '\n' line breaks. A final line break is
//! text like any other, as in VS Code: the empty line after it is a line
//! the cursor reaches (Ctrl+End, a paste at the end of the file), and
//! deleting it is how a file loses its final newline.

use std::borrow::Cow;

use ropey::Rope;

/// The line ending a file was read with; saves write it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LineEnding {
    Lf,
    CrLf,
}

impl LineEnding {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }
}

/// How a text was stored, to write it back unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub line_ending: LineEnding,
    /// The file starts with a byte-order mark (U+FEFF): kept out of the
    /// text — it is not a character anyone edits — and written back.
    pub bom: bool,
}

impl Default for Shape {
    /// A new file: '\n', no byte-order mark.
    fn default() -> Self {
        Self {
            line_ending: LineEnding::Lf,
            bom: false,
        }
    }
}

impl Shape {
    /// The shape of `text` and its body: '\n' line breaks (the final one
    /// kept). The line ending is the one of the first line break (mixed
    /// files are normalised to it on save). Borrowed unless there was a
    /// '\r' to drop.
    pub fn of(text: &str) -> (Self, Cow<'_, str>) {
        let bom = text.starts_with('\u{feff}');
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let line_ending = match text.find('\n') {
            Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => LineEnding::CrLf,
            _ => LineEnding::Lf,
        };
        let body = text;
        // memchr finds "no '\r' at all" (the usual case) at memory speed.
        let body = if memchr::memchr(b'\r', body.as_bytes()).is_some() && body.contains("\r\n") {
            Cow::Owned(body.replace("\r\n", "\n"))
        } else {
            Cow::Borrowed(body)
        };
        (Self { line_ending, bom }, body)
    }

    /// The bytes of `rope` as a file of this shape.
    pub fn write(self, rope: &Rope) -> String {
        let sep = self.line_ending.as_str();
        let mut out = String::with_capacity(rope.len_bytes() + rope.len_lines() + 3);
        if self.bom {
            out.push('\u{feff}');
        }
        for chunk in rope.chunks() {
            match self.line_ending {
                LineEnding::Lf => out.push_str(chunk),
                LineEnding::CrLf => {
                    for (i, part) in chunk.split('\n').enumerate() {
                        if i > 0 {
                            out.push_str(sep);
                        }
                        out.push_str(part);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_shape() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n",
            "a\r\n\r\nb",
            "x\n\n",
            "\u{feff}a\r\nb\r\n",
            "\u{feff}",
        ] {
            let (shape, body) = Shape::of(text);
            assert_eq!(shape.write(&Rope::from_str(&body)), text, "{text:?}");
        }
    }

    #[test]
    fn detects_crlf_and_keeps_the_final_newline_as_text() {
        let (s, body) = Shape::of("a\r\nb");
        assert_eq!(s.line_ending, LineEnding::CrLf);
        assert_eq!(body, "a\nb");
        let (s, body) = Shape::of("a\r\nb\r\n");
        assert_eq!(s.line_ending, LineEnding::CrLf);
        assert_eq!(body, "a\nb\n", "the last line break is text");
        let (_, body) = Shape::of("");
        assert_eq!(body, "");
    }
}

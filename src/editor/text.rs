//! Text shape of a file: splitting into lines, the original line ending and
//! final newline, and joining back so a save reproduces the original form.

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

/// Lines of a text plus the form needed to write it back unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitText {
    pub lines: Vec<String>,
    pub line_ending: LineEnding,
    pub final_newline: bool,
}

/// Split text into lines. The line ending is the one of the first line
/// break (mixed files are normalised to it on save); a trailing line break
/// does not produce an extra empty line but sets `final_newline`.
pub fn split_lines(text: &str) -> SplitText {
    let line_ending = match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => LineEnding::CrLf,
        _ => LineEnding::Lf,
    };
    let final_newline = text.ends_with('\n');
    let body = if final_newline {
        &text[..text.len() - 1]
    } else {
        text
    };
    let lines = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    SplitText {
        lines,
        line_ending,
        final_newline,
    }
}

/// Join lines with `ending`, adding a final line break when `final_newline`.
pub fn join_lines(lines: &[String], ending: LineEnding, final_newline: bool) -> String {
    let sep = ending.as_str();
    let total: usize = lines.iter().map(|l| l.len() + sep.len()).sum();
    let mut out = String::with_capacity(total);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(line);
    }
    if final_newline {
        out.push_str(sep);
    }
    out
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
        ] {
            let s = split_lines(text);
            assert_eq!(
                join_lines(&s.lines, s.line_ending, s.final_newline),
                text,
                "{text:?}"
            );
        }
    }

    #[test]
    fn detects_crlf_and_final_newline() {
        let s = split_lines("a\r\nb");
        assert_eq!(s.line_ending, LineEnding::CrLf);
        assert!(!s.final_newline);
        assert_eq!(s.lines, ["a", "b"]);
        let s = split_lines("");
        assert_eq!(s.lines, [""]);
        assert!(!s.final_newline);
    }
}

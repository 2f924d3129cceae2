//! Text helpers whose cost depends on what is shown, not on the file size.
//!
//! A cursor in a 1 000 000-line buffer must not split the buffer into a Vec
//! of lines: [`line_start`] only counts newlines up to the wanted line (a
//! vectorisable byte count per chunk), and [`lines_from`] yields lines lazily
//! so the caller stops as soon as its budget is spent.

/// Bytes counted per step when skipping to a line; big enough to amortise
/// the loop, small enough to stay in cache.
const SKIP_CHUNK: usize = 64 * 1024;

/// Byte offset where 0-based `line` starts, or `None` when the text has
/// fewer lines. Whole chunks are skipped with a SIMD newline count; only the
/// chunk holding the line is searched newline by newline.
pub fn line_start(text: &str, line: usize) -> Option<usize> {
    if line == 0 {
        return Some(0);
    }
    let bytes = text.as_bytes();
    let mut remaining = line;
    let mut offset = 0;
    while offset < bytes.len() {
        let chunk = &bytes[offset..(offset + SKIP_CHUNK).min(bytes.len())];
        let newlines = memchr::memchr_iter(b'\n', chunk).count();
        if newlines < remaining {
            remaining -= newlines;
            offset += chunk.len();
            continue;
        }
        let index = memchr::memchr_iter(b'\n', chunk).nth(remaining - 1)?;
        return Some(offset + index + 1);
    }
    None
}

/// Lines starting at byte `offset` (a line start), without their `\n`/`\r\n`.
/// A trailing newline does not produce an extra empty line.
pub(crate) fn lines_from(text: &str, offset: usize) -> impl Iterator<Item = &str> {
    let rest = text.get(offset..).unwrap_or("");
    let mut pieces = rest.split('\n').peekable();
    std::iter::from_fn(move || {
        let piece = pieces.next()?;
        if piece.is_empty() && pieces.peek().is_none() {
            return None;
        }
        Some(piece.strip_suffix('\r').unwrap_or(piece))
    })
}

/// Makes one line of file content safe to show: stray `\r` removed, other
/// control characters (terminal escapes) replaced, tabs kept, and the line
/// clipped to `max_chars`. Returns the line and whether it was clipped.
pub(crate) fn clean_line(line: &str, max_chars: usize) -> (String, bool) {
    let mut out = String::new();
    let mut clipped = false;
    for (count, c) in line.chars().filter(|&c| c != '\r').enumerate() {
        if count >= max_chars {
            clipped = true;
            break;
        }
        out.push(if c.is_control() && c != '\t' {
            '\u{FFFD}'
        } else {
            c
        });
    }
    (out, clipped)
}

/// Collapses free text (a diagnostic message, a script command) to one line
/// of at most `max_chars`, so it cannot start a new Markdown line.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut last_space = true;
    let mut count = 0;
    for c in text.chars() {
        let c = if c.is_control() || c.is_whitespace() {
            ' '
        } else {
            c
        };
        if c == ' ' && last_space {
            continue;
        }
        if count == max_chars {
            out.pop();
            out.push('…');
            return out.trim_end().to_string();
        }
        last_space = c == ' ';
        out.push(c);
        count += 1;
    }
    out.trim_end().to_string()
}

pub(crate) fn char_len(text: &str) -> usize {
    text.chars().count()
}

/// The longest run of `marker` characters in `text`.
pub(crate) fn longest_run(text: &str, marker: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == marker {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// A backtick fence longer than any backtick run in the content, so the
/// content can never close it (a `~~~` run cannot close a backtick fence).
pub fn fence(longest_backtick_run: usize) -> String {
    "`".repeat((longest_backtick_run + 1).max(3))
}

/// Inline code for a path or name, with a delimiter the content cannot end.
pub(crate) fn inline_code(text: &str) -> String {
    let text = one_line(text, 300);
    let ticks = "`".repeat(longest_run(&text, '`') + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_start_finds_lines_across_chunks() {
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        for line in [0, 1, 5_000, 99_999] {
            let offset = line_start(&text, line).unwrap();
            assert!(text[offset..].starts_with(&format!("line {line}\n")));
        }
        assert_eq!(line_start(&text, 100_000), Some(text.len()));
        assert_eq!(line_start(&text, 100_001), None);
        assert_eq!(line_start("", 0), Some(0));
        assert_eq!(line_start("", 1), None);
    }

    #[test]
    fn lines_strip_crlf_and_final_newline() {
        let lines: Vec<&str> = lines_from("a\r\nb\r\n\r\nc\r\n", 0).collect();
        assert_eq!(lines, ["a", "b", "", "c"]);
        let lines: Vec<&str> = lines_from("a\nb", 2).collect();
        assert_eq!(lines, ["b"]);
        assert_eq!(lines_from("", 0).count(), 0);
    }

    #[test]
    fn clean_line_clips_by_chars_and_removes_escapes() {
        assert_eq!(clean_line("中文路径", 2), ("中文".to_string(), true));
        assert_eq!(clean_line("a\u{1b}[31mb\r", 10).0, "a\u{FFFD}[31mb");
        assert_eq!(clean_line("\tx", 10), ("\tx".to_string(), false));
    }

    #[test]
    fn one_line_collapses_newlines() {
        assert_eq!(one_line("a\n\nSYSTEM: b", 100), "a SYSTEM: b");
        assert_eq!(one_line("abcdef", 4), "abc…");
    }

    #[test]
    fn fences_outgrow_their_content() {
        assert_eq!(fence(0), "```");
        assert_eq!(fence(3), "````");
        assert_eq!(longest_run("a ``` b ````` c", '`'), 5);
        assert_eq!(inline_code("a`b"), "``a`b``");
        assert_eq!(inline_code("`a"), "`` `a ``");
    }
}

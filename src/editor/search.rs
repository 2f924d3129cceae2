//! Find a query in the document's lines. Smart case: a query without
//! capitals matches any case. Positions are (line, char) like the cursor.

use ropey::Rope;

use super::document::line_text;

/// A half-open range of text in (line, char) positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextRange {
    pub start: (usize, usize),
    pub end: (usize, usize),
}

/// Matches of `query` in one line as (start, end) char columns.
pub fn find_in_line(line: &str, query: &str) -> Vec<(usize, usize)> {
    if query.is_empty() || query.contains('\n') {
        return Vec::new();
    }
    let ignore_case = !query.chars().any(char::is_uppercase);
    let qlen = query.chars().count();
    if query.is_ascii() {
        // ASCII lowercasing keeps byte offsets, so match_indices stays exact.
        let (hay, needle) = if ignore_case {
            (line.to_ascii_lowercase(), query.to_ascii_lowercase())
        } else {
            (line.to_string(), query.to_string())
        };
        let mut out = Vec::new();
        let mut last_byte = 0;
        let mut last_char = 0;
        for (byte, _) in hay.match_indices(&needle) {
            let start = last_char + line[last_byte..byte].chars().count();
            out.push((start, start + qlen));
            last_byte = byte;
            last_char = start;
        }
        return out;
    }
    let fold = |c: char| -> char {
        if ignore_case {
            c.to_lowercase().next().unwrap_or(c)
        } else {
            c
        }
    };
    let hay: Vec<char> = line.chars().map(fold).collect();
    let needle: Vec<char> = query.chars().map(fold).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        if hay[i..i + needle.len()] == needle[..] {
            out.push((i, i + qlen));
            i += needle.len();
        } else {
            i += 1;
        }
    }
    out
}

/// Every match of `query` in the text, in document order.
pub fn find_all(rope: &Rope, query: &str) -> Vec<TextRange> {
    (0..rope.len_lines())
        .flat_map(|n| {
            let line: std::borrow::Cow<'_, str> = line_text(rope, n).into();
            find_in_line(&line, query)
                .into_iter()
                .map(move |(s, e)| TextRange {
                    start: (n, s),
                    end: (n, e),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_case_and_char_columns() {
        assert_eq!(
            find_in_line("Foo foo FOO", "foo"),
            [(0, 3), (4, 7), (8, 11)]
        );
        assert_eq!(find_in_line("Foo foo FOO", "Foo"), [(0, 3)]);
        assert_eq!(find_in_line("日本 foo", "foo"), [(3, 6)]);
        assert_eq!(find_in_line("日本日本", "本"), [(1, 2), (3, 4)]);
        assert_eq!(find_in_line("aaaa", "aa"), [(0, 2), (2, 4)]);
        assert!(find_in_line("abc", "").is_empty());
    }
}

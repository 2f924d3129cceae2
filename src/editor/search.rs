//! Find a query in the text: the one matcher (`Query`) for the find bar's
//! next/previous match, its "3 of 10" count and the view's highlights.
//!
//! Smart case: a query without capitals matches any case. A query is a
//! literal, compiled once into a `regex` (escaped, `(?i)` for smart case),
//! so a search runs at memchr/SIMD speed without a lowercased copy of the
//! text. The rope is read in windows of whole lines (about `WINDOW` bytes,
//! one reused buffer): a match never crosses a line break, because a query
//! holding '\n' matches nothing, so cutting at line starts loses nothing and
//! matches within a line tile from its start exactly as one line's search
//! would. A find reads from the cursor outward and stops at the first
//! match, so its cost is the distance to that match, not the text's size.
//!
//! Case folding is Unicode simple case folding (the `regex` crate's): `é`
//! finds `É`, and, unlike the per-line lowercasing this replaced, `k` also
//! finds the Kelvin sign `K` and `σ` also finds the final `ς`. The
//! lowercasing compared only `to_lowercase`'s first char, which missed
//! those pairs; folding them is what a reader of the text expects.

use std::sync::atomic::{AtomicBool, Ordering};

use regex::Regex;
use ropey::Rope;

/// A half-open range of text in (line, char) positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextRange {
    pub start: (usize, usize),
    pub end: (usize, usize),
}

/// Bytes of whole lines read and searched at once. Big enough that the
/// per-window cost (a few rope lookups) vanishes next to the scan, small
/// enough to stay in cache and to make a near match cheap.
pub(crate) const WINDOW: usize = 64 * 1024;

/// A find query, compiled once.
#[derive(Debug, Clone)]
pub struct Query {
    text: String,
    /// None when the query can match nothing (empty, or holding a line
    /// break, which no match can cross), or is over `MAX_QUERY_CHARS`.
    regex: Option<Regex>,
}

/// The longest query searched. Longer ones (a paste gone wrong) would take
/// the UI loop seconds to compile case-insensitively (0.9 s at 50 000
/// characters) and past ~300 000 pass the regex size limit; the find bar
/// says so instead.
pub const MAX_QUERY_CHARS: usize = 1000;

impl Query {
    pub fn new(text: &str) -> Self {
        let regex = if text.is_empty() || text.contains('\n') || Self::too_long(text) {
            None
        } else {
            let smart_case = if text.chars().any(char::is_uppercase) {
                ""
            } else {
                "(?i)"
            };
            // An escaped literal always compiles, unless it is so long that
            // it passes the regex size limit: such a query matches nothing.
            Regex::new(&format!("{smart_case}{}", regex::escape(text))).ok()
        };
        Self {
            text: text.to_string(),
            regex,
        }
    }

    /// Over `MAX_QUERY_CHARS`: not searched.
    pub(crate) fn too_long(text: &str) -> bool {
        text.chars().nth(MAX_QUERY_CHARS).is_some()
    }

    /// The query as typed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Matches in one line as (start, end) char columns (the view's
    /// highlights).
    pub(crate) fn in_line(&self, line: &str) -> Vec<(usize, usize)> {
        let Some(regex) = &self.regex else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let (mut byte, mut col) = (0, 0);
        for m in regex.find_iter(line) {
            col += line[byte..m.start()].chars().count();
            let end = col + m.as_str().chars().count();
            out.push((col, end));
            (byte, col) = (m.end(), end);
        }
        out
    }
}

impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Query {}

/// The selected match's place among all matches: `index` 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchCount {
    pub index: usize,
    pub total: usize,
}

/// What a find found, as byte offsets in the rope, and how much of the
/// text it read to find it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) range: Option<(usize, usize)>,
    pub(crate) scanned: usize,
}

/// The next match for FindNext: the first starting at or after `cursor`
/// other than the one at `sel_start` (the selection's start, or the
/// cursor: the match already selected, or under the cursor, is passed),
/// else the first in the text (wrap). Byte offsets.
pub(crate) fn next(rope: &Rope, query: &Query, cursor: usize, sel_start: usize) -> Found {
    next_in(rope, query, cursor, sel_start, WINDOW)
}

/// The previous match for FindPrev: the last starting before `sel_start`,
/// else the last in the text (wrap). Byte offsets.
pub(crate) fn prev(rope: &Rope, query: &Query, sel_start: usize) -> Found {
    prev_in(rope, query, sel_start, WINDOW)
}

/// All matches and how many start before byte `at` (the selected match's
/// index). None when `cancel` was set (checked between windows).
pub(crate) fn count(
    rope: &Rope,
    query: &Query,
    at: usize,
    cancel: &AtomicBool,
) -> Option<MatchCount> {
    count_in(rope, query, at, cancel, WINDOW)
}

fn next_in(rope: &Rope, query: &Query, cursor: usize, sel_start: usize, window: usize) -> Found {
    let Some(mut scan) = Scan::new(rope, query, window) else {
        return Found::default();
    };
    // From the cursor line's start, so matches in it tile as in a search
    // of that line; the rest of the text only when nothing follows.
    let line_start = line_start_at_or_before(rope, cursor);
    let range = scan
        .first(line_start, rope.len_bytes(), |s| {
            s >= cursor && s != sel_start
        })
        .or_else(|| {
            // Nothing from the cursor on (but perhaps the match at it):
            // every match lies before the end of the cursor's line.
            scan.first(0, line_end(rope, cursor), |_| true)
        });
    Found {
        range,
        scanned: scan.scanned,
    }
}

fn prev_in(rope: &Rope, query: &Query, sel_start: usize, window: usize) -> Found {
    let Some(mut scan) = Scan::new(rope, query, window) else {
        return Found::default();
    };
    let range = scan
        .last(0, line_end(rope, sel_start), |s| s < sel_start)
        .or_else(|| {
            // No match before the selection: the last one is at or after it.
            let from = line_start_at_or_before(rope, sel_start);
            scan.last(from, rope.len_bytes(), |_| true)
        });
    Found {
        range,
        scanned: scan.scanned,
    }
}

fn count_in(
    rope: &Rope,
    query: &Query,
    at: usize,
    cancel: &AtomicBool,
    window: usize,
) -> Option<MatchCount> {
    let mut count = MatchCount { index: 0, total: 0 };
    let Some(mut scan) = Scan::new(rope, query, window) else {
        return Some(count);
    };
    let len = rope.len_bytes();
    let mut start = 0;
    while start < len {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let end = scan.forward_end(start, len);
        for (s, _) in scan.window(start, end) {
            count.total += 1;
            count.index += usize::from(s < at);
        }
        start = end;
    }
    Some(count)
}

/// Reads the rope in windows of whole lines into one buffer and searches
/// each; counts the bytes read.
struct Scan<'a> {
    rope: &'a Rope,
    regex: &'a Regex,
    window: usize,
    buf: String,
    scanned: usize,
}

impl<'a> Scan<'a> {
    fn new(rope: &'a Rope, query: &'a Query, window: usize) -> Option<Self> {
        Some(Self {
            rope,
            regex: query.regex.as_ref()?,
            window: window.max(1),
            buf: String::new(),
            scanned: 0,
        })
    }

    /// Where the window from line start `start` ends: the first line start
    /// at or after `start + window` (a longer line is read whole), or
    /// `until` (a line boundary) if that comes first.
    fn forward_end(&self, start: usize, until: usize) -> usize {
        line_start_at_or_after(self.rope, start.saturating_add(self.window)).min(until)
    }

    /// Matches in bytes `start..end` (both line boundaries), as byte
    /// ranges in the rope.
    fn window(&mut self, start: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.buf.clear();
        for chunk in self.rope.byte_slice(start..end).chunks() {
            self.buf.push_str(chunk);
        }
        self.scanned += end - start;
        self.regex
            .find_iter(&self.buf)
            .map(move |m| (start + m.start(), start + m.end()))
    }

    /// The first match in `from..until` (line boundaries) whose start
    /// `accept`s, reading forward.
    fn first(
        &mut self,
        from: usize,
        until: usize,
        accept: impl Fn(usize) -> bool,
    ) -> Option<(usize, usize)> {
        let mut start = from;
        while start < until {
            let end = self.forward_end(start, until);
            if let Some(m) = self.window(start, end).find(|&(s, _)| accept(s)) {
                return Some(m);
            }
            start = end;
        }
        None
    }

    /// The last match in `from..until` (line boundaries) whose start
    /// `accept`s, reading backward window by window.
    fn last(
        &mut self,
        from: usize,
        until: usize,
        accept: impl Fn(usize) -> bool,
    ) -> Option<(usize, usize)> {
        let mut end = until;
        while end > from {
            let mut start = line_start_at_or_after(self.rope, end.saturating_sub(self.window));
            if start >= end {
                // One line longer than a window: read it whole.
                start = line_start_at_or_before(self.rope, end - 1);
            }
            let start = start.max(from);
            if let Some(m) = self.window(start, end).filter(|&(s, _)| accept(s)).last() {
                return Some(m);
            }
            end = start;
        }
        None
    }
}

/// The start of the line holding byte `at`.
fn line_start_at_or_before(rope: &Rope, at: usize) -> usize {
    rope.line_to_byte(rope.byte_to_line(at))
}

/// The first line start at or after byte `at`, or the text's end.
fn line_start_at_or_after(rope: &Rope, at: usize) -> usize {
    if at >= rope.len_bytes() {
        return rope.len_bytes();
    }
    let start = line_start_at_or_before(rope, at);
    if start == at {
        at
    } else {
        rope.line_to_byte(rope.byte_to_line(at) + 1)
    }
}

/// The end of the line holding byte `at`, its line break included: the
/// next line's start, or the text's end.
fn line_end(rope: &Rope, at: usize) -> usize {
    rope.line_to_byte(rope.byte_to_line(at) + 1)
}

/// Counting a find's matches off the UI thread: a clone of the rope (O(1):
/// it shares the chunks, and later edits copy what they change), the query
/// and where the selected match starts.
#[derive(Debug, Clone)]
pub struct MatchCounter {
    pub(crate) rope: Rope,
    pub(crate) query: Query,
    /// Byte offset of the selected match's start.
    pub(crate) at: usize,
}

impl MatchCounter {
    /// The selected match's index and the total; None when `cancel` was
    /// set before it finished.
    pub fn count(&self, cancel: &AtomicBool) -> Option<MatchCount> {
        count(&self.rope, &self.query, self.at, cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn found(rope: &Rope, range: Option<(usize, usize)>) -> Option<String> {
        range.map(|(s, e)| rope.byte_slice(s..e).to_string())
    }

    #[test]
    fn smart_case_and_char_columns() {
        let q = |t: &str| Query::new(t);
        assert_eq!(q("foo").in_line("Foo foo FOO"), [(0, 3), (4, 7), (8, 11)]);
        assert_eq!(q("Foo").in_line("Foo foo FOO"), [(0, 3)]);
        assert_eq!(q("foo").in_line("日本 foo"), [(3, 6)]);
        assert_eq!(q("本").in_line("日本日本"), [(1, 2), (3, 4)]);
        assert_eq!(q("aa").in_line("aaaa"), [(0, 2), (2, 4)]);
        assert!(q("").in_line("abc").is_empty());
    }

    /// Non-ASCII smart case: a lowercase `é` finds both cases, `É` only
    /// itself; CJK has no case and matches exactly.
    #[test]
    fn smart_case_beyond_ascii() {
        assert_eq!(Query::new("é").in_line("É é e"), [(0, 1), (2, 3)]);
        assert_eq!(Query::new("É").in_line("É é e"), [(0, 1)]);
        assert_eq!(Query::new("café").in_line("CAFÉ Café"), [(0, 4), (5, 9)]);
        assert_eq!(Query::new("Café").in_line("CAFÉ Café"), [(5, 9)]);
        assert_eq!(
            Query::new("東京").in_line("東京と京都と東京"),
            [(0, 2), (6, 8)]
        );
        let rope = Rope::from_str("x\nÉcole\nécole\n");
        let r = next(&rope, &Query::new("école"), 0, 0);
        assert_eq!(found(&rope, r.range).as_deref(), Some("École"));
        let r = next(&rope, &Query::new("École"), 3, 3);
        assert_eq!(
            found(&rope, r.range).as_deref(),
            Some("École"),
            "wraps, exact case"
        );
    }

    /// The intended difference from lowercasing each char: simple case
    /// folding pairs the Kelvin sign with `k` and both sigmas.
    #[test]
    fn folding_is_unicode_simple_case_folding() {
        assert_eq!(Query::new("k").in_line("\u{212A}"), [(0, 1)]);
        assert_eq!(Query::new("σ").in_line("ΣΑΣ ας"), [(0, 1), (2, 3), (5, 6)]);
    }

    #[test]
    fn a_query_with_a_line_break_finds_nothing() {
        let rope = Rope::from_str("a\nb\na\nb\n");
        let q = Query::new("a\nb");
        assert_eq!(next(&rope, &q, 0, 0).range, None);
        assert_eq!(prev(&rope, &q, 0).range, None);
        let none = AtomicBool::new(false);
        assert_eq!(
            count(&rope, &q, 0, &none),
            Some(MatchCount { index: 0, total: 0 })
        );
        assert!(q.in_line("a").is_empty());
    }

    #[test]
    fn an_empty_text_has_no_matches() {
        let rope = Rope::new();
        let q = Query::new("a");
        assert_eq!(next(&rope, &q, 0, 0), Found::default());
        assert_eq!(prev(&rope, &q, 0), Found::default());
        let none = AtomicBool::new(false);
        assert_eq!(count(&rope, &q, 0, &none).map(|c| c.total), Some(0));
    }

    /// Matches on the first and the last line (no final line break), and
    /// wrap-around both ways.
    #[test]
    fn first_and_last_line_and_wrap_both_ways() {
        let text = "foo a\nb\nc foo";
        let rope = Rope::from_str(text);
        let q = Query::new("foo");
        let last = text.rfind("foo").unwrap();
        assert_eq!(
            next(&rope, &q, 0, 0).range,
            Some((last, last + 3)),
            "skips the one at the cursor"
        );
        assert_eq!(
            next(&rope, &q, last + 3, last).range,
            Some((0, 3)),
            "wraps to the top"
        );
        assert_eq!(
            prev(&rope, &q, 0).range,
            Some((last, last + 3)),
            "wraps to the bottom"
        );
        assert_eq!(prev(&rope, &q, last).range, Some((0, 3)));
        // The only match, selected: Next and Prev select it again.
        let rope = Rope::from_str("x\nfoo");
        assert_eq!(next(&rope, &q, 5, 2).range, Some((2, 5)));
        assert_eq!(prev(&rope, &q, 2).range, Some((2, 5)));
    }

    /// A text with CRLF line breaks as a rope holds them (the document
    /// keeps '\n' only, but a bare rope may): the '\r' is an ordinary char
    /// before the break, matched only when asked for.
    #[test]
    fn crlf_text() {
        let rope = Rope::from_str("ab\r\nab\r\n");
        let q = Query::new("b");
        assert_eq!(next(&rope, &q, 1, 1).range, Some((5, 6)));
        assert_eq!(Query::new("b\r").in_line("ab\r"), [(1, 3)]);
    }

    /// With the real 64 KiB window: a match across the byte where the first
    /// window would be cut is still found whole, both ways, and counted.
    #[test]
    fn matches_straddling_the_window_boundary() {
        let line = format!("{}\n", "x".repeat(99));
        let mut text = line.repeat(WINDOW / line.len());
        // A line that runs over byte WINDOW, with the needle across it.
        let pad = WINDOW - text.len() - 3;
        text.push_str(&"y".repeat(pad));
        text.push_str("needle\n");
        text.push_str(&line.repeat(1000));
        let at = text.find("needle").unwrap();
        assert!(at < WINDOW && at + 6 > WINDOW);
        let rope = Rope::from_str(&text);
        let q = Query::new("needle");
        assert_eq!(next(&rope, &q, 0, 0).range, Some((at, at + 6)));
        assert_eq!(prev(&rope, &q, rope.len_bytes()).range, Some((at, at + 6)));
        let none = AtomicBool::new(false);
        assert_eq!(
            count(&rope, &q, at, &none),
            Some(MatchCount { index: 0, total: 1 })
        );
    }

    /// One line longer than a window is read whole, both ways.
    #[test]
    fn a_line_longer_than_the_window() {
        let text = format!("a\n{}needle{}\nb", "z".repeat(100), "z".repeat(100));
        let rope = Rope::from_str(&text);
        let q = Query::new("needle");
        let at = text.find("needle").unwrap();
        assert_eq!(next_in(&rope, &q, 0, 0, 8).range, Some((at, at + 6)));
        assert_eq!(
            prev_in(&rope, &q, rope.len_bytes(), 8).range,
            Some((at, at + 6))
        );
    }

    /// A match next to the cursor in 1 000 000 lines is found by reading
    /// one window, not the text (the old search read and lowercased every
    /// line); far matches and no match read the text once, plus a line.
    #[test]
    fn a_near_match_reads_one_window_of_a_million_lines() {
        let mut text = "x = 1\n".repeat(1_000_000);
        let at = 500_000 * 6;
        text.replace_range(at..at + 5, "hit 1");
        let rope = Rope::from_str(&text);
        let cursor = at - 60;
        let r = next(&rope, &Query::new("hit"), cursor, cursor);
        assert_eq!(r.range, Some((at, at + 3)));
        assert!(r.scanned <= WINDOW + 6, "read {} bytes", r.scanned);
        let r = prev(&rope, &Query::new("hit"), at + 60);
        assert_eq!(r.range, Some((at, at + 3)));
        assert!(r.scanned <= WINDOW + 6, "read {} bytes", r.scanned);
        // Far (wraps from below it): the rest of the text, then the top.
        let r = next(&rope, &Query::new("hit"), at + 6, at + 6);
        assert_eq!(r.range, Some((at, at + 3)));
        assert!(r.scanned <= text.len() + WINDOW, "read {} bytes", r.scanned);
        let r = next(&rope, &Query::new("miss"), at, at);
        assert_eq!(r.range, None);
        assert!(r.scanned <= text.len() + WINDOW, "read {} bytes", r.scanned);
    }

    #[test]
    fn a_cancelled_count_gives_nothing() {
        let rope = Rope::from_str("a\n");
        assert_eq!(
            count(&rope, &Query::new("a"), 0, &AtomicBool::new(true)),
            None
        );
    }

    /// The reference: the search this module replaced, per line, folding
    /// each char with the first char of its lowercase, every match
    /// collected. On the proptest's alphabet this is what it did for ASCII
    /// queries too (it lowercased ASCII only, and no other letter there
    /// folds to ASCII), and what simple case folding does.
    fn reference_matches(text: &str, query: &str) -> Vec<usize> {
        if query.is_empty() || query.contains('\n') {
            return Vec::new();
        }
        let ignore_case = !query.chars().any(char::is_uppercase);
        let fold = |c: char| {
            if ignore_case {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                c
            }
        };
        let needle: Vec<char> = query.chars().map(fold).collect();
        let mut out = Vec::new();
        let mut line_start = 0;
        for line in text.split('\n') {
            let chars: Vec<(usize, char)> =
                line.char_indices().map(|(b, c)| (b, fold(c))).collect();
            let mut i = 0;
            while i + needle.len() <= chars.len() {
                if chars[i..i + needle.len()]
                    .iter()
                    .map(|&(_, c)| c)
                    .eq(needle.iter().copied())
                {
                    out.push(line_start + chars[i].0);
                    i += needle.len();
                } else {
                    i += 1;
                }
            }
            line_start += line.len() + 1;
        }
        out
    }

    /// A short text, a query, a cursor and a selection start (the cursor
    /// itself half the time: no selection, or one made leftward) as char
    /// indices, and a window size. Few letters, so matches are common.
    fn case() -> impl Strategy<Value = (String, String, usize, usize, usize)> {
        let text = prop::sample::select(vec!['a', 'a', 'b', 'A', 'é', 'É', '本', ' ', '\n', '\r']);
        let query = prop::sample::select(vec!['a', 'a', 'b', 'A', 'é', 'É', '本', '\n']);
        (
            prop::collection::vec(text, 0..40),
            prop::collection::vec(query, 1..3),
            0usize..42,
            0usize..42,
            any::<bool>(),
            1usize..12,
        )
            .prop_map(|(text, query, a, b, collapsed, window)| {
                let (sel_start, cursor) = if collapsed {
                    (a, a)
                } else {
                    (a.min(b), a.max(b))
                };
                (
                    text.into_iter().collect(),
                    query.into_iter().collect(),
                    cursor,
                    sel_start,
                    window,
                )
            })
    }

    /// Byte offset of the `n`th char boundary (clamped).
    fn boundary(text: &str, n: usize) -> usize {
        text.char_indices()
            .map(|(b, _)| b)
            .chain([text.len()])
            .nth(n)
            .unwrap_or(text.len())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Next, previous and the count agree with the old whole-text
        /// search and its selection rule, for any window size (tiny
        /// windows cut everywhere).
        #[test]
        fn agrees_with_the_reference((text, query, cursor, sel_start, window) in case()) {
            let rope = Rope::from_str(&text);
            let q = Query::new(&query);
            let all = reference_matches(&text, &query);
            let (cursor, sel_start) = (boundary(&text, cursor), boundary(&text, sel_start));
            let want_next = all.iter().copied().find(|&s| s >= cursor && s != sel_start).or(all.first().copied());
            prop_assert_eq!(next_in(&rope, &q, cursor, sel_start, window).range, want_next.map(|s| (s, s + len_at(&text, s, &query))));
            let want_prev = all.iter().copied().rfind(|&s| s < sel_start).or(all.last().copied());
            prop_assert_eq!(prev_in(&rope, &q, sel_start, window).range, want_prev.map(|s| (s, s + len_at(&text, s, &query))));
            let none = AtomicBool::new(false);
            let counted = count_in(&rope, &q, cursor, &none, window).unwrap();
            prop_assert_eq!(counted.total, all.len());
            prop_assert_eq!(counted.index, all.iter().filter(|&&s| s < cursor).count());
        }
    }

    /// Bytes of the match at `at`: as many chars as the query has.
    fn len_at(text: &str, at: usize, query: &str) -> usize {
        text[at..]
            .chars()
            .take(query.chars().count())
            .map(char::len_utf8)
            .sum()
    }
}

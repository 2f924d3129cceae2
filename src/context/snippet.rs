//! Snippets centred on the best-matching window of a message, with the
//! matched terms located so a UI can highlight them and a model can see them.

use std::ops::Range;

use super::index::PreparedQuery;
use super::tokenize::{MAX_TERM_BYTES, Mode, tokenize};

/// Default snippet length in characters (the original capability's 200).
pub(crate) const DEFAULT_SNIPPET_CHARS: usize = 200;

/// Marks a cut at either end of a snippet.
const ELLIPSIS: &str = "…";

/// How far (in characters) a window edge may move to land on a space instead
/// of cutting a word in half.
const WORD_SNAP_CHARS: usize = 16;

/// A short excerpt with its highlighted matches.
///
/// `highlights` are byte ranges of `text`, `char_highlights` the same ranges
/// in characters (what a terminal UI counts). Both are sorted and disjoint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<Range<usize>>,
    pub char_highlights: Vec<Range<usize>>,
}

impl Snippet {
    /// The snippet with every highlight wrapped in `**`, for the model.
    pub fn marked(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 4 * self.highlights.len());
        let mut last = 0;
        for range in &self.highlights {
            out.push_str(&self.text[last..range.start]);
            out.push_str("**");
            out.push_str(&self.text[range.clone()]);
            out.push_str("**");
            last = range.end;
        }
        out.push_str(&self.text[last..]);
        out
    }
}

#[derive(Debug, Clone, Copy)]
struct Hit {
    start: usize,
    end: usize,
    pos: u32,
    slot: usize,
    weight: f32,
}

/// Builds a snippet of at most `max_chars` characters (plus ellipses) around
/// the window of `text` that covers the most distinct query terms, breaking
/// ties by total term weight, with the matches centred in it.
///
/// `max_chars` is raised to [`MAX_TERM_BYTES`] if smaller, so a snippet can
/// always show at least one whole matched term.
pub fn build(text: &str, query: &PreparedQuery, max_chars: usize) -> Snippet {
    let max_chars = max_chars.max(MAX_TERM_BYTES);
    let hits = visible_hits(text, query);

    let chars = CharMap::new(text);
    let (focus_start, focus_end) = best_window(&hits, &chars, query.terms.len(), max_chars)
        .map_or((0, 0), |(s, e)| (chars.char_of(s), chars.char_of(e)));
    let total_chars = chars.total;

    // Centre the focus, clamp to the text, then snap edges to spaces.
    let focus_len = focus_end - focus_start;
    let slack = max_chars.saturating_sub(focus_len);
    let mut start = focus_start.saturating_sub(slack / 2);
    let end = start.saturating_add(max_chars).min(total_chars);
    start = end.saturating_sub(max_chars).min(start);
    let mut start_b = chars.byte_of(start);
    let mut end_b = chars.byte_of(end);
    if start > 0 {
        let limit = chars.byte_of((start + WORD_SNAP_CHARS).min(focus_start));
        if limit > start_b
            && let Some((i, space)) = text[start_b..limit]
                .char_indices()
                .find(|(_, c)| c.is_whitespace())
        {
            start_b += i + space.len_utf8();
        }
    }
    if end < total_chars {
        let limit = chars.byte_of(end.saturating_sub(WORD_SNAP_CHARS).max(focus_end));
        if limit <= end_b
            && let Some(space) = text[limit..end_b].rfind(char::is_whitespace)
        {
            end_b = limit + space;
        }
    }
    assemble(text, start_b, end_b, &hits)
}

/// The query-term tokens of `text` worth highlighting, sorted by position.
///
/// A term that is only a piece of a query word (`id` from `user_id`, one
/// bigram of `缓存命中率`) counts only where the whole word's pieces occur
/// together; otherwise `session_id` would light up for `user_id`. If nothing
/// qualifies (the message matched through scattered pieces), every hit is
/// shown rather than none.
fn visible_hits(text: &str, query: &PreparedQuery) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    tokenize(text, Mode::Document, |token| {
        if let Some(slot) = query.terms.iter().position(|t| t.text == token.term) {
            let weight = query.terms[slot].idf;
            hits.push(Hit {
                start: token.start,
                end: token.end,
                pos: token.pos,
                slot,
                weight,
            });
        }
    });
    let mut keep: Vec<bool> = hits.iter().map(|h| query.is_standalone(h.slot)).collect();
    if !query.word_patterns().is_empty() {
        let mut by_key: Vec<((usize, u32), usize)> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| ((h.slot, h.pos), i))
            .collect();
        by_key.sort_unstable();
        let find = |slot: usize, pos: u32| {
            by_key
                .binary_search_by(|probe| probe.0.cmp(&(slot, pos)))
                .ok()
                .map(|k| by_key[k].1)
        };
        for pattern in query.word_patterns() {
            let Some(&(first_slot, _)) = pattern.first() else {
                continue;
            };
            for anchor in hits.iter().filter(|h| h.slot == first_slot).map(|h| h.pos) {
                let found: Option<Vec<usize>> = pattern
                    .iter()
                    .map(|&(slot, off)| anchor.checked_add(off).and_then(|pos| find(slot, pos)))
                    .collect();
                for i in found.into_iter().flatten() {
                    keep[i] = true;
                }
            }
        }
    }
    if keep.iter().any(|&k| k) {
        let mut kept = keep.iter();
        hits.retain(|_| kept.next().copied().unwrap_or(false));
    }
    hits.sort_by_key(|h| (h.start, h.end));
    hits
}

/// Picks the run of hits spanning at most `max_chars` characters with the
/// most distinct terms (then the most weight). Returns its byte span.
fn best_window(
    hits: &[Hit],
    chars: &CharMap,
    n_terms: usize,
    max_chars: usize,
) -> Option<(usize, usize)> {
    let mut counts = vec![0u32; n_terms];
    let (mut distinct, mut weight) = (0usize, 0.0f32);
    let mut best: Option<(usize, f32, usize, usize)> = None;
    let mut lo = 0;
    for (hi, hit) in hits.iter().enumerate() {
        if counts[hit.slot] == 0 {
            distinct += 1;
        }
        counts[hit.slot] += 1;
        weight += hit.weight;
        let hi_end = chars.char_of(hit.end);
        while chars.char_of(hits[lo].start).saturating_add(max_chars) < hi_end && lo < hi {
            let old = hits[lo];
            counts[old.slot] -= 1;
            if counts[old.slot] == 0 {
                distinct -= 1;
            }
            weight -= old.weight;
            lo += 1;
        }
        let better =
            best.is_none_or(|(d, w, _, _)| distinct > d || (distinct == d && weight > w + 1e-6));
        if better {
            let end = hits[lo..=hi].iter().map(|h| h.end).max().unwrap_or(hit.end);
            best = Some((distinct, weight, hits[lo].start, end));
        }
    }
    best.map(|(_, _, s, e)| (s, e))
}

fn assemble(text: &str, start_b: usize, end_b: usize, hits: &[Hit]) -> Snippet {
    let mut out = String::with_capacity(end_b.saturating_sub(start_b) + 2 * ELLIPSIS.len());
    if start_b > 0 {
        out.push_str(ELLIPSIS);
    }
    let shift = out.len();
    // Single-byte controls (newlines, tabs) become spaces: the snippet is
    // shown on one line, and byte offsets stay valid.
    out.extend(
        text[start_b..end_b]
            .chars()
            .map(|c| if c.is_ascii_control() { ' ' } else { c }),
    );
    if end_b < text.len() {
        out.push_str(ELLIPSIS);
    }

    let mut highlights: Vec<Range<usize>> = Vec::new();
    for hit in hits {
        let (s, e) = (hit.start.max(start_b), hit.end.min(end_b));
        if s >= e {
            continue;
        }
        let range = (s - start_b + shift)..(e - start_b + shift);
        match highlights.last_mut() {
            Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
            _ => highlights.push(range),
        }
    }
    let char_highlights = byte_ranges_to_chars(&out, &highlights);
    Snippet {
        text: out,
        highlights,
        char_highlights,
    }
}

fn byte_ranges_to_chars(text: &str, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let map = CharMap::new(text);
    ranges
        .iter()
        .map(|r| map.char_of(r.start)..map.char_of(r.end))
        .collect()
}

/// Byte ↔ char offset conversion for one text. Stores only the byte offset
/// of every 64th character, so it stays small for long messages.
struct CharMap<'a> {
    text: &'a str,
    checkpoints: Vec<usize>,
    total: usize,
}

const STRIDE: usize = 64;

impl<'a> CharMap<'a> {
    fn new(text: &'a str) -> Self {
        let mut checkpoints = Vec::with_capacity(text.len() / STRIDE + 1);
        let mut total = 0;
        for (i, (byte, _)) in text.char_indices().enumerate() {
            if i % STRIDE == 0 {
                checkpoints.push(byte);
            }
            total = i + 1;
        }
        Self {
            text,
            checkpoints,
            total,
        }
    }

    /// Character index of a byte offset that lies on a char boundary.
    fn char_of(&self, byte: usize) -> usize {
        let k = self
            .checkpoints
            .partition_point(|&b| b <= byte)
            .saturating_sub(1);
        let base = self.checkpoints.get(k).copied().unwrap_or(0);
        k * STRIDE + self.text.get(base..byte).map_or(0, |s| s.chars().count())
    }

    /// Byte offset of a character index (clamped to the end of the text).
    fn byte_of(&self, chr: usize) -> usize {
        if chr >= self.total {
            return self.text.len();
        }
        let k = chr / STRIDE;
        let base = self.checkpoints.get(k).copied().unwrap_or(0);
        self.text[base..]
            .char_indices()
            .nth(chr - k * STRIDE)
            .map_or(self.text.len(), |(i, _)| base + i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::context::index::SearchIndex;

    fn query(text: &str) -> PreparedQuery {
        SearchIndex::new().prepare(text)
    }

    fn highlighted(s: &Snippet) -> Vec<&str> {
        s.highlights.iter().map(|r| &s.text[r.clone()]).collect()
    }

    #[test]
    fn short_text_is_whole_and_marked() {
        let s = build("Call checkAuth now", &query("checkAuth"), 200);
        assert_eq!(s.text, "Call checkAuth now");
        assert_eq!(highlighted(&s), ["checkAuth"]);
        assert_eq!(s.marked(), "Call **checkAuth** now");
        assert_eq!(s.char_highlights, vec![5..14]);
    }

    #[test]
    fn window_is_centred_on_a_late_hit_in_multibyte_text() {
        let filler = "数据 filler words go here ".repeat(40);
        let text = format!("{filler}the 内核超时 happened here{filler}");
        let s = build(&text, &query("内核超时"), 80);
        assert!(s.text.chars().count() <= 82);
        assert!(
            s.text.starts_with(ELLIPSIS) && s.text.ends_with(ELLIPSIS),
            "{}",
            s.text
        );
        assert_eq!(highlighted(&s), ["内核超时"]);
        let chars: Vec<char> = s.text.chars().collect();
        let r = s.char_highlights[0].clone();
        assert_eq!(chars[r.clone()].iter().collect::<String>(), "内核超时");
        let middle = s.text.chars().count() / 2;
        assert!(
            r.start.abs_diff(middle) < 20,
            "hit at {r:?}, middle {middle}"
        );
    }

    #[test]
    fn prefers_the_window_with_more_distinct_terms() {
        let text = format!(
            "alpha here. {} alpha beta together. {}",
            "x ".repeat(200),
            "y ".repeat(200)
        );
        let s = build(&text, &query("alpha beta"), 70);
        assert_eq!(highlighted(&s), ["alpha", "beta"]);
    }

    #[test]
    fn no_hits_gives_the_start_and_empty_text_is_fine() {
        let s = build("nothing to see here", &query("zzz"), 200);
        assert_eq!(s.text, "nothing to see here");
        assert!(s.highlights.is_empty());
        let s = build("", &query("zzz"), 200);
        assert_eq!(s, Snippet::default());
    }

    #[test]
    fn identifier_parts_light_up_only_together() {
        let s = build(
            "session_id is not user_id, fetchUserProfile",
            &query("user_id"),
            200,
        );
        assert_eq!(highlighted(&s), ["user_id"]);
        // Scattered parts are still shown when nothing better exists.
        let s = build("the user has no id", &query("user_id"), 200);
        assert_eq!(highlighted(&s), ["user", "id"]);
        let s = build("命中了，缓存命中率高", &query("缓存命中率"), 200);
        assert_eq!(highlighted(&s), ["缓存命中率"]);
    }

    #[test]
    fn newlines_become_spaces() {
        let s = build("line one\nline two", &query("two"), 200);
        assert_eq!(s.text, "line one line two");
        assert_eq!(s.marked(), "line one line **two**");
    }
}

//! Tokeniser shared by the index, the query parser and the snippet builder.
//!
//! One tokeniser for all three is what keeps them consistent: a query term
//! matches a document term exactly when both came out of this code.
//!
//! - Words (letters, digits, `_`, and `-` between word characters) are split
//!   into parts at `_`/`-`, camelCase humps (`HTTPServer` → `http`, `server`)
//!   and letter/digit changes (`utf8` → `utf`, `8`). Every part is a token, and
//!   so is the whole identifier with separators removed (`checkAuth` and
//!   `check_auth` both give `checkauth`), so `checkAuth`, `check auth` and
//!   `checkauth` all find each other.
//! - CJK text has no spaces, so runs of CJK characters become overlapping
//!   character bigrams. Documents also index single characters, so a
//!   one-character query (`错`) still finds them; longer queries use bigrams
//!   only, which is far more precise.
//! - Everything is case-folded with full Unicode lower-casing.
//!
//! Every token carries its byte span in the input (for highlighting) and a
//! position in a per-document sequence (for the exact-phrase bonus). Parts of
//! one word get consecutive positions; the whole-identifier token shares the
//! position of the first part; a CJK run of n characters spans n positions.

/// Longer terms are dropped (base64 blobs, minified code): they never match a
/// real query and would only bloat the dictionary. Positions still advance.
pub(crate) const MAX_TERM_BYTES: usize = 64;

/// Whether we tokenise a stored document or a query: they differ only in
/// which CJK n-grams are produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Document,
    Query,
}

/// What a token stands for. Only `Primary` tokens form the phrase sequence of
/// a query; `Whole` (joined identifier) and `Unigram` (a CJK character inside
/// a longer run) are extra ways to match the same text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Primary,
    Whole,
    Unigram,
}

/// A token borrowed from the tokeniser's buffer; copy `term` if you keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub term: &'a str,
    /// Byte range in the tokenised text.
    pub start: usize,
    pub end: usize,
    pub pos: u32,
    /// Position of the first token of the word or CJK run this token came
    /// from: tokens with equal `word` are alternatives for one query word.
    pub word: u32,
    pub kind: Kind,
}

/// Calls `emit` for every token of `text`, in text order, and returns the
/// number of positions used (the document length for BM25).
pub fn tokenize<F>(text: &str, mode: Mode, mut emit: F) -> u32
where
    F: FnMut(Token<'_>),
{
    let mut scratch = Scratch::default();
    let mut pos: u32 = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if is_cjk(c) {
            scratch.run.clear();
            scratch.run.push((start, c));
            while let Some(&(i, next)) = chars.peek() {
                if !is_cjk(next) {
                    break;
                }
                scratch.run.push((i, next));
                chars.next();
            }
            pos = emit_cjk_run(&scratch.run, text, mode, pos, &mut scratch.term, &mut emit);
        } else if is_word_char(c) {
            let mut end = start + c.len_utf8();
            loop {
                match chars.peek() {
                    Some(&(i, next)) if is_word_char(next) => {
                        end = i + next.len_utf8();
                        chars.next();
                    }
                    Some(&(i, '-')) if text[i + 1..].chars().next().is_some_and(is_word_char) => {
                        end = i + 1;
                        chars.next();
                    }
                    _ => break,
                }
            }
            pos = emit_word(text, start, end, pos, &mut scratch, &mut emit);
        }
    }
    pos
}

/// Lower-cased query terms in query order, for callers that just need strings.
pub fn terms(text: &str, mode: Mode) -> Vec<String> {
    let mut out = Vec::new();
    tokenize(text, mode, |token| out.push(token.term.to_string()));
    out
}

#[derive(Default)]
struct Scratch {
    run: Vec<(usize, char)>,
    parts: Vec<(usize, usize)>,
    term: String,
    whole: String,
}

/// Combining marks count as word characters so decomposed text (`e` +
/// U+0301) stays one word instead of splitting at every accent.
fn is_word_char(c: char) -> bool {
    c == '_'
        || (c.is_alphanumeric() && !is_cjk(c))
        || matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Han, kana and Hangul: scripts written without spaces between words.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FFFF) // CJK Extensions B..F
}

fn emit_cjk_run<F>(
    run: &[(usize, char)],
    text: &str,
    mode: Mode,
    pos: u32,
    term: &mut String,
    emit: &mut F,
) -> u32
where
    F: FnMut(Token<'_>),
{
    let char_end = |k: usize| run[k].0 + run[k].1.len_utf8();
    if run.len() == 1 {
        let (start, _) = run[0];
        let end = char_end(0);
        push_verbatim(term, &text[start..end]);
        emit(Token {
            word: pos,
            term,
            start,
            end,
            pos,
            kind: Kind::Primary,
        });
    } else {
        for k in 0..run.len() {
            let start = run[k].0;
            if mode == Mode::Document {
                push_verbatim(term, &text[start..char_end(k)]);
                emit(Token {
                    word: pos,
                    term,
                    start,
                    end: char_end(k),
                    pos: pos.saturating_add(k as u32),
                    kind: Kind::Unigram,
                });
            }
            if k + 1 < run.len() {
                let end = char_end(k + 1);
                push_verbatim(term, &text[start..end]);
                emit(Token {
                    word: pos,
                    term,
                    start,
                    end,
                    pos: pos.saturating_add(k as u32),
                    kind: Kind::Primary,
                });
            }
        }
    }
    pos.saturating_add(run.len() as u32)
}

fn emit_word<F>(
    text: &str,
    start: usize,
    end: usize,
    pos: u32,
    scratch: &mut Scratch,
    emit: &mut F,
) -> u32
where
    F: FnMut(Token<'_>),
{
    split_parts(&text[start..end], start, &mut scratch.parts);
    let parts = &scratch.parts;
    if parts.len() > 1 {
        scratch.whole.clear();
        for &(s, e) in parts {
            let part = &text[s..e];
            if part.is_ascii() {
                scratch
                    .whole
                    .extend(part.bytes().map(|b| char::from(b.to_ascii_lowercase())));
            } else {
                scratch
                    .whole
                    .extend(part.chars().flat_map(char::to_lowercase));
            }
        }
        if scratch.whole.len() <= MAX_TERM_BYTES {
            let (first, last) = (parts[0].0, parts[parts.len() - 1].1);
            emit(Token {
                word: pos,
                term: &scratch.whole,
                start: first,
                end: last,
                pos,
                kind: Kind::Whole,
            });
        }
    }
    for (k, &(s, e)) in parts.iter().enumerate() {
        push_lower(&mut scratch.term, &text[s..e]);
        if scratch.term.len() <= MAX_TERM_BYTES {
            emit(Token {
                word: pos,
                term: &scratch.term,
                start: s,
                end: e,
                pos: pos.saturating_add(k as u32),
                kind: Kind::Primary,
            });
        }
    }
    pos.saturating_add(parts.len() as u32)
}

/// Byte ranges (absolute, offset by `base`) of the parts of one word.
fn split_parts(word: &str, base: usize, parts: &mut Vec<(usize, usize)>) {
    parts.clear();
    let mut current: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut iter = word.char_indices().peekable();
    while let Some((i, c)) = iter.next() {
        if c == '_' || c == '-' {
            if let Some(s) = current.take() {
                parts.push((base + s, base + i));
            }
            prev = None;
            continue;
        }
        if let (Some(s), Some(p)) = (current, prev) {
            let next_is_lower = iter.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let hump = p.is_lowercase() && c.is_uppercase();
            let acronym_end = p.is_uppercase() && c.is_uppercase() && next_is_lower;
            let digit_change = p.is_numeric() != c.is_numeric();
            if hump || acronym_end || digit_change {
                parts.push((base + s, base + i));
                current = Some(i);
            }
        } else {
            current = Some(i);
        }
        prev = Some(c);
    }
    if let Some(s) = current {
        parts.push((base + s, base + word.len()));
    }
}

fn push_lower(buf: &mut String, text: &str) {
    buf.clear();
    if text.is_ascii() {
        buf.extend(text.bytes().map(|b| char::from(b.to_ascii_lowercase())));
    } else {
        for c in text.chars() {
            buf.extend(c.to_lowercase());
        }
    }
}

/// CJK characters have no case, so their n-grams are copied as they are.
fn push_verbatim(buf: &mut String, text: &str) {
    buf.clear();
    buf.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str, mode: Mode) -> Vec<(String, Kind, u32, &str)> {
        let mut out = Vec::new();
        tokenize(text, mode, |t| {
            out.push((t.term.to_string(), t.kind, t.pos, &text[t.start..t.end]))
        });
        out
    }

    #[test]
    fn camel_case_keeps_whole_and_parts() {
        assert_eq!(
            terms("checkAuth", Mode::Query),
            ["checkauth", "check", "auth"]
        );
        assert_eq!(terms("check auth", Mode::Query), ["check", "auth"]);
        assert_eq!(terms("checkauth", Mode::Query), ["checkauth"]);
    }

    #[test]
    fn snake_and_kebab_case_split_and_join() {
        assert_eq!(
            terms("snake_case", Mode::Query),
            ["snakecase", "snake", "case"]
        );
        assert_eq!(
            terms("kebab-case", Mode::Query),
            ["kebabcase", "kebab", "case"]
        );
        assert_eq!(terms("__init__", Mode::Query), ["init"]);
        // A hyphen that does not join two word characters is a separator.
        assert_eq!(terms("a - b", Mode::Query), ["a", "b"]);
        assert_eq!(terms("-x-", Mode::Query), ["x"]);
    }

    #[test]
    fn acronyms_and_digits() {
        assert_eq!(
            terms("HTTPServer", Mode::Query),
            ["httpserver", "http", "server"]
        );
        assert_eq!(
            terms("parseJSON2", Mode::Query),
            ["parsejson2", "parse", "json", "2"]
        );
        assert_eq!(terms("utf8", Mode::Query), ["utf8", "utf", "8"]);
        assert_eq!(terms("retry 3 times", Mode::Query), ["retry", "3", "times"]);
        assert_eq!(
            terms("MAX_RETRIES", Mode::Query),
            ["maxretries", "max", "retries"]
        );
    }

    #[test]
    fn positions_and_spans() {
        let toks = collect("Call checkAuth(now)", Mode::Document);
        assert_eq!(
            toks,
            vec![
                ("call".to_string(), Kind::Primary, 0, "Call"),
                ("checkauth".to_string(), Kind::Whole, 1, "checkAuth"),
                ("check".to_string(), Kind::Primary, 1, "check"),
                ("auth".to_string(), Kind::Primary, 2, "Auth"),
                ("now".to_string(), Kind::Primary, 3, "now"),
            ]
        );
    }

    #[test]
    fn cjk_bigrams_and_unigrams() {
        assert_eq!(terms("超时内核", Mode::Query), ["超时", "时内", "内核"]);
        assert_eq!(terms("错", Mode::Query), ["错"]);
        let doc = collect("内核超时", Mode::Document);
        let doc_terms: Vec<&str> = doc.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(doc_terms, ["内", "内核", "核", "核超", "超", "超时", "时"]);
        // Mixed scripts: CJK runs and words are separate tokens.
        assert_eq!(
            terms("内核kernel重启", Mode::Query),
            ["内核", "kernel", "重启"]
        );
        let n = tokenize("内核 x", Mode::Document, |_| {});
        assert_eq!(n, 3);
    }

    #[test]
    fn unicode_case_folding_and_garbage() {
        assert_eq!(terms("ÄRGER Straße", Mode::Query), ["ärger", "straße"]);
        assert!(terms("", Mode::Query).is_empty());
        assert!(terms("!!! ... ///", Mode::Query).is_empty());
        let long = "a".repeat(MAX_TERM_BYTES + 1);
        assert!(terms(&long, Mode::Query).is_empty());
        // Emoji and combining marks never panic and never become tokens alone.
        assert_eq!(terms("🙂 e\u{301}t\u{e9}", Mode::Query).len(), 1);
    }
}

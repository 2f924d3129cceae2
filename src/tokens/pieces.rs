//! Counting a long text once, however often it is counted again as part of
//! a longer one. The F2 gauge counts the message Enter would send on every
//! key the user types, and that message carries the files it mentions and
//! the snapshot: without this, a mentioned 100 KB file was tokenized again
//! for each key (20 ms a key with o200k, `cargo bench --bench frame`).
//!
//! The text is cut where the BPE's own pre-tokenizer always cuts, so the
//! sum of the pieces' counts is the text's count, exactly (not an
//! estimate): after a line break that the next character cannot join. For
//! o200k and cl100k that is any character but whitespace (which a run of
//! blanks and line breaks takes together) and `/` (o200k's punctuation
//! rule takes `.\n/` as one piece). Only some of those places are cuts —
//! those where the next line's hash says so — so a piece depends on its
//! own content, not on where it starts: typing before a pinned file leaves
//! the file's pieces, and their counts in the memo, as they were.

use std::collections::HashMap;
use std::hash::{BuildHasher, DefaultHasher, Hash, Hasher, RandomState};
use std::sync::Mutex;

/// Texts shorter than this are counted whole: cutting them costs more
/// than it saves.
pub(super) const PIECEWISE_FROM: usize = 4 * 1024;

/// One possible cut in this many is taken (by the hash of the line after
/// it): pieces of ~16 lines, a few hundred bytes of code.
const CUT_ONE_IN: u64 = 16;

/// Counts remembered per generation; a full generation becomes the old one
/// and the one before it is dropped (what is still used moves back in).
const GENERATION: usize = 8 * 1024;

/// The pieces of `text`, in order; their concatenation is `text`.
pub(super) fn pieces(text: &str) -> impl Iterator<Item = &str> {
    pieces_cut_one_in(text, CUT_ONE_IN)
}

/// [`pieces`], taking one possible cut in `one_in` (1: every one, which
/// the tests use to try every cut).
fn pieces_cut_one_in(text: &str, one_in: u64) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = next_cut(rest, one_in).unwrap_or(rest.len());
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

/// The first cut in `text` after its start: a byte offset just past a line
/// break, at a line that may start a piece and whose hash picks it.
fn next_cut(text: &str, one_in: u64) -> Option<usize> {
    let mut at = 0;
    while let Some(newline) = text[at..].find('\n') {
        let start = at + newline + 1;
        let line = text[start..].split('\n').next().unwrap_or_default();
        if may_start_piece(line) && key(line).is_multiple_of(one_in) {
            return Some(start);
        }
        at = start;
    }
    None
}

/// Whether the pre-tokenizer always starts a new piece at this line's
/// start when a line break comes before it.
fn may_start_piece(line: &str) -> bool {
    line.chars()
        .next()
        .is_some_and(|c| !c.is_whitespace() && c != '/')
}

/// Which possible cuts are taken: a fixed hash, so the pieces of a text
/// are the same in every run (what the memo is keyed by is not this).
fn key(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Counts of pieces by their hash and length (no text is kept), in two
/// generations. The hash is keyed afresh for each memo, so a file cannot
/// be made to collide with another piece's count.
#[derive(Default)]
pub(super) struct Memo {
    keys: RandomState,
    generations: Mutex<[HashMap<(u64, usize), usize>; 2]>,
}

impl Memo {
    /// `text`'s count: the sum of its pieces', each counted by `count` the
    /// first time it is seen.
    pub(super) fn count(&self, text: &str, count: impl Fn(&str) -> usize) -> usize {
        pieces(text).map(|piece| self.piece(piece, &count)).sum()
    }

    fn piece(&self, piece: &str, count: &impl Fn(&str) -> usize) -> usize {
        let key = (self.keys.hash_one(piece), piece.len());
        if let Ok(mut generations) = self.generations.lock() {
            let [current, old] = &mut *generations;
            if let Some(n) = current.get(&key) {
                return *n;
            }
            if let Some(n) = old.remove(&key) {
                current.insert(key, n);
                return n;
            }
        }
        // Counted without the lock: another thread may count the same
        // piece meanwhile, and both get the same answer.
        let n = count(piece);
        if let Ok(mut generations) = self.generations.lock() {
            let [current, old] = &mut *generations;
            if current.len() >= GENERATION {
                *old = std::mem::take(current);
            }
            current.insert(key, n);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn code(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("def handler_{i}(request):\n    return {i}\n"))
            .collect()
    }

    #[test]
    fn the_pieces_make_up_the_text_and_depend_on_content_not_position() {
        let file = code(2_000);
        let pieces_alone: Vec<&str> = pieces(&file).collect();
        assert_eq!(pieces_alone.concat(), file);
        assert!(pieces_alone.len() > 20, "{}", pieces_alone.len());
        // Typed text before it changes only the first piece.
        let message = format!("explain this, please\n\n<pinned>\n{file}");
        let in_message: Vec<&str> = pieces(&message).collect();
        assert_eq!(in_message.concat(), message);
        let shared = in_message
            .iter()
            .filter(|p| pieces_alone.contains(p))
            .count();
        assert!(
            shared + 2 >= in_message.len(),
            "{shared} of {}",
            in_message.len()
        );
    }

    #[test]
    fn a_piece_is_counted_once_however_often_it_comes_back() {
        let memo = Memo::default();
        let counted = AtomicUsize::new(0);
        let count = |piece: &str| {
            counted.fetch_add(piece.len(), Ordering::Relaxed);
            piece.len()
        };
        let file = code(2_000);
        let first = memo.count(&format!("a\n{file}"), count);
        let before = counted.load(Ordering::Relaxed);
        let second = memo.count(&format!("ab\n{file}"), count);
        assert_eq!(second, first + 1);
        let again = counted.load(Ordering::Relaxed) - before;
        assert!(
            again < 1_000,
            "{again} bytes counted again of {}",
            file.len()
        );
    }

    fn tokenizer_text() -> impl Strategy<Value = String> {
        let atom = prop_oneof![
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just(" ".to_owned()),
            Just("\t".to_owned()),
            Just("/".to_owned()),
            Just(".".to_owned()),
            Just("'s".to_owned()),
            Just("<pinned>".to_owned()),
            Just("\u{85}".to_owned()),
            Just("é".to_owned()),
            "[a-zA-Z]{1,6}",
            "[0-9]{1,5}",
            "[(){}#:;,=*\"-]{1,3}",
        ];
        prop::collection::vec(atom, 0..400).prop_map(|atoms| atoms.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The whole point: cutting never changes the count, for both
        /// vocabularies the counter uses.
        #[test]
        fn the_pieces_counts_add_up_to_the_texts_count(text in tokenizer_text()) {
            for bpe in [tiktoken_rs::o200k_base_singleton(), tiktoken_rs::cl100k_base_singleton()] {
                let whole = bpe.count_ordinary(&text);
                let every_cut = || pieces_cut_one_in(&text, 1);
                let summed: usize = every_cut().map(|p| bpe.count_ordinary(p)).sum();
                prop_assert_eq!(whole, summed, "{:?}", every_cut().collect::<Vec<_>>());
            }
        }
    }
}

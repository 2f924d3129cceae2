//! Incremental BM25 index over the conversation.
//!
//! Appending a message tokenises only that message and appends to the
//! postings of its terms; the statistics BM25 needs (document count, total
//! length) are running totals. Nothing is ever rebuilt, so the cost of
//! `add` depends on the message, not on how long the conversation is.
//!
//! A query touches only the postings of its own terms, accumulates scores in a
//! dense array, adds an exact-phrase bonus from stored positions, and keeps the
//! best `k` in a min-heap.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use super::message::Role;
use super::tokenize::{Kind, MAX_TERM_BYTES, Mode, is_cjk, tokenize};

/// BM25 term-frequency saturation.
pub(crate) const K1: f32 = 1.2;
/// BM25 length normalisation.
pub(crate) const B: f32 = 0.75;
/// A document containing the query as an exact phrase gets this many times
/// the summed IDF of the phrase terms on top of its BM25 score: enough to beat
/// the same words scattered, not enough to beat a much better match.
pub(crate) const PHRASE_BOOST: f32 = 1.0;
/// Distinct terms kept from one query; the rest are ignored. Keeps a pasted
/// megabyte "query" linear and bounded, and lets a `u64` record which query
/// terms a document contains.
pub(crate) const MAX_QUERY_TERMS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Posting {
    doc: u32,
    tf: u32,
    /// Offset of this document's positions in `TermPostings::positions`.
    pos_start: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct TermPostings {
    /// Sorted by `doc` because documents are only ever appended.
    postings: Vec<Posting>,
    positions: Vec<u32>,
}

impl TermPostings {
    fn positions_in(&self, doc: u32) -> Option<&[u32]> {
        let i = self.postings.binary_search_by_key(&doc, |p| p.doc).ok()?;
        let p = self.postings[i];
        let start = p.pos_start as usize;
        self.positions.get(start..start + p.tf as usize)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DocEntry {
    role: Role,
    /// Number of token positions; 0 for documents that are not indexed.
    len: u32,
}

/// Counters that describe the index; equal for equal content however it was
/// built, which is how tests check that appending is truly incremental.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexStats {
    /// Documents seen, indexed or not (equals the message count).
    pub documents: usize,
    /// Documents that take part in search (not system messages).
    pub indexed_documents: usize,
    pub distinct_terms: usize,
    pub postings: usize,
    pub positions: usize,
    pub total_length: u64,
}

/// A query prepared once: its distinct terms, their IDF, and the phrase.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedQuery {
    /// Distinct query terms in query order, with the index term id when the
    /// term occurs in the index and its IDF (0 when absent).
    pub terms: Vec<QueryTerm>,
    /// Index into `terms` and offset from the first phrase token, for every
    /// primary token of the query in order. Empty for single-token queries.
    phrase: Vec<(usize, u32)>,
    /// Bit masks over `terms` (bit i = `terms[i]`): a document matches when
    /// it contains every term of at least one mask.
    groups: Vec<u64>,
    /// For every query word made of several primary terms (identifier
    /// parts, CJK bigrams): its terms with offsets from the word's start.
    word_patterns: Vec<Vec<(usize, u32)>>,
}

impl PreparedQuery {
    fn accepts(&self, present: u64) -> bool {
        self.groups.iter().any(|group| (present & group) == *group)
    }

    /// Whether `terms[slot]` matches a query word on its own (a plain word,
    /// a whole identifier, two words joined), rather than only as one part
    /// of a split identifier or one bigram of a CJK run.
    pub(crate) fn is_standalone(&self, slot: usize) -> bool {
        slot < MAX_QUERY_TERMS && self.groups.contains(&(1 << slot))
    }

    /// Multi-term query words as `(slot, offset)` sequences; a part only
    /// counts as a visible match where its whole sequence occurs.
    pub(crate) fn word_patterns(&self) -> &[Vec<(usize, u32)>] {
        &self.word_patterns
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    pub text: String,
    id: Option<u32>,
    pub idf: f32,
}

/// One ranked document: message index and score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub index: usize,
    pub score: f32,
}

/// The best documents for a query, and how many documents matched at all.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    pub top: Vec<Ranked>,
    pub total: usize,
}

/// Term lookups dominate indexing; foldhash is much faster than SipHash on
/// short keys, and its per-instance random seed still guards against
/// crafted collisions from tool output.
type Dictionary = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

/// Postings (with positions) per term, per-document role and length, and
/// the running totals BM25 needs. Document ids are message indices.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    dictionary: Dictionary,
    terms: Vec<TermPostings>,
    docs: Vec<DocEntry>,
    indexed_docs: u32,
    total_len: u64,
    /// Reused between `add` calls: (term id, position) pairs of one document.
    scratch: Vec<(u32, u32)>,
}

impl SearchIndex {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next document (its id is the number of documents so far,
    /// i.e. the message index). Non-searchable roles take an id but no terms.
    pub fn add(&mut self, role: Role, text: &str) {
        let doc = u32::try_from(self.docs.len()).unwrap_or(u32::MAX);
        if !role.is_searchable() {
            self.docs.push(DocEntry { role, len: 0 });
            return;
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let len = tokenize(text, Mode::Document, |token| {
            let id = self.term_id_or_insert(token.term);
            scratch.push((id, token.pos));
        });
        scratch.sort_unstable();
        scratch.dedup();
        for group in scratch.chunk_by(|a, b| a.0 == b.0) {
            let term = &mut self.terms[group[0].0 as usize];
            let pos_start = u32::try_from(term.positions.len()).unwrap_or(u32::MAX);
            term.positions.extend(group.iter().map(|&(_, pos)| pos));
            term.postings.push(Posting {
                doc,
                tf: group.len() as u32,
                pos_start,
            });
        }
        self.scratch = scratch;
        self.docs.push(DocEntry { role, len });
        self.indexed_docs += 1;
        self.total_len += u64::from(len);
    }

    fn term_id_or_insert(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.dictionary.get(term) {
            return id;
        }
        let id = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.dictionary.insert(term.into(), id);
        self.terms.push(TermPostings::default());
        id
    }

    pub fn stats(&self) -> IndexStats {
        IndexStats {
            documents: self.docs.len(),
            indexed_documents: self.indexed_docs as usize,
            distinct_terms: self.terms.len(),
            postings: self.terms.iter().map(|t| t.postings.len()).sum(),
            positions: self.terms.iter().map(|t| t.positions.len()).sum(),
            total_length: self.total_len,
        }
    }

    fn idf(&self, df: usize) -> f32 {
        let n = self.indexed_docs as f32;
        let df = df as f32;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Tokenises `text` as a query and looks its terms up once.
    ///
    /// Each query word becomes a set of alternatives, each a set of terms a
    /// document must all contain to match that word: an identifier matches
    /// by its whole token or by all of its parts (so `checkAuth` does not
    /// match a message that merely says "auth"), a CJK run by all of its
    /// bigrams. A document matches the query when it matches any word.
    ///
    /// Two adjacent words are also tried joined, so `check auth` finds
    /// `checkauth` (and `checkAuth`, whose whole-identifier token is
    /// `checkauth`) — the reverse of the splitting done at index time.
    pub fn prepare(&self, text: &str) -> PreparedQuery {
        let mut tokens: Vec<(String, Kind, u32, u32)> = Vec::new();
        tokenize(text, Mode::Query, |token| {
            tokens.push((token.term.to_string(), token.kind, token.pos, token.word));
        });
        let mut query = PreparedQuery {
            terms: Vec::new(),
            phrase: Vec::new(),
            groups: Vec::new(),
            word_patterns: Vec::new(),
        };
        let mut primaries: Vec<(usize, u32)> = Vec::new();
        let mut truncated = false;
        let mut previous_word: Option<(&str, u32)> = None;
        for word in tokens.chunk_by(|a, b| a.3 == b.3) {
            let mut all_primaries = 0u64;
            let first_primary = primaries.len();
            for (term, kind, pos, _) in word {
                let Some(slot) = self.add_query_term(&mut query.terms, term) else {
                    truncated = true;
                    break;
                };
                if *kind == Kind::Primary {
                    all_primaries |= 1 << slot;
                    primaries.push((slot, *pos));
                } else {
                    query.groups.push(1 << slot);
                }
                let is_word = *kind == Kind::Primary && !term.chars().next().is_some_and(is_cjk);
                if let Some((prev, prev_pos)) = previous_word.filter(|_| is_word)
                    && prev_pos.checked_add(1) == Some(*pos)
                {
                    let joined = format!("{prev}{term}");
                    if joined.len() <= MAX_TERM_BYTES {
                        match self.add_query_term(&mut query.terms, &joined) {
                            Some(slot) => query.groups.push(1 << slot),
                            None => truncated = true,
                        }
                    }
                }
                if *kind == Kind::Primary {
                    previous_word = is_word.then_some((term.as_str(), *pos));
                }
            }
            if all_primaries != 0 {
                query.groups.push(all_primaries);
            }
            if let [(_, start), _, ..] = primaries[first_primary..] {
                let pattern = primaries[first_primary..]
                    .iter()
                    .map(|&(slot, pos)| (slot, pos - start))
                    .collect();
                query.word_patterns.push(pattern);
            }
            if truncated {
                break;
            }
        }
        query.phrase = match primaries.first() {
            Some(&(_, first)) if primaries.len() > 1 && !truncated => primaries
                .iter()
                .map(|&(slot, pos)| (slot, pos - first))
                .collect(),
            _ => Vec::new(),
        };
        query
    }

    /// The slot of `term` in `terms`, adding it (with its id and IDF) if new;
    /// `None` once the query already has `MAX_QUERY_TERMS` distinct terms.
    fn add_query_term(&self, terms: &mut Vec<QueryTerm>, term: &str) -> Option<usize> {
        if let Some(slot) = terms.iter().position(|t| t.text == term) {
            return Some(slot);
        }
        if terms.len() >= MAX_QUERY_TERMS {
            return None;
        }
        let id = self.dictionary.get(term).copied();
        let df = id.map_or(0, |id| self.terms[id as usize].postings.len());
        let idf = if df == 0 { 0.0 } else { self.idf(df) };
        terms.push(QueryTerm {
            text: term.to_string(),
            id,
            idf,
        });
        Some(terms.len() - 1)
    }

    /// Ranks indexed documents for `query`; `role` restricts to one role.
    pub fn rank(&self, query: &PreparedQuery, limit: usize, role: Option<Role>) -> Ranking {
        let n_docs = self.docs.len();
        let mut scores = vec![0.0f32; n_docs];
        let mut present = vec![0u64; n_docs];
        let mut touched: Vec<u32> = Vec::new();
        let avg_len = if self.indexed_docs == 0 {
            1.0
        } else {
            (self.total_len as f32 / self.indexed_docs as f32).max(1.0)
        };
        let role_ok = |doc: u32| role.is_none_or(|r| self.docs[doc as usize].role == r);

        for (slot, term) in query.terms.iter().enumerate() {
            let Some(id) = term.id else { continue };
            for p in &self.terms[id as usize].postings {
                if !role_ok(p.doc) {
                    continue;
                }
                let len = self.docs[p.doc as usize].len as f32;
                let tf = p.tf as f32;
                let norm = K1 * (1.0 - B + B * len / avg_len);
                let score = &mut scores[p.doc as usize];
                if *score == 0.0 {
                    touched.push(p.doc);
                }
                *score += term.idf * tf * (K1 + 1.0) / (tf + norm);
                present[p.doc as usize] |= 1 << slot;
            }
        }
        touched.retain(|&doc| {
            let matches = query.accepts(present[doc as usize]);
            if !matches {
                scores[doc as usize] = 0.0;
            }
            matches
        });
        self.add_phrase_bonus(query, &mut scores, role_ok);

        let total = touched.len();
        let limit = limit.min(total);
        let mut heap: BinaryHeap<Reverse<(ByScore, u32)>> = BinaryHeap::with_capacity(limit + 1);
        if limit > 0 {
            for &doc in &touched {
                heap.push(Reverse((ByScore(scores[doc as usize]), doc)));
                if heap.len() > limit {
                    heap.pop();
                }
            }
        }
        let top = heap
            .into_sorted_vec()
            .into_iter()
            .map(|Reverse((ByScore(score), doc))| Ranked {
                index: doc as usize,
                score,
            })
            .collect();
        Ranking { top, total }
    }

    /// Adds the phrase bonus to every document where the query's primary
    /// tokens occur at the same relative positions. Driven by the rarest
    /// phrase term, so the work is bounded by its document frequency.
    fn add_phrase_bonus(
        &self,
        query: &PreparedQuery,
        scores: &mut [f32],
        role_ok: impl Fn(u32) -> bool,
    ) {
        if query.phrase.is_empty() {
            return;
        }
        let mut phrase_terms: Vec<(&TermPostings, u32)> = Vec::with_capacity(query.phrase.len());
        for &(slot, offset) in &query.phrase {
            let Some(id) = query.terms[slot].id else {
                return;
            };
            phrase_terms.push((&self.terms[id as usize], offset));
        }
        let bonus = PHRASE_BOOST
            * query
                .phrase
                .iter()
                .map(|&(slot, _)| query.terms[slot].idf)
                .sum::<f32>();
        let Some(&(driver, driver_offset)) =
            phrase_terms.iter().min_by_key(|(t, _)| t.postings.len())
        else {
            return;
        };
        let mut others: Vec<(&[u32], u32)> = Vec::with_capacity(phrase_terms.len());
        for p in &driver.postings {
            if !role_ok(p.doc) || scores[p.doc as usize] == 0.0 {
                continue;
            }
            let start = p.pos_start as usize;
            let Some(driver_positions) = driver.positions.get(start..start + p.tf as usize) else {
                continue;
            };
            others.clear();
            for &(term, off) in &phrase_terms {
                match term.positions_in(p.doc) {
                    Some(positions) => others.push((positions, off)),
                    None => break,
                }
            }
            if others.len() < phrase_terms.len() {
                continue;
            }
            let found = driver_positions.iter().any(|&pos| {
                pos.checked_sub(driver_offset).is_some_and(|anchor| {
                    others.iter().all(|&(ps, off)| {
                        anchor
                            .checked_add(off)
                            .is_some_and(|at| ps.binary_search(&at).is_ok())
                    })
                })
            });
            if found {
                scores[p.doc as usize] += bonus;
            }
        }
    }
}

/// Scores are finite by construction; `total_cmp` makes the order total
/// anyway, and ties fall to the more recent message (higher index).
#[derive(Debug, Clone, Copy, PartialEq)]
struct ByScore(f32);

impl Eq for ByScore {}

impl PartialOrd for ByScore {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ByScore {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

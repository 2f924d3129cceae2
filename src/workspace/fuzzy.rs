//! Fuzzy matching of picker queries against workspace-relative paths, with
//! nucleo (the matcher helix uses): fzf-style scoring tuned for paths, smart
//! case, and fzf's query syntax (`^prefix`, `suffix$`, `!not`, `'exact`).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::index::FileIndex;

/// One picker row: the path, its score, and which characters matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathMatch {
    pub path: String,
    pub score: u32,
    /// Sorted, de-duplicated *char* indices into `path` to highlight.
    pub indices: Vec<u32>,
}

/// Reusable matcher: keeps nucleo's scratch memory between keystrokes, so
/// keep one per picker rather than building one per query.
pub struct FuzzyMatcher {
    matcher: Matcher,
    path_buf: Vec<char>,
    name_buf: Vec<char>,
    narrowing: Option<Narrowing>,
    matched: usize,
}

/// What the last [`FuzzyMatcher::matches_index`] call matched.
struct Narrowing {
    generation: u64,
    query: String,
    /// Positions in the index of every path that matched `query`.
    candidates: Vec<u32>,
}

/// Whether appending to `query` can only shrink its matches: true for plain
/// fuzzy text, false with fzf syntax (a growing `!negation` matches more)
/// or whitespace (a new term may start with such syntax).
fn narrows(query: &str) -> bool {
    !query.contains(|c: char| c.is_whitespace() || matches!(c, '!' | '^' | '$' | '\'' | '\\'))
}

impl Default for FuzzyMatcher {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FuzzyMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuzzyMatcher").finish_non_exhaustive()
    }
}

/// A candidate while ranking: compared by score, then shorter path, then name.
#[derive(PartialEq, Eq)]
struct Ranked<'a> {
    score: u32,
    path: &'a str,
    /// Whether the whole query matched inside the file name.
    in_name: bool,
}

impl Ord for Ranked<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .cmp(&other.score)
            .then_with(|| other.path.len().cmp(&self.path.len()))
            .then_with(|| other.path.cmp(self.path))
    }
}

impl PartialOrd for Ranked<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl FuzzyMatcher {
    pub fn new() -> Self {
        Self {
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            path_buf: Vec::new(),
            name_buf: Vec::new(),
            narrowing: None,
            matched: 0,
        }
    }

    /// The best `limit` paths for `query`, best first. An empty query lists
    /// the first `limit` paths in their given order.
    ///
    /// A path whose file name alone matches the whole query gets the file
    /// name's score on top of the full path's, so `mainrs` ranks
    /// `src/main.rs` above `src/domain/rs/x.rs`.
    pub fn matches<S: AsRef<str>>(
        &mut self,
        query: &str,
        paths: &[S],
        limit: usize,
    ) -> Vec<PathMatch> {
        self.narrowing = None;
        self.run(query, paths, limit, None)
    }

    /// Like [`FuzzyMatcher::matches`] over a [`FileIndex`], but typing-aware:
    /// when the query only grew since the last call and the index did not
    /// change, only the paths that matched last time are scored again (a
    /// fuzzy match of `mai` is a subset of the matches of `ma`).
    pub fn matches_index(
        &mut self,
        query: &str,
        index: &FileIndex,
        limit: usize,
    ) -> Vec<PathMatch> {
        let previous = self.narrowing.take().filter(|n| {
            n.generation == index.generation()
                && query.starts_with(n.query.as_str())
                && narrows(&n.query)
                && narrows(query)
        });
        let mut narrowing = Narrowing {
            generation: index.generation(),
            query: query.to_string(),
            candidates: Vec::new(),
        };
        let found = self.run(
            query,
            index.paths(),
            limit,
            Some((
                previous.as_ref().map(|p| p.candidates.as_slice()),
                &mut narrowing.candidates,
            )),
        );
        if !query.trim().is_empty() {
            self.narrowing = Some(narrowing);
        }
        found
    }

    /// Ranks `paths` (or only the `candidates` among them) and, if asked,
    /// records every matching position for the next keystroke.
    fn run<S: AsRef<str>>(
        &mut self,
        query: &str,
        paths: &[S],
        limit: usize,
        narrowing: Option<(Option<&[u32]>, &mut Vec<u32>)>,
    ) -> Vec<PathMatch> {
        if limit == 0 {
            self.matched = 0;
            return Vec::new();
        }
        if query.trim().is_empty() {
            self.matched = paths.len();
            return paths
                .iter()
                .take(limit)
                .map(|p| PathMatch {
                    path: p.as_ref().to_string(),
                    score: 0,
                    indices: Vec::new(),
                })
                .collect();
        }
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let (candidates, mut record) = match narrowing {
            Some((candidates, record)) => (candidates, Some(record)),
            None => (None, None),
        };
        let all = 0..u32::try_from(paths.len()).unwrap_or(u32::MAX);
        let positions: Box<dyn Iterator<Item = u32>> = match candidates {
            Some(candidates) => Box::new(candidates.iter().copied()),
            None => Box::new(all),
        };
        let mut matched = 0;
        // Min-heap of the best `limit` so far: the root is the worst kept.
        let mut best: BinaryHeap<Reverse<Ranked<'_>>> =
            BinaryHeap::with_capacity(limit.min(paths.len()).saturating_add(1));
        for position in positions {
            let Some(path) = paths.get(position as usize) else {
                continue;
            };
            let path = path.as_ref();
            let Some(full) =
                pattern.score(Utf32Str::new(path, &mut self.path_buf), &mut self.matcher)
            else {
                continue;
            };
            if let Some(record) = record.as_mut() {
                record.push(position);
            }
            matched += 1;
            // The file name is part of the path, so its score is at most the
            // path's: a path that cannot beat the worst kept even with that
            // bonus is skipped without scoring its name.
            if best.len() >= limit && best.peek().is_some_and(|worst| full * 2 < worst.0.score) {
                continue;
            }
            let name = file_name(path);
            let name_score =
                pattern.score(Utf32Str::new(name, &mut self.name_buf), &mut self.matcher);
            let candidate = Ranked {
                score: full + name_score.unwrap_or(0),
                path,
                in_name: name_score.is_some(),
            };
            if best.len() < limit {
                best.push(Reverse(candidate));
            } else if best.peek().is_some_and(|worst| candidate > worst.0) {
                best.pop();
                best.push(Reverse(candidate));
            }
        }
        self.matched = matched;
        let mut ranked: Vec<Ranked<'_>> = best.into_iter().map(|r| r.0).collect();
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        ranked
            .into_iter()
            .map(|r| PathMatch {
                path: r.path.to_string(),
                score: r.score,
                indices: self.highlight(&pattern, r.path, r.in_name),
            })
            .collect()
    }

    /// How many paths matched the last query (the picker's "42/100000").
    pub(crate) fn matched_count(&self) -> usize {
        self.matched
    }

    /// Char indices to highlight: inside the file name when the query matched
    /// there (that is what the score rewarded), else across the full path.
    fn highlight(&mut self, pattern: &Pattern, path: &str, in_name: bool) -> Vec<u32> {
        let mut indices = Vec::new();
        if in_name {
            let name = file_name(path);
            let offset = path[..path.len() - name.len()].chars().count() as u32;
            pattern.indices(
                Utf32Str::new(name, &mut self.name_buf),
                &mut self.matcher,
                &mut indices,
            );
            indices.iter_mut().for_each(|i| *i += offset);
        } else {
            pattern.indices(
                Utf32Str::new(path, &mut self.path_buf),
                &mut self.matcher,
                &mut indices,
            );
        }
        indices.sort_unstable();
        indices.dedup();
        indices
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_query_and_zero_limit() {
        let mut m = FuzzyMatcher::new();
        let paths = ["a", "b", "c"];
        assert_eq!(m.matches("", &paths, 2).len(), 2);
        assert!(m.matches("a", &paths, 0).is_empty());
        assert!(m.matches("zzz", &paths, 10).is_empty());
    }

    #[test]
    fn typing_narrows_only_while_the_index_is_unchanged() {
        use super::super::events::IndexUpdate;
        let mut index = FileIndex::new();
        let paths = ["src/main.rs", "src/map.rs", "docs/manual.md", "x.txt"];
        index.apply(&IndexUpdate::Batch(
            paths.iter().map(|p| p.to_string()).collect(),
        ));
        let mut m = FuzzyMatcher::new();
        for query in ["m", "ma", "mai", "main"] {
            let narrowed = m.matches_index(query, &index, 10);
            let cold = FuzzyMatcher::new().matches(query, &paths, 10);
            assert_eq!(narrowed, cold, "query {query}");
        }
        // The index changes between keystrokes: the new file must be found.
        index.apply(&IndexUpdate::Added("lib/main_helper.rs".into()));
        let found = m.matches_index("mainh", &index, 10);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "lib/main_helper.rs");
        // A growing negation matches more, so it must not narrow.
        assert_eq!(m.matches_index("!x", &index, 10).len(), 4);
        assert_eq!(m.matches_index("!x.", &index, 10).len(), 4);
        assert_eq!(m.matches_index("!x.z", &index, 10).len(), 5);
    }

    #[test]
    fn skipping_name_scores_never_changes_the_top_results() {
        let words = [
            "main", "map", "core", "mod", "render", "src", "lib", "ai", "n", "rs",
        ];
        let paths: Vec<String> = (0..4000)
            .map(|i| {
                let w = |k: usize| words[(i * k + i / 7) % words.len()];
                format!("{}/{}_{}/{}{}.{}", w(1), w(3), i % 13, w(5), w(7), w(11))
            })
            .collect();
        let mut m = FuzzyMatcher::new();
        for query in ["m", "mai", "mainrs", "srcmod", "rs", "core/map"] {
            let top = m.matches(query, &paths, 25);
            let all = m.matches(query, &paths, usize::MAX);
            assert_eq!(top[..], all[..top.len()], "query {query}");
        }
    }

    #[test]
    fn non_ascii_paths_get_char_indices() {
        let mut m = FuzzyMatcher::new();
        let found = m.matches("über", &["docs/über.md"], 5);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].indices, vec![5, 6, 7, 8]);
    }
}

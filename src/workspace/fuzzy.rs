//! Fuzzy matching of picker queries against workspace-relative paths, with
//! nucleo (the matcher helix uses): fzf-style scoring tuned for paths, smart
//! case, and fzf's query syntax (`^prefix`, `suffix$`, `!not`, `'exact`).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

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
        if limit == 0 {
            return Vec::new();
        }
        if query.trim().is_empty() {
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
        // Min-heap of the best `limit` so far: the root is the worst kept.
        let mut best: BinaryHeap<Reverse<Ranked<'_>>> = BinaryHeap::with_capacity(limit + 1);
        for path in paths {
            let path = path.as_ref();
            let Some(full) =
                pattern.score(Utf32Str::new(path, &mut self.path_buf), &mut self.matcher)
            else {
                continue;
            };
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
    fn non_ascii_paths_get_char_indices() {
        let mut m = FuzzyMatcher::new();
        let found = m.matches("über", &["docs/über.md"], 5);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].indices, vec![5, 6, 7, 8]);
    }
}

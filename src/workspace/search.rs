//! Plain-text search through file contents for the search pane's `#text`
//! scope: a background walk with the workspace's ignore rules that streams
//! hits per file, stops at a cap or when cancelled, skips binary and large
//! files, and never reads secret files unless explicitly asked to.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use tokio::sync::mpsc::UnboundedSender;

use super::sensitive::is_sensitive_path;
use super::walk::{relative_path, workspace_walker};

/// Files bigger than this are skipped (generated or data files, not code).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// A NUL byte within this many leading bytes marks a file as binary.
const BINARY_PROBE_BYTES: usize = 8192;

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Echoed in every message so the UI can drop results of stale queries
    /// ("only the latest search survives").
    pub id: u64,
    /// Stop after this many hits.
    pub cap: usize,
    /// Search `.env`, keys and other secret files too (explicit user request).
    pub include_sensitive: bool,
    /// `line_text` is cut to about this many chars around the hit.
    pub max_line_chars: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            id: 0,
            cap: 1000,
            include_sensitive: false,
            max_line_chars: 200,
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentHit {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    /// 1-based char column of the first match on the line.
    pub column: u32,
    /// The line, trimmed and cut to `max_line_chars` (with `…` where cut).
    pub line_text: String,
}

/// How a search ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchSummary {
    pub hits: usize,
    pub files_searched: usize,
    /// Stopped because `cap` hits were found; there may be more.
    pub capped: bool,
    pub cancelled: bool,
    /// Secret files left out (so the UI can say "3 secret files skipped").
    pub skipped_sensitive: usize,
    /// Files over [`MAX_FILE_BYTES`] left out unread (known by their size
    /// alone), so the pane can say a search did not look everywhere.
    pub skipped_too_big: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchMessage {
    /// Hits from one file, in line order.
    Hits { id: u64, hits: Vec<ContentHit> },
    /// Always sent last (unless the receiver is gone).
    Done { id: u64, summary: SearchSummary },
}

/// Starts a search for `query` under `root`. Set `cancel` to stop it early
/// (e.g. when the user types another character).
pub fn spawn_content_search(
    root: &Path,
    query: &str,
    options: SearchOptions,
    cancel: Arc<AtomicBool>,
    tx: UnboundedSender<SearchMessage>,
) -> std::io::Result<JoinHandle<()>> {
    let root = root.to_path_buf();
    let needle = Needle::new(query);
    std::thread::Builder::new()
        .name("workspace-search".into())
        .spawn(move || {
            crate::background::lower_this_thread();
            let summary = run_search(&root, &needle, &options, &cancel, &tx);
            let _ = tx.send(SearchMessage::Done {
                id: options.id,
                summary,
            });
        })
}

fn run_search(
    root: &Path,
    needle: &Needle,
    options: &SearchOptions,
    cancel: &AtomicBool,
    tx: &UnboundedSender<SearchMessage>,
) -> SearchSummary {
    let mut summary = SearchSummary::default();
    if needle.is_empty() || options.cap == 0 {
        return summary;
    }
    let mut walker = workspace_walker(root);
    walker.sort_by_file_path(|a, b| a.cmp(b));
    for entry in walker.build() {
        if cancel.load(Ordering::Relaxed) {
            summary.cancelled = true;
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        if !options.include_sensitive && is_sensitive_path(path) {
            summary.skipped_sensitive += 1;
            continue;
        }
        let Some(rel) = relative_path(root, path) else {
            continue;
        };
        if entry
            .metadata()
            .is_ok_and(|meta| meta.len() > MAX_FILE_BYTES)
        {
            summary.skipped_too_big += 1;
            continue;
        }
        let Some(text) = read_text(path) else {
            continue;
        };
        summary.files_searched += 1;
        let remaining = options.cap - summary.hits;
        let hits = search_text(&rel, &text, needle, remaining, options.max_line_chars);
        if hits.is_empty() {
            continue;
        }
        summary.hits += hits.len();
        if tx
            .send(SearchMessage::Hits {
                id: options.id,
                hits,
            })
            .is_err()
        {
            summary.cancelled = true;
            break;
        }
        if summary.hits >= options.cap {
            summary.capped = true;
            break;
        }
    }
    summary
}

/// The file as text, or `None` if unreadable, too big or binary.
fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES
        || bytes[..bytes.len().min(BINARY_PROBE_BYTES)].contains(&0)
    {
        return None;
    }
    Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    })
}

fn search_text(
    rel: &str,
    text: &str,
    needle: &Needle,
    limit: usize,
    max_chars: usize,
) -> Vec<ContentHit> {
    let mut hits = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if hits.len() >= limit {
            break;
        }
        let Some(at) = needle.find(line) else {
            continue;
        };
        let column = line[..at].chars().count();
        hits.push(ContentHit {
            path: rel.to_string(),
            line: u32::try_from(number + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
            line_text: excerpt(line, column, max_chars),
        });
    }
    hits
}

/// The trimmed line, or a window of it that shows the match.
fn excerpt(line: &str, match_column: usize, max_chars: usize) -> String {
    let leading = line.chars().take_while(|c| c.is_whitespace()).count();
    let trimmed = line.trim();
    let total = trimmed.chars().count();
    if total <= max_chars {
        return trimmed.to_string();
    }
    let at = match_column.saturating_sub(leading);
    let start = at
        .saturating_sub(max_chars / 4)
        .min(total.saturating_sub(max_chars));
    let body: String = trimmed.chars().skip(start).take(max_chars).collect();
    let prefix = if start > 0 { "…" } else { "" };
    let suffix = if start + max_chars < total { "…" } else { "" };
    format!("{prefix}{body}{suffix}")
}

/// The query with smart case: all lowercase means case-insensitive.
struct Needle {
    text: String,
    ignore_case: bool,
}

impl Needle {
    fn new(query: &str) -> Self {
        let ignore_case = !query.chars().any(char::is_uppercase);
        let text = if ignore_case {
            query.to_lowercase()
        } else {
            query.to_string()
        };
        Self { text, ignore_case }
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Byte offset of the first match in `line`.
    fn find(&self, line: &str) -> Option<usize> {
        if !self.ignore_case {
            return line.find(&self.text);
        }
        if self.text.is_ascii() {
            let needle = self.text.as_bytes();
            // ASCII bytes never occur inside a multi-byte UTF-8 char, so a
            // byte match always starts on a char boundary.
            return line
                .as_bytes()
                .windows(needle.len())
                .position(|w| w.eq_ignore_ascii_case(needle));
        }
        line.char_indices().map(|(i, _)| i).find(|&i| {
            let mut lowered = line[i..].chars().flat_map(char::to_lowercase);
            self.text.chars().all(|c| lowered.next() == Some(c))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_case_and_columns() {
        let needle = Needle::new("todo");
        assert_eq!(needle.find("// TODO: x"), Some(3));
        assert_eq!(Needle::new("TODO").find("// todo"), None);
        assert_eq!(Needle::new("straße").find("Die STRAßE"), Some(4));
        let hits = search_text(
            "a.rs",
            "x\n  let é = todo();\n",
            &Needle::new("todo"),
            10,
            200,
        );
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].line, hits[0].column), (2, 11));
        assert_eq!(hits[0].line_text, "let é = todo();");
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{}needle{}", "a".repeat(500), "b".repeat(500));
        let text = excerpt(&line, 500, 40);
        assert!(text.contains("needle"), "{text}");
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert!(text.chars().count() <= 42);
    }
}

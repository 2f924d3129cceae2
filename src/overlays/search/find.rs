//! What the search pane finds in each scope, computed from the state
//! (never when drawn): the conversation by the shared BM25 index, variables
//! and diagnostics by substring, files by the fuzzy worker's newest answer,
//! `#text` file contents by a background search.

use std::ops::Range;

use super::{Search, SearchScope};
use crate::component::{Around, SearchTarget};
use crate::workbench::Workbench;

/// One result row: a label (where it is) and a line of text with the byte
/// ranges that matched, for highlighting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRow {
    pub label: String,
    pub text: String,
    pub highlights: Vec<Range<usize>>,
    /// Where Enter goes.
    pub target: SearchTarget,
    /// What pinning this result attaches to the next prompt.
    pub pin_text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneResults {
    /// Nothing typed yet.
    Prompt(&'static str),
    Hits(Vec<ResultRow>),
    /// The scope has nothing to search yet, and why.
    Unavailable(&'static str),
}

impl PaneResults {
    pub fn len(&self) -> usize {
        match self {
            PaneResults::Hits(hits) => hits.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Characters of context kept on each side of a match in a snippet.
const SNIPPET_CONTEXT: usize = 40;

/// The rows the pane lists for `search`'s query and scope.
pub(super) fn find(around: Around<'_>, search: &Search) -> PaneResults {
    let query = search.query.text().trim();
    match search.scope {
        SearchScope::Files if around.workbench.file_index().is_empty() => {
            return PaneResults::Unavailable("the file index is still being built");
        }
        SearchScope::Variables if around.variables.is_empty() => {
            return PaneResults::Unavailable("kernel not running: no variables to search");
        }
        _ => {}
    }
    if query.is_empty() {
        return PaneResults::Prompt(match search.scope {
            // The contents search hides behind a prefix: say so where it is used.
            SearchScope::Files => "type a file name, or #text to search inside the files",
            _ => "type to search",
        });
    }
    let needle = query.to_ascii_lowercase();
    let hits = match search.scope {
        SearchScope::Conversation => {
            let ranked = conversation_bm25(around.workbench, query);
            if !ranked.is_empty() {
                return PaneResults::Hits(ranked);
            }
            // Nothing in the model's conversation (e.g. only `%py` cells so
            // far): the pane's own entries, by substring.
            pane_messages(around.workbench, &needle)
        }
        SearchScope::Variables => around
            .variables
            .iter()
            .filter_map(|v| {
                let line = format!("{} {} {}", v.name, v.type_name, v.preview);
                snippet(&line, &needle).map(|(text, highlights)| ResultRow {
                    label: v.name.clone(),
                    text,
                    highlights,
                    target: SearchTarget::Variable(v.name.clone()),
                    pin_text: format!(
                        "kernel variable `{}` ({}): {}",
                        v.name, v.type_name, v.preview
                    ),
                })
            })
            .collect(),
        SearchScope::Diagnostics => around
            .diagnostics
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                snippet(&d.message, &needle).map(|(text, highlights)| ResultRow {
                    label: format!("{}:{}", d.path, d.line),
                    text,
                    highlights,
                    target: SearchTarget::Diagnostic(i),
                    pin_text: format!(
                        "{}:{}:{} {}: {}",
                        d.path,
                        d.line,
                        d.column,
                        d.severity.as_str(),
                        d.message
                    ),
                })
            })
            .collect(),
        SearchScope::Files => match query.strip_prefix('#') {
            Some(text) => return contents(search, text),
            None => files(search),
        },
    };
    PaneResults::Hits(hits)
}

/// The conversation ranked by the same BM25 index that answers the kernel's
/// `context.search`. Each hit goes to the pane entry that carries its
/// `context` index (set when the pane learns where the message was
/// stored), so `%py` cells, notices and refused calls in between cannot
/// shift it onto another entry.
fn conversation_bm25(workbench: &Workbench, query: &str) -> Vec<ResultRow> {
    use crate::context::SearchQuery;
    let (outcome, texts) = workbench.agent().context.read(|ctx| {
        let outcome = ctx.search(&SearchQuery::new(query).limit(RESULT_LIMIT));
        let texts: Vec<String> = outcome
            .hits
            .iter()
            .map(|hit| {
                ctx.get(hit.id.0)
                    .map(|m| m.content.clone())
                    .unwrap_or_default()
            })
            .collect();
        (outcome, texts)
    });
    let shown: std::collections::HashMap<crate::context::MessageId, usize> = workbench
        .transcript()
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.message.map(|id| (id, i)))
        .collect();
    outcome
        .hits
        .into_iter()
        .zip(texts)
        .map(|(hit, full)| {
            let entry = shown.get(&hit.id).copied();
            // The id as `context.slice` takes it, so a pinned hit's label
            // tells the model where to find the whole message.
            let mut label = format!("{} {}", hit.id, hit.role.as_str());
            if entry.is_none() {
                label.push_str(" (not in this pane)");
            }
            ResultRow {
                label,
                text: hit.snippet.text,
                highlights: hit.snippet.highlights,
                target: entry.map_or(SearchTarget::NotShown(hit.id), SearchTarget::Message),
                pin_text: full,
            }
        })
        .collect()
}

/// Workspace paths by fuzzy match, with the matched characters
/// highlighted: the newest answer from the worker.
fn files(search: &Search) -> Vec<ResultRow> {
    search
        .file_matches
        .matches
        .iter()
        .map(|m| {
            let highlights = m
                .path
                .char_indices()
                .enumerate()
                .filter(|(ci, _)| m.indices.contains(&(*ci as u32)))
                .map(|(_, (b, c))| b..b + c.len_utf8())
                .collect();
            ResultRow {
                label: "file".into(),
                pin_text: format!("workspace file `{}`", m.path),
                target: SearchTarget::File(m.path.clone(), None),
                text: m.path.clone(),
                highlights,
            }
        })
        .collect()
}

/// A `#text` search of file contents, run on a background thread; only the
/// latest query's hits are kept.
#[derive(Debug)]
pub struct ContentSearch {
    pub id: u64,
    pub query: String,
    pub hits: Vec<crate::workspace::ContentHit>,
    /// How it ended (capped, cancelled, files skipped), once done.
    pub summary: Option<crate::workspace::SearchSummary>,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// Hits kept per contents search.
const CONTENT_CAP: usize = 200;

impl ContentSearch {
    /// Starts a contents search of the workspace for `query` (ignore rules
    /// respected, secret files never read); its messages come back as
    /// `AppEvent::ContentSearch`. `None` when it cannot start (no event
    /// channel in tests without one, or the thread could not be made).
    pub(super) fn start(around: Around<'_>, query: String, id: u64) -> Option<Self> {
        let events = around.workbench.agent().events.clone()?;
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let options = crate::workspace::SearchOptions {
            id,
            cap: CONTENT_CAP,
            ..Default::default()
        };
        crate::workspace::spawn_content_search(
            around.workbench.workspace_root(),
            &query,
            options,
            cancel.clone(),
            tx,
        )
        .ok()?;
        // Forward on a plain thread: the search runs on one too, and this
        // works with or without an async runtime.
        let _ = std::thread::Builder::new()
            .name("content-search-forward".into())
            .spawn(move || {
                while let Some(message) = rx.blocking_recv() {
                    if events
                        .send(crate::workbench::event::AppEvent::ContentSearch(message))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        Some(Self {
            id,
            query,
            hits: Vec::new(),
            summary: None,
            cancel,
        })
    }

    /// What the pane's header adds once the search is done: how many files
    /// it left unread for their size, so "0 results" does not claim more
    /// than was searched (`1 file over 1 MiB not searched`).
    pub(super) fn skipped_note(&self) -> Option<String> {
        let skipped = self.summary.as_ref()?.skipped_too_big;
        (skipped > 0).then(|| {
            format!(
                "{skipped} file{} over {} MiB not searched",
                if skipped == 1 { "" } else { "s" },
                crate::workspace::MAX_FILE_BYTES >> 20
            )
        })
    }

    /// Takes hits of this search; false for another (older) search's.
    pub(super) fn take(&mut self, message: crate::workspace::SearchMessage) -> bool {
        use crate::workspace::SearchMessage;
        match message {
            SearchMessage::Hits { id, hits } if id == self.id => {
                self.hits.extend(hits);
                true
            }
            SearchMessage::Done { id, summary } if id == self.id => {
                self.summary = Some(summary);
                true
            }
            _ => false,
        }
    }
}

/// A search the pane no longer shows (another query, or the pane closed)
/// stops reading files.
impl Drop for ContentSearch {
    fn drop(&mut self) {
        self.cancel
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Equal when they search the same and found the same (the cancel flag is
/// the search thread's, not part of what the pane shows).
impl PartialEq for ContentSearch {
    fn eq(&self, other: &Self) -> bool {
        (self.id, &self.query, &self.hits, &self.summary)
            == (other.id, &other.query, &other.hits, &other.summary)
    }
}

impl Eq for ContentSearch {}

fn contents(search: &Search, text: &str) -> PaneResults {
    let text = text.trim();
    if text.is_empty() {
        return PaneResults::Prompt("type what to find in file contents after #");
    }
    let Some(search) = search.content.as_ref().filter(|c| c.query == text) else {
        return PaneResults::Unavailable("searching file contents…");
    };
    if search.hits.is_empty() && search.summary.is_none() {
        return PaneResults::Unavailable("searching file contents…");
    }
    let needle = text.to_ascii_lowercase();
    PaneResults::Hits(
        search
            .hits
            .iter()
            .map(|hit| {
                let lower = hit.line_text.to_ascii_lowercase();
                let highlights = lower
                    .match_indices(&needle)
                    .map(|(i, m)| i..i + m.len())
                    .collect();
                ResultRow {
                    label: format!("{}:{}", hit.path, hit.line),
                    text: hit.line_text.clone(),
                    highlights,
                    target: SearchTarget::File(hit.path.clone(), Some(hit.line as usize)),
                    pin_text: format!("{}:{}: {}", hit.path, hit.line, hit.line_text),
                }
            })
            .collect(),
    )
}

/// Results shown per search.
pub(super) const RESULT_LIMIT: usize = 50;

fn pane_messages(workbench: &Workbench, needle: &str) -> Vec<ResultRow> {
    workbench
        .transcript()
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let haystack: std::borrow::Cow<'_, str> = match &m.cell {
                Some(cell) => format!("{}\n{}", cell.code, m.text).into(),
                None => m.text.as_str().into(),
            };
            snippet(&haystack, needle).map(|(text, highlights)| ResultRow {
                label: format!("#{} {}", i + 1, m.role.label()),
                text,
                highlights,
                target: SearchTarget::Message(i),
                pin_text: haystack.into_owned(),
            })
        })
        .collect()
}

/// The line holding the first match, cut around it, with every match in the
/// cut marked. ASCII case folding keeps byte offsets stable.
fn snippet(text: &str, needle: &str) -> Option<(String, Vec<Range<usize>>)> {
    let lower = text.to_ascii_lowercase();
    let first = lower.find(needle)?;
    let line_start = lower[..first].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = lower[first..]
        .find('\n')
        .map(|i| first + i)
        .unwrap_or(text.len());
    let start = floor_char(text, first.saturating_sub(SNIPPET_CONTEXT).max(line_start));
    let end = floor_char(text, (first + needle.len() + SNIPPET_CONTEXT).min(line_end));
    let cut = &text[start..end];
    let highlights = cut
        .to_ascii_lowercase()
        .match_indices(needle)
        .map(|(i, m)| i..i + m.len())
        .collect();
    Some((cut.to_owned(), highlights))
}

fn floor_char(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closing the search pane (or typing another `#query`) drops its
    /// contents search, and the thread reading files is told to stop.
    #[test]
    fn a_dropped_contents_search_stops_its_thread() {
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let search = ContentSearch {
            id: 1,
            query: "needle".into(),
            hits: Vec::new(),
            summary: None,
            cancel: cancel.clone(),
        };
        assert!(!cancel.load(std::sync::atomic::Ordering::Relaxed));
        drop(search);
        assert!(cancel.load(std::sync::atomic::Ordering::Relaxed));
    }

    #[test]
    fn snippet_marks_every_match_in_the_line() {
        let (text, highlights) = snippet("first line\nAuth then auth again\nlast", "auth").unwrap();
        assert_eq!(text, "Auth then auth again");
        assert_eq!(highlights, vec![0..4, 10..14]);
        assert!(snippet("nothing here", "auth").is_none());
    }

    #[test]
    fn snippet_cuts_long_lines_on_char_boundaries() {
        let text = format!("{}needle{}", "你".repeat(100), "好".repeat(100));
        let (cut, highlights) = snippet(&text, "needle").unwrap();
        assert!(cut.chars().count() < 60);
        assert_eq!(&cut[highlights[0].clone()], "needle");
    }
}

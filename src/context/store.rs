//! `AgentContext`: the append-only conversation and its always-current index.

use serde::{Deserialize, Serialize};

use super::index::{IndexStats, SearchIndex};
use super::message::{Message, Role};
use super::snippet::{self, DEFAULT_SNIPPET_CHARS, Highlight, Snippet};

/// What to search for. `limit` caps the hits returned, not `total`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub text: String,
    pub limit: usize,
    pub role: Option<Role>,
    pub snippet_chars: usize,
}

impl SearchQuery {
    pub const DEFAULT_LIMIT: usize = 10;

    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            limit: Self::DEFAULT_LIMIT,
            role: None,
            snippet_chars: DEFAULT_SNIPPET_CHARS,
        }
    }

    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    pub fn role(mut self, role: Option<Role>) -> Self {
        self.role = role;
        self
    }

    pub fn snippet_chars(mut self, chars: usize) -> Self {
        self.snippet_chars = chars;
        self
    }
}

/// One result, ready for the search pane: highlight ranges are in
/// `snippet.char_highlights` (chars) and `snippet.highlights` (bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// Index of the message in the conversation.
    pub index: usize,
    pub role: Role,
    pub score: f32,
    pub snippet: Snippet,
}

/// Best hits first, and how many messages matched any query term.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchOutcome {
    pub hits: Vec<SearchHit>,
    pub total: usize,
}

/// The conversation: messages only ever get appended, and each append
/// updates the search index, so search is always current and never rebuilds.
///
/// Serialises as `{"messages": [...]}`; the index is derived data and is
/// rebuilt when deserialising.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "ContextRecord")]
pub struct AgentContext {
    messages: Vec<Message>,
    #[serde(skip)]
    index: SearchIndex,
}

#[derive(Deserialize)]
struct ContextRecord {
    messages: Vec<Message>,
}

impl From<ContextRecord> for AgentContext {
    fn from(record: ContextRecord) -> Self {
        record.messages.into_iter().collect()
    }
}

impl FromIterator<Message> for AgentContext {
    fn from_iter<I: IntoIterator<Item = Message>>(iter: I) -> Self {
        let mut context = Self::default();
        for message in iter {
            context.push(message);
        }
        context
    }
}

impl AgentContext {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a message, indexes it, and returns its index.
    pub fn push(&mut self, message: Message) -> usize {
        self.index.add(message.role, &message.searchable_text());
        self.messages.push(message);
        self.messages.len() - 1
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn get(&self, index: usize) -> Option<&Message> {
        self.messages.get(index)
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn count(&self, role: Role) -> usize {
        self.messages.iter().filter(|m| m.role == role).count()
    }

    pub fn index_stats(&self) -> IndexStats {
        self.index.stats()
    }

    /// Ranked search with snippets. Cheap enough (about a millisecond on ten
    /// thousand messages) to run directly on the UI loop per keystroke.
    pub fn search(&self, query: &SearchQuery) -> SearchOutcome {
        let prepared = self.index.prepare(&query.text);
        let ranking = self.index.rank(&prepared, query.limit, query.role);
        let highlights: Vec<Highlight<'_>> = prepared
            .terms
            .iter()
            .filter(|t| t.idf > 0.0)
            .map(|t| Highlight {
                term: &t.text,
                weight: t.idf,
            })
            .collect();
        let hits = ranking
            .top
            .iter()
            .filter_map(|ranked| {
                let message = self.messages.get(ranked.index)?;
                let text = message.searchable_text();
                Some(SearchHit {
                    index: ranked.index,
                    role: message.role,
                    score: ranked.score,
                    snippet: snippet::build(&text, &highlights, query.snippet_chars),
                })
            })
            .collect();
        SearchOutcome {
            hits,
            total: ranking.total,
        }
    }
}

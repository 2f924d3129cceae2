//! `AgentContext`: the append-only conversation and its always-current index.

use serde::{Deserialize, Serialize};

use super::index::{IndexStats, SearchIndex};
use super::message::{Message, MessageId, Role};
use super::snippet::{self, DEFAULT_SNIPPET_CHARS, Snippet};

/// What to search for. `limit` caps the hits returned, not `total`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub text: String,
    pub limit: usize,
    pub role: Option<Role>,
    pub snippet_chars: usize,
}

impl SearchQuery {
    pub(crate) const DEFAULT_LIMIT: usize = 10;

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
    /// The message it found.
    pub id: MessageId,
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

    /// Appends a message, indexes it, and returns its id.
    pub fn push(&mut self, message: Message) -> MessageId {
        self.index.add(message.role, &message.searchable_text());
        self.messages.push(message);
        MessageId(self.messages.len() - 1)
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
        let hits = ranking
            .top
            .iter()
            .filter_map(|ranked| {
                let message = self.messages.get(ranked.index)?;
                let text = message.searchable_text();
                Some(SearchHit {
                    id: MessageId(ranked.index),
                    role: message.role,
                    score: ranked.score,
                    snippet: snippet::build(&text, &prepared, query.snippet_chars),
                })
            })
            .collect();
        SearchOutcome {
            hits,
            total: ranking.total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::message::CallRef;

    fn context(texts: &[(Role, &str)]) -> AgentContext {
        texts
            .iter()
            .map(|&(role, text)| Message::new(role, text))
            .collect()
    }

    fn indices(outcome: &SearchOutcome) -> Vec<usize> {
        outcome.hits.iter().map(|h| h.id.0).collect()
    }

    fn filler(n: usize) -> String {
        (0..n).map(|i| format!("word{} ", i % 7)).collect()
    }

    #[test]
    fn exact_phrase_beats_scattered_terms() {
        let ctx = context(&[
            (
                Role::User,
                "the timeout hit the kernel again, said the session log",
            ),
            (
                Role::User,
                "the kernel timeout again, said the session log today",
            ),
            (Role::User, "nothing relevant here at all, only some words"),
        ]);
        let out = ctx.search(&SearchQuery::new("kernel timeout"));
        assert_eq!(indices(&out), [1, 0]);
        assert_eq!(out.total, 2);
        assert!(out.hits[0].score > out.hits[1].score);
    }

    #[test]
    fn rare_term_beats_common_term() {
        let mut messages: Vec<(Role, String)> = (0..20)
            .map(|i| (Role::Assistant, format!("the build step {i} ran fine")))
            .collect();
        messages.push((Role::User, "the parser crashed".to_string()));
        messages.push((Role::User, "the build crashed".to_string()));
        let ctx: AgentContext = messages
            .into_iter()
            .map(|(r, t)| Message::new(r, t))
            .collect();
        // "parser" is in one message, "build" in 21: the parser message wins.
        let out = ctx.search(&SearchQuery::new("parser build"));
        assert_eq!(out.hits[0].id.0, 20);
        assert_eq!(out.total, 22);
    }

    #[test]
    fn role_filter_and_system_messages() {
        let ctx = context(&[
            (Role::System, "you may call checkAuth"),
            (Role::User, "where is checkAuth defined?"),
            (Role::Assistant, "checkAuth lives in auth.ts"),
            (Role::Tool, "auth.ts: export function checkAuth(user)"),
        ]);
        let all = ctx.search(&SearchQuery::new("checkAuth"));
        assert_eq!(all.total, 3, "system prompts are not searched");
        let tools = ctx.search(&SearchQuery::new("checkAuth").role(Some(Role::Tool)));
        assert_eq!(indices(&tools), [3]);
        assert_eq!(tools.total, 1);
        assert_eq!(tools.hits[0].role, Role::Tool);
    }

    #[test]
    fn identifiers_match_their_spellings() {
        let ctx = context(&[
            (Role::User, "please check auth for this user"),
            (Role::Tool, "fn checkAuth() in src/auth.rs"),
            (Role::Tool, "checkauth is lower-case here"),
            (Role::Assistant, "unrelated"),
        ]);
        for query in [
            "checkAuth",
            "check auth",
            "check_auth",
            "check-auth",
            "CHECK_AUTH",
        ] {
            let out = ctx.search(&SearchQuery::new(query));
            let mut found = indices(&out);
            found.sort_unstable();
            assert_eq!(found, [0, 1, 2], "query {query:?}");
        }
        // One unsegmented word cannot be split into English words, so it
        // finds the identifier spellings but not the loose words.
        let mut found = indices(&ctx.search(&SearchQuery::new("checkauth")));
        found.sort_unstable();
        assert_eq!(found, [1, 2]);
        // An identifier matches by its whole token or all of its parts, not
        // by any one part: "auth" alone is not a match for checkAuth.
        let ctx = context(&[
            (Role::User, "auth is broken"),
            (Role::Tool, "check_auth() failed"),
        ]);
        let out = ctx.search(&SearchQuery::new("checkAuth"));
        assert_eq!((indices(&out), out.total), (vec![1], 1));
        // Separate words are alternatives (BM25's OR): either one matches.
        assert_eq!(ctx.search(&SearchQuery::new("auth failed")).total, 2);
        // The joined spelling ranks above the loose words for an identifier query.
        let out = ctx.search(&SearchQuery::new("checkAuth"));
        assert_ne!(out.hits[0].id.0, 0);

        let ctx = context(&[
            (Role::Tool, "let server = HTTPServer::bind(port_8080)"),
            (Role::Tool, "max_retry_count = 3"),
        ]);
        assert_eq!(indices(&ctx.search(&SearchQuery::new("http server"))), [0]);
        assert_eq!(indices(&ctx.search(&SearchQuery::new("8080"))), [0]);
        assert_eq!(indices(&ctx.search(&SearchQuery::new("retry count"))), [1]);
        assert_eq!(
            indices(&ctx.search(&SearchQuery::new("MaxRetryCount"))),
            [1]
        );
    }

    #[test]
    fn chinese_query_finds_chinese_message() {
        let ctx = context(&[
            (Role::User, "这个函数在超时之后会重启内核。"),
            (Role::Assistant, "用户登录失败，令牌已经过期。"),
            (Role::Tool, "kernel restarted after timeout"),
        ]);
        let out = ctx.search(&SearchQuery::new("超时 内核"));
        assert_eq!(indices(&out), [0]);
        let hit = &out.hits[0];
        let marked = hit.snippet.marked();
        assert!(
            marked.contains("**超时**") && marked.contains("**内核**"),
            "{marked}"
        );
        // Single-character queries use the unigrams.
        assert_eq!(indices(&ctx.search(&SearchQuery::new("令"))), [1]);
        // A phrase that is not in the text does not match through its characters.
        assert_eq!(ctx.search(&SearchQuery::new("时之")).total, 1);
        assert_eq!(ctx.search(&SearchQuery::new("内超")).total, 0);
    }

    #[test]
    fn snippet_is_centred_on_a_late_hit_with_multibyte_ranges() {
        let text = format!(
            "{}数据库连接池已经耗尽 because of leakedHandle here. {}",
            filler(60),
            filler(60)
        );
        let ctx = context(&[(Role::Tool, &text)]);
        let out = ctx.search(&SearchQuery::new("数据库 leaked handle"));
        let snippet = &out.hits[0].snippet;
        let hit_byte = text.find("数据库").unwrap_or(0);
        assert!(
            text[..hit_byte].chars().count() > 200,
            "the hit must not be in the first 200 chars"
        );
        assert!(snippet.text.starts_with('…') && snippet.text.ends_with('…'));
        assert!(snippet.text.chars().count() <= 202);
        let chars: Vec<char> = snippet.text.chars().collect();
        let by_chars: Vec<String> = snippet
            .char_highlights
            .iter()
            .map(|r| chars[r.clone()].iter().collect())
            .collect();
        let by_bytes: Vec<&str> = snippet
            .highlights
            .iter()
            .map(|r| &snippet.text[r.clone()])
            .collect();
        assert_eq!(by_chars, ["数据库", "leakedHandle"]);
        assert_eq!(by_bytes, ["数据库", "leakedHandle"]);
    }

    #[test]
    fn tool_call_code_is_searchable() {
        let mut ctx = AgentContext::new();
        ctx.push(Message::user("read the auth module"));
        ctx.push(Message::assistant("Reading it.").with_tool_call(CallRef {
            id: "call_1".into(),
            name: "code_action".into(),
            code: Some("content = fs.read('auth.ts')\nprint(parseConfig(content))".into()),
        }));
        let out = ctx.search(&SearchQuery::new("parseConfig"));
        assert_eq!(indices(&out), [1]);
        assert!(out.hits[0].snippet.marked().contains("**parseConfig**"));
    }

    #[test]
    fn appending_is_incremental() {
        let texts: Vec<String> = (0..50)
            .map(|i| {
                format!(
                    "message {i} about checkAuth and 超时 number {} {}",
                    i * 7,
                    filler(i % 9)
                )
            })
            .collect();
        let mut grown = AgentContext::new();
        for (i, text) in texts.iter().enumerate() {
            let before = grown.index_stats();
            let alone: AgentContext = std::iter::once(Message::tool(text.as_str())).collect();
            grown.push(Message::tool(text.as_str()));
            let after = grown.index_stats();
            let delta = alone.index_stats();
            // Each append adds exactly this message's postings: nothing is rebuilt.
            assert_eq!(
                after.postings - before.postings,
                delta.postings,
                "append {i}"
            );
            assert_eq!(after.positions - before.positions, delta.positions);
            assert_eq!(after.total_length - before.total_length, delta.total_length);
            let _ = grown.search(&SearchQuery::new("checkAuth 超时"));
        }
        let fresh: AgentContext = texts.iter().map(|t| Message::tool(t.as_str())).collect();
        assert_eq!(grown.index_stats(), fresh.index_stats());
        let query = SearchQuery::new("checkAuth number 超时").limit(50);
        assert_eq!(grown.search(&query), fresh.search(&query));
    }

    #[test]
    fn serde_round_trip_rebuilds_the_index() {
        let ctx = context(&[
            (Role::User, "find the checkAuth bug"),
            (Role::Assistant, "found it"),
        ]);
        let json = serde_json::to_string(&ctx).unwrap();
        assert!(json.starts_with(r#"{"messages":[{"role":"user""#), "{json}");
        let back: AgentContext = serde_json::from_str(&json).unwrap();
        assert_eq!(back.messages(), ctx.messages());
        assert_eq!(back.index_stats(), ctx.index_stats());
        assert_eq!(indices(&back.search(&SearchQuery::new("checkAuth"))), [0]);
        assert!(
            serde_json::from_str::<AgentContext>(r#"{"messages":[{"role":"robot"}]}"#).is_err()
        );
    }

    #[test]
    fn degenerate_queries() {
        let ctx = context(&[(Role::User, "hello world")]);
        for query in ["", "   ", "!!!", "zzz"] {
            let out = ctx.search(&SearchQuery::new(query));
            assert_eq!((out.hits.len(), out.total), (0, 0), "{query:?}");
        }
        let out = ctx.search(&SearchQuery::new("hello").limit(0));
        assert_eq!((out.hits.len(), out.total), (0, 1));
        for chars in [0, 1, usize::MAX] {
            let out = ctx.search(&SearchQuery::new("world").snippet_chars(chars));
            assert_eq!(
                out.hits[0].snippet.marked().matches("**world**").count(),
                1,
                "{chars}"
            );
        }
        let huge =
            "hello ".repeat(100_000) + &(0..5000).map(|i| format!("t{i} ")).collect::<String>();
        assert_eq!(
            ctx.search(&SearchQuery::new(huge).limit(usize::MAX)).total,
            1
        );
        assert_eq!(
            AgentContext::new().search(&SearchQuery::new("hello")).total,
            0
        );
    }
}

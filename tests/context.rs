//! Integration tests for `hello_tui::context` on a generated conversation:
//! the index is checked against brute-force references computed from the
//! same messages, and the capability is driven the way the kernel will.

use hello_tui::context::capability::{self, ContextError};
use hello_tui::context::tokenize::{Mode, terms, tokenize};
use hello_tui::context::{AgentContext, CallRef, Message, Role, SearchQuery};
use serde_json::{Value, json};

/// Deterministic generator (splitmix64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the", "kernel", "timeout", "session", "history", "cache", "render", "terminal", "screen",
    "retry", "backoff", "latency", "error", "config", "path", "user", "token", "index", "search",
    "result", "value",
];
const IDENTS: &[&str] = &[
    "parseConfig",
    "SessionStore",
    "user_id",
    "HTTPServer",
    "unwrap_or_else",
    "JSON.parse",
];
const ZH: &[&str] = &[
    "搜索结果按照相关度排序。",
    "数据库连接池已经耗尽。",
    "缓存命中率明显提高了。",
];
const ROLES: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::Assistant];

/// 3 000 messages of mixed prose, identifiers and Chinese, with needles
/// planted at known places: a unique identifier deep inside a long message
/// (index 1234), the phrase "quantum flux" exact once (2000) and scattered
/// once (2001), and a system prompt that must never be found.
fn corpus() -> AgentContext {
    let mut rng = Rng(0x5EED);
    let mut ctx = AgentContext::new();
    ctx.push(Message::system("system prompt: never search me zebrafish").with_timestamp_ms(0));
    for i in 1..3000u64 {
        let mut text = String::new();
        let segments = 8 + rng.next() % 20;
        for _ in 0..segments {
            match rng.next() % 10 {
                0..=5 => text.push_str(rng.pick(WORDS)),
                6..=8 => text.push_str(rng.pick(IDENTS)),
                _ => text.push_str(rng.pick(ZH)),
            }
            text.push(' ');
        }
        let role = ROLES[(i % 4) as usize];
        let text = match i {
            1234 => format!(
                "{}the frobnicateWidget helper lives here {}",
                "filler words ".repeat(60),
                text
            ),
            2000 => format!("{text} quantum flux"),
            2001 => format!("quantum {text} flux"),
            _ => text,
        };
        let mut message = Message::new(role, text).with_timestamp_ms(i);
        if i == 1500 {
            message = message.with_tool_call(CallRef {
                id: "call_9".into(),
                name: "code_action".into(),
                code: Some("result = spelunkArchive(path)".into()),
            });
        }
        ctx.push(message);
    }
    ctx
}

/// Each searchable message's terms and length, straight from the tokeniser.
fn reference_docs(ctx: &AgentContext) -> Vec<(usize, Vec<String>, f64)> {
    ctx.messages()
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role != Role::System)
        .map(|(i, m)| {
            let text = m.searchable_text();
            let len = f64::from(tokenize(&text, Mode::Document, |_| {}));
            (i, terms(&text, Mode::Document), len)
        })
        .collect()
}

/// Textbook BM25 (k1 = 1.2, b = 0.75) for one term in one message.
fn bm25_reference(docs: &[(usize, Vec<String>, f64)], term: &str, doc: usize) -> f64 {
    let n = docs.len() as f64;
    let df = docs
        .iter()
        .filter(|d| d.1.iter().any(|t| t == term))
        .count() as f64;
    let avg = docs.iter().map(|d| d.2).sum::<f64>() / n;
    let Some((_, doc_terms, len)) = docs.iter().find(|d| d.0 == doc) else {
        return f64::NAN;
    };
    let tf = doc_terms.iter().filter(|t| *t == term).count() as f64;
    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / avg))
}

#[test]
fn single_term_totals_and_scores_match_brute_force() {
    let ctx = corpus();
    let docs = reference_docs(&ctx);
    for word in ["kernel", "retry", "sessionstore", "parse", "http"] {
        let expected = docs
            .iter()
            .filter(|d| d.1.iter().any(|t| t == word))
            .count();
        let out = ctx.search(&SearchQuery::new(word).limit(3));
        assert_eq!(out.total, expected, "total for {word}");
        assert!(expected > 0);
        let top = &out.hits[0];
        let reference = bm25_reference(&docs, word, top.id.0);
        assert!(
            (f64::from(top.score) - reference).abs() < 1e-3 * reference.max(1.0),
            "{word}: {} vs {reference}",
            top.score
        );
        assert!(out.hits.windows(2).all(|w| w[0].score >= w[1].score));
    }
}

#[test]
fn planted_needles_are_found_and_highlighted() {
    let ctx = corpus();
    for query in ["frobnicateWidget", "frobnicate widget", "FROBNICATE_WIDGET"] {
        let out = ctx.search(&SearchQuery::new(query));
        assert_eq!(out.total, 1, "{query}");
        let hit = &out.hits[0];
        assert_eq!(hit.id.0, 1234);
        assert!(
            hit.snippet.marked().contains("**frobnicateWidget**"),
            "{}",
            hit.snippet.marked()
        );
        assert!(
            hit.snippet.text.starts_with('…'),
            "the needle is deep in the message"
        );
    }
    let out = ctx.search(&SearchQuery::new("spelunkArchive"));
    assert_eq!(out.hits.iter().map(|h| h.id.0).collect::<Vec<_>>(), [1500]);

    let out = ctx.search(&SearchQuery::new("quantum flux"));
    assert_eq!(
        out.hits.iter().map(|h| h.id.0).take(2).collect::<Vec<_>>(),
        [2000, 2001]
    );
    assert!(ctx.search(&SearchQuery::new("zebrafish")).hits.is_empty());
}

#[test]
fn every_highlight_is_a_query_term_and_roles_filter() {
    let ctx = corpus();
    for (query, role) in [
        ("kernel timeout", Some(Role::Tool)),
        ("缓存命中率", None),
        ("user_id", Some(Role::User)),
    ] {
        let out = ctx.search(&SearchQuery::new(query).role(role).limit(20));
        assert!(!out.hits.is_empty(), "{query}");
        let query_terms = terms(query, Mode::Query);
        for hit in &out.hits {
            if let Some(role) = role {
                assert_eq!(hit.role, role);
            }
            let chars: Vec<char> = hit.snippet.text.chars().collect();
            assert_eq!(
                hit.snippet.highlights.len(),
                hit.snippet.char_highlights.len()
            );
            for (bytes, chars_range) in hit
                .snippet
                .highlights
                .iter()
                .zip(&hit.snippet.char_highlights)
            {
                let by_chars: String = chars[chars_range.clone()].iter().collect();
                assert_eq!(by_chars, hit.snippet.text[bytes.clone()]);
                let found = terms(&by_chars, Mode::Document);
                assert!(
                    found.iter().any(|t| query_terms.contains(t)),
                    "{by_chars:?} in {query}"
                );
            }
        }
    }
}

#[test]
fn capability_calls_work_on_the_big_conversation() {
    let ctx = corpus();
    let state = json!({"alive": true, "variables": [{"name": "x"}]});
    let last = capability::call(&ctx, "slice", &json!([-5]), Value::Null).unwrap();
    let idx: Vec<u64> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, [2995, 2996, 2997, 2998, 2999]);
    assert_eq!(last["total"], 3000);

    let summary = capability::call(&ctx, "summarize", &Value::Null, state.clone()).unwrap();
    assert_eq!(summary["total_messages"], 3000);
    assert_eq!(summary["message_counts"]["user"], ctx.count(Role::User));
    assert_eq!(summary["runtime_variables"], 1);

    let found = capability::call(
        &ctx,
        "search",
        &json!({"query": "数据库 连接池", "limit": 3}),
        Value::Null,
    )
    .unwrap();
    assert_eq!(found["results"].as_array().unwrap().len(), 3);
    assert!(found["total"].as_u64().unwrap() > 3);
    assert!(
        found["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("数据库连接池")
    );

    let current = capability::call(&ctx, "current", &Value::Null, state.clone()).unwrap();
    assert_eq!(current["messages"].as_array().unwrap().len(), 3000);
    assert_eq!(current["runtime_state"], state);

    let err = capability::call(&ctx, "search", &json!({"query": ["x"]}), Value::Null).unwrap_err();
    assert!(matches!(
        err,
        ContextError::InvalidArgument {
            action: "search",
            ..
        }
    ));
}

#[test]
fn persisted_context_searches_identically() {
    let ctx = corpus();
    let json = serde_json::to_string(&ctx).unwrap();
    let back: AgentContext = serde_json::from_str(&json).unwrap();
    assert_eq!(back.index_stats(), ctx.index_stats());
    for query in ["kernel timeout", "SessionStore", "搜索结果", "the"] {
        let q = SearchQuery::new(query).limit(25);
        assert_eq!(back.search(&q), ctx.search(&q), "{query}");
    }
}

#[test]
fn garbage_input_never_panics() {
    let mut rng = Rng(7);
    let mut ctx = AgentContext::new();
    for _ in 0..300 {
        let len = (rng.next() % 400) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        ctx.push(Message::tool(text.clone()));
        let query: String = text.chars().take(12).collect();
        let out = ctx.search(&SearchQuery::new(query).snippet_chars((rng.next() % 50) as usize));
        for hit in &out.hits {
            assert!(
                hit.snippet
                    .highlights
                    .iter()
                    .all(|r| hit.snippet.text.get(r.clone()).is_some())
            );
        }
    }
    let huge = "x".repeat(2_000_000) + " needle";
    ctx.push(Message::user(huge));
    let out = ctx.search(&SearchQuery::new("needle"));
    assert_eq!(
        out.hits[0]
            .snippet
            .marked()
            .chars()
            .rev()
            .take(10)
            .collect::<String>(),
        "**eldeen**"
    );
}

use std::collections::HashSet;

use proptest::prelude::*;

use super::compact::{extractive, plan, summary_cap};
use super::*;
use crate::agent::conversation::{Conversation, SNAPSHOT_SHRUNK, user_content};
use crate::agent::provider::{ChatMessage, ToolCall, ToolSpec};
use crate::context::SharedContext;
use crate::tokens::ContextWindow;

fn window(tokens: usize) -> ContextWindow {
    ContextWindow::resolve(Some(tokens), None, "local", Some(500), None)
}

fn tools() -> Vec<ToolSpec> {
    vec![crate::agent::turn::code_action_tool()]
}

fn user(text: &str) -> ChatMessage {
    ChatMessage::User {
        content: text.into(),
    }
}

fn assistant(text: &str) -> ChatMessage {
    ChatMessage::Assistant {
        thinking: Vec::new(),
        content: Some(text.into()),
        tool_calls: Vec::new(),
    }
}

fn result(id: &str, out: &str) -> ChatMessage {
    ChatMessage::Tool {
        tool_call_id: id.into(),
        content: serde_json::json!({"ok": true, "stdout": out}).to_string(),
    }
}

fn conversation(messages: impl IntoIterator<Item = ChatMessage>) -> Conversation {
    let mut c = Conversation::new(SharedContext::default(), None);
    for m in messages {
        c.push(m);
    }
    c
}

fn system_text(prompt: &Prompt) -> &str {
    match &prompt.request.messages[0] {
        ChatMessage::System { content } => content,
        other => panic!("first message is not the system prompt: {other:?}"),
    }
}

/// Every tool message answers a call made earlier in the same request,
/// and every call made is answered.
fn assert_calls_paired(messages: &[ChatMessage]) {
    let mut open: HashSet<&str> = HashSet::new();
    for m in messages {
        match m {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "a call was left without its result");
                open.extend(tool_calls.iter().map(|c| c.id.as_str()));
            }
            ChatMessage::Tool { tool_call_id, .. } => {
                assert!(
                    open.remove(tool_call_id.as_str()),
                    "result {tool_call_id} sent without its call"
                );
            }
            _ => assert!(open.is_empty(), "a call was left without its result"),
        }
    }
}

fn long(n: usize, word: &str) -> String {
    format!("{word} ").repeat(n)
}

#[test]
fn a_short_conversation_is_sent_whole() {
    let c = conversation([user("hi"), assistant("hello"), user("again")]);
    let p = assemble(&c, None, "SYSTEM", &tools(), &window(8000));
    assert_eq!(p.request.messages.len(), 4);
    assert!(p.omitted.is_empty());
    assert_eq!(system_text(&p), "SYSTEM");
    assert!(p.tokens <= p.budget);
    assert_eq!(p.request.tools, tools());
}

#[test]
fn old_messages_leave_the_prompt_and_one_note_names_their_context_range() {
    let mut messages = Vec::new();
    for i in 0..100 {
        messages.push(user(&format!("question {i} {}", long(60, "words"))));
        messages.push(assistant(&format!("answer {i} {}", long(60, "more"))));
    }
    messages.push(user("the last question"));
    let c = conversation(messages);
    let w = window(4000);
    let p = assemble(&c, None, "SYSTEM", &tools(), &w);
    assert!(
        p.tokens <= w.prompt_budget(),
        "{} > {}",
        p.tokens,
        w.prompt_budget()
    );
    assert_eq!(p.omitted.len(), 1);
    let r = p.omitted[0].clone();
    assert_eq!(r.start, 0);
    // Context indexes: every message here is stored, so they match.
    assert_eq!(r.end, p.kept_from);
    let note = system_text(&p);
    assert!(note.contains(OMITTED_HEADING), "{note}");
    assert!(
        note.contains(&format!(
            "{} earlier messages (context indexes 0–{})",
            r.end,
            r.end - 1
        )),
        "{note}"
    );
    assert!(
        note.contains(&format!("context.slice(0, {})", r.end)),
        "{note}"
    );
    assert!(note.contains("context.search("), "{note}");
    // The newest messages are kept verbatim and in order.
    let last = p.request.messages.last().unwrap();
    assert_eq!(last, &user("the last question"));
    assert_eq!(&p.request.messages[1], &c.messages()[p.kept_from]);
    assert!(p.sections.iter().any(|s| s.kind == SectionKind::Omitted));
}

#[test]
fn a_tool_call_is_never_separated_from_its_results() {
    for size in [1500, 1700, 1900, 2100, 2300, 2600, 3000] {
        let mut messages = vec![user("go")];
        for i in 0..30 {
            let id = format!("c{i}");
            messages.push(ChatMessage::Assistant {
                thinking: Vec::new(),
                content: Some("two cells".into()),
                tool_calls: vec![
                    ToolCall {
                        id: format!("{id}a"),
                        name: "code_action".into(),
                        arguments: "{\"code\":\"1\"}".into(),
                    },
                    ToolCall {
                        id: format!("{id}b"),
                        name: "code_action".into(),
                        arguments: "{\"code\":\"2\"}".into(),
                    },
                ],
            });
            messages.push(result(&format!("{id}a"), &long(40, "out")));
            messages.push(result(&format!("{id}b"), &long(40, "put")));
        }
        let c = conversation(messages);
        let p = assemble(&c, None, "SYSTEM", &tools(), &window(size));
        assert!(!p.omitted.is_empty(), "{size}: something must be left out");
        assert_calls_paired(&p.request.messages[1..]);
        // The current user message stays even though its turn is long.
        assert_eq!(p.request.messages[1], user("go"), "{size}");
    }
}

#[test]
fn only_the_latest_snapshot_is_sent_in_full() {
    let snap = |n: usize| format!("# Snapshot {n}\n{}", long(50, "file"));
    let c = conversation([
        user(&user_content("first", Some(&snap(1)))),
        assistant("ok"),
        user(&user_content("second", Some(&snap(2)))),
    ]);
    let p = assemble(&c, None, "SYSTEM", &tools(), &window(8000));
    let texts: Vec<String> = p
        .request
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { content } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts[0], format!("first\n\n{SNAPSHOT_SHRUNK}"));
    assert!(texts[1].contains("# Snapshot 2"));
    let kinds: Vec<SectionKind> = p.sections.iter().map(|s| s.kind).collect();
    assert!(kinds.contains(&SectionKind::Snapshot), "{kinds:?}");
}

/// Issue 25, route 11: the summary (which a forged session file can carry
/// into `--resume`) is never system text: it opens the history as a
/// user-role message, labelled as a summary of earlier conversation.
#[test]
fn the_summary_replaces_what_it_covers_and_the_resume_notice_is_told() {
    let mut c = conversation([
        user("the secret is 42"),
        assistant("noted"),
        user("what now?"),
    ]);
    c.compact("- the user said the secret is 42".into(), 2, true, None);
    let p = assemble(&c, None, "SYSTEM", &tools(), &window(8000));
    let system = system_text(&p);
    assert!(!system.contains(SUMMARY_HEADING), "{system}");
    assert!(!system.contains("the secret is 42"), "{system}");
    assert!(!system.contains(RESUME_NOTE));
    // It opens the first user message: no two user messages in a row.
    let ChatMessage::User { content: first } = &p.request.messages[1] else {
        panic!("the summary is user-role: {:?}", p.request.messages[1]);
    };
    assert!(first.contains("not instructions"), "{first}");
    assert!(
        first.starts_with(&summary_text("- the user said the secret is 42"))
            && first.ends_with("what now?"),
        "{first}"
    );
    // Covered messages are not sent again; the note still points at them.
    assert_eq!(p.request.messages.len(), 2);
    assert_eq!(p.omitted, vec![0..2]);
    assert!(
        system.contains("The summary that opens the conversation covers"),
        "{system}"
    );
    // The parts a caching provider marks: the prompt, the note.
    let parts = system_parts(system);
    assert_eq!(parts.prompt, "SYSTEM");
    assert!(
        parts
            .omitted
            .is_some_and(|n| n.starts_with(OMITTED_HEADING))
    );
    let joined = [Some(parts.prompt), parts.omitted]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
    assert_eq!(joined, system);
    let plain = system_parts("SYSTEM");
    assert_eq!((plain.prompt, plain.omitted), ("SYSTEM", None));
}

/// One id names a message everywhere: F2's summary and omitted labels,
/// the note the model reads, and the context store (what `context.slice`
/// returns) all agree, tool-call-only assistant messages included (they
/// are in the store too, naming the call they made).
#[test]
fn f2_the_note_and_the_store_name_messages_by_one_id() {
    let call = |id: &str| ChatMessage::Assistant {
        thinking: Vec::new(),
        content: None,
        tool_calls: vec![ToolCall {
            id: id.into(),
            name: "code_action".into(),
            arguments: "{\"code\":\"1\"}".into(),
        }],
    };
    let mut messages = Vec::new();
    for i in 0..12 {
        messages.push(user(&format!("question {i} {}", long(60, "words"))));
        messages.push(call(&format!("c{i}")));
        messages.push(result(&format!("c{i}"), &long(60, "out")));
        messages.push(assistant(&long(60, "answer")));
    }
    messages.push(user("the last question"));
    let mut c = conversation(messages);
    assert_eq!(c.context().len(), c.messages().len());
    c.context().read(|store| {
        for (id, sent) in c.messages().iter().enumerate() {
            let stored = store.get(id).map(|m| m.role.as_str()).unwrap_or("none");
            let role = match sent {
                ChatMessage::System { .. } => "system",
                ChatMessage::User { .. } => "user",
                ChatMessage::Assistant { .. } => "assistant",
                ChatMessage::Tool { .. } => "tool",
            };
            assert_eq!(stored, role, "message {id}");
        }
        let named = store.get(1).and_then(|m| m.tool_call.as_ref());
        assert_eq!(named.map(|t| t.id.as_str()), Some("c0"));
    });
    c.compact("- two questions".into(), 8, false, None);
    let p = assemble(&c, None, "SYSTEM", &tools(), &window(2500));
    let label = |kind| {
        p.sections
            .iter()
            .find(|s| s.kind == kind)
            .map(|s| s.label.clone())
            .unwrap_or_default()
    };
    assert_eq!(label(SectionKind::Summary), "summary · ctx 0–7, extractive");
    let omitted = p.omitted.clone();
    assert_eq!(omitted[0].start, 0, "{omitted:?}");
    let count: usize = omitted.iter().map(ExactSizeIterator::len).sum();
    assert_eq!(
        label(SectionKind::Omitted),
        format!("omitted {count} · ctx {}", spans(&omitted))
    );
    // The note the model reads names the same ids, and the first message
    // sent after the system prompt is the one right after them.
    assert!(system_text(&p).contains(&format!("context indexes {}", spans(&omitted))));
    assert_eq!(omitted.last().map(|r| r.end), Some(p.kept_from));
}

#[test]
fn the_gauge_reads_like_the_status_bar() {
    assert_eq!(gauge(52_300, 128_000), "ctx 40% · 52k/128k");
    assert_eq!(gauge(950, 8_000), "ctx 11% · 950/8k");
    assert_eq!(gauge(0, 0), "ctx 0% · 0/0");
}

#[test]
fn compaction_plans_to_keep_the_recent_half_and_never_the_current_message() {
    let mut messages = Vec::new();
    for i in 0..60 {
        messages.push(user(&format!("q{i} {}", long(100, "w"))));
        messages.push(assistant(&long(100, "a")));
    }
    messages.push(user("now"));
    let c = conversation(messages);
    let w = window(6000);
    let p = assemble(&c, None, "SYSTEM", &tools(), &w);
    assert!(p.needs_compaction(&w));
    let through = plan(&c, &p, &w).unwrap();
    assert!(through > 0 && through < c.messages().len() - 1, "{through}");
    let mut c = c;
    let summary = extractive(&c, 0, through, None, summary_cap(&w));
    c.compact(summary.clone(), through, false, None);
    let after = assemble(&c, None, "SYSTEM", &tools(), &w);
    assert!(
        !after.needs_compaction(&w),
        "{} tokens left",
        after.uncompacted
    );
    assert!(matches!(&after.request.messages[1],
        ChatMessage::User { content } if content.starts_with(&summary_text(&summary))));
    // Deterministic: the same input gives the same summary.
    assert_eq!(extractive(&c, 0, through, None, summary_cap(&w)), summary);
    assert!(summary.contains("[#0 user] q0"), "{summary}");
    assert!(c.counter().count(&summary) <= summary_cap(&w) + 20);
}

#[derive(Debug, Clone)]
enum Step {
    User(usize),
    Answer(usize),
    Cells(Vec<usize>),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..400).prop_map(Step::User),
        (1usize..400).prop_map(Step::Answer),
        prop::collection::vec(1usize..300, 1..4).prop_map(Step::Cells),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_request_fits_and_keeps_calls_with_results(
        steps in prop::collection::vec(step(), 1..80),
        size in 2_000usize..12_000,
    ) {
        let mut messages = Vec::new();
        let mut n = 0;
        for s in steps {
            match s {
                Step::User(words) => messages.push(user(&long(words, "ask"))),
                Step::Answer(words) => messages.push(assistant(&long(words, "say"))),
                Step::Cells(outs) => {
                    let ids: Vec<String> = outs.iter().map(|_| { n += 1; format!("id{n}") }).collect();
                    messages.push(ChatMessage::Assistant {
                        thinking: Vec::new(),
                        content: None,
                        tool_calls: ids.iter().map(|id| ToolCall {
                            id: id.clone(), name: "code_action".into(), arguments: "{\"code\":\"x\"}".into(),
                        }).collect(),
                    });
                    for (id, words) in ids.iter().zip(outs) {
                        messages.push(result(id, &long(words, "out")));
                    }
                }
            }
        }
        let c = conversation(messages);
        let w = window(size);
        let p = assemble(&c, None, "SYSTEM", &tools(), &w);
        let current = p.current.map_or(0, |u| c.entries()[u].full_tokens);
        // Whenever the current message fits at all, the whole request does.
        if current + 1500 < w.prompt_budget() {
            prop_assert!(p.tokens <= w.prompt_budget(), "{} > {}", p.tokens, w.prompt_budget());
        }
        assert_calls_paired(&p.request.messages[1..]);
        let left: usize = p.omitted.iter().map(ExactSizeIterator::len).sum();
        prop_assert_eq!(left > 0, system_text(&p).contains(OMITTED_HEADING));
    }
}

fn scripted(turn: serde_json::Value) -> crate::agent::provider::ScriptedProvider {
    let script = serde_json::json!({"chunk_chars": 4096, "delay_ms": 0, "turns": [turn]});
    crate::agent::provider::ScriptedProvider::from_json(&script.to_string()).unwrap()
}

/// The model's summary is hostile input too: a flood is cut to the cap, and
/// no text at all (here: a tool call, with tools disabled) falls back to the
/// extractive summary.
#[tokio::test]
async fn a_summary_is_capped_and_an_empty_one_falls_back() {
    let mut messages = Vec::new();
    for i in 0..40 {
        messages.push(user(&format!("q{i} {}", long(100, "w"))));
        messages.push(assistant(&long(100, "a")));
    }
    messages.push(user("now"));
    let w = window(6000);
    let cap = summary_cap(&w);

    let mut c = conversation(messages.clone());
    let flood = "summary words ".repeat(20_000);
    let done = compact::compact(
        &scripted(serde_json::json!({"text": flood})),
        &mut c,
        40,
        None,
        &w,
    )
    .await;
    assert!(done.by_model, "{done:?}");
    let summary = &c.compaction().unwrap().summary;
    assert!(
        c.counter().count(summary) <= cap + cap / 2,
        "{}",
        summary.len()
    );
    assert!(summary.contains("characters dropped"));

    let mut c = conversation(messages);
    let call =
        serde_json::json!({"tool_calls": [{"name": "code_action", "arguments": {"code": "1"}}]});
    let done = compact::compact(&scripted(call), &mut c, 40, Some("auth"), &w).await;
    assert!(!done.by_model);
    assert_eq!(
        done.fallback_reason.as_deref(),
        Some("the model returned no summary text")
    );
    assert!(
        c.compaction()
            .unwrap()
            .summary
            .starts_with("(extractive summary")
    );
    assert_eq!(c.compaction().unwrap().through, 40);
}

/// The MCP tool lines the front end sets go into the system prompt's
/// cached part (before any summary or note), for F2 and the request alike.
#[test]
fn the_kernels_tool_lines_join_the_cached_system_prompt() {
    let mut c = conversation([user("hi")]);
    let before = crate::agent::turn::next_prompt(&c, &window(4000));
    assert!(!system_text(&before).contains("## MCP tools"));
    let section = "## MCP tools\n\n- `mcp.gh`: 1 tools\n- `mcp.gh.search(q)`: Search";
    c.set_kernel_tools(Some(section.to_owned()));
    let prompt = crate::agent::turn::next_prompt(&c, &window(4000));
    let system = system_text(&prompt);
    assert!(system.starts_with(crate::agent::turn::SYSTEM_PROMPT.trim_end()));
    assert!(
        system_parts(system).prompt.trim_end().ends_with(section),
        "{system}"
    );
    let preview = crate::agent::turn::preview_prompt(&c, "next", None, &window(4000));
    assert_eq!(system_text(&preview), system);
    assert!(prompt.tokens > before.tokens, "the lines are counted");
}

/// After a message the model never answered, F2's preview of the next one
/// is what is then sent: the same note between the two, counted the same
/// (a reviewer found the preview showed two user messages in a row).
#[test]
fn the_preview_after_an_unanswered_message_is_what_is_sent() {
    let mut c = conversation([user("first"), assistant("a"), user("never answered")]);
    let system = "system";
    let previewed = assemble(&c, Some(&user("next")), system, &tools(), &window(8_000));
    c.push(user("next"));
    let sent = assemble(&c, None, system, &tools(), &window(8_000));
    assert_eq!(previewed.request.messages, sent.request.messages);
    assert_eq!(previewed.tokens, sent.tokens);
    let roles: Vec<bool> = sent
        .request
        .messages
        .iter()
        .map(|m| matches!(m, ChatMessage::User { .. }))
        .collect();
    assert!(
        !roles.windows(2).any(|w| w[0] && w[1]),
        "two user messages in a row: {:?}",
        sent.request.messages
    );
}

//! Prompt assembly benchmark (`cargo bench --bench prompt`):
//!
//! 1. assembly time per turn for a 10 000-message conversation (the turn
//!    loop assembles before every model call);
//! 2. a 500-turn scripted session (a prompt with a ~2 000-character
//!    snapshot, a ~1 200-character answer, a cell every third turn) in a
//!    32k window: prompt tokens per turn and total tokens sent, against
//!    what the loop sent before (system + every message verbatim, every
//!    snapshot in full), both counted with o200k in the same run;
//! 3. tokenizer cost per turn (counting the messages a turn adds).
//!
//! Auto-compaction runs as in the turn loop, with the extractive summary
//! (no model here).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hello_tui::agent::conversation::{Conversation, message_tokens, user_content};
use hello_tui::agent::prompt::{self, compact};
use hello_tui::agent::provider::{ChatMessage, ToolCall};
use hello_tui::agent::turn::{SYSTEM_PROMPT, code_action_tool, next_prompt};
use hello_tui::context::SharedContext;
use hello_tui::tokens::{ContextWindow, PER_MESSAGE_OVERHEAD, TokenCounter};

const ASSEMBLY_MESSAGES: usize = 10_000;
const ASSEMBLY_ROUNDS: usize = 300;
const TURNS: usize = 500;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort_unstable();
    let rank = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples.get(rank).copied().unwrap_or_default()
}

fn snapshot(turn: usize) -> String {
    let mut s = format!(
        "# Runtime context\n## Active editor\nsrc/auth/session_{turn}.ts, line {turn}\n```ts\n"
    );
    while s.len() < 2_000 {
        s.push_str(&format!(
            "export function check{turn}(user: User) {{ return user.role === 'admin' && user.id > {turn}; }}\n"
        ));
    }
    s.push_str("```\n");
    s
}

fn answer(turn: usize) -> String {
    let mut s = format!("Step {turn}: ");
    while s.len() < 1_200 {
        s.push_str(
            "The session token is refreshed before the check, so the guard sees the new role. ",
        );
    }
    s
}

/// The messages of turn `turn` after its prompt.
fn turn_messages(turn: usize) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    if turn.is_multiple_of(3) {
        let id = format!("call_{turn}");
        out.push(ChatMessage::Assistant {
            thinking: Vec::new(),
            content: None,
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "code_action".into(),
                arguments: serde_json::json!({"code": format!("text = fs.read('src/auth/session_{turn}.ts')\nprint(text[:400])")}).to_string(),
            }],
        });
        out.push(ChatMessage::Tool {
            tool_call_id: id,
            content: serde_json::json!({"ok": true, "stdout": snapshot(turn)[..600].to_owned(), "state": {"alive": true, "variables": [{"name": "text", "type": "str"}], "unchanged": 4, "total": 5}}).to_string(),
        });
    }
    out.push(ChatMessage::Assistant {
        thinking: Vec::new(),
        content: Some(answer(turn)),
        tool_calls: Vec::new(),
    });
    out
}

fn prompt_text(turn: usize) -> String {
    format!("turn {turn}: why does the guard reject the refreshed session in step {turn}?")
}

fn main() {
    let started = Instant::now();
    let counter = Arc::new(TokenCounter::for_model("gpt-4o"));
    black_box(counter.count("warm up the o200k tables"));
    println!(
        "o200k first use (loads the BPE): {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    // 1. Assembly with 10 000 messages.
    for (label, window) in [
        (
            "128k window",
            ContextWindow::resolve(Some(128_000), None, "gpt-4o", None, None),
        ),
        (
            "8k window",
            ContextWindow::resolve(Some(8_000), None, "gpt-4o", None, None),
        ),
    ] {
        let mut conversation = Conversation::new(SharedContext::default(), None);
        conversation.set_counter(counter.clone());
        let mut turn = 0;
        while conversation.messages().len() < ASSEMBLY_MESSAGES {
            turn += 1;
            conversation.push(ChatMessage::User {
                content: user_content(&prompt_text(turn), Some(&snapshot(turn))),
            });
            for m in turn_messages(turn) {
                conversation.push(m);
            }
        }
        let mut samples = Vec::with_capacity(ASSEMBLY_ROUNDS);
        let mut kept = 0;
        for _ in 0..ASSEMBLY_ROUNDS {
            let t = Instant::now();
            let p = black_box(next_prompt(&conversation, &window));
            samples.push(t.elapsed());
            kept = p.request.messages.len();
        }
        let p50 = percentile(&mut samples, 0.5);
        let p99 = percentile(&mut samples, 0.99);
        println!(
            "assemble, {} messages, {label}: p50 {:.3} ms, p99 {:.3} ms ({kept} messages sent)",
            conversation.messages().len(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }

    // 2 and 3. The 500-turn session, new assembly vs sending everything.
    let window = ContextWindow::resolve(Some(32_000), None, "gpt-4o", None, None);
    let mut conversation = Conversation::new(SharedContext::default(), None);
    conversation.set_counter(counter.clone());
    let system = counter.count(SYSTEM_PROMPT) + PER_MESSAGE_OVERHEAD;
    let tools = prompt::tools_tokens(&counter, &[code_action_tool()]);
    let mut old_history = 0usize; // every message verbatim, snapshots included
    let (mut new_total, mut old_total) = (0u64, 0u64);
    let mut rows = Vec::new();
    let mut count_samples = Vec::new();
    let mut estimate_samples = Vec::new();
    let estimate = TokenCounter::estimate();
    let mut compactions = 0;
    let mut max_new = 0;
    for turn in 1..=TURNS {
        let user = ChatMessage::User {
            content: user_content(&prompt_text(turn), Some(&snapshot(turn))),
        };
        let rest = turn_messages(turn);
        // Tokenizer cost of the turn's messages (what push counts).
        let t = Instant::now();
        let mut turn_tokens = 0;
        for m in std::iter::once(&user).chain(&rest) {
            turn_tokens += PER_MESSAGE_OVERHEAD + black_box(message_tokens(&counter, m));
        }
        count_samples.push(t.elapsed());
        let user_full = PER_MESSAGE_OVERHEAD + message_tokens(&counter, &user);
        let t = Instant::now();
        for m in std::iter::once(&user).chain(&rest) {
            black_box(message_tokens(&estimate, m));
        }
        estimate_samples.push(t.elapsed());

        conversation.push(user);
        // The first call of the turn, as the loop makes it.
        let mut p = next_prompt(&conversation, &window);
        if p.needs_compaction(&window)
            && let Some(through) = compact::plan(&conversation, &p, &window)
        {
            let start = conversation.compaction().map_or(0, |c| c.through);
            let previous = conversation.compaction().map(|c| c.summary.clone());
            let summary = compact::extractive(
                &conversation,
                start,
                through,
                previous.as_deref(),
                compact::summary_cap(&window),
            );
            conversation.compact(summary, through, false, None);
            compactions += 1;
            p = next_prompt(&conversation, &window);
        }
        let old = system + tools + 3 + old_history + user_full;
        new_total += p.tokens as u64;
        old_total += old as u64;
        max_new = max_new.max(p.tokens);
        if [1, 10, 50, 100, 200, 300, 400, 500].contains(&turn) {
            rows.push((
                turn,
                p.tokens,
                old,
                p.omitted.iter().map(ExactSizeIterator::len).sum::<usize>(),
            ));
        }
        old_history += turn_tokens;
        for m in rest {
            conversation.push(m);
        }
    }
    println!(
        "\n500-turn session, 32k window (budget {} tokens), o200k:",
        window.prompt_budget()
    );
    println!(
        "| turn | prompt tokens (assembled) | prompt tokens (everything, as before) | context messages left out |"
    );
    println!("|---:|---:|---:|---:|");
    for (turn, new, old, omitted) in rows {
        println!("| {turn} | {new} | {old} | {omitted} |");
    }
    println!(
        "total prompt tokens over 500 first calls: assembled {new_total}, everything {old_total} ({:.1}x less); largest assembled prompt {max_new}; {compactions} compactions",
        old_total as f64 / new_total as f64
    );
    let c50 = percentile(&mut count_samples, 0.5);
    let e50 = percentile(&mut estimate_samples, 0.5);
    println!(
        "tokenizer cost per turn (its new messages): o200k p50 {:.1} µs, estimate p50 {:.1} µs",
        c50.as_secs_f64() * 1e6,
        e50.as_secs_f64() * 1e6
    );
}

//! The snapshot's share of the model's window (issue 28): unless
//! `[snapshot] budget` is set, the snapshot gets at most a quarter of what
//! the window leaves after the answer's reserve, the system prompt and the
//! tool schema, and never more than the default budget. A fixed 12 000
//! characters on a 3 072-token local model left no room for the message.

use super::tools_tokens;
use crate::agent::provider::ToolSpec;
use crate::tokens::{ContextWindow, PER_MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter};

/// Characters per token the budget assumes: the estimate's own ratio for
/// ASCII text, and below what BPE vocabularies average on code, so the
/// snapshot rather undershoots its share than overshoots it.
pub const CHARS_PER_TOKEN: usize = 3;
/// The snapshot's share of the free room: one part in this many.
pub const SNAPSHOT_SHARE: usize = 4;

/// The snapshot's character budget and how it was chosen (F2 shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotBudget {
    pub chars: usize,
    /// Tokens the window leaves after the reserve, system prompt and tools
    /// (`None` when the budget was set).
    pub free_tokens: Option<usize>,
    /// `setting`, `default` (the share would be larger) or `¼ of free`.
    pub derivation: &'static str,
}

/// The snapshot budget for `window`: `setting` when the user set one, else
/// a [`SNAPSHOT_SHARE`] of the free tokens in [`CHARS_PER_TOKEN`]
/// characters each, at most `default`. `system` is the system message as
/// sent (the project's instructions included), counted by `counter`.
pub fn snapshot_budget(
    window: &ContextWindow,
    counter: &TokenCounter,
    system: &str,
    tools: &[ToolSpec],
    setting: Option<usize>,
    default: usize,
) -> SnapshotBudget {
    if let Some(chars) = setting {
        return SnapshotBudget {
            chars,
            free_tokens: None,
            derivation: "setting",
        };
    }
    let fixed = counter.corrected(
        PER_MESSAGE_OVERHEAD + counter.count(system) + tools_tokens(counter, tools) + REPLY_PRIMING,
    );
    let free = window.prompt_budget().saturating_sub(fixed);
    let share = free / SNAPSHOT_SHARE * CHARS_PER_TOKEN;
    SnapshotBudget {
        chars: share.min(default),
        free_tokens: Some(free),
        derivation: if share >= default {
            "default"
        } else {
            "¼ of free"
        },
    }
}

/// The system message's text as [`super::assemble`] sends it: the system
/// prompt and the project's instructions.
pub fn system_text(
    conversation: &crate::agent::conversation::Conversation,
    instructions: Option<&crate::agent::instructions::ProjectInstructions>,
) -> String {
    let mut system = conversation
        .system_prompt(crate::agent::turn::SYSTEM_PROMPT)
        .into_owned();
    if let Some(instructions) = instructions {
        system.push_str("\n\n");
        system.push_str(&instructions.text);
    }
    system
}

/// The budget a turn's snapshot gets (see [`snapshot_budget`]), with the
/// one tool and the default budget; `setting` is the user's budget, if
/// set. Sync: counts what the counter knows (F2 uses this).
pub fn for_window(
    window: &ContextWindow,
    counter: &TokenCounter,
    system: &str,
    setting: Option<usize>,
) -> SnapshotBudget {
    snapshot_budget(
        window,
        counter,
        system,
        &[crate::agent::turn::code_action_tool()],
        setting,
        crate::config::DEFAULT_SNAPSHOT_BUDGET,
    )
}

/// [`for_window`] after the server's tokenizer (if the counter has one)
/// counted the system message, so the share is of what the server counts.
pub async fn for_turn(
    window: &ContextWindow,
    counter: &TokenCounter,
    system: &str,
    setting: Option<usize>,
) -> SnapshotBudget {
    if setting.is_none() {
        counter.count(system);
        counter.learn().await;
    }
    for_window(window, counter, system, setting)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_gets_a_quarter_of_what_is_free_at_most_the_default() {
        let counter = TokenCounter::estimate();
        let system = "s".repeat(3000); // 1 000 estimated tokens
        let small = ContextWindow::resolve(Some(3072), None, "m", None, None);
        let b = snapshot_budget(&small, &counter, &system, &[], None, 12_000);
        // 3 072 − 768 reserve − 1 007 fixed = 1 297 free; a quarter, 3 chars a token.
        assert_eq!(b.free_tokens, Some(1297));
        assert_eq!(b.chars, 1297 / 4 * 3);
        assert_eq!(b.derivation, "¼ of free");
        let big = ContextWindow::resolve(Some(128_000), None, "m", None, None);
        let b = snapshot_budget(&big, &counter, &system, &[], None, 12_000);
        assert_eq!((b.chars, b.derivation), (12_000, "default"));
        let b = snapshot_budget(&small, &counter, &system, &[], Some(9000), 12_000);
        assert_eq!(
            (b.chars, b.derivation, b.free_tokens),
            (9000, "setting", None)
        );
        // A window the system prompt fills leaves the snapshot nothing.
        let tiny = ContextWindow::resolve(Some(1024), None, "m", None, None);
        assert_eq!(
            snapshot_budget(&tiny, &counter, &system, &[], None, 12_000).chars,
            0
        );
    }
}

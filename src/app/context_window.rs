//! The workbench's view of the model's context window: the status-bar
//! gauge, F2's preview of the next request, and `/compact`.
//!
//! All three read the agent's conversation, which a running turn holds
//! locked: they use `try_lock` and say so when a turn is busy with it,
//! rather than wait on the UI loop.

use super::composer::{self, Submission};
use super::state::AppState;
use crate::agent::prompt::Prompt;
use crate::agent::turn::preview_prompt;
use crate::overlays::request_preview::RequestView;
use crate::tokens::ContextWindow;
use crate::workbench::context_window::{pinned_prompt, window};

/// F2's view of the request Enter would send now (`json`: its messages as
/// the body's JSON). `Err` says why there is none to show.
pub fn request_view(state: &AppState, json: bool) -> Result<RequestView, &'static str> {
    preview(state).map(|(prompt, window)| {
        let text = if json {
            // What this provider sends: Anthropic's body is shaped otherwise.
            match state.workbench.agent.provider() {
                Some(provider) => {
                    let messages = provider.messages_json(&prompt.request);
                    serde_json::to_string_pretty(&messages).unwrap_or_default()
                }
                None => prompt.messages_text(),
            }
        } else {
            prompt.readable()
        };
        RequestView {
            gauge: prompt.gauge(),
            nearly_full: prompt.tokens * 100 >= prompt.window * 80,
            budget: format!("prompt budget {} ({})", prompt.budget, window.source),
            compacts_first: prompt.needs_compaction(&window),
            sections: prompt
                .sections
                .iter()
                .map(|s| (s.label.clone(), s.tokens))
                .collect(),
            lines: text.lines().count(),
            text,
        }
    })
}

/// The request Enter would send now: the composer's text (with pins) and
/// the latest snapshot. `Err` says why there is none to show.
pub fn preview(state: &AppState) -> Result<(Prompt, ContextWindow), &'static str> {
    let mut conversation = state
        .workbench
        .agent
        .conversation()
        .try_lock()
        .map_err(|_| "a turn is running; the preview is back when it ends")?;
    conversation.set_kernel_tools(state.workbench.agent.mcp.prompt_section());
    let text = state.conversation.composer.lines().join("\n");
    let prompt = match composer::parse(&text) {
        Submission::Prompt(prompt) => pinned_prompt(prompt, &state.workbench.pins),
        _ => pinned_prompt(String::new(), &state.workbench.pins),
    };
    let snapshot = state
        .workbench
        .snapshot
        .as_ref()
        .map(|v| v.rendered.markdown.as_str());
    let window = window(&state.workbench);
    Ok((
        preview_prompt(&conversation, &prompt, snapshot, &window),
        window,
    ))
}

//! The workbench's view of the model's context window: the status-bar
//! gauge, F2's preview of the next request, and `/compact`.
//!
//! All three read the agent's conversation, which a running turn holds
//! locked: they use `try_lock` and say so when a turn is busy with it,
//! rather than wait on the UI loop.

use super::agent::AgentUpdate;
use super::composer::{self, Submission};
use super::event::AppEvent;
use super::state::{AppState, Pin};
use crate::agent::conversation::with_pins;
use crate::agent::prompt::{Prompt, compact};
use crate::agent::setup;
use crate::agent::turn::{TurnEvent, next_prompt, preview_prompt};
use crate::overlays::request_preview::RequestView;
use crate::tokens::ContextWindow;
use crate::workbench::Workbench;

/// The prompt with pinned search results in a delimited block the model
/// can tell apart from what the user typed (what Enter sends). The block
/// goes in full only while its message is the current one.
pub fn pinned_prompt(prompt: String, pins: &[Pin]) -> String {
    with_pins(
        prompt,
        pins.iter().map(|p| (p.label.as_str(), p.text.as_str())),
    )
}

/// The window as known now: the server's answer once the first turn has
/// asked, else the setting, the known-model table or the default.
fn window(workbench: &Workbench) -> ContextWindow {
    workbench.agent.window().unwrap_or_else(|| {
        let s = &workbench.agent.model_settings(&workbench.settings);
        ContextWindow::resolve(
            s.context_window,
            None,
            s.model.as_deref().unwrap_or_default(),
            s.reserve_output,
            s.compact_at,
        )
    })
}

/// Recomputes the gauge from the next request (without a new message),
/// with the conversation's counter as it is (the turn task switches it to
/// the model's own). Keeps the last value while a turn holds the
/// conversation.
pub fn refresh_gauge(workbench: &mut Workbench) {
    let window = window(workbench);
    let Ok(mut conversation) = workbench.agent.conversation().try_lock() else {
        return;
    };
    conversation.set_kernel_tools(workbench.agent.mcp.prompt_section());
    let prompt = next_prompt(&conversation, &window);
    drop(conversation);
    workbench.agent.context_used = Some((prompt.tokens, prompt.window));
}

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

/// `/compact [focus]`: folds the older part of the conversation into a
/// summary now (the model writes it, tools disabled; extractive if it
/// cannot). The messages stay in `context`, search and the session.
pub fn compact_command(workbench: &mut Workbench, focus: &str) {
    let (Some(provider), Some(events)) =
        (workbench.agent.provider(), workbench.agent.events.clone())
    else {
        workbench.notice("/compact needs a model to write the summary.");
        return;
    };
    if workbench.agent.busy {
        workbench.notice("/compact waits for the turn to end; try again then.");
        return;
    }
    let focus = Some(focus.trim().to_owned()).filter(|f| !f.is_empty());
    // Held from now until the summary is in: a `/new` (or another
    // `/compact`) meanwhile finds the conversation busy instead of having
    // this summary land in the next conversation.
    let Ok(mut conversation) = workbench.agent.conversation().clone().try_lock_owned() else {
        workbench.notice("The conversation is busy; try /compact again in a moment.");
        return;
    };
    let window_cell = workbench.agent.window_cell();
    let settings = workbench.agent.model_settings(&workbench.settings);
    workbench.notice("Compacting the conversation…");
    tokio::spawn(async move {
        let send = |update: AgentUpdate| {
            let _ = events.send(AppEvent::Agent(update));
        };
        let window = window_cell
            .get_or_init(|| setup::context_window(&settings, &|n| std::env::var(n).ok()))
            .await
            .clone();
        let prompt = next_prompt(&conversation, &window);
        let Some(through) = compact::plan(&conversation, &prompt, &window) else {
            send(AgentUpdate::Notice(
                "Nothing to compact yet: the recent messages fit the window as they are.".into(),
            ));
            return;
        };
        let done = compact::compact(
            &*provider,
            &mut conversation,
            through,
            focus.as_deref(),
            &window,
        )
        .await;
        let prompt = next_prompt(&conversation, &window);
        send(AgentUpdate::Turn(TurnEvent::Compacted(done)));
        send(AgentUpdate::Turn(TurnEvent::Prompt {
            tokens: prompt.tokens,
            window: prompt.window,
            omitted: prompt.omitted.iter().map(ExactSizeIterator::len).sum(),
        }));
        if let Some(error) = conversation.session_error.take() {
            send(AgentUpdate::Notice(error));
        }
    });
}

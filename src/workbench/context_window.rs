//! The model's window as the workbench sees it: the gauge in the status bar, pins attached to a prompt, and `/compact`.

use crate::agent::conversation::with_pins;
use crate::agent::prompt::budget;
use crate::agent::prompt::compact;
use crate::agent::prompt::{Prompt, PromptSection};
use crate::agent::setup;
use crate::agent::turn::{TurnEvent, next_prompt, preview_prompt};
use crate::tokens::{ContextWindow, TokenCounter};
use crate::workbench::Pin;
use crate::workbench::Workbench;
use crate::workbench::agent::AgentUpdate;
use crate::workbench::event::AppEvent;
use crate::workbench::mentions::{self, Attached};
use crate::workbench::submission::{self, Submission};

/// The prompt with pinned search results in a delimited block the model
/// can tell apart from what the user typed (what Enter sends). The block
/// goes in full only while its message is the current one.
pub(crate) fn pinned_prompt(prompt: String, pins: &[Pin]) -> String {
    with_pins(
        prompt,
        pins.iter().map(|p| (p.label.as_str(), p.text.as_str())),
    )
}

/// The message Enter sends for `prompt`: what was typed, then one block
/// with the search pane's `pins` and the files the prompt mentions
/// (`@path`, `workbench::mentions`); what could not go is said in the
/// notes.
pub(crate) fn message(workbench: &Workbench, prompt: String, pins: &[Pin]) -> (String, Attached) {
    let mentioned = mentions::attach(workbench, &prompt);
    let all: Vec<Pin> = pins.iter().chain(&mentioned.pins).cloned().collect();
    (pinned_prompt(prompt, &all), mentioned)
}

/// The files a draft mentions as F2 shows them: each one's label and
/// tokens, and what could not go.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Mentioned {
    pub files: Vec<(String, usize)>,
    pub notes: Vec<String>,
    /// Tokens of the context `SessionStart` hooks added, which go with
    /// this message (`UserPromptSubmit` hooks may add more on Enter).
    pub hook_context: Option<usize>,
}

/// The window as known now: the server's answer once the first turn has
/// asked, else the setting, the known-model table or the default.
pub(crate) fn window(workbench: &Workbench) -> ContextWindow {
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

/// Sets the snapshot budget the TUI builds its scene with to the
/// snapshot's share of the window as known now (unless the user set one),
/// so F2 and the gauge show the snapshot the next turn sends. Called when
/// the window becomes known (a turn's end, an overflow answer) and at
/// start-up.
pub fn fit_snapshot_budget(workbench: &mut Workbench) {
    if workbench.settings().snapshot_budget_set {
        return;
    }
    let window = window(workbench);
    let Ok(conversation) = workbench.agent.conversation().try_lock() else {
        return;
    };
    let system = budget::system_text(&conversation, conversation.instructions());
    let fitted = budget::for_window(&window, conversation.counter(), &system, None);
    drop(conversation);
    workbench.settings_mut().snapshot_budget = fitted.chars;
    workbench.agent.snapshot_budget = Some(fitted);
}

/// How the window's budgets were derived, as lines under F2's sections:
/// the answer's reserve, the snapshot's budget, the counter, and where the
/// last call's usage came from.
fn derivations(
    workbench: &Workbench,
    prompt: &mut Prompt,
    window: &ContextWindow,
    counter: &TokenCounter,
) {
    prompt.sections.push(PromptSection::budget(
        &format!("reserve · {}", window.reserve_derivation()),
        window.reserve,
    ));
    let snapshot = match &workbench.agent.snapshot_budget {
        Some(fitted) => format!("snapshot ch · {}", fitted.derivation),
        None if workbench.settings().snapshot_budget_set => "snapshot ch · setting".to_owned(),
        None => "snapshot ch · default".to_owned(),
    };
    prompt.sections.push(PromptSection::budget(
        &snapshot,
        workbench.settings().snapshot_budget,
    ));
    prompt.sections.push(PromptSection::budget(
        &format!("count · {}", counter.describe()),
        prompt.tokens,
    ));
    let (source, tokens) = counter.last_usage();
    prompt
        .sections
        .push(PromptSection::budget(&format!("usage · {source}"), tokens));
}

/// The request Enter would send now with `draft` in the composer (with
/// pins and the files it mentions, which come back too) and the latest
/// snapshot. `Err` says why there is none to show.
pub fn preview(
    workbench: &Workbench,
    draft: &str,
) -> Result<(Prompt, ContextWindow, Mentioned), &'static str> {
    let mut conversation = workbench
        .agent
        .conversation()
        .try_lock()
        .map_err(|_| "a turn is running; the preview is back when it ends")?;
    // MCP servers report their tools in the background, with no event.
    conversation.set_kernel_tools(workbench.agent.mcp.prompt_section());
    let (mut prompt, mentioned) = match submission::parse(draft) {
        Submission::Prompt(prompt) => message(workbench, prompt, &workbench.pins),
        _ => (
            pinned_prompt(String::new(), &workbench.pins),
            Attached::default(),
        ),
    };
    // What `SessionStart` hooks said goes with the next message.
    let hook_context = workbench.agent.hooks.pending_context();
    if let Some(context) = &hook_context {
        prompt = crate::agent::turn::with_hook_context(&prompt, context);
    }
    let snapshot = workbench
        .snapshot
        .as_ref()
        .map(|v| v.rendered.markdown.as_str());
    let window = window(workbench);
    let mut prompt = preview_prompt(&conversation, &prompt, snapshot, &window);
    derivations(workbench, &mut prompt, &window, conversation.counter());
    let mentioned = Mentioned {
        files: mentioned
            .pins
            .iter()
            .map(|pin| (pin.label.clone(), conversation.counter().count(&pin.text)))
            .collect(),
        notes: mentioned.notes,
        hook_context: hook_context.map(|c| conversation.counter().count(&c)),
    };
    Ok((prompt, window, mentioned))
}

/// Why `draft` cannot be sent, when even with the whole history left out
/// or compacted the request (its pins and snapshot included) would not fit
/// the model's window: said before anything is spent, with the numbers.
pub fn refusal(workbench: &Workbench, draft: &str) -> Option<String> {
    let (prompt, _, _) = preview(workbench, draft).ok()?;
    let least = prompt.least_tokens();
    (least > prompt.window).then(|| {
        format!(
            "Not sent: this message needs about {least} tokens with its pins and snapshot, \
             but the model's window is {} — no compaction can make room. Shorten it, unpin \
             results or lower [snapshot] budget; your text is back in the composer.",
            prompt.window
        )
    })
}

/// Recomputes the gauge from the request Enter would send now — the
/// composer's text (`Workbench::draft`), the pins and the latest snapshot
/// included — by the same computation as F2 ([`preview`]), so the two
/// always agree. Keeps the last value while a turn holds the conversation.
pub fn refresh_gauge(workbench: &mut Workbench) {
    if let Ok((prompt, _, _)) = preview(workbench, &workbench.draft) {
        workbench.agent.context_used = Some((prompt.tokens, prompt.window));
    }
}

/// `/compact [focus]`: folds the older part of the conversation into a
/// summary now (the model writes it, tools disabled; extractive if it
/// cannot). The messages stay in `context`, search and the session.
pub(crate) fn compact_command(workbench: &mut Workbench, focus: &str) {
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
    let hooks = workbench.agent.hooks.clone();
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
        if let Some(reason) = hooks.compacting("manual", focus.as_deref()).await {
            send(AgentUpdate::Turn(TurnEvent::CompactionHeld { reason }));
            return;
        }
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
        hooks.session_started("compact").await;
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

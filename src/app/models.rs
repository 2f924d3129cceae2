//! `/model`: which models the server offers (`GET /v1/models`, asked on a
//! task so the loop never waits on the network), and switching to one for
//! the next turn. The turn records the model it used in the session
//! (`Conversation::note_model`), and resuming picks it again (`resumed`).
//! A switch forgets the window and token counter learned for the old model.

use super::agent::AgentUpdate;
use super::event::AppEvent;
use super::state::AppState;
use super::update::notice;
use crate::agent::setup;

/// `/model` lists, `/model NAME` switches.
pub fn command(state: &mut AppState, args: &str) {
    let Some(provider) = state.agent.provider() else {
        let message = setup::not_configured_message(&state.settings);
        notice(state, &message);
        return;
    };
    let name = args.trim();
    if !name.is_empty() {
        switch(state, name);
        return;
    }
    let Some(events) = state.agent.events.clone() else {
        notice(state, "The model list cannot be asked for here.");
        return;
    };
    let current = provider.model();
    let label = provider.label();
    let listing = provider.list_models();
    tokio::spawn(async move {
        let text = match listing.await {
            Ok(models) => listed(&label, &models, current.as_deref()),
            Err(error) => {
                format!("Cannot list the models of {label}: {error}. /model NAME switches anyway.")
            }
        };
        let _ = events.send(AppEvent::Agent(AgentUpdate::Notice(text)));
    });
}

/// The notice listing `models`, the current one marked.
fn listed(label: &str, models: &[String], current: Option<&str>) -> String {
    if models.is_empty() {
        return format!("{label} lists no models. /model NAME switches anyway.");
    }
    let mut text = format!("Models at {label}:");
    for model in models {
        let mark = if Some(model.as_str()) == current {
            "  ← current"
        } else {
            ""
        };
        text.push_str(&format!("\n  {model}{mark}"));
    }
    text.push_str("\n/model NAME switches from the next turn on.");
    text
}

/// Uses `name` from the next turn on (a running turn keeps its model).
fn switch(state: &mut AppState, name: &str) {
    let Some(provider) = state.agent.provider() else {
        return;
    };
    match provider.with_model(name) {
        Ok(switched) => {
            state.agent.switch_provider(switched);
            super::context_window::refresh_gauge(state);
            notice(
                state,
                &format!(
                    "The next turn goes to {name}; the session remembers the choice (--resume picks it again)."
                ),
            );
        }
        Err(error) => notice(state, &format!("Cannot switch to {name}: {error}")),
    }
}

/// After a resume: the model the session last used, when `/model` had
/// chosen another than the configured one.
pub fn resumed(state: &mut AppState, model: Option<&str>) {
    let (Some(model), Some(provider)) = (model, state.agent.provider()) else {
        return;
    };
    if provider.model().as_deref() == Some(model) {
        return;
    }
    if let Ok(switched) = provider.with_model(model) {
        state.agent.switch_provider(switched);
        state
            .agent
            .warm_counter(&state.agent.model_settings(&state.settings));
        notice(
            state,
            &format!(
                "This session last used {model}; its turns go there again (/model changes it)."
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_marks_the_current_model() {
        let text = listed(
            "qwen3 @ http://h/v1/chat/completions",
            &["llama3".into(), "qwen3".into()],
            Some("qwen3"),
        );
        assert_eq!(
            text,
            "Models at qwen3 @ http://h/v1/chat/completions:\n  llama3\n  qwen3  ← current\n/model NAME switches from the next turn on."
        );
        assert!(listed("x", &[], None).contains("lists no models"));
    }

    #[test]
    fn a_switch_forgets_the_old_models_window_and_names_the_new_one() {
        use crate::agent::provider::{OpenAiConfig, OpenAiProvider};
        use std::sync::Arc;
        let mut settings = crate::config::Settings::defaults();
        settings.model = Some("small-8k".into());
        let mut state = AppState::new("/w".into(), settings);
        let config = OpenAiConfig::new(Some("http://127.0.0.1:9/v1"), "small-8k", "K", &|_| None);
        state
            .agent
            .set_provider(Arc::new(OpenAiProvider::new(config).unwrap()));
        let learned =
            crate::tokens::ContextWindow::resolve(Some(8_192), None, "small-8k", None, None);
        state.agent.window_cell().set(learned).unwrap();
        command(&mut state, "gpt-4.1");
        assert_eq!(
            state.agent.provider().unwrap().model().as_deref(),
            Some("gpt-4.1")
        );
        assert!(
            state.agent.window().is_none(),
            "learned again at the next turn"
        );
        assert_eq!(
            state.agent.model_settings(&state.settings).model.as_deref(),
            Some("gpt-4.1")
        );
        let said = &state.conversation.messages.last().unwrap().text;
        assert!(said.starts_with("The next turn goes to gpt-4.1"), "{said}");
    }
}

//! `/model`: which models the server offers (`GET /v1/models`, asked on a
//! task so the loop never waits on the network) and the configured
//! profiles (`[models.NAME]`: a model with its own API and server), and
//! switching to either for the next turn — so one session can go from a
//! native Anthropic endpoint to a local reasoning model and back. The turn
//! records the model (and profile) it used in the session
//! (`Conversation::note_model`), and resuming picks it again (`resumed`).
//! A switch forgets the window and token counter learned for the old model.

use crate::agent::provider::ProviderError;
use crate::agent::setup;
use crate::workbench::Workbench;
use crate::workbench::agent::AgentUpdate;
use crate::workbench::event::AppEvent;

/// `/model` lists, `/model NAME` switches (to a profile by that name, else
/// to that model on the current server).
pub fn command(workbench: &mut Workbench, args: &str) {
    let name = args.trim();
    if let Some(profile) = workbench.settings.for_profile(name) {
        switch_profile(workbench, name, profile);
        return;
    }
    let Some(provider) = workbench.agent.provider() else {
        let mut message = setup::not_configured_message(&workbench.settings);
        message.push_str(&profiles_line(workbench));
        workbench.notice(&message);
        return;
    };
    if !name.is_empty() {
        switch(workbench, name);
        return;
    }
    let Some(events) = workbench.agent.events.clone() else {
        workbench.notice("The model list cannot be asked for here.");
        return;
    };
    let current = provider.model();
    let label = provider.label();
    let listing = provider.list_models();
    let profiles = profiles_line(workbench);
    tokio::spawn(async move {
        let mut text = match listing.await {
            Ok(models) => listed(&label, &models, current.as_deref()),
            Err(error) => not_listed(&label, current.as_deref(), &error),
        };
        text.push_str(&profiles);
        let _ = events.send(AppEvent::Agent(AgentUpdate::Notice(text)));
    });
}

/// One line when the server gives no list: the model in use and why, never
/// the server's error page (an HTML 501 is 14 lines of markup).
fn not_listed(label: &str, current: Option<&str>, error: &ProviderError) -> String {
    let using = current.map_or_else(String::new, |model| format!("Using {model}. "));
    let why = match error {
        ProviderError::Http { status, .. } => {
            format!("the server does not list its models (HTTP {status})")
        }
        other => {
            let first = other.to_string();
            let first = first.lines().next().unwrap_or_default();
            let short: String = first.chars().take(120).collect();
            format!("the models could not be listed: {short}")
        }
    };
    format!("{using}{label}: {why}. /model NAME switches anyway.")
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

/// The configured profiles, one per line, the current one marked; empty
/// without any.
fn profiles_line(workbench: &Workbench) -> String {
    let current = workbench.agent.profile_name();
    let mut text = String::new();
    for (name, profile) in &workbench.settings.model_profiles {
        let api = match profile.provider.unwrap_or_default() {
            crate::config::ProviderKind::OpenAi => "openai",
            crate::config::ProviderKind::Anthropic => "anthropic",
        };
        let model = profile.name.as_deref().unwrap_or("(no model named)");
        let server = profile
            .base_url
            .as_deref()
            .unwrap_or("its API's default server");
        let mark = if current == Some(name.as_str()) {
            "  ← current"
        } else {
            ""
        };
        text.push_str(&format!("\n  {name}: {model} ({api}, {server}){mark}"));
    }
    if text.is_empty() {
        return text;
    }
    format!("\nProfiles ([models.NAME] in the config file; /model NAME switches):{text}")
}

/// Switches to profile `name`: its own API and server from the next turn.
fn switch_profile(
    workbench: &mut Workbench,
    name: &str,
    profile: Result<crate::config::Settings, String>,
) {
    let built = profile.and_then(|settings| {
        let provider = setup::from_settings(&settings, &|n| std::env::var(n).ok())?
            .ok_or_else(|| "it names no model".to_owned())?;
        Ok((settings, provider))
    });
    match built {
        Ok((settings, provider)) => {
            let label = provider.label();
            workbench.agent.switch_profile(name, settings, provider);
            crate::workbench::context_window::refresh_gauge(workbench);
            workbench.notice(&format!(
                "The next turn goes to {name}: {label}; the session remembers the choice \
                     (--resume picks it again)."
            ));
        }
        Err(error) => workbench.notice(&format!("Cannot switch to {name}: {error}")),
    }
}

/// Uses `name` from the next turn on (a running turn keeps its model).
fn switch(workbench: &mut Workbench, name: &str) {
    let Some(provider) = workbench.agent.provider() else {
        return;
    };
    match provider.with_model(name) {
        Ok(switched) => {
            workbench.agent.switch_provider(switched);
            crate::workbench::context_window::refresh_gauge(workbench);
            workbench.notice(&format!(
                    "The next turn goes to {name}; the session remembers the choice (--resume picks it again)."
                ),
            );
        }
        Err(error) => workbench.notice(&format!("Cannot switch to {name}: {error}")),
    }
}

/// After a resume: the model the session last used, when `/model` had
/// chosen another than the configured one — on its profile's server when
/// it was chosen as one that is still configured. A model chosen on the
/// command line wins: typed for this run, it is what the user asked for.
pub fn resumed(workbench: &mut Workbench, model: Option<&str>, profile: Option<&str>) {
    if workbench.settings.model_from_command_line {
        let current = workbench.agent.provider().and_then(|p| p.model());
        if let Some(model) = model.filter(|m| profile.is_some() || current.as_deref() != Some(*m)) {
            let last = match profile {
                Some(profile) => format!("{model} (profile {profile})"),
                None => model.to_owned(),
            };
            let label = workbench.agent.label();
            workbench.notice(&format!(
                "This session last used {last}; its turns go to {label}, as the command \
                     line says (/model changes it)."
            ));
        }
        return;
    }
    if let Some(name) = profile
        && let Some(settings) = workbench.settings.for_profile(name)
    {
        switch_profile(workbench, name, settings);
    }
    let (Some(model), Some(provider)) = (model, workbench.agent.provider()) else {
        return;
    };
    if provider.model().as_deref() == Some(model) {
        return;
    }
    if let Ok(switched) = provider.with_model(model) {
        workbench.agent.switch_provider(switched);
        workbench
            .agent
            .warm_counter(&workbench.agent.model_settings(&workbench.settings));
        workbench.notice(&format!(
            "This session last used {model}; its turns go there again (/model changes it)."
        ));
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
        let mut workbench = Workbench::new("/w".into(), settings);
        let config = OpenAiConfig::new(Some("http://127.0.0.1:9/v1"), "small-8k", "K", &|_| None);
        workbench
            .agent
            .set_provider(Arc::new(OpenAiProvider::new(config).unwrap()));
        let learned =
            crate::tokens::ContextWindow::resolve(Some(8_192), None, "small-8k", None, None);
        workbench.agent.window_cell().set(learned).unwrap();
        command(&mut workbench, "gpt-4.1");
        assert_eq!(
            workbench.agent.provider().unwrap().model().as_deref(),
            Some("gpt-4.1")
        );
        assert!(
            workbench.agent.window().is_none(),
            "learned again at the next turn"
        );
        assert_eq!(
            workbench
                .agent
                .model_settings(&workbench.settings)
                .model
                .as_deref(),
            Some("gpt-4.1")
        );
        let said = &workbench.transcript.last().unwrap().text;
        assert!(said.starts_with("The next turn goes to gpt-4.1"), "{said}");
    }
}

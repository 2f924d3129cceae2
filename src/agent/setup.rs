//! Which model answers: the OpenAI-compatible client from the settings, or
//! the scripted demo player. The one place to add another provider kind.

use std::sync::Arc;

use super::provider::{ModelProvider, OpenAiConfig, OpenAiProvider, ScriptedProvider};
use crate::config::Settings;
use crate::tokens::{ContextWindow, TokenCounter, probe};

/// What the UI calls the scripted demo provider, everywhere.
pub const DEMO_LABEL: &str = "demo model (scripted)";

/// The recorded demo conversation (see `assets/demo/`).
pub const DEMO_SCRIPT: &str = include_str!("../../assets/demo/script.json");

/// Said when a message is sent with no model configured.
pub fn not_configured_message(settings: &Settings) -> String {
    format!(
        "No model is configured, so nothing can answer. Start hello-tui with \
         `--model NAME` (and `--base-url URL` for anything but OpenAI, e.g. \
         http://localhost:11434/v1 for Ollama), with the API key in ${} \
         (or name another variable with `--api-key-env VAR`), or set [model] \
         name/base_url in ~/.config/hello-tui/config.toml. Try `hello-tui --demo` \
         for an offline tour. The editor, the kernel (%py) and search work without a model.",
        settings.api_key_env
    )
}

/// The configured provider; `Ok(None)` when no model is configured.
pub fn from_settings(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Arc<dyn ModelProvider>>, String> {
    let Some(config) = openai_config(settings, env) else {
        return Ok(None);
    };
    let provider = OpenAiProvider::new(config).map_err(|e| e.to_string())?;
    Ok(Some(Arc::new(provider)))
}

fn openai_config(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<OpenAiConfig> {
    let model = settings.model.as_deref()?;
    Some(OpenAiConfig::new(
        settings.base_url.as_deref(),
        model,
        &settings.api_key_env,
        env,
    ))
}

/// The model's context window: the setting, else what the configured
/// server says (asked only when there is no setting, and not of OpenAI's
/// own API, which never says), else the table of known models, else the
/// default. The demo (no model) gets the default.
pub async fn context_window(
    settings: &Settings,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> ContextWindow {
    let config = openai_config(settings, env);
    let server = match (&config, settings.context_window, &settings.base_url) {
        (Some(config), None, Some(_)) => probe::probe_window(config).await,
        _ => None,
    };
    ContextWindow::resolve(
        settings.context_window,
        server,
        settings.model.as_deref().unwrap_or_default(),
        settings.reserve_output,
        settings.compact_at,
    )
}

/// The token counter for the configured model (the estimate for the demo).
pub fn token_counter(settings: &Settings) -> Arc<TokenCounter> {
    Arc::new(TokenCounter::for_model(
        settings.model.as_deref().unwrap_or_default(),
    ))
}

/// The scripted demo provider, labelled [`DEMO_LABEL`].
pub fn demo() -> Result<Arc<dyn ModelProvider>, String> {
    let mut provider = ScriptedProvider::from_json(DEMO_SCRIPT).map_err(|e| e.to_string())?;
    provider.set_label(DEMO_LABEL);
    Ok(Arc::new(provider))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_script_loads_and_is_labelled() {
        let provider = demo().unwrap();
        assert_eq!(provider.label(), DEMO_LABEL);
    }
}

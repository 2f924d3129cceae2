//! Which model answers: the OpenAI-compatible or the Anthropic client from
//! the settings, or the scripted demo player. The one place to add another
//! provider kind.

use std::sync::Arc;

use super::provider::{
    AnthropicConfig, AnthropicProvider, ModelProvider, OpenAiConfig, OpenAiProvider,
    ScriptedProvider,
};
use crate::config::{ProviderKind, Settings};
use crate::tokens::{ContextWindow, TokenCounter, probe};

/// What the UI calls the scripted demo provider, everywhere.
pub const DEMO_LABEL: &str = "demo model (scripted)";

/// The recorded demo conversation (see `assets/demo/`).
pub const DEMO_SCRIPT: &str = include_str!("../../assets/demo/script.json");

/// Said when a message is sent with no model configured.
pub(crate) fn not_configured_message(settings: &Settings) -> String {
    format!(
        "No model is configured, so nothing can answer. Start hello-tui with \
         `--model NAME` (and `--base-url URL` for anything but OpenAI, e.g. \
         http://localhost:11434/v1 for Ollama; `--provider anthropic` for Claude), \
         with the API key in ${} \
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
    let Some(model) = settings.model.as_deref() else {
        return Ok(None);
    };
    let provider: Arc<dyn ModelProvider> = match settings.provider {
        ProviderKind::OpenAi => {
            let config = OpenAiConfig::new(
                settings.base_url.as_deref(),
                model,
                &settings.api_key_env,
                env,
            );
            Arc::new(OpenAiProvider::new(config).map_err(|e| e.to_string())?)
        }
        ProviderKind::Anthropic => {
            let mut config = AnthropicConfig::new(
                settings.base_url.as_deref(),
                model,
                &settings.api_key_env,
                env,
            );
            if let Some(reserve) = settings.reserve_output {
                config.max_tokens = u32::try_from(reserve).unwrap_or(u32::MAX);
            }
            config.thinking_budget = settings.thinking_budget;
            Arc::new(AnthropicProvider::new(config).map_err(|e| e.to_string())?)
        }
    };
    Ok(Some(provider))
}

/// The settings as an OpenAI-compatible client's (the window probe asks
/// such servers); `None` without a model or for another API.
fn openai_config(
    settings: &Settings,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<OpenAiConfig> {
    let model = settings.model.as_deref()?;
    if settings.provider != ProviderKind::OpenAi {
        return None;
    }
    Some(OpenAiConfig::new(
        settings.base_url.as_deref(),
        model,
        &settings.api_key_env,
        env,
    ))
}

/// The model's context window: the setting, else what the configured
/// server says (asked only when there is no setting, and not of OpenAI's
/// or Anthropic's own API, which never say), else the table of known
/// models, else the default. The demo (no model) gets the default.
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

/// The window will be asked of the server at the first turn (a base URL,
/// no `context_window`): the counter waits for its answer, which may name
/// a server with a tokenizer of its own.
pub(crate) fn window_is_probed(settings: &Settings) -> bool {
    settings.provider == ProviderKind::OpenAi
        && settings.base_url.is_some()
        && settings.context_window.is_none()
}

/// The token counter for the configured model (the estimate for the demo).
pub(crate) fn token_counter(settings: &Settings) -> Arc<TokenCounter> {
    Arc::new(TokenCounter::for_model(
        settings.model.as_deref().unwrap_or_default(),
    ))
}

/// The server's own tokenizer when the window probe found llama.cpp and
/// its `/tokenize` answers: counts that match the server's beat any local
/// guess. Asked only where the window was (no `context_window` setting),
/// so a server that was not probed is not probed now. `None`: use
/// [`token_counter`].
pub async fn server_token_counter(
    settings: &Settings,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    window: &ContextWindow,
) -> Option<Arc<TokenCounter>> {
    if window.source != crate::tokens::WindowSource::Server("llama.cpp") {
        return None;
    }
    let config = openai_config(settings, env)?;
    let url = probe::probe_tokenizer(&config).await?;
    Some(Arc::new(TokenCounter::server(url)))
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
    fn the_provider_setting_picks_the_client() {
        let mut settings = Settings::defaults();
        assert!(from_settings(&settings, &|_| None).unwrap().is_none());
        settings.model = Some("claude-sonnet-4-5".into());
        settings.provider = ProviderKind::Anthropic;
        let provider = from_settings(&settings, &|_| None).unwrap().unwrap();
        assert_eq!(
            provider.label(),
            "claude-sonnet-4-5 @ https://api.anthropic.com/v1/messages"
        );
        settings.provider = ProviderKind::OpenAi;
        let provider = from_settings(&settings, &|_| None).unwrap().unwrap();
        assert!(
            provider
                .label()
                .ends_with("api.openai.com/v1/chat/completions")
        );
    }

    #[test]
    fn the_demo_script_loads_and_is_labelled() {
        let provider = demo().unwrap();
        assert_eq!(provider.label(), DEMO_LABEL);
    }
}

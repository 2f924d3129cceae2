//! `/lsp`: which language servers serve which languages, in what state,
//! and the last error each reported. Kept from the diagnostics service's
//! events (the service runs in the background and is never asked).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::diagnostics::{DiagnosticsConfig, DiagnosticsEvent, ServerState};

#[derive(Debug, Default)]
pub struct LspStatus {
    /// Per server name: its latest state.
    states: BTreeMap<String, ServerState>,
    /// Per server name: the last reason it failed (kept after a recovery).
    last_errors: BTreeMap<String, String>,
    /// Per server name: why the latest route of one of its languages left
    /// it out (`missing from PATH`…); cleared when a route picks it.
    skipped: BTreeMap<String, String>,
}

impl LspStatus {
    pub fn record(&mut self, event: &DiagnosticsEvent) {
        match event {
            DiagnosticsEvent::ServerState { name, state } => {
                if let ServerState::Restarting { reason, .. } | ServerState::GaveUp { reason } =
                    state
                {
                    self.last_errors.insert(name.clone(), reason.clone());
                }
                self.states.insert(name.clone(), state.clone());
            }
            DiagnosticsEvent::Routed {
                servers, skipped, ..
            } => {
                for name in servers {
                    self.skipped.remove(name);
                }
                for (name, reason) in skipped {
                    self.skipped.insert(name.clone(), reason.clone());
                }
            }
            DiagnosticsEvent::Published { .. }
            | DiagnosticsEvent::Notice(_)
            | DiagnosticsEvent::CheckState { .. } => {}
        }
    }

    /// One line per configured server, `name (languages): state`, its
    /// last error below it: short lines, as the conversation pane is narrow.
    pub fn listing(&self, config: &DiagnosticsConfig) -> String {
        if config.servers.is_empty() {
            return "No language servers are configured ([[diagnostics.servers]]).".into();
        }
        let mut out = String::from(
            "Language servers (each starts with the first file of its languages; \
             /lsp-restart starts them again):",
        );
        for server in &config.servers {
            let name = server.name();
            let _ = write!(
                out,
                "\n{name} ({}): {}",
                server.language_ids.join(", "),
                self.state_words(&name, config)
            );
            if let Some(error) = self.last_errors.get(&name) {
                let _ = write!(out, "\n    last error: {error}");
            }
        }
        out
    }

    fn state_words(&self, name: &str, config: &DiagnosticsConfig) -> String {
        if let Some(state) = self.states.get(name) {
            return match state {
                ServerState::Starting => "starting".into(),
                ServerState::Running { encoding } => format!("running ({encoding})"),
                ServerState::Restarting { attempt, .. } => {
                    format!("restarting (attempt {attempt})")
                }
                ServerState::GaveUp { .. } => "given up after repeated failures".into(),
                ServerState::Stopped => "stopped".into(),
            };
        }
        if let Some(reason) = self.skipped.get(name) {
            return reason.clone();
        }
        if config.disabled_servers.iter().any(|d| d == name) {
            return "disabled in the settings".into();
        }
        "not started (no file of its languages opened yet)".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn states_skips_and_errors_per_server() {
        let config = DiagnosticsConfig {
            disabled_servers: vec!["pylsp".into()],
            ..DiagnosticsConfig::default()
        };
        let mut status = LspStatus::default();
        let state = |name: &str, state| DiagnosticsEvent::ServerState {
            name: name.into(),
            state,
        };
        status.record(&DiagnosticsEvent::Routed {
            language_id: "python".into(),
            servers: vec!["ruff".into()],
            skipped: vec![("basedpyright-langserver".into(), "missing from PATH".into())],
        });
        status.record(&state("ruff", ServerState::Starting));
        status.record(&state(
            "ruff",
            ServerState::Restarting {
                attempt: 1,
                delay: Duration::from_secs(1),
                reason: "the server closed its output".into(),
            },
        ));
        status.record(&state("ruff", ServerState::Running { encoding: "utf-16" }));
        let text = status.listing(&config);
        for line in [
            "ruff (python): running (utf-16)",
            "    last error: the server closed its output",
            "basedpyright-langserver (python): missing from PATH",
            "pylsp (python): disabled in the settings",
            "rust-analyzer (rust): not started (no file of its languages opened yet)",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
        assert!(
            text.contains("running (utf-16)\n    last error: the server closed its output"),
            "the last error outlives the recovery, under its server: {text}"
        );
    }
}

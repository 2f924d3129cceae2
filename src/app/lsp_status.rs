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

    /// One line per configured server: name, languages, state; its last
    /// error below it.
    pub fn listing(&self, config: &DiagnosticsConfig) -> String {
        let rows: Vec<(String, String, String)> = config
            .servers
            .iter()
            .map(|server| {
                let name = server.name();
                let state = self.state_words(&name, config);
                (name, server.language_ids.join(", "), state)
            })
            .collect();
        if rows.is_empty() {
            return "No language servers are configured ([[diagnostics.servers]]).".into();
        }
        let width = |pick: fn(&(String, String, String)) -> &String| {
            rows.iter().map(|r| pick(r).chars().count()).max().unwrap_or(0)
        };
        let (name_width, state_width) = (width(|r| &r.0), width(|r| &r.2));
        let mut out = format!(
            "{:<name_width$}  {:<state_width$}  languages\n",
            "server", "state"
        );
        for (name, languages, state) in &rows {
            let _ = writeln!(
                out,
                "{name:<name_width$}  {state:<state_width$}  {languages}"
            );
            if let Some(error) = self.last_errors.get(name) {
                let _ = writeln!(out, "    last error: {error}");
            }
        }
        out.push_str("A server starts with the first file of its language; /lsp-restart starts them again.");
        out
    }

    fn state_words(&self, name: &str, config: &DiagnosticsConfig) -> String {
        if let Some(state) = self.states.get(name) {
            return match state {
                ServerState::Starting => "starting".into(),
                ServerState::Running { encoding } => format!("running ({encoding})"),
                ServerState::Restarting { attempt, .. } => format!("restarting (attempt {attempt})"),
                ServerState::GaveUp { .. } => "given up after repeated failures".into(),
                ServerState::Stopped => "stopped".into(),
            };
        }
        if let Some(reason) = self.skipped.get(name) {
            return format!("not used: {reason}");
        }
        if config.disabled_servers.iter().any(|d| d == name) {
            return "not used: disabled in the settings".into();
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
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_default()
                .to_owned()
        };
        let says = |name: &str, state: &str| {
            let line = line(name);
            let rest = line[name.len()..].trim_start();
            assert!(rest.starts_with(state), "{name}: {state}\n{text}");
        };
        says("ruff", "running (utf-16)");
        assert!(line("ruff").ends_with("  python"), "{text}");
        assert!(
            text.contains("    last error: the server closed its output"),
            "the last error outlives the recovery: {text}"
        );
        says("basedpyright-langserver", "not used: missing from PATH");
        says("pylsp", "not used: disabled in the settings");
        says("rust-analyzer", "not started (no file of its languages opened yet)");
    }
}

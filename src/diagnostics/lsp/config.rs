//! Which language server serves which language, and how patient we are.

use std::time::Duration;

use serde::Deserialize;

/// One language server command. For a language, the first configured server
/// whose program is on PATH is used.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ServerConfig {
    /// Display name and diagnostics source key; defaults to the program's
    /// file name. Needed when two servers share a program (`node`, `python3`).
    #[serde(default)]
    pub name: Option<String>,
    /// LSP language ids this server handles (`python`, `rust`, `typescript`...).
    pub language_ids: Vec<String>,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
}

impl ServerConfig {
    pub fn new(language_ids: &[&str], command: &str, args: &[&str]) -> Self {
        ServerConfig {
            name: None,
            language_ids: language_ids.iter().map(|s| s.to_string()).collect(),
            command: command.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Sets an explicit name (see [`ServerConfig::name`]).
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// The name shown to the user and used as the diagnostics source key:
    /// the configured name, else the program's file name (`ruff`).
    pub fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        std::path::Path::new(&self.command).file_name().map_or_else(
            || self.command.clone(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Defaults, in order of preference per language.
    pub fn defaults() -> Vec<ServerConfig> {
        vec![
            ServerConfig::new(&["python"], "ruff", &["server"]),
            ServerConfig::new(&["python"], "basedpyright-langserver", &["--stdio"]),
            ServerConfig::new(&["python"], "pylsp", &[]),
            ServerConfig::new(&["rust"], "rust-analyzer", &[]),
            ServerConfig::new(
                &[
                    "typescript",
                    "typescriptreact",
                    "javascript",
                    "javascriptreact",
                ],
                "typescript-language-server",
                &["--stdio"],
            ),
        ]
    }
}

/// Timeouts and restart backoff for every server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspTimings {
    /// How long `initialize` may take (rust-analyzer on a cold cache is slow).
    pub initialize_timeout: Duration,
    /// How long any other request may take.
    pub request_timeout: Duration,
    /// Grace for `shutdown`/`exit` before the process is killed.
    pub shutdown_timeout: Duration,
    /// Delay before each restart; after the last one the server is given up.
    pub restart_delays: Vec<Duration>,
    /// A server that ran at least this long before dying gets a fresh budget.
    pub stable_after: Duration,
}

impl Default for LspTimings {
    fn default() -> Self {
        LspTimings {
            initialize_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(2),
            restart_delays: vec![
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(4),
            ],
            stable_after: Duration::from_secs(60),
        }
    }
}

/// Maps a file name to an LSP language id, for callers that only have a path.
pub fn language_id_for_path(path: &std::path::Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?;
    Some(match ext {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" => "cpp",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_prefer_ruff_for_python_and_names_come_from_commands() {
        let defaults = ServerConfig::defaults();
        let python: Vec<String> = defaults
            .iter()
            .filter(|s| s.language_ids.iter().any(|l| l == "python"))
            .map(ServerConfig::name)
            .collect();
        assert_eq!(python, ["ruff", "basedpyright-langserver", "pylsp"]);
        assert_eq!(
            ServerConfig::new(&["x"], "/opt/bin/foo-ls", &[]).name(),
            "foo-ls"
        );
    }

    #[test]
    fn language_ids_from_extensions() {
        use std::path::Path;
        assert_eq!(language_id_for_path(Path::new("/a/b.py")), Some("python"));
        assert_eq!(language_id_for_path(Path::new("lib.rs")), Some("rust"));
        assert_eq!(language_id_for_path(Path::new("README")), None);
    }
}

//! Which language server serves which language, and how patient we are.

use std::time::Duration;

use serde::Deserialize;

/// One language server command. Every server of a language runs and their
/// diagnostics merge (ruff's lints beside basedpyright's types), except that
/// servers sharing a `role` are alternatives: the first one that can run
/// (on PATH, and for the TypeScript version the file resolves) is used.
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
    /// Servers of a language with the same role are alternatives (the first
    /// usable one runs); without one, a server is a role of its own.
    #[serde(default)]
    pub role: Option<String>,
    /// Look for `command` in `node_modules/.bin` above the file first, then
    /// on PATH: a project's own TypeScript is the one it builds with.
    #[serde(default)]
    pub node_modules: bool,
    /// Only for files whose TypeScript (see [`super::resolve`]) has at least
    /// this major version: TS 7 serves LSP itself (`tsc --lsp`).
    #[serde(default)]
    pub min_typescript: Option<u32>,
    /// Only for files whose TypeScript has at most this major version:
    /// `typescript-language-server` needs `tsserver.js`, gone in TS 7.
    #[serde(default)]
    pub max_typescript: Option<u32>,
    /// What the server gets when it asks for its configuration
    /// (`workspace/configuration`, by dotted section), e.g.
    /// `{ basedpyright = { analysis = { typeCheckingMode = "strict" } } }`.
    #[serde(default)]
    pub settings: serde_json::Value,
    /// The server runs the project's own code (build scripts, proc macros,
    /// a `.cargo/config.toml` wrapper) where this file is (`Cargo.toml`):
    /// it does not start for such a file before the workspace is trusted.
    #[serde(default)]
    pub project_code: Option<String>,
}

impl ServerConfig {
    pub fn new(language_ids: &[&str], command: &str, args: &[&str]) -> Self {
        ServerConfig {
            name: None,
            language_ids: language_ids.iter().map(|s| s.to_string()).collect(),
            command: command.to_string(),
            args: args.iter().map(|s| s.to_string()).collect(),
            role: None,
            node_modules: false,
            min_typescript: None,
            max_typescript: None,
            settings: serde_json::Value::Null,
            project_code: None,
        }
    }

    /// Sets the role (see [`ServerConfig::role`]).
    pub fn role(mut self, role: &str) -> Self {
        self.role = Some(role.to_string());
        self
    }

    /// The role this server fills: its configured role, else its name.
    pub(crate) fn role_key(&self) -> String {
        self.role.clone().unwrap_or_else(|| self.name())
    }

    /// Whether the server applies to a TypeScript of this major version
    /// (`None`: none found). A server without bounds applies to any.
    pub(crate) fn fits_typescript(&self, major: Option<u32>) -> bool {
        if self.min_typescript.is_none() && self.max_typescript.is_none() {
            return true;
        }
        major.is_some_and(|major| {
            self.min_typescript.is_none_or(|min| major >= min)
                && self.max_typescript.is_none_or(|max| major <= max)
        })
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

    /// Defaults, in order of preference per role. Python gets ruff's
    /// lints and a type checker side by side; TypeScript gets the server
    /// that fits the version the project resolves.
    pub fn defaults() -> Vec<ServerConfig> {
        const JS_TS: [&str; 4] = [
            "typescript",
            "typescriptreact",
            "javascript",
            "javascriptreact",
        ];
        let typescript = |command: &str, args: &[&str]| ServerConfig {
            node_modules: true,
            ..ServerConfig::new(&JS_TS, command, args).role("types")
        };
        vec![
            ServerConfig::new(&["python"], "ruff", &["server"]).role("lint"),
            // basedpyright's own default ("recommended") warns about every
            // unannotated parameter: a wall of warnings in code that is
            // fine. Pyright's "standard" reports real type errors; a
            // project's pyrightconfig.json or [tool.basedpyright] wins.
            ServerConfig {
                settings: serde_json::json!({
                    "basedpyright": {"analysis": {"typeCheckingMode": "standard"}}
                }),
                ..ServerConfig::new(&["python"], "basedpyright-langserver", &["--stdio"])
                    .role("types")
            },
            ServerConfig::new(&["python"], "pylsp", &[]).role("types"),
            ServerConfig {
                project_code: Some("Cargo.toml".to_owned()),
                ..ServerConfig::new(&["rust"], "rust-analyzer", &[])
            },
            ServerConfig {
                min_typescript: Some(7),
                ..typescript("tsc", &["--lsp", "--stdio"]).named("tsc-lsp")
            },
            ServerConfig {
                max_typescript: Some(6),
                ..typescript("typescript-language-server", &["--stdio"])
            },
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
    /// Messages from a server over this many bytes are read through and
    /// dropped, and the file they are about loses this server's diagnostics
    /// (`framing::MAX_BODY` by default; tests lower it).
    pub max_message_bytes: usize,
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
            max_message_bytes: super::framing::MAX_BODY,
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
        let roles: Vec<String> = defaults[..3].iter().map(ServerConfig::role_key).collect();
        assert_eq!(
            roles,
            ["lint", "types", "types"],
            "ruff runs beside one type checker"
        );
        assert_eq!(
            ServerConfig::new(&["x"], "/opt/bin/foo-ls", &[]).name(),
            "foo-ls"
        );
    }

    #[test]
    fn typescript_servers_fit_their_versions() {
        let defaults = ServerConfig::defaults();
        let fits = |major| -> Vec<String> {
            defaults
                .iter()
                .filter(|s| s.language_ids.iter().any(|l| l == "typescript"))
                .filter(|s| s.fits_typescript(major))
                .map(ServerConfig::name)
                .collect()
        };
        assert_eq!(fits(Some(7)), ["tsc-lsp"]);
        assert_eq!(fits(Some(8)), ["tsc-lsp"]);
        assert_eq!(fits(Some(6)), ["typescript-language-server"]);
        assert_eq!(fits(Some(5)), ["typescript-language-server"]);
        assert!(
            fits(None).is_empty(),
            "no TypeScript found: neither can run"
        );
        assert!(ServerConfig::new(&["x"], "x", &[]).fits_typescript(None));
    }

    #[test]
    fn language_ids_from_extensions() {
        use std::path::Path;
        assert_eq!(language_id_for_path(Path::new("/a/b.py")), Some("python"));
        assert_eq!(language_id_for_path(Path::new("lib.rs")), Some("rust"));
        assert_eq!(language_id_for_path(Path::new("README")), None);
    }
}

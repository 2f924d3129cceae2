//! Settings: the config file, the environment and the command line, merged
//! once at start (flags win over environment, environment over the file).
//! After that nobody writes settings; everyone reads the merged [`Settings`].

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Deserialize;
use thiserror::Error;

use crate::diagnostics::DiagnosticsConfig;
use crate::mcp::McpConfig;
use crate::sandbox::ApprovalMode;
use crate::theme::{self, DEFAULT_THEME};

/// Options that override the config file and the environment.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalOptions {
    /// Theme: `dark`, `light`, or a path to a theme .toml file.
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub theme: Option<String>,

    /// Config file to read instead of ~/.config/hello-tui/config.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Which API the model server speaks: `openai` (Chat Completions, the
    /// default; also Ollama, vLLM, llama.cpp…) or `anthropic` (Messages).
    #[arg(long, global = true, value_name = "API")]
    pub provider: Option<crate::config::ProviderKind>,

    /// Model name sent to the endpoint.
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Base URL of the endpoint (default: OpenAI's, or Anthropic's with
    /// `--provider anthropic`).
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,

    /// Environment variable that holds the API key (default OPENAI_API_KEY,
    /// or ANTHROPIC_API_KEY with `--provider anthropic`).
    #[arg(long, global = true, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The model's context window in tokens (default: asked of the server,
    /// then a table of known models, then 8192).
    #[arg(long, global = true, value_name = "TOKENS")]
    pub context_window: Option<usize>,

    /// Python interpreter for the kernel.
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,

    /// How model-written code is approved: `ask` (each cell, shell command
    /// and write's diff; the TUI default), `review` (as `ask`, writes hunk
    /// by hunk), `auto` (no questions, inside the sandbox), `full` (no
    /// sandbox, no questions), `deny`.
    #[arg(long, global = true, value_name = "MODE")]
    pub approval: Option<crate::sandbox::ApprovalMode>,

    /// Let the sandboxed kernel open network connections.
    #[arg(long, global = true)]
    pub allow_network: bool,

    /// Trust the workspace: its own programs (a `node_modules/.bin`
    /// language server, a `.venv/bin` on PATH) may run, without the
    /// question the workbench asks on first open. `exec` without it treats
    /// a workspace never trusted as untrusted.
    #[arg(long, global = true)]
    pub trust: bool,
}

/// The snapshot budget in characters when nothing else is configured
/// (the seed's default).
pub(crate) const DEFAULT_SNAPSHOT_BUDGET: usize = 12_000;

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}:{line}:{column}: `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        field: String,
        message: String,
    },
    #[error("environment variable {name}: {message}")]
    BadEnv { name: &'static str, message: String },
}

/// The config file as written by the user. Unknown keys are errors so a
/// typo never silently does nothing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub theme: Option<String>,
    #[serde(default)]
    pub model: ModelSection,
    #[serde(default)]
    pub kernel: KernelSection,
    #[serde(default)]
    pub snapshot: SnapshotSection,
    /// `[ui]`: how the screen behaves.
    #[serde(default)]
    pub ui: UiSection,
    /// Language servers and check commands (`[[diagnostics.servers]]`,
    /// `[[diagnostics.checks]]`); a list given here replaces the defaults.
    #[serde(default)]
    pub diagnostics: DiagnosticsConfig,
    #[serde(default)]
    pub safety: SafetySection,
    /// `llm_query` from cells: the sub-model and the per-turn bounds.
    #[serde(default)]
    pub subcalls: crate::subcalls::config::SubcallSection,
    /// MCP servers the kernel's `mcp` capability reaches (`[[mcp.servers]]`).
    #[serde(default)]
    pub mcp: McpConfig,
    /// `[[hooks.<Event>]]`: the user's hooks (see `crate::hooks`).
    #[serde(default)]
    pub hooks: crate::hooks::HooksConfig,
    /// `[models.NAME]`: other models `/model NAME` switches to, each on its
    /// own server and API (a native Anthropic endpoint beside a local
    /// OpenAI-compatible one).
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, ModelSection>,
}

/// Which API the model server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Chat Completions: OpenAI and every server that copies it (Ollama,
    /// vLLM, llama.cpp, LM Studio, OpenRouter…).
    #[default]
    #[value(name = "openai")]
    OpenAi,
    /// Anthropic's native Messages API.
    Anthropic,
}

impl ProviderKind {
    /// Where the API key is read from unless `api_key_env` says otherwise.
    pub(crate) fn default_key_env(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => crate::agent::provider::openai::DEFAULT_KEY_ENV,
            ProviderKind::Anthropic => crate::agent::provider::anthropic::DEFAULT_KEY_ENV,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// `openai` (default) or `anthropic`.
    pub provider: Option<ProviderKind>,
    pub name: Option<String>,
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the API key (never the key).
    pub api_key_env: Option<String>,
    /// The model's context window in tokens (otherwise asked of the server,
    /// then a table of known models, then 8192).
    pub context_window: Option<usize>,
    /// Tokens kept free for the answer (default 2048, at most half the window).
    pub reserve_output: Option<usize>,
    /// Share of the prompt budget (0–1] past which the conversation is
    /// compacted (default 0.8).
    pub compact_at: Option<f64>,
    /// Anthropic extended thinking: tokens the model may think before it
    /// answers (at least 1024; unset: off).
    pub thinking_budget: Option<u32>,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KernelSection {
    pub python: Option<PathBuf>,
    /// Address-space limit of the kernel process (RLIMIT_AS), in MiB;
    /// unset: half the machine's memory, 0: none.
    pub memory_limit_mb: Option<u64>,
    /// Per-cell timeout in seconds (interrupt first, restart if it hangs).
    pub cell_timeout_secs: Option<u64>,
    /// Keep the variables across kernel restarts (default on).
    pub keep_variables: Option<bool>,
    /// MiB one variable may keep (default 8).
    pub keep_variable_mb: Option<u64>,
    /// MiB a session's kept variables may take in all (default 64).
    pub keep_variables_mb: Option<u64>,
    /// More environment variable names the kernel and `shell.run` children
    /// may see, beyond the built-in allowlist (never the API key's).
    pub env: Option<Vec<String>>,
}

/// `[safety]`: how model-written code is approved and confined.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SafetySection {
    /// `ask`, `auto`, `full` or `deny`.
    pub approval: Option<ApprovalMode>,
    pub allow_network: Option<bool>,
    /// More folders sandboxed children may write to (a tool's cache, e.g.
    /// `~/.cargo/registry`); `~/` means the home folder.
    pub writable: Option<Vec<String>>,
    /// Most processes alive at once in one sandboxed spawn.
    pub max_processes: Option<u32>,
    /// MiB the sandbox's private `/tmp` may hold (0: no cap).
    pub tmp_size_mb: Option<u64>,
    /// Folders whose workspaces (the folder and everything below) are
    /// trusted without asking (`crate::trust`); `~/` means the home folder.
    pub trusted_workspaces: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SnapshotSection {
    pub budget: Option<usize>,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UiSection {
    /// The file view shows each file a cell writes (default on).
    pub follow_edits: Option<bool>,
    /// What quitting prints to the terminal's normal screen.
    pub on_quit: Option<OnQuit>,
}

/// `[ui] on_quit`: what is left in the terminal's scrollback when the
/// workbench quits (the alternate screen takes the session with it).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnQuit {
    /// Prompts, answers, cells (code and a short output) and changed files.
    #[default]
    Transcript,
    /// The last answer only.
    Summary,
    /// Nothing but the resume line.
    None,
}

/// The merged settings everybody reads.
#[derive(Debug, Clone)]
pub struct Settings {
    pub theme: String,
    /// `NO_COLOR` was set (https://no-color.org).
    pub no_color: bool,
    pub provider: ProviderKind,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: String,
    /// `--model`, `--provider` or `--base-url` was typed: the command line
    /// chose the model, and that wins over the model (and profile) a
    /// resumed session recorded, which wins over the config file's.
    pub model_from_command_line: bool,
    /// `--context-window` or `[model] context_window`.
    pub context_window: Option<usize>,
    pub reserve_output: Option<usize>,
    pub compact_at: Option<f64>,
    pub thinking_budget: Option<u32>,
    pub python: PathBuf,
    pub snapshot_budget: usize,
    /// `HELLO_TUI_SNAPSHOT_BUDGET` or `[snapshot] budget` set the budget:
    /// otherwise it follows the model's window (`agent::prompt::budget`).
    pub snapshot_budget_set: bool,
    /// `[ui] follow_edits`: the file view shows each file a cell writes.
    pub follow_edits: bool,
    /// `[ui] on_quit`: what quitting prints above the resume line.
    pub on_quit: OnQuit,
    pub diagnostics: DiagnosticsConfig,
    /// The approval mode asked for (flag or config); `None` leaves the
    /// choice to the front end (`ask` in the TUI).
    pub approval: Option<ApprovalMode>,
    /// The sandboxed kernel may open network connections.
    pub allow_network: bool,
    pub memory_limit_mb: Option<u64>,
    pub cell_timeout_secs: Option<u64>,
    /// `[kernel] keep_variables` and its bounds: `None` when off.
    pub keep_variables: Option<crate::kernel::KeepLimits>,
    /// `[kernel] env`: variable names passed to children besides the
    /// allowlist (see `sandbox::ChildEnv`).
    pub kernel_env: Vec<String>,
    /// `[safety] writable`, with `~/` expanded: folders the kernel, its
    /// shell commands and check commands may write to besides the workspace.
    pub writable: Vec<PathBuf>,
    /// `[safety] max_processes`: most processes alive at once in one
    /// sandboxed spawn (the kernel and what its cells start, together).
    pub max_processes: u32,
    /// `[safety] tmp_size_mb`: MiB a sandbox session's private `/tmp` may
    /// hold (shared by the kernel and what it starts; 0: no cap).
    pub tmp_size_mb: u64,
    /// `--trust`: the workspace is trusted for this run.
    pub trust: bool,
    /// `[safety] trusted_workspaces`, with `~/` expanded.
    pub trusted_workspaces: Vec<PathBuf>,
    /// `[subcalls]`: the model `llm_query` asks and its bounds.
    pub subcalls: crate::subcalls::config::SubcallSection,
    /// `[[mcp.servers]]`: the kernel's `mcp` capability starts these.
    pub mcp: McpConfig,
    /// `[[hooks.<Event>]]`: the user's own hooks.
    pub hooks: crate::hooks::HooksConfig,
    /// `[models.NAME]`: the model profiles `/model NAME` switches to (see
    /// [`Settings::for_profile`]).
    pub model_profiles: std::collections::BTreeMap<String, ModelSection>,
    /// The config file that was read, if any (shown in errors and `--help`).
    pub config_path: Option<PathBuf>,
}

/// Where the config file lives unless `--config` or `HELLO_TUI_CONFIG` say
/// otherwise: `$XDG_CONFIG_HOME/hello-tui/config.toml` on Linux.
pub(crate) fn default_config_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "hello-tui")
        .map(|dirs| dirs.config_dir().join("config.toml"))
}

impl ConfigFile {
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        theme::parse_toml_with_path(text).map_err(|e| ConfigError::Invalid {
            path: path.to_owned(),
            line: e.line,
            column: e.column,
            field: e.field,
            message: e.message,
        })
    }

    /// Reads the file; a missing *default* file is simply no configuration,
    /// but a missing file the user named explicitly is an error.
    pub fn load(path: &Path, explicit: bool) -> Result<Option<Self>, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text, path).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => Ok(None),
            Err(source) => Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            }),
        }
    }
}

/// Paths from the config file, `~/` expanded to `$HOME`.
fn home_paths(paths: Vec<String>, env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    paths
        .iter()
        .map(|path| match (path.strip_prefix("~/"), env("HOME")) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest),
            _ => PathBuf::from(path),
        })
        .collect()
}

impl Settings {
    /// What vouches for a workspace before the trust question: `--trust`
    /// and `[safety] trusted_workspaces`.
    pub fn vouched(&self) -> crate::trust::Vouched<'_> {
        crate::trust::Vouched {
            flag: self.trust,
            folders: &self.trusted_workspaces,
        }
    }

    /// Reads the config file named by the flags, the environment or the
    /// default location, then merges. `env` is injected so tests do not
    /// depend on the process environment.
    pub fn load(
        flags: &GlobalOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let explicit = flags
            .config
            .clone()
            .or_else(|| env("HELLO_TUI_CONFIG").map(PathBuf::from));
        let path = explicit.clone().or_else(default_config_path);
        let file = match &path {
            Some(path) => ConfigFile::load(path, explicit.is_some())?,
            None => None,
        };
        let read_path = file.as_ref().and(path);
        Self::merge(file.unwrap_or_default(), read_path, flags, env)
    }

    /// The built-in settings: no config file, no environment, no flags
    /// (for embedding the workbench's state, and for tests).
    pub fn defaults() -> Self {
        match Self::merge(
            ConfigFile::default(),
            None,
            &GlobalOptions::default(),
            &|_| None,
        ) {
            Ok(settings) => settings,
            Err(err) => unreachable!("only the environment can be invalid, and it is empty: {err}"),
        }
    }

    /// File < environment < flags.
    pub fn merge(
        file: ConfigFile,
        config_path: Option<PathBuf>,
        flags: &GlobalOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
        let snapshot_budget_set =
            non_empty("HELLO_TUI_SNAPSHOT_BUDGET").is_some() || file.snapshot.budget.is_some();
        let snapshot_budget = match non_empty("HELLO_TUI_SNAPSHOT_BUDGET") {
            Some(text) => text.parse().map_err(|_| ConfigError::BadEnv {
                name: "HELLO_TUI_SNAPSHOT_BUDGET",
                message: format!("`{text}` is not a whole number of characters"),
            })?,
            None => file.snapshot.budget.unwrap_or(DEFAULT_SNAPSHOT_BUDGET),
        };
        let provider = flags.provider.or(file.model.provider).unwrap_or_default();
        Ok(Settings {
            theme: flags
                .theme
                .clone()
                .or_else(|| non_empty("HELLO_TUI_THEME"))
                .or(file.theme)
                .unwrap_or_else(|| DEFAULT_THEME.to_owned()),
            no_color: non_empty("NO_COLOR").is_some(),
            provider,
            model: flags
                .model
                .clone()
                .or_else(|| non_empty("HELLO_TUI_MODEL"))
                .or(file.model.name),
            base_url: flags
                .base_url
                .clone()
                .or_else(|| non_empty("HELLO_TUI_BASE_URL"))
                .or(file.model.base_url),
            api_key_env: flags
                .api_key_env
                .clone()
                .or(file.model.api_key_env)
                .unwrap_or_else(|| provider.default_key_env().to_owned()),
            model_from_command_line: flags.model.is_some()
                || flags.provider.is_some()
                || flags.base_url.is_some(),
            context_window: flags.context_window.or(file.model.context_window),
            reserve_output: file.model.reserve_output,
            compact_at: file.model.compact_at,
            thinking_budget: file.model.thinking_budget,
            python: flags
                .python
                .clone()
                .or_else(|| non_empty("HELLO_TUI_PYTHON").map(PathBuf::from))
                .or(file.kernel.python)
                .unwrap_or_else(|| PathBuf::from("python3")),
            snapshot_budget,
            snapshot_budget_set,
            follow_edits: file.ui.follow_edits.unwrap_or(true),
            on_quit: file.ui.on_quit.unwrap_or_default(),
            diagnostics: file.diagnostics,
            approval: flags.approval.or(file.safety.approval),
            allow_network: flags.allow_network || file.safety.allow_network.unwrap_or(false),
            memory_limit_mb: file.kernel.memory_limit_mb,
            cell_timeout_secs: file.kernel.cell_timeout_secs,
            keep_variables: file.kernel.keep_variables.unwrap_or(true).then(|| {
                crate::kernel::KeepLimits {
                    per_variable_bytes: file.kernel.keep_variable_mb.unwrap_or(8) << 20,
                    total_bytes: file.kernel.keep_variables_mb.unwrap_or(64) << 20,
                }
            }),
            kernel_env: file.kernel.env.unwrap_or_default(),
            max_processes: file
                .safety
                .max_processes
                .unwrap_or(crate::sandbox::DEFAULT_MAX_PROCESSES),
            tmp_size_mb: file
                .safety
                .tmp_size_mb
                .unwrap_or(crate::sandbox::DEFAULT_TMP_SIZE_MB),
            writable: home_paths(file.safety.writable.unwrap_or_default(), env),
            trust: flags.trust,
            trusted_workspaces: home_paths(file.safety.trusted_workspaces.unwrap_or_default(), env),
            subcalls: file.subcalls,
            mcp: file.mcp,
            hooks: file.hooks,
            model_profiles: file.models,
            config_path,
        })
    }

    /// These settings with profile `name` (`[models.NAME]`) as the model:
    /// its API, model, server and key variable, its window and thinking
    /// budget; how much to reserve and when to compact stay as configured
    /// unless it says. `None`: no such profile.
    pub(crate) fn for_profile(&self, name: &str) -> Option<Result<Settings, String>> {
        let profile = self.model_profiles.get(name)?;
        let Some(model) = profile.name.clone() else {
            return Some(Err(format!(
                "[models.{name}] in the config file names no model (name = \"…\")"
            )));
        };
        let provider = profile.provider.unwrap_or_default();
        Some(Ok(Settings {
            provider,
            model: Some(model),
            base_url: profile.base_url.clone(),
            api_key_env: profile
                .api_key_env
                .clone()
                .unwrap_or_else(|| provider.default_key_env().to_owned()),
            context_window: profile.context_window,
            reserve_output: profile.reserve_output.or(self.reserve_output),
            compact_at: profile.compact_at.or(self.compact_at),
            thinking_budget: profile.thinking_budget,
            ..self.clone()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn defaults_without_any_source() {
        let s = Settings::merge(
            ConfigFile::default(),
            None,
            &GlobalOptions::default(),
            &env_of(&[]),
        )
        .unwrap();
        assert_eq!(s.theme, "dark");
        assert_eq!(s.snapshot_budget, DEFAULT_SNAPSHOT_BUDGET);
        assert!(!s.snapshot_budget_set);
        assert_eq!(s.python, PathBuf::from("python3"));
        assert_eq!(s.api_key_env, "OPENAI_API_KEY");
        assert_eq!(s.model, None);
        assert!(!s.no_color);
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let file = ConfigFile::parse(
            "theme = \"light\"\n[model]\nname = \"file-model\"\nbase_url = \"http://file\"\n[snapshot]\nbudget = 5000\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let env = env_of(&[("HELLO_TUI_MODEL", "env-model"), ("HELLO_TUI_THEME", "")]);
        let flags = GlobalOptions {
            theme: None,
            model: None,
            base_url: Some("http://flag".into()),
            ..Default::default()
        };
        let s = Settings::merge(file, None, &flags, &env).unwrap();
        assert_eq!(
            s.theme, "light",
            "an empty env var does not override the file"
        );
        assert_eq!(s.model.as_deref(), Some("env-model"));
        assert_eq!(s.base_url.as_deref(), Some("http://flag"));
        assert_eq!(s.snapshot_budget, 5000);
        assert!(s.snapshot_budget_set);

        let flags = GlobalOptions {
            model: Some("flag-model".into()),
            ..Default::default()
        };
        let s = Settings::merge(ConfigFile::default(), None, &flags, &env).unwrap();
        assert_eq!(s.model.as_deref(), Some("flag-model"));
    }

    #[test]
    fn safety_and_kernel_limits_come_from_file_and_flags() {
        let file = ConfigFile::parse(
            "[safety]\napproval = \"auto\"\nallow_network = true\n[kernel]\nmemory_limit_mb = 2048\ncell_timeout_secs = 30\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let s = Settings::merge(file, None, &GlobalOptions::default(), &env_of(&[])).unwrap();
        assert_eq!(s.approval, Some(ApprovalMode::Auto));
        assert!(s.allow_network);
        assert_eq!(s.memory_limit_mb, Some(2048));
        assert_eq!(s.cell_timeout_secs, Some(30));
        assert_eq!(s.context_window, None);
        let flags = GlobalOptions {
            approval: Some(ApprovalMode::Full),
            ..Default::default()
        };
        let s = Settings::merge(ConfigFile::default(), None, &flags, &env_of(&[])).unwrap();
        assert_eq!(s.approval, Some(ApprovalMode::Full));
        assert!(!s.allow_network);
        assert!(s.writable.is_empty() && s.kernel_env.is_empty());
        assert_eq!(s.tmp_size_mb, crate::sandbox::DEFAULT_TMP_SIZE_MB);
        let file = ConfigFile::parse("[safety]\ntmp_size_mb = 0\n", Path::new("c.toml")).unwrap();
        let s = Settings::merge(file, None, &GlobalOptions::default(), &env_of(&[])).unwrap();
        assert_eq!(s.tmp_size_mb, 0);
        let file = ConfigFile::parse(
            "[safety]\nwritable = [\"~/.cargo/registry\", \"/opt/cache\"]\ntrusted_workspaces = [\"~/code\"]\n[kernel]\nenv = [\"MY_TOOL\"]\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let s = Settings::merge(
            file,
            None,
            &GlobalOptions::default(),
            &env_of(&[("HOME", "/home/u")]),
        )
        .unwrap();
        assert_eq!(
            s.writable,
            [
                PathBuf::from("/home/u/.cargo/registry"),
                PathBuf::from("/opt/cache")
            ]
        );
        assert_eq!(s.kernel_env, ["MY_TOOL"]);
        assert_eq!(s.trusted_workspaces, [PathBuf::from("/home/u/code")]);
        assert!(!s.trust, "only --trust sets it");
        let err = ConfigFile::parse("[safety]\napproval = \"yolo\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("safety.approval"), "{err}");
    }

    #[test]
    fn on_quit_is_read_and_a_wrong_value_is_named() {
        let merged = |text: &str| {
            let file = ConfigFile::parse(text, Path::new("c.toml")).unwrap();
            Settings::merge(file, None, &GlobalOptions::default(), &env_of(&[]))
                .unwrap()
                .on_quit
        };
        assert_eq!(merged(""), OnQuit::Transcript);
        assert_eq!(merged("[ui]\non_quit = \"summary\"\n"), OnQuit::Summary);
        assert_eq!(merged("[ui]\non_quit = \"none\"\n"), OnQuit::None);
        let err = ConfigFile::parse("[ui]\non_quit = \"all\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ui.on_quit"), "{err}");
    }

    #[test]
    fn the_context_window_comes_from_the_flag_then_the_file() {
        let file = ConfigFile::parse(
            "[model]\ncontext_window = 8000\nreserve_output = 1000\ncompact_at = 0.7\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let s = Settings::merge(file, None, &GlobalOptions::default(), &env_of(&[])).unwrap();
        assert_eq!(s.context_window, Some(8000));
        assert_eq!(s.reserve_output, Some(1000));
        assert_eq!(s.compact_at, Some(0.7));
        let flags = GlobalOptions {
            context_window: Some(4096),
            ..Default::default()
        };
        let file =
            ConfigFile::parse("[model]\ncontext_window = 8000\n", Path::new("c.toml")).unwrap();
        let s = Settings::merge(file, None, &flags, &env_of(&[])).unwrap();
        assert_eq!(s.context_window, Some(4096));
        let err = ConfigFile::parse("[model]\ncontext_window = \"big\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("model.context_window"), "{err}");
    }

    #[test]
    fn the_provider_picks_the_default_key_variable() {
        let file = ConfigFile::parse(
            "[model]\nprovider = \"anthropic\"\nname = \"claude-sonnet-4-5\"\nthinking_budget = 2048\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let s = Settings::merge(file, None, &GlobalOptions::default(), &env_of(&[])).unwrap();
        assert_eq!(s.provider, ProviderKind::Anthropic);
        assert_eq!(s.api_key_env, "ANTHROPIC_API_KEY");
        assert_eq!(s.thinking_budget, Some(2048));
        let flags = GlobalOptions {
            provider: Some(ProviderKind::OpenAi),
            api_key_env: Some("MY_KEY".into()),
            ..Default::default()
        };
        let file =
            ConfigFile::parse("[model]\nprovider = \"anthropic\"\n", Path::new("c.toml")).unwrap();
        let s = Settings::merge(file, None, &flags, &env_of(&[])).unwrap();
        assert_eq!(
            (s.provider, s.api_key_env.as_str()),
            (ProviderKind::OpenAi, "MY_KEY")
        );
        let err = ConfigFile::parse("[model]\nprovider = \"gemini\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("model.provider"), "{err}");
    }

    #[test]
    fn no_color_is_respected_when_non_empty() {
        let on = Settings::merge(
            ConfigFile::default(),
            None,
            &GlobalOptions::default(),
            &env_of(&[("NO_COLOR", "1")]),
        )
        .unwrap();
        assert!(on.no_color);
        let off = Settings::merge(
            ConfigFile::default(),
            None,
            &GlobalOptions::default(),
            &env_of(&[("NO_COLOR", "")]),
        )
        .unwrap();
        assert!(!off.no_color);
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = "theme = \"dark\"\n\n[model]\nnmae = \"gpt\"\n";
        let err = ConfigFile::parse(text, Path::new("/home/u/.config/hello-tui/config.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("config.toml:4:"), "{err}");
        assert!(err.contains("nmae"), "{err}");
    }

    #[test]
    fn bad_value_names_the_field() {
        let err = ConfigFile::parse("[snapshot]\nbudget = \"lots\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.toml:2:"), "{err}");
        assert!(err.contains("snapshot.budget"), "{err}");
        let err = Settings::merge(
            ConfigFile::default(),
            None,
            &GlobalOptions::default(),
            &env_of(&[("HELLO_TUI_SNAPSHOT_BUDGET", "x")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("HELLO_TUI_SNAPSHOT_BUDGET"), "{err}");
    }

    #[test]
    fn load_reads_explicit_file_and_reports_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "theme = \"light\"\n[kernel]\npython = \"/usr/bin/python3\"\n",
        )
        .unwrap();
        let flags = GlobalOptions {
            config: Some(path.clone()),
            ..Default::default()
        };
        let s = Settings::load(&flags, &env_of(&[])).unwrap();
        assert_eq!(s.theme, "light");
        assert_eq!(s.python, PathBuf::from("/usr/bin/python3"));
        assert_eq!(s.config_path, Some(path));

        let missing = GlobalOptions {
            config: Some(dir.path().join("nope.toml")),
            ..Default::default()
        };
        let err = Settings::load(&missing, &env_of(&[]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope.toml"), "{err}");

        let via_env = env_of(&[(
            "HELLO_TUI_CONFIG",
            dir.path().join("config.toml").to_str().unwrap(),
        )]);
        let s = Settings::load(&GlobalOptions::default(), &via_env).unwrap();
        assert_eq!(s.theme, "light");
    }

    #[test]
    fn diagnostics_servers_replace_the_defaults_and_typos_are_errors() {
        let file = ConfigFile::parse(
            "[[diagnostics.servers]]\nname = \"pyright\"\nlanguage_ids = [\"python\"]\ncommand = \"basedpyright-langserver\"\nargs = [\"--stdio\"]\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(file.diagnostics.servers.len(), 1);
        assert_eq!(
            file.diagnostics.servers[0].command,
            "basedpyright-langserver"
        );
        assert!(
            !file.diagnostics.checks.is_empty(),
            "checks keep their defaults"
        );
        let err = ConfigFile::parse("[diagnostics]\nserver = []\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("server"), "{err}");
    }

    /// The large-document size is a setting with VS Code's default.
    #[test]
    fn the_large_document_size_is_settable() {
        let parse = |text| ConfigFile::parse(text, Path::new("c.toml")).unwrap();
        assert_eq!(parse("").diagnostics.large_file_bytes, 20_000_000);
        let file = parse("[diagnostics]\nlarge_file_bytes = 1000\n");
        assert_eq!(file.diagnostics.large_file_bytes, 1000);
    }
}

#[cfg(test)]
mod documented_example {
    /// The example config file in docs/configuration.md is one the
    /// workbench reads: a key it misspells would be an error for every
    /// user who copies it.
    #[test]
    fn the_documented_config_file_parses() {
        let doc = include_str!("../docs/configuration.md");
        let start = doc.find("```toml\n").expect("a toml block") + "```toml\n".len();
        let end = start + doc[start..].find("```").expect("its end");
        let file = super::ConfigFile::parse(&doc[start..end], std::path::Path::new("doc"))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(file.hooks.entries().len(), 1);
        assert!(!file.mcp.servers.is_empty());
    }
}

//! Command-line interface (clap). Parsing only; `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A full-screen terminal workbench for a code-action coding agent.
///
/// Edit code in a real editor pane while an agent answers by writing Python
/// that runs in a persistent kernel. Every pane — conversation, kernel
/// variables, file view, diagnostics, search — shows what the agent can see.
#[derive(Debug, Parser)]
#[command(
    name = "hello-tui",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Press F1 inside the workbench for every key binding.\n\
                  Configuration: ~/.config/hello-tui/config.toml (see README)."
)]
pub struct Cli {
    /// Workspace directory to open.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    #[command(flatten)]
    pub options: GlobalOptions,

    /// Open a bundled demo workspace with a scripted model (not available yet).
    #[arg(long)]
    pub demo: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options that override the config file and the environment.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalOptions {
    /// Theme: `dark`, `light`, or a path to a theme .toml file.
    #[arg(long, global = true, value_name = "NAME|PATH")]
    pub theme: Option<String>,

    /// Config file to read instead of ~/.config/hello-tui/config.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Model name sent to the OpenAI-compatible endpoint.
    #[arg(long, global = true, value_name = "NAME")]
    pub model: Option<String>,

    /// Base URL of an OpenAI-compatible Chat Completions endpoint.
    #[arg(long, global = true, value_name = "URL")]
    pub base_url: Option<String>,

    /// Python interpreter for the kernel.
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,

    /// How model-written code is approved: `ask` (each cell and shell
    /// command; the TUI default), `auto` (no questions, inside the sandbox),
    /// `full` (no sandbox, no questions), `deny`.
    #[arg(long, global = true, value_name = "MODE")]
    pub approval: Option<crate::sandbox::ApprovalMode>,

    /// Let the sandboxed kernel open network connections.
    #[arg(long, global = true)]
    pub allow_network: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one agent turn headless (not available yet).
    Exec(ReservedArgs),
    /// Print the runtime-context snapshot the model would receive for a
    /// scene (a JSON file, or a file opened from disk).
    Snapshot(crate::snapshot::SnapshotArgs),
    /// List the sessions of a workspace (not available yet).
    Sessions(ReservedArgs),
    /// Run a command under the kernel's sandbox (writes only to the
    /// workspace and a private temp dir; no network unless allowed).
    Sandbox(crate::sandbox::cli::SandboxArgs),
}

impl Command {
    pub fn name(&self) -> &'static str {
        match self {
            Command::Exec(_) => "exec",
            Command::Snapshot(_) => "snapshot",
            Command::Sessions(_) => "sessions",
            Command::Sandbox(_) => "sandbox",
        }
    }
}

/// Arguments of a subcommand that is reserved but not built yet: accepted so
/// the error is "not available yet" rather than a confusing usage message.
#[derive(Debug, Args)]
pub struct ReservedArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

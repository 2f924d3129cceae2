//! Command-line interface (clap). Parsing only; `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::GlobalOptions;

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
                  Configuration: ~/.config/hello-tui/config.toml (see docs/configuration.md)."
)]
pub struct Cli {
    /// A directory to open as the workspace, or a file to open in it,
    /// optionally at a position (`src/app.py`, `src/app.py:12`,
    /// `src/app.py:12:5`); a file's workspace is its git repository, else
    /// the working directory when the file is under it.
    #[arg(value_name = "PATH", default_value = ".")]
    pub path: PathBuf,

    #[command(flatten)]
    pub options: GlobalOptions,

    /// Open a bundled demo workspace (copied to a temp dir) with a scripted
    /// model that replays a recorded conversation offline.
    #[arg(long)]
    pub demo: bool,

    /// Resume the latest session of this workspace.
    #[arg(long = "continue", conflicts_with = "resume")]
    pub continue_session: bool,

    /// Resume the session with this id (see `hello-tui sessions`).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,

    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

impl Cli {
    /// The session to continue: `None` for a new one, `Some(None)` for the
    /// latest (`--continue`), `Some(Some(id))` for `--resume ID`.
    pub fn resume(&self) -> Option<Option<String>> {
        if self.continue_session {
            Some(None)
        } else {
            self.resume.clone().map(Some)
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Run one agent turn headless and print the answer (or JSON events).
    Exec(crate::exec::ExecArgs),
    /// Print the runtime-context snapshot the model would receive for a
    /// scene (a JSON file, or a file opened from disk).
    Snapshot(crate::snapshot::SnapshotArgs),
    /// List the sessions of a workspace (id, time, first prompt, messages).
    Sessions(SessionsArgs),
    /// Run a command under the kernel's sandbox (writes only to the
    /// workspace and a private temp dir; no network unless allowed).
    Sandbox(crate::sandbox::cli::SandboxArgs),
}

impl CliCommand {
    pub fn name(&self) -> &'static str {
        match self {
            CliCommand::Exec(_) => "exec",
            CliCommand::Snapshot(_) => "snapshot",
            CliCommand::Sessions(_) => "sessions",
            CliCommand::Sandbox(_) => "sandbox",
        }
    }
}

/// `hello-tui sessions [-C DIR]`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Workspace whose sessions to list.
    #[arg(short = 'C', value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
}

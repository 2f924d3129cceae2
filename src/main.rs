//! The `hello-tui` binary: parse the command line, merge settings, and run
//! the workbench or a subcommand.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use hello_tui::app::{self, AppState};
use hello_tui::cli::{Cli, Command};
use hello_tui::config::Settings;
use hello_tui::theme::Theme;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("hello-tui: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Some(Command::Snapshot(args)) => return hello_tui::snapshot::run(args),
        Some(Command::Sandbox(args)) => return hello_tui::sandbox::cli::run(args),
        Some(command) => {
            eprintln!(
                "hello-tui {}: not available yet in this build (it is planned; see the README).",
                command.name()
            );
            return Ok(ExitCode::from(2));
        }
        None => {}
    }
    if cli.demo {
        eprintln!(
            "hello-tui --demo: not available yet in this build (it is planned; see the README)."
        );
        return Ok(ExitCode::from(2));
    }
    let workspace = match workspace_root(&cli.path) {
        Ok(root) => root,
        Err(message) => {
            eprintln!("hello-tui: {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let settings = Settings::load(&cli.options, &|name| std::env::var(name).ok())?;
    let mut theme = Theme::load(&settings.theme)?;
    if settings.no_color {
        theme = theme.without_colors();
    }
    if let Err(error) = hello_tui::logging::init() {
        eprintln!("hello-tui: logging disabled: {error:#}");
    }
    tracing::info!(workspace = %workspace.display(), "starting");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let state = AppState::new(workspace, settings);
    runtime.block_on(app::run::run(state, theme))?;
    Ok(ExitCode::SUCCESS)
}

/// The workspace must be an existing directory; anything else is a usage
/// error (exit code 2) with a sentence saying what is wrong.
fn workspace_root(path: &Path) -> Result<PathBuf, String> {
    let metadata = std::fs::metadata(path).map_err(|e| {
        format!(
            "cannot open workspace `{}`: {}",
            path.display(),
            io_reason(&e)
        )
    })?;
    if !metadata.is_dir() {
        return Err(format!("workspace `{}` is not a directory", path.display()));
    }
    std::fs::canonicalize(path).map_err(|e| {
        format!(
            "cannot open workspace `{}`: {}",
            path.display(),
            io_reason(&e)
        )
    })
}

fn io_reason(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => error.to_string(),
    }
}

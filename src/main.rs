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
        Some(Command::Exec(args)) => return hello_tui::exec::run(args, &cli.options),
        Some(Command::Sessions(args)) => return hello_tui::app::sessions::list_command(&args.dir),
        None => {}
    }
    // The demo workspace lives in a temp dir that is removed on exit.
    let demo_dir = if cli.demo {
        match hello_tui::app::sessions::demo_workspace() {
            Ok(dir) => Some(dir),
            Err(error) => {
                eprintln!("hello-tui --demo: cannot create the demo workspace: {error}");
                return Ok(ExitCode::FAILURE);
            }
        }
    } else {
        None
    };
    let path = demo_dir.as_ref().map_or(cli.path.as_path(), |d| d.path());
    let workspace = match workspace_root(path) {
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
    let mut state = AppState::new(workspace, settings);
    let resume = if cli.continue_session {
        Some(None)
    } else {
        cli.resume.clone().map(Some)
    };
    let _guard = runtime.enter();
    if let Err(message) = hello_tui::app::sessions::configure(&mut state, cli.demo, resume) {
        eprintln!("hello-tui: {message}");
        return Ok(ExitCode::from(2));
    }
    runtime.block_on(app::run::run(state, theme))?;
    drop(demo_dir);
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

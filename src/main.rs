//! The `hello-tui` binary: parse the command line, merge settings, and run
//! the workbench or a subcommand.

// No `unwrap`/`expect` outside tests: I/O and user input get errors, not
// panics. The other lints of the house are in Cargo.toml's `[lints]`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use hello_tui::app::{self, AppState};
use hello_tui::cli::{Cli, CliCommand};
use hello_tui::config::Settings;
use hello_tui::sanitize::for_display;
use hello_tui::theme::Theme;
use hello_tui::workspace::resolve_open_target;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{}", for_display(&format!("hello-tui: {error:#}")));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Some(CliCommand::Snapshot(args)) => return hello_tui::snapshot::run(args, &cli.options),
        Some(CliCommand::Sandbox(args)) => return hello_tui::sandbox::cli::run(args),
        Some(CliCommand::Exec(args)) => return hello_tui::exec::run(args, &cli.options),
        Some(CliCommand::Sessions(args)) => {
            return hello_tui::workbench::sessions::list_command(&args.dir);
        }
        None => {}
    }
    // The demo workspace lives in a temp dir that is removed on exit.
    let demo_dir = if cli.demo {
        match hello_tui::workbench::sessions::demo_workspace() {
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
    // A directory is the workspace; a file (with an optional :LINE:COL)
    // opens in the file view, in its git root, the working directory or its
    // project root (see `resolve_open_target`).
    let cwd = std::env::current_dir().context("reading the working directory")?;
    let target = match resolve_open_target(&path.to_string_lossy(), &cwd) {
        Ok(target) => target,
        Err(error) => {
            eprintln!(
                "{}",
                for_display(&format!(
                    "hello-tui: cannot open `{}`: {error}",
                    path.display()
                ))
            );
            return Ok(ExitCode::from(2));
        }
    };
    let workspace = target.workspace.root().to_path_buf();
    let settings = Settings::load(&cli.options, &|name| std::env::var(name).ok())?;
    let mut theme = Theme::load(&settings.theme)?;
    if settings.no_color {
        theme = theme.without_colors();
    }
    if let Err(error) = hello_tui::logging::init() {
        eprintln!(
            "{}",
            for_display(&format!("hello-tui: logging disabled: {error:#}"))
        );
    }
    tracing::info!(workspace = %workspace.display(), "starting");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut state = AppState::new(workspace.clone(), settings);
    state.prepare_highlighter(&theme.syntax_theme);
    let _guard = runtime.enter();
    if let Err(message) =
        hello_tui::workbench::sessions::configure(&mut state.workbench, cli.demo, cli.resume())
    {
        eprintln!("{}", for_display(&format!("hello-tui: {message}")));
        return Ok(ExitCode::from(2));
    }
    if let Some(file) = &target.file {
        let position = target
            .line
            .map(|line| (line as usize, target.column.unwrap_or(1) as usize));
        app::editors::open(&mut state, file, position);
    }
    let exit = runtime.block_on(hello_tui::tui::run::run(state, theme))?;
    // Already sanitized; the scrollback keeps it above the resume line.
    print!("{}", exit.transcript);
    // The demo's sessions go with its temp dir: nothing to resume.
    if let Some(id) = exit.session.filter(|_| demo_dir.is_none()) {
        let line = hello_tui::workbench::sessions::exit_line(&id, &workspace, Some(&cwd));
        println!("{}", for_display(&line));
    }
    drop(demo_dir);
    Ok(ExitCode::SUCCESS)
}

//! Logging goes to a file, never to the terminal (it would corrupt the
//! full-screen UI). `HELLO_TUI_LOG` sets the filter (default `info`).

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The log file: `$XDG_STATE_HOME/hello-tui/hello-tui.log` (or the data dir
/// where there is no state dir). `HELLO_TUI_LOG_FILE` overrides it.
pub fn log_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("HELLO_TUI_LOG_FILE") {
        return Some(PathBuf::from(path));
    }
    let dirs = directories::ProjectDirs::from("", "", "hello-tui")?;
    let dir = dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir());
    Some(dir.join("hello-tui.log"))
}

/// Starts file logging. Failing to log is not a reason to refuse to start:
/// the error is returned for the caller to mention, and nothing is logged.
pub fn init() -> anyhow::Result<PathBuf> {
    let path = log_path().ok_or_else(|| anyhow::anyhow!("no home directory for the log file"))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().create(true).append(true).open(&path)?;
    let filter =
        EnvFilter::try_from_env("HELLO_TUI_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(path)
}

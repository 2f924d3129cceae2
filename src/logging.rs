//! Logging goes to a file, never to the terminal (it would corrupt the
//! full-screen UI). `HELLO_TUI_LOG` sets the filter (default `info`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::agent::provider::redact::redact_known;

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
        .with_writer(Mutex::new(Redacting(file)))
        .try_init()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(path)
}

/// A writer that removes API keys (remembered ones verbatim, key-shaped
/// ones by shape) from what it writes. tracing formats each event into one
/// buffer and writes it in one call, so a key is never split across writes.
struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact_known(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_never_holds_a_remembered_key() {
        crate::agent::provider::redact::remember_secret("log-secret-value-0815");
        let mut log = Redacting(Vec::new());
        log.write_all(b"request failed for key log-secret-value-0815\n")
            .unwrap();
        assert_eq!(
            String::from_utf8(log.0).unwrap(),
            "request failed for key [REDACTED]\n"
        );
    }
}

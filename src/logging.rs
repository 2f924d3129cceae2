//! Logging goes to a file, never to the terminal (it would corrupt the
//! full-screen UI). `HELLO_TUI_LOG` sets the filter (default `info`).
//!
//! The log quotes what cells, kernels and servers printed, and users read
//! it with `tail` in a terminal: every control character is written
//! visibly (`␛]0;…␇`), so a line a cell printed cannot set the title,
//! clear the screen or write the clipboard of whoever reads the log.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::agent::provider::redact::redact_known;

use tracing_subscriber::EnvFilter;

/// The log file: `$XDG_STATE_HOME/hello-tui/hello-tui.log` (or the data dir
/// where there is no state dir). `HELLO_TUI_LOG_FILE` overrides it.
pub(crate) fn log_path() -> Option<PathBuf> {
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
/// ones by shape) from what it writes, and shows control characters
/// visibly. tracing formats each event into one buffer and writes it in one
/// call, so neither a key nor an escape sequence is split across writes.
struct Redacting<W>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let redacted = redact_known(&text);
        self.0
            .write_all(crate::sanitize::visible_controls(&redacted).as_bytes())?;
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

    #[test]
    fn the_log_shows_escape_sequences_instead_of_holding_them() {
        let mut log = Redacting(Vec::new());
        log.write_all(b"background output: \x1b]0;PWN\x07\x1b[2J text\n")
            .unwrap();
        let written = String::from_utf8(log.0).unwrap();
        assert!(
            !written.contains('\u{1b}') && !written.contains('\u{7}'),
            "{written:?}"
        );
        assert!(written.ends_with("text\n"), "{written:?}");
    }
}

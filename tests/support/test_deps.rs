//! Programs `scripts/test` installs for the tests into a project-local
//! prefix (`$HELLO_TUI_TEST_DEPS`, by default `~/.cache/hello-tui/test-deps`):
//! real tools no one here wrote, pinned.

use std::path::PathBuf;

/// `relative` inside the test-deps folder, or `None` (after saying why)
/// when it is not there and this is not CI, where it must be.
pub fn installed(relative: &str, what: &str) -> Option<PathBuf> {
    let deps = std::env::var_os("HELLO_TUI_TEST_DEPS")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("hello-tui/test-deps"))
        })?;
    let path = deps.join(relative);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{what} is not installed at {}; run scripts/test (it installs it)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{message}");
    eprintln!("\n!!!!! {message}; its tests skipped\n");
    None
}

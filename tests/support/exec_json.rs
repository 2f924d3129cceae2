//! Runs `hello-tui exec --json` the way the tests that need a whole
//! headless turn do, and reads what it printed.

use std::time::Duration;

/// Runs `command` (an `exec --json` the caller built), waiting at most
/// `limit`; fails the test with everything it printed unless it
/// succeeded. Returns its JSON events in order and its whole stdout (for
/// failure messages).
pub async fn run(
    mut command: tokio::process::Command,
    limit: Duration,
) -> (Vec<serde_json::Value>, String) {
    let output = tokio::time::timeout(limit, command.output())
        .await
        .expect("exec finishes")
        .expect("exec starts");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let events = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: not JSON: {line}")))
        .collect();
    (events, stdout)
}

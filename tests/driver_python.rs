//! The driver's own tests (`assets/kernel/tests/`, pytest): safe repr, the
//! variable listing, framing against the golden frames, interrupts and
//! background output. Run from here so that `cargo test`, the README's one
//! test command, runs them too.

use std::process::Command;

#[test]
fn the_drivers_pytest_suite_passes() {
    let root = env!("CARGO_MANIFEST_DIR");
    // `scripts/test` installs pytest into a venv of its own and names its
    // Python here; a plain `cargo test` uses `python3` from PATH.
    let python = std::env::var("HELLO_TUI_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_pytest = Command::new(&python)
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        has_pytest,
        "pytest is not installed for {python}: `scripts/test` installs it (or `python3 -m pip install pytest`)"
    );
    let output = Command::new(&python)
        .args([
            "-m",
            "pytest",
            "assets/kernel/tests",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .current_dir(root)
        // Keep the source tree free of __pycache__ directories.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("the test Python runs");
    assert!(
        output.status.success(),
        "the driver's pytest suite failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

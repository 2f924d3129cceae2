//! What the tests of sandbox sessions share: whether this machine can
//! confine at all, and a workspace outside the host's `/tmp`.

// Each test binary includes this file and uses part of it.
#![allow(dead_code)]

use std::path::PathBuf;

use hello_tui::sandbox::SandboxStatus;

/// True when the sandbox works here; otherwise says so loudly (and fails
/// when `HELLO_TUI_REQUIRE_LANDLOCK` says this machine must have it).
pub fn available() -> bool {
    match SandboxStatus::probe() {
        SandboxStatus::Enforced { .. } => true,
        SandboxStatus::Unavailable(reason) => {
            eprintln!("\n!!!!! SANDBOX UNAVAILABLE ON THIS MACHINE: {reason}\n");
            assert!(
                std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none(),
                "HELLO_TUI_REQUIRE_LANDLOCK is set but the sandbox is unavailable: {reason}"
            );
            false
        }
    }
}

/// A workspace `ws` inside a scratch root (kept alive by the `TempDir`),
/// so the root is a real place outside it, not under the host's `/tmp`.
pub struct Fixture {
    pub root: tempfile::TempDir,
    pub workspace: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let root = tempfile::tempdir_in(super::scratch::scratch_parent()).unwrap();
        let workspace = root.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        Fixture { root, workspace }
    }
}

//! Where tests put files a sandboxed child must see or must not write:
//! outside the host's `/tmp`, which the sandbox replaces with a private one.
//! The build's own temp dir when it is not under `/tmp`; otherwise (a CI
//! checkout under `/tmp`) `/var/cache/hello-tui-tests` as root (reachable
//! by the `nobody` the non-root sandbox test runs as), or a folder in the
//! user's cache dir.

use std::path::{Path, PathBuf};

/// Whether `path` is under the host's temp dir (hidden from confined code).
pub fn hidden_from_sandbox(path: &Path) -> bool {
    path.starts_with("/tmp") || path.starts_with(std::env::temp_dir())
}

/// A folder outside the host's `/tmp` for scratch roots and fixture copies.
pub fn scratch_parent() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let target = target
        .canonicalize()
        .unwrap_or_else(|_| target.to_path_buf());
    if !hidden_from_sandbox(&target) {
        return target;
    }
    // SAFETY: geteuid has no preconditions.
    let dir = if unsafe { libc::geteuid() } == 0 {
        PathBuf::from("/var/cache/hello-tui-tests")
    } else {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .expect("HOME is set");
        home.join(".cache/hello-tui-tests")
    };
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
        .expect("a reachable scratch folder");
    dir
}

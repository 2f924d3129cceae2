//! The interpreter the kernel runs, resolved once per process.
//!
//! On many machines `python3` on `PATH` is a pyenv (or asdf) shim: a shell
//! script that works out the version and then execs the real interpreter.
//! That costs a shell plus pyenv's own start on every kernel start (184 ms
//! against 98 ms, issue 15). So when the configured program is a script, it
//! is asked once, in the workspace and under the kernel's own environment
//! and confinement (the shim picks the version from `.python-version` and
//! `PYENV_VERSION`), for `sys.executable`; every start after that runs
//! that path directly.
//!
//! `sys.executable` is used as Python reports it, not through `realpath`:
//! a virtualenv's `bin/python` is a symlink to the base interpreter, and
//! Python finds the virtualenv (`pyvenv.cfg`) only from the unresolved
//! path, so resolving the link would silently drop the venv's packages.
//! A real binary (no `#!`) is run as configured, with no extra start.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use super::config::PreSpawnHook;
use super::lock;

/// How long the one-time question may take before the configured program
/// is used as it is.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// (configured program, workspace) → what to run.
static RESOLVED: LazyLock<Mutex<HashMap<(PathBuf, PathBuf), PathBuf>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// What to run for `python` in `workspace`: the interpreter behind a shim,
/// or `python` itself (a binary, or a script that could not be asked; the
/// kernel start then reports the real problem).
pub(crate) async fn resolve(
    python: &Path,
    workspace: &Path,
    pre_spawn: Option<&PreSpawnHook>,
) -> PathBuf {
    let key = (python.to_path_buf(), workspace.to_path_buf());
    if let Some(known) = lock(&RESOLVED).get(&key) {
        return known.clone();
    }
    let resolved = match find_script(python) {
        Some(script) => ask_executable(&script, workspace, pre_spawn)
            .await
            .unwrap_or_else(|| python.to_path_buf()),
        None => python.to_path_buf(),
    };
    lock(&RESOLVED).insert(key, resolved.clone());
    resolved
}

/// `python` (searched on `PATH` when it has no `/`) when it is a script.
fn find_script(python: &Path) -> Option<PathBuf> {
    let path = if python.components().count() > 1 || python.is_absolute() {
        python.to_path_buf()
    } else {
        let search = std::env::var_os("PATH")?;
        std::env::split_paths(&search)
            .map(|dir| dir.join(python))
            .find(|candidate| candidate.is_file())?
    };
    let mut magic = [0u8; 2];
    let mut file = std::fs::File::open(&path).ok()?;
    file.read_exact(&mut magic).ok()?;
    (&magic == b"#!").then_some(path)
}

async fn ask_executable(
    script: &Path,
    workspace: &Path,
    pre_spawn: Option<&PreSpawnHook>,
) -> Option<PathBuf> {
    let mut cmd = tokio::process::Command::new(script);
    // Isolated (`-I`): `-c` would put the working directory, the
    // workspace, first on `sys.path`, and a shipped `linecache.py` would
    // run as Python starts.
    cmd.args(["-I", "-c", "import sys; print(sys.executable)"])
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    if let Some(hook) = pre_spawn {
        (hook.0)(cmd.as_std_mut()).ok()?;
    }
    let output = tokio::time::timeout(RESOLVE_TIMEOUT, cmd.output())
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        tracing::debug!(script = %script.display(), "could not ask the interpreter for its path");
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let executable = PathBuf::from(text.trim_end_matches(['\n', '\r']));
    (executable.is_absolute() && executable.is_file()).then(|| {
        tracing::info!(shim = %script.display(), python = %executable.display(), "kernel interpreter resolved");
        executable
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// A shim is asked once; the answer is the interpreter it runs, and
    /// the second lookup does not run it again.
    #[tokio::test]
    async fn a_shim_is_asked_once_for_the_real_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("runs");
        let shim = script(
            dir.path(),
            "python-shim",
            &format!(
                "#!/bin/sh\necho run >> {}\nexec python3 \"$@\"\n",
                count.display()
            ),
        );
        let first = resolve(&shim, dir.path(), None).await;
        assert_ne!(first, shim);
        assert!(
            first.is_absolute() && first.is_file(),
            "{}",
            first.display()
        );
        let again = resolve(&shim, dir.path(), None).await;
        assert_eq!(again, first);
        let runs = std::fs::read_to_string(&count).unwrap();
        assert_eq!(runs.lines().count(), 1, "the shim ran once");
    }

    /// A program that is not a script is run as configured, without an
    /// extra start; a script that cannot answer is run as configured too.
    #[tokio::test]
    async fn binaries_and_broken_scripts_stay_as_configured() {
        let dir = tempfile::tempdir().unwrap();
        let sh = PathBuf::from("/bin/sh");
        assert_eq!(resolve(&sh, dir.path(), None).await, sh);
        let broken = script(dir.path(), "broken", "#!/bin/sh\nexit 3\n");
        assert_eq!(resolve(&broken, dir.path(), None).await, broken);
    }
}

//! A small `which`: is a program runnable from PATH (or given as a path)?
//! [`which_in`] also leaves out programs of an untrusted workspace (see
//! `crate::trust`): a `.venv/bin` or `node_modules/.bin` on `PATH`, a
//! relative `PATH` entry, a configured `./tools/lint`.

use std::path::{Path, PathBuf};

pub fn which(program: &str) -> Option<PathBuf> {
    which_in(program, None).program
}

/// What a lookup found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// The program to run (absolute when found through `PATH`).
    pub program: Option<PathBuf>,
    /// The first match left out because it lies in the untrusted workspace.
    pub passed_over: Option<PathBuf>,
}

/// Finds `program` as `which` does; with `untrusted` (the root of a
/// workspace not trusted yet), a match inside it is passed over and the
/// lookup goes on along `PATH`. The result is absolute for a `PATH` match,
/// so a child with another working directory runs the same program.
pub fn which_in(program: &str, untrusted: Option<&Path>) -> Found {
    let mut found = Found::default();
    let mut consider = |candidate: PathBuf| -> bool {
        if !is_executable(&candidate) {
            return false;
        }
        let candidate = std::path::absolute(&candidate).unwrap_or(candidate);
        match untrusted {
            Some(root) if crate::trust::inside(&candidate, root) => {
                found.passed_over.get_or_insert(candidate);
                false
            }
            _ => {
                found.program = Some(candidate);
                true
            }
        }
    };
    if program.contains('/') {
        if untrusted.is_none() {
            // As configured: a path the user wrote stays as written.
            let path = Path::new(program);
            return Found {
                program: is_executable(path).then(|| path.to_path_buf()),
                passed_over: None,
            };
        }
        consider(PathBuf::from(program));
        return found;
    }
    let Some(paths) = std::env::var_os("PATH") else {
        return found;
    };
    for dir in std::env::split_paths(&paths) {
        if consider(dir.join(program)) {
            break;
        }
    }
    found
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Writes an executable `#!/bin/sh` script at `path`, folders included
/// (a planted or installed program, in tests).
#[cfg(test)]
pub(crate) fn write_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap_or(path)).unwrap();
    std::fs::write(path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_not_nonsense() {
        assert!(which("sh").is_some());
        assert!(which("definitely-not-a-real-program-xyz").is_none());
        assert!(which("/bin/sh").is_some());
        assert!(which("/nonexistent/sh").is_none());
    }

    #[test]
    fn an_untrusted_workspace_is_passed_over() {
        let ws = tempfile::tempdir().unwrap();
        let tool = ws.path().join("bin/sh");
        write_executable(&tool);
        let untrusted = Some(ws.path());
        let own = which_in(tool.to_str().unwrap(), untrusted);
        assert_eq!(own.program, None);
        assert_eq!(own.passed_over, Some(tool.clone()));
        assert_eq!(
            which_in(tool.to_str().unwrap(), None).program,
            Some(tool.clone())
        );
        assert!(
            which_in("sh", untrusted)
                .program
                .is_some_and(|p| !p.starts_with(ws.path())),
            "sh from PATH, outside the workspace"
        );
    }
}

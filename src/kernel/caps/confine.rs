//! Keeping capability paths inside the workspace: no `..` escape, no absolute
//! path outside it, no symlink that leads out.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::kernel::CapabilityError;

/// Whether `user_path`, as spelled, passes through a symbolic link inside
/// the workspace (its last part included). `confine` follows such links
/// (they stay inside), but a write must not: what the user is shown, and
/// what a literal path in their own cell names, would not be what is
/// written.
pub(crate) fn leads_through_link(root: &Path, user_path: &str) -> bool {
    let lexical = lexical(root, user_path);
    let Ok(inside) = lexical.strip_prefix(root) else {
        return false;
    };
    let mut path = root.to_path_buf();
    for part in inside.components() {
        path.push(part);
        match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

/// `user_path` (relative to `root`, or absolute) as a path, `..` and `.`
/// resolved by name only.
fn lexical(root: &Path, user_path: &str) -> PathBuf {
    let requested = Path::new(user_path);
    if requested.is_absolute() {
        normalize(requested)
    } else {
        normalize(&root.join(requested))
    }
}

/// Resolve `user_path` (relative to `root`, or absolute inside it) to the real
/// path it names. `root` must already be canonical. The target may not exist
/// yet (for writes); whatever part of it exists is resolved through symlinks
/// and must stay under `root`.
pub fn confine(root: &Path, user_path: &str) -> Result<PathBuf, CapabilityError> {
    if user_path.is_empty() {
        return Err(CapabilityError::InvalidArgument("empty path".to_owned()));
    }
    if user_path.contains('\0') {
        return Err(CapabilityError::InvalidArgument(
            "path contains a NUL byte".to_owned(),
        ));
    }
    let outside = || {
        CapabilityError::PermissionDenied(format!(
            "{user_path}: outside the workspace ({})",
            root.display()
        ))
    };
    let lexical = lexical(root, user_path);
    if !lexical.starts_with(root) {
        return Err(outside());
    }
    // Resolve the longest existing prefix through the filesystem.
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(outside());
                };
                rest.push(name.to_owned());
                existing = parent;
            }
            Err(err) => return Err(CapabilityError::from_io(&err, user_path)),
        }
    }
    let real = existing
        .canonicalize()
        .map_err(|err| CapabilityError::from_io(&err, user_path))?;
    if !real.starts_with(root) {
        return Err(CapabilityError::PermissionDenied(format!(
            "{user_path}: leads outside the workspace through a symlink"
        )));
    }
    Ok(rest
        .into_iter()
        .rev()
        .fold(real, |path, name| path.join(name)))
}

/// Lexical normalisation: drop `.`, apply `..` (never above `/`).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes_and_accepts_inside_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        assert_eq!(confine(&root, "sub/../a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(
            confine(&root, "./new/deep.txt").unwrap(),
            root.join("new/deep.txt")
        );
        let inside = root.join("sub/x");
        assert_eq!(confine(&root, inside.to_str().unwrap()).unwrap(), inside);
        for bad in ["../x", "sub/../../x", "/etc/passwd"] {
            let err = confine(&root, bad).unwrap_err();
            assert_eq!(err.python_type(), "PermissionError", "{bad}");
        }
        std::os::unix::fs::symlink("/tmp", root.join("out")).unwrap();
        let err = confine(&root, "out/x.txt").unwrap_err();
        assert!(err.to_string().contains("symlink"), "{err}");
        assert_eq!(confine(&root, "").unwrap_err().python_type(), "ValueError");
    }
}

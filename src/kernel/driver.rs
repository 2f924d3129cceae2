//! The Python driver (`assets/kernel/`): a small package embedded in the
//! binary, written to a fresh private directory at every kernel start and
//! run by path.
//!
//! Run by path rather than as `python -c SOURCE`: `ps` shows a path instead
//! of 50 KB of source (a third of Linux's 128 KiB single-argument limit),
//! and tracebacks from the driver name real files. The directory is the
//! host's, created 0700 outside the workspace and the sandbox's private
//! temp dir, so a confined cell can read it but not change what the next
//! kernel start runs; it is written fresh for every start anyway and
//! removed when that kernel's connection goes.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Every file of the driver, by path relative to the directory it runs from.
pub const DRIVER_FILES: &[(&str, &str)] = &[
    (
        "__main__.py",
        include_str!("../../assets/kernel/__main__.py"),
    ),
    (
        "hello_tui_kernel/__init__.py",
        include_str!("../../assets/kernel/hello_tui_kernel/__init__.py"),
    ),
    (
        "hello_tui_kernel/capabilities.py",
        include_str!("../../assets/kernel/hello_tui_kernel/capabilities.py"),
    ),
    (
        "hello_tui_kernel/mcp.py",
        include_str!("../../assets/kernel/hello_tui_kernel/mcp.py"),
    ),
    (
        "hello_tui_kernel/persist.py",
        include_str!("../../assets/kernel/hello_tui_kernel/persist.py"),
    ),
    (
        "hello_tui_kernel/capture.py",
        include_str!("../../assets/kernel/hello_tui_kernel/capture.py"),
    ),
    (
        "hello_tui_kernel/cells.py",
        include_str!("../../assets/kernel/hello_tui_kernel/cells.py"),
    ),
    (
        "hello_tui_kernel/framing.py",
        include_str!("../../assets/kernel/hello_tui_kernel/framing.py"),
    ),
    (
        "hello_tui_kernel/listing.py",
        include_str!("../../assets/kernel/hello_tui_kernel/listing.py"),
    ),
    (
        "hello_tui_kernel/main.py",
        include_str!("../../assets/kernel/hello_tui_kernel/main.py"),
    ),
    (
        "hello_tui_kernel/safe_repr.py",
        include_str!("../../assets/kernel/hello_tui_kernel/safe_repr.py"),
    ),
];

/// Where a kernel start's driver folder goes, created: the user's
/// cache dir (`~/.cache/hello-tui/drivers`), then the workspace's own
/// `.hello-tui/drivers/`. Both are readable to a sandboxed kernel and
/// writable only by the workbench (the sandbox allows writes beneath the
/// workspace, except `.hello-tui/`, and its private temp dir alone; a cache
/// dir inside the workspace is passed over). Writable roots the user added
/// with `[safety] writable` are not checked: one that holds `~/.cache`
/// lets confined code change the next start's driver. Never
/// the system temp dir: a sandboxed kernel gets a private `/tmp` and would
/// not find its driver there — which also rules out a cache dir under it.
fn create_parent(workspace: &Path) -> std::io::Result<PathBuf> {
    let temp = std::env::temp_dir();
    let hidden = |path: &Path| path.starts_with(&temp) || path.starts_with("/tmp");
    // A cache dir inside the workspace (a workspace of `~`) is writable to
    // the sandbox: then the workspace's read-only `.hello-tui/` instead.
    let workspace_real = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let cache = directories::ProjectDirs::from("", "", "hello-tui")
        .map(|dirs| dirs.cache_dir().join("drivers"))
        .filter(|dir| {
            !hidden(dir) && !dir.starts_with(&workspace_real) && !dir.starts_with(workspace)
        });
    if let Some(cache) = cache
        && std::fs::create_dir_all(&cache).is_ok()
    {
        return Ok(cache);
    }
    workspace_drivers(workspace)
}

/// The workspace's `.hello-tui/drivers/`, created. Only a real
/// `.hello-tui` folder will do (the sandbox keeps it read-only; a link could
/// lead where confined code writes), so when it is a link the error says
/// the kernel cannot start and how to fix it.
fn workspace_drivers(workspace: &Path) -> std::io::Result<PathBuf> {
    let own = crate::session::workbench_dir(workspace).map_err(|error| {
        std::io::Error::new(
            error.kind(),
            format!(
                "{error}, then restart the kernel (/new kernel). The kernel cannot start until \
                 then: with no user cache folder to use, its driver goes in .hello-tui/drivers"
            ),
        )
    })?;
    let drivers = own.join("drivers");
    std::fs::create_dir_all(&drivers)?;
    Ok(drivers)
}

/// One kernel start's copy of the driver. Removed (with its files) when
/// dropped; keep it as long as that kernel runs, so its tracebacks can
/// still quote the driver's lines.
#[derive(Debug)]
pub struct DriverDir {
    dir: tempfile::TempDir,
}

impl DriverDir {
    /// Writes every driver file to a new 0700 directory for a kernel
    /// working in `workspace` (see [`create_parent`]).
    pub fn create(workspace: &Path) -> std::io::Result<Self> {
        Self::create_in(&create_parent(workspace)?)
    }

    /// Writes every driver file to a new 0700 directory under `parent`.
    pub fn create_in(parent: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("hello-tui-driver-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)?;
        for (relative, source) in DRIVER_FILES {
            let path = dir.path().join(relative);
            if let Some(folder) = path.parent() {
                std::fs::create_dir_all(folder)?;
            }
            // create_new: the directory is brand new, so anything already
            // there was not put there by us.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)?;
            file.write_all(source.as_bytes())?;
        }
        Ok(Self { dir })
    }

    /// What to pass to the interpreter: the directory itself, which Python
    /// runs through its `__main__.py`.
    pub fn entry(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace that ships `.hello-tui` as a link: the driver is not
    /// written through it, and the error says the kernel cannot start and
    /// how to fix it (it talked only of sessions).
    #[test]
    fn a_linked_workbench_folder_says_the_kernel_cannot_start_and_how_to_fix_it() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let own = dir.path().join(".hello-tui");
        std::os::unix::fs::symlink(elsewhere.path(), &own).unwrap();
        let error = workspace_drivers(dir.path()).unwrap_err().to_string();
        assert!(
            error.contains(&format!(
                "{} is a link (or a file), not a folder",
                own.display()
            )) && error.contains(&format!("remove or rename it (rm {})", own.display()))
                && error.contains("then restart the kernel (/new kernel)")
                && error.contains("The kernel cannot start until then"),
            "{error}"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    /// The table is the one place that lists the package: a file added
    /// under `assets/kernel/hello_tui_kernel/` but not embedded would be
    /// missing at run time (an ImportError in every kernel start).
    #[test]
    fn every_package_file_is_embedded() {
        let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/kernel/hello_tui_kernel");
        let mut on_disk: Vec<String> = std::fs::read_dir(&package)
            .unwrap()
            .filter_map(|entry| {
                let name = entry.unwrap().file_name().into_string().unwrap();
                name.ends_with(".py")
                    .then(|| format!("hello_tui_kernel/{name}"))
            })
            .collect();
        on_disk.sort();
        let mut embedded: Vec<&str> = DRIVER_FILES
            .iter()
            .map(|(path, _)| *path)
            .filter(|path| path.starts_with("hello_tui_kernel/"))
            .collect();
        embedded.sort_unstable();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn files_are_written_private_and_whole() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let driver = DriverDir::create_in(parent.path()).unwrap();
        let mode = std::fs::metadata(driver.entry())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "only the host's user may look in");
        for (relative, source) in DRIVER_FILES {
            let written = std::fs::read_to_string(driver.entry().join(relative)).unwrap();
            assert_eq!(&written, source, "{relative}");
        }
        let entry = driver.entry();
        drop(driver);
        assert!(!entry.exists(), "removed with its kernel");
    }
}

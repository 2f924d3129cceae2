//! Workspace trust: nothing a workspace provides runs before the user
//! said they trust it (as VS Code's workspace trust and Claude Code's trust
//! dialog do). A repository can ship programs where hello-tui looks for
//! tools — `node_modules/.bin/typescript-language-server`, a `.venv/bin`
//! on `PATH`, its own `node_modules/typescript` that a language server
//! loads — and templates in `.hello-tui/commands`. Until the workspace is
//! trusted, language servers, check commands and MCP servers are looked
//! up outside it only ([`crate::diagnostics::which_in`]), and its own
//! slash commands are not offered.
//!
//! The answer is kept per canonical workspace path in the user's data dir
//! ([`store`]), never in the workspace: a repository cannot ship its own
//! "trusted". `--trust` and `[safety] trusted_workspaces` answer for
//! scripts; `exec` never asks, so an unknown workspace is untrusted there.

pub mod store;

use std::path::{Path, PathBuf};

pub use store::{TrustError, TrustStore};

/// Whether workspace-provided programs may run, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// `--trust`, `[safety] trusted_workspaces`, or the user said yes.
    Trusted(Why),
    /// The user said no.
    Refused,
    /// Never answered: untrusted, and the workbench asks when there is
    /// something to decide.
    Unknown,
}

/// Where a "trusted" came from (said when it is shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Flag,
    Setting,
    Remembered,
}

impl Trust {
    pub fn is_trusted(self) -> bool {
        matches!(self, Trust::Trusted(_))
    }
}

/// What vouches for a workspace before any question: `--trust` and
/// `[safety] trusted_workspaces` (`Settings::vouched`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Vouched<'a> {
    pub flag: bool,
    pub folders: &'a [PathBuf],
}

/// The workspace's trust: the command line and the user's config first,
/// then the remembered answer.
pub fn decide(root: &Path, vouched: Vouched<'_>, store: &TrustStore) -> Trust {
    if vouched.flag {
        return Trust::Trusted(Why::Flag);
    }
    let canonical = canonical(root);
    if vouched
        .folders
        .iter()
        .any(|folder| canonical.starts_with(self::canonical(folder)))
    {
        return Trust::Trusted(Why::Setting);
    }
    match store.get(&canonical) {
        Some(true) => Trust::Trusted(Why::Remembered),
        Some(false) => Trust::Refused,
        None => Trust::Unknown,
    }
}

/// `decide` with the user's own store: for front ends that never ask
/// (`exec`, `snapshot --open`) and for what the kernel starts.
pub(crate) fn decide_here(root: &Path, vouched: Vouched<'_>) -> Trust {
    decide(root, vouched, &TrustStore::from_env())
}

/// The path as the file system spells it (links resolved), or as given
/// when it does not exist.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `path` lies in the workspace at `root`, where it is or where
/// its links lead: a link elsewhere that points into the workspace is the
/// workspace's program, and so is a link in it that points out (a
/// `.venv/bin/python3` is the system's binary, but running it from there
/// loads the venv's `.pth` files).
pub fn inside(path: &Path, root: &Path) -> bool {
    let roots = [canonical(root), root.to_path_buf()];
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    [absolute, canonical(path)]
        .iter()
        .any(|path| roots.iter().any(|root| path.starts_with(root)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_and_the_setting_trust_and_the_store_remembers_both_answers() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let store = TrustStore::at(home.path().join("trust.json"));
        let mut vouched = Vouched::default();
        assert_eq!(decide(ws.path(), vouched, &store), Trust::Unknown);
        store.set(ws.path(), false).unwrap();
        assert_eq!(decide(ws.path(), vouched, &store), Trust::Refused);
        store.set(ws.path(), true).unwrap();
        assert_eq!(
            decide(ws.path(), vouched, &store),
            Trust::Trusted(Why::Remembered)
        );
        let other = tempfile::tempdir().unwrap();
        assert_eq!(decide(other.path(), vouched, &store), Trust::Unknown);
        let folders = [other.path().parent().unwrap().to_path_buf()];
        vouched.folders = &folders;
        assert_eq!(
            decide(other.path(), vouched, &store),
            Trust::Trusted(Why::Setting)
        );
        vouched.flag = true;
        assert_eq!(
            decide(other.path(), vouched, &store),
            Trust::Trusted(Why::Flag)
        );
    }

    #[test]
    fn inside_is_where_a_program_is_or_where_its_link_leads() {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("tool"), "").unwrap();
        std::os::unix::fs::symlink(out.path().join("tool"), ws.path().join("link")).unwrap();
        std::fs::write(ws.path().join("own"), "").unwrap();
        std::os::unix::fs::symlink(ws.path().join("own"), out.path().join("back")).unwrap();
        assert!(inside(&ws.path().join("link"), ws.path()));
        assert!(inside(&out.path().join("back"), ws.path()));
        assert!(!inside(&out.path().join("tool"), ws.path()));
        assert!(inside(&ws.path().join("own"), ws.path()));
    }
}

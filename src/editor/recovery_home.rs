//! Where one running workbench keeps its recovery files, and which files it
//! may offer at start.
//!
//! Recovery is scoped to the workspace and owned by one instance: files live
//! in `<base>/<workspace key>/instance-*/`, and each instance holds an
//! exclusive lock on its own folder's `lock` file while it runs. At start an
//! instance offers only files of its own workspace whose owner is gone (the
//! lock can be taken): never another project's buffers, never a live
//! instance's (answering "discard" there would lose a crash's edits). It
//! adopts what it offers by moving the files into its own folder, so they
//! stay owned while the question is open, and a later start offers what the
//! user put off.
//!
//! A folder is created under a hidden name, locked, then renamed into
//! place, so no other instance can take an unlocked folder for an orphan.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::error::EditorError;
use super::hash::fnv1a;
use super::recovery::{Recovery, list_recoveries};

const INSTANCE_PREFIX: &str = "instance-";
const LOCK_FILE: &str = "lock";

/// This instance's recovery folder, locked while it lives.
#[derive(Debug)]
pub struct RecoveryHome {
    workspace: PathBuf,
    /// `<base>/<workspace key>`.
    workspace_dir: PathBuf,
    /// The legacy flat folder (recovery files from before per-workspace
    /// folders), searched for this workspace's files.
    base: PathBuf,
    dir: PathBuf,
    /// Held (locked) until drop.
    _lock: File,
}

impl RecoveryHome {
    /// Creates and locks a new folder for this instance under `base` for
    /// `workspace`.
    pub(crate) fn claim(base: &Path, workspace: &Path) -> Result<Self, EditorError> {
        let workspace = fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let workspace_dir = base.join(workspace_key(&workspace));
        let err = |message: String| EditorError::Recovery {
            path: workspace_dir.clone(),
            message,
        };
        fs::create_dir_all(&workspace_dir).map_err(|e| err(e.to_string()))?;
        let claiming = tempfile::Builder::new()
            .prefix(".claiming-")
            .tempdir_in(&workspace_dir)
            .map_err(|e| err(e.to_string()))?;
        let lock = File::create(claiming.path().join(LOCK_FILE)).map_err(|e| err(e.to_string()))?;
        lock.try_lock()
            .map_err(|e| err(format!("locking a new recovery folder: {e}")))?;
        let name = claiming
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().replace(".claiming-", INSTANCE_PREFIX))
            .ok_or_else(|| err("an unnamed temp folder".into()))?;
        let dir = workspace_dir.join(name);
        fs::rename(claiming.path(), &dir).map_err(|e| err(e.to_string()))?;
        // Renamed away: nothing left for the guard to remove.
        let _ = claiming.keep();
        Ok(RecoveryHome {
            workspace,
            workspace_dir,
            base: base.to_path_buf(),
            dir,
            _lock: lock,
        })
    }

    /// Where this instance writes its recovery files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Recoveries of this workspace whose owner is gone, newest first,
    /// moved into this instance's folder. When two name the same file, the
    /// newer is kept.
    pub(crate) fn adopt_orphans(&self) -> Vec<Recovery> {
        let mut sources: Vec<PathBuf> = Vec::new();
        if let Ok(entries) = fs::read_dir(&self.workspace_dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                let is_instance = entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(INSTANCE_PREFIX);
                if is_instance && path != self.dir {
                    sources.push(path);
                }
            }
        }
        let mut adopted: Vec<Recovery> = Vec::new();
        for folder in sources {
            // Locked: its instance still runs. Held until the files moved.
            let Some(lock) = lock_if_orphan(&folder) else {
                continue;
            };
            adopted.extend(list_recoveries(&folder));
            for recovery in &mut adopted {
                self.take(recovery);
            }
            drop(lock);
            remove_if_empty(&folder);
        }
        // Files from before per-workspace folders, for this workspace only.
        for mut recovery in list_recoveries(&self.base) {
            if recovery.path.starts_with(&self.workspace) {
                self.take(&mut recovery);
                adopted.push(recovery);
            }
        }
        adopted.sort_by_key(|r| std::cmp::Reverse(r.written_at));
        adopted.retain(|r| r.file.starts_with(&self.dir));
        adopted
    }

    /// Moves a recovery file into this folder under a name of its own: not
    /// the buffer's (its path hashed), which this instance writes for that
    /// buffer's new edits, and not another adopted one's — two crashed
    /// sessions' edits of one file are both kept, and both asked about.
    fn take(&self, recovery: &mut Recovery) {
        if recovery.file.starts_with(&self.dir) {
            return;
        }
        let Some(mut name) = recovery
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return;
        };
        // Adopted again after another crash: one prefix, not one per crash.
        while let Some(rest) = name.strip_prefix("adopted-") {
            match rest.splitn(3, '-').nth(2) {
                Some(base) => name = base.to_owned(),
                None => break,
            }
        }
        let free = (0..1000)
            .map(|n| {
                self.dir
                    .join(format!("adopted-{}-{n}-{name}", recovery.written_at))
            })
            .find(|target| target.symlink_metadata().is_err());
        let Some(target) = free else {
            return;
        };
        match fs::rename(&recovery.file, &target) {
            Ok(()) => recovery.file = target,
            Err(error) => {
                tracing::warn!(%error, file = %recovery.file.display(), "adopting a recovery file")
            }
        }
    }
}

impl Drop for RecoveryHome {
    /// A clean exit leaves no empty folder behind; one with files stays
    /// (and is offered at the next start, its lock released).
    fn drop(&mut self) {
        remove_if_empty(&self.dir);
    }
}

/// `name-0123456789abcdef`: readable, and unique per canonical path.
pub(crate) fn workspace_key(workspace: &Path) -> String {
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let hash = fnv1a(workspace.as_os_str().as_encoded_bytes());
    format!("{name}-{hash:016x}")
}

/// The folder's lock, taken, when no instance holds it. A folder without a
/// lock file is skipped: it is not one this scheme made.
fn lock_if_orphan(folder: &Path) -> Option<File> {
    let lock = File::options()
        .read(true)
        .write(true)
        .open(folder.join(LOCK_FILE))
        .ok()?;
    match lock.try_lock() {
        Ok(()) => Some(lock),
        Err(fs::TryLockError::WouldBlock) => None,
        Err(fs::TryLockError::Error(error)) => {
            tracing::warn!(%error, folder = %folder.display(), "reading a recovery lock");
            None
        }
    }
}

/// Removes a recovery folder holding nothing but its lock file.
fn remove_if_empty(folder: &Path) {
    let only_lock = fs::read_dir(folder).is_ok_and(|entries| {
        entries
            .flatten()
            .all(|e| e.file_name().to_string_lossy() == LOCK_FILE)
    });
    if only_lock {
        let _ = fs::remove_file(folder.join(LOCK_FILE));
        if let Err(error) = fs::remove_dir(folder)
            && error.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(%error, folder = %folder.display(), "removing a recovery folder");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::Document;

    fn write(home: &RecoveryHome, file: &Path, text: &str) {
        let mut doc = Document::from_text(file, "");
        doc.replace_text(text).unwrap();
        doc.write_recovery_now(home.dir()).unwrap();
    }

    /// Another project's buffers are never offered; this project's are,
    /// once their instance is gone.
    #[test]
    fn recoveries_stay_in_their_workspace() {
        let base = tempfile::tempdir().unwrap();
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let first = RecoveryHome::claim(base.path(), a.path()).unwrap();
        write(&first, &a.path().join("app.py"), "unsaved");
        drop(first);
        let other = RecoveryHome::claim(base.path(), b.path()).unwrap();
        assert!(other.adopt_orphans().is_empty());
        let again = RecoveryHome::claim(base.path(), a.path()).unwrap();
        let found = again.adopt_orphans();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "unsaved");
        assert!(found[0].file.starts_with(again.dir()), "adopted: {found:?}");
    }

    /// A second instance in the same workspace is not offered the first
    /// one's buffers while it runs; after it ends, they are offered.
    #[test]
    fn a_live_instance_keeps_its_recoveries() {
        let base = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let first = RecoveryHome::claim(base.path(), ws.path()).unwrap();
        write(&first, &ws.path().join("a.txt"), "mine");
        let second = RecoveryHome::claim(base.path(), ws.path()).unwrap();
        assert!(second.adopt_orphans().is_empty());
        assert_eq!(list_recoveries(first.dir()).len(), 1, "left alone");
        drop(first);
        let third = RecoveryHome::claim(base.path(), ws.path()).unwrap();
        assert_eq!(third.adopt_orphans().len(), 1);
    }

    /// A clean exit leaves no folder; files from the flat folder of older
    /// versions are offered to their own workspace only.
    #[test]
    fn clean_exits_leave_nothing_and_old_files_are_adopted() {
        let base = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let home = RecoveryHome::claim(base.path(), ws.path()).unwrap();
        let dir = home.dir().to_path_buf();
        drop(home);
        assert!(!dir.exists());
        let mut doc = Document::from_text(ws.path().join("old.txt"), "");
        doc.replace_text("from an older version").unwrap();
        doc.write_recovery_now(base.path()).unwrap();
        let other = tempfile::tempdir().unwrap();
        let elsewhere = RecoveryHome::claim(base.path(), other.path()).unwrap();
        assert!(elsewhere.adopt_orphans().is_empty());
        let home = RecoveryHome::claim(base.path(), ws.path()).unwrap();
        let found = home.adopt_orphans();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "from an older version");
    }
}

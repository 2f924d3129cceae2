//! The change log saved with its session, so `/undo`, `/redo` and `/diff`
//! still work after a restart (`--continue`, `--resume ID`).
//!
//! A session's log lives in `.hello-tui/sessions/<id>.changes/`: `log.json`
//! lists the groups, and each text (a file before or after a change) is a
//! blob named by its SHA-256. A name that is the content's own hash cannot
//! be forged into restoring different text: a blob that does not match its
//! name loads as "not kept", and that change cannot be undone. The folder
//! is beneath `.hello-tui/`, which confined code cannot write and `fs`
//! refuses, so the model cannot plant a log either.
//!
//! The whole log is rewritten (atomically) after each change: it is a few
//! hundred bytes per group, and blobs already on disk are not written
//! again. Blobs nothing refers to any more are removed.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ChangeGroup, ChangeLog, FileChange};
use crate::editor::write_atomic;
use crate::kernel::caps::Prior;

/// Version of `log.json`; a log from a newer version is not loaded.
const VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: PathBuf, message: String },
    #[error(transparent)]
    Write(#[from] crate::editor::EditorError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The blob names of one change's texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BlobNames {
    before: Option<String>,
    after: String,
}

impl BlobNames {
    pub(super) fn of(before: &Prior, after: &[u8]) -> Self {
        Self {
            before: match before {
                Prior::Bytes(bytes) => Some(sha256(bytes)),
                Prior::Absent | Prior::Unrecorded => None,
            },
            after: sha256(after),
        }
    }
}

fn sha256(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A SHA-256 in hex: the only names read or removed in the folder.
fn is_blob_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[derive(Serialize, Deserialize)]
struct SavedLog {
    version: u32,
    done: Vec<SavedGroup>,
    undone: Vec<SavedGroup>,
}

#[derive(Serialize, Deserialize)]
struct SavedGroup {
    label: String,
    changes: Vec<SavedChange>,
}

#[derive(Serialize, Deserialize)]
struct SavedChange {
    /// Relative to the workspace, so a moved workspace keeps its log.
    path: PathBuf,
    before: SavedPrior,
    after: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SavedPrior {
    Absent,
    Unrecorded,
    Blob(String),
}

/// Where one session's log is saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangeStore {
    dir: PathBuf,
    /// `dir` below the workspace, checked for links before each use.
    relative: PathBuf,
    workspace: PathBuf,
    root: PathBuf,
}

impl ChangeStore {
    /// The store of session `id` in `workspace` (`root` is the workspace as
    /// change paths spell it, i.e. canonical).
    pub(crate) fn for_session(workspace: &Path, root: &Path, id: &str) -> Self {
        Self {
            dir: crate::session::sessions_dir(workspace).join(format!("{id}.changes")),
            relative: Path::new(".hello-tui/sessions").join(format!("{id}.changes")),
            workspace: workspace.to_owned(),
            root: root.to_owned(),
        }
    }

    /// Opens the log's folder beneath the workspace (`create`: making it),
    /// refusing a link anywhere on the way, as sessions are (issue 25,
    /// route 17). Confined code cannot change `.hello-tui/` afterwards
    /// (the sandbox binds it read-only), so only a link that was there
    /// before, as a repository can ship one, could steer the paths used
    /// next; it is refused here.
    fn checked(&self, create: bool) -> Result<(), StoreError> {
        match crate::kernel::caps::own_folder(&self.workspace, &self.relative, create) {
            Ok(_) => Ok(()),
            Err(crate::kernel::caps::WriteError::Io(source)) => Err(StoreError::Io {
                path: self.dir.clone(),
                source,
            }),
            Err(other) => Err(StoreError::Format {
                path: self.dir.clone(),
                message: format!("{other}; nothing is saved or read through a link"),
            }),
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("log.json")
    }

    fn blob_path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `log` (new blobs, then the list, then removes blobs nothing
    /// names any more: a crash between steps leaves a loadable log).
    pub fn save(&self, log: &ChangeLog) -> Result<(), StoreError> {
        self.checked(true)?;
        let mut names = HashSet::new();
        let mut saved = |groups: &[ChangeGroup]| -> Result<Vec<SavedGroup>, StoreError> {
            groups
                .iter()
                .map(|group| {
                    let changes = group
                        .changes
                        .iter()
                        .filter_map(|change| {
                            let path = change.path.strip_prefix(&self.root).ok()?;
                            Some((path.to_owned(), change))
                        })
                        .map(|(path, change)| {
                            let before = match (&change.before, &change.names.before) {
                                (Prior::Bytes(bytes), Some(name)) => {
                                    self.put(name, bytes)?;
                                    names.insert(name.clone());
                                    SavedPrior::Blob(name.clone())
                                }
                                (Prior::Absent, _) => SavedPrior::Absent,
                                _ => SavedPrior::Unrecorded,
                            };
                            self.put(&change.names.after, &change.after)?;
                            names.insert(change.names.after.clone());
                            Ok(SavedChange {
                                path,
                                before,
                                after: change.names.after.clone(),
                            })
                        })
                        .collect::<Result<_, StoreError>>()?;
                    Ok(SavedGroup {
                        label: group.label.clone(),
                        changes,
                    })
                })
                .collect()
        };
        let list = SavedLog {
            version: VERSION,
            done: saved(&log.done)?,
            undone: saved(&log.undone)?,
        };
        let path = self.log_path();
        let json = serde_json::to_vec(&list).map_err(|e| StoreError::Format {
            path: path.clone(),
            message: e.to_string(),
        })?;
        write_atomic(&path, &json, None)?;
        self.remove_unnamed(&names)
    }

    /// Writes a blob unless it is there already (its name is its content).
    fn put(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let path = self.blob_path(name);
        if path.exists() {
            return Ok(());
        }
        write_atomic(&path, bytes, None)?;
        Ok(())
    }

    fn remove_unnamed(&self, names: &HashSet<String>) -> Result<(), StoreError> {
        let entries = fs::read_dir(&self.dir).map_err(io(&self.dir))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if is_blob_name(&name) && !names.contains(name.as_ref()) {
                // A blob left behind only costs space; not worth failing
                // the save over.
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    /// Reads the saved log (an empty one if none was saved). A blob that is
    /// missing or does not match its name makes its change one that cannot
    /// be taken back, instead of failing the whole log.
    pub fn load(&self) -> Result<ChangeLog, StoreError> {
        match self.checked(false) {
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ChangeLog::default());
            }
            checked => checked?,
        }
        let path = self.log_path();
        let text = match fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ChangeLog::default());
            }
            Err(error) => return Err(io(&path)(error)),
        };
        let format = |message: String| StoreError::Format {
            path: path.clone(),
            message,
        };
        let saved: SavedLog = serde_json::from_slice(&text).map_err(|e| format(e.to_string()))?;
        if saved.version > VERSION {
            return Err(format(format!(
                "written by a newer hello-tui (log version {})",
                saved.version
            )));
        }
        let groups = |groups: Vec<SavedGroup>| -> Vec<ChangeGroup> {
            groups
                .into_iter()
                .map(|group| ChangeGroup {
                    label: group.label,
                    changes: group
                        .changes
                        .into_iter()
                        .filter_map(|change| self.restored(change))
                        .collect(),
                })
                .collect()
        };
        Ok(ChangeLog {
            done: groups(saved.done),
            undone: groups(saved.undone),
            ..ChangeLog::default()
        })
    }

    /// One saved change, with its texts read back; `None` for a path that
    /// would lead out of the workspace.
    fn restored(&self, change: SavedChange) -> Option<FileChange> {
        let inside = change
            .path
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_)));
        if !inside {
            return None;
        }
        let path = self.root.join(&change.path);
        let after = self.blob(&change.after);
        let before = match (change.before, &after) {
            // Without the text it left, a change cannot be checked before
            // it is taken back.
            (_, None) => Prior::Unrecorded,
            (SavedPrior::Absent, _) => Prior::Absent,
            (SavedPrior::Unrecorded, _) => Prior::Unrecorded,
            (SavedPrior::Blob(name), _) => self.blob(&name).map_or(Prior::Unrecorded, Prior::Bytes),
        };
        Some(FileChange::new(path, before, after.unwrap_or_default()))
    }

    /// A blob's bytes, if present and true to its name.
    fn blob(&self, name: &str) -> Option<Vec<u8>> {
        if !is_blob_name(name) {
            return None;
        }
        let bytes = fs::read(self.blob_path(name)).ok()?;
        (sha256(&bytes) == name).then_some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::caps::FsWritten;

    fn written(path: &Path, before: Prior, after: &str) -> FsWritten {
        FsWritten {
            path: path.to_owned(),
            before,
            after: after.as_bytes().to_vec(),
        }
    }

    /// A log with an undone group and a done one, over `root`.
    fn sample(root: &Path) -> ChangeLog {
        let mut log = ChangeLog::default();
        log.start_group("first");
        log.record(&written(
            &root.join("a.txt"),
            Prior::Bytes(b"a0\r\n".to_vec()),
            "a1\r\n",
        ));
        log.start_group("second");
        log.record(&written(
            &root.join("src/new.rs"),
            Prior::Absent,
            "fn x() {}",
        ));
        log.record(&written(&root.join("big.bin"), Prior::Unrecorded, "z"));
        let undone = log.done.pop().unwrap();
        log.undone.push(undone);
        log
    }

    #[test]
    fn a_saved_log_loads_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let store = ChangeStore::for_session(root, root, "s1");
        let log = sample(root);
        store.save(&log).unwrap();
        let loaded = store.load().unwrap();
        assert_eq!(loaded.done, log.done);
        assert_eq!(loaded.undone, log.undone);
        assert_eq!(
            ChangeStore::for_session(root, root, "never-saved")
                .load()
                .unwrap()
                .done,
            Vec::new()
        );
    }

    #[test]
    fn a_blob_that_does_not_match_its_name_cannot_be_restored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let store = ChangeStore::for_session(root, root, "s1");
        store.save(&sample(root)).unwrap();
        let before_name = sha256(b"a0\r\n");
        std::fs::write(store.blob_path(&before_name), "planted").unwrap();
        let loaded = store.load().unwrap();
        let change = &loaded.done[0].changes[0];
        assert_eq!(change.before, Prior::Unrecorded, "not the planted text");
        assert_eq!(change.after, b"a1\r\n");
    }

    #[test]
    fn a_saved_path_cannot_lead_out_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let store = ChangeStore::for_session(root, root, "s1");
        store.save(&sample(root)).unwrap();
        let text = std::fs::read_to_string(store.log_path()).unwrap();
        let text = text.replace("\"a.txt\"", "\"../outside.txt\"");
        std::fs::write(store.log_path(), text).unwrap();
        let loaded = store.load().unwrap();
        assert!(loaded.done[0].changes.is_empty(), "{:?}", loaded.done);
    }

    #[test]
    fn blobs_no_change_names_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let store = ChangeStore::for_session(root, root, "s1");
        let mut log = sample(root);
        store.save(&log).unwrap();
        let gone = store.blob_path(&sha256(b"fn x() {}"));
        assert!(gone.exists());
        // A new change makes the undone group final: its texts go.
        log.start_group("third");
        log.record(&written(
            &root.join("a.txt"),
            Prior::Bytes(b"a1\r\n".to_vec()),
            "a2",
        ));
        store.save(&log).unwrap();
        assert!(!gone.exists());
        assert!(store.blob_path(&sha256(b"a2")).exists());
    }

    #[test]
    fn a_log_from_a_newer_version_is_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let store = ChangeStore::for_session(root, root, "s1");
        std::fs::create_dir_all(&store.dir).unwrap();
        std::fs::write(store.log_path(), r#"{"version":9,"done":[],"undone":[]}"#).unwrap();
        let error = store.load().unwrap_err().to_string();
        assert!(error.contains("newer hello-tui"), "{error}");
    }
}

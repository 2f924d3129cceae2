//! Turns a debounced batch of raw file-system events into what the editor
//! cares about, by comparing what we knew existed before the batch with what
//! exists on disk now.
//!
//! Reasoning about net state instead of event sequences is what makes atomic
//! saves come out right however the backend orders them: a temp file that is
//! written and renamed over `main.rs` leaves `main.rs` existing before and
//! after, so it is one `FileChanged(main.rs)`; vim's rename-to-`main.rs~`,
//! write-new-`main.rs` dance is the same; the temp file existed neither
//! before nor after, so it is nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::events::WorkspaceEvent;

/// What a path is on disk right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathKind {
    /// A file, or a symlink to one.
    File,
    /// A real directory (symlinked directories are not followed).
    Dir,
    /// Gone, or something we do not index.
    Other,
}

/// How the coalescer looks at the disk and the ignore rules; a trait so the
/// net-state logic can be tested without a file system.
pub(crate) trait Probe {
    fn kind(&self, path: &Path) -> PathKind;
    /// Non-ignored files below `dir` (for directories that appear at once).
    fn files_under(&mut self, dir: &Path) -> Vec<PathBuf>;
    fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool;
}

/// One debounced batch, already stripped of events we never care about
/// (reads, opens).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RawBatch {
    /// Paths something happened to.
    pub touched: BTreeSet<PathBuf>,
    /// Paths that appeared by creation or by being moved in: if one is a
    /// directory, its contents are new too.
    pub appeared: BTreeSet<PathBuf>,
    /// Renames the backend could pair up, `(from, to)`.
    pub renames: Vec<(PathBuf, PathBuf)>,
}

impl RawBatch {
    pub(crate) fn is_empty(&self) -> bool {
        self.touched.is_empty()
    }
}

/// The set of files the watcher believes exist (absolute paths, not ignored).
#[derive(Debug, Default)]
pub(crate) struct Coalescer {
    known: BTreeSet<PathBuf>,
}

impl Coalescer {
    pub(crate) fn new(known: impl IntoIterator<Item = PathBuf>) -> Self {
        Self {
            known: known.into_iter().collect(),
        }
    }

    /// Records whether a file exists without reporting anything (for files
    /// the user starts tracking).
    pub(crate) fn learn(&mut self, path: &Path, exists: bool) {
        if exists {
            self.known.insert(path.to_path_buf());
        } else {
            self.known.remove(path);
        }
    }

    /// Applies a batch; returns the events to report, in a stable order:
    /// renames, removals, creations, changes.
    pub(crate) fn apply(
        &mut self,
        batch: &RawBatch,
        probe: &mut impl Probe,
    ) -> Vec<WorkspaceEvent> {
        let mut candidates = BTreeSet::new();
        let mut direct = BTreeSet::new();
        for path in &batch.touched {
            let kind = probe.kind(path);
            if probe.is_ignored(path, kind == PathKind::Dir) {
                // An ignored path can still be one we knew (rules changed).
                if self.known.contains(path) {
                    candidates.insert(path.clone());
                }
                continue;
            }
            match kind {
                PathKind::Dir => {
                    if batch.appeared.contains(path) {
                        candidates.extend(probe.files_under(path));
                    }
                }
                PathKind::File => {
                    candidates.insert(path.clone());
                    direct.insert(path.clone());
                }
                PathKind::Other => {
                    // Gone: the file itself, or a directory and all we knew in it.
                    candidates.extend(self.known_under(path));
                }
            }
        }
        self.settle(candidates, &direct, &batch.renames, probe)
    }

    /// After lost events or changed ignore rules: compares everything we
    /// knew with a fresh walk; reports only appearances and disappearances.
    pub(crate) fn rescan(
        &mut self,
        now_present: Vec<PathBuf>,
        probe: &mut impl Probe,
    ) -> Vec<WorkspaceEvent> {
        let mut candidates: BTreeSet<PathBuf> = self.known.clone();
        candidates.extend(now_present);
        self.settle(candidates, &BTreeSet::new(), &[], probe)
    }

    fn known_under(&self, path: &Path) -> Vec<PathBuf> {
        self.known
            .range(path.to_path_buf()..)
            .take_while(|known| known.starts_with(path))
            .cloned()
            .collect()
    }

    /// Decides each candidate by before/after existence, pairs renames, and
    /// updates what we know.
    fn settle(
        &mut self,
        candidates: BTreeSet<PathBuf>,
        direct: &BTreeSet<PathBuf>,
        renames: &[(PathBuf, PathBuf)],
        probe: &mut impl Probe,
    ) -> Vec<WorkspaceEvent> {
        let mut removed = BTreeSet::new();
        let mut created = BTreeSet::new();
        let mut changed = Vec::new();
        for path in candidates {
            let before = self.known.contains(&path);
            let after = probe.kind(&path) == PathKind::File && !probe.is_ignored(&path, false);
            match (before, after) {
                (true, true) if direct.contains(&path) => changed.push(path),
                (true, false) => {
                    removed.insert(path);
                }
                (false, true) => {
                    created.insert(path);
                }
                _ => {}
            }
        }
        let mut events = Vec::new();
        for (from, to) in renames {
            let moved: Vec<PathBuf> = removed
                .iter()
                .filter(|r| r.starts_with(from))
                .cloned()
                .collect();
            for old in moved {
                let Ok(rest) = old.strip_prefix(from) else {
                    continue;
                };
                let new = if rest.as_os_str().is_empty() {
                    to.clone()
                } else {
                    to.join(rest)
                };
                if created.remove(&new) {
                    removed.remove(&old);
                    self.known.remove(&old);
                    self.known.insert(new.clone());
                    events.push(WorkspaceEvent::Renamed { from: old, to: new });
                }
            }
        }
        for path in removed {
            self.known.remove(&path);
            events.push(WorkspaceEvent::FileRemoved(path));
        }
        for path in created {
            self.known.insert(path.clone());
            events.push(WorkspaceEvent::FileCreated(path));
        }
        events.extend(changed.into_iter().map(WorkspaceEvent::FileChanged));
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A pretend disk: path → kind; directories list the files below them.
    #[derive(Default)]
    struct FakeDisk {
        kinds: HashMap<PathBuf, PathKind>,
        ignored: Vec<PathBuf>,
    }

    impl FakeDisk {
        fn file(mut self, p: &str) -> Self {
            self.kinds.insert(p.into(), PathKind::File);
            self
        }
        fn dir(mut self, p: &str) -> Self {
            self.kinds.insert(p.into(), PathKind::Dir);
            self
        }
    }

    impl Probe for FakeDisk {
        fn kind(&self, path: &Path) -> PathKind {
            self.kinds.get(path).copied().unwrap_or(PathKind::Other)
        }
        fn files_under(&mut self, dir: &Path) -> Vec<PathBuf> {
            let mut files: Vec<PathBuf> = self
                .kinds
                .iter()
                .filter(|(p, k)| **k == PathKind::File && p.starts_with(dir))
                .map(|(p, _)| p.clone())
                .collect();
            files.sort();
            files
        }
        fn is_ignored(&mut self, path: &Path, _is_dir: bool) -> bool {
            self.ignored.iter().any(|i| path.starts_with(i))
        }
    }

    fn batch(touched: &[&str], appeared: &[&str], renames: &[(&str, &str)]) -> RawBatch {
        RawBatch {
            touched: touched.iter().map(PathBuf::from).collect(),
            appeared: appeared.iter().map(PathBuf::from).collect(),
            renames: renames.iter().map(|(a, b)| (a.into(), b.into())).collect(),
        }
    }

    fn known(paths: &[&str]) -> Coalescer {
        Coalescer::new(paths.iter().map(PathBuf::from))
    }

    #[test]
    fn temp_file_renamed_over_original_is_one_change() {
        let mut c = known(&["/w/main.rs"]);
        let mut disk = FakeDisk::default().file("/w/main.rs");
        let events = c.apply(
            &batch(
                &["/w/.main.rs.tmp", "/w/main.rs"],
                &["/w/main.rs"],
                &[("/w/.main.rs.tmp", "/w/main.rs")],
            ),
            &mut disk,
        );
        assert_eq!(
            events,
            vec![WorkspaceEvent::FileChanged("/w/main.rs".into())]
        );
    }

    #[test]
    fn vim_backup_dance_is_one_change_even_when_backup_stays() {
        let mut c = known(&["/w/a.txt"]);
        let mut disk = FakeDisk::default().file("/w/a.txt").file("/w/a.txt~");
        let events = c.apply(
            &batch(
                &["/w/a.txt", "/w/a.txt~"],
                &["/w/a.txt", "/w/a.txt~"],
                &[("/w/a.txt", "/w/a.txt~")],
            ),
            &mut disk,
        );
        assert_eq!(
            events,
            vec![
                WorkspaceEvent::FileCreated("/w/a.txt~".into()),
                WorkspaceEvent::FileChanged("/w/a.txt".into()),
            ]
        );
    }

    #[test]
    fn directory_rename_is_per_file_renames() {
        let mut c = known(&["/w/old/a.rs", "/w/old/b/c.rs", "/w/older.rs"]);
        let mut disk = FakeDisk::default()
            .dir("/w/new")
            .file("/w/new/a.rs")
            .file("/w/new/b/c.rs")
            .file("/w/older.rs");
        let events = c.apply(
            &batch(&["/w/old", "/w/new"], &["/w/new"], &[("/w/old", "/w/new")]),
            &mut disk,
        );
        assert_eq!(
            events,
            vec![
                WorkspaceEvent::Renamed {
                    from: "/w/old/a.rs".into(),
                    to: "/w/new/a.rs".into()
                },
                WorkspaceEvent::Renamed {
                    from: "/w/old/b/c.rs".into(),
                    to: "/w/new/b/c.rs".into()
                },
            ]
        );
    }

    #[test]
    fn removed_directory_removes_known_files_and_ignored_paths_are_silent() {
        let mut c = known(&["/w/d/a", "/w/d/b", "/w/e"]);
        let mut disk = FakeDisk {
            ignored: vec!["/w/target".into()],
            ..FakeDisk::default()
        }
        .file("/w/e")
        .file("/w/target/x.o");
        let events = c.apply(
            &batch(&["/w/d", "/w/target/x.o"], &["/w/target/x.o"], &[]),
            &mut disk,
        );
        assert_eq!(
            events,
            vec![
                WorkspaceEvent::FileRemoved("/w/d/a".into()),
                WorkspaceEvent::FileRemoved("/w/d/b".into()),
            ]
        );
    }

    #[test]
    fn created_then_deleted_within_a_batch_is_nothing() {
        let mut c = known(&[]);
        let mut disk = FakeDisk::default();
        assert!(
            c.apply(&batch(&["/w/tmp"], &["/w/tmp"], &[]), &mut disk)
                .is_empty()
        );
    }

    #[test]
    fn rescan_reports_only_appearances_and_disappearances() {
        let mut c = known(&["/w/a", "/w/b"]);
        let mut disk = FakeDisk::default().file("/w/b").file("/w/c");
        let events = c.rescan(vec!["/w/b".into(), "/w/c".into()], &mut disk);
        assert_eq!(
            events,
            vec![
                WorkspaceEvent::FileRemoved("/w/a".into()),
                WorkspaceEvent::FileCreated("/w/c".into()),
            ]
        );
    }
}

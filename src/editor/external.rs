//! Changes made to the file by someone else: reload a clean buffer, flag a
//! conflict for a dirty one, and resolve it (keep mine, load theirs, diff).

use std::fs;

use similar::TextDiff;

use super::disk::{self, Content, DiskVersion};
use super::document::{DiskState, Document};

/// What `check_disk` / `on_disk_changed` did, for the app's status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskChange {
    /// Nothing changed (or only the mtime, with equal content).
    Unchanged,
    /// The clean buffer was reloaded from disk.
    Reloaded,
    /// The buffer has unsaved edits and the file changed: `ChangedOnDisk`.
    Conflict,
    /// The file is gone: `DeletedOnDisk`, the buffer is kept.
    Deleted,
    /// The file exists but could not be read right now; nothing changed.
    Unreadable,
}

impl Document {
    /// Compare with the file on disk (cheap stat first, then a content
    /// hash) and react like `on_disk_changed`. Call it on watcher events
    /// and when the app regains focus.
    pub fn check_disk(&mut self) -> DiskChange {
        let meta = match fs::metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return self.on_disk_deleted(),
            Err(_) => return DiskChange::Unreadable,
        };
        if self.disk_version.is_some_and(|v| !v.stat_differs(&meta))
            && !matches!(self.disk_state, DiskState::DeletedOnDisk)
        {
            return DiskChange::Unchanged;
        }
        match disk::read(&self.path) {
            Ok(loaded) => self.on_disk_changed(loaded.bytes, loaded.version),
            Err(_) => DiskChange::Unreadable,
        }
    }

    /// The file on disk now holds `bytes`. A clean buffer reloads keeping
    /// the cursor (clamped); a dirty one keeps the user's text and enters
    /// `ChangedOnDisk`.
    pub(crate) fn on_disk_changed(&mut self, bytes: Vec<u8>, version: DiskVersion) -> DiskChange {
        if self
            .disk_version
            .is_some_and(|v| v.hash == version.hash && v.len == version.len)
        {
            self.disk_version = Some(version);
            if matches!(self.disk_state, DiskState::DeletedOnDisk) {
                self.disk_state = DiskState::InSync;
            }
            return DiskChange::Unchanged;
        }
        self.disk_version = Some(version);
        if self.dirty {
            let theirs = match disk::classify(bytes) {
                Content::Text(t) | Content::InvalidUtf8(t) => t,
                Content::Binary => String::from("(binary content)"),
            };
            if theirs == self.serialized() {
                // Someone saved exactly our text: nothing to resolve.
                self.mark_saved();
                self.disk_state = DiskState::InSync;
                return DiskChange::Unchanged;
            }
            self.disk_state = DiskState::ChangedOnDisk { theirs };
            return DiskChange::Conflict;
        }
        let cursor = self.cursor();
        let len = bytes.len() as u64;
        match disk::classify(bytes) {
            Content::Text(text) if self.read_only.is_none() => self.reload(&text),
            other => {
                self.install(other, len);
                self.set_cursor(cursor, false);
            }
        }
        self.disk_state = DiskState::InSync;
        DiskChange::Reloaded
    }

    fn on_disk_deleted(&mut self) -> DiskChange {
        if !matches!(self.disk_state, DiskState::DeletedOnDisk) {
            self.disk_state = DiskState::DeletedOnDisk;
        }
        DiskChange::Deleted
    }

    /// Resolve a conflict by keeping the buffer; the next save overwrites
    /// the disk version.
    pub fn keep_mine(&mut self) {
        if matches!(self.disk_state, DiskState::ChangedOnDisk { .. }) {
            self.disk_state = DiskState::InSync;
        }
    }

    /// Resolve a conflict by loading the disk text (cursor kept, clamped)
    /// as one undoable step: Undo brings the user's text back.
    pub fn load_theirs(&mut self) {
        let DiskState::ChangedOnDisk { theirs } = &self.disk_state else {
            return;
        };
        let theirs = theirs.clone();
        self.reload(&theirs);
        self.disk_state = DiskState::InSync;
        self.discard_recovery();
    }

    /// Unified diff from the disk text ("theirs") to the buffer ("mine");
    /// None when there is no conflict.
    pub fn diff(&self) -> Option<String> {
        let DiskState::ChangedOnDisk { theirs } = &self.disk_state else {
            return None;
        };
        let mine = self.serialized();
        let name = self.path.display().to_string();
        Some(
            TextDiff::from_lines(theirs.as_str(), mine.as_str())
                .unified_diff()
                .context_radius(3)
                .header(&format!("{name} (disk)"), &format!("{name} (buffer)"))
                .to_string(),
        )
    }
}

//! The one piece of editor state shared outside the UI loop: a copy of the
//! unsaved buffers as of the last recovery tick, so the panic hook and the
//! SIGHUP/SIGTERM path (which exit without returning to the loop) can still
//! write recovery files. The loop refreshes it at each recovery tick (at
//! most every few seconds, only for dirty buffers; a rope clone shares the
//! text, so a refresh copies nothing) and drops entries as buffers become
//! clean; nothing else reads it.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::editor::{Document, RecoveryWrite};

#[derive(Clone, Default)]
pub struct RecoveryMirror(Arc<Mutex<Vec<RecoveryWrite>>>);

impl RecoveryMirror {
    /// At a recovery tick: the write of every dirty buffer, text and shape
    /// (line ending, byte-order mark) as they are now.
    pub fn refresh(&self, dir: &Path, tabs: &[Document]) {
        let entries = tabs.iter().filter_map(|d| d.recovery_write(dir)).collect();
        if let Ok(mut guard) = self.0.lock() {
            *guard = entries;
        }
    }

    /// After a save, close or reload: forget buffers that are clean now,
    /// so an exit never resurrects saved text. Cheap (no text copies).
    pub(crate) fn forget_clean(&self, tabs: &[Document]) {
        if let Ok(mut guard) = self.0.lock() {
            guard.retain(|write| {
                tabs.iter()
                    .any(|d| d.is_dirty() && d.path() == write.path())
            });
        }
    }

    /// The user chose to lose every unsaved edit (quit anyway).
    pub fn clear(&self) {
        if let Ok(mut guard) = self.0.lock() {
            guard.clear();
        }
    }

    /// Writes every mirrored buffer as a recovery file (the process is on
    /// its way out). Never blocks: if the lock is held (the panic happened
    /// inside it) nothing is written.
    pub fn write_all(&self) {
        let Ok(mut guard) = self.0.try_lock() else {
            return;
        };
        for write in guard.drain(..) {
            let _ = write.write();
        }
    }

    /// Chains a panic hook that writes the mirror before the previous hook
    /// (which restores the terminal) runs.
    pub(crate) fn install_panic_hook(&self) {
        let mirror = self.clone();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            mirror.write_all();
            previous(info);
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::editor::{EditCommand, LineEnding, list_recoveries};

    /// The SIGHUP and panic paths write what a recovery tick would: the
    /// text and its shape, so a CRLF file with a byte-order mark comes
    /// back as one (it came back as LF without the mark).
    #[test]
    fn mirrored_buffers_become_recovery_files_of_their_shape() {
        let dir = tempfile::tempdir().unwrap();
        let rec = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "\u{feff}old\r\nline\r\n").unwrap();
        let mut doc = Document::open(&file).unwrap();
        doc.apply(EditCommand::InsertChar('x')).unwrap();
        let mirror = RecoveryMirror::default();
        mirror.refresh(rec.path(), std::slice::from_ref(&doc));
        mirror.write_all();
        let found = list_recoveries(rec.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "xold\nline\n");
        assert_eq!(found[0].line_ending, LineEnding::CrLf);
        assert!(found[0].bom);
        std::fs::remove_file(&file).unwrap();
        let restored = Document::restore(&found[0]).unwrap();
        assert_eq!(restored.serialized(), "\u{feff}xold\r\nline\r\n");
    }

    /// Saved text is never resurrected: not after `forget_clean`, and not
    /// when the exit comes between the save and the next tick.
    #[test]
    fn saved_buffers_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old\n").unwrap();
        let mut doc = Document::open(&file).unwrap();
        doc.apply(EditCommand::InsertChar('x')).unwrap();
        let mirror = RecoveryMirror::default();
        for forget in [true, false] {
            let rec = tempfile::tempdir().unwrap();
            doc.apply(EditCommand::InsertChar('y')).unwrap();
            mirror.refresh(rec.path(), std::slice::from_ref(&doc));
            doc.save().unwrap();
            if forget {
                mirror.forget_clean(std::slice::from_ref(&doc));
            }
            mirror.write_all();
            assert!(list_recoveries(rec.path()).is_empty(), "forget: {forget}");
        }
    }
}

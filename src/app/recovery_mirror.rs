//! The one piece of editor state shared outside the UI loop: a copy of the
//! unsaved buffers as of the last recovery tick, so the panic hook and the
//! SIGHUP/SIGTERM path (which exit without returning to the loop) can still
//! write recovery files. The loop refreshes it at each recovery tick (at
//! most every few seconds, only for dirty buffers; a rope clone shares the
//! text, so a refresh copies nothing) and drops entries as buffers become
//! clean; nothing else reads it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ropey::Rope;

use crate::editor::Document;

#[derive(Clone, Default)]
pub struct RecoveryMirror(Arc<Mutex<Vec<(PathBuf, Rope)>>>);

impl RecoveryMirror {
    /// At a recovery tick: the current text of every dirty buffer.
    pub fn refresh(&self, tabs: &[Document]) {
        let entries = tabs
            .iter()
            .filter(|d| d.is_dirty())
            .map(|d| (d.path().to_path_buf(), d.rope().clone()))
            .collect();
        if let Ok(mut guard) = self.0.lock() {
            *guard = entries;
        }
    }

    /// After a save, close or reload: forget buffers that are clean now,
    /// so an exit never resurrects saved text. Cheap (no text copies).
    pub fn forget_clean(&self, tabs: &[Document]) {
        if let Ok(mut guard) = self.0.lock() {
            guard.retain(|(path, _)| tabs.iter().any(|d| d.is_dirty() && d.path() == path));
        }
    }

    /// The user chose to lose every unsaved edit (quit anyway).
    pub fn clear(&self) {
        if let Ok(mut guard) = self.0.lock() {
            guard.clear();
        }
    }

    /// Writes every mirrored buffer as a recovery file. Never blocks: if
    /// the lock is held (the panic happened inside it) nothing is written.
    pub fn write_all(&self, dir: &Path) {
        let Ok(guard) = self.0.try_lock() else {
            return;
        };
        for (path, text) in guard.iter() {
            let mut doc = Document::from_text(path, "");
            if doc.replace_text(&text.to_string()).is_ok() {
                let _ = doc.write_recovery_now(dir);
            }
        }
    }

    /// Chains a panic hook that writes the mirror before the previous hook
    /// (which restores the terminal) runs.
    pub fn install_panic_hook(&self, dir: PathBuf) {
        let mirror = self.clone();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            mirror.write_all(&dir);
            previous(info);
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirrored_buffers_become_recovery_files() {
        let dir = tempfile::tempdir().unwrap();
        let rec = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old\n").unwrap();
        let mut doc = Document::open(&file).unwrap();
        doc.apply(crate::editor::EditCommand::InsertChar('x'))
            .unwrap();
        let mirror = RecoveryMirror::default();
        mirror.refresh(std::slice::from_ref(&doc));
        mirror.write_all(rec.path());
        let found = crate::editor::list_recoveries(rec.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "xold");

        doc.save().unwrap();
        mirror.forget_clean(std::slice::from_ref(&doc));
        let rec2 = tempfile::tempdir().unwrap();
        mirror.write_all(rec2.path());
        assert!(crate::editor::list_recoveries(rec2.path()).is_empty());
    }
}

//! Crash recovery: unsaved buffers are written to a recovery directory (the
//! app passes the user's data dir), at most every `RECOVERY_INTERVAL` while
//! edits keep coming and only when the text changed, on a writer thread
//! (`RecoveryWriter`: the UI loop hands over a rope clone, which costs
//! nothing), synchronously from a panic hook, and offered again on the
//! next start. The file is removed once the buffer is saved, cleanly
//! closed, or back to its saved text.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ropey::Rope;
use serde::{Deserialize, Serialize};

use super::disk::write_atomic;
use super::document::Document;
use super::error::EditorError;
use super::hash::fnv1a;
use super::text::{LineEnding, Shape};

/// Minimum time between two background recovery writes of one document.
pub const RECOVERY_INTERVAL: Duration = Duration::from_secs(3);
const EXTENSION: &str = "hello-tui-recovery.json";

#[derive(Debug, Default)]
pub(crate) struct RecoveryState {
    /// Edits happened since the last recovery write.
    pub pending: bool,
    pub last_write: Option<Instant>,
    /// The recovery file this document wrote, deleted on save/close. Only
    /// one it wrote: another file of the same name (an earlier session's,
    /// kept for later) is not its to delete.
    pub file: Option<PathBuf>,
    /// Bumped when the file is discarded: a write prepared before that
    /// finds it changed and does nothing, so a save is never followed by a
    /// stale recovery file.
    pub epoch: Arc<AtomicU64>,
}

/// Serializes recovery writes with discards, so "prepared before the
/// discard" and "written after it" cannot both happen.
static RECOVERY_IO: Mutex<()> = Mutex::new(());

fn io_lock() -> std::sync::MutexGuard<'static, ()> {
    RECOVERY_IO
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One recovery file to write: everything it needs, owned, so it can run
/// on any thread.
pub struct RecoveryWrite {
    file: PathBuf,
    dir: PathBuf,
    path: PathBuf,
    text: Rope,
    shape: Shape,
    epoch: Arc<AtomicU64>,
    at_epoch: u64,
}

impl RecoveryWrite {
    /// The file whose buffer this is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write the file (atomically), unless the document discarded its
    /// recovery since this was prepared.
    pub fn write(self) -> Result<(), EditorError> {
        let _io = io_lock();
        if self.epoch.load(Ordering::SeqCst) != self.at_epoch {
            return Ok(());
        }
        let err = |message: String| EditorError::Recovery {
            path: self.file.clone(),
            message,
        };
        fs::create_dir_all(&self.dir).map_err(|e| err(e.to_string()))?;
        let written_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let record = Recovery {
            version: Recovery::VERSION,
            path: std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone()),
            written_at,
            text: self.text.to_string(),
            line_ending: self.shape.line_ending,
            final_newline: false,
            bom: self.shape.bom,
            file: PathBuf::new(),
        };
        let json = serde_json::to_vec(&record).map_err(|e| err(e.to_string()))?;
        write_atomic(&self.file, &json, None).map_err(|e| err(e.to_string()))?;
        Ok(())
    }
}

/// Runs recovery writes on a thread of its own, in order. Started on the
/// first write; dropping it waits for the writes already handed over (a
/// clean exit, and tests, find them on disk).
#[derive(Default)]
pub struct RecoveryWriter {
    worker: Option<(mpsc::Sender<Job>, JoinHandle<()>)>,
}

enum Job {
    Write(RecoveryWrite),
    /// Answer once every earlier job is done.
    Flush(mpsc::Sender<()>),
}

impl RecoveryWriter {
    /// Queue a write; errors are logged (the next tick tries again).
    pub fn submit(&mut self, write: RecoveryWrite) {
        self.send(Job::Write(write));
    }

    /// Wait until every write handed over so far is on disk: before
    /// writing synchronously (an older queued text must not land after a
    /// newer one), and for tests.
    pub fn flush(&mut self) {
        if self.worker.is_none() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        self.send(Job::Flush(tx));
        let _ = rx.recv();
    }

    fn send(&mut self, job: Job) {
        let (tx, _) = self.worker.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let thread = std::thread::spawn(move || {
                crate::background::lower_this_thread();
                for job in rx {
                    run(job);
                }
            });
            (tx, thread)
        });
        if let Err(mpsc::SendError(job)) = tx.send(job) {
            // The thread is gone (it panicked): run it here instead.
            run(job);
        }
    }
}

fn run(job: Job) {
    match job {
        Job::Write(write) => {
            if let Err(error) = write.write() {
                tracing::warn!(%error, "writing a recovery file");
            }
        }
        Job::Flush(done) => {
            let _ = done.send(());
        }
    }
}

impl Drop for RecoveryWriter {
    fn drop(&mut self) {
        if let Some((tx, thread)) = self.worker.take() {
            drop(tx);
            let _ = thread.join();
        }
    }
}

/// One recovered buffer found by `list_recoveries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recovery {
    pub version: u32,
    /// The file the buffer belongs to.
    pub path: PathBuf,
    /// Seconds since the Unix epoch when it was written.
    pub written_at: u64,
    /// The unsaved text with '\n' line breaks: since version 2 the whole
    /// text, its final line break included; version 1 left that out (see
    /// `final_newline`).
    pub text: String,
    /// How the file is written back, for when the original is gone.
    #[serde(default = "default_line_ending")]
    pub line_ending: LineEnding,
    /// Version 1 only: the text had a final line break it did not hold.
    /// Version 2 writes `false` (the text holds it).
    #[serde(default = "default_final_newline")]
    pub final_newline: bool,
    #[serde(default)]
    pub bom: bool,
    /// Where the recovery file itself is (not serialized).
    #[serde(skip)]
    pub file: PathBuf,
}

impl Recovery {
    /// Version 2: `text` holds the final line break (version 1 kept it in
    /// `final_newline`; both are read).
    const VERSION: u32 = 2;

    /// How the buffer is written back.
    pub fn shape(&self) -> Shape {
        Shape {
            line_ending: self.line_ending,
            bom: self.bom,
        }
    }

    /// The buffer's text, whichever version wrote the record.
    pub fn body(&self) -> std::borrow::Cow<'_, str> {
        if self.final_newline && !self.text.ends_with('\n') {
            format!("{}\n", self.text).into()
        } else {
            self.text.as_str().into()
        }
    }
}

fn default_line_ending() -> LineEnding {
    LineEnding::Lf
}

fn default_final_newline() -> bool {
    true
}

/// Recovery file name for a document path: stable across runs.
fn recovery_file(dir: &Path, doc_path: &Path) -> PathBuf {
    let abs = std::path::absolute(doc_path).unwrap_or_else(|_| doc_path.to_path_buf());
    let hash = fnv1a(abs.as_os_str().as_encoded_bytes());
    dir.join(format!("{hash:016x}.{EXTENSION}"))
}

impl Document {
    /// Call after changes and on a timer with the current time. When edits
    /// are pending and the last write is at least `RECOVERY_INTERVAL` old,
    /// returns the write to run (hand it to a `RecoveryWriter`; it owns a
    /// rope clone, so preparing it costs nothing); removes the recovery
    /// file when the buffer is clean again.
    pub fn recovery_tick(&mut self, dir: &Path, now: Instant) -> Option<RecoveryWrite> {
        if !self.dirty {
            self.recovery.pending = false;
            self.discard_recovery();
            return None;
        }
        let due = self
            .recovery
            .last_write
            .is_none_or(|t| now.saturating_duration_since(t) >= RECOVERY_INTERVAL);
        if !self.recovery.pending || !due {
            return None;
        }
        self.recovery.pending = false;
        self.recovery.last_write = Some(now);
        self.recovery.file = Some(recovery_file(dir, &self.path));
        self.recovery_write(dir)
    }

    /// Writes the recovery file now and owns it from then on (saving or
    /// closing the buffer deletes it).
    pub(crate) fn write_recovery(&mut self, dir: &Path) -> Result<(), EditorError> {
        self.write_recovery_now(dir)?;
        if self.dirty {
            self.recovery.file = Some(recovery_file(dir, &self.path));
        }
        Ok(())
    }

    /// When the next `recovery_tick` could write, so the app can set a
    /// timer; None when nothing is pending.
    pub fn recovery_due_at(&self) -> Option<Instant> {
        if !(self.dirty && self.recovery.pending) {
            return None;
        }
        Some(
            self.recovery
                .last_write
                .map_or_else(Instant::now, |t| t + RECOVERY_INTERVAL),
        )
    }

    /// Write the recovery file now (panic hook, quit with unsaved
    /// changes). Does nothing for a clean buffer.
    pub fn write_recovery_now(&self, dir: &Path) -> Result<(), EditorError> {
        self.recovery_write(dir)
            .map_or(Ok(()), RecoveryWrite::write)
    }

    /// The write of this buffer's recovery file, text and shape as they
    /// are now; None when clean.
    pub(crate) fn recovery_write(&self, dir: &Path) -> Option<RecoveryWrite> {
        self.dirty.then(|| RecoveryWrite {
            file: recovery_file(dir, &self.path),
            dir: dir.to_path_buf(),
            path: self.path.clone(),
            text: self.rope.clone(),
            shape: self.shape,
            epoch: Arc::clone(&self.recovery.epoch),
            at_epoch: self.recovery.epoch.load(Ordering::SeqCst),
        })
    }

    /// Delete this document's recovery file (after save or a clean close).
    pub(crate) fn discard_recovery(&mut self) {
        if let Some(file) = self.recovery.file.take() {
            let _io = io_lock();
            self.recovery.epoch.fetch_add(1, Ordering::SeqCst);
            let _ = fs::remove_file(file);
        } else {
            // No file, so no queued write of ours: only a prepared one
            // (the exit mirror's) can be outstanding, and it must not
            // bring back what was just saved. No lock needed for that.
            self.recovery.epoch.fetch_add(1, Ordering::SeqCst);
        }
        self.recovery.last_write = None;
    }

    /// Restore a recovered buffer: open the file if it still exists and
    /// put the recovered text, in its recovered shape (line ending,
    /// byte-order mark), in the buffer (dirty, undoable as one
    /// edit); otherwise a new unsaved document that saving recreates.
    pub fn restore(recovery: &Recovery) -> Result<Self, EditorError> {
        let mut doc = match Self::open(&recovery.path) {
            Ok(doc) => doc,
            Err(EditorError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                let mut doc = Self::from_text(&recovery.path, "");
                doc.shape = recovery.shape();
                doc.saved_shape = doc.shape;
                doc.disk_state = super::document::DiskState::DeletedOnDisk;
                doc
            }
            Err(e) => return Err(e),
        };
        if let Some(reason) = doc.read_only_reason() {
            return Err(EditorError::ReadOnly {
                path: recovery.path.clone(),
                reason: reason.clone(),
            });
        }
        doc.replace_all(&recovery.body(), recovery.shape());
        // It owns the file it came from: saving or closing clean deletes it.
        doc.recovery.file = Some(recovery.file.clone());
        Ok(doc)
    }
}

/// Recovered buffers in `dir`, newest first, then by file name. Unreadable or foreign files
/// are skipped; a missing directory is an empty list.
pub fn list_recoveries(dir: &Path) -> Vec<Recovery> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Recovery> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(EXTENSION))
        .filter_map(|p| {
            let bytes = fs::read(&p).ok()?;
            let mut rec: Recovery = serde_json::from_slice(&bytes).ok()?;
            rec.file = p;
            Some(rec)
        })
        .collect();
    // Newest first; files of one second by name, not in the order the
    // directory happens to list them.
    out.sort_by(|a, b| {
        b.written_at
            .cmp(&a.written_at)
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

/// Delete a recovery the user declined.
pub fn discard(recovery: &Recovery) -> Result<(), EditorError> {
    fs::remove_file(&recovery.file).map_err(|e| EditorError::Recovery {
        path: recovery.file.clone(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recovery written before the final line break became text (version
    /// 1) still restores it; a version 2 record is taken as it is.
    #[test]
    fn both_versions_restore_the_final_line_break() {
        let v1 =
            r#"{"version":1,"path":"/x/a.py","written_at":0,"text":"a\nb","final_newline":true}"#;
        let v1: Recovery = serde_json::from_str(v1).unwrap();
        assert_eq!(v1.body(), "a\nb\n");
        let v1_without: Recovery = serde_json::from_str(
            r#"{"version":1,"path":"/x/a.py","written_at":0,"text":"a\nb","final_newline":false}"#,
        )
        .unwrap();
        assert_eq!(v1_without.body(), "a\nb");
        let v2: Recovery = serde_json::from_str(
            r#"{"version":2,"path":"/x/a.py","written_at":0,"text":"a\nb","final_newline":false}"#,
        )
        .unwrap();
        assert_eq!(
            v2.body(),
            "a\nb",
            "no line break added to a file without one"
        );
    }
}

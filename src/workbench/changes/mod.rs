//! What cells changed on disk through `fs.write` and `fs.edit`, kept as
//! change records grouped by what caused them (an agent's answer, one of
//! your cells), so `/undo` can take back the last group, `/redo` put it
//! back, and `/diff` show everything the session changed.
//!
//! Nothing is overwritten blindly: a file is restored only if it still
//! holds exactly what the change left (else someone changed it since, and
//! it is reported, not touched), never while its buffer has unsaved edits,
//! and always beneath the workspace without following links (the same
//! `write_beneath` as `fs.write`, so a link a cell planted cannot steer an
//! undo out of the workspace).

mod by_commands;
mod store;
mod vanished;

use std::path::{Path, PathBuf};

pub use by_commands::{CellWindow, on_disk_event};
pub(crate) use store::ChangeStore;

use crate::kernel::caps::{
    Found, FsWritten, Prior, WriteError, read_beneath, remove_beneath, write_beneath,
};
use crate::workbench::Workbench;

/// Largest file `/undo` compares with what a change left (a change's text
/// is at most a capability frame, 16 MiB).
const MAX_COMPARED: u64 = 32 << 20;

/// Groups kept for `/undo`; older ones are forgotten.
const MAX_GROUPS: usize = 50;

/// Bytes of file text the log keeps in all (before and after of every
/// change). Past it the oldest groups are forgotten; a change that alone
/// would pass it is kept without its texts, so it cannot be undone.
const MAX_LOG_BYTES: usize = 256 << 20;

/// One file's change: what it held before the group's first write to it,
/// and after its last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileChange {
    pub path: PathBuf,
    pub before: Prior,
    pub after: Vec<u8>,
    /// The names the texts are saved under, computed when they are set so
    /// saving the log after each write does not hash it all again.
    names: store::BlobNames,
}

impl FileChange {
    fn new(path: PathBuf, before: Prior, after: Vec<u8>) -> Self {
        let names = store::BlobNames::of(&before, &after);
        Self {
            path,
            before,
            after,
            names,
        }
    }

    fn set(&mut self, before: Prior, after: Vec<u8>) {
        *self = Self::new(std::mem::take(&mut self.path), before, after);
    }

    fn bytes(&self) -> usize {
        let before = match &self.before {
            Prior::Bytes(bytes) => bytes.len(),
            Prior::Absent | Prior::Unrecorded => 0,
        };
        before + self.after.len()
    }
}

/// The changes one cause made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangeGroup {
    /// "the agent's answer to “fix the tests”", "your cell".
    pub label: String,
    pub changes: Vec<FileChange>,
}

#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    done: Vec<ChangeGroup>,
    undone: Vec<ChangeGroup>,
    /// The label of the group the next write starts.
    next: Option<String>,
    /// Where the log is saved: set once the conversation has a session
    /// (its first prompt, or a resumed one). Until then it lives in memory.
    store: Option<ChangeStore>,
    /// The first save failure, reported once.
    save_failed: bool,
    /// When cells ran, for changes made by their commands.
    pub window: CellWindow,
    /// Paths seen removed: a file made there later is not taken for new.
    vanished: vanished::Vanished,
}

impl ChangeLog {
    /// Something that may write starts (an agent's answer, a `%py` cell):
    /// its writes form a group of their own.
    pub(crate) fn start_group(&mut self, label: impl Into<String>) {
        self.next = Some(label.into());
    }

    /// The text the log last saw `path` left with, in the newest group.
    fn last_text(&self, path: &Path) -> Option<&[u8]> {
        self.done
            .last()?
            .changes
            .iter()
            .find(|c| c.path == path)
            .map(|c| c.after.as_slice())
    }

    /// A write happened. A second write to one file in a group keeps the
    /// first `before`. A new change makes what was undone final. Returns
    /// whether it started a new group.
    pub fn record(&mut self, written: &FsWritten) -> bool {
        let started = self.next.is_some();
        if let Some(label) = self.next.take() {
            self.done.push(ChangeGroup {
                label,
                changes: Vec::new(),
            });
            if self.done.len() > MAX_GROUPS {
                self.done.remove(0);
            }
        }
        if self.done.is_empty() {
            self.done.push(ChangeGroup {
                label: "a cell".into(),
                changes: Vec::new(),
            });
        }
        self.undone.clear();
        let Some(group) = self.done.last_mut() else {
            return started;
        };
        match group.changes.iter_mut().find(|c| c.path == written.path) {
            // Someone else changed the file between the group's writes
            // (the user saved it): undoing goes back to their text, never
            // past it.
            Some(change) if written.before != Prior::Bytes(change.after.clone()) => {
                change.set(written.before.clone(), written.after.clone());
            }
            Some(change) => {
                let before = std::mem::replace(&mut change.before, Prior::Absent);
                change.set(before, written.after.clone());
            }
            None => group.changes.push(FileChange::new(
                written.path.clone(),
                written.before.clone(),
                written.after.clone(),
            )),
        }
        self.keep_within(MAX_LOG_BYTES);
        started
    }

    /// Forgets the oldest groups while the log holds more than `limit`
    /// bytes; if the newest alone does, its changes lose their texts, first
    /// first (they stay listed, and `/undo` says it cannot).
    fn keep_within(&mut self, limit: usize) {
        let size = |group: &ChangeGroup| group.changes.iter().map(FileChange::bytes).sum::<usize>();
        let mut total: usize = self.done.iter().map(size).sum();
        while total > limit && self.done.len() > 1 {
            total -= size(&self.done.remove(0));
        }
        if let Some(group) = self.done.last_mut() {
            for change in &mut group.changes {
                if total <= limit {
                    break;
                }
                total -= change.bytes();
                change.set(Prior::Unrecorded, Vec::new());
            }
        }
    }
}

/// The conversation now has session `id`: the log is saved with it from
/// here on (what happened before, too).
pub fn attach(workbench: &mut Workbench, id: &str) {
    let root = workspace_root(workbench);
    workbench.changes.store = Some(ChangeStore::for_session(
        &workbench.workspace_root,
        &root,
        id,
    ));
    save(workbench);
}

/// Session `id` was resumed: its log comes back, so `/undo` reaches the
/// turns before the restart.
pub fn resume(workbench: &mut Workbench, id: &str) {
    let root = workspace_root(workbench);
    let store = ChangeStore::for_session(&workbench.workspace_root, &root, id);
    match store.load() {
        Ok(mut log) => {
            log.store = Some(store);
            log.vanished = std::mem::take(&mut workbench.changes.vanished);
            workbench.changes = log;
        }
        Err(error) => workbench.notice(&format!(
            "The session's file changes cannot be undone: {error}"
        )),
    }
}

/// Saves the log where it is kept; the first failure is reported once
/// (the log stays usable in memory).
fn save(workbench: &mut Workbench) {
    let Some(store) = &workbench.changes.store else {
        return;
    };
    match store.save(&workbench.changes) {
        Ok(()) => workbench.changes.save_failed = false,
        Err(error) if !workbench.changes.save_failed => {
            workbench.changes.save_failed = true;
            workbench.notice(&format!(
                "File changes are no longer saved with the session (/undo works until \
                     you quit): {error}"
            ));
        }
        Err(_) => {}
    }
}

/// The workspace as change paths spell it (canonical, as `fs` resolves).
fn workspace_root(workbench: &Workbench) -> PathBuf {
    std::fs::canonicalize(&workbench.workspace_root)
        .unwrap_or_else(|_| workbench.workspace_root.clone())
}

/// The watcher saw `path` disappear (removed, or renamed away).
pub(crate) fn on_removed(workbench: &mut Workbench, path: &Path) {
    workbench.changes.vanished.note(path);
}

/// A cell's `fs` write is recorded, shown under its cell and marked in the
/// file view. One that found no file is recorded as a creation (which
/// `/undo` takes back by deleting the file) only when the file was not
/// there a moment before either, as far as the workbench can see: not
/// removed since the session started, not still listed by the workspace
/// index (a removal the watcher has not reported yet: removed and written
/// back within one debounce), and a path the watcher follows at all (it
/// does not report hidden or ignored files, so their removal is never
/// seen). Otherwise its earlier state counts as unknown, and `/undo`
/// leaves it.
pub(crate) fn on_written(workbench: &mut Workbench, written: &FsWritten) {
    if written.before == Prior::Absent && !seen_absent(workbench, &written.path) {
        let logged = FsWritten {
            before: Prior::Unrecorded,
            ..written.clone()
        };
        return record_written(workbench, &logged, written);
    }
    record_written(workbench, written, written)
}

/// See [`on_written`].
fn seen_absent(workbench: &Workbench, path: &Path) -> bool {
    let root = workspace_root(workbench);
    let Some(relative) = path.strip_prefix(&root).ok().and_then(Path::to_str) else {
        return false;
    };
    workbench.file_index.is_complete()
        && !workbench.file_index.contains(relative)
        && !workbench.changes.vanished.may_have_been_there(path)
        && !crate::workspace::IgnoreRules::new(&root).is_ignored(path, false)
}

/// Records `logged` and shows `written` (what the cell did, which may say
/// more than the log keeps).
pub(super) fn record_written(workbench: &mut Workbench, logged: &FsWritten, written: &FsWritten) {
    if workbench.changes.record(logged) {
        // The marks show what the *last* cell or answer changed.
        workbench.editors.changed_lines.clear();
    }
    save(workbench);
    show_in_cell(workbench, written);
    let before = match &written.before {
        Prior::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Prior::Absent | Prior::Unrecorded => String::new(),
    };
    let after = String::from_utf8_lossy(&written.after);
    // A big rewrite is not diffed on the UI loop; its lines go unmarked.
    let lines = if crate::text_diff::small_enough(&before, &after) {
        crate::text_diff::changed_lines(&before, &after)
    } else {
        Vec::new()
    };
    let marks = workbench
        .editors
        .changed_lines
        .entry(written.path.clone())
        .or_default();
    marks.extend(lines);
    marks.sort_unstable();
    marks.dedup();
}

/// Shows a write under the cell that made it (the newest cell: a write is
/// announced while its cell runs), as a diff from what the file held before
/// the cell first wrote it.
fn show_in_cell(workbench: &mut Workbench, written: &FsWritten) {
    let shown = workbench.display_path(&written.path);
    let after = String::from_utf8_lossy(&written.after);
    let Some(entry) = workbench.transcript.edit_last_where(|m| m.cell.is_some()) else {
        return;
    };
    let Some(cell) = entry.cell.as_mut() else {
        return;
    };
    let earlier = match cell.changes.iter().position(|c| c.path == written.path) {
        Some(i) => {
            let earlier = cell.changes.remove(i);
            (!earlier.earlier_unknown).then_some(earlier.before)
        }
        None => match &written.before {
            Prior::Bytes(bytes) => Some(Some(String::from_utf8_lossy(bytes).into_owned())),
            Prior::Absent => Some(None),
            Prior::Unrecorded => None,
        },
    };
    cell.changes.push(match earlier {
        Some(before) => crate::workbench::transcript::CellChange::new(
            written.path.clone(),
            shown,
            before,
            &after,
        ),
        None => {
            crate::workbench::transcript::CellChange::earlier_unknown(written.path.clone(), shown)
        }
    });
    // A write announced after its cell ended updates the session's record.
    let cell_id = cell.id;
    crate::workbench::agent::record_cell(workbench, cell_id);
}

impl ChangeLog {
    /// The stack a group is taken from and the one it goes to.
    fn stacks(&mut self, direction: Direction) -> (&mut Vec<ChangeGroup>, &mut Vec<ChangeGroup>) {
        match direction {
            Direction::Undo => (&mut self.done, &mut self.undone),
            Direction::Redo => (&mut self.undone, &mut self.done),
        }
    }
}

/// Which way a group is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Undo,
    Redo,
}

/// `/undo`: takes back the last group's changes. Returns what happened,
/// for the conversation.
pub fn undo(workbench: &mut Workbench) -> String {
    apply_group(workbench, Direction::Undo)
}

/// `/redo`: puts back what the last `/undo` took back.
pub fn redo(workbench: &mut Workbench) -> String {
    apply_group(workbench, Direction::Redo)
}

fn apply_group(workbench: &mut Workbench, direction: Direction) -> String {
    let verb = match direction {
        Direction::Undo => "undone",
        Direction::Redo => "redone",
    };
    let Some(group) = workbench.changes.stacks(direction).0.pop() else {
        return match direction {
            Direction::Undo => "Nothing to undo: no cell has changed a file with fs.write or fs.edit in this session.".into(),
            Direction::Redo => "Nothing to redo.".into(),
        };
    };
    let root = workspace_root(workbench);
    let mut applied = Vec::new();
    let mut kept = Vec::new();
    let mut report = Vec::new();
    let mut details = String::new();
    // Last change first: a file written twice in a group is one change.
    for change in group.changes.into_iter().rev() {
        let shown = workbench.display_path(&change.path);
        let restored = restore(workbench, &root, &change, direction);
        if matches!(restored, Ok(Restored::Exactly | Restored::Merged { .. })) {
            // Its marks name lines of a text that is gone.
            workbench.editors.changed_lines.remove(&change.path);
            crate::workbench::editors::on_disk_change(workbench, &change.path);
        }
        match restored {
            Ok(Restored::Exactly) => {
                report.push(format!("{shown} {verb}"));
                applied.push(change);
            }
            Ok(Restored::Conflicted(conflicts)) => {
                report.push(format!(
                    "{shown} left as it is: you edited the same lines since"
                ));
                details.push_str(&conflict_report(&shown, &conflicts));
                kept.push(change);
            }
            Ok(Restored::Merged {
                found,
                written,
                conflicts,
            }) => {
                if conflicts.is_empty() {
                    report.push(format!("{shown} {verb} around your edits since"));
                } else {
                    report.push(format!(
                        "{shown} {verb} except where you edited the same lines since"
                    ));
                    details.push_str(&conflict_report(&shown, &conflicts));
                }
                applied.push(match direction {
                    Direction::Undo => FileChange::new(change.path, Prior::Bytes(written), found),
                    Direction::Redo => FileChange::new(change.path, Prior::Bytes(found), written),
                });
            }
            // A change that can never be taken back leaves the log, or
            // every later /undo would stop at its group (review finding).
            Err(why) if why == NOT_KEPT => {
                report.push(format!(
                    "{shown} left as it is: {why}; it is dropped from /undo"
                ));
            }
            Err(why) => {
                report.push(format!("{shown} left as it is: {why}"));
                kept.push(change);
            }
        }
    }
    applied.reverse();
    kept.reverse();
    let label = group.label;
    let (from, to) = workbench.changes.stacks(direction);
    // What could not be taken back stays where it was, to try again.
    for (stack, changes) in [(from, kept), (to, applied)] {
        if !changes.is_empty() {
            stack.push(ChangeGroup {
                label: label.clone(),
                changes,
            });
        }
    }
    save(workbench);
    format!(
        "/{} {label}: {}.{details}",
        match direction {
            Direction::Undo => "undo",
            Direction::Redo => "redo",
        },
        report.join("; ")
    )
}

/// Why a change cannot be taken back, ever: nothing to restore it to.
const NOT_KEPT: &str = "its earlier text was not kept (too big, changed by a command while not open \
     in the editor, or written where a file may have been a moment before, which /undo never deletes)";

/// How a file was put back.
enum Restored {
    /// It held exactly what the change left: the change itself moves.
    Exactly,
    /// It was edited since: the change was merged into the edits; what
    /// moves is the change as it happened now (`written` over `found`),
    /// and where both touched the same lines the edits were kept.
    Merged {
        found: Vec<u8>,
        written: Vec<u8>,
        conflicts: Vec<crate::text_merge::Conflict>,
    },
    /// Edited since, on every line the change touched: nothing was
    /// written, and these regions show why.
    Conflicted(Vec<crate::text_merge::Conflict>),
}

/// Puts one file back (undo: to `before`; redo: to `after`). A file that
/// still holds what the other side left is restored exactly; one edited
/// since gets the change taken out (or put back) around the edits, by a
/// three-way merge that never overwrites an edited line.
fn restore(
    workbench: &Workbench,
    root: &Path,
    change: &FileChange,
    direction: Direction,
) -> Result<Restored, String> {
    let (expected, target) = match direction {
        Direction::Undo => (Some(change.after.as_slice()), &change.before),
        Direction::Redo => (
            match &change.before {
                Prior::Bytes(bytes) => Some(bytes.as_slice()),
                Prior::Absent => None,
                Prior::Unrecorded => return Err(NOT_KEPT.into()),
            },
            &Prior::Bytes(change.after.clone()),
        ),
    };
    if let Prior::Unrecorded = target {
        return Err(NOT_KEPT.into());
    }
    if workbench
        .editors
        .tabs
        .iter()
        .any(|doc| doc.path() == change.path && doc.is_dirty())
    {
        return Err("it has unsaved edits in the editor".into());
    }
    let relative = change
        .path
        .strip_prefix(root)
        .map_err(|_| "it is outside the workspace".to_string())?;
    // Read as it will be written: beneath the workspace, no link followed.
    let current = match read_beneath(root, relative, MAX_COMPARED) {
        Ok(Found::Bytes(bytes)) => Some(bytes),
        Ok(Found::TooBig(_)) => return Err("it was changed since".into()),
        Ok(Found::Folder | Found::Special) => {
            return Err("it is no longer a plain file".into());
        }
        Err(WriteError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(WriteError::Steered) => return Err("its path leads through a link".into()),
        Err(error) => return Err(error.to_string()),
    };
    // Already what it should become (the user put it back by hand): done.
    let already = match target {
        Prior::Bytes(bytes) => current.as_deref() == Some(bytes.as_slice()),
        Prior::Absent => current.is_none(),
        Prior::Unrecorded => false,
    };
    if already {
        return Ok(Restored::Exactly);
    }
    let steered = |e: WriteError| match e {
        WriteError::Steered => "its path leads through a link".to_string(),
        other => other.to_string(),
    };
    if current.as_deref() == expected {
        return match target {
            Prior::Bytes(bytes) => write_beneath(root, relative, bytes).map_err(steered),
            // The change created it: taking it back removes it, beneath
            // the workspace (a folder on the way swapped for a link is
            // refused).
            Prior::Absent => remove_beneath(root, relative).map_err(steered),
            Prior::Unrecorded => Err(NOT_KEPT.into()),
        }
        .map(|()| Restored::Exactly);
    }
    // Edited since. Only a text on both sides can be merged (a created
    // file edited since is not removed), and only one small enough to
    // diff on the UI loop.
    let (Some(base), Some(found), Prior::Bytes(goal)) = (expected, current, target) else {
        return Err("it was changed since".into());
    };
    if base.len() + found.len() + goal.len() > crate::text_diff::MAX_DIFF_BYTES {
        return Err("it was changed since, and is too big to merge here".into());
    }
    let merge = crate::text_merge::merge3(base, &found, goal);
    if merge.text == found {
        return Ok(Restored::Conflicted(merge.conflicts));
    }
    write_beneath(root, relative, &merge.text).map_err(steered)?;
    Ok(Restored::Merged {
        found,
        written: merge.text,
        conflicts: merge.conflicts,
    })
}

/// Where a merged restore kept the user's lines, as the report shows it:
/// each region as a diff from what was kept (`-`) to what `/undo` (or
/// `/redo`) would have put there (`+`).
fn conflict_report(shown: &str, conflicts: &[crate::text_merge::Conflict]) -> String {
    let mut out = String::new();
    for conflict in conflicts {
        let ours = String::from_utf8_lossy(&conflict.ours);
        let theirs = String::from_utf8_lossy(&conflict.theirs);
        out.push_str(&format!(
            "\n{shown}: kept your lines at line {}:\n",
            conflict.line
        ));
        for line in crate::text_diff::unified(&ours, &theirs, None, 0).lines() {
            if !line.starts_with("@@") {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    out
}

/// `/diff`: every change the session made that is not undone, group by
/// group, as unified diffs.
pub fn diff(workbench: &Workbench) -> String {
    if workbench.changes.done.is_empty() {
        return "No changes: no cell has changed a file with fs.write or fs.edit in this session."
            .into();
    }
    let mut out = String::new();
    for group in &workbench.changes.done {
        out.push_str(&format!("{}:\n", group.label));
        for change in &group.changes {
            let name = workbench.display_path(&change.path);
            let before = match &change.before {
                Prior::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                Prior::Absent => String::new(),
                Prior::Unrecorded => {
                    out.push_str(&format!(
                        "{name}: rewritten (its earlier text was not kept)\n"
                    ));
                    continue;
                }
            };
            let after = String::from_utf8_lossy(&change.after);
            if crate::text_diff::small_enough(&before, &after) {
                out.push_str(&crate::text_diff::unified(&before, &after, Some(&name), 2));
            } else {
                out.push_str(&format!(
                    "{name}: rewritten (too big to show as a diff here)\n"
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppEvent;
    use crate::app::AppState;
    use crate::app::update::{Command, handle_app_event};
    use crate::config::Settings;

    /// A workbench whose workspace index has been built (as it is soon
    /// after start): what it lists, the workbench knows exists.
    fn state(root: &Path) -> AppState {
        let mut s = AppState::new(root.to_path_buf(), Settings::defaults());
        let files = walkdir_names(root);
        s.workbench
            .file_index
            .apply(&crate::workspace::IndexUpdate::Batch(files));
        s.workbench
            .file_index
            .apply(&crate::workspace::IndexUpdate::Done {
                count: 0,
                elapsed: std::time::Duration::ZERO,
            });
        s
    }

    /// The plain files directly in `root`, as the index names them.
    fn walkdir_names(root: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .collect();
        names.sort();
        names
    }

    /// Issue 25, route 19, through `fs.write`: a cell that removes the
    /// user's file and writes it back (before the watcher reported the
    /// removal, or after), or writes a hidden file whose removal the
    /// watcher never reports, is not taken to have made it from nothing:
    /// `/undo` leaves the file. One really new is still removed.
    #[test]
    fn undo_deletes_only_files_it_saw_were_not_there() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (listed, reported, hidden, new) = (
            root.join("listed.txt"),
            root.join("reported.txt"),
            root.join(".env"),
            root.join("new.txt"),
        );
        for path in [&listed, &reported, &hidden] {
            std::fs::write(path, "the user's\n").unwrap();
        }
        let mut s = state(&root);
        s.workbench.changes.start_group("the agent's answer");
        for path in [&listed, &reported, &hidden] {
            std::fs::remove_file(path).unwrap();
        }
        on_removed(&mut s.workbench, &reported);
        for path in [&listed, &reported, &hidden, &new] {
            write(&mut s, path, "the user's\n");
        }
        let report = undo(&mut s.workbench);
        for name in ["listed.txt", "reported.txt", ".env"] {
            assert!(
                report.contains(&format!(
                    "{name} left as it is: its earlier text was not kept"
                )),
                "{report}"
            );
        }
        assert!(report.contains("new.txt undone"), "{report}");
        for path in [&listed, &reported, &hidden] {
            assert_eq!(read(path), "the user's\n");
        }
        assert!(!new.exists());
    }

    /// A cell's write as the kernel's `fs.write` does it and announces it.
    fn write(s: &mut AppState, path: &Path, text: &str) {
        let before = match std::fs::read(path) {
            Ok(bytes) => Prior::Bytes(bytes),
            Err(_) => Prior::Absent,
        };
        std::fs::write(path, text).unwrap();
        let written = FsWritten {
            path: path.to_path_buf(),
            before,
            after: text.as_bytes().to_vec(),
        };
        assert_ne!(
            handle_app_event(s, AppEvent::FsWritten(written)),
            Command::Quit
        );
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn undo_takes_back_the_last_group_byte_for_byte_and_redo_puts_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = (root.join("a.py"), root.join("new.py"));
        std::fs::write(&a, "one\r\ntwo\r\n").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("first");
        write(&mut s, &a, "one\r\nTWO\r\n");
        s.workbench.changes.start_group("second");
        write(&mut s, &a, "ONE\r\nTWO\r\n");
        write(&mut s, &a, "ONE!\r\nTWO\r\n");
        write(&mut s, &b, "created\n");

        let report = undo(&mut s.workbench);
        assert!(report.contains("second"), "{report}");
        assert_eq!(
            read(&a),
            "one\r\nTWO\r\n",
            "back to before the group, not one write"
        );
        assert!(!b.exists(), "a file the group created is removed");
        let report = undo(&mut s.workbench);
        assert!(report.contains("first"), "{report}");
        assert_eq!(read(&a), "one\r\ntwo\r\n");
        assert!(undo(&mut s.workbench).starts_with("Nothing to undo"));

        redo(&mut s.workbench);
        assert_eq!(read(&a), "one\r\nTWO\r\n");
        redo(&mut s.workbench);
        assert_eq!(read(&a), "ONE!\r\nTWO\r\n");
        assert_eq!(read(&b), "created\n");
        assert!(redo(&mut s.workbench).starts_with("Nothing to redo"));
    }

    #[test]
    fn undo_merges_around_lines_edited_since_and_redo_restores_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = root.join("a.py");
        std::fs::write(&a, "1\n2\n3\n4\n5\n6\n").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("the agent's answer");
        write(&mut s, &a, "1\n2\n3\n4\nFIVE\n6\n");
        // The user edits line 1 and saves, after the agent's write.
        std::fs::write(&a, "one\n2\n3\n4\nFIVE\n6\n").unwrap();

        let report = undo(&mut s.workbench);
        assert!(report.contains("a.py undone around your edits"), "{report}");
        assert_eq!(read(&a), "one\n2\n3\n4\n5\n6\n", "the user's line stays");
        let report = redo(&mut s.workbench);
        assert!(report.contains("a.py redone"), "{report}");
        assert_eq!(read(&a), "one\n2\n3\n4\nFIVE\n6\n");
        undo(&mut s.workbench);
        assert_eq!(read(&a), "one\n2\n3\n4\n5\n6\n");
    }

    #[test]
    fn lines_both_changed_stay_the_users_and_are_shown_as_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, created) = (root.join("a.py"), root.join("new.py"));
        std::fs::write(&a, "1\n2\n3\n4\n5\n6\n").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("the agent's answer");
        write(&mut s, &a, "1\nTWO\n3\n4\n5\nSIX\n");
        write(&mut s, &created, "made by the agent\n");
        std::fs::write(&a, "1\nmy two\n3\n4\n5\nSIX\n").unwrap();
        std::fs::write(&created, "made by the agent\nand then by me\n").unwrap();

        let report = undo(&mut s.workbench);
        assert!(
            report.contains("a.py undone except where you edited the same lines since"),
            "{report}"
        );
        assert!(
            report.contains("a.py: kept your lines at line 2"),
            "{report}"
        );
        assert!(
            report.contains("-my two") && report.contains("+2"),
            "{report}"
        );
        assert_eq!(
            read(&a),
            "1\nmy two\n3\n4\n5\n6\n",
            "line 6 is taken back, the user's line 2 kept"
        );
        assert!(
            report.contains("new.py left as it is: it was changed since"),
            "{report}"
        );
        assert_eq!(read(&created), "made by the agent\nand then by me\n");
    }

    /// Review finding: a change that can never be taken back (its earlier
    /// text unknown) and a file the user already put back by hand no longer
    /// stop every later /undo at their group.
    #[test]
    fn undo_walks_past_changes_that_cannot_or_need_not_be_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (t, s_path, unknown) = (root.join("t.txt"), root.join("s.txt"), root.join("u.txt"));
        std::fs::write(&t, "t0").unwrap();
        std::fs::write(&s_path, "s0").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("first");
        write(&mut s, &t, "t1");
        s.workbench.changes.start_group("second");
        write(&mut s, &s_path, "s1");
        std::fs::write(&unknown, "made by a command").unwrap();
        assert_ne!(
            handle_app_event(
                &mut s,
                AppEvent::FsWritten(FsWritten {
                    path: unknown.clone(),
                    before: Prior::Unrecorded,
                    after: b"made by a command".to_vec(),
                })
            ),
            Command::Quit
        );
        std::fs::write(&s_path, "s0").unwrap(); // put back by hand
        let report = undo(&mut s.workbench);
        assert!(report.contains("s.txt undone"), "{report}");
        assert!(
            report.contains("u.txt left as it is: its earlier text was not kept"),
            "{report}"
        );
        assert!(report.contains("dropped from /undo"), "{report}");
        let report = undo(&mut s.workbench);
        assert!(
            report.contains("first") && report.contains("t.txt undone"),
            "{report}"
        );
        assert_eq!(read(&t), "t0");
    }

    #[test]
    fn a_file_changed_since_is_reported_and_left_for_later() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = (root.join("a.txt"), root.join("b.txt"));
        std::fs::write(&a, "a0").unwrap();
        std::fs::write(&b, "b0").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("the agent's answer");
        write(&mut s, &a, "a1");
        write(&mut s, &b, "b1");
        std::fs::write(&b, "b1 and the user's line").unwrap();

        let report = undo(&mut s.workbench);
        assert!(report.contains("a.txt undone"), "{report}");
        assert!(
            report.contains("b.txt left as it is: you edited the same lines since"),
            "{report}"
        );
        assert_eq!(read(&a), "a0");
        assert_eq!(
            read(&b),
            "b1 and the user's line",
            "the user's work is kept"
        );
        // Once the user puts it back, the rest of the group can be undone.
        std::fs::write(&b, "b1").unwrap();
        let report = undo(&mut s.workbench);
        assert!(report.contains("b.txt undone"), "{report}");
        assert_eq!(read(&b), "b0");
    }

    #[test]
    fn unsaved_edits_and_planted_links_are_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (a, b) = (root.join("a.txt"), root.join("b.txt"));
        std::fs::write(&a, "a0").unwrap();
        std::fs::write(&b, "b0").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("cell");
        write(&mut s, &a, "a1");
        write(&mut s, &b, "b1");
        // The user edits a.txt without saving; a cell swaps b.txt for a
        // link out of the workspace.
        crate::app::editors::open(&mut s, &a, None);
        let tab = s.workbench.editors.active;
        s.workbench.editors.tabs[tab]
            .apply(crate::editor::EditCommand::InsertChar('x'))
            .unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "b1").unwrap();
        std::fs::remove_file(&b).unwrap();
        std::os::unix::fs::symlink(&victim, &b).unwrap();

        let report = undo(&mut s.workbench);
        assert!(
            report.contains("a.txt left as it is: it has unsaved edits"),
            "{report}"
        );
        assert!(
            report.contains("b.txt left as it is: its path leads through a link"),
            "{report}"
        );
        assert_eq!(read(&a), "a1");
        assert_eq!(read(&victim), "b1", "nothing was written through the link");
    }

    /// A cell that swaps a folder for a link after creating a file cannot
    /// make `/undo` delete a file of the same name outside the workspace.
    #[test]
    fn undo_never_removes_through_a_folder_swapped_for_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let created = root.join("sub").join("bashrc");
        let mut s = state(&root);
        s.workbench.changes.start_group("cell");
        write(&mut s, &created, "the victim's text");
        // The cell read the victim's file, wrote its copy, then swaps the
        // folder for a link to where the victim's file lives.
        let victim = outside.path().join("bashrc");
        std::fs::write(&victim, "the victim's text").unwrap();
        std::fs::remove_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("sub")).unwrap();

        let report = undo(&mut s.workbench);
        assert!(
            report.contains("left as it is: its path leads through a link"),
            "{report}"
        );
        assert!(
            victim.exists(),
            "the file outside the workspace is still there"
        );
    }

    /// The log keeps at most its byte budget: the oldest groups go first,
    /// then the texts of the newest group's changes (still listed; `/undo`
    /// says it cannot take them back).
    #[test]
    fn the_log_stays_within_its_byte_budget() {
        let written = |name: &str, size: usize| FsWritten {
            path: PathBuf::from(format!("/ws/{name}")),
            before: Prior::Absent,
            after: vec![b'x'; size],
        };
        let mut log = ChangeLog::default();
        for (group, name) in [("one", "a"), ("two", "b"), ("three", "c")] {
            log.start_group(group);
            log.record(&written(name, 40));
        }
        log.keep_within(100);
        let labels: Vec<&str> = log.done.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["two", "three"], "the oldest group went");
        log.keep_within(30);
        assert_eq!(log.done.len(), 1);
        assert_eq!(log.done[0].changes[0].before, Prior::Unrecorded);
        assert!(log.done[0].changes[0].after.is_empty());
    }

    /// A multi-megabyte rewrite is not diffed on the UI loop: the cell says
    /// it is too big to show, and no gutter lines are marked.
    #[test]
    fn a_huge_rewrite_is_not_diffed_on_the_ui_loop() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let big = root.join("big.txt");
        let mut s = state(&root);
        s.workbench
            .transcript
            .push(crate::workbench::transcript::PaneEntry::cell(
                1,
                "fs.write('big.txt', data)",
            ));
        let text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        write(&mut s, &big, &text);
        let cell = s.workbench.transcript[0].cell.as_ref().unwrap();
        assert!(
            cell.changes[0].diff.contains("too big to show"),
            "{}",
            cell.changes[0].diff
        );
        assert_eq!(cell.changes[0].added, 200_000);
        assert!(
            s.workbench
                .editors
                .changed_lines
                .get(&big)
                .is_none_or(Vec::is_empty)
        );
    }

    /// Review finding: the user saves a file between two of a group's
    /// writes; `/undo` goes back to the user's text, never past it.
    #[test]
    fn undo_stops_at_a_save_the_user_made_between_writes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = root.join("a.txt");
        std::fs::write(&a, "A0").unwrap();
        let mut s = state(&root);
        s.workbench.changes.start_group("the agent's answer");
        write(&mut s, &a, "A1");
        std::fs::write(&a, "the user's save").unwrap();
        write(&mut s, &a, "the user's save, edited by a cell");
        let report = undo(&mut s.workbench);
        assert!(report.contains("a.txt undone"), "{report}");
        assert_eq!(read(&a), "the user's save");
    }

    #[test]
    fn diff_shows_what_the_session_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let a = root.join("a.py");
        std::fs::write(&a, "x = 1\ny = 2\n").unwrap();
        let mut s = state(&root);
        assert!(diff(&s.workbench).starts_with("No changes"));
        s.workbench
            .changes
            .start_group("the agent's answer to “bump y”");
        write(&mut s, &a, "x = 1\ny = 3\n");
        let shown = diff(&s.workbench);
        assert!(
            shown.starts_with("the agent's answer to “bump y”:"),
            "{shown}"
        );
        assert!(shown.contains("--- a/a.py\n+++ b/a.py\n"), "{shown}");
        assert!(shown.contains("-y = 2\n+y = 3\n"), "{shown}");
    }
}

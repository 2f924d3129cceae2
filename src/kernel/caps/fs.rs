//! The `fs` capability: read, write, list and test files inside the workspace.
//!
//! Writes refuse files that have unsaved edits in the editor (the UI publishes
//! that set into a `watch`), and announce successful writes so the file view
//! can reload.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::confine::confine;
use super::review::{WriteProposal, WriteReview, WriteVerdict};
use super::write_beneath::{Found, WriteError, write_beneath};
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, arg_str,
};

/// Paths with unsaved editor changes, as the UI publishes them (absolute, or
/// relative to the workspace root).
pub type DirtyPaths = Arc<BTreeSet<PathBuf>>;

/// A file `fs.write` (or `fs.edit`) changed on disk: the absolute,
/// resolved path and the bytes before and after, so the workbench can show
/// and take back what the agent changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsWritten {
    pub path: PathBuf,
    pub before: Prior,
    pub after: Vec<u8>,
}

/// What a file held before a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prior {
    /// There was no file.
    Absent,
    Bytes(Vec<u8>),
    /// Too big to keep a copy of (over `MAX_READ`): the write cannot be
    /// taken back.
    Unrecorded,
}

impl Prior {
    /// What `relative` (beneath `root`) holds now, as the state before a
    /// write; read without following links, like the write itself.
    fn of(root: &Path, relative: &Path) -> Self {
        match super::read_beneath(root, relative, MAX_READ) {
            Ok(Found::Bytes(bytes)) => Prior::Bytes(bytes),
            Err(WriteError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                Prior::Absent
            }
            _ => Prior::Unrecorded,
        }
    }
}

/// Largest file `fs.read` returns.
const MAX_READ: u64 = 8 << 20;

#[derive(Clone)]
pub struct FsCapability {
    inner: Arc<FsInner>,
}

struct FsInner {
    root: PathBuf,
    dirty: Option<watch::Receiver<DirtyPaths>>,
    written: Option<mpsc::UnboundedSender<FsWritten>>,
    /// Who sees a write's diff before it reaches the disk (`ask` and
    /// `review` modes); `None` writes at once.
    review: Option<Arc<dyn WriteReview>>,
}

impl FsCapability {
    /// Confine to `root` (resolved through symlinks once, here).
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        Ok(Self {
            inner: Arc::new(FsInner {
                root: root.as_ref().canonicalize()?,
                dirty: None,
                written: None,
                review: None,
            }),
        })
    }

    /// Refuse writes to the paths this watch holds.
    pub fn with_dirty_paths(self, dirty: watch::Receiver<DirtyPaths>) -> Self {
        self.rebuild(|inner| inner.dirty = Some(dirty))
    }

    /// Announce every successful write on this channel.
    pub fn with_write_events(self, written: mpsc::UnboundedSender<FsWritten>) -> Self {
        self.rebuild(|inner| inner.written = Some(written))
    }

    /// Show every write to `review` first, and write what it lets through.
    pub(crate) fn with_review(self, review: Arc<dyn WriteReview>) -> Self {
        self.rebuild(|inner| inner.review = Some(review))
    }

    fn rebuild(self, change: impl FnOnce(&mut FsInner)) -> Self {
        let mut inner = FsInner {
            root: self.inner.root.clone(),
            dirty: self.inner.dirty.clone(),
            written: self.inner.written.clone(),
            review: self.inner.review.clone(),
        };
        change(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }
}

impl Capability for FsCapability {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "fs".to_owned(),
            description: "Files in the workspace (paths relative to its root).".to_owned(),
            actions: vec![
                ActionSpec::new("read", "Return the text of a file.").param("path"),
                ActionSpec::new(
                    "write",
                    "Replace a file's text (creates it and its folders). Refused for files with unsaved edits in the editor.",
                )
                .param("path")
                .param("text"),
                ActionSpec::new(
                    "edit",
                    "Replace an exact snippet of a file's text: `old` must occur exactly `count` times (default once), or nothing is written. Refused for files with unsaved edits in the editor.",
                )
                .param("path")
                .param("old")
                .param("new")
                .param_default("count", json!(1)),
                ActionSpec::new(
                    "apply_patch",
                    "Apply a unified diff (--- a/PATH, +++ b/PATH, @@ hunks; --- /dev/null creates a file) to one or more files. A hunk applies where its context and removed lines occur exactly (the nearest to its line number); if any hunk does not match, nothing is written.",
                )
                .param("patch"),
                ActionSpec::new("list", "Sorted entry names of a folder; folders end with '/'.")
                    .param_default("path", json!(".")),
                ActionSpec::new("exists", "Whether the path exists.").param("path"),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let inner = Arc::clone(&self.inner);
        let action = action.to_owned();
        Box::pin(async move {
            // Blocking file I/O stays off the (possibly single-threaded) UI
            // runtime; a review waits for the user in between.
            let planner = Arc::clone(&inner);
            let (mut writes, shape) = match blocking(move || planner.plan(&action, &args)).await? {
                Step::Done(value) => return Ok(value),
                Step::Write(writes, shape) => (writes, shape),
            };
            if let Some(review) = &inner.review {
                // Every file is decided before any is written: a patch the
                // user refuses in part leaves the workspace as it was.
                for write in &mut writes {
                    match review.review(write.proposal()).await {
                        WriteVerdict::Write { text, rejected } => {
                            write.text = text;
                            write.rejected = rejected;
                            write.reviewed = true;
                        }
                        WriteVerdict::Deny(reason) => {
                            return Err(CapabilityError::PermissionDenied(format!(
                                "{}: write refused: {reason}; nothing was written",
                                write.user_path
                            )));
                        }
                    }
                }
            }
            let review = inner.review.clone().filter(|r| r.hears_written());
            let made: Vec<(PathBuf, Vec<u8>)> = writes
                .iter()
                .filter(|w| review.is_some() && w.reviewed)
                .map(|w| (w.path.clone(), w.text.clone()))
                .collect();
            let result = blocking(move || {
                // Every reviewed file still as it was shown, before any is
                // written: a patch is written whole or not at all.
                for write in writes.iter().filter(|w| w.reviewed) {
                    inner.still_as_reviewed(write)?;
                }
                let files = writes
                    .into_iter()
                    .map(|write| inner.commit(write))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(shape.result(files))
            })
            .await?;
            if let Some(review) = review {
                for (path, text) in made {
                    review.written(path, text).await;
                }
            }
            Ok(result)
        })
    }
}

impl FsInner {
    fn plan(&self, action: &str, args: &Value) -> Result<Step, CapabilityError> {
        let done = |value: Result<Value, CapabilityError>| value.map(Step::Done);
        match action {
            "read" => done(self.read(arg_str(args, "path")?)),
            "write" => {
                let write = self.plan_write(arg_str(args, "path")?, arg_str(args, "text")?)?;
                Ok(Step::Write(vec![write], Shape::One))
            }
            "edit" => self.edit(
                arg_str(args, "path")?,
                arg_str(args, "old")?,
                arg_str(args, "new")?,
                args.get("count").and_then(Value::as_u64).ok_or_else(|| {
                    CapabilityError::InvalidArgument("count must be a whole number ≥ 1".into())
                })?,
            ),
            "apply_patch" => self.apply_patch(arg_str(args, "patch")?),
            "list" => done(self.list(arg_str(args, "path")?)),
            "exists" => {
                let path = confine(&self.root, arg_str(args, "path")?)?;
                Ok(Step::Done(Value::Bool(path.exists())))
            }
            other => Err(CapabilityError::no_action("fs", other)),
        }
    }

    fn read(&self, user_path: &str) -> Result<Value, CapabilityError> {
        let bytes = self.read_bytes(user_path)?;
        Ok(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// The file's bytes. The path is resolved inside the workspace, then
    /// read without following any link (`read_beneath`): a folder swapped
    /// for a link after the check cannot lead the read outside.
    fn read_bytes(&self, user_path: &str) -> Result<Vec<u8>, CapabilityError> {
        let path = confine(&self.root, user_path)?;
        let relative = path
            .strip_prefix(&self.root)
            .map_err(|_| outside(user_path))?;
        match super::read_beneath(&self.root, relative, MAX_READ) {
            Ok(Found::Bytes(bytes)) => Ok(bytes),
            Ok(Found::Folder) => Err(CapabilityError::Os {
                python_type: "IsADirectoryError",
                message: format!("{user_path}: is a folder (use fs.list)"),
            }),
            Ok(Found::Special) => Err(CapabilityError::InvalidArgument(format!(
                "{user_path}: not a regular file"
            ))),
            Ok(Found::TooBig(size)) => Err(CapabilityError::InvalidArgument(format!(
                "{user_path}: {size} bytes; fs.read returns at most {MAX_READ} bytes"
            ))),
            Err(WriteError::Io(error)) => Err(CapabilityError::from_io(&error, user_path)),
            Err(_) => Err(outside(user_path)),
        }
    }

    /// The file's text for an edit: UTF-8 or refused, so an edit never
    /// rewrites bytes it could not read.
    fn read_text(&self, user_path: &str) -> Result<String, CapabilityError> {
        String::from_utf8(self.read_bytes(user_path)?).map_err(|_| {
            CapabilityError::InvalidArgument(format!(
                "{user_path}: not UTF-8 text; fs.edit and fs.apply_patch change text files only"
            ))
        })
    }

    /// Checks a write can happen and records what the file holds now;
    /// nothing is written yet.
    fn plan_write(&self, user_path: &str, text: &str) -> Result<PlannedWrite, CapabilityError> {
        let path = confine(&self.root, user_path)?;
        if super::confine::leads_through_link(&self.root, user_path) {
            return Err(CapabilityError::PermissionDenied(format!(
                "{user_path}: leads through a symlink; fs writes follow no links (write the \
                 file by its own path)"
            )));
        }
        self.refuse_dirty(&path, user_path)?;
        if path.is_dir() {
            return Err(CapabilityError::Os {
                python_type: "IsADirectoryError",
                message: format!("{user_path}: is a folder"),
            });
        }
        let relative = path
            .strip_prefix(&self.root)
            .map_err(|_| outside(user_path))?
            .to_owned();
        super::check_writable(&relative).map_err(|protected| {
            CapabilityError::PermissionDenied(format!("{user_path}: {protected}"))
        })?;
        let before = Prior::of(&self.root, &relative);
        Ok(PlannedWrite {
            path,
            relative,
            user_path: user_path.to_owned(),
            before,
            text: text.as_bytes().to_vec(),
            rejected: 0,
            reviewed: false,
        })
    }

    fn refuse_dirty(&self, path: &Path, user_path: &str) -> Result<(), CapabilityError> {
        if self.is_dirty(path) {
            return Err(CapabilityError::PermissionDenied(format!(
                "{user_path} has unsaved changes in the editor; save or discard them first"
            )));
        }
        Ok(())
    }

    /// After a review (the user took their time) the file must still hold
    /// what it held when the change was shown, and still have no unsaved
    /// edits: otherwise nothing is written.
    fn still_as_reviewed(&self, write: &PlannedWrite) -> Result<(), CapabilityError> {
        self.refuse_dirty(&write.path, &write.user_path)?;
        if Prior::of(&self.root, &write.relative) != write.before {
            return Err(CapabilityError::PermissionDenied(format!(
                "{} changed while its diff was being reviewed; nothing was written \
                 (fs.read shows its text now)",
                write.user_path
            )));
        }
        Ok(())
    }

    /// Writes a planned change (checked by [`Self::still_as_reviewed`]
    /// first when it was reviewed).
    fn commit(&self, write: PlannedWrite) -> Result<Value, CapabilityError> {
        let PlannedWrite {
            path,
            relative,
            user_path,
            before,
            text,
            rejected,
            reviewed: _,
        } = write;

        // Beneath the root, no symlink followed, a temp name nobody can
        // predict, then rename: the editor never reloads half a file.
        write_beneath(&self.root, &relative, &text).map_err(|err| match err {
            WriteError::Steered => outside(&user_path),
            protected @ WriteError::Protected(_) => {
                CapabilityError::PermissionDenied(format!("{user_path}: {protected}"))
            }
            WriteError::Io(err) => CapabilityError::from_io(&err, &user_path),
        })?;
        let after = String::from_utf8_lossy(&text);
        let (added, removed) = match &before {
            Prior::Bytes(old) => {
                crate::text_diff::counts_or_rewrite(&String::from_utf8_lossy(old), &after)
            }
            Prior::Absent => (after.lines().count(), 0),
            // Not kept: counted as a rewrite of every line.
            Prior::Unrecorded => (after.lines().count(), 0),
        };
        let mut result = json!({
            "path": relative.display().to_string(),
            "bytes": text.len(),
            "added": added,
            "removed": removed,
        });
        if rejected > 0 {
            result["rejected_hunks"] = json!(rejected);
            result["note"] = json!(format!(
                "the user rejected {rejected} hunk(s) of this change: the file holds only \
                 the accepted ones (fs.read shows it)"
            ));
        }
        if let Some(written) = &self.written {
            let _ = written.send(FsWritten {
                path,
                before,
                after: text,
            });
        }
        Ok(result)
    }

    /// A precise change: the snippet `old` becomes `new`, and only when it
    /// occurs exactly `count` times, so a model's edit never lands on the
    /// wrong one of two look-alike lines. It goes through `write`
    /// (confinement, the unsaved-edits check, no links followed, the
    /// editor told).
    fn edit(
        &self,
        user_path: &str,
        old: &str,
        new: &str,
        count: u64,
    ) -> Result<Step, CapabilityError> {
        if old.is_empty() {
            return Err(CapabilityError::InvalidArgument(
                "old is empty: give the exact text to replace".into(),
            ));
        }
        if count == 0 {
            return Err(CapabilityError::InvalidArgument(
                "count must be a whole number ≥ 1".into(),
            ));
        }
        let text = self.read_text(user_path)?;
        let found: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
        let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
        if found.is_empty() {
            return Err(CapabilityError::InvalidArgument(format!(
                "{user_path}: old text not found (it must match exactly, whitespace included); fs.read shows the current text"
            )));
        }
        if found.len() as u64 != count {
            let lines: Vec<String> = found.iter().map(|&b| line_of(b).to_string()).collect();
            return Err(CapabilityError::InvalidArgument(format!(
                "{user_path}: old text occurs {} times (lines {}), not {count}; include more of the surrounding text, or pass count={}",
                found.len(),
                lines.join(", "),
                found.len()
            )));
        }
        let first_line = line_of(found[0]);
        let edited = text.replace(old, new);
        let write = self.plan_write(user_path, &edited)?;
        Ok(Step::Write(
            vec![write],
            Shape::Edit {
                replaced: found.len(),
                line: first_line,
            },
        ))
    }

    /// A patch touching several files: every file's new text is worked out
    /// (and every unsaved-edits check made) before the first is written, so
    /// a hunk that does not match leaves the workspace as it was.
    fn apply_patch(&self, patch: &str) -> Result<Step, CapabilityError> {
        let invalid =
            |error: super::patch::PatchError| CapabilityError::InvalidArgument(error.to_string());
        let mut planned: Vec<(PathBuf, String, String)> = Vec::new();
        for file in super::patch::parse(patch).map_err(invalid)? {
            let path = confine(&self.root, &file.path)?;
            if let Ok(relative) = path.strip_prefix(&self.root) {
                super::check_writable(relative).map_err(|protected| {
                    CapabilityError::PermissionDenied(format!("{}: {protected}", file.path))
                })?;
            }
            // A file named twice (or as `f` and `./f`): the later section
            // applies to what the earlier one made.
            if let Some(entry) = planned.iter_mut().find(|(p, ..)| *p == path) {
                entry.2 = file.apply(&entry.2).map_err(invalid)?;
                continue;
            }
            let current = if file.creates {
                if path.exists() {
                    return Err(CapabilityError::InvalidArgument(format!(
                        "{}: the patch creates it (--- /dev/null), but it exists",
                        file.path
                    )));
                }
                String::new()
            } else {
                self.read_text(&file.path)?
            };
            self.refuse_dirty(&path, &file.path)?;
            let text = file.apply(&current).map_err(invalid)?;
            planned.push((path, file.path.clone(), text));
        }
        let writes = planned
            .into_iter()
            .map(|(_, user_path, text)| self.plan_write(&user_path, &text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Step::Write(writes, Shape::Patch))
    }

    fn list(&self, user_path: &str) -> Result<Value, CapabilityError> {
        let path = confine(&self.root, user_path)?;
        let io_err = |err: std::io::Error| CapabilityError::from_io(&err, user_path);
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&path).map_err(io_err)? {
            let entry = entry.map_err(io_err)?;
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        Ok(json!(names))
    }

    fn is_dirty(&self, target: &Path) -> bool {
        let Some(dirty) = &self.dirty else {
            return false;
        };
        let dirty = dirty.borrow().clone();
        dirty.iter().any(|p| {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                self.root.join(p)
            };
            abs == target || abs.canonicalize().is_ok_and(|real| real == target)
        })
    }
}

/// What planning a call came to: an answer, or writes to make (after a
/// review, when there is one).
enum Step {
    Done(Value),
    Write(Vec<PlannedWrite>, Shape),
}

/// How the written files' results make the call's result.
enum Shape {
    /// `fs.write`: the one file's result.
    One,
    /// `fs.edit`: the file's result, plus how many and where.
    Edit { replaced: usize, line: usize },
    /// `fs.apply_patch`: `{"files": [...]}`.
    Patch,
}

impl Shape {
    fn result(self, mut files: Vec<Value>) -> Value {
        match self {
            Shape::One => files.pop().unwrap_or(Value::Null),
            Shape::Edit { replaced, line } => {
                let mut result = files.pop().unwrap_or(Value::Null);
                result["replaced"] = json!(replaced);
                result["line"] = json!(line);
                result
            }
            Shape::Patch => json!({ "files": files }),
        }
    }
}

/// One file's write, checked and waiting to be made.
struct PlannedWrite {
    path: PathBuf,
    relative: PathBuf,
    /// As the cell spelled it (errors and review name it so).
    user_path: String,
    before: Prior,
    text: Vec<u8>,
    /// Hunks the review rejected (the text holds only the accepted ones).
    rejected: usize,
    reviewed: bool,
}

impl PlannedWrite {
    fn proposal(&self) -> WriteProposal {
        WriteProposal {
            path: self.path.clone(),
            user_path: self.user_path.clone(),
            before: self.before.clone(),
            after: self.text.clone(),
        }
    }
}

/// Runs blocking file work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, CapabilityError> + Send + 'static,
) -> Result<T, CapabilityError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|err| Err(CapabilityError::Failed(format!("fs task failed: {err}"))))
}

fn outside(user_path: &str) -> CapabilityError {
    CapabilityError::PermissionDenied(format!(
        "{user_path}: leads through a symlink or out of the workspace; fs.write follows no links"
    ))
}

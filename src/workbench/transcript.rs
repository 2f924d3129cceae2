//! The conversation as the user reads it: messages, cells and notices,
//! each entry with a stable id and a revision.
//!
//! Entries are only appended, and every change to one goes through
//! [`Transcript::edit`], which bumps its revision. That is what lets the
//! pane cache each entry's laid-out lines (Markdown, highlighted code) and
//! lay out again only what changed: a frame costs the same at 2 000 entries
//! as at 10.

use std::ops::Index;
use std::path::PathBuf;

/// Who said a message in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
    Tool,
    /// The model's reasoning (`reasoning_content`, `<think>`, Anthropic's
    /// thinking blocks): shown dimmed and collapsed, never the answer.
    Thinking,
    /// A message from hello-tui itself (configuration hints, errors).
    Notice,
}

impl Speaker {
    pub fn label(self) -> &'static str {
        match self {
            Speaker::User => "you",
            Speaker::Assistant => "assistant",
            Speaker::Tool => "tool",
            Speaker::Thinking => "thinking",
            Speaker::Notice => "hello-tui",
        }
    }
}

/// One entry of the conversation pane: a view of a conversation message
/// (tied to it by `message`), a `%py` cell or a notice. Tool entries carry
/// the code cell that ran and its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneEntry {
    pub role: Speaker,
    pub text: String,
    pub cell: Option<CellView>,
    /// The conversation message this entry shows, once the conversation
    /// has stored it (`None` for notices, `%py` cells, and until then): how
    /// search hits find their entry.
    pub message: Option<crate::context::MessageId>,
}

impl PaneEntry {
    pub fn new(role: Speaker, text: impl Into<String>) -> Self {
        Self {
            role,
            text: text.into(),
            cell: None,
            message: None,
        }
    }

    /// A code cell that is about to run; `text` collects its output.
    pub fn cell(id: u64, code: impl Into<String>) -> Self {
        Self {
            role: Speaker::Tool,
            text: String::new(),
            cell: Some(CellView {
                id,
                code: code.into(),
                status: CellStatus::Running,
                changes: Vec::new(),
                subcalls: Vec::new(),
            }),
            message: None,
        }
    }
}

/// How a code cell ended (or that it is still running).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellStatus {
    Running,
    /// `duration_ms`: its run time, without `waited_ms`, the time it sat
    /// blocked on the user's answer to a question it asked (a write to
    /// review). `None`: not known (a session written before run times
    /// were kept).
    Succeeded {
        duration_ms: Option<u64>,
        waited_ms: u64,
    },
    Failed {
        summary: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellView {
    /// The kernel service's cell id, so streamed output finds its cell.
    pub id: u64,
    pub code: String,
    pub status: CellStatus,
    /// The files it changed through `fs.write`/`fs.edit`, shown as diffs
    /// under its output.
    pub changes: Vec<CellChange>,
    /// The `llm_query` sub-calls it made, in the order they started.
    pub subcalls: Vec<SubcallView>,
}

/// One sub-call of a cell as the conversation shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubcallView {
    pub id: u64,
    pub kind: crate::subcalls::SubcallKind,
    pub model: String,
    /// The start of the prompt as sent (redacted) and its full length.
    pub prompt_head: String,
    pub prompt_chars: usize,
    /// `None` while it runs.
    pub status: Option<crate::subcalls::SubcallStatus>,
    pub answer_head: String,
    pub answer_chars: usize,
    pub tokens: u64,
    pub elapsed_ms: u64,
    pub error: Option<String>,
}

/// One file a cell changed: the diff from what it held before the cell's
/// first write to it, to what its last write left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellChange {
    pub path: PathBuf,
    /// The path as the user reads it (workspace-relative).
    pub shown: String,
    /// What the file held before the cell first wrote it (`None`: there
    /// was no file, or it was too big to keep).
    pub before: Option<String>,
    /// The unified diff, without its `---`/`+++` header.
    pub diff: String,
    pub added: usize,
    pub removed: usize,
    /// What the file held before is not known (a command changed it, or
    /// it was too big to keep): no diff or counts can be shown.
    pub earlier_unknown: bool,
}

impl CellChange {
    /// A change whose earlier text is not known.
    pub(crate) fn earlier_unknown(path: PathBuf, shown: String) -> Self {
        Self {
            path,
            shown,
            before: None,
            diff: String::new(),
            added: 0,
            removed: 0,
            earlier_unknown: true,
        }
    }

    /// The change from `before` to `after`.
    pub fn new(path: PathBuf, shown: String, before: Option<String>, after: &str) -> Self {
        let old = before.as_deref().unwrap_or("");
        let (added, removed) = crate::text_diff::counts_or_rewrite(old, after);
        let small = crate::text_diff::small_enough(old, after);
        let diff = if small {
            crate::text_diff::unified(old, after, None, 1)
        } else {
            // Too big to diff on the UI loop.
            "@@ too big to show as a diff here: git diff shows it @@\n".to_owned()
        };
        // Only a small text is kept for the next write's diff: a cell that
        // rewrites many big files must not pile them up in the pane.
        let before = before.filter(|_| small);
        Self {
            path,
            shown,
            before,
            diff,
            added,
            removed,
            earlier_unknown: false,
        }
    }
}

/// Diff text a session keeps per changed file; a longer diff is cut at a
/// line, with a note (the cell shows it whole until the workbench quits).
const MAX_RECORDED_DIFF: usize = 256 << 10;

impl CellChange {
    /// What the session keeps of it (see `session::ChangeRecord`).
    pub(crate) fn record(&self) -> crate::session::ChangeRecord {
        let diff = if self.diff.len() <= MAX_RECORDED_DIFF {
            self.diff.clone()
        } else {
            let mut end = MAX_RECORDED_DIFF;
            while !self.diff.is_char_boundary(end) {
                end -= 1;
            }
            let cut = self.diff[..end].rfind('\n').map_or(0, |i| i + 1);
            format!(
                "{}@@ the rest of this diff was not kept with the session: git diff shows it @@\n",
                &self.diff[..cut]
            )
        };
        crate::session::ChangeRecord {
            path: self.shown.clone(),
            diff,
            added: self.added,
            removed: self.removed,
            earlier_unknown: self.earlier_unknown,
        }
    }
}

/// A change as a resumed session recorded it. Its path is only what was
/// shown: the session file is untrusted, so the change names no file the
/// workbench would open or write.
impl From<&crate::session::ChangeRecord> for CellChange {
    fn from(record: &crate::session::ChangeRecord) -> Self {
        Self {
            path: PathBuf::new(),
            shown: record.path.clone(),
            before: None,
            diff: record.diff.clone(),
            added: record.added,
            removed: record.removed,
            earlier_unknown: record.earlier_unknown,
        }
    }
}

/// Identifies an entry for as long as the workbench runs: ids come from one
/// counter for the process, so a replaced transcript never reuses one (a
/// layout cached for an old entry can never be taken for a new one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryId(pub u64);

/// One entry of the conversation and how often it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: EntryId,
    /// Bumped by every edit; a cached layout of an older revision is stale.
    pub revision: u64,
    pub message: PaneEntry,
}

/// The conversation as the pane shows it: append-only, indexable.
#[derive(Debug, Default)]
pub struct Transcript {
    entries: Vec<Entry>,
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a message; returns its id.
    pub fn push(&mut self, message: PaneEntry) -> EntryId {
        let id = EntryId(NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        self.entries.push(Entry {
            id,
            revision: 0,
            message,
        });
        id
    }

    /// The message at `index`, to change it (its revision is bumped).
    pub fn edit(&mut self, index: usize) -> Option<&mut PaneEntry> {
        let entry = self.entries.get_mut(index)?;
        entry.revision += 1;
        Some(&mut entry.message)
    }

    /// The newest entry whose message satisfies `matches`, to change it.
    pub(crate) fn edit_last_where(
        &mut self,
        matches: impl Fn(&PaneEntry) -> bool,
    ) -> Option<&mut PaneEntry> {
        let index = self.entries.iter().rposition(|e| matches(&e.message))?;
        self.edit(index)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&PaneEntry> {
        self.entries.get(index).map(|e| &e.message)
    }

    pub fn last(&self) -> Option<&PaneEntry> {
        self.entries.last().map(|e| &e.message)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &PaneEntry> + ExactSizeIterator {
        self.entries.iter().map(|e| &e.message)
    }

    /// The entries with their ids and revisions (for layout caches).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }
}

impl Index<usize> for Transcript {
    type Output = PaneEntry;

    fn index(&self, index: usize) -> &PaneEntry {
        &self.entries[index].message
    }
}

impl Extend<PaneEntry> for Transcript {
    fn extend<I: IntoIterator<Item = PaneEntry>>(&mut self, messages: I) {
        for message in messages {
            self.push(message);
        }
    }
}

impl From<Vec<PaneEntry>> for Transcript {
    fn from(messages: Vec<PaneEntry>) -> Self {
        let mut transcript = Self::new();
        transcript.extend(messages);
        transcript
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::transcript::Speaker;

    #[test]
    fn ids_are_stable_and_edits_bump_only_their_entry() {
        let mut t = Transcript::new();
        let a = t.push(PaneEntry::new(Speaker::User, "a"));
        let b = t.push(PaneEntry::new(Speaker::Assistant, "b"));
        assert_ne!(a, b);
        if let Some(m) = t.edit(1) {
            m.text.push('!');
        }
        assert_eq!(t[1].text, "b!");
        assert_eq!(t.entries()[0].revision, 0);
        assert_eq!(t.entries()[1].revision, 1);
        assert_eq!(t.entries()[1].id, b);
        assert!(t.edit(2).is_none());
    }

    #[test]
    fn edit_last_where_finds_the_newest_match() {
        let mut t = Transcript::from(vec![
            PaneEntry::new(Speaker::Tool, "first"),
            PaneEntry::new(Speaker::Tool, "second"),
            PaneEntry::new(Speaker::User, "third"),
        ]);
        let found = t.edit_last_where(|m| m.role == Speaker::Tool);
        assert_eq!(found.map(|m| m.text.clone()), Some("second".into()));
        assert_eq!(t.entries()[1].revision, 1);
        assert_eq!(t.entries()[0].revision, 0);
    }
}

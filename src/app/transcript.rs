//! The conversation pane's entries, each with a stable id and a revision.
//!
//! Entries are only appended, and every change to one goes through
//! [`Transcript::edit`], which bumps its revision. That is what lets the
//! pane cache each entry's laid-out lines (Markdown, highlighted code) and
//! lay out again only what changed: a frame costs the same at 2 000 entries
//! as at 10.

use std::ops::Index;

use super::state::PaneEntry;

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
    pub fn edit_last_where(
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
    use crate::app::state::Speaker;

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

//! What the user sent from the composer, recalled with ↑/↓ as a shell
//! does, and kept per workspace in `.hello-tui/prompt-history.jsonl` (one
//! JSON string per line, the newest last), so it survives a restart.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Entries kept (in memory and on disk, where older lines are dropped
/// when the file is rewritten at start).
const MAX_ENTRIES: usize = 500;

/// Largest entry kept: a pasted log is not worth recalling.
const MAX_ENTRY_BYTES: usize = 64 << 10;

#[derive(Debug, Default)]
pub struct PromptHistory {
    entries: Vec<String>,
    /// The entry shown while recalling (`None`: the user's own text).
    at: Option<usize>,
    /// What the composer held before the first ↑, given back by ↓ past
    /// the newest entry.
    draft: String,
    file: Option<PathBuf>,
}

impl PromptHistory {
    /// The workspace's history (empty when there is none or it cannot be
    /// read; a line that is not a JSON string is skipped).
    pub fn load(workspace: &Path) -> Self {
        let file = crate::session::sessions_dir(workspace)
            .parent()
            .map(|own| own.join("prompt-history.jsonl"));
        let mut entries: Vec<String> = file
            .as_deref()
            // A link (a repository can ship one) is not read.
            .filter(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()))
            .and_then(|path| std::fs::read_to_string(path).ok())
            .map(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str::<String>(line).ok())
                    .collect()
            })
            .unwrap_or_default();
        let excess = entries.len().saturating_sub(MAX_ENTRIES);
        entries.drain(..excess);
        Self {
            entries,
            at: None,
            draft: String::new(),
            file,
        }
    }

    /// A submission joins the history (not a repeat of the newest) and is
    /// appended to the file. Recall starts over from the newest.
    pub fn record(&mut self, text: &str) {
        self.at = None;
        self.draft.clear();
        if text.trim().is_empty()
            || text.len() > MAX_ENTRY_BYTES
            || self.entries.last().is_some_and(|last| last == text)
        {
            return;
        }
        self.entries.push(text.to_owned());
        let excess = self.entries.len().saturating_sub(MAX_ENTRIES);
        self.entries.drain(..excess);
        if let Err(error) = self.append(text) {
            tracing::warn!(%error, "the prompt history is not saved");
        }
    }

    fn append(&self, text: &str) -> std::io::Result<()> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        // Only into a real `.hello-tui` folder (never through a link).
        let Some(own) = path.parent() else {
            return Ok(());
        };
        if let Some(workspace) = own.parent() {
            crate::session::workbench_dir(workspace)?;
        }
        let mut line = serde_json::to_string(text).map_err(std::io::Error::other)?;
        line.push('\n');
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            // A planted link would have prompts appended to its target.
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?
            .write_all(line.as_bytes())
    }

    /// ↑: the entry before the one shown (the newest first), keeping
    /// `current` as the draft when recall starts. `None` at the oldest.
    pub fn earlier(&mut self, current: &str) -> Option<&str> {
        let next = match self.at {
            None => {
                self.draft = current.to_owned();
                self.entries.len().checked_sub(1)?
            }
            Some(0) => return None,
            Some(at) => at - 1,
        };
        self.at = Some(next);
        self.entries.get(next).map(String::as_str)
    }

    /// ↓: the entry after the one shown, then the draft. `None` when not
    /// recalling.
    pub fn later(&mut self) -> Option<&str> {
        let at = self.at?;
        if at + 1 < self.entries.len() {
            self.at = Some(at + 1);
            return self.entries.get(at + 1).map(String::as_str);
        }
        self.at = None;
        Some(&self.draft)
    }

    /// Whether ↑ has put an earlier entry in the composer (and the user has
    /// not changed it since).
    pub(crate) fn recalling(&self) -> bool {
        self.at.is_some()
    }

    /// The user changed the recalled text: it is theirs now.
    pub(crate) fn stop_recalling(&mut self) {
        self.at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_walks_back_and_returns_to_the_draft_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let mut history = PromptHistory::load(dir.path());
        for text in ["first", "second", "second", "%py x = 1\nprint(x)"] {
            history.record(text);
        }
        assert_eq!(history.earlier("half typed"), Some("%py x = 1\nprint(x)"));
        assert_eq!(history.earlier(""), Some("second"), "a repeat is kept once");
        assert_eq!(history.earlier(""), Some("first"));
        assert_eq!(history.earlier(""), None, "the oldest");
        assert_eq!(history.later(), Some("second"));
        assert_eq!(history.later(), Some("%py x = 1\nprint(x)"));
        assert_eq!(history.later(), Some("half typed"), "the draft comes back");
        assert_eq!(history.later(), None);

        let mut again = PromptHistory::load(dir.path());
        assert_eq!(again.earlier(""), Some("%py x = 1\nprint(x)"));
        assert_eq!(again.earlier(""), Some("second"));
    }

    #[test]
    fn a_bad_line_is_skipped_and_a_linked_folder_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join(".hello-tui");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("prompt-history.jsonl"), "\"ok\"\nnot json\n").unwrap();
        let mut history = PromptHistory::load(dir.path());
        assert_eq!(history.earlier(""), Some("ok"));
        assert_eq!(history.earlier(""), None);

        let elsewhere = tempfile::tempdir().unwrap();
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), linked.path().join(".hello-tui")).unwrap();
        let mut history = PromptHistory::load(linked.path());
        history.record("secret plan");
        assert!(!elsewhere.path().join("prompt-history.jsonl").exists());

        // A history file that is a link to something else is neither read
        // nor appended to.
        let target = dir.path().join("bashrc");
        std::fs::write(&target, "\"from the target\"\n").unwrap();
        std::fs::remove_file(own.join("prompt-history.jsonl")).unwrap();
        std::os::unix::fs::symlink(&target, own.join("prompt-history.jsonl")).unwrap();
        let mut history = PromptHistory::load(dir.path());
        assert_eq!(history.earlier(""), None);
        history.record("appended?");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "\"from the target\"\n"
        );
    }
}

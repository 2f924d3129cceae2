//! Who sees a write before it reaches the disk. In `ask` mode the user
//! approves a write's whole diff; in `review` mode they accept or reject
//! it hunk by hunk, and only the accepted hunks are written. The `fs`
//! capability asks before writing and writes what the verdict holds.

use std::path::PathBuf;

use futures_util::future::BoxFuture;

use super::fs::Prior;

/// A write `fs` is about to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteProposal {
    /// Absolute, resolved inside the workspace.
    pub path: PathBuf,
    /// As the cell spelled it.
    pub user_path: String,
    pub before: Prior,
    pub after: Vec<u8>,
}

/// What to do with a proposed write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteVerdict {
    /// Write `text`: the proposal's, or (reviewed per hunk) the file with
    /// only the accepted hunks applied, `rejected` of them left out.
    Write { text: Vec<u8>, rejected: usize },
    /// Write nothing; the reason reaches the cell in a `PermissionError`.
    Deny(String),
}

pub trait WriteReview: Send + Sync + 'static {
    fn review(&self, proposal: WriteProposal) -> BoxFuture<'static, WriteVerdict>;

    /// Whether [`WriteReview::written`] wants to hear of writes (the
    /// texts are kept for it only then).
    fn hears_written(&self) -> bool {
        false
    }

    /// `text` was written to `path` (`PostToolUse` hooks hear of it);
    /// nothing by default.
    fn written(&self, _path: PathBuf, _text: Vec<u8>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

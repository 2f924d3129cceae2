//! Paths the watcher saw disappear this session. A file a cell writes or
//! makes where one was removed before is not new: it may hold the user's
//! text, deleted and written back identically, and `/undo` must not delete
//! it as if the cell had created it from nothing (issue 25, route 19).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Most paths remembered; past it every path counts as possibly removed
/// (fail closed: `/undo` then removes no created file).
const MAX_PATHS: usize = 100_000;

#[derive(Debug, Default)]
pub(crate) struct Vanished {
    paths: HashSet<PathBuf>,
    overflowed: bool,
}

impl Vanished {
    /// The watcher reported `path` gone (removed, or renamed away).
    pub fn note(&mut self, path: &Path) {
        if self.paths.len() >= MAX_PATHS {
            self.overflowed = true;
        } else {
            self.paths.insert(path.to_owned());
        }
    }

    /// Whether a file at `path` may have been removed this session.
    pub(crate) fn may_have_been_there(&self, path: &Path) -> bool {
        self.overflowed || self.paths.contains(path)
    }
}

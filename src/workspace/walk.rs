//! One place that decides which files belong to the workspace, so the index,
//! the watcher and the contents search never disagree about it.

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` that honours `.gitignore` (even outside a git
/// repository, which is what users expect of an editor), `.ignore`, git's
/// `info/exclude` and global excludes, and skips hidden files and `.git/`.
pub(crate) fn workspace_walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// `path` relative to `root`, with `/` separators, or `None` when it is
/// outside the root or not valid UTF-8 (such names cannot be typed into the
/// picker and are left out of the index).
pub(crate) fn relative_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for (i, part) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(part.as_os_str().to_str()?);
    }
    if out.is_empty() { None } else { Some(out) }
}

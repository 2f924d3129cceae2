//! The watcher's view of the ignore rules: the same files the walker reads
//! (`.ignore`, `.gitignore` in every directory up to the repository root,
//! `.git/info/exclude`, the global excludes file), the same hidden-file rule,
//! checked one event path at a time.
//!
//! Matchers are loaded lazily per directory and cached; a change to a
//! `.gitignore` or `.ignore` drops that directory's entry.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The rules found in one directory, in precedence order.
struct DirRules {
    dot_ignore: Gitignore,
    gitignore: Gitignore,
}

pub(crate) struct IgnoreRules {
    root: PathBuf,
    /// The repository root when the workspace is inside git, else the root;
    /// `.gitignore` files between it and the root apply too.
    top: PathBuf,
    exclude: Gitignore,
    global: Gitignore,
    dirs: HashMap<PathBuf, DirRules>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        let top = root
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(root)
            .to_path_buf();
        let exclude = load(&top, &[top.join(".git/info/exclude")]);
        let (global, _) = Gitignore::global();
        Self {
            root: root.to_path_buf(),
            top,
            exclude,
            global,
            dirs: HashMap::new(),
        }
    }

    /// Whether events for `path` should be dropped. `is_dir` matters for
    /// patterns such as `build/`.
    pub(crate) fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return true;
        };
        if rel.as_os_str().is_empty() {
            return false;
        }
        let hidden = rel
            .components()
            .any(|c| c.as_os_str().to_str().is_none_or(|s| s.starts_with('.')));
        if hidden {
            return true;
        }
        let Some(parent) = path.parent() else {
            return false;
        };
        for dir in parent.ancestors() {
            if !dir.starts_with(&self.top) {
                break;
            }
            let Ok(below) = path.strip_prefix(dir) else {
                break;
            };
            let rules = self.rules_for(dir);
            for matcher in [&rules.dot_ignore, &rules.gitignore] {
                match matcher.matched_path_or_any_parents(below, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
        }
        let Ok(from_top) = path.strip_prefix(&self.top) else {
            return false;
        };
        for matcher in [&self.exclude, &self.global] {
            match matcher.matched_path_or_any_parents(from_top, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// Call for every event path: when it is an ignore file, the cached rules
    /// of its directory are stale. Returns true if so.
    pub(crate) fn note_change(&mut self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str());
        if !matches!(name, Some(".gitignore" | ".ignore")) {
            return false;
        }
        if let Some(dir) = path.parent() {
            self.dirs.remove(dir);
        }
        true
    }

    fn rules_for(&mut self, dir: &Path) -> &DirRules {
        self.dirs
            .entry(dir.to_path_buf())
            .or_insert_with(|| DirRules {
                dot_ignore: load(dir, &[dir.join(".ignore")]),
                gitignore: load(dir, &[dir.join(".gitignore")]),
            })
    }
}

/// A matcher from the given files; missing or unreadable files give an empty
/// matcher (the walker treats them the same way).
fn load(dir: &Path, files: &[PathBuf]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for file in files {
        if file.is_file() {
            any |= builder.add(file).is_none();
        }
    }
    if !any {
        return Gitignore::empty();
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_rules_hidden_files_and_whitelists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!keep.log\nlocal.txt\n").unwrap();
        let mut rules = IgnoreRules::new(&root);
        assert!(rules.is_ignored(&root.join("a.log"), false));
        assert!(rules.is_ignored(&root.join("build/x/y.o"), false));
        assert!(rules.is_ignored(&root.join(".hidden"), false));
        assert!(rules.is_ignored(&root.join(".git/index"), false));
        assert!(rules.is_ignored(&root.join("sub/local.txt"), false));
        assert!(!rules.is_ignored(&root.join("sub/keep.log"), false));
        assert!(!rules.is_ignored(&root.join("src/main.rs"), false));
        assert!(rules.is_ignored(Path::new("/elsewhere/file"), false));

        std::fs::write(root.join(".gitignore"), "").unwrap();
        assert!(rules.note_change(&root.join(".gitignore")));
        assert!(!rules.is_ignored(&root.join("a.log"), false));
    }
}

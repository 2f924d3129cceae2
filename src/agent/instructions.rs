//! Project instructions: the `AGENTS.md` files of the workspace (falling
//! back to `CLAUDE.md` in a folder without one), as Codex and Claude Code
//! read them — the root's, then each folder's on the way down to the
//! active file, nearest last — capped at 32 KiB (as Codex caps them) and
//! sent in the system prompt under "Project instructions". Read again at
//! every turn, so a change on disk applies to the next one.

use std::path::{Path, PathBuf};

/// The most instruction text sent (the nearest files are kept whole).
pub(crate) const MAX_INSTRUCTIONS: usize = 32 << 10;

/// The heading the instructions go under in the system prompt.
pub(crate) const HEADING: &str = "## Project instructions";

/// File names read in each folder, the first present wins.
pub(crate) const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInstructions {
    /// The block for the system prompt, heading included.
    pub text: String,
    /// The files it holds, relative to the workspace, root first.
    pub files: Vec<PathBuf>,
    /// Earlier (root-most) text was cut to stay within the cap.
    pub truncated: bool,
}

/// The instructions for work in `root` around `active` (a file, when one
/// is open); `None` when no folder on the way has one.
pub fn load(root: &Path, active: Option<&Path>) -> Option<ProjectInstructions> {
    let mut parts = Vec::new();
    let mut files = Vec::new();
    for dir in folders(root, active) {
        let Some((path, text)) = read_in(&dir) else {
            continue;
        };
        let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        parts.push(format!("### {}\n\n{}", relative.display(), text.trim()));
        files.push(relative);
    }
    if parts.is_empty() {
        return None;
    }
    let mut body = parts.join("\n\n");
    let truncated = body.len() > MAX_INSTRUCTIONS;
    if truncated {
        // Keep the end: the nearest files are the most specific.
        let mut cut = body.len() - MAX_INSTRUCTIONS;
        while !body.is_char_boundary(cut) {
            cut += 1;
        }
        body = format!(
            "[… earlier instructions cut: {} KiB at most are sent]\n{}",
            MAX_INSTRUCTIONS >> 10,
            &body[cut..]
        );
    }
    Some(ProjectInstructions {
        text: format!(
            "{HEADING}\n\nThe project's instruction files (the nearest folder's last; it \
             wins where they differ). Follow them.\n\n{body}"
        ),
        files,
        truncated,
    })
}

/// `root`, then every folder between it and `active`'s, in order.
fn folders(root: &Path, active: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_path_buf()];
    let Some(parent) = active.and_then(Path::parent) else {
        return dirs;
    };
    let Ok(below) = parent.strip_prefix(root) else {
        return dirs;
    };
    let mut dir = root.to_path_buf();
    for part in below.components() {
        if let std::path::Component::Normal(name) = part {
            dir.push(name);
            dirs.push(dir.clone());
        }
    }
    dirs
}

/// A folder's instruction file and its text (at most the cap of it). A
/// link is not followed (it could point anywhere, and the text goes to the
/// model), nor is a file that is not UTF-8.
fn read_in(dir: &Path) -> Option<(PathBuf, String)> {
    FILE_NAMES.iter().find_map(|name| {
        let path = dir.join(name);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let text = match String::from_utf8(read_capped(&path)?) {
            Ok(text) => text,
            // Cut inside a character by the cap: keep what is whole.
            Err(error) if error.utf8_error().error_len().is_none() => {
                let whole = error.utf8_error().valid_up_to();
                let mut bytes = error.into_bytes();
                bytes.truncate(whole);
                String::from_utf8(bytes).ok()?
            }
            Err(_) => return None,
        };
        Some((path, text))
    })
}

/// The file's first bytes, opened without following a link or waiting on
/// a FIFO (swapped in after the check above), and only if it is a plain
/// file.
fn read_capped(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_INSTRUCTIONS as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_then_nearer_folders_agents_md_before_claude_md() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/auth")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "Use tabs.\n").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "not read: AGENTS.md wins\n").unwrap();
        std::fs::write(root.join("src/CLAUDE.md"), "Run pytest.\n").unwrap();
        std::fs::write(root.join("src/auth/AGENTS.md"), "Never log tokens.\n").unwrap();
        let active = root.join("src/auth/login.py");
        let got = load(root, Some(&active)).unwrap();
        assert_eq!(
            got.files,
            [
                PathBuf::from("AGENTS.md"),
                PathBuf::from("src/CLAUDE.md"),
                PathBuf::from("src/auth/AGENTS.md")
            ]
        );
        let (tabs, pytest, tokens) = (
            got.text.find("Use tabs.").unwrap(),
            got.text.find("Run pytest.").unwrap(),
            got.text.find("Never log tokens.").unwrap(),
        );
        assert!(tabs < pytest && pytest < tokens, "nearest last");
        assert!(got.text.starts_with(HEADING));
        assert!(!got.text.contains("not read"));
        // Without an active file only the root's is read; a file outside
        // the workspace adds nothing.
        assert_eq!(
            load(root, None).unwrap().files,
            [PathBuf::from("AGENTS.md")]
        );
        assert_eq!(
            load(root, Some(Path::new("/elsewhere/x.py")))
                .unwrap()
                .files
                .len(),
            1
        );
        assert_eq!(load(&root.join("src/auth/none"), None), None);
    }

    #[test]
    fn the_cap_keeps_the_nearest_text_and_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "é".repeat(MAX_INSTRUCTIONS)).unwrap();
        std::fs::write(root.join("pkg/AGENTS.md"), "nearest rule\n").unwrap();
        let got = load(root, Some(&root.join("pkg/mod.rs"))).unwrap();
        assert!(got.truncated);
        assert!(got.text.contains("nearest rule"));
        assert!(got.text.contains("earlier instructions cut"));
        assert!(got.text.len() < MAX_INSTRUCTIONS + 1024);

        let secret = dir.path().join("secret.txt");
        std::fs::write(&secret, "API_KEY=123").unwrap();
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&secret, linked.path().join("AGENTS.md")).unwrap();
        assert_eq!(load(linked.path(), None), None, "a link is not read");
    }
}

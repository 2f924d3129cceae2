//! The snapshot's privacy rules applied to sub-call prompts: a prompt that
//! carries text of a secrets file (`.env`, keys, credentials: the files
//! whose content a snapshot withholds) is refused before it is sent.
//!
//! A prompt is free text, so the rule works on content: the workspace's
//! withheld files are read (a shallow walk, small files only) and a prompt
//! holding one of their lines, or the value of one of their `KEY=value`
//! lines, is refused. What is short or a comment is not matched, so
//! ordinary text never trips it. The API keys this process holds are
//! redacted separately (`redact_known`), whatever file they came from.

use std::collections::BTreeSet;
use std::path::Path;

use crate::kernel::CapabilityError;
use crate::kernel::caps::{Found, read_beneath};
use crate::snapshot::PrivacyRules;

/// Secrets files deeper than this are not looked for.
const MAX_DEPTH: usize = 4;
/// Bigger "secrets" are not secrets files (a `.key` that is a data file).
const MAX_FILE: u64 = 256 << 10;
/// Shorter fragments are too common to mean anything.
const MIN_FRAGMENT: usize = 12;
/// Folders never searched: dependencies and build output.
const SKIPPED: [&str; 8] = [
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    "dist",
    "build",
];

/// The fragments of the workspace's secrets files, by file.
#[derive(Debug, Default)]
pub(super) struct SecretFiles {
    fragments: Vec<(String, BTreeSet<String>)>,
}

impl SecretFiles {
    /// Reads the secrets files under `root` (as the snapshot's default
    /// rules name them).
    pub fn scan(root: &Path) -> Self {
        let rules = PrivacyRules::default();
        let mut fragments = Vec::new();
        let walker = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .follow_links(false)
            .max_depth(Some(MAX_DEPTH))
            .filter_entry(|entry| {
                !SKIPPED
                    .iter()
                    .any(|skip| entry.file_name() == std::ffi::OsStr::new(skip))
            })
            .build();
        for entry in walker.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(root) else {
                continue;
            };
            let shown = relative.to_string_lossy().into_owned();
            if !rules.is_withheld(&shown) {
                continue;
            }
            if let Ok(Found::Bytes(bytes)) = read_beneath(root, relative, MAX_FILE) {
                let found = fragments_of(&String::from_utf8_lossy(&bytes));
                if !found.is_empty() {
                    fragments.push((shown, found));
                }
            }
        }
        Self { fragments }
    }

    /// Refuses `prompt` when it holds text of a secrets file.
    pub fn check(&self, prompt: &str) -> Result<(), CapabilityError> {
        for (file, fragments) in &self.fragments {
            if fragments.iter().any(|f| prompt.contains(f.as_str())) {
                return Err(CapabilityError::PermissionDenied(format!(
                    "the prompt holds text of {file}, a secrets file whose content the \
                     snapshot's privacy rules withhold; nothing was sent"
                )));
            }
        }
        Ok(())
    }
}

/// Each long enough line, and the value of each `KEY=value` / `key: value`
/// line, comments left out.
fn fragments_of(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        if line.chars().count() >= MIN_FRAGMENT {
            out.insert(line.to_owned());
        }
        if let Some((_, value)) = line.split_once(['=', ':']) {
            let value = value.trim().trim_matches(['"', '\'']);
            if value.chars().count() >= MIN_FRAGMENT {
                out.insert(value.to_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_holding_a_secrets_files_line_or_value_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".env"),
            "# local settings for the database\nDB_PASSWORD=\"hunter2-but-longer\"\nDEBUG=1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("deploy")).unwrap();
        std::fs::write(
            dir.path().join("deploy/id_ed25519"),
            "AAAAC3NzaC1lZDI1NTE5AAAA\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.md"), "DB_PASSWORD is in .env\n").unwrap();
        let secrets = SecretFiles::scan(dir.path());
        assert!(
            secrets
                .check("summarise: the value is hunter2-but-longer")
                .is_err()
        );
        let err = secrets.check("key AAAAC3NzaC1lZDI1NTE5AAAA").unwrap_err();
        assert!(err.to_string().contains("deploy/id_ed25519"), "{err}");
        assert!(secrets.check("DB_PASSWORD is in .env; DEBUG=1").is_ok());
        assert!(
            secrets.check("local settings for the database").is_ok(),
            "comments are not secrets"
        );
    }
}

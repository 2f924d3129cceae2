//! Files whose contents must never leave the machine by accident: they are
//! skipped by the contents search (and should be by anything that sends text
//! to a model) unless the user asks for them explicitly.

use std::path::Path;

/// Exact file names that hold credentials.
const SENSITIVE_NAMES: &[&str] = &[
    "credentials.json",
    "credentials",
    ".npmrc",
    ".netrc",
    "_netrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "secrets.json",
    "secrets.yaml",
    "secrets.yml",
    "service-account.json",
];

/// File name extensions of keys and certificates' private halves.
const SENSITIVE_EXTENSIONS: &[&str] =
    &["pem", "key", "p12", "pfx", "jks", "keystore", "asc", "gpg"];

/// Prefixes of file names that are secrets whatever follows (`.env.local`,
/// `id_rsa.pub` is public but harmless to skip, `id_ed25519`, …).
const SENSITIVE_PREFIXES: &[&str] = &[".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];

/// True when the file at `path` probably holds a secret, judged by its name
/// only (cheap, and it works for files that do not exist yet).
///
/// `.env.example` / `.env.sample` / `.env.template` are documentation, not
/// secrets, and are let through.
pub fn is_sensitive_path(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    if SENSITIVE_NAMES.contains(&lower.as_str()) {
        return true;
    }
    if let Some((_, ext)) = lower.rsplit_once('.')
        && SENSITIVE_EXTENSIONS.contains(&ext)
    {
        return true;
    }
    if lower.starts_with(".env") {
        let harmless = [".example", ".sample", ".template", ".dist"];
        return !harmless.iter().any(|suffix| lower.ends_with(suffix));
    }
    SENSITIVE_PREFIXES
        .iter()
        .any(|prefix| lower.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised_by_name() {
        for name in [
            ".env",
            ".env.local",
            "server.pem",
            "tls.KEY",
            "id_rsa",
            "id_ed25519",
            "credentials.json",
            ".npmrc",
            ".netrc",
        ] {
            assert!(
                is_sensitive_path(Path::new(name)),
                "{name} should be sensitive"
            );
            assert!(is_sensitive_path(&Path::new("deep/dir").join(name)));
        }
    }

    #[test]
    fn ordinary_files_are_not_sensitive() {
        for name in [
            "main.rs",
            "README.md",
            ".env.example",
            "keyboard.rs",
            "environment.py",
            "Cargo.toml",
        ] {
            assert!(
                !is_sensitive_path(Path::new(name)),
                "{name} should not be sensitive"
            );
        }
        assert!(!is_sensitive_path(Path::new("")));
    }
}

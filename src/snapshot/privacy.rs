//! Which files may have their content in a snapshot.
//!
//! A snapshot leaves the machine (it goes to a model provider), so content of
//! secret-bearing files never enters it — not even when such a file is the
//! active editor. The file is still *named*, and the snapshot says its content
//! was withheld, so the model does not guess. Source code is not a secret
//! because of its name (`src/auth/token.ts` is ordinary code): rules match
//! well-known secret file names and stores, nothing broader.

use super::glob::Glob;

/// File-name and path globs whose content is withheld by default.
pub(crate) const DEFAULT_DENY: &[&str] = &[
    ".env",
    ".env.*",
    ".env-*",
    ".env_*",
    "*.env",
    ".envrc",
    ".envrc.*",
    "**/.envs/**",
    ".dev.vars",
    ".dev.vars.*",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.gpg",
    "credentials",
    "credentials.json",
    "credentials.yaml",
    "credentials.yml",
    "credentials.toml",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    "secrets.toml",
    "*.secret",
    "*.secrets",
    "**/.secrets/**",
    "*.tfvars",
    "*.tfvars.json",
    "*service-account*.json",
    "*service_account*.json",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    "**/.ssh/**",
    "**/.aws/**",
    "**/.gnupg/**",
    "**/.docker/config.json",
    "**/.kube/config",
];

/// Endings of backup, editor and swap copies (`.npmrc.bak`, `.pgpass~`): a
/// name ending in one is judged as the name without it too, since a copy
/// holds what the original holds. Vim names the swap file of `.env`
/// `..env.swp`, so a swap copy is also judged without one leading dot.
const BACKUP_SUFFIXES: &[&str] = &[".bak", ".old", ".orig", ".save", ".swp", ".swo", "~"];
const SWAP_SUFFIXES: &[&str] = &[".swp", ".swo"];

/// Allow/deny glob lists. A glob without `/` matches the file name; a glob
/// with `/` matches the whole path (`**/` prefix implied unless it starts with
/// `/`). An allow match wins over a deny match, so a team can share
/// `.env.example` on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivacyRules {
    deny: Vec<Glob>,
    allow: Vec<Glob>,
}

impl Default for PrivacyRules {
    fn default() -> Self {
        Self::from_lists::<&str>(&[], &[], true)
    }
}

impl PrivacyRules {
    /// Builds rules from config lists. `keep_defaults` adds
    /// [`DEFAULT_DENY`] to `deny`; turning it off is an explicit choice.
    pub(crate) fn from_lists<S: AsRef<str>>(allow: &[S], deny: &[S], keep_defaults: bool) -> Self {
        let defaults: &[&str] = if keep_defaults { DEFAULT_DENY } else { &[] };
        let deny = defaults
            .iter()
            .map(|p| compile(p))
            .chain(deny.iter().map(|p| compile(p.as_ref())))
            .collect();
        let allow = allow.iter().map(|p| compile(p.as_ref())).collect();
        Self { deny, allow }
    }

    /// True when the content of `path` must not enter a snapshot: the path
    /// itself, or any name it is a backup copy of, is denied and not allowed.
    pub fn is_withheld(&self, path: &str) -> bool {
        let path = path.replace('\\', "/");
        candidates(&path).iter().any(|path| self.judge(path))
    }

    fn judge(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let hit = |glob: &Glob| {
            if glob.is_path_pattern() {
                glob.matches(path)
            } else {
                glob.matches(name)
            }
        };
        self.deny.iter().any(hit) && !self.allow.iter().any(hit)
    }
}

/// `path` and every path it is a backup copy of (`.env.bak.old` -> `.env.bak`
/// -> `.env`; `..env.swp` -> `..env`, `.env`). Suffixes compare case-insensitively,
/// like the globs.
fn candidates(path: &str) -> Vec<String> {
    let mut out = vec![path.to_owned()];
    let mut current = path.to_owned();
    loop {
        let name_start = current.rfind('/').map_or(0, |i| i + 1);
        let lower = current[name_start..].to_ascii_lowercase();
        let Some(suffix) = BACKUP_SUFFIXES
            .iter()
            .find(|suffix| lower.len() > suffix.len() && lower.ends_with(*suffix))
        else {
            return out;
        };
        current.truncate(current.len() - suffix.len());
        if SWAP_SUFFIXES.contains(suffix) && current[name_start..].starts_with('.') {
            let mut undotted = current.clone();
            undotted.remove(name_start);
            out.push(undotted);
        }
        out.push(current.clone());
    }
}

/// The rules applied to files as they are on disk: a path is withheld by
/// its name, and also by where it leads — a link's target must pass the
/// rules too (`app.cfg -> .env`), content that lives outside every
/// workspace root never enters (`notes.txt -> ~/.npmrc`), and neither does a
/// regular file with more than one hard link (`ln .env notes.txt`): its
/// other names cannot be found to be checked. A path that is
/// not on disk (an unsaved buffer, a scene from elsewhere) is judged by
/// its name alone. Answers are kept per path: a snapshot may name one file
/// in thousands of diagnostics.
pub(crate) struct OnDisk<'a> {
    rules: &'a PrivacyRules,
    roots: Vec<std::path::PathBuf>,
    seen: std::cell::RefCell<std::collections::HashMap<String, bool>>,
}

impl<'a> OnDisk<'a> {
    pub fn new(rules: &'a PrivacyRules, roots: &[String]) -> Self {
        OnDisk {
            rules,
            roots: roots
                .iter()
                .filter_map(|root| std::fs::canonicalize(root).ok())
                .collect(),
            seen: Default::default(),
        }
    }

    /// True when the content of `path` must not enter a snapshot.
    pub fn is_withheld(&self, path: &str) -> bool {
        if let Some(known) = self.seen.borrow().get(path) {
            return *known;
        }
        let withheld = self.rules.is_withheld(path)
            || std::fs::canonicalize(path).is_ok_and(|real| {
                !self.roots.iter().any(|root| real.starts_with(root))
                    || self.rules.is_withheld(&real.to_string_lossy())
                    || is_hard_linked(&real)
            });
        self.seen.borrow_mut().insert(path.to_owned(), withheld);
        withheld
    }
}

/// True for a regular file with other names than this one (st_nlink > 1).
#[cfg(unix)]
fn is_hard_linked(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.nlink() > 1)
}

/// Link counts are not read off Unix; names and link targets still are.
#[cfg(not(unix))]
fn is_hard_linked(_: &std::path::Path) -> bool {
    false
}

fn compile(pattern: &str) -> Glob {
    let pattern = pattern.trim();
    if pattern.contains('/') && !pattern.starts_with('/') && !pattern.starts_with("**/") {
        Glob::new(&format!("**/{pattern}"))
    } else {
        Glob::new(pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::{OnDisk, PrivacyRules};

    #[test]
    fn secrets_are_withheld_by_default() {
        let rules = PrivacyRules::default();
        for path in [
            "/w/.env",
            "/w/.env.local",
            "/w/config/prod.env",
            "/home/u/.ssh/id_rsa",
            "/w/id_ed25519",
            "/w/certs/server.pem",
            "/w/tls.key",
            "/w/store.p12",
            "/w/credentials.json",
            "/w/deploy/secrets.yaml",
            "/w/api.secret",
            "/w/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.netrc",
            "/home/u/.git-credentials",
            "/home/u/.aws/config",
            "C:\\Users\\u\\.env",
        ] {
            assert!(rules.is_withheld(path), "{path}");
        }
    }

    #[test]
    fn more_secret_stores_are_withheld_by_default() {
        let rules = PrivacyRules::default();
        for path in [
            "/w/.env-local",
            "/w/.env_production",
            "/w/.envrc.local",
            "/w/.envs/.production/.django",
            "/w/.envs/.local/.postgres",
            "/w/.dev.vars",
            "/w/.dev.vars.staging",
            "/w/terraform.tfvars",
            "/w/infra/prod.tfvars",
            "/w/infra/prod.auto.tfvars.json",
            "/w/service-account.json",
            "/w/keys/my-project-service-account-key.json",
            "/w/service_account.json",
            "/w/.secrets/token",
            "/w/deploy/.secrets/db/password.txt",
        ] {
            assert!(rules.is_withheld(path), "{path}");
        }
    }

    #[test]
    fn backup_copies_of_secrets_are_withheld() {
        let rules = PrivacyRules::default();
        for path in [
            "/w/.npmrc.bak",
            "/home/u/.netrc.old",
            "/home/u/.git-credentials.bak",
            "/home/u/.pgpass~",
            "/w/.env.swp",
            "/w/..env.swp",
            "/w/.credentials.swp",
            "/w/certs/x.pem.orig",
            "/w/credentials.json.save",
            "/w/.NPMRC.BAK",
            "/w/.pypirc.bak.old~",
            "/w/.secrets/token.bak",
            "/w/.htpasswd.swo",
        ] {
            assert!(rules.is_withheld(path), "{path}");
        }
        for path in [
            "/w/src/secrets.rs.bak",
            "/w/src/main.rs~",
            "/w/notes.txt.orig",
            "/w/.bak",
            "/w/~",
            "/w/.gitignore.swp",
        ] {
            assert!(!rules.is_withheld(path), "{path}");
        }
    }

    #[test]
    fn allowing_a_file_does_not_allow_copies_of_other_secrets() {
        let none: [&str; 0] = [];
        let rules = PrivacyRules::from_lists(&[".env.example", "*.bak"], &none, true);
        assert!(!rules.is_withheld("/w/.env.example"));
        assert!(rules.is_withheld("/w/.env.bak"), "judged as .env too");
        assert!(!rules.is_withheld("/w/notes.bak"));
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_linked_file_on_disk_is_withheld() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        std::fs::write(dir.path().join(".env"), "API_KEY=x\n").unwrap();
        std::fs::hard_link(dir.path().join(".env"), dir.path().join("notes.txt")).unwrap();
        std::fs::write(dir.path().join("plain.txt"), "hello\n").unwrap();
        let rules = PrivacyRules::default();
        let on_disk = OnDisk::new(&rules, std::slice::from_ref(&root));
        let path = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
        assert!(on_disk.is_withheld(&path("notes.txt")));
        assert!(!on_disk.is_withheld(&path("plain.txt")));
        assert!(!on_disk.is_withheld(&path("missing.txt")), "name only");
        assert!(
            !on_disk.is_withheld(&root),
            "a directory is not a hard link"
        );
    }

    #[test]
    fn ordinary_code_is_not_a_secret_because_of_its_name() {
        let rules = PrivacyRules::default();
        for path in [
            "/w/src/auth/token.ts",
            "/w/src/secrets.rs",
            "/w/src/keys.py",
            "/w/environment.ts",
            "/w/docs/credentials.md",
            "/w/src/env.rs",
            "/w/keyboard.key.rs",
            "/w/env.ts",
            "/w/environment.py",
            "/w/src/envs/mod.rs",
            "/w/src/service_account.rs",
            "/w/docs/terraform.md",
        ] {
            assert!(!rules.is_withheld(path), "{path}");
        }
    }

    #[test]
    fn allow_wins_and_config_can_extend_deny() {
        let rules = PrivacyRules::from_lists(&[".env.example"], &["*.sqlite", "private/**"], true);
        assert!(!rules.is_withheld("/w/.env.example"));
        assert!(rules.is_withheld("/w/.env"));
        assert!(rules.is_withheld("/w/data.sqlite"));
        assert!(rules.is_withheld("/w/private/notes.md"));
        assert!(!rules.is_withheld("/w/src/private.rs"));
    }

    #[test]
    fn defaults_can_be_dropped_explicitly() {
        let none: [&str; 0] = [];
        let rules = PrivacyRules::from_lists(&none, &none, false);
        assert!(!rules.is_withheld("/w/.env"));
    }
}

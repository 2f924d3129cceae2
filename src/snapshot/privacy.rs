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
pub const DEFAULT_DENY: &[&str] = &[
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
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
    pub fn from_lists<S: AsRef<str>>(allow: &[S], deny: &[S], keep_defaults: bool) -> Self {
        let defaults: &[&str] = if keep_defaults { DEFAULT_DENY } else { &[] };
        let deny = defaults
            .iter()
            .map(|p| compile(p))
            .chain(deny.iter().map(|p| compile(p.as_ref())))
            .collect();
        let allow = allow.iter().map(|p| compile(p.as_ref())).collect();
        Self { deny, allow }
    }

    /// True when the content of `path` must not enter a snapshot.
    pub fn is_withheld(&self, path: &str) -> bool {
        let path = path.replace('\\', "/");
        let name = path.rsplit('/').next().unwrap_or(&path);
        let hit = |glob: &Glob| {
            if glob.is_path_pattern() {
                glob.matches(&path)
            } else {
                glob.matches(name)
            }
        };
        self.deny.iter().any(hit) && !self.allow.iter().any(hit)
    }
}

/// The rules applied to files as they are on disk: a path is withheld by
/// its name, and also by where it leads — a link's target must pass the
/// rules too (`app.cfg -> .env`), and content that lives outside every
/// workspace root never enters (`notes.txt -> ~/.npmrc`). A path that is
/// not on disk (an unsaved buffer, a scene from elsewhere) is judged by
/// its name alone. Answers are kept per path: a snapshot may name one file
/// in thousands of diagnostics.
pub struct OnDisk<'a> {
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
            });
        self.seen.borrow_mut().insert(path.to_owned(), withheld);
        withheld
    }
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
    use super::PrivacyRules;

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

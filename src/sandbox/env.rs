//! The environment a child that runs model-written code starts with: built
//! from an allowlist, never inherited whole.
//!
//! The workbench's own environment holds the model provider's API key (and
//! often cloud credentials, tokens, agent sockets). One `os.environ` in a
//! cell would put them in the conversation, the session file and the next
//! request. So children get only what programs need to run and to find
//! Python: `PATH`, `TMPDIR` (the sandbox points it at its private dir),
//! `HOME`, `USER`, `LOGNAME`, `LANG`, `LANGUAGE`, `TZ`, `TERM`, `NO_COLOR`,
//! `LC_*`, `PYTHON*`, `VIRTUAL_ENV`, `PYENV_*`, the toolchain's
//! `CARGO_HOME`, `CARGO_TARGET_DIR`, `RUSTUP_HOME`, `RUSTUP_TOOLCHAIN`
//! (check commands run `cargo`; never `CARGO_REGISTRY_TOKEN`), plus the names the
//! user lists in `[kernel] env`. The variable holding the API key is never
//! passed, even when listed.

use std::ffi::OsString;
use std::process::Command;

/// Names passed as they are.
const ALLOWED: [&str; 15] = [
    "PATH",
    "TMPDIR",
    "CARGO_HOME",
    "CARGO_TARGET_DIR",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "VIRTUAL_ENV",
    "NO_COLOR",
];

/// Prefixes passed as they are (locale categories, Python's own knobs,
/// pyenv's version selection for the `python3` shim).
const ALLOWED_PREFIXES: [&str; 3] = ["LC_", "PYTHON", "PYENV_"];

/// The allowlisted variables, captured once from the workbench's
/// environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildEnv {
    vars: Vec<(OsString, OsString)>,
}

impl ChildEnv {
    /// The allowlisted part of this process's environment. `extra` are more
    /// names the user allowed; `secret` names the API key's variable, which
    /// never passes.
    pub fn from_host(extra: &[String], secret: &str) -> Self {
        Self::from_vars(std::env::vars_os(), extra, secret)
    }

    /// The allowlisted part of `vars` (see [`ChildEnv::from_host`]).
    pub(crate) fn from_vars(
        vars: impl IntoIterator<Item = (OsString, OsString)>,
        extra: &[String],
        secret: &str,
    ) -> Self {
        let vars = vars
            .into_iter()
            .filter(|(name, _)| {
                let Some(name) = name.to_str() else {
                    return false;
                };
                name != secret
                    && (ALLOWED.contains(&name)
                        || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
                        || extra.iter().any(|e| e == name))
            })
            .collect();
        ChildEnv { vars }
    }

    /// Replaces `cmd`'s whole environment with these variables.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env_clear();
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)));
    }

    /// Whether `name` is passed.
    pub fn contains(&self, name: &str) -> bool {
        self.vars.iter().any(|(k, _)| k == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names.iter().map(|n| (n.into(), "v".into())).collect()
    }

    #[test]
    fn only_allowlisted_names_pass_and_the_key_never_does() {
        let env = ChildEnv::from_vars(
            vars(&[
                "PATH",
                "LC_ALL",
                "PYTHONPATH",
                "OPENAI_API_KEY",
                "AWS_SECRET_ACCESS_KEY",
                "SSH_AUTH_SOCK",
                "MY_TOOL_HOME",
                "PYTHON_KEY",
            ]),
            &["MY_TOOL_HOME".to_owned(), "PYTHON_KEY".to_owned()],
            "PYTHON_KEY",
        );
        for passed in ["PATH", "LC_ALL", "PYTHONPATH", "MY_TOOL_HOME"] {
            assert!(env.contains(passed), "{passed}");
        }
        for kept in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "SSH_AUTH_SOCK",
            "PYTHON_KEY",
        ] {
            assert!(!env.contains(kept), "{kept}");
        }
    }
}

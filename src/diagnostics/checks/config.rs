//! Check commands: a program run on save or on demand whose output a
//! problem matcher turns into diagnostics.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::matchers::{MatcherError, ProblemMatcher, RegexMatcher};
use crate::diagnostics::model::Severity;
use crate::diagnostics::position::ColumnUnit;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckCommand {
    /// Shown in the status bar and used as the diagnostics source.
    pub name: String,
    pub command: String,
    /// `{file}` is replaced by the absolute path of the file being checked;
    /// a command without `{file}` checks the whole project.
    #[serde(default)]
    pub args: Vec<String>,
    pub language_ids: Vec<String>,
    pub matcher: MatcherSpec,
    /// The command runs in the nearest ancestor of the file that contains one
    /// of these (e.g. `Cargo.toml`), else in the workspace root.
    #[serde(default)]
    pub root_markers: Vec<String>,
    #[serde(default = "default_true")]
    pub on_save: bool,
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// The command runs the project's own code where this file is
    /// (`cargo check`: `build.rs`, proc macros, `.cargo/config.toml`): not
    /// before the workspace is trusted.
    #[serde(default)]
    pub project_code: Option<String>,
}

fn default_true() -> bool {
    true
}

fn default_timeout_secs() -> u64 {
    120
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum MatcherSpec {
    Builtin(BuiltinMatcher),
    Custom {
        regex: String,
        #[serde(default)]
        severity: Option<String>,
        #[serde(default = "default_unit")]
        column_unit: ColumnUnit,
    },
}

fn default_unit() -> ColumnUnit {
    ColumnUnit::Chars
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuiltinMatcher {
    CargoJson,
    PythonTraceback,
    Ruff,
    Gcc,
    Tsc,
}

impl MatcherSpec {
    pub fn build(&self) -> Result<ProblemMatcher, MatcherError> {
        Ok(match self {
            MatcherSpec::Builtin(BuiltinMatcher::CargoJson) => ProblemMatcher::CargoJson,
            MatcherSpec::Builtin(BuiltinMatcher::PythonTraceback) => {
                ProblemMatcher::PythonTraceback
            }
            MatcherSpec::Builtin(BuiltinMatcher::Ruff) => {
                ProblemMatcher::Regex(RegexMatcher::ruff())
            }
            MatcherSpec::Builtin(BuiltinMatcher::Gcc) => ProblemMatcher::Regex(RegexMatcher::gcc()),
            MatcherSpec::Builtin(BuiltinMatcher::Tsc) => ProblemMatcher::Regex(RegexMatcher::tsc()),
            MatcherSpec::Custom {
                regex,
                severity,
                column_unit,
            } => {
                let severity = severity
                    .as_deref()
                    .and_then(Severity::from_word)
                    .unwrap_or(Severity::Error);
                ProblemMatcher::Regex(RegexMatcher::new(regex, severity, *column_unit)?)
            }
        })
    }
}

impl CheckCommand {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }

    pub(crate) fn applies_to(&self, language_id: &str) -> bool {
        self.language_ids.iter().any(|l| l == language_id)
    }

    /// Whether each run covers one file (`{file}` in args) or the project.
    pub(crate) fn per_file(&self) -> bool {
        self.args.iter().any(|a| a.contains("{file}"))
    }

    pub(crate) fn args_for(&self, file: &Path) -> Vec<String> {
        let file = file.to_string_lossy();
        self.args
            .iter()
            .map(|a| a.replace("{file}", &file))
            .collect()
    }

    /// Where to run for `file`: nearest ancestor holding a root marker, else `root`.
    pub(crate) fn cwd_for(&self, file: &Path, root: &Path) -> PathBuf {
        file.ancestors()
            .skip(1)
            .find(|dir| self.root_markers.iter().any(|m| dir.join(m).exists()))
            .map_or_else(|| root.to_path_buf(), Path::to_path_buf)
    }

    /// Defaults; each one only runs when its program is on PATH.
    pub fn defaults() -> Vec<CheckCommand> {
        let make = |name: &str,
                    command: &str,
                    args: &[&str],
                    langs: &[&str],
                    matcher,
                    markers: &[&str]| {
            CheckCommand {
                name: name.into(),
                command: command.into(),
                args: args.iter().map(|s| s.to_string()).collect(),
                language_ids: langs.iter().map(|s| s.to_string()).collect(),
                matcher: MatcherSpec::Builtin(matcher),
                root_markers: markers.iter().map(|s| s.to_string()).collect(),
                on_save: true,
                timeout_secs: default_timeout_secs(),
                project_code: None,
            }
        };
        vec![
            CheckCommand {
                project_code: Some("Cargo.toml".to_owned()),
                ..make(
                    "cargo check",
                    "cargo",
                    &["check", "--message-format=json", "--all-targets"],
                    &["rust"],
                    BuiltinMatcher::CargoJson,
                    &["Cargo.toml"],
                )
            },
            // Syntax errors without writing `.pyc` files into the project.
            // (`ruff check` is not a default: `ruff server` already reports
            // the same lints live, and duplicates would be noise.)
            make(
                "python compile",
                "python3",
                // Isolated (`-I`): no workspace module runs as Python
                // starts (`-c` puts the working directory first).
                &[
                    "-I",
                    "-c",
                    "import sys; compile(open(sys.argv[1], 'rb').read(), sys.argv[1], 'exec')",
                    "{file}",
                ],
                &["python"],
                BuiltinMatcher::PythonTraceback,
                &[],
            ),
            make(
                "tsc",
                "tsc",
                &["--noEmit", "--pretty", "false"],
                &["typescript", "typescriptreact"],
                BuiltinMatcher::Tsc,
                &["tsconfig.json"],
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in Python check runs in the workspace, before it is
    /// trusted too: a module the workspace ships under a standard name
    /// must not run as Python starts (a review found `linecache.py` run).
    #[test]
    fn the_python_compile_check_imports_nothing_from_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("RAN");
        for name in ["linecache", "traceback", "codecs_extra", "io_extra"] {
            std::fs::write(
                dir.path().join(format!("{name}.py")),
                format!("open({:?}, 'w').close()\n", marker.display().to_string()),
            )
            .unwrap();
        }
        let bad = dir.path().join("bad.py");
        std::fs::write(&bad, "def f(:\n").unwrap();
        let check = CheckCommand::defaults()
            .into_iter()
            .find(|check| check.name == "python compile")
            .unwrap();
        // Python 3.13 loads `linecache` to show a syntax error; 3.11 does
        // not. Every 3.13+ pyenv holds is tried too, where there is one.
        let newer = std::env::var_os("HOME")
            .map(|home| std::path::PathBuf::from(home).join(".pyenv/versions"))
            .and_then(|dir| std::fs::read_dir(dir).ok())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("3.1"))
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with("3.1."))
            .map(|entry| entry.path().join("bin/python3"))
            .filter(|python| python.exists());
        for python in std::iter::once(check.command.clone().into()).chain(newer) {
            let out = std::process::Command::new(&python)
                .args(check.args_for(&bad))
                .current_dir(check.cwd_for(&bad, dir.path()))
                .output()
                .unwrap();
            assert!(!out.status.success(), "{python:?} reports the syntax error");
            assert!(!marker.exists(), "a workspace module ran under {python:?}");
        }
    }

    #[test]
    fn deserializes_builtin_and_custom_matchers() {
        let json = r#"[
            {"name":"gcc","command":"gcc","args":["-fsyntax-only","{file}"],"language_ids":["c"],"matcher":"gcc"},
            {"name":"lint","command":"mylint","language_ids":["x"],"on_save":false,"timeout_secs":5,
             "matcher":{"regex":"^(?P<file>[^:]+):(?P<line>\\d+) (?P<message>.*)$","severity":"warning","column_unit":"utf-16"}}
        ]"#;
        let checks: Vec<CheckCommand> = serde_json::from_str(json).unwrap();
        assert_eq!(checks[0].matcher, MatcherSpec::Builtin(BuiltinMatcher::Gcc));
        assert!(checks[0].per_file() && checks[0].on_save);
        assert!(!checks[1].per_file() && !checks[1].on_save);
        assert!(checks[1].matcher.build().is_ok());
        assert_eq!(
            checks[0].args_for(Path::new("/w/a b.c")),
            vec!["-fsyntax-only", "/w/a b.c"]
        );
    }

    #[test]
    fn cwd_is_the_nearest_marker_directory() {
        let dir = tempfile::tempdir().unwrap();
        let krate = dir.path().join("crates/k");
        std::fs::create_dir_all(krate.join("src")).unwrap();
        std::fs::write(krate.join("Cargo.toml"), "").unwrap();
        let cargo = &CheckCommand::defaults()[0];
        assert_eq!(cargo.cwd_for(&krate.join("src/lib.rs"), dir.path()), krate);
        let python = &CheckCommand::defaults()[1];
        assert_eq!(python.cwd_for(&krate.join("x.py"), dir.path()), dir.path());
    }
}

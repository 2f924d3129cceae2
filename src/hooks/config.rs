//! Where hooks come from: `[[hooks.<Event>]]` in the user's config file,
//! and a workspace's Claude Code settings (`.claude/settings.json`,
//! `.claude/settings.local.json`), which run only once the workspace is
//! trusted. Both end up as the same [`HookEntry`] list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::event::HookEvent;
use super::matcher::Matcher;

/// What a hook gets when its entry names no `timeout` (Claude Code's).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// `[hooks]` in the config file: for each event, the commands to run.
///
/// ```toml
/// [[hooks.PreToolUse]]
/// matcher = "Bash"
/// command = "~/bin/guard.sh"
/// timeout = 10
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct HooksConfig(pub BTreeMap<HookEvent, Vec<ConfigEntry>>);

/// One `[[hooks.<Event>]]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigEntry {
    /// Which tools (or sources, triggers) it runs for; empty or `*` is all.
    #[serde(default)]
    pub matcher: Matcher,
    /// Run with `sh -c` in the workspace.
    pub command: String,
    /// Seconds before it is killed (default 60).
    pub timeout: Option<u64>,
}

/// Where an entry was configured (said by `/hooks` and in reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The user's config file.
    User,
    /// A settings file the workspace ships (its path, relative).
    Workspace(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::User => f.write_str("config"),
            Origin::Workspace(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One hook, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEntry {
    pub event: HookEvent,
    pub matcher: Matcher,
    pub command: String,
    pub timeout: Duration,
    pub origin: Origin,
    /// Files of the workspace its command names (`./.claude/hooks/fmt.sh`,
    /// `python3 hook.py`), with their content's SHA-256 when the hook was
    /// read: a cell can write the workspace, so a script that changed
    /// since is not run, and an approval covers the scripts as they were.
    pub pinned: Vec<Pinned>,
}

/// A workspace file a hook runs, as it was when the hook was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    pub path: PathBuf,
    pub sha256: String,
}

impl HookEntry {
    /// The hook as the user approves it (what it runs, on what, and the
    /// content of the workspace files it names): a workspace hook whose
    /// identity changed is a different hook, asked about again.
    pub fn identity(&self) -> String {
        let pinned: Vec<[String; 2]> = self
            .pinned
            .iter()
            .map(|p| [p.path.to_string_lossy().into_owned(), p.sha256.clone()])
            .collect();
        serde_json::json!([
            self.event.name(),
            self.matcher.to_string(),
            self.command,
            self.timeout.as_secs(),
            self.origin.to_string(),
            pinned
        ])
        .to_string()
    }

    /// Records the workspace files its command names, as they are now.
    pub fn pin(&mut self, root: &Path) {
        self.pinned = named_files(&self.command, root)
            .into_iter()
            .filter_map(|path| {
                let sha256 = sha256_of(&path)?;
                Some(Pinned { path, sha256 })
            })
            .collect();
    }

    /// The first pinned file whose content is no longer what was read.
    pub fn changed_file(&self) -> Option<&Path> {
        self.pinned
            .iter()
            .find(|p| sha256_of(&p.path).as_deref() != Some(p.sha256.as_str()))
            .map(|p| p.path.as_path())
    }
}

/// The workspace files `command` names: each word (quotes stripped,
/// `$CLAUDE_PROJECT_DIR` and `$HELLO_TUI_PROJECT_DIR` put in) that is a
/// file inside `root`, where it is or where its link leads.
fn named_files(command: &str, root: &Path) -> Vec<PathBuf> {
    let root_text = root.to_string_lossy();
    let mut files: Vec<PathBuf> = Vec::new();
    for word in command.split(|c: char| c.is_whitespace() || c == ';' || c == '|' || c == '&') {
        let mut word: String = word.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        for name in ["CLAUDE_PROJECT_DIR", "HELLO_TUI_PROJECT_DIR"] {
            word = word
                .replace(&format!("${{{name}}}"), &root_text)
                .replace(&format!("${name}"), &root_text);
        }
        if word.is_empty() || word.starts_with('-') {
            continue;
        }
        let path = root.join(&word);
        if path.is_file() && crate::trust::inside(&path, root) && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

fn sha256_of(path: &Path) -> Option<String> {
    use std::fmt::Write;
    let bytes = std::fs::read(path).ok()?;
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    Some(digest.as_ref().iter().fold(String::new(), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    }))
}

impl HooksConfig {
    /// The entries of the user's config file.
    pub fn entries(&self) -> Vec<HookEntry> {
        self.0
            .iter()
            .flat_map(|(event, list)| {
                list.iter().map(|entry| HookEntry {
                    event: *event,
                    matcher: entry.matcher.clone(),
                    command: entry.command.clone(),
                    timeout: entry.timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs),
                    origin: Origin::User,
                    pinned: Vec::new(),
                })
            })
            .collect()
    }
}

/// The settings files of a workspace that may carry hooks, in the order
/// Claude Code reads them.
pub const WORKSPACE_FILES: [&str; 2] = [".claude/settings.json", ".claude/settings.local.json"];

/// What a workspace's settings files configure: the hooks that would run,
/// and what in them cannot (an unknown event, a hook type other than
/// `command`, a file that is not JSON), each said in one line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkspaceHooks {
    pub entries: Vec<HookEntry>,
    pub skipped: Vec<String>,
}

/// Reads the workspace's Claude Code settings files. Nothing here runs:
/// the caller decides (on trust) whether the entries join the rest.
pub fn workspace_hooks(root: &Path) -> WorkspaceHooks {
    let mut found = WorkspaceHooks::default();
    for file in WORKSPACE_FILES {
        let path = root.join(file);
        // A link could point anywhere on the machine: the workspace's own
        // files only.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            found
                .skipped
                .push(format!("{file}: not a regular file, not read"));
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => claude_settings(&text, Path::new(file), &mut found),
            Err(error) => found.skipped.push(format!("{file}: {error}")),
        }
    }
    for entry in &mut found.entries {
        entry.pin(root);
    }
    found
}

/// The hooks of one Claude Code settings file:
/// `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type":
/// "command", "command": "…", "timeout": 30}]}]}}`. Other settings are
/// not ours and are left alone.
pub fn claude_settings(text: &str, file: &Path, found: &mut WorkspaceHooks) {
    let shown = file.display();
    let settings: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            found.skipped.push(format!("{shown}: not JSON ({error})"));
            return;
        }
    };
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return;
    };
    for (name, groups) in events {
        let Ok(event) = name.parse::<HookEvent>() else {
            found.skipped.push(format!(
                "{shown}: event `{name}` is not one hello-tui fires"
            ));
            continue;
        };
        for group in groups.as_array().into_iter().flatten() {
            let matcher_text = group.get("matcher").and_then(Value::as_str).unwrap_or("");
            let matcher = match Matcher::parse(matcher_text) {
                Ok(matcher) => matcher,
                Err(error) => {
                    found.skipped.push(format!("{shown}: {name}: {error}"));
                    continue;
                }
            };
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = hook
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command");
                let command = hook.get("command").and_then(Value::as_str);
                match (kind, command) {
                    ("command", Some(command)) => found.entries.push(HookEntry {
                        event,
                        matcher: matcher.clone(),
                        command: command.to_owned(),
                        timeout: hook
                            .get("timeout")
                            .and_then(Value::as_u64)
                            .map_or(DEFAULT_TIMEOUT, Duration::from_secs),
                        origin: Origin::Workspace(file.to_path_buf()),
                        pinned: Vec::new(),
                    }),
                    ("command", None) => found
                        .skipped
                        .push(format!("{shown}: {name}: a command hook without `command`")),
                    (other, _) => found.skipped.push(format!(
                        "{shown}: {name}: hooks of type `{other}` are not run (only `command`)"
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_section_reads_each_event_with_its_defaults() {
        let config: crate::config::ConfigFile = crate::theme::parse_toml_with_path(
            "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"guard\"\ntimeout = 5\n\
             [[hooks.UserPromptSubmit]]\ncommand = \"ctx\"\n",
        )
        .unwrap();
        let entries = config.hooks.entries();
        assert_eq!(entries.len(), 2);
        let guard = entries
            .iter()
            .find(|e| e.event == HookEvent::PreToolUse)
            .unwrap();
        assert_eq!(guard.timeout, Duration::from_secs(5));
        assert!(guard.matcher.matches("Bash") && !guard.matcher.matches("Write"));
        let ctx = entries
            .iter()
            .find(|e| e.event == HookEvent::UserPromptSubmit)
            .unwrap();
        assert_eq!(ctx.timeout, DEFAULT_TIMEOUT);
        assert!(ctx.matcher.matches("anything"));
    }

    #[test]
    fn a_typo_in_an_event_or_a_key_or_a_bad_matcher_is_an_error_with_its_place() {
        for (text, said) in [
            ("[[hooks.PreToolUze]]\ncommand = \"x\"\n", "PreToolUze"),
            ("[[hooks.Stop]]\ncommand = \"x\"\ntimout = 3\n", "timout"),
            (
                "[[hooks.PreToolUse]]\nmatcher = \"(\"\ncommand = \"x\"\n",
                "matcher",
            ),
        ] {
            let error = crate::config::ConfigFile::parse(text, Path::new("c.toml")).unwrap_err();
            assert!(error.to_string().contains(said), "{said}: {error}");
        }
    }

    #[test]
    fn claude_settings_give_command_hooks_and_say_what_they_skip() {
        let mut found = WorkspaceHooks::default();
        claude_settings(
            r#"{"permissions": {"allow": []},
                "hooks": {
                  "PreToolUse": [{"matcher": "Bash|Write", "hooks": [
                     {"type": "command", "command": "./guard.sh", "timeout": 3},
                     {"type": "http", "url": "http://x"}]}],
                  "SessionStart": [{"hooks": [{"type": "command", "command": "ctx"}]}],
                  "SubagentStop": [{"hooks": [{"type": "command", "command": "z"}]}]}}"#,
            Path::new(".claude/settings.json"),
            &mut found,
        );
        assert_eq!(found.entries.len(), 2, "{found:?}");
        assert_eq!(found.entries[0].event, HookEvent::PreToolUse);
        assert_eq!(found.entries[0].timeout, Duration::from_secs(3));
        assert!(found.entries[0].matcher.matches("Write"));
        assert_eq!(
            found.entries[1].origin,
            Origin::Workspace(".claude/settings.json".into())
        );
        assert_eq!(found.skipped.len(), 2, "{:?}", found.skipped);
        assert!(found.skipped.iter().any(|s| s.contains("`http`")));
        assert!(found.skipped.iter().any(|s| s.contains("SubagentStop")));
    }

    #[test]
    fn a_hook_pins_the_workspace_files_it_runs_and_sees_them_change() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".claude/hooks")).unwrap();
        std::fs::write(ws.path().join(".claude/hooks/fmt.sh"), "echo fmt").unwrap();
        std::fs::write(ws.path().join("check.py"), "print(1)").unwrap();
        let mut entry = HookEntry {
            event: HookEvent::PostToolUse,
            matcher: Matcher::All,
            command: "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh && python3 check.py -v; ls /etc"
                .into(),
            timeout: DEFAULT_TIMEOUT,
            origin: Origin::User,
            pinned: Vec::new(),
        };
        entry.pin(ws.path());
        let pinned: Vec<&Path> = entry.pinned.iter().map(|p| p.path.as_path()).collect();
        assert_eq!(
            pinned,
            [
                ws.path().join(".claude/hooks/fmt.sh").as_path(),
                ws.path().join("check.py").as_path()
            ]
        );
        let before = entry.identity();
        assert_eq!(entry.changed_file(), None);
        std::fs::write(ws.path().join("check.py"), "import os; os.system('id')").unwrap();
        assert_eq!(
            entry.changed_file(),
            Some(ws.path().join("check.py").as_path())
        );
        entry.pin(ws.path());
        assert_ne!(
            entry.identity(),
            before,
            "the approval covered the old content"
        );
    }

    #[test]
    fn a_linked_settings_file_is_not_read() {
        let ws = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let outside = elsewhere.path().join("settings.json");
        std::fs::write(
            &outside,
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}"#,
        )
        .unwrap();
        std::fs::create_dir(ws.path().join(".claude")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.path().join(".claude/settings.json")).unwrap();
        let found = workspace_hooks(ws.path());
        assert!(found.entries.is_empty());
        assert_eq!(found.skipped.len(), 1, "{found:?}");
    }
}

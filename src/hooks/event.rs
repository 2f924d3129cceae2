//! The events hooks run at, named as Claude Code names them (a hook
//! written for Claude Code, Codex or Crush keeps its configuration), and
//! the tools a `PreToolUse`/`PostToolUse` hook is told about.

use serde::Deserialize;
use serde_json::{Value, json};

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub enum HookEvent {
    /// The workbench (or `exec`) starts, resumes, `/new` clears, or a
    /// compaction ends: what it prints goes with the next prompt.
    SessionStart,
    /// The user sent a prompt: exit 2 holds it back; what it prints goes
    /// with it.
    UserPromptSubmit,
    /// Before a tool runs: exit 2 or `deny` refuses it, `allow` skips the
    /// question, `ask` asks even in `auto`.
    PreToolUse,
    /// After a tool ran: what it says goes to the model with the result.
    PostToolUse,
    /// The model gave its final answer: exit 2 or `block` sends it on.
    Stop,
    /// An approval waits for the user.
    Notification,
    /// The conversation is about to be compacted: exit 2 holds it back.
    PreCompact,
}

impl HookEvent {
    pub const ALL: [HookEvent; 7] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
        HookEvent::Notification,
        HookEvent::PreCompact,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::Notification => "Notification",
            HookEvent::PreCompact => "PreCompact",
        }
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for HookEvent {
    type Err = ();

    fn from_str(name: &str) -> Result<Self, ()> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
            .ok_or(())
    }
}

/// A tool as hooks see it: its name (what a matcher tests) and its input.
/// Names follow Claude Code where the thing is the same (`Bash`, `Write`,
/// `mcp__<server>__<tool>`), so its hooks keep working.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    pub name: String,
    pub input: Value,
}

impl ToolUse {
    /// A cell the model wants to run (`code_action`).
    pub fn cell(code: &str) -> Self {
        Self {
            name: crate::kernel::CODE_ACTION_TOOL.to_owned(),
            input: json!({ "code": code }),
        }
    }

    /// A `shell.run` command a cell runs.
    pub fn shell(command: &str) -> Self {
        Self {
            name: "Bash".to_owned(),
            input: json!({ "command": command }),
        }
    }

    /// A write `fs` is about to make: the absolute path, the new text and
    /// the diff.
    pub fn write(path: &std::path::Path, content: &[u8], diff: &str) -> Self {
        Self {
            name: "Write".to_owned(),
            input: json!({
                "file_path": path.to_string_lossy(),
                "content": String::from_utf8_lossy(content),
                "diff": diff,
            }),
        }
    }

    /// An MCP tool call a cell makes.
    pub fn mcp(call: &crate::mcp::ToolCall) -> Self {
        Self {
            name: format!("mcp__{}__{}", call.server, call.tool),
            input: call.arguments.clone(),
        }
    }

    /// A turn's first `llm_query` sub-calls (asked once a turn).
    pub fn subcalls(what: &str) -> Self {
        Self {
            name: "llm_query".to_owned(),
            input: json!({ "summary": what }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reads_back_from_its_name() {
        for event in HookEvent::ALL {
            assert_eq!(event.name().parse(), Ok(event));
        }
        assert!("SubagentStop".parse::<HookEvent>().is_err());
    }
}

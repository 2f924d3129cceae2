//! What one hook said, read by Claude Code's rules: exit 0 is success
//! (stdout may be a JSON answer, or for `UserPromptSubmit` and
//! `SessionStart` plain context), exit 2 blocks with stderr as the reason,
//! any other exit is a failure. Unlike Claude Code, a failure is never
//! silently passed over: it is reported, and a failing `PreToolUse` guard
//! makes the tool ask the user instead of running unchecked.

use serde_json::Value;

use super::event::HookEvent;

/// How a hook process ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    /// Killed at its timeout, killed by a signal, or never started.
    Failed(String),
}

/// A `PreToolUse` permission decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Allow,
    Deny,
    Ask,
}

/// What one hook said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// Exit 2, `"decision": "block"`, or a `deny`:
    /// the reason (for the model, or for the user where it has no model).
    pub block: Option<String>,
    pub permission: Option<Permission>,
    /// Why it allowed or asked (shown to the user).
    pub reason: Option<String>,
    /// Text for the model (`additionalContext`, or plain stdout where it
    /// counts as context).
    pub context: Option<String>,
    /// A line for the user (`systemMessage`).
    pub message: Option<String>,
    /// `"continue": false`: the turn ends after this (`stopReason`).
    pub stop: Option<String>,
    /// The hook did not work: why.
    pub failed: Option<String>,
}

impl Answer {
    pub fn read(event: HookEvent, ran: Ran) -> Answer {
        let (code, stdout, stderr) = match ran {
            Ran::Failed(why) => {
                return Answer {
                    failed: Some(why),
                    ..Answer::default()
                };
            }
            Ran::Exited {
                code,
                stdout,
                stderr,
            } => (code, stdout, stderr),
        };
        match code {
            0 => from_stdout(event, stdout.trim()),
            2 => Answer {
                block: Some(
                    non_empty(stderr.trim())
                        .unwrap_or("(the hook gave no reason)")
                        .to_owned(),
                ),
                ..Answer::default()
            },
            other => Answer {
                failed: Some(match non_empty(stderr.trim()) {
                    Some(said) => format!("exited with {other}: {}", first_lines(said)),
                    None => format!("exited with {other}"),
                }),
                ..Answer::default()
            },
        }
    }
}

fn from_stdout(event: HookEvent, stdout: &str) -> Answer {
    if stdout.starts_with('{') {
        return match serde_json::from_str::<Value>(stdout) {
            Ok(json) => from_json(&json),
            Err(error) => Answer {
                failed: Some(format!(
                    "printed text that looks like JSON but is not ({error})"
                )),
                ..Answer::default()
            },
        };
    }
    // Plain text on success is context where Claude Code takes it as such.
    let counts = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
    Answer {
        context: non_empty(stdout).filter(|_| counts).map(str::to_owned),
        ..Answer::default()
    }
}

fn from_json(json: &Value) -> Answer {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .and_then(non_empty)
            .map(str::to_owned)
    };
    let specific = json.get("hookSpecificOutput");
    let mut answer = Answer {
        context: text(specific.and_then(|s| s.get("additionalContext"))),
        message: text(json.get("systemMessage")),
        ..Answer::default()
    };
    let reason = text(json.get("reason"));
    let decision_reason = text(specific.and_then(|s| s.get("permissionDecisionReason")));
    match specific
        .and_then(|s| s.get("permissionDecision"))
        .and_then(Value::as_str)
    {
        Some("allow") => answer.permission = Some(Permission::Allow),
        Some("ask") => answer.permission = Some(Permission::Ask),
        Some("deny") => {
            answer.permission = Some(Permission::Deny);
            answer.block = Some(
                decision_reason
                    .clone()
                    .or(reason.clone())
                    .unwrap_or_else(|| "denied by a hook".to_owned()),
            );
        }
        _ => {}
    }
    answer.reason = decision_reason.or(reason.clone());
    match json.get("decision").and_then(Value::as_str) {
        Some("block") => {
            answer.block = Some(reason.unwrap_or_else(|| "blocked by a hook".to_owned()));
        }
        // The older spelling of `allow`.
        Some("approve") if answer.permission.is_none() => {
            answer.permission = Some(Permission::Allow);
        }
        _ => {}
    }
    // Claude Code can rewrite a tool's input; hello-tui runs what the
    // model wrote or nothing, so an allow that came with a rewrite is not
    // taken as one: the user is asked (nobody asked in `exec`: refused).
    if specific.and_then(|s| s.get("updatedInput")).is_some()
        && answer.permission != Some(Permission::Deny)
    {
        answer.permission = Some(Permission::Ask);
        answer.reason = Some(
            "a hook wanted to change the tool's input, which hello-tui does not do".to_owned(),
        );
    }
    if json.get("continue").and_then(Value::as_bool) == Some(false) {
        answer.stop =
            Some(text(json.get("stopReason")).unwrap_or_else(|| "a hook asked to stop".to_owned()));
    }
    answer
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// A failure's stderr in a line or three, for a report.
fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(3).collect();
    crate::sanitize::for_display(&lines.join(" / ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_two_blocks_with_stderr_and_other_codes_fail() {
        let blocked = Answer::read(HookEvent::PreToolUse, exited(2, "", "no rm -rf\n"));
        assert_eq!(blocked.block.as_deref(), Some("no rm -rf"));
        let failed = Answer::read(HookEvent::PreToolUse, exited(1, "", "jq: not found"));
        assert_eq!(failed.block, None);
        assert_eq!(
            failed.failed.as_deref(),
            Some("exited with 1: jq: not found")
        );
        let ok = Answer::read(HookEvent::PreToolUse, exited(0, "just talk\n", ""));
        assert_eq!(ok, Answer::default());
    }

    #[test]
    fn json_answers_decide_and_add_context() {
        let deny = Answer::read(
            HookEvent::PreToolUse,
            exited(
                0,
                r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on main"}}"#,
                "",
            ),
        );
        assert_eq!(deny.permission, Some(Permission::Deny));
        assert_eq!(deny.block.as_deref(), Some("not on main"));
        let ask = Answer::read(
            HookEvent::PreToolUse,
            exited(
                0,
                r#"{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"prod"}}"#,
                "",
            ),
        );
        assert_eq!(
            (ask.permission, ask.reason.as_deref()),
            (Some(Permission::Ask), Some("prod"))
        );
        let legacy = Answer::read(
            HookEvent::PreToolUse,
            exited(0, r#"{"decision":"approve"}"#, ""),
        );
        assert_eq!(legacy.permission, Some(Permission::Allow));
        let context = Answer::read(
            HookEvent::PostToolUse,
            exited(
                0,
                r#"{"hookSpecificOutput":{"additionalContext":"lint: 2 warnings"},"systemMessage":"linted"}"#,
                "",
            ),
        );
        assert_eq!(context.context.as_deref(), Some("lint: 2 warnings"));
        assert_eq!(context.message.as_deref(), Some("linted"));
        let stop = Answer::read(
            HookEvent::Stop,
            exited(0, r#"{"continue":false,"stopReason":"enough"}"#, ""),
        );
        assert_eq!(stop.stop.as_deref(), Some("enough"));
        assert_eq!(stop.block, None);
        let rewrite = Answer::read(
            HookEvent::PreToolUse,
            exited(
                0,
                r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"echo hi"}}}"#,
                "",
            ),
        );
        assert_eq!(rewrite.permission, Some(Permission::Ask));
        let broken = Answer::read(HookEvent::Stop, exited(0, "{oops", ""));
        assert!(broken.failed.unwrap().contains("not"));
    }

    #[test]
    fn plain_stdout_is_context_only_where_claude_code_takes_it() {
        let prompt = Answer::read(HookEvent::UserPromptSubmit, exited(0, "branch: main\n", ""));
        assert_eq!(prompt.context.as_deref(), Some("branch: main"));
        let start = Answer::read(HookEvent::SessionStart, exited(0, "hi", ""));
        assert_eq!(start.context.as_deref(), Some("hi"));
        let post = Answer::read(HookEvent::PostToolUse, exited(0, "hi", ""));
        assert_eq!(post.context, None);
    }
}

//! What a session file holds: one [`SessionRecord`] (a timestamp plus a
//! `type`-tagged [`SessionEvent`]) per line.

use serde::{Deserialize, Serialize};

use crate::agent::provider::ChatMessage;
use crate::context::MessageId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// RFC 3339 UTC time the event was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    #[serde(flatten)]
    pub event: SessionEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum SessionEvent {
    #[serde(rename = "session.started")]
    Started {
        id: String,
        workspace: String,
        created_at: String,
        model: String,
        /// Which front end started it; files written before this was
        /// recorded load as [`SessionOrigin::Unknown`].
        #[serde(default)]
        origin: SessionOrigin,
    },
    /// A conversation message, exactly as sent to / received from the model
    /// (`role`, `content`, `tool_calls`, `tool_call_id`, as the chat API
    /// spells them), with its id in the conversation (files written before
    /// ids were recorded have none: their messages are numbered in order).
    #[serde(rename = "message")]
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<MessageId>,
        #[serde(flatten)]
        message: ChatMessage,
    },
    /// What running a tool call produced, richer than the tool message the
    /// model gets (success flag, duration).
    #[serde(rename = "tool.result")]
    ToolResult {
        tool_call_id: String,
        ok: bool,
        output: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    #[serde(rename = "usage")]
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
    /// A failure shown to the user (provider error, kernel crash…).
    #[serde(rename = "error")]
    Error { message: String },
    /// The first `through` conversation messages were summarised; the
    /// prompt carries `summary` instead of them from here on. The messages
    /// themselves stay in the file (and in `context`).
    #[serde(rename = "compaction")]
    Compaction {
        summary: String,
        through: usize,
        /// Written by the model (`false`: the extractive fallback).
        #[serde(default)]
        by_model: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// The model the turns from here on went to (recorded when it
    /// changes, e.g. by `/model`); resuming in the workbench picks it again.
    /// `profile`: the `[models.NAME]` it was chosen as, when it was (its
    /// server and API come from there).
    #[serde(rename = "model")]
    Model {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<String>,
    },
    /// A finished `llm_query` sub-call made by a cell (its prompt and answer
    /// heads, tokens, time and status), written when it ends.
    #[serde(rename = "subcall")]
    Subcall(crate::subcalls::SubcallCompleted),
    /// How one of the model's cells ended, as the conversation showed it:
    /// its run time, its wait on the user, the files it changed and their
    /// diffs. Written after its tool message; a resumed conversation shows
    /// the cell with them (files written before this existed have none:
    /// their cells show no time and no changes).
    #[serde(rename = "cell")]
    Cell(CellRecord),
    /// The files open in the editor (workspace-relative), written when the
    /// workbench quits; resuming opens the last ones again.
    #[serde(rename = "tabs")]
    Tabs(OpenTabs),
    /// An event type written by a newer version: kept readable, ignored.
    #[serde(other)]
    Unknown,
}

/// See [`SessionEvent::Cell`]. Every field but the call id has a default,
/// so a record a newer or older version wrote still loads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The tool call the cell ran (its tool message answers it).
    pub tool_call_id: String,
    /// The tool message the cell's result was stored as, when known: with
    /// a call id used twice, it tells which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<MessageId>,
    /// Its run time, without the wait (`None`: it failed, or not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_ms: Option<u64>,
    /// How long it sat blocked on the user's answers.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waited_ms: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeRecord>,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// One file a cell changed, as its `✎` line showed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeRecord {
    /// The path as shown (workspace-relative inside the workspace). Only
    /// ever drawn, never opened: the file is untrusted input.
    pub path: String,
    /// The unified diff without its header (cut when very long).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
    #[serde(default)]
    pub added: usize,
    #[serde(default)]
    pub removed: usize,
    /// What the file held before is not known: no diff, no counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub earlier_unknown: bool,
}

/// See [`SessionEvent::Tabs`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenTabs {
    pub files: Vec<TabRecord>,
    /// Index of the active tab in `files`.
    #[serde(default)]
    pub active: usize,
}

/// One open file and its cursor (0-based line and character).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabRecord {
    /// Relative to the workspace. A session file is untrusted: resuming
    /// opens only files that resolve beneath the workspace.
    pub path: String,
    #[serde(default)]
    pub line: usize,
    #[serde(default)]
    pub column: usize,
}

/// Who started a session: the interactive workbench or a headless `exec`
/// run. `--continue` prefers its own kind, so a script's `exec` runs do not
/// take the place of the user's last conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionOrigin {
    Tui,
    Exec,
    /// Not recorded (an older file), or a value from a newer version.
    #[default]
    #[serde(other)]
    Unknown,
}

impl SessionOrigin {
    /// How `hello-tui sessions` names it.
    pub fn label(self) -> &'static str {
        match self {
            SessionOrigin::Tui => "tui",
            SessionOrigin::Exec => "exec",
            SessionOrigin::Unknown => "?",
        }
    }

    /// Order of preference when `prefer` asks for the latest session: its
    /// own kind first, then sessions of unknown origin (which may be
    /// either), then the other kind. Lower is preferred.
    pub(crate) fn rank_for(self, prefer: SessionOrigin) -> u8 {
        match self {
            _ if self == prefer => 0,
            SessionOrigin::Unknown => 1,
            _ => 2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shape_is_a_flat_tagged_object() {
        let record = SessionRecord {
            at: Some("2026-11-30T01:55:00Z".into()),
            event: SessionEvent::Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
            },
        };
        let line = serde_json::to_string(&record).unwrap();
        assert_eq!(
            line,
            r#"{"at":"2026-11-30T01:55:00Z","type":"usage","prompt_tokens":3,"completion_tokens":4}"#
        );
        let back: SessionRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn the_origin_is_written_and_old_files_load_as_unknown() {
        let old =
            r#"{"type":"session.started","id":"i","workspace":"w","created_at":"t","model":"m"}"#;
        let event: SessionEvent = serde_json::from_str(old).unwrap();
        assert!(matches!(
            event,
            SessionEvent::Started {
                origin: SessionOrigin::Unknown,
                ..
            }
        ));
        let started = SessionEvent::Started {
            id: "i".into(),
            workspace: "w".into(),
            created_at: "t".into(),
            model: "m".into(),
            origin: SessionOrigin::Exec,
        };
        let line = serde_json::to_string(&started).unwrap();
        assert!(line.ends_with(r#""model":"m","origin":"exec"}"#), "{line}");
        assert_eq!(
            serde_json::from_str::<SessionEvent>(&line).unwrap(),
            started
        );
        let newer = old.replace(r#""m"}"#, r#""m","origin":"ide"}"#);
        assert!(matches!(
            serde_json::from_str::<SessionEvent>(&newer).unwrap(),
            SessionEvent::Started {
                origin: SessionOrigin::Unknown,
                ..
            }
        ));
    }

    /// Issue 27: how a cell ended and the open tabs are events of their
    /// own; every field but the call id and the paths may be missing.
    #[test]
    fn cells_and_tabs_round_trip_and_load_with_defaults() {
        let cell = SessionEvent::Cell(CellRecord {
            tool_call_id: "c".into(),
            message: Some(MessageId(4)),
            run_ms: Some(12),
            waited_ms: 6025,
            changes: vec![ChangeRecord {
                path: "auth.ts".into(),
                diff: "@@ -1 +1 @@\n-a\n+b\n".into(),
                added: 1,
                removed: 1,
                earlier_unknown: false,
            }],
        });
        let line = serde_json::to_string(&cell).unwrap();
        assert!(
            line.starts_with(
                r#"{"type":"cell","tool_call_id":"c","message":4,"run_ms":12,"waited_ms":6025,"#
            ),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<SessionEvent>(&line).unwrap(), cell);
        let bare: SessionEvent =
            serde_json::from_str(r#"{"type":"cell","tool_call_id":"c","changes":[{"path":"x"}]}"#)
                .unwrap();
        let SessionEvent::Cell(bare) = bare else {
            panic!("{bare:?}")
        };
        assert_eq!((bare.run_ms, bare.waited_ms, bare.message), (None, 0, None));
        assert_eq!(bare.changes[0].diff, "");

        let tabs = SessionEvent::Tabs(OpenTabs {
            files: vec![TabRecord {
                path: "src/a.rs".into(),
                line: 3,
                column: 1,
            }],
            active: 0,
        });
        let line = serde_json::to_string(&tabs).unwrap();
        assert_eq!(
            line,
            r#"{"type":"tabs","files":[{"path":"src/a.rs","line":3,"column":1}],"active":0}"#
        );
        assert_eq!(serde_json::from_str::<SessionEvent>(&line).unwrap(), tabs);
    }

    #[test]
    fn unknown_types_load_as_unknown() {
        let record: SessionRecord =
            serde_json::from_str(r#"{"type":"cell.started","code":"1"}"#).unwrap();
        assert_eq!(record.event, SessionEvent::Unknown);
    }

    /// The file keeps the chat API's shape, so sessions written before ids
    /// existed still load, and each line says which message it is.
    #[test]
    fn messages_round_trip_through_events() {
        let old = r#"{"type":"message","role":"assistant","content":null,"tool_calls":[{"id":"c","name":"code_action","arguments":"{}"}]}"#;
        let event: SessionEvent = serde_json::from_str(old).unwrap();
        assert!(matches!(
            event,
            SessionEvent::Message { id: None, message: ChatMessage::Assistant { content: None, ref tool_calls, .. } }
                if tool_calls.len() == 1
        ));
        let line = serde_json::to_string(&SessionEvent::Message {
            id: Some(MessageId(7)),
            message: ChatMessage::User {
                content: "hi".into(),
            },
        })
        .unwrap();
        assert_eq!(
            line,
            r#"{"type":"message","id":7,"role":"user","content":"hi"}"#
        );
        for message in [
            ChatMessage::User {
                content: "hi".into(),
            },
            ChatMessage::Assistant {
                thinking: Vec::new(),
                content: None,
                tool_calls: vec![crate::agent::provider::ToolCall {
                    id: "c".into(),
                    name: "python".into(),
                    arguments: "{\"code\":\"1\"}".into(),
                }],
            },
            ChatMessage::Tool {
                tool_call_id: "c".into(),
                content: "1".into(),
            },
        ] {
            let event = SessionEvent::Message {
                id: Some(MessageId(3)),
                message,
            };
            let line = serde_json::to_string(&event).unwrap();
            let back: SessionEvent = serde_json::from_str(&line).unwrap();
            assert_eq!(back, event);
        }
    }
}

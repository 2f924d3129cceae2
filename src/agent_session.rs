//! The one way an agent turn is set up and run. The workbench
//! (`app::agent`), `hello-tui exec` and the loop of an `rlm_query`
//! (`subcalls::nested`) each build an [`AgentSession`] from what differs
//! between them (the model, the kernel and who approves its cells, the
//! limits, the window, the token counter, the `llm` capability, the MCP
//! servers, where a session file is made) and hand it a conversation and a
//! [`TurnInput`]; the order of the steps around `agent::turn::run_turn`
//! (allowances, tools, instructions, counter, session file) is written
//! here only.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::{Mutex, mpsc, watch};

use crate::agent::conversation::Conversation;
use crate::agent::instructions::ProjectInstructions;
use crate::agent::turn::{TurnDeps, TurnEvent, TurnOutcome, TurnSnapshot, run_turn};
use crate::mcp::{McpDirectory, SETTLE_WAIT};
use crate::session::{SessionError, SessionOrigin, SessionWriter};
use crate::subcalls::Subcalls;
use crate::tokens::TokenCounter;

/// Where a conversation without a session file gets one at its turn.
#[derive(Debug, Clone)]
pub struct SessionStore {
    pub workspace: PathBuf,
    pub origin: SessionOrigin,
}

impl SessionStore {
    /// A new session file for a conversation with the model `label`.
    pub fn create(&self, label: &str) -> Result<SessionWriter, SessionError> {
        SessionWriter::create(&self.workspace, label, self.origin)
    }
}

/// What the turn's set-up tells the front end about the session file,
/// before any turn event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionNote {
    /// The conversation's file was made, under this id.
    Started(String),
    /// It could not be made: the conversation is not saved.
    NotSaved(String),
}

/// What each turn brings, read anew by the front end for it.
pub(crate) struct TurnInput {
    pub prompt: String,
    pub snapshot: Option<TurnSnapshot>,
    /// The project's `AGENTS.md` files as of this turn.
    pub instructions: Option<ProjectInstructions>,
    /// The `[models.NAME]` profile the turn goes to (`None`: the configured
    /// model), recorded with the conversation.
    pub profile: Option<String>,
}

/// How a turn ended, and the session file's write error if there was one
/// (told after the turn's own events).
pub(crate) struct TurnEnd {
    pub outcome: TurnOutcome,
    pub session_error: Option<String>,
}

/// One agent set up to run turns on a conversation.
pub(crate) struct AgentSession {
    /// The model, the kernel its cells run in, who approves them, the
    /// snapshot channel, the limits and the window.
    pub deps: TurnDeps,
    /// The model's token counter; `None` keeps the conversation's own.
    pub counter: Option<Arc<TokenCounter>>,
    /// The kernel's `llm` capability: its allowances start again with each
    /// turn and it records into the conversation's session file. `None`
    /// where the turn is itself a sub-call (`rlm_query`): the calling
    /// turn's allowances hold.
    pub subcalls: Option<Subcalls>,
    /// MCP servers whose tools the prompt lists.
    pub mcp: Option<McpDirectory>,
    /// `None`: a conversation without a file stays without one (a nested
    /// loop's; `exec` makes its file before the turn).
    pub store: Option<SessionStore>,
}

impl AgentSession {
    /// Readies `conversation` for a turn on `input` and runs it; `events`
    /// gets the turn's events, `cancel` stops it, `note` hears about the
    /// session file first. The conversation is locked only once the MCP
    /// servers had their moment, so a reader (F2's view) is not kept out
    /// while they start.
    pub async fn run_turn(
        &self,
        conversation: &Mutex<Conversation>,
        input: TurnInput,
        events: &mpsc::UnboundedSender<TurnEvent>,
        cancel: watch::Receiver<bool>,
        note: &(dyn Fn(SessionNote) + Send + Sync),
    ) -> TurnEnd {
        if let Some(subcalls) = &self.subcalls {
            subcalls.begin_turn();
        }
        let tools = match &self.mcp {
            Some(mcp) => {
                // Servers still starting get a moment: the prompt lists
                // their tools.
                mcp.settled(SETTLE_WAIT).await;
                mcp.prompt_section()
            }
            None => None,
        };
        let mut conversation = conversation.lock().await;
        conversation.set_instructions(input.instructions);
        conversation.set_profile(input.profile);
        conversation.set_kernel_tools(tools);
        if let Some(counter) = &self.counter
            && !Arc::ptr_eq(conversation.counter(), counter)
        {
            // Recounts every entry once.
            conversation.set_counter(Arc::clone(counter));
        }
        if let Some(store) = &self.store
            && conversation.session_id().is_none()
        {
            match store.create(&self.deps.provider.label()) {
                Ok(session) => {
                    note(SessionNote::Started(session.id().to_owned()));
                    conversation.set_session(session);
                }
                Err(error) => note(SessionNote::NotSaved(error.to_string())),
            }
        }
        self.deps.hooks.set_session(
            conversation.session_id(),
            conversation
                .session_writer()
                .map(|writer| writer.path().to_path_buf()),
        );
        if let (Some(subcalls), Some(session)) = (&self.subcalls, conversation.session_writer()) {
            subcalls.record_to(Some(session));
        }
        let outcome = run_turn(
            &self.deps,
            &mut conversation,
            &input.prompt,
            input.snapshot,
            events,
            cancel,
        )
        .await;
        TurnEnd {
            outcome,
            session_error: conversation.session_error.take(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::provider::ScriptedProvider;
    use crate::agent::turn::AllowCells;
    use crate::context::{SharedContext, snapshot_channel};
    use crate::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
    use crate::tokens::ContextWindow;
    use std::sync::Mutex as StdMutex;

    /// A session answering in text (no cell runs, so no kernel starts).
    fn session(root: &std::path::Path, store: bool) -> AgentSession {
        let script = r#"{"delay_ms":0,"turns":[{"text":"one"},{"text":"two"}]}"#;
        let (kernel, _) =
            CodeRuntime::new(KernelConfig::for_workspace(root), CapabilityRegistry::new());
        AgentSession {
            deps: TurnDeps {
                provider: Arc::new(ScriptedProvider::from_json(script).unwrap()),
                runner: Arc::new(kernel),
                approval: Arc::new(AllowCells),
                snapshot_tx: snapshot_channel().0,
                max_steps: 4,
                cell_timeout: None,
                window: ContextWindow::resolve(Some(32_000), None, "m", None, None),
                hooks: crate::hooks::Hooks::default(),
            },
            counter: Some(Arc::new(TokenCounter::estimate())),
            subcalls: None,
            mcp: None,
            store: store.then(|| SessionStore {
                workspace: root.to_path_buf(),
                origin: SessionOrigin::Exec,
            }),
        }
    }

    fn input(prompt: &str) -> TurnInput {
        TurnInput {
            prompt: prompt.to_owned(),
            snapshot: None,
            instructions: Some(ProjectInstructions {
                text: "## AGENTS.md\nbe brief".into(),
                files: vec!["AGENTS.md".into()],
                truncated: false,
            }),
            profile: Some("fast".into()),
        }
    }

    /// The session file is made at the first turn, said before any turn
    /// event, and kept for the next; the turn's inputs and the counter are
    /// the conversation's during the turn.
    #[tokio::test]
    async fn a_turn_is_set_up_once_the_same_way() {
        let root = tempfile::tempdir().unwrap();
        let session = session(root.path(), true);
        let conversation = Mutex::new(Conversation::new(SharedContext::default(), None));
        let (tx, rx) = mpsc::unbounded_channel();
        let rx = StdMutex::new(rx);
        let notes = StdMutex::new(Vec::new());
        let note = |note: SessionNote| {
            assert!(rx.lock().unwrap().is_empty(), "the note comes first");
            notes.lock().unwrap().push(note);
        };
        for prompt in ["first", "second"] {
            let (_keep, cancel) = watch::channel(false);
            let end = session
                .run_turn(&conversation, input(prompt), &tx, cancel, &note)
                .await;
            assert!(
                matches!(end.outcome, TurnOutcome::Completed { .. }),
                "{:?}",
                end.outcome
            );
            assert_eq!(end.session_error, None);
            let mut rx = rx.lock().unwrap();
            assert!(!rx.is_empty(), "the turn's events were sent");
            while rx.try_recv().is_ok() {}
        }
        let notes = notes.into_inner().unwrap();
        let conversation = conversation.into_inner();
        let id = conversation.session_id().unwrap();
        assert_eq!(notes, [SessionNote::Started(id.to_owned())]);
        assert!(crate::session::load(root.path(), id).is_ok());
        assert_eq!(conversation.profile(), Some("fast"));
        assert!(conversation.instructions().is_some());
        assert!(Arc::ptr_eq(
            conversation.counter(),
            session.counter.as_ref().unwrap()
        ));
        assert_eq!(conversation.messages().len(), 4);
    }

    /// Without a store (an `rlm_query` loop) nothing is saved or said.
    #[tokio::test]
    async fn a_session_without_a_store_saves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let session = session(root.path(), false);
        let conversation = Mutex::new(Conversation::new(SharedContext::default(), None));
        let (tx, _rx) = mpsc::unbounded_channel();
        let (_keep, cancel) = watch::channel(false);
        let end = session
            .run_turn(&conversation, input("q"), &tx, cancel, &|note| {
                panic!("{note:?}")
            })
            .await;
        assert!(matches!(end.outcome, TurnOutcome::Completed { .. }));
        assert_eq!(conversation.into_inner().session_id(), None);
        assert!(!root.path().join(".hello-tui").exists());
    }
}

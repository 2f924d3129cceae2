//! The handle a caller holds while a model answers, and the assembler that
//! turns the event stream into one [`AssistantTurn`].

use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::types::{
    ChatMessage, FinishReason, ProviderError, ProviderEvent, Thinking, ToolCall, Usage,
};

/// How many events may wait unread before the producer pauses. Small: the
/// UI drains it every frame, and backpressure beats unbounded memory.
pub const EVENT_BUFFER: usize = 256;

/// A running model call. Read events with [`ProviderStream::next`]; the
/// producing task stops (and the HTTP connection closes) on
/// [`ProviderStream::cancel`], on a [`CancelHandle::cancel`], or when this is
/// dropped.
#[derive(Debug)]
pub struct ProviderStream {
    events: mpsc::Receiver<ProviderEvent>,
    cancel: CancelHandle,
}

/// Cancels a running model call from anywhere (e.g. the UI loop after it
/// moved the stream into a forwarding task). Cheap to clone.
#[derive(Debug, Clone)]
pub struct CancelHandle(AbortHandle);

impl CancelHandle {
    pub fn cancel(&self) {
        self.0.abort();
    }
}

impl ProviderStream {
    /// Spawns `produce` on the current tokio runtime, handing it the sender.
    /// Must be called from inside a runtime (the UI loop is one).
    pub fn spawn<F, Fut>(produce: F) -> Self
    where
        F: FnOnce(mpsc::Sender<ProviderEvent>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (tx, events) = mpsc::channel(EVENT_BUFFER);
        let task = tokio::spawn(produce(tx));
        ProviderStream {
            events,
            cancel: CancelHandle(task.abort_handle()),
        }
    }

    /// The next event; `None` once the call is over (finished, failed or
    /// cancelled).
    pub async fn next(&mut self) -> Option<ProviderEvent> {
        self.events.recv().await
    }

    /// Stops the call now: the task is aborted, which drops the HTTP
    /// response and closes the connection; no further events arrive.
    pub fn cancel(&mut self) {
        self.cancel.cancel();
        self.events.close();
        // Events already buffered belong to the cancelled call: drop them.
        while self.events.try_recv().is_ok() {}
    }

    /// Reads the whole stream and assembles the turn (for `exec` mode and
    /// tests; the UI feeds a [`TurnAssembler`] itself as events arrive).
    pub async fn collect(mut self) -> AssistantTurn {
        let mut assembler = TurnAssembler::default();
        while let Some(event) = self.next().await {
            assembler.push(&event);
        }
        assembler.finish()
    }
}

impl Drop for ProviderStream {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// The model's complete answer for one call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AssistantTurn {
    pub text: String,
    /// All the reasoning, as shown (every block's text joined).
    pub reasoning: String,
    /// The reasoning blocks in order, with their signatures when signed.
    pub thinking: Vec<Thinking>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: Option<FinishReason>,
    /// The stream did not complete (error or cancel): what is here is what
    /// arrived before it stopped.
    pub partial: bool,
    pub error: Option<ProviderError>,
    /// How many retries happened before the answer (for the status bar).
    pub retries: u32,
}

impl AssistantTurn {
    /// The message to append to the conversation for the next model call.
    /// `None` when the model said nothing at all (e.g. cancelled at once).
    /// Reasoning is not the answer: only signed blocks go in, because
    /// Anthropic wants them back with the tool calls they led to.
    pub fn to_message(&self) -> Option<ChatMessage> {
        if self.text.is_empty() && self.tool_calls.is_empty() {
            return None;
        }
        let signed = self.thinking.iter().all(Thinking::is_verifiable);
        Some(ChatMessage::Assistant {
            content: (!self.text.is_empty()).then(|| self.text.clone()),
            tool_calls: self.tool_calls.clone(),
            thinking: if signed {
                self.thinking.clone()
            } else {
                Vec::new()
            },
        })
    }
}

/// Folds [`ProviderEvent`]s into an [`AssistantTurn`], incrementally, so
/// the UI can show the turn as it grows.
#[derive(Debug, Default)]
pub struct TurnAssembler {
    turn: AssistantTurn,
}

impl TurnAssembler {
    pub fn push(&mut self, event: &ProviderEvent) {
        let turn = &mut self.turn;
        match event {
            ProviderEvent::TextDelta(text) => turn.text.push_str(text),
            ProviderEvent::ReasoningDelta(text) => {
                turn.reasoning.push_str(text);
                match turn.thinking.last_mut() {
                    Some(open) if !open.is_verifiable() => open.text.push_str(text),
                    _ => turn.thinking.push(Thinking {
                        text: text.clone(),
                        signature: None,
                        redacted: None,
                    }),
                }
            }
            ProviderEvent::ReasoningSigned(signature) => match turn.thinking.last_mut() {
                Some(open) if !open.is_verifiable() => open.signature = Some(signature.clone()),
                // A block with no visible text (its display omitted).
                _ => turn.thinking.push(Thinking {
                    text: String::new(),
                    signature: Some(signature.clone()),
                    redacted: None,
                }),
            },
            ProviderEvent::ReasoningRedacted(data) => turn.thinking.push(Thinking {
                text: String::new(),
                signature: None,
                redacted: Some(data.clone()),
            }),
            ProviderEvent::ToolCallStarted { index, id, name } => {
                if turn.tool_calls.len() <= *index {
                    turn.tool_calls.resize_with(*index + 1, || ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                }
                turn.tool_calls[*index].id.clone_from(id);
                turn.tool_calls[*index].name.clone_from(name);
            }
            ProviderEvent::ToolCallArgumentsDelta { index, delta } => {
                if let Some(call) = turn.tool_calls.get_mut(*index) {
                    call.arguments.push_str(delta);
                }
            }
            ProviderEvent::Usage(usage) => turn.usage = Some(*usage),
            ProviderEvent::Finished(reason) => turn.finish_reason = Some(reason.clone()),
            ProviderEvent::Retrying { .. } => turn.retries += 1,
            ProviderEvent::Error(error) => turn.error = Some(error.clone()),
        }
    }

    /// The turn so far (for rendering while it streams).
    pub fn turn(&self) -> &AssistantTurn {
        &self.turn
    }

    /// Ends the turn: without a `Finished` event it is partial (failed or
    /// cancelled).
    pub fn finish(mut self) -> AssistantTurn {
        self.turn.partial = self.turn.finish_reason.is_none() || self.turn.error.is_some();
        self.turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_tool_call_events_assemble_by_index() {
        let mut a = TurnAssembler::default();
        for event in [
            ProviderEvent::TextDelta("Let me ".into()),
            ProviderEvent::TextDelta("look.".into()),
            ProviderEvent::ToolCallStarted {
                index: 0,
                id: "a".into(),
                name: "f".into(),
            },
            ProviderEvent::ToolCallStarted {
                index: 1,
                id: "b".into(),
                name: "g".into(),
            },
            ProviderEvent::ToolCallArgumentsDelta {
                index: 1,
                delta: "{\"y\":".into(),
            },
            ProviderEvent::ToolCallArgumentsDelta {
                index: 0,
                delta: "{}".into(),
            },
            ProviderEvent::ToolCallArgumentsDelta {
                index: 1,
                delta: "2}".into(),
            },
            ProviderEvent::Finished(FinishReason::ToolCalls),
        ] {
            a.push(&event);
        }
        let turn = a.finish();
        assert_eq!(turn.text, "Let me look.");
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].arguments, "{}");
        assert_eq!(turn.tool_calls[1].name, "g");
        assert_eq!(turn.tool_calls[1].arguments, "{\"y\":2}");
        assert!(!turn.partial);
        match turn.to_message() {
            Some(ChatMessage::Assistant {
                content,
                tool_calls,
                thinking,
            }) => {
                assert!(thinking.is_empty());
                assert_eq!(content.as_deref(), Some("Let me look."));
                assert_eq!(tool_calls, turn.tool_calls);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn signed_blocks_go_into_the_message_and_unsigned_reasoning_does_not() {
        let mut a = TurnAssembler::default();
        for event in [
            ProviderEvent::ReasoningDelta("Look at ".into()),
            ProviderEvent::ReasoningDelta("the file.".into()),
            ProviderEvent::ReasoningSigned("sig1".into()),
            ProviderEvent::ReasoningRedacted("opaque".into()),
            ProviderEvent::ReasoningSigned("sig-only".into()),
            ProviderEvent::TextDelta("Reading.".into()),
            ProviderEvent::Finished(FinishReason::Stop),
        ] {
            a.push(&event);
        }
        let turn = a.finish();
        assert_eq!(turn.reasoning, "Look at the file.");
        let Some(ChatMessage::Assistant { thinking, .. }) = turn.to_message() else {
            panic!("an assistant message");
        };
        let shape: Vec<(&str, Option<&str>, Option<&str>)> = thinking
            .iter()
            .map(|t| {
                (
                    t.text.as_str(),
                    t.signature.as_deref(),
                    t.redacted.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("Look at the file.", Some("sig1"), None),
                ("", None, Some("opaque")),
                ("", Some("sig-only"), None),
            ]
        );

        let mut a = TurnAssembler::default();
        a.push(&ProviderEvent::ReasoningDelta("hmm".into()));
        a.push(&ProviderEvent::TextDelta("42".into()));
        a.push(&ProviderEvent::Finished(FinishReason::Stop));
        let turn = a.finish();
        assert_eq!(turn.reasoning, "hmm");
        assert_eq!(
            turn.to_message(),
            Some(ChatMessage::assistant(Some("42".into()), vec![]))
        );
    }

    #[test]
    fn an_empty_turn_is_no_message() {
        assert_eq!(AssistantTurn::default().to_message(), None);
    }

    #[test]
    fn a_turn_without_finish_is_partial() {
        let mut a = TurnAssembler::default();
        a.push(&ProviderEvent::TextDelta("half".into()));
        a.push(&ProviderEvent::Error(ProviderError::StreamInterrupted(
            "reset".into(),
        )));
        let turn = a.finish();
        assert!(turn.partial);
        assert_eq!(turn.text, "half");
        assert!(turn.error.is_some());
    }
}

//! The provider an `rlm_query` loop talks to: the sub-call model, with each
//! of its calls taken from the turn's allowance, its tokens counted into
//! the turn's and the loop's totals, its answer capped and its time bounded,
//! so a nested loop is bounded exactly like `llm_query` calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::time::Instant;

use super::Hub;
use crate::agent::provider::{
    ChatRequest, ModelProvider, ProviderError, ProviderEvent, ProviderStream,
};

/// What one nested loop spent, read when it ends.
#[derive(Debug, Default)]
pub(super) struct Spent {
    pub prompt_tokens: AtomicU64,
    pub completion_tokens: AtomicU64,
    /// A call was refused by the turn's allowance (the loop then fails,
    /// and the cell gets `SubcallLimitError`).
    pub limited: AtomicBool,
}

pub(super) struct Metered {
    pub inner: Arc<dyn ModelProvider>,
    pub hub: Arc<Hub>,
    pub max_tokens: Option<u32>,
    pub spent: Arc<Spent>,
}

impl ModelProvider for Metered {
    fn stream_chat(&self, mut request: ChatRequest) -> ProviderStream {
        if let Err(limit) = self.hub.ledger.take_calls(1, &self.hub.limits) {
            self.spent.limited.store(true, Ordering::Relaxed);
            let message = limit.to_string();
            return ProviderStream::spawn(move |tx| async move {
                let _ = tx
                    .send(ProviderEvent::Error(ProviderError::Api(message)))
                    .await;
            });
        }
        if request.max_tokens.is_none() {
            request.max_tokens = self.max_tokens;
        }
        let mut stream = self.inner.stream_chat(request);
        let hub = Arc::clone(&self.hub);
        let spent = Arc::clone(&self.spent);
        let deadline = Instant::now() + hub.limits.call_timeout;
        ProviderStream::spawn(move |tx| async move {
            loop {
                let event = match tokio::time::timeout_at(deadline, stream.next()).await {
                    Ok(Some(event)) => event,
                    Ok(None) => break,
                    Err(_) => {
                        let message = format!(
                            "no answer within {:.0} s ([subcalls] call_timeout_secs)",
                            hub.limits.call_timeout.as_secs_f64()
                        );
                        let error = ProviderError::StreamInterrupted(message);
                        let _ = tx.send(ProviderEvent::Error(error)).await;
                        break;
                    }
                };
                if let ProviderEvent::Usage(usage) = &event {
                    hub.ledger
                        .add_tokens(usage.prompt_tokens + usage.completion_tokens);
                    spent
                        .prompt_tokens
                        .fetch_add(usage.prompt_tokens, Ordering::Relaxed);
                    spent
                        .completion_tokens
                        .fetch_add(usage.completion_tokens, Ordering::Relaxed);
                }
                if tx.send(event).await.is_err() {
                    break;
                }
            }
        })
    }

    fn label(&self) -> String {
        self.inner.label()
    }
}

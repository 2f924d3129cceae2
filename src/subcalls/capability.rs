//! The `llm` capability: `llm_query` and `llm_query_batched` in a cell.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{BoxFuture, try_join_all};
use serde_json::{Value, json};

use super::privacy::SecretFiles;
use super::{Hub, InFlight, SubcallKind, SubcallStatus, Subcalls, Target};
use crate::agent::provider::redact::redact_known;
use crate::agent::provider::{ChatMessage, ChatRequest, Usage};
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, arg_str, lock,
};

/// How long a look at the secrets files is reused (the sandbox's nested
/// `.git` list is reused as long).
const SECRETS_FRESH: Duration = Duration::from_secs(2);

/// What every action accepts besides the prompt(s).
pub(super) struct Options {
    pub model: Option<String>,
    pub max_tokens: Option<u32>,
    pub system: Option<String>,
}

impl Options {
    fn from_args(args: &Value) -> Result<Self, CapabilityError> {
        let text = |name: &str| match args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(CapabilityError::InvalidArgument(format!(
                "{name} must be a string or None"
            ))),
        };
        let max_tokens = match args.get("max_tokens") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                value
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        CapabilityError::InvalidArgument(
                            "max_tokens must be a positive whole number".to_owned(),
                        )
                    })?,
            ),
        };
        Ok(Self {
            model: text("model")?,
            max_tokens,
            system: text("system")?,
        })
    }
}

fn action(name: &str, global: &str, first: &str, description: &str) -> ActionSpec {
    ActionSpec::new(name, description)
        .param(first)
        .keyword("model", Value::Null)
        .keyword("max_tokens", Value::Null)
        .keyword("system", Value::Null)
        .global(global)
}

impl Capability for Subcalls {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "llm".to_owned(),
            description: "Ask a model from code: one prompt, or many at once. The answering \
                          model has no tools."
                .to_owned(),
            actions: vec![
                action(
                    "query",
                    "llm_query",
                    "prompt",
                    "Ask the model `prompt` (with an optional `system` message); returns its \
                     answer as a string. Raises SubcallLimitError past the turn's budget.",
                ),
                action(
                    "query_batched",
                    "llm_query_batched",
                    "prompts",
                    "Ask every prompt of the list, several at once; returns the answers in \
                     the same order. Raises if any call fails.",
                ),
                action(
                    "rlm",
                    "rlm_query",
                    "prompt",
                    "Hand `prompt` to a nested agent: the model with a fresh kernel of its own \
                     and the code_action tool, looping until it answers; returns the answer. \
                     Nests at most [subcalls] max_depth deep.",
                ),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let me = self.clone();
        let action = action.to_owned();
        Box::pin(async move {
            let hub = &me.inner;
            let options = Options::from_args(&args)?;
            let prompts = match action.as_str() {
                "rlm" => {
                    let prompt = arg_str(&args, "prompt")?.to_owned();
                    let answer = hub.ask_nested(&me, prompt, &options, ctx.exec_id).await?;
                    return Ok(Value::String(answer));
                }
                "query" => vec![arg_str(&args, "prompt")?.to_owned()],
                "query_batched" => prompts(&args)?,
                other => return Err(CapabilityError::no_action("llm", other)),
            };
            let answers = hub.ask_all(prompts, &options, ctx.exec_id).await?;
            Ok(match action.as_str() {
                "query" => answers
                    .into_iter()
                    .next()
                    .map_or(Value::Null, Value::String),
                _ => json!(answers),
            })
        })
    }
}

fn prompts(args: &Value) -> Result<Vec<String>, CapabilityError> {
    let invalid =
        || CapabilityError::InvalidArgument("prompts must be a list of strings".to_owned());
    args.get("prompts")
        .and_then(Value::as_array)
        .ok_or_else(invalid)?
        .iter()
        .map(|p| p.as_str().map(str::to_owned).ok_or_else(invalid))
        .collect()
}

impl Hub {
    /// Every prompt asked, at most `concurrency` at a time, answers in
    /// order. The first failure ends the call (the others are dropped,
    /// which cancels them).
    async fn ask_all(
        &self,
        prompts: Vec<String>,
        options: &Options,
        exec_id: Option<u64>,
    ) -> Result<Vec<String>, CapabilityError> {
        let Some(first) = prompts.first() else {
            return Ok(Vec::new());
        };
        let target = self.target(options.model.as_deref())?;
        self.refuse_secrets(&prompts, options).await?;
        let count = u32::try_from(prompts.len()).unwrap_or(u32::MAX);
        let calls = match prompts.len() {
            1 => "1 sub-call".to_owned(),
            n => format!("{n} sub-calls"),
        };
        self.take_and_approve(&target, count, &calls, first).await?;
        let total = prompts.len();
        try_join_all(prompts.into_iter().enumerate().map(|(i, prompt)| {
            let target = &target;
            async move {
                self.ask_one(target, &prompt, options, exec_id)
                    .await
                    .map_err(|err| match total {
                        1 => err,
                        _ => in_batch(err, i, total),
                    })
            }
        }))
        .await
    }

    /// Refuses prompts (and a system message) quoting a secrets file.
    pub(super) async fn refuse_secrets(
        &self,
        prompts: &[String],
        options: &Options,
    ) -> Result<(), CapabilityError> {
        let secrets = self.secret_files().await?;
        prompts
            .iter()
            .chain(options.system.iter())
            .try_for_each(|text| secrets.check(text))
    }

    /// The workspace's secrets files, read again when the last look is
    /// older than [`SECRETS_FRESH`]: walking and matching a real tree
    /// costs milliseconds, which a loop of `llm_query` calls would pay each
    /// time.
    async fn secret_files(&self) -> Result<Arc<SecretFiles>, CapabilityError> {
        if let Some((at, secrets)) = lock(&self.secrets).as_ref()
            && at.elapsed() < SECRETS_FRESH
        {
            return Ok(Arc::clone(secrets));
        }
        let root = self.workspace.clone();
        let secrets = tokio::task::spawn_blocking(move || SecretFiles::scan(&root))
            .await
            .map(Arc::new)
            .map_err(|e| CapabilityError::Failed(format!("the secrets check failed: {e}")))?;
        *lock(&self.secrets) = Some((Instant::now(), Arc::clone(&secrets)));
        Ok(secrets)
    }

    async fn ask_one(
        &self,
        target: &Target,
        prompt: &str,
        options: &Options,
        exec_id: Option<u64>,
    ) -> Result<String, CapabilityError> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| CapabilityError::Failed("sub-calls are shut down".to_owned()))?;
        self.ledger.check_tokens(&self.limits)?;
        // Whatever leaves the machine is redacted like a session file:
        // every key this process holds, and anything key-shaped.
        let prompt = redact_known(prompt);
        let mut messages = Vec::with_capacity(2);
        if let Some(system) = &options.system {
            messages.push(ChatMessage::System {
                content: redact_known(system),
            });
        }
        messages.push(ChatMessage::User {
            content: prompt.clone(),
        });
        let request = ChatRequest {
            messages,
            // No tools: the answering model cannot run code, so cannot recurse.
            tools: Vec::new(),
            temperature: None,
            max_tokens: options.max_tokens.or(self.limits.max_tokens),
        };
        let flight = InFlight::start(self, SubcallKind::LlmQuery, exec_id, &target.label, &prompt);
        let stream = target.provider.stream_chat(request);
        let timeout = self.limits.call_timeout;
        let Ok(answer) = tokio::time::timeout(timeout, stream.collect()).await else {
            let message = format!(
                "no answer within {:.0} s ([subcalls] call_timeout_secs)",
                timeout.as_secs_f64()
            );
            flight.finish(SubcallStatus::TimedOut, "", (0, 0), Some(message.clone()));
            return Err(CapabilityError::Timeout(message));
        };
        let tokens = counted(answer.usage, &prompt, &answer.text);
        self.ledger.add_tokens(tokens.0 + tokens.1);
        if let Some(error) = answer.error {
            let message = error.to_string();
            flight.finish(
                SubcallStatus::Failed,
                &answer.text,
                tokens,
                Some(message.clone()),
            );
            return Err(CapabilityError::Failed(message));
        }
        flight.finish(SubcallStatus::Ok, &answer.text, tokens, None);
        Ok(answer.text)
    }
}

/// The server's token counts, else 4 characters a token.
fn counted(usage: Option<Usage>, prompt: &str, answer: &str) -> (u64, u64) {
    match usage {
        Some(usage) if usage.total_tokens > 0 || usage.prompt_tokens > 0 => {
            (usage.prompt_tokens, usage.completion_tokens)
        }
        _ => {
            let estimate = |text: &str| (text.chars().count() as u64).div_ceil(4);
            (estimate(prompt), estimate(answer))
        }
    }
}

/// Says which prompt of a batch failed, keeping the error's kind.
fn in_batch(err: CapabilityError, i: usize, total: usize) -> CapabilityError {
    let at = |message: String| format!("prompt {} of {total}: {message}", i + 1);
    match err {
        CapabilityError::Timeout(m) => CapabilityError::Timeout(at(m)),
        CapabilityError::Failed(m) => CapabilityError::Failed(at(m)),
        CapabilityError::SubcallLimit(m) => CapabilityError::SubcallLimit(at(m)),
        other => other,
    }
}

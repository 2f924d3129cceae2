//! The turn loop: one user message in, model calls and kernel cells until
//! the model answers without a tool call (or `max_steps` is reached).
//!
//! No terminal code: the TUI and `exec` both drive [`run_turn`] and read
//! the [`TurnEvent`]s it sends. The kernel is behind [`CodeRunner`] (the TUI
//! routes cells through its kernel service so they appear as cells; `exec`
//! uses the runtime directly) and approval behind [`CellApproval`].

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

pub(crate) use super::conversation::with_hook_context;
use super::conversation::{
    Conversation, HOOK_CONTEXT_CLOSE, HOOK_CONTEXT_OPEN, code_of, user_content,
};
use super::prompt::{self, Prompt, compact};
use super::provider::{
    CUT_OFF_MARK, ChatMessage, FinishReason, ModelProvider, Overflow, ProviderError, ProviderEvent,
    ToolSpec, TurnAssembler, Usage,
};
use super::tool_result;
use crate::context::{MessageId, PublishedSnapshot};
use crate::hooks::PromptGate;
use crate::kernel::{CODE_ACTION_TOOL as TOOL_NAME, CodeRuntime, ExecResult, RuntimeState};
use crate::tokens::ContextWindow;

/// The system prompt, embedded at build time.
pub const SYSTEM_PROMPT: &str = include_str!("../../assets/prompts/system.md");
pub(crate) const DEFAULT_MAX_STEPS: u32 = 20;
/// How often a cancelled cell is interrupted again until it returns.
const INTERRUPT_REPEAT: Duration = Duration::from_secs(1);

/// The one tool the model gets.
pub fn code_action_tool() -> ToolSpec {
    ToolSpec {
        name: TOOL_NAME.into(),
        description: "Run Python in the persistent kernel of the workspace. Variables persist \
                      between calls; `fs`, `shell` and `context` are globals. Returns JSON with \
                      ok, stdout, stderr, value, error and state (the kernel's variables)."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": { "code": { "type": "string", "description": "Python source to run" } },
            "required": ["code"],
            "additionalProperties": false,
        }),
    }
}

/// A cell the runner has started.
pub struct RunningCell {
    /// The front end's own id of the cell showing it (the TUI's kernel
    /// service cell), so the result can be tied to what is on screen.
    pub shown_as: Option<u64>,
    pub result: BoxFuture<'static, ExecResult>,
}

/// Runs the model's code. Implementations must not block the caller.
pub trait CodeRunner: Send + Sync + 'static {
    fn run(&self, code: String, timeout: Option<Duration>) -> RunningCell;
    /// SIGINT the running cell (variables kept).
    fn interrupt(&self);
    fn state(&self) -> BoxFuture<'static, RuntimeState>;
}

impl CodeRunner for CodeRuntime {
    fn run(&self, code: String, timeout: Option<Duration>) -> RunningCell {
        let runtime = self.clone();
        RunningCell {
            shown_as: None,
            result: Box::pin(async move { runtime.execute(&code, timeout).await }),
        }
    }

    fn interrupt(&self) {
        CodeRuntime::interrupt(self);
    }

    fn state(&self) -> BoxFuture<'static, RuntimeState> {
        let runtime = self.clone();
        Box::pin(async move {
            runtime
                .describe()
                .await
                .unwrap_or_else(|_| RuntimeState::dead())
        })
    }
}

/// Whether a cell the model wrote may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Deny(String),
}

/// Asked before each cell. The TUI connects its approval overlay here
/// (`app::approvals::approve_cell`); without one every cell runs (the
/// kernel's sandbox and the shell capability's own policy still apply).
pub trait CellApproval: Send + Sync + 'static {
    fn approve_cell(&self, code: &str) -> BoxFuture<'static, Verdict>;
}

/// `auto`: every cell runs.
pub struct AllowCells;

impl CellApproval for AllowCells {
    fn approve_cell(&self, _code: &str) -> BoxFuture<'static, Verdict> {
        Box::pin(async { Verdict::Allow })
    }
}

/// The snapshot attached to the user message.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnSnapshot {
    pub markdown: String,
    pub json: Value,
    pub used: usize,
    pub max: usize,
    pub truncated: bool,
}

impl TurnSnapshot {
    /// The snapshot of `source` within `budget` characters.
    pub fn build(source: &crate::snapshot::source::Source, budget: usize) -> Self {
        let options = crate::snapshot::CollectOptions {
            budget,
            ..crate::snapshot::CollectOptions::default()
        };
        let (built, rendered) = crate::snapshot::build(source, &options);
        TurnSnapshot {
            markdown: rendered.markdown,
            json: serde_json::to_value(&built).unwrap_or(Value::Null),
            used: built.budget.used,
            max: built.budget.max,
            truncated: built.budget.truncated,
        }
    }
}

/// Everything a turn needs besides the conversation.
pub struct TurnDeps {
    pub provider: Arc<dyn ModelProvider>,
    pub runner: Arc<dyn CodeRunner>,
    pub approval: Arc<dyn CellApproval>,
    /// Where `context.snapshot()` reads the latest snapshot from.
    pub snapshot_tx: watch::Sender<Option<PublishedSnapshot>>,
    pub max_steps: u32,
    pub cell_timeout: Option<Duration>,
    /// The model's window: every request is assembled to fit it.
    pub window: ContextWindow,
    /// The user's hooks: `UserPromptSubmit` before the prompt is stored,
    /// `PostToolUse` after each cell, `Stop` at the final answer,
    /// `PreCompact` before a compaction.
    pub hooks: crate::hooks::Hooks,
}

/// The next request for `conversation` as the turn loop would send it
/// (F2 and the tests use this; the loop itself calls it before each call).
pub fn next_prompt(conversation: &Conversation, window: &ContextWindow) -> Prompt {
    prompt::assemble(
        conversation,
        None,
        &conversation.system_prompt(SYSTEM_PROMPT),
        &[code_action_tool()],
        window,
    )
}

/// The first request sending `prompt` with `snapshot` would make: what F2
/// shows before Enter. Byte for byte what [`run_turn`] then sends.
pub fn preview_prompt(
    conversation: &Conversation,
    prompt: &str,
    snapshot: Option<&str>,
    window: &ContextWindow,
) -> Prompt {
    let pending = ChatMessage::User {
        content: user_content(prompt, snapshot),
    };
    prompt::assemble(
        conversation,
        Some(&pending),
        &conversation.system_prompt(SYSTEM_PROMPT),
        &[code_action_tool()],
        window,
    )
}

/// Whether the `PreCompact` hooks let an automatic compaction happen (the
/// bounded prompt leaves out what does not fit either way).
async fn compaction_allowed(deps: &TurnDeps, emit: &impl Fn(TurnEvent)) -> bool {
    match deps.hooks.compacting("auto", None).await {
        Some(reason) => {
            emit(TurnEvent::CompactionHeld { reason });
            false
        }
        None => true,
    }
}

/// What happens during a turn, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    Snapshot {
        used: usize,
        max: usize,
        truncated: bool,
    },
    /// Model call number `n` (1-based) starts.
    Step(u32),
    /// The request about to be sent: its tokens, the window, how many
    /// `context` messages it leaves out.
    Prompt {
        tokens: usize,
        window: usize,
        omitted: usize,
    },
    /// The oldest part of the conversation was folded into a summary.
    /// The oldest messages are now a summary in the prompt.
    Compacted(compact::Compacted),
    TextDelta(String),
    /// A piece of the model's reasoning: shown apart, never the answer.
    ReasoningDelta(String),
    Retrying {
        attempt: u32,
        max_attempts: u32,
        wait: Duration,
        reason: String,
    },
    /// The user message was stored, as `message`.
    UserMessage {
        message: MessageId,
    },
    /// A completed model message with text, stored as `message`.
    AssistantMessage {
        text: String,
        message: MessageId,
    },
    /// A cell is about to run.
    ToolCall {
        id: String,
        code: String,
    },
    /// A call that never reached the kernel (bad arguments, refused...).
    ToolRejected {
        id: String,
        reason: String,
    },
    ToolResult {
        id: String,
        result: Value,
        /// The tool message it was stored as.
        message: MessageId,
        /// [`RunningCell::shown_as`] of the cell that ran (`None` when the
        /// call was rejected before running).
        cell: Option<u64>,
    },
    /// Token usage so far in this turn.
    Usage(Usage),
    /// The server refused the request as too long for its window; it is
    /// sent again, smaller. `message` is the one line telling the user;
    /// `window` is the window learned (front ends keep it for later turns).
    ContextOverflow {
        message: String,
        window: ContextWindow,
    },
    /// The model wrote its `code_action` call as text (a chat template
    /// without tool support): it runs as the call. Front ends say once
    /// how to give the server tool support (`--jinja` for llama.cpp).
    ToolCallAsText,
    /// A `UserPromptSubmit` hook held the prompt back (the reason is for
    /// the user); nothing was stored and the turn ends.
    PromptBlocked {
        reason: String,
    },
    /// A `Stop` hook sent the model on after its final answer.
    SentOn {
        reason: String,
    },
    /// A `PreCompact` hook held an automatic compaction back.
    CompactionHeld {
        reason: String,
    },
    /// A hook answered `"continue": false`: the turn ended after the
    /// calls already made got their results.
    HookStopped {
        reason: String,
    },
    /// The model stopped at its output limit (`finish_reason: length`,
    /// `stop_reason: max_tokens`): the answer just stored is cut short.
    OutputLimit,
    Completed {
        steps: u32,
        usage: Usage,
        /// Stopped by `max_steps` rather than by a final answer.
        max_steps_reached: bool,
    },
    Failed {
        message: String,
    },
    Cancelled,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Completed { steps: u32, usage: Usage },
    Failed(String),
    Cancelled,
}

/// Runs one turn for `prompt`. Cancel by sending `true` on the `cancel`
/// channel: the stream stops, a running cell is interrupted, and every tool
/// call already made still gets a result, so the history stays valid.
pub async fn run_turn(
    deps: &TurnDeps,
    conversation: &mut Conversation,
    prompt: &str,
    snapshot: Option<TurnSnapshot>,
    events: &mpsc::UnboundedSender<TurnEvent>,
    mut cancel: watch::Receiver<bool>,
) -> TurnOutcome {
    let emit = |event: TurnEvent| {
        let _ = events.send(event);
    };
    if let Some(s) = &snapshot {
        emit(TurnEvent::Snapshot {
            used: s.used,
            max: s.max,
            truncated: s.truncated,
        });
        deps.snapshot_tx.send_replace(Some(PublishedSnapshot {
            markdown: s.markdown.clone(),
            json: s.json.clone(),
        }));
    }
    if let Some(model) = deps.provider.model() {
        conversation.note_model(&model);
    }
    let prompt = match deps.hooks.prompt_submitted(prompt).await {
        PromptGate::Blocked(reason) => {
            // Nothing was stored: the conversation is as it was.
            let why = format!("a UserPromptSubmit hook held the prompt back: {reason}");
            emit(TurnEvent::PromptBlocked {
                reason: reason.clone(),
            });
            return TurnOutcome::Failed(why);
        }
        PromptGate::Go(Some(context)) => with_hook_context(prompt, &context),
        PromptGate::Go(None) => prompt.to_owned(),
    };
    let message = conversation.push(ChatMessage::User {
        content: user_content(&prompt, snapshot.as_ref().map(|s| s.markdown.as_str())),
    });
    emit(TurnEvent::UserMessage { message });
    let mut usage = Usage::default();
    // What the server taught this turn: the window it really has (an
    // overflow answer names it) and how far above our count it counts.
    let mut window = deps.window.clone();
    let mut margin = 0usize;
    // A `Stop` hook already sent this turn on (told to the next one).
    let mut sent_on = false;
    for step in 1..=deps.max_steps.max(1) {
        emit(TurnEvent::Step(step));
        // At most one overflow is recovered from per model call.
        let mut overflowed: Option<Overflow> = None;
        let (mut turn, cancelled, sent_tokens) = loop {
            let mut next = next_prompt(conversation, &window);
            if conversation.counter().learn().await {
                // The server's tokenizer counted what was estimated.
                conversation.recount();
                next = next_prompt(conversation, &window);
            }
            if next.needs_compaction(&window)
                && let Some(through) = compact::plan(conversation, &next, &window)
                && compaction_allowed(deps, &emit).await
            {
                let compacted = tokio::select! {
                    done = compact::compact(&*deps.provider, conversation, through, None, &window) => Some(done),
                    _ = cancelled_signal(&mut cancel) => None,
                };
                let Some(done) = compacted else {
                    conversation.record_error("cancelled by the user");
                    emit(TurnEvent::Cancelled);
                    return TurnOutcome::Cancelled;
                };
                emit(TurnEvent::Compacted(done));
                deps.hooks.session_started("compact").await;
                next = next_prompt(conversation, &window);
            }
            let omitted = next.omitted.iter().map(ExactSizeIterator::len).sum();
            emit(TurnEvent::Prompt {
                tokens: next.tokens,
                window: next.window,
                omitted,
            });
            if next.tokens + margin > next.window {
                // Everything that can leave the prompt has: what is left is the
                // new message itself. Some servers (Ollama) would cut it
                // silently; say so instead.
                let counted = overflowed
                    .as_ref()
                    .and_then(|o| o.prompt_tokens)
                    .map_or_else(String::new, |p| format!(" (the server counted {p})"));
                let why = format!(
                    "the request needs about {} tokens{counted} but the model's window is {}: \
                     the message and its snapshot alone are too long (shorten the message, unpin \
                     results, or lower [snapshot] budget)",
                    next.tokens + margin,
                    next.window
                );
                conversation.record_error(&why);
                emit(TurnEvent::Failed {
                    message: why.clone(),
                });
                return TurnOutcome::Failed(why);
            }
            if let Some(overflow) = &overflowed {
                emit(TurnEvent::ContextOverflow {
                    message: overflow_line(overflow, &next, omitted),
                    window: window.clone(),
                });
            }
            let sent_raw = next.raw;
            let sent_tokens = next.tokens;
            let mut stream = deps.provider.stream_chat(next.request);
            let mut assembler = TurnAssembler::default();
            let mut cancelled = false;
            loop {
                tokio::select! {
                    event = stream.next() => {
                        let Some(event) = event else { break };
                        assembler.push(&event);
                        match event {
                            ProviderEvent::TextDelta(text) => emit(TurnEvent::TextDelta(text)),
                            ProviderEvent::ReasoningDelta(text) => emit(TurnEvent::ReasoningDelta(text)),
                            ProviderEvent::Retrying { attempt, max_attempts, wait, reason } => {
                                emit(TurnEvent::Retrying { attempt, max_attempts, wait, reason });
                            }
                            _ => {}
                        }
                    }
                    _ = cancelled_signal(&mut cancel) => {
                        stream.cancel();
                        cancelled = true;
                        break;
                    }
                }
            }
            let turn = assembler.finish();
            if let Some(u) = turn.usage {
                match silent_cut(sent_tokens, &u) {
                    // Not a tokenizer's difference: the server dropped part
                    // of the prompt. Correcting the counter by it would
                    // make every later count too low.
                    Some(kept) => {
                        window = window.learned(kept, "server cut");
                        emit(TurnEvent::ContextOverflow {
                            message: format!(
                                "the server used only {} of the about {sent_tokens} prompt tokens \
                                 sent and dropped the rest without an error (Ollama does this at \
                                 its num_ctx: raise it in a Modelfile or with \
                                 OLLAMA_CONTEXT_LENGTH); this answer may have missed them, and \
                                 the next requests fit a window of {kept}",
                                u.prompt_tokens
                            ),
                            window: window.clone(),
                        });
                    }
                    None => conversation.counter().observe(sent_raw, u.prompt_tokens),
                }
            }
            if !cancelled
                && overflowed.is_none()
                && turn.text.is_empty()
                && turn.tool_calls.is_empty()
                && let Some(ProviderError::ContextOverflow(overflow)) = &turn.error
            {
                // Learn what the server said and assemble again: the
                // bounded prompt leaves out (or compacts) what no longer
                // fits, and the request goes once more.
                margin = learn_from_overflow(
                    conversation.counter(),
                    &mut window,
                    overflow,
                    sent_raw,
                    sent_tokens,
                );
                overflowed = Some(overflow.clone());
                continue;
            }
            break (turn, cancelled, sent_tokens);
        };
        match turn.usage {
            Some(u) => {
                usage.add(&u);
                conversation.record_usage(u);
                emit(TurnEvent::Usage(usage));
            }
            None if !turn.partial => {
                // LM Studio sends no usage, Ollama's is unreliable: the
                // status bar falls back to our own count, and says so.
                let counted = conversation.counter();
                let u = Usage {
                    prompt_tokens: sent_tokens as u64,
                    completion_tokens: counted.corrected(counted.count(&turn.text)) as u64,
                    total_tokens: 0,
                    ..Usage::default()
                };
                counted.note_counted_usage(u.prompt_tokens);
                usage.add(&Usage {
                    total_tokens: u.prompt_tokens + u.completion_tokens,
                    ..u
                });
                emit(TurnEvent::Usage(usage));
            }
            None => {}
        }
        if !cancelled
            && !turn.partial
            && turn.tool_calls.is_empty()
            && let Some(call) = super::text_tool_call::parse(&turn.text)
        {
            // The server's template has no tools: the model wrote the call
            // as text. It runs as the call it is.
            turn.tool_calls.push(super::provider::ToolCall {
                id: format!("text_call_{step}"),
                name: "code_action".to_owned(),
                arguments: serde_json::json!({ "code": call.code }).to_string(),
            });
            turn.text = call.rest;
            emit(TurnEvent::ToolCallAsText);
        }
        if cancelled || turn.partial {
            // Keep what was said, marked; drop half-streamed tool calls so
            // no call is left without a result.
            let why = if cancelled {
                "cancelled by the user".to_owned()
            } else {
                turn.error.as_ref().map_or_else(
                    || "the stream ended before the answer was complete".to_owned(),
                    ToString::to_string,
                )
            };
            if !turn.text.is_empty() {
                let text = format!("{}\n\n{CUT_OFF_MARK} {why}]", turn.text);
                let message =
                    conversation.push(ChatMessage::assistant(Some(text.clone()), Vec::new()));
                emit(TurnEvent::AssistantMessage { text, message });
            }
            conversation.record_error(&why);
            return if cancelled {
                emit(TurnEvent::Cancelled);
                TurnOutcome::Cancelled
            } else {
                emit(TurnEvent::Failed {
                    message: why.clone(),
                });
                TurnOutcome::Failed(why)
            };
        }
        let message = turn.to_message().map(|m| conversation.push(m));
        if let Some(message) = message
            && !turn.text.is_empty()
        {
            emit(TurnEvent::AssistantMessage {
                text: turn.text.clone(),
                message,
            });
        }
        if turn.finish_reason == Some(FinishReason::Length) {
            emit(TurnEvent::OutputLimit);
        }
        if turn.tool_calls.is_empty()
            && let Some(reason) = deps.hooks.stopping(sent_on, &turn.text).await
            && step < deps.max_steps.max(1)
        {
            {
                // The hook's reason is the model's next instruction.
                sent_on = true;
                emit(TurnEvent::SentOn {
                    reason: reason.clone(),
                });
                conversation.push(ChatMessage::User {
                    content: format!("{HOOK_CONTEXT_OPEN}\nA Stop hook sent you on: {reason}\n{HOOK_CONTEXT_CLOSE}"),
                });
                continue;
            }
        }
        if turn.tool_calls.is_empty() {
            emit(TurnEvent::Completed {
                steps: step,
                usage,
                max_steps_reached: false,
            });
            return TurnOutcome::Completed { steps: step, usage };
        }
        let mut cancelled = false;
        for call in &turn.tool_calls {
            let (result, cell) = if cancelled {
                let result = rejected(
                    &call.id,
                    "Cancelled",
                    "cancelled by the user before it ran",
                    &emit,
                );
                (result, None)
            } else {
                let previous = conversation.last_state().cloned();
                let ran = run_call(deps, call, &emit, &mut cancel, previous.as_ref()).await;
                if let Some(state) = ran.state {
                    conversation.set_last_state(state);
                }
                cancelled = ran.cancelled;
                (ran.result, ran.cell)
            };
            let message = conversation.push(ChatMessage::Tool {
                tool_call_id: call.id.clone(),
                content: result.to_string(),
            });
            emit(TurnEvent::ToolResult {
                id: call.id.clone(),
                result,
                message,
                cell,
            });
        }
        if cancelled || *cancel.borrow() {
            conversation.record_error("cancelled by the user");
            emit(TurnEvent::Cancelled);
            return TurnOutcome::Cancelled;
        }
        if let Some(reason) = deps.hooks.take_stop() {
            // A hook answered `"continue": false`: every call made has its
            // result, and the turn ends here.
            emit(TurnEvent::HookStopped { reason });
            emit(TurnEvent::Completed {
                steps: step,
                usage,
                max_steps_reached: false,
            });
            return TurnOutcome::Completed { steps: step, usage };
        }
    }
    let steps = deps.max_steps.max(1);
    emit(TurnEvent::Completed {
        steps,
        usage,
        max_steps_reached: true,
    });
    TurnOutcome::Completed { steps, usage }
}

/// The window a server that cuts silently (Ollama) really used, when its
/// usage shows it kept far less of the prompt than was sent (under half
/// of our count, for a prompt of 1 024 tokens or more: tokenizers differ
/// by 20–40 %, not by half): what it kept plus what it wrote. `None` for
/// an honest count, and for every server that refuses instead.
fn silent_cut(sent_tokens: usize, usage: &Usage) -> Option<usize> {
    let kept = usize::try_from(usage.prompt_tokens).ok()?;
    (usage.cuts_silently && sent_tokens >= 1024 && kept > 0 && kept * 2 < sent_tokens)
        .then(|| kept + usize::try_from(usage.completion_tokens).unwrap_or_default())
}

/// What the overflow answer teaches: the window the server really has
/// (the reserve follows it unless set), the counter's correction from the
/// prompt tokens it counted, and the margin by which it still counts above
/// our (corrected) count. With no numbers at all, a quarter of what was
/// sent is assumed to be missing.
fn learn_from_overflow(
    counter: &crate::tokens::TokenCounter,
    window: &mut ContextWindow,
    overflow: &Overflow,
    sent_raw: usize,
    sent_tokens: usize,
) -> usize {
    if let Some(tokens) = overflow.window.filter(|w| *w != window.tokens) {
        *window = window.learned(tokens, overflow.server);
    }
    match overflow.prompt_tokens {
        Some(counted) => {
            counter.observe(sent_raw, counted as u64);
            counted.saturating_sub(counter.corrected(sent_raw))
        }
        None if overflow.window.is_some_and(|w| w < sent_tokens) => 0,
        None => sent_tokens / 4,
    }
}

/// The one line the user reads when an overflow was recovered from:
/// what the server said, and what the request sent again left out.
fn overflow_line(overflow: &Overflow, next: &Prompt, omitted: usize) -> String {
    let said = match (overflow.prompt_tokens, overflow.window) {
        (Some(p), Some(w)) => format!("{p} prompt tokens for a {w}-token window"),
        (Some(p), None) => format!("{p} prompt tokens, too many for its window"),
        (None, Some(w)) => format!("a prompt too long for its {w}-token window"),
        (None, None) => "a prompt too long for its window".to_owned(),
    };
    let left_out = match omitted {
        0 => "nothing left out".to_owned(),
        1 => "1 earlier message left out".to_owned(),
        n => format!("{n} earlier messages left out"),
    };
    format!(
        "The model server ({}) refused {said}; sent again at about {} tokens ({left_out}).",
        overflow.server, next.tokens
    )
}

/// What one tool call came to.
struct CallOutcome {
    result: Value,
    /// The user cancelled while it ran.
    cancelled: bool,
    /// The kernel state the result reported (`None` when it never ran).
    state: Option<RuntimeState>,
    /// [`RunningCell::shown_as`] of the cell, when one ran.
    cell: Option<u64>,
}

impl CallOutcome {
    fn refused(result: Value) -> Self {
        Self {
            result,
            cancelled: false,
            state: None,
            cell: None,
        }
    }
}

/// Runs one tool call.
async fn run_call(
    deps: &TurnDeps,
    call: &super::provider::ToolCall,
    emit: &impl Fn(TurnEvent),
    cancel: &mut watch::Receiver<bool>,
    previous: Option<&RuntimeState>,
) -> CallOutcome {
    if call.name != TOOL_NAME {
        let message = format!(
            "unknown tool `{}`; the only tool is `{TOOL_NAME}`",
            call.name
        );
        return CallOutcome::refused(rejected(&call.id, "ValueError", &message, emit));
    }
    let code = match code_of(&call.arguments) {
        Ok(code) => code,
        Err(message) => {
            return CallOutcome::refused(rejected(&call.id, "ValueError", &message, emit));
        }
    };
    // What hooks said before this cell (of a `%py` cell's tools, or a
    // cell refused earlier) is not this cell's.
    let _ = deps.hooks.take_for_result();
    if let Verdict::Deny(reason) = deps.approval.approve_cell(&code).await {
        let message = format!("the user did not approve this cell: {reason}");
        let mut result = rejected(&call.id, "PermissionError", &message, emit);
        with_hook_notes(&deps.hooks, &mut result);
        return CallOutcome::refused(result);
    }
    emit(TurnEvent::ToolCall {
        id: call.id.clone(),
        code: code.clone(),
    });
    // Kept only for a `PostToolUse` hook to read.
    let tool = deps
        .hooks
        .wants(crate::hooks::HookEvent::PostToolUse)
        .then(|| crate::hooks::ToolUse::cell(&code));
    let RunningCell {
        shown_as,
        result: mut running,
    } = deps.runner.run(code, deps.cell_timeout);
    let mut cancelled = false;
    let result = tokio::select! {
        result = &mut running => result,
        _ = cancelled_signal(cancel) => {
            cancelled = true;
            // A kernel still starting (or not yet marked busy) ignores the
            // interrupt, so it is repeated until the cell returns.
            loop {
                deps.runner.interrupt();
                tokio::select! {
                    result = &mut running => break result,
                    () = tokio::time::sleep(INTERRUPT_REPEAT) => {}
                }
            }
        }
    };
    let state = deps.runner.state().await;
    let mut result = tool_result::from_exec(&result, &state, previous);
    if let Some(tool) = &tool {
        deps.hooks.post_tool_use(tool, &result).await;
    }
    with_hook_notes(&deps.hooks, &mut result);
    CallOutcome {
        result,
        cancelled,
        state: Some(state),
        cell: shown_as,
    }
}

/// What hooks of this cell's tools (and of the cell) said for the model,
/// as the result's `hooks` field.
fn with_hook_notes(hooks: &crate::hooks::Hooks, result: &mut Value) {
    if let Some(said) = hooks.take_for_result()
        && let Some(fields) = result.as_object_mut()
    {
        fields.insert("hooks".to_owned(), Value::String(said));
    }
}

fn rejected(id: &str, kind: &str, message: &str, emit: &impl Fn(TurnEvent)) -> Value {
    emit(TurnEvent::ToolRejected {
        id: id.to_owned(),
        reason: message.to_owned(),
    });
    tool_result::refused(kind, message, None)
}

/// Resolves once `true` is sent; never if the sender is gone without it.
async fn cancelled_signal(cancel: &mut watch::Receiver<bool>) {
    if cancel.wait_for(|c| *c).await.is_err() {
        std::future::pending::<()>().await;
    }
}

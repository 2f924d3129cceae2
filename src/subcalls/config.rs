//! `[subcalls]`: which model answers `llm_query` and the per-turn bounds.

use std::time::Duration;

use serde::Deserialize;

/// The section as written in the config file. Every field is optional:
/// without a model the session's provider answers, and the bounds have
/// defaults (see [`Limits`]).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SubcallSection {
    /// A model for sub-calls (often a smaller one); the session's otherwise.
    pub model: Option<String>,
    /// Its server, when not the session's (with `model` only).
    pub base_url: Option<String>,
    /// The NAME of the variable holding its key, when not the session's.
    pub api_key_env: Option<String>,
    /// Sub-calls one turn may make (default 64).
    pub max_calls_per_turn: Option<u32>,
    /// Tokens (prompt + answer) the sub-calls of one turn may use (default
    /// 200 000).
    pub max_tokens_per_turn: Option<u64>,
    /// Sub-calls in flight at once (default 4).
    pub concurrency: Option<usize>,
    /// Longest one sub-call may take, in seconds (default 120).
    pub call_timeout_secs: Option<f64>,
    /// The answer cap of a sub-call that names none (default: the server's).
    pub max_tokens: Option<u32>,
    /// How deep `rlm_query` may nest (default 1: a cell's `rlm_query` runs a
    /// nested loop whose cells have `llm_query` but no `rlm_query`; 0 turns
    /// `rlm_query` off).
    pub max_depth: Option<u32>,
    /// Model calls one `rlm_query` loop may make (default 8).
    pub max_steps: Option<u32>,
}

/// The bounds in force, defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub max_calls_per_turn: u32,
    pub max_tokens_per_turn: u64,
    pub concurrency: usize,
    pub call_timeout: Duration,
    pub max_tokens: Option<u32>,
    pub max_depth: u32,
    pub max_steps: u32,
}

impl Default for Limits {
    fn default() -> Self {
        SubcallSection::default().limits()
    }
}

impl SubcallSection {
    pub fn limits(&self) -> Limits {
        let timeout = self
            .call_timeout_secs
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(120.0);
        Limits {
            max_calls_per_turn: self.max_calls_per_turn.unwrap_or(64),
            max_tokens_per_turn: self.max_tokens_per_turn.unwrap_or(200_000),
            // Zero would deadlock every call: one is the least that works.
            concurrency: self.concurrency.unwrap_or(4).max(1),
            call_timeout: Duration::from_secs_f64(timeout),
            max_tokens: self.max_tokens,
            max_depth: self.max_depth.unwrap_or(1),
            max_steps: self.max_steps.unwrap_or(8).max(1),
        }
    }
}

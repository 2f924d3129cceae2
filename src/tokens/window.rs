//! How many tokens the model can take: the first of the user's setting,
//! what the server says, a table of known models, a conservative default.

use std::fmt;

/// Used when nothing else says: small enough for any local model served
/// with a default context (llama.cpp and Ollama often start at 4–8k).
pub const DEFAULT_WINDOW: usize = 8_192;
/// Room kept for the answer unless `[model] reserve_output` says otherwise.
pub const DEFAULT_RESERVE: usize = 2_048;
/// Auto-compaction starts when the next prompt would pass this share of the
/// window (`[model] compact_at`).
pub const DEFAULT_COMPACT_AT: f64 = 0.8;

/// Where the window size came from (shown in F2 and `exec --json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowSource {
    /// `[model] context_window` or `--context-window`.
    Setting,
    /// The server said (`vllm`, `llama.cpp`, `ollama`).
    Server(&'static str),
    KnownModel,
    Default,
}

impl fmt::Display for WindowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowSource::Setting => f.write_str("setting"),
            WindowSource::Server(kind) => write!(f, "server ({kind})"),
            WindowSource::KnownModel => f.write_str("known model"),
            WindowSource::Default => f.write_str("default"),
        }
    }
}

/// The model's context window and the part of it kept for the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextWindow {
    pub tokens: usize,
    pub source: WindowSource,
    /// Tokens kept free for the answer.
    pub reserve: usize,
    /// Share of the window (0–1) past which the prompt is compacted.
    pub compact_at: f64,
    /// `[model] reserve_output`, when set: otherwise the reserve follows
    /// the window ([`reserve_for`]), also when the window is learned anew.
    pub reserve_setting: Option<usize>,
}

/// The answer's reserve for a window of `tokens`: the setting (at most half
/// the window), else a quarter of the window, at most [`DEFAULT_RESERVE`].
/// A share, not a constant: 2 048 tokens of a 3 072-token local model left
/// a prompt no room (issue 28), while 2 048 is plenty for an answer on a
/// big one.
pub fn reserve_for(tokens: usize, setting: Option<usize>) -> usize {
    match setting {
        Some(reserve) => reserve.min(tokens / 2),
        None => (tokens / 4).min(DEFAULT_RESERVE),
    }
}

impl ContextWindow {
    /// The first of `setting`, `server`, the known-model table and the
    /// default. A reserve larger than half the window is cut to half, so a
    /// big reserve on a small model still leaves room for a prompt.
    pub fn resolve(
        setting: Option<usize>,
        server: Option<(usize, &'static str)>,
        model: &str,
        reserve: Option<usize>,
        compact_at: Option<f64>,
    ) -> Self {
        let (tokens, source) = if let Some(n) = setting.filter(|n| *n > 0) {
            (n, WindowSource::Setting)
        } else if let Some((n, kind)) = server.filter(|(n, _)| *n > 0) {
            (n, WindowSource::Server(kind))
        } else if let Some(n) = known_window(model) {
            (n, WindowSource::KnownModel)
        } else {
            (DEFAULT_WINDOW, WindowSource::Default)
        };
        ContextWindow {
            tokens,
            source,
            reserve: reserve_for(tokens, reserve),
            compact_at: compact_at
                .filter(|f| f.is_finite() && *f > 0.0 && *f <= 1.0)
                .unwrap_or(DEFAULT_COMPACT_AT),
            reserve_setting: reserve,
        }
    }

    /// The window a server says it really has (an overflow answer names
    /// it): the reserve follows unless it was set.
    pub fn learned(&self, tokens: usize, server: &'static str) -> Self {
        ContextWindow {
            tokens,
            source: WindowSource::Server(server),
            reserve: reserve_for(tokens, self.reserve_setting),
            ..self.clone()
        }
    }

    /// How the reserve was chosen, for F2: `setting` or `¼ of window`.
    pub fn reserve_derivation(&self) -> &'static str {
        match self.reserve_setting {
            Some(_) => "setting",
            None if self.reserve == DEFAULT_RESERVE => "default",
            None => "¼ of window",
        }
    }

    /// The most a prompt may cost.
    pub fn prompt_budget(&self) -> usize {
        self.tokens - self.reserve
    }

    /// Past this many prompt tokens the conversation is compacted.
    pub(crate) fn compact_threshold(&self) -> usize {
        ((self.prompt_budget() as f64) * self.compact_at) as usize
    }
}

/// Model families whose window tiktoken's table does not know, by name
/// prefix after any `org/` and before any `:tag`. Their *native* windows:
/// a server that loads them smaller says so through the probe.
const KNOWN: &[(&str, usize)] = &[
    ("claude", 200_000),
    ("gemini", 1_000_000),
    ("deepseek", 128_000),
    ("qwen3", 32_768),
    ("qwen2.5", 32_768),
    ("llama3.1", 131_072),
    ("llama-3.1", 131_072),
    ("llama3.2", 131_072),
    ("llama3", 8_192),
    ("mistral", 32_768),
    ("codestral", 32_768),
    ("phi3", 4_096),
];

/// The table: tiktoken-rs' list of OpenAI models, then [`KNOWN`].
pub(crate) fn known_window(model: &str) -> Option<usize> {
    if let Some(n) = tiktoken_rs::model::get_context_size(model) {
        return Some(n);
    }
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    let name = name.split(':').next().unwrap_or(&name);
    KNOWN
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_source_that_says_wins() {
        let w = ContextWindow::resolve(Some(8000), Some((32_768, "vllm")), "gpt-4o", None, None);
        assert_eq!((w.tokens, w.source), (8000, WindowSource::Setting));
        let w = ContextWindow::resolve(None, Some((32_768, "vllm")), "gpt-4o", None, None);
        assert_eq!((w.tokens, w.source), (32_768, WindowSource::Server("vllm")));
        let w = ContextWindow::resolve(None, None, "gpt-4o", None, None);
        assert_eq!((w.tokens, w.source), (128_000, WindowSource::KnownModel));
        let w = ContextWindow::resolve(None, None, "qwen2.5-coder:7b", None, None);
        assert_eq!((w.tokens, w.source), (32_768, WindowSource::KnownModel));
        let w = ContextWindow::resolve(None, None, "my-finetune", None, None);
        assert_eq!(
            (w.tokens, w.source),
            (DEFAULT_WINDOW, WindowSource::Default)
        );
        // A zero anywhere means "did not say".
        let w = ContextWindow::resolve(Some(0), Some((0, "vllm")), "x", None, None);
        assert_eq!(w.source, WindowSource::Default);
    }

    #[test]
    fn the_reserve_follows_the_window_unless_set() {
        let w = ContextWindow::resolve(Some(3072), None, "x", None, None);
        assert_eq!(w.reserve, 768);
        assert_eq!(w.prompt_budget(), 2304);
        let w = ContextWindow::resolve(Some(131_072), None, "x", None, None);
        assert_eq!(w.reserve, DEFAULT_RESERVE);
        let learned =
            ContextWindow::resolve(None, None, "x", None, None).learned(4096, "llama.cpp");
        assert_eq!((learned.tokens, learned.reserve), (4096, 1024));
        assert_eq!(learned.source, WindowSource::Server("llama.cpp"));
        let set =
            ContextWindow::resolve(Some(8192), None, "x", Some(500), None).learned(3000, "vLLM");
        assert_eq!(set.reserve, 500);
    }

    #[test]
    fn the_reserve_never_takes_more_than_half() {
        let w = ContextWindow::resolve(Some(4000), None, "x", Some(10_000), None);
        assert_eq!(w.reserve, 2000);
        assert_eq!(w.prompt_budget(), 2000);
        let w = ContextWindow::resolve(Some(10_000), None, "x", None, Some(0.5));
        assert_eq!(w.prompt_budget(), 10_000 - DEFAULT_RESERVE);
        assert_eq!(w.compact_threshold(), (10_000 - DEFAULT_RESERVE) / 2);
        let w = ContextWindow::resolve(Some(10_000), None, "x", None, Some(7.0));
        assert_eq!(w.compact_at, DEFAULT_COMPACT_AT);
    }
}

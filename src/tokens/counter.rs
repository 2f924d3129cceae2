//! Counting tokens: the real BPE for OpenAI-family models, an estimate for
//! everything else that the server's own count corrects as the session goes.

use std::sync::atomic::{AtomicU32, Ordering};

use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

/// Tokens every chat message costs besides its text (role, separators), as
/// OpenAI's cookbook counts them; other servers' templates are close.
pub const PER_MESSAGE_OVERHEAD: usize = 4;
/// Tokens that prime the answer (`<|start|>assistant<|message|>`).
pub const REPLY_PRIMING: usize = 3;

/// How a prompt's tokens are counted.
pub enum TokenCounter {
    /// The model's own tokenizer (o200k/cl100k): exact for its text.
    Bpe {
        bpe: &'static CoreBPE,
        name: &'static str,
    },
    /// A byte/character heuristic scaled by what the server last reported.
    Estimate {
        /// `usage.prompt_tokens / our estimate` of the previous call, in
        /// thousandths (1000 = the heuristic was right). Atomic so the turn
        /// task can correct a counter the UI also reads.
        correction_milli: AtomicU32,
    },
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl TokenCounter {
    /// The counter for `model`: its BPE when tiktoken knows the model (and
    /// its vocabulary loads), the estimate otherwise.
    pub fn for_model(model: &str) -> Self {
        let bpe = get_tokenizer(model).and_then(|tokenizer| {
            let name = match tokenizer {
                Tokenizer::O200kBase | Tokenizer::O200kHarmony => "o200k",
                Tokenizer::Cl100kBase => "cl100k",
                // Older vocabularies belong to models too small to drive
                // an agent; the estimate is good enough for them.
                _ => return None,
            };
            tiktoken_rs::bpe_for_tokenizer(tokenizer)
                .ok()
                .map(|bpe| (bpe, name))
        });
        match bpe {
            Some((bpe, name)) => TokenCounter::Bpe { bpe, name },
            None => Self::estimate(),
        }
    }

    /// The heuristic counter, uncorrected.
    pub fn estimate() -> Self {
        TokenCounter::Estimate {
            correction_milli: AtomicU32::new(1000),
        }
    }

    /// `o200k`, `cl100k`, or `estimate ×1.12`.
    pub fn describe(&self) -> String {
        match self {
            TokenCounter::Bpe { name, .. } => (*name).to_owned(),
            TokenCounter::Estimate { correction_milli } => format!(
                "estimate ×{:.2}",
                f64::from(correction_milli.load(Ordering::Relaxed)) / 1000.0
            ),
        }
    }

    #[cfg(test)]
    pub(crate) fn is_exact(&self) -> bool {
        matches!(self, TokenCounter::Bpe { .. })
    }

    /// Tokens of `text` as this counter's raw unit (the estimate before its
    /// correction; see [`TokenCounter::corrected`]).
    pub fn count(&self, text: &str) -> usize {
        match self {
            TokenCounter::Bpe { bpe, .. } => bpe.count_ordinary(text),
            TokenCounter::Estimate { .. } => estimate(text),
        }
    }

    /// Raw units to tokens as the server counts them.
    pub(crate) fn corrected(&self, raw: usize) -> usize {
        match self {
            TokenCounter::Bpe { .. } => raw,
            TokenCounter::Estimate { correction_milli } => {
                let milli = correction_milli.load(Ordering::Relaxed) as usize;
                (raw * milli).div_ceil(1000)
            }
        }
    }

    /// Tokens as the server counts them to raw units (the inverse of
    /// [`TokenCounter::corrected`], rounded down so a budget is never exceeded).
    pub(crate) fn to_raw(&self, tokens: usize) -> usize {
        match self {
            TokenCounter::Bpe { .. } => tokens,
            TokenCounter::Estimate { correction_milli } => {
                let milli = correction_milli.load(Ordering::Relaxed).max(1) as usize;
                tokens * 1000 / milli
            }
        }
    }

    /// Learns from a call: the server counted `reported` prompt tokens for a
    /// request we counted `raw_estimate` raw units for. The ratio is clamped
    /// to 0.5–4 so one odd answer (a server that counts nothing, or counts a
    /// cached prefix differently) cannot make the budget absurd.
    pub(crate) fn observe(&self, raw_estimate: usize, reported: u64) {
        if let TokenCounter::Estimate { correction_milli } = self
            && raw_estimate > 0
            && reported > 0
        {
            let ratio = (reported as f64 * 1000.0 / raw_estimate as f64).clamp(500.0, 4000.0);
            correction_milli.store(ratio.round() as u32, Ordering::Relaxed);
        }
    }
}

/// One token per three ASCII characters (common BPEs average nearer four on
/// English and code) and one per other character (CJK, emoji and accented
/// text cost at least that). Deliberately high: too high wastes some room
/// until the first correction, too low would overflow the window.
fn estimate(text: &str) -> usize {
    let mut ascii = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(3) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_models_get_their_real_tokenizer() {
        let counter = TokenCounter::for_model("gpt-4o-mini");
        assert_eq!(counter.describe(), "o200k");
        // "hello world" is two tokens in o200k; any heuristic gives 3-4.
        assert_eq!(counter.count("hello world"), 2);
        assert_eq!(TokenCounter::for_model("gpt-4").describe(), "cl100k");
    }

    #[test]
    fn other_models_are_estimated_and_corrected_by_the_server() {
        let counter = TokenCounter::for_model("qwen2.5-coder:7b");
        assert!(!counter.is_exact());
        let raw = counter.count(&"word ".repeat(300));
        assert_eq!(raw, 500);
        assert_eq!(counter.corrected(raw), 500);
        counter.observe(raw, 300);
        assert_eq!(counter.corrected(raw), 300);
        assert_eq!(counter.to_raw(300), 500);
        assert_eq!(counter.describe(), "estimate ×0.60");
        // A server reporting nonsense cannot push the ratio past the clamp.
        counter.observe(raw, 1);
        assert_eq!(counter.corrected(1000), 500);
        counter.observe(raw, 1_000_000);
        assert_eq!(counter.corrected(1000), 4000);
        // Zero means "did not report": ignored.
        counter.observe(raw, 0);
        assert_eq!(counter.corrected(1000), 4000);
    }

    #[test]
    fn the_estimate_counts_non_ascii_text_at_least_one_token_a_character() {
        let counter = TokenCounter::estimate();
        assert_eq!(counter.count("日本語のテキスト"), 8);
        assert_eq!(counter.count(""), 0);
    }
}

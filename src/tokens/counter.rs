//! Counting tokens: the server's own tokenizer when it offers one
//! (llama.cpp's `POST /tokenize`), the real BPE for OpenAI-family models,
//! and an estimate for everything else that the server's own count
//! corrects as the session goes.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tiktoken_rs::CoreBPE;

use super::pieces::{Memo, PIECEWISE_FROM};
use tiktoken_rs::tokenizer::{Tokenizer, get_tokenizer};

/// Tokens every chat message costs besides its text (role, separators), as
/// OpenAI's cookbook counts them; other servers' templates are close.
pub const PER_MESSAGE_OVERHEAD: usize = 4;
/// Tokens that prime the answer (`<|start|>assistant<|message|>`).
pub const REPLY_PRIMING: usize = 3;

/// Texts waiting to be counted by the server, at most this many (the
/// oldest go first: F2 counts every draft as it is typed).
const MAX_MISSES: usize = 64;
/// One `/tokenize` request gives up after this long; the text then stays
/// estimated.
const TOKENIZE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a prompt's tokens are counted, and whether the server reported the
/// last call's usage (F2 says which).
pub struct TokenCounter {
    kind: Kind,
    /// The last call's usage was missing and our own count stood in.
    usage_counted: AtomicBool,
    /// The last call's prompt tokens, as the server reported or we counted.
    last_prompt: AtomicU64,
}

enum Kind {
    /// The model's own tokenizer (o200k/cl100k): exact for its text.
    Bpe {
        bpe: &'static CoreBPE,
        name: &'static str,
        /// Counts of long texts' pieces, exact (`tokens::pieces`).
        memo: Memo,
    },
    /// A byte/character heuristic scaled by what the server last reported.
    Estimate {
        /// `usage.prompt_tokens / our estimate` of the previous call, in
        /// thousandths (1000 = the heuristic was right). Atomic so the turn
        /// task can correct a counter the UI also reads.
        correction_milli: AtomicU32,
    },
    /// The server's tokenizer, asked once per text (`POST /tokenize`,
    /// llama.cpp): counts then match the server's exactly. A text not yet
    /// asked is estimated (scaled by what the server said of the others)
    /// and remembered, and [`TokenCounter::learn`] asks for it before the
    /// next request is built.
    Server(Box<ServerTokenizer>),
}

struct ServerTokenizer {
    client: reqwest::Client,
    url: reqwest::Url,
    /// Tokens of each text the server counted, by the text's hash.
    counts: Mutex<HashMap<u64, usize>>,
    /// Texts counted by estimate since, to ask about.
    misses: Mutex<Vec<(u64, String)>>,
    /// The server's count over the estimate, in thousandths.
    correction_milli: AtomicU32,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn text_key(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn scaled(raw: usize, milli: &AtomicU32) -> usize {
    (raw * milli.load(Ordering::Relaxed) as usize).div_ceil(1000)
}

impl TokenCounter {
    fn of(kind: Kind) -> Self {
        TokenCounter {
            kind,
            usage_counted: AtomicBool::new(false),
            last_prompt: AtomicU64::new(0),
        }
    }

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
            Some((bpe, name)) => Self::of(Kind::Bpe {
                bpe,
                name,
                memo: Memo::default(),
            }),
            None => Self::estimate(),
        }
    }

    /// The heuristic counter, uncorrected.
    pub fn estimate() -> Self {
        Self::of(Kind::Estimate {
            correction_milli: AtomicU32::new(1000),
        })
    }

    /// The counter that asks the server's `POST /tokenize` at `url`
    /// (llama.cpp's: `{"content": text}` → `{"tokens": […]}`).
    pub fn server(url: reqwest::Url) -> Self {
        crate::agent::provider::openai::install_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(TOKENIZE_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self::of(Kind::Server(Box::new(ServerTokenizer {
            client,
            url,
            counts: Mutex::new(HashMap::new()),
            misses: Mutex::new(Vec::new()),
            correction_milli: AtomicU32::new(1000),
        })))
    }

    /// `o200k`, `cl100k`, `estimate ×1.12` or `server /tokenize`.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Bpe { name, .. } => (*name).to_owned(),
            Kind::Estimate { correction_milli } => format!(
                "estimate ×{:.2}",
                f64::from(correction_milli.load(Ordering::Relaxed)) / 1000.0
            ),
            Kind::Server(_) => "server /tokenize".to_owned(),
        }
    }

    #[cfg(test)]
    pub(crate) fn is_exact(&self) -> bool {
        matches!(self.kind, Kind::Bpe { .. })
    }

    /// Tokens of `text` as this counter's raw unit (the estimate before its
    /// correction; see [`TokenCounter::corrected`]).
    pub fn count(&self, text: &str) -> usize {
        match &self.kind {
            Kind::Bpe { bpe, .. } if text.len() < PIECEWISE_FROM => bpe.count_ordinary(text),
            Kind::Bpe { bpe, memo, .. } => memo.count(text, |piece| bpe.count_ordinary(piece)),
            Kind::Estimate { .. } => estimate(text),
            Kind::Server(server) => server.count(text),
        }
    }

    /// Raw units to tokens as the server counts them.
    pub(crate) fn corrected(&self, raw: usize) -> usize {
        match &self.kind {
            Kind::Bpe { .. } | Kind::Server(_) => raw,
            Kind::Estimate { correction_milli } => scaled(raw, correction_milli),
        }
    }

    /// Tokens as the server counts them to raw units (the inverse of
    /// [`TokenCounter::corrected`], rounded down so a budget is never exceeded).
    pub(crate) fn to_raw(&self, tokens: usize) -> usize {
        match &self.kind {
            Kind::Bpe { .. } | Kind::Server(_) => tokens,
            Kind::Estimate { correction_milli } => {
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
        self.usage_counted.store(false, Ordering::Relaxed);
        self.last_prompt.store(reported, Ordering::Relaxed);
        if let Kind::Estimate { correction_milli } = &self.kind
            && raw_estimate > 0
            && reported > 0
        {
            let ratio = (reported as f64 * 1000.0 / raw_estimate as f64).clamp(500.0, 4000.0);
            correction_milli.store(ratio.round() as u32, Ordering::Relaxed);
        }
    }

    /// The last call came back without usage (LM Studio never sends it):
    /// its tokens were our own count.
    pub(crate) fn note_counted_usage(&self, prompt_tokens: u64) {
        self.usage_counted.store(true, Ordering::Relaxed);
        self.last_prompt.store(prompt_tokens, Ordering::Relaxed);
    }

    /// Where the last call's usage came from and its prompt tokens, for
    /// F2: `("server", n)`, `("none sent, counted", n)`, or `("no call
    /// yet", 0)`.
    pub fn last_usage(&self) -> (&'static str, usize) {
        let tokens =
            usize::try_from(self.last_prompt.load(Ordering::Relaxed)).unwrap_or(usize::MAX);
        if self.usage_counted.load(Ordering::Relaxed) {
            ("none sent, counted", tokens)
        } else if tokens == 0 {
            ("no call yet", 0)
        } else {
            ("server", tokens)
        }
    }

    /// Asks the server to count the texts [`TokenCounter::count`] had to
    /// estimate; `true` when it counted any (the caller counts its prompt
    /// again). A server that fails to answer leaves them estimated.
    pub async fn learn(&self) -> bool {
        match &self.kind {
            Kind::Server(server) => server.learn().await,
            _ => false,
        }
    }
}

impl ServerTokenizer {
    fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let key = text_key(text);
        if let Some(n) = self.counts.lock().ok().and_then(|c| c.get(&key).copied()) {
            return n;
        }
        if let Ok(mut misses) = self.misses.lock()
            && !misses.iter().any(|(k, _)| *k == key)
        {
            if misses.len() >= MAX_MISSES {
                misses.remove(0);
            }
            misses.push((key, text.to_owned()));
        }
        scaled(estimate(text), &self.correction_milli)
    }

    async fn learn(&self) -> bool {
        let misses = match self.misses.lock() {
            Ok(mut misses) => std::mem::take(&mut *misses),
            Err(_) => return false,
        };
        let (mut server_total, mut estimate_total) = (0usize, 0usize);
        let mut learned = false;
        for (key, text) in misses {
            let Some(n) = self.ask(&text).await else {
                // Down or not a tokenizer after all: the rest stay estimated.
                break;
            };
            server_total += n;
            estimate_total += estimate(&text);
            if let Ok(mut counts) = self.counts.lock() {
                counts.insert(key, n);
            }
            learned = true;
        }
        if estimate_total > 0 {
            let ratio = (server_total as f64 * 1000.0 / estimate_total as f64).clamp(250.0, 4000.0);
            self.correction_milli
                .store(ratio.round() as u32, Ordering::Relaxed);
        }
        learned
    }

    async fn ask(&self, text: &str) -> Option<usize> {
        let body = serde_json::json!({ "content": text, "add_special": false });
        let response = self
            .client
            .post(self.url.clone())
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
        Some(answer.get("tokens")?.as_array()?.len())
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

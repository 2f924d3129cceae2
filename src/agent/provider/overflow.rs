//! Recognising "the request does not fit the model's window" in each
//! server's own words, so the turn loop can make room and send again
//! instead of ending the turn (issue 28).
//!
//! The shapes, as the servers send them today:
//!
//! | server | status | what says it |
//! |---|---|---|
//! | llama.cpp `llama-server` | 400 | `error.type: "exceed_context_size_error"`, with `n_prompt_tokens` and `n_ctx` |
//! | vLLM | 400 | "This model's maximum context length is N tokens. However, you requested M tokens (P in the messages, C in the completion)" or "… your request has P input tokens" |
//! | OpenAI | 400 | `error.code: "context_length_exceeded"`, "maximum context length is N tokens … resulted in M tokens" |
//! | Anthropic | 400 | "prompt is too long: M tokens > N maximum" |
//! | LM Studio | **200** | an `{"error": …}` body (or stream event): "… keep the first M tokens … context length of only N tokens" |
//! | Ollama | 500 | "no user query found in messages": its silent cut at `num_ctx` dropped the user's message; no numbers, so its default window (4096) is taken (a cut that left the message is seen in the usage, `turn::silent_cut`) |
//!
//! Every number is optional: what a server does not say stays `None`, and
//! the caller falls back to what it counted itself.

use regex::Regex;

/// The window Ollama serves a model whose Modelfile sets no `num_ctx`
/// (and `OLLAMA_CONTEXT_LENGTH` is unset): taken as the window when its
/// refusal does not say.
const OLLAMA_DEFAULT_WINDOW: usize = 4_096;
use serde_json::Value;
use std::sync::LazyLock;

/// A server's refusal of a request that does not fit its window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    /// Which shape it was recognised as (`llama.cpp`, `vLLM`, `OpenAI`,
    /// `Anthropic`, `LM Studio`, or `server` for a message that only
    /// says so in words).
    pub server: &'static str,
    /// The prompt's tokens as the server counted them, when it said.
    pub prompt_tokens: Option<usize>,
    /// The window the server really has, when it said.
    pub window: Option<usize>,
    /// The server's own message (shortened), for the error.
    pub message: String,
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the request does not fit the model's window")?;
        match (self.prompt_tokens, self.window) {
            (Some(p), Some(w)) => write!(
                f,
                " ({} counted {p} prompt tokens, window {w})",
                self.server
            )?,
            (Some(p), None) => write!(f, " ({} counted {p} prompt tokens)", self.server)?,
            (None, Some(w)) => write!(f, " ({} window {w})", self.server)?,
            (None, None) => write!(f, " ({})", self.server)?,
        }
        write!(f, ": {}", self.message)
    }
}

fn number(re: &Regex, text: &str) -> Option<usize> {
    re.captures(text)?
        .get(1)?
        .as_str()
        .replace(',', "")
        .parse()
        .ok()
}

fn positive(value: Option<&Value>) -> Option<usize> {
    value
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
        .and_then(|n| usize::try_from(n).ok())
}

macro_rules! pattern {
    ($name:ident, $re:expr) => {
        static $name: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new($re).ok());
    };
}

pattern!(
    MAX_CONTEXT,
    r"(?i)maximum context length is ([\d,]+) tokens"
);
pattern!(REQUESTED, r"(?i)you requested ([\d,]+) tokens");
pattern!(IN_MESSAGES, r"(?i)\(([\d,]+) in the messages");
pattern!(
    INPUT_TOKENS,
    r"(?i)(?:has|resulted in) ([\d,]+) (?:input )?tokens"
);
pattern!(
    ANTHROPIC,
    r"(?i)prompt is too long: ([\d,]+) tokens > ([\d,]+)"
);
pattern!(LMSTUDIO_KEEP, r"(?i)keep the first ([\d,]+) tokens");
pattern!(
    LMSTUDIO_WINDOW,
    r"(?i)context length of only ([\d,]+) tokens"
);
pattern!(
    LLAMA_TEXT,
    r"(?i)request \(([\d,]+) tokens\) exceeds the available context size \(([\d,]+) tokens\)"
);
pattern!(
    IN_WORDS,
    r"(?i)(context length|context window|context size|maximum context|prompt is too long|too many tokens|exceeds the (?:available )?context|greater than the context length)"
);

fn first(re: &LazyLock<Option<Regex>>, text: &str) -> Option<usize> {
    re.as_ref().and_then(|re| number(re, text))
}

fn both(re: &LazyLock<Option<Regex>>, text: &str) -> Option<(usize, usize)> {
    let caps = re.as_ref()?.captures(text)?;
    let get = |i: usize| caps.get(i)?.as_str().replace(',', "").parse().ok();
    Some((get(1)?, get(2)?))
}

/// The error object of a body (`{"error": {…}}`, `{"error": "…"}`, vLLM's
/// older top-level `{"object": "error", "message": …}`), recognised as an
/// overflow or not.
pub(crate) fn from_body(body: &Value) -> Option<Overflow> {
    let error = body.get("error").unwrap_or(body);
    from_error(error)
}

/// An error object or string, recognised as an overflow or not.
pub(crate) fn from_error(error: &Value) -> Option<Overflow> {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .unwrap_or_default();
    let kind = error
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let short = crate::agent::provider::http::preview(message);
    if kind == "exceed_context_size_error" {
        let text = both(&LLAMA_TEXT, message);
        return Some(Overflow {
            server: "llama.cpp",
            prompt_tokens: positive(error.get("n_prompt_tokens")).or(text.map(|t| t.0)),
            window: positive(error.get("n_ctx")).or(text.map(|t| t.1)),
            message: short,
        });
    }
    from_message(message, code == "context_length_exceeded").map(|mut overflow| {
        overflow.message = short;
        overflow
    })
}

/// A plain message (or one whose code already said "context length
/// exceeded"), recognised by its words.
pub(crate) fn from_message(message: &str, coded: bool) -> Option<Overflow> {
    let found = |server, prompt_tokens, window| {
        Some(Overflow {
            server,
            prompt_tokens,
            window,
            message: crate::agent::provider::http::preview(message),
        })
    };
    if let Some((prompt, window)) = both(&ANTHROPIC, message) {
        return found("Anthropic", Some(prompt), Some(window));
    }
    if let Some((prompt, window)) = both(&LLAMA_TEXT, message) {
        return found("llama.cpp", Some(prompt), Some(window));
    }
    if let Some(window) = first(&LMSTUDIO_WINDOW, message) {
        return found("LM Studio", first(&LMSTUDIO_KEEP, message), Some(window));
    }
    if let Some(window) = first(&MAX_CONTEXT, message) {
        // vLLM's "you requested M" counts the answer's room too; the part
        // "in the messages" (or "input tokens") is the prompt.
        let prompt = first(&IN_MESSAGES, message).or_else(|| first(&INPUT_TOKENS, message));
        let server = if coded || message.contains("resulted in") {
            "OpenAI"
        } else {
            "vLLM"
        };
        let prompt = prompt.or_else(|| {
            (server == "vLLM")
                .then(|| first(&REQUESTED, message))
                .flatten()
        });
        return found(server, prompt, Some(window));
    }
    if message.contains("no user query found in messages") {
        // It does not say its window; its default is what cuts most often.
        return found("Ollama", None, Some(OLLAMA_DEFAULT_WINDOW));
    }
    let in_words = IN_WORDS.as_ref().is_some_and(|re| re.is_match(message));
    if coded || in_words {
        return found(if coded { "OpenAI" } else { "server" }, None, None);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llama_cpp_says_it_with_numbers() {
        let body = json!({"error": {"code": 400, "message": "request (4245 tokens) exceeds the available context size (3072 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 4245, "n_ctx": 3072}});
        let o = from_body(&body).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("llama.cpp", Some(4245), Some(3072))
        );
        // An older build with the words only.
        let o = from_message("request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it", false).unwrap();
        assert_eq!((o.prompt_tokens, o.window), (Some(5000), Some(4096)));
    }

    #[test]
    fn vllm_openai_anthropic_and_lm_studio() {
        let vllm = json!({"object": "error", "message": "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.", "type": "BadRequestError", "code": 400});
        let o = from_body(&vllm).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("vLLM", Some(4096), Some(4096))
        );
        let vllm_new = json!({"error": {"message": "This model's maximum context length is 8192 tokens. However, your request has 9000 input tokens. Please reduce the length of the input messages.", "type": "BadRequestError"}});
        let o = from_body(&vllm_new).unwrap();
        assert_eq!((o.prompt_tokens, o.window), (Some(9000), Some(8192)));

        let openai = json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130,512 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}});
        let o = from_body(&openai).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("OpenAI", Some(130_512), Some(128_000))
        );

        let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}});
        let o = from_body(&anthropic).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("Anthropic", Some(208_310), Some(200_000))
        );

        let lm = json!({"error": "Trying to keep the first 5217 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"});
        let o = from_body(&lm).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("LM Studio", Some(5217), Some(4096))
        );
        let lm_plain = json!({"error": "The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input"});
        let o = from_body(&lm_plain).unwrap();
        assert_eq!((o.prompt_tokens, o.window), (None, None));
    }

    /// Ollama's cut took the user's message itself (our requests always
    /// have one): the only overflow it reports, with no numbers.
    #[test]
    fn ollama_no_user_query_is_its_default_window() {
        let o = from_body(&json!({"error": "no user query found in messages"})).unwrap();
        assert_eq!(
            (o.server, o.prompt_tokens, o.window),
            ("Ollama", None, Some(4096))
        );
    }

    #[test]
    fn other_errors_are_not_overflows() {
        for body in [
            json!({"error": {"message": "model not found", "type": "not_found_error"}}),
            json!({"error": {"message": "Invalid API key", "code": "invalid_api_key"}}),
            json!({"detail": "nope"}),
        ] {
            assert_eq!(from_body(&body), None, "{body}");
        }
    }
}

//! Keeps API keys out of everything we show or store: error messages from
//! servers (which sometimes echo the key), logs and session files.

/// What a redacted key is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest run after the prefix treated as a key: real keys are 32+
/// characters; 20 leaves ordinary words like `sk-learn` alone.
const MIN_KEY_TAIL: usize = 20;

/// Prefixes of API keys people paste: OpenAI-style `sk-` (also `sk-proj-`,
/// `sk-ant-`, `sk-or-`) on length alone; the others only when the rest
/// also mixes upper and lower case, as random keys do and snake_case
/// identifiers (`hf_hub_download_…`) do not.
const LOOSE_PREFIXES: [&str; 1] = ["sk-"];
const STRICT_PREFIXES: [&str; 7] = ["gsk_", "xai-", "hf_", "ghp_", "gho_", "github_pat_", "AIza"];

/// Replaces every token that looks like a secret API key with [`REDACTED`].
/// A token is a maximal run of `[A-Za-z0-9_-]`, so a prefix inside a longer
/// word (`task-…`) never matches.
pub(crate) fn redact_key_like(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_key_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_key_byte(bytes[i]) {
            i += 1;
        }
        // Runs are ASCII and end next to a non-key byte or the end, so
        // both ends are character boundaries.
        if looks_like_key(&text[start..i]) {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = i;
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn looks_like_key(token: &str) -> bool {
    let tail_after = |prefixes: &[&str]| {
        prefixes
            .iter()
            .find_map(|p| token.strip_prefix(p))
            .filter(|tail| tail.len() >= MIN_KEY_TAIL)
    };
    if tail_after(&LOOSE_PREFIXES).is_some() {
        return true;
    }
    tail_after(&STRICT_PREFIXES).is_some_and(|tail| {
        tail.bytes().any(|b| b.is_ascii_uppercase()) && tail.bytes().any(|b| b.is_ascii_lowercase())
    })
}

/// Secrets this process holds (every API key read from the environment),
/// removed verbatim by [`redact_known`] wherever they appear, whatever
/// their shape: a key without a vendor prefix is not caught by
/// [`redact_key_like`].
static KNOWN: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Shorter values are not remembered: replacing them would mangle text.
const MIN_KNOWN_LEN: usize = 8;

/// Remembers `secret` for [`redact_known`].
pub(crate) fn remember_secret(secret: &str) {
    if secret.len() < MIN_KNOWN_LEN {
        return;
    }
    let mut known = KNOWN
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !known.iter().any(|k| k == secret) {
        known.push(secret.to_owned());
    }
}

/// Every remembered secret verbatim, then anything key-shaped: what session
/// files and the log get.
pub(crate) fn redact_known(text: &str) -> String {
    let known = KNOWN
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut text = text.to_owned();
    for secret in known.iter() {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    redact_key_like(&text)
}

/// Redacts a known secret verbatim (when we hold the key) and then anything
/// key-shaped.
pub(crate) fn redact_secret(text: &str, secret: Option<&str>) -> String {
    let text = match secret {
        Some(secret) if secret.len() >= 8 => text.replace(secret, REDACTED),
        _ => text.to_owned(),
    };
    redact_key_like(&text)
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_shaped_tokens_are_redacted() {
        let text = "key sk-proj-abcdefghijklmnopqrstuvwxyz0123 and sk-ABCDEFGHIJKLMNOPQRSTUV.";
        assert_eq!(redact_key_like(text), "key [REDACTED] and [REDACTED].");
    }

    #[test]
    fn other_vendors_keys_need_mixed_case() {
        let text = "groq gsk_AbCdEfGhIjKlMnOpQrStUv12 hf hf_QwErTyUiOpAsDfGhJkLzXcVbNm google AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStU";
        assert_eq!(
            redact_key_like(text),
            "groq [REDACTED] hf [REDACTED] google [REDACTED]"
        );
        let code = "from huggingface_hub import hf_hub_download_with_retries_and_cache";
        assert_eq!(redact_key_like(code), code);
    }

    #[test]
    fn ordinary_words_survive() {
        for text in [
            "use sk-learn here",
            "task-abcdefghijklmnopqrstuvwxyz",
            "sk-",
            "",
            "-_-",
        ] {
            assert_eq!(redact_key_like(text), text);
        }
    }

    #[test]
    fn remembered_secrets_are_redacted_whatever_their_shape() {
        remember_secret("plain-looking-value-4711");
        remember_secret("short");
        assert_eq!(
            redact_known("key=plain-looking-value-4711; short; sk-abcdefghijklmnopqrstuvwxyz"),
            "key=[REDACTED]; short; [REDACTED]"
        );
    }

    #[test]
    fn known_secret_is_redacted_even_without_the_sk_prefix() {
        assert_eq!(
            redact_secret("bad key: local-secret-123", Some("local-secret-123")),
            "bad key: [REDACTED]"
        );
    }

    #[test]
    fn non_ascii_around_keys_is_fine() {
        let text = "日本sk-abcdefghijklmnopqrstuvwxyz🦀";
        assert_eq!(redact_key_like(text), "日本[REDACTED]🦀");
    }
}

//! Keeps API keys out of everything we show or store: error messages from
//! servers (which sometimes echo the key), logs and session files.

/// What a redacted key is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Shortest run after `sk-` treated as a key: real keys are 40+ characters;
/// 20 avoids eating ordinary words like `sk-learn`.
const MIN_KEY_TAIL: usize = 20;

/// Replaces every `sk-…` token that looks like an OpenAI-style secret key
/// (`sk-`, `sk-proj-`, `sk-ant-`… followed by 20+ key characters) with
/// [`REDACTED`].
pub fn redact_key_like(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = text[i..].find("sk-") {
        let start = i + found;
        let boundary = start == 0 || !is_key_byte(bytes[start - 1]);
        let tail = bytes[start + 3..]
            .iter()
            .take_while(|&&b| is_key_byte(b))
            .count();
        if boundary && tail >= MIN_KEY_TAIL {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = start + 3 + tail;
            i = copied;
        } else {
            i = start + 3;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Redacts a known secret verbatim (when we hold the key) and then anything
/// key-shaped.
pub fn redact_secret(text: &str, secret: Option<&str>) -> String {
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
    fn ordinary_words_survive() {
        for text in [
            "use sk-learn here",
            "task-abcdefghijklmnopqrstuvwxyz",
            "sk-",
            "",
        ] {
            assert_eq!(redact_key_like(text), text);
        }
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

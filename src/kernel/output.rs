//! Bounded text accumulation: keep the head and the tail, count the rest.
//!
//! The driver already caps each cell's output; this second cap keeps host
//! memory bounded whatever the kernel sends.

/// The note left where output was dropped. The driver writes the same
/// words (`dropped_marker` in `assets/kernel/hello_tui_kernel/capture.py`), so
/// [`dropped_markers_in`] finds both.
pub fn dropped_marker(bytes: u64) -> String {
    format!("[... {bytes} bytes of output dropped ...]")
}

/// The [`dropped_marker`]s in `text`: the bytes they stand for, and the
/// characters they (with the line breaks put around them) take up, so
/// whoever cuts the text again can report exact counts.
pub fn dropped_markers_in(text: &str) -> (u64, usize) {
    static MARKER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\n?\[\.\.\. (\d+) bytes of output dropped \.\.\.\]\n?")
            .unwrap_or_else(|_| unreachable!("a valid constant pattern"))
    });
    MARKER
        .captures_iter(text)
        .fold((0, 0), |(bytes, chars), c| {
            (
                bytes.saturating_add(c[1].parse::<u64>().unwrap_or(0)),
                chars + c[0].chars().count(),
            )
        })
}

/// Text kept as `head` + `tail` with the number of dropped bytes in between.
#[derive(Debug, Clone)]
pub struct CappedText {
    head: String,
    tail: String,
    head_cap: usize,
    tail_cap: usize,
    dropped: u64,
}

impl CappedText {
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head: String::new(),
            tail: String::new(),
            head_cap,
            tail_cap,
            dropped: 0,
        }
    }

    pub fn push(&mut self, mut text: &str) {
        if self.head.len() < self.head_cap {
            let cut = floor_char_boundary(text, self.head_cap - self.head.len());
            self.head.push_str(&text[..cut]);
            text = &text[cut..];
        }
        if text.is_empty() {
            return;
        }
        self.tail.push_str(text);
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            let cut = ceil_char_boundary(&self.tail, excess);
            self.dropped += cut as u64;
            self.tail.drain(..cut);
        }
    }

    /// Bytes that were neither kept in the head nor in the tail.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    pub fn finish(self) -> String {
        if self.dropped == 0 {
            return self.head + &self.tail;
        }
        format!(
            "{}\n{}\n{}",
            self.head,
            dropped_marker(self.dropped),
            self.tail
        )
    }
}

fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(s: &str, mut at: usize) -> usize {
    while at < s.len() && !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_the_rest() {
        let mut text = CappedText::new(4, 4);
        for _ in 0..10 {
            text.push("ab");
        }
        assert_eq!(text.dropped(), 12);
        assert_eq!(
            text.finish(),
            "abab\n[... 12 bytes of output dropped ...]\nabab"
        );
    }

    #[test]
    fn never_splits_a_character() {
        let mut text = CappedText::new(3, 3);
        text.push("ééééé");
        let out = text.finish();
        assert!(out.starts_with('é'));
        assert!(out.ends_with('é'));
    }

    #[test]
    fn small_output_is_untouched() {
        let mut text = CappedText::new(10, 10);
        text.push("hi\n");
        assert_eq!(text.finish(), "hi\n");
    }
}

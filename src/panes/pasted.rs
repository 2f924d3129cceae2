//! A big paste in the composer is one chip — `[pasted #1 · 2 000 lines ·
//! ~31k tokens]` — instead of a wall of text whose last rows are all that
//! shows (as Claude Code does). The text is kept beside the composer and
//! put in the chip's place whenever the message is read: sent, previewed
//! by F2, counted by the gauge, kept as a draft. Alt+E puts it back in
//! the composer to edit.

/// A paste this big becomes a chip: more lines than the composer shows,
/// or more characters than a few screens of them.
const CHIP_LINES: usize = 8;
const CHIP_CHARS: usize = 1_500;

/// The pastes the composer holds as chips, in order.
#[derive(Debug, Default, Clone)]
pub struct Pasted {
    chips: Vec<(String, String)>,
}

impl Pasted {
    /// The chip for `text` when it is big enough to be one (it is kept),
    /// else `None` (insert the text itself).
    pub fn chip(&mut self, text: &str) -> Option<String> {
        let lines = text.lines().count();
        let chars = text.chars().count();
        if lines <= CHIP_LINES && chars <= CHIP_CHARS {
            return None;
        }
        let marker = format!(
            "[pasted #{} · {} lines · ~{} tokens]",
            self.chips.len() + 1,
            grouped(lines),
            crate::agent::prompt::short(chars.div_ceil(4))
        );
        self.chips.push((marker.clone(), text.to_owned()));
        Some(marker)
    }

    /// `composer` with each chip still in it replaced by its text (a chip
    /// the user deleted is gone with it).
    pub fn expand(&self, composer: &str) -> String {
        self.chips
            .iter()
            .fold(composer.to_owned(), |text, (marker, pasted)| {
                text.replacen(marker.as_str(), pasted, 1)
            })
    }

    pub fn is_empty(&self) -> bool {
        self.chips.is_empty()
    }

    /// Forgets every chip (the message was sent or expanded).
    pub fn clear(&mut self) {
        self.chips.clear();
    }
}

/// 2000 → `2 000`: line counts read at a glance.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_paste_is_a_chip_and_comes_back_whole() {
        let mut pasted = Pasted::default();
        assert_eq!(pasted.chip("one line"), None);
        let log: String = (0..2_000).map(|i| format!("line {i}\n")).collect();
        let chip = pasted.chip(&log).unwrap();
        assert_eq!(chip, "[pasted #1 · 2 000 lines · ~5k tokens]");
        let composer = format!("why does this fail?\n{chip}\nthanks");
        assert_eq!(
            pasted.expand(&composer),
            format!("why does this fail?\n{log}\nthanks")
        );
        // Deleted from the composer, it is not sent.
        assert_eq!(pasted.expand("just this"), "just this");
    }
}

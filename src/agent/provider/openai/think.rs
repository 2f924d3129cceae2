//! `<think>…</think>` inside `content`: how DeepSeek-R1, Qwen3 and QwQ
//! answer through servers that do not split reasoning out (llama.cpp
//! without `--reasoning-format`, older Ollama, plain vLLM). The tags can be
//! split across chunks anywhere, so a possible start of a tag is held back
//! until the next chunk decides it.
//!
//! Only a block that opens the answer (after optional whitespace) is
//! reasoning: an answer that talks about `<think>` tags later stays as it is.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// A piece of `content`, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Reasoning(String),
    Answer(String),
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing but whitespace yet: a `<think>` may still open.
    #[default]
    Start,
    Thinking,
    /// Just after `</think>`: the whitespace before the answer is dropped.
    AfterThinking,
    Answer,
}

#[derive(Debug, Default)]
pub(crate) struct ThinkSplitter {
    state: State,
    /// Text held back: it may be the start of a tag.
    held: String,
}

impl ThinkSplitter {
    /// Sorts the next piece of `content`.
    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        self.held.push_str(text);
        loop {
            match self.state {
                State::Start => {
                    let trimmed = self.held.trim_start();
                    if let Some(rest) = trimmed.strip_prefix(OPEN) {
                        self.held = rest.to_owned();
                        self.state = State::Thinking;
                    } else if OPEN.starts_with(trimmed) {
                        return out; // whitespace, or part of the tag: wait
                    } else {
                        self.state = State::Answer;
                    }
                }
                State::Thinking => match self.held.find(CLOSE) {
                    Some(at) => {
                        push(&mut out, Piece::Reasoning(self.held[..at].to_owned()));
                        self.held.drain(..at + CLOSE.len());
                        self.state = State::AfterThinking;
                    }
                    None => {
                        let keep = partial_suffix(&self.held, CLOSE);
                        let done = self.held.len() - keep;
                        push(&mut out, Piece::Reasoning(self.held[..done].to_owned()));
                        self.held.drain(..done);
                        return out;
                    }
                },
                State::AfterThinking => {
                    let start = self.held.len() - self.held.trim_start().len();
                    self.held.drain(..start);
                    if self.held.is_empty() {
                        return out;
                    }
                    self.state = State::Answer;
                }
                State::Answer => {
                    push(&mut out, Piece::Answer(std::mem::take(&mut self.held)));
                    return out;
                }
            }
        }
    }

    /// The content ended: what was held back is what it looked like.
    pub fn finish(&mut self) -> Vec<Piece> {
        let held = std::mem::take(&mut self.held);
        match self.state {
            State::Thinking => vec![Piece::Reasoning(held)],
            State::Start if held.trim().is_empty() => Vec::new(),
            _ => vec![Piece::Answer(held)],
        }
        .into_iter()
        .filter(|p| !matches!(p, Piece::Reasoning(t) | Piece::Answer(t) if t.is_empty()))
        .collect()
    }
}

fn push(out: &mut Vec<Piece>, piece: Piece) {
    if !matches!(&piece, Piece::Reasoning(t) | Piece::Answer(t) if t.is_empty()) {
        out.push(piece);
    }
}

/// The length of the longest end of `text` that `tag` starts with (a tag
/// may be arriving); tags are ASCII, so the cut is a character boundary.
fn partial_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len().min(text.len() + 1))
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` and joins the pieces by kind.
    fn split(chunks: &[&str]) -> (String, String) {
        let mut splitter = ThinkSplitter::default();
        let mut pieces: Vec<Piece> = chunks.iter().flat_map(|c| splitter.push(c)).collect();
        pieces.extend(splitter.finish());
        let mut reasoning = String::new();
        let mut answer = String::new();
        for piece in pieces {
            match piece {
                Piece::Reasoning(t) => reasoning.push_str(&t),
                Piece::Answer(t) => answer.push_str(&t),
            }
        }
        (reasoning, answer)
    }

    #[test]
    fn a_think_block_split_at_every_byte_is_found() {
        let text = "\n<think>Is 7 prime? Yes — 7 has no divisors 🦀.</think>\n\nYes, 7 is prime.";
        for cut in 1..text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            let (a, b) = text.split_at(cut);
            assert_eq!(
                split(&[a, b]),
                (
                    "Is 7 prime? Yes — 7 has no divisors 🦀.".to_owned(),
                    "Yes, 7 is prime.".to_owned()
                ),
                "cut at {cut}"
            );
        }
        let bytewise: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = bytewise.iter().map(String::as_str).collect();
        assert_eq!(split(&refs).1, "Yes, 7 is prime.");
    }

    #[test]
    fn only_a_block_that_opens_the_answer_is_reasoning() {
        assert_eq!(
            split(&["Use ", "<think> tags ", "like </think> this."]),
            (
                String::new(),
                "Use <think> tags like </think> this.".to_owned()
            )
        );
        assert_eq!(
            split(&["<thin", "king> is a word"]).1,
            "<thinking> is a word"
        );
        assert_eq!(split(&["plain"]), (String::new(), "plain".to_owned()));
    }

    #[test]
    fn an_unclosed_block_is_all_reasoning_and_a_lone_partial_tag_is_text() {
        assert_eq!(
            split(&["<think>still going </thi"]),
            ("still going </thi".to_owned(), String::new())
        );
        assert_eq!(split(&["  <thi"]), (String::new(), "  <thi".to_owned()));
    }
}

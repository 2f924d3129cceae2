//! A big paste in the composer is one chip — `[pasted #1 · 2 000 lines ·
//! ~31k tokens]` — instead of a wall of text whose last rows are all that
//! shows (as Claude Code does). The text is kept beside the composer and
//! put in the chip's place whenever the message is read: sent, previewed
//! by F2, counted by the gauge, kept as a draft. Alt+E puts it back in
//! the composer to edit.
//!
//! A chip is one unit, as in Claude Code and Codex: the composer's keys go
//! through [`Pasted::input`], which keeps the cursor out of a chip (a move
//! that lands inside jumps over it, so typing cannot go in) and widens a
//! deletion that cuts into a chip to the whole chip (Backspace at its
//! edge, a word deleted into it). A label with a piece missing would be
//! sent as text in place of the paste, so none is ever left.

use std::ops::Range;

use tui_textarea::{CursorMove, TextArea};

/// A paste this big becomes a chip: more lines than the composer shows,
/// or more characters than a few screens of them.
const CHIP_LINES: usize = 8;
const CHIP_CHARS: usize = 1_500;

/// One paste held as a chip.
#[derive(Debug, Clone)]
struct Chip {
    number: usize,
    /// What the composer shows in the text's place.
    label: String,
    text: String,
}

/// The pastes of the message being written, as chips. A chip is kept
/// until the message is sent, not only while its label is in the
/// composer: undo, redo and Ctrl+Y can put the label back, and it must
/// come back with its text.
#[derive(Debug, Default, Clone)]
pub struct Pasted {
    chips: Vec<Chip>,
}

/// A place in the composer: row, and column in characters.
type Pos = (usize, usize);

impl Pasted {
    /// The chip for `text` when it is big enough to be one (it is kept),
    /// else `None` (insert the text itself).
    pub fn chip(&mut self, text: &str) -> Option<String> {
        let lines = text.lines().count();
        let chars = text.chars().count();
        if lines <= CHIP_LINES && chars <= CHIP_CHARS {
            return None;
        }
        // Numbers are never reused while a chip is kept: two chips with
        // one label would be one text twice.
        let number = self.chips.iter().map(|c| c.number).max().unwrap_or(0) + 1;
        let label = format!(
            "[pasted #{number} · {} lines · ~{} tokens]",
            grouped(lines),
            crate::agent::prompt::short(chars.div_ceil(4))
        );
        self.chips.push(Chip {
            number,
            label: label.clone(),
            text: text.to_owned(),
        });
        Some(label)
    }

    /// `composer` with each chip in it replaced by its text (a chip the
    /// user deleted is gone with it). One pass: a pasted text that reads
    /// like a chip label is not expanded again.
    pub fn expand(&self, composer: &str) -> String {
        let mut out = String::with_capacity(composer.len());
        let mut rest = 0;
        for (range, chip) in self.find(composer) {
            out.push_str(&composer[rest..range.start]);
            out.push_str(&chip.text);
            rest = range.end;
        }
        out.push_str(&composer[rest..]);
        out
    }

    /// Whether `composer` holds a chip (Alt+E has something to expand).
    pub fn any_in(&self, composer: &str) -> bool {
        self.chips.iter().any(|c| composer.contains(&c.label))
    }

    /// The message was sent: forgets every paste but those whose chip
    /// `cut` (what Ctrl+Y would put back) still holds.
    pub fn keep_only_in(&mut self, cut: &str) {
        self.chips.retain(|c| cut.contains(&c.label));
    }

    /// The chips in `text`, as byte ranges in order.
    fn find(&self, text: &str) -> Vec<(Range<usize>, &Chip)> {
        let mut found: Vec<(Range<usize>, &Chip)> = self
            .chips
            .iter()
            .flat_map(|chip| {
                text.match_indices(chip.label.as_str())
                    .map(move |(at, label)| (at..at + label.len(), chip))
            })
            .collect();
        found.sort_by_key(|(range, _)| range.start);
        // Labels open with their only `[`, so they cannot overlap; should
        // one ever, the first wins.
        let mut end = 0;
        found.retain(|(range, _)| {
            let apart = range.start >= end;
            if apart {
                end = range.end;
            }
            apart
        });
        found
    }

    /// The chips on `line`, as column ranges (in characters).
    fn columns(&self, line: &str) -> Vec<Range<usize>> {
        self.find(line)
            .into_iter()
            .map(|(range, _)| column(line, range.start)..column(line, range.end))
            .collect()
    }

    /// One key for the composer, each chip taken as one unit: a deletion
    /// that cuts into a chip deletes all of it (one undo step, as the key
    /// would have been), and the cursor never stays inside a chip — it
    /// jumps to the edge it was going towards. Whether the text changed.
    pub fn input(&self, composer: &mut TextArea<'static>, input: tui_textarea::Input) -> bool {
        if self.chips.is_empty() {
            return composer.input(input);
        }
        let was = pos(composer);
        let selecting = composer.selection_range().is_some();
        let before = composer.lines().to_vec();
        let cut = composer.yank_text();
        let changed = composer.input(input);
        // A selection's ends are places the cursor was, outside chips: it
        // holds whole chips. Without one, what was deleted is found from
        // the texts and the cursor.
        if changed
            && !selecting
            && let Some(deleted) = deleted_range(&before, was, composer)
            && let Some(whole) = self.widened(&before, deleted)
        {
            delete_instead(composer, &before, whole, &cut);
        }
        self.keep_cursor_out(composer, was);
        changed
    }

    /// `range` grown to the whole of each chip it cuts into; `None` when
    /// it cuts into none. (Rows between its ends go whole.)
    fn widened(&self, lines: &[String], range: (Pos, Pos)) -> Option<(Pos, Pos)> {
        let (mut from, mut to) = range;
        for row in [range.0.0, range.1.0] {
            for cols in self.columns(lines.get(row)?) {
                let (start, end) = ((row, cols.start), (row, cols.end));
                if from < end && to > start {
                    from = from.min(start);
                    to = to.max(end);
                }
            }
        }
        ((from, to) != range).then_some((from, to))
    }

    /// Moves the cursor out of a chip it landed in: to the chip's start
    /// when it was going back from `was`, else to its end.
    fn keep_cursor_out(&self, composer: &mut TextArea<'static>, was: Pos) {
        let at = pos(composer);
        let Some(line) = composer.lines().get(at.0) else {
            return;
        };
        let Some(chip) = self
            .columns(line)
            .into_iter()
            .find(|cols| cols.start < at.1 && at.1 < cols.end)
        else {
            return;
        };
        let col = if at < was { chip.start } else { chip.end };
        place(composer, (at.0, col));
    }
}

/// The composer's cursor.
fn pos(composer: &TextArea<'_>) -> Pos {
    let cursor = composer.cursor();
    (cursor.0, cursor.1)
}

/// The byte offset `at` of `line` as a column (in characters).
fn column(line: &str, at: usize) -> usize {
    line[..at].chars().count()
}

/// The byte offset of column `col` of `line` (its end past the last).
fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col)
        .map_or(line.len(), |(at, _)| at)
}

/// Characters of `lines`, one more per line (a newline each; only
/// differences of lengths are used).
fn length(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count() + 1).sum::<usize>()
}

/// The place `n` characters after `at` (a newline counts one).
fn advance(lines: &[String], at: Pos, mut n: usize) -> Option<Pos> {
    let (mut row, mut col) = at;
    loop {
        let room = lines.get(row)?.chars().count().checked_sub(col)?;
        if n <= room {
            return Some((row, col + n));
        }
        n -= room + 1;
        row += 1;
        col = 0;
    }
}

/// Characters from `from` to `to` in `lines` (a newline counts one).
fn distance(lines: &[String], from: Pos, to: Pos) -> usize {
    if from.0 == to.0 {
        return to.1 - from.1;
    }
    let first = lines[from.0].chars().count() - from.1 + 1;
    let between: usize = lines[from.0 + 1..to.0]
        .iter()
        .map(|l| l.chars().count() + 1)
        .sum();
    first + between + to.1
}

/// What a key deleted from `before` when all it did was delete the text
/// between two places next to the cursor (Backspace, Delete, a word, the
/// rest of the line); `None` for any other edit (typing, undo, …).
fn deleted_range(before: &[String], was: Pos, composer: &TextArea<'_>) -> Option<(Pos, Pos)> {
    let after = composer.lines();
    let now = pos(composer);
    let range = if now < was {
        (now, was)
    } else if now == was {
        let gone = length(before)
            .checked_sub(length(after))
            .filter(|&n| n > 0)?;
        (was, advance(before, was, gone)?)
    } else {
        return None;
    };
    is_without(before, range, after).then_some(range)
}

/// Whether `after` is `before` without `range`.
fn is_without(before: &[String], (from, to): (Pos, Pos), after: &[String]) -> bool {
    let (Some(first), Some(last)) = (before.get(from.0), before.get(to.0)) else {
        return false;
    };
    let joined = [
        &first[..byte_at(first, from.1)],
        &last[byte_at(last, to.1)..],
    ]
    .concat();
    after.len() + (to.0 - from.0) == before.len()
        && after[..from.0] == before[..from.0]
        && after[from.0] == joined
        && after[from.0 + 1..] == before[to.0 + 1..]
}

/// Takes back the key's deletion and deletes `range` of `before` in its
/// place. The cut buffer is what the key left there (a word deleted is
/// cut; a character is not), with the whole chip when it was cut.
fn delete_instead(
    composer: &mut TextArea<'static>,
    before: &[String],
    range: (Pos, Pos),
    cut: &str,
) {
    let key_cut = composer.yank_text() != cut;
    if !composer.undo() {
        return;
    }
    if composer.lines() != before {
        // Not the key's edit that went: put it back as it was.
        composer.redo();
        return;
    }
    place(composer, range.0);
    composer.delete_str(distance(before, range.0, range.1));
    if !key_cut {
        composer.set_yank_text(cut);
    }
}

/// Puts the cursor at `at`.
fn place(composer: &mut TextArea<'static>, at: Pos) {
    if let (Ok(row), Ok(col)) = (u16::try_from(at.0), u16::try_from(at.1)) {
        composer.move_cursor(CursorMove::Jump(row, col));
        return;
    }
    // Past what a jump reaches: a character at a time (a chip's width in
    // practice), until it gets there or stops moving.
    loop {
        let now = pos(composer);
        if now == at {
            return;
        }
        composer.move_cursor(if now < at {
            CursorMove::Forward
        } else {
            CursorMove::Back
        });
        if pos(composer) == now {
            return;
        }
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

    /// Expanding is one pass: a paste whose text holds another chip's
    /// label (a screen of hello-tui pasted) keeps that label as text, and
    /// a chip put in twice (Ctrl+Y twice) is its text twice.
    #[test]
    fn expanding_is_one_pass_over_the_composer() {
        let mut pasted = Pasted::default();
        let first: String = (0..20).map(|i| format!("a {i}\n")).collect();
        let one = pasted.chip(&first).unwrap();
        let second = format!("{one}\n{first}");
        let two = pasted.chip(&second).unwrap();
        assert!(two.starts_with("[pasted #2 · "), "{two}");
        assert_eq!(pasted.expand(&two), second);
        assert_eq!(
            pasted.expand(&format!("{one}{one}")),
            format!("{first}{first}")
        );
    }

    /// After a send only the chips the cut buffer holds are kept, and a
    /// new paste never takes a kept chip's number.
    #[test]
    fn a_send_keeps_only_what_ctrl_y_can_bring_back() {
        let mut pasted = Pasted::default();
        let text: String = (0..20).map(|i| format!("b {i}\n")).collect();
        let one = pasted.chip(&text).unwrap();
        let two = pasted.chip(&text).unwrap();
        pasted.keep_only_in(&format!("see {two}"));
        assert!(!pasted.any_in(&one));
        assert!(pasted.any_in(&two));
        let three = pasted.chip(&text).unwrap();
        assert!(three.starts_with("[pasted #3 · "), "{three}");
    }

    #[test]
    fn a_deletion_is_found_from_the_texts_and_the_cursor() {
        let lines = |text: &str| -> Vec<String> { text.split('\n').map(str::to_owned).collect() };
        let mut composer = TextArea::new(lines("ab\ncd"));
        composer.move_cursor(CursorMove::Jump(1, 0));
        let before = composer.lines().to_vec();
        composer.delete_char();
        assert_eq!(
            deleted_range(&before, (1, 0), &composer),
            Some(((0, 2), (1, 0)))
        );
        let mut composer = TextArea::new(lines("ab\ncd"));
        let before = composer.lines().to_vec();
        composer.delete_str(4);
        assert_eq!(
            deleted_range(&before, (0, 0), &composer),
            Some(((0, 0), (1, 1)))
        );
        // Typing is no deletion.
        let mut composer = TextArea::new(lines("ab"));
        let before = composer.lines().to_vec();
        composer.insert_char('x');
        assert_eq!(deleted_range(&before, (0, 0), &composer), None);
    }
}

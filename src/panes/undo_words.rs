//! The composer's undo and redo take a typed word at a time, as the file
//! view's do (and vim's, helix's, VS Code's), not a character at a time:
//! the text area records each typed character as an edit of its own, so
//! Ctrl+U after typing `explain this` took twelve presses.
//!
//! Steps are joined from what the text area exposes (undo, redo and the
//! text): one step is taken, and further steps only while each is one
//! word character typed right before (undo) or right after (redo) the one
//! before it; a step that is anything else is put back. So a paste, a
//! deleted chip or a deleted word stays a step of its own.

use tui_textarea::TextArea;

/// Ctrl+U: takes back the last edit, and with it the rest of the word it
/// was typed in. Whether anything changed.
pub fn undo(composer: &mut TextArea<'static>) -> bool {
    walk(composer, Direction::Back)
}

/// Ctrl+R: puts back what [`undo`] took, a word at a time.
pub fn redo(composer: &mut TextArea<'static>) -> bool {
    walk(composer, Direction::Forward)
}

#[derive(Clone, Copy)]
enum Direction {
    Back,
    Forward,
}

impl Direction {
    fn step(self, composer: &mut TextArea<'static>) -> bool {
        match self {
            Direction::Back => composer.undo(),
            Direction::Forward => composer.redo(),
        }
    }

    fn put_back(self, composer: &mut TextArea<'static>) {
        match self {
            Direction::Back => composer.redo(),
            Direction::Forward => composer.undo(),
        };
    }
}

fn walk(composer: &mut TextArea<'static>, direction: Direction) -> bool {
    let mut before = composer.lines().to_vec();
    if !direction.step(composer) {
        return false;
    }
    let Some(mut last) = one_word_char(&before, composer.lines(), direction) else {
        return true;
    };
    loop {
        before = composer.lines().to_vec();
        if !direction.step(composer) {
            return true;
        }
        match one_word_char(&before, composer.lines(), direction) {
            Some(at) if next_to(last, at, direction) => last = at,
            _ => {
                direction.put_back(composer);
                return true;
            }
        }
    }
}

/// Where the one word character is that the step from `before` to `after`
/// took away (undo) or put in (redo), as (row, column in characters).
fn one_word_char(
    before: &[String],
    after: &[String],
    direction: Direction,
) -> Option<(usize, usize)> {
    let (longer, shorter) = match direction {
        Direction::Back => (before, after),
        Direction::Forward => (after, before),
    };
    if longer.len() != shorter.len() {
        return None;
    }
    let mut rows = longer
        .iter()
        .zip(shorter)
        .enumerate()
        .filter(|(_, (a, b))| a != b);
    let (row, (long, short)) = rows.next()?;
    if rows.next().is_some() {
        return None;
    }
    let long: Vec<char> = long.chars().collect();
    let short: Vec<char> = short.chars().collect();
    if long.len() != short.len() + 1 {
        return None;
    }
    let column = long
        .iter()
        .zip(&short)
        .position(|(a, b)| a != b)
        .unwrap_or(short.len());
    let typed = long[column];
    let same = long[..column] == short[..column] && long[column + 1..] == short[column..];
    (same && (typed.is_alphanumeric() || typed == '_')).then_some((row, column))
}

/// Whether `at` is the character typed just before `last` (undo walks
/// back through a word) or just after it (redo walks forward).
fn next_to(last: (usize, usize), at: (usize, usize), direction: Direction) -> bool {
    at.0 == last.0
        && match direction {
            Direction::Back => at.1 + 1 == last.1,
            Direction::Forward => last.1 + 1 == at.1,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tui_textarea::{Input, Key};

    fn typed(text: &str) -> TextArea<'static> {
        let mut composer = TextArea::default();
        for c in text.chars() {
            let key = if c == '\n' { Key::Enter } else { Key::Char(c) };
            composer.input(Input {
                key,
                ..Input::default()
            });
        }
        composer
    }

    #[test]
    fn undo_takes_a_word_then_the_space_then_the_word_before() {
        let mut composer = typed("explain this");
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["explain "]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["explain"]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), [""]);
        assert!(!undo(&mut composer));
        assert!(redo(&mut composer));
        assert_eq!(composer.lines(), ["explain"]);
        assert!(redo(&mut composer));
        assert_eq!(composer.lines(), ["explain "]);
        assert!(redo(&mut composer));
        assert_eq!(composer.lines(), ["explain this"]);
        assert!(!redo(&mut composer));
    }

    #[test]
    fn a_paste_or_a_new_line_is_a_step_of_its_own() {
        let mut composer = typed("ab\ncd");
        composer.insert_str("PASTED");
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["ab", "cd"]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["ab", ""]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["ab"]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), [""]);
    }

    #[test]
    fn a_word_typed_in_the_middle_of_the_text_goes_whole() {
        let mut composer = typed("fix  bug");
        composer.move_cursor(tui_textarea::CursorMove::Jump(0, 4));
        for c in "the".chars() {
            composer.input(Input {
                key: Key::Char(c),
                ..Input::default()
            });
        }
        assert_eq!(composer.lines(), ["fix the bug"]);
        assert!(undo(&mut composer));
        assert_eq!(composer.lines(), ["fix  bug"]);
    }
}

//! One single-line input for every prompt of the workbench — the search
//! query, the file picker, go-to-line and find, the variables filter and an
//! approval's denial reason — on the same `tui-textarea` engine as the
//! composer. It gives them all cursor movement, word motions (Alt+←/→ or
//! Ctrl+←/→, Ctrl+W), Home/End and the same paste. What comes in is cleaned
//! of control sequences, tabs become spaces, newlines never get in and a
//! line holds at most [`MAX_CHARS`], so every character is one drawn glyph
//! and the cursor index is where it is drawn.

mod draw;
pub use draw::spans;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_textarea::{CursorMove, Input, TextArea};

/// Characters a line keeps: far more than any query or reason, few enough
/// that a pasted file never makes typing slow.
pub(crate) const MAX_CHARS: usize = 4096;

/// `text`'s first line as a line may hold it: cleaned, tabs as spaces.
fn clean_line(text: &str) -> String {
    let first = text.split(['\n', '\r']).next().unwrap_or_default();
    crate::sanitize::for_display(&first.replace('\t', " ")).into_owned()
}

/// What a key did to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The key means nothing here.
    None,
    /// Only the cursor moved (redraw; the text is unchanged).
    Cursor,
    /// The text changed.
    Text,
}

impl Edit {
    pub(crate) fn text_changed(self) -> bool {
        self == Edit::Text
    }

    pub fn any(self) -> bool {
        self != Edit::None
    }
}

/// A one-line text input with a cursor.
#[derive(Debug, Clone)]
pub struct LineInput {
    area: TextArea<'static>,
}

impl Default for LineInput {
    fn default() -> Self {
        Self::new("")
    }
}

impl PartialEq for LineInput {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text() && self.cursor() == other.cursor()
    }
}

impl Eq for LineInput {}

impl LineInput {
    /// A line holding `text` (its first line, cleaned), the cursor at the end.
    pub fn new(text: &str) -> Self {
        let first: String = clean_line(text).chars().take(MAX_CHARS).collect();
        let mut area = TextArea::new(vec![first]);
        area.move_cursor(CursorMove::End);
        Self { area }
    }

    pub fn text(&self) -> &str {
        self.area.lines().first().map_or("", String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.text().is_empty()
    }

    /// The cursor, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.area.cursor().1
    }

    /// Empties the line; true when it had text.
    pub fn clear(&mut self) -> bool {
        let had = !self.is_empty();
        *self = Self::default();
        had
    }

    /// Applies a key that is not a binding of the layer the line is in.
    pub fn input(&mut self, key: KeyEvent) -> Edit {
        let before = (self.text().len(), self.cursor());
        let changed = match key.code {
            // A line has no second line and no tab stops.
            KeyCode::Enter | KeyCode::Tab | KeyCode::BackTab => return Edit::None,
            KeyCode::Char('j' | 'm') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                return Edit::None;
            }
            // Readline's kill-to-start, as the prompts always had (the
            // textarea's own Ctrl+U is undo).
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.area.delete_line_by_head()
            }
            // Word motions as in the composer and most terminals' readline.
            KeyCode::Left if key.modifiers.contains(KeyModifiers::ALT) => {
                self.area.move_cursor(CursorMove::WordBack);
                false
            }
            KeyCode::Right if key.modifiers.contains(KeyModifiers::ALT) => {
                self.area.move_cursor(CursorMove::WordForward);
                false
            }
            KeyCode::Char(_)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                    && self.text().chars().count() >= MAX_CHARS =>
            {
                false
            }
            _ => self.area.input(Input::from(key)),
        };
        if changed {
            Edit::Text
        } else if (self.text().len(), self.cursor()) != before {
            Edit::Cursor
        } else {
            Edit::None
        }
    }

    /// Inserts the first line of `text` at the cursor (cleaned, up to the
    /// line's room); true when it added anything.
    pub fn paste(&mut self, text: &str) -> bool {
        let room = MAX_CHARS.saturating_sub(self.text().chars().count());
        let first: String = clean_line(text).chars().take(room).collect();
        !first.is_empty() && self.area.insert_str(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn typed(text: &str) -> LineInput {
        let mut line = LineInput::default();
        for c in text.chars() {
            line.input(key(KeyCode::Char(c), KeyModifiers::NONE));
        }
        line
    }

    #[test]
    fn the_cursor_moves_and_typing_lands_at_it() {
        let mut line = typed("chekAuth");
        for _ in 0..5 {
            assert_eq!(
                line.input(key(KeyCode::Left, KeyModifiers::NONE)),
                Edit::Cursor
            );
        }
        assert_eq!(
            line.input(key(KeyCode::Char('c'), KeyModifiers::NONE)),
            Edit::Text
        );
        assert_eq!(line.text(), "checkAuth");
        line.input(key(KeyCode::Home, KeyModifiers::NONE));
        assert_eq!(line.cursor(), 0);
        line.input(key(KeyCode::End, KeyModifiers::NONE));
        assert_eq!(line.cursor(), 9);
    }

    #[test]
    fn words_go_with_ctrl_w_and_the_head_with_ctrl_u() {
        let mut line = typed("find the user");
        line.input(key(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(line.text(), "find the ");
        line.input(key(KeyCode::Left, KeyModifiers::NONE));
        line.input(key(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(line.text(), " ");
    }

    #[test]
    fn alt_and_ctrl_arrows_move_by_word() {
        for modifiers in [KeyModifiers::ALT, KeyModifiers::CONTROL] {
            let mut line = typed("find the user");
            assert_eq!(line.input(key(KeyCode::Left, modifiers)), Edit::Cursor);
            assert_eq!(line.cursor(), 9, "{modifiers:?}");
            line.input(key(KeyCode::Left, modifiers));
            assert_eq!(line.cursor(), 5);
            line.input(key(KeyCode::Right, modifiers));
            assert!(line.cursor() > 5, "{modifiers:?}");
        }
    }

    #[test]
    fn what_comes_in_is_cleaned_and_capped() {
        let line = LineInput::new("a\tb\u{1b}[31mERR\nsecond");
        assert_eq!(line.text(), "a bERR");
        assert_eq!(line.cursor(), 6, "the cursor index is the drawn position");
        let mut big = LineInput::default();
        assert!(big.paste(&"x".repeat(MAX_CHARS * 3)));
        assert_eq!(big.text().chars().count(), MAX_CHARS);
        assert!(!big.paste("more"));
        assert_eq!(
            big.input(key(KeyCode::Char('y'), KeyModifiers::NONE)),
            Edit::None
        );
        assert_eq!(
            big.input(key(KeyCode::Char('w'), KeyModifiers::CONTROL)),
            Edit::Text,
            "a full line can still be edited"
        );
    }

    #[test]
    fn newlines_and_tabs_never_get_in() {
        let mut line = typed("a");
        assert_eq!(
            line.input(key(KeyCode::Enter, KeyModifiers::NONE)),
            Edit::None
        );
        assert_eq!(
            line.input(key(KeyCode::Char('j'), KeyModifiers::CONTROL)),
            Edit::None
        );
        assert_eq!(
            line.input(key(KeyCode::Tab, KeyModifiers::NONE)),
            Edit::None
        );
        assert!(line.paste("b\tc\nsecond line"));
        assert_eq!(line.text(), "ab c");
        assert!(!line.paste("\nonly later lines"));
        assert_eq!(LineInput::new("x\ny").text(), "x");
    }

    #[test]
    fn wide_characters_count_as_one_position() {
        let mut line = typed("你好");
        line.input(key(KeyCode::Left, KeyModifiers::NONE));
        line.input(key(KeyCode::Char('x'), KeyModifiers::NONE));
        assert_eq!(line.text(), "你x好");
        assert_eq!(line.cursor(), 2);
    }
}

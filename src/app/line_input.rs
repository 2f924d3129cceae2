//! One single-line input for every prompt of the workbench — the search
//! query, the file picker, go-to-line and find, the variables filter and an
//! approval's denial reason — on the same `tui-textarea` engine as the
//! composer. It gives them all cursor movement, word motions (Alt+←/→,
//! Ctrl+W), Home/End, undo and the same paste; what no line can hold
//! (newlines, tabs) never gets in.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use tui_textarea::{CursorMove, Input, TextArea};

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
    pub fn text_changed(self) -> bool {
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
    /// A line holding `text` (its first line), the cursor at the end.
    pub fn new(text: &str) -> Self {
        let first = text.lines().next().unwrap_or_default();
        let mut area = TextArea::new(vec![first.to_owned()]);
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
            // textarea's own Ctrl+U is undo; Ctrl+Z still undoes here).
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.area.delete_line_by_head()
            }
            KeyCode::Char('z') if key.modifiers.contains(KeyModifiers::CONTROL) => self.area.undo(),
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

    /// Inserts the first line of `text` at the cursor; true when it added
    /// anything. The caller strips control sequences first.
    pub fn paste(&mut self, text: &str) -> bool {
        let first = text.lines().next().unwrap_or_default().replace('\t', " ");
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
        assert_eq!(
            line.input(key(KeyCode::Char('z'), KeyModifiers::CONTROL)),
            Edit::Text
        );
        assert_eq!(line.text(), "find the ");
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

//! Draws a [`LineInput`]: its text with the cursor as a styled cell, scrolled
//! sideways so the cursor is always in view. The line holds displayable text
//! only (`LineInput` cleans what comes in), so its cursor index is the
//! drawn position.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

use super::LineInput;

/// The line as spans at most `width` cells wide (the cursor included).
pub fn spans(input: &LineInput, style: Style, cursor: Style, width: usize) -> Vec<Span<'static>> {
    let chars: Vec<char> = input.text().chars().collect();
    let at = input.cursor().min(chars.len());
    let cell = |c: char| c.width().unwrap_or(0);
    let under_width = chars.get(at).map_or(1, |c| cell(*c).max(1));
    if width < under_width {
        return Vec::new();
    }
    // Start far enough right that the cursor's cell fits.
    let mut start = 0;
    let mut used: usize = chars[..at].iter().map(|c| cell(*c)).sum::<usize>() + under_width;
    while used > width && start < at {
        used -= cell(chars[start]);
        start += 1;
    }
    let before: String = chars[start..at].iter().collect();
    let under = chars.get(at).map_or(" ".to_owned(), char::to_string);
    let mut room = width.saturating_sub(used);
    let after: String = chars
        .iter()
        .skip(at + 1)
        .take_while(|c| {
            let w = cell(**c);
            let fits = w <= room;
            room = room.saturating_sub(w);
            fits
        })
        .collect();
    vec![
        Span::styled(before, style),
        Span::styled(under, cursor),
        Span::styled(after, style),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn text(spans: &[Span<'_>]) -> Vec<String> {
        spans.iter().map(|s| s.content.to_string()).collect()
    }

    #[test]
    fn the_cursor_cell_is_drawn_where_the_cursor_is() {
        let mut line = LineInput::new("checkAuth");
        line.input(KeyEvent::new(KeyCode::Home, KeyModifiers::NONE));
        let s = spans(&line, Style::default(), Style::default(), 20);
        assert_eq!(text(&s), ["", "c", "heckAuth"]);
        let end = LineInput::new("ab");
        assert_eq!(
            text(&spans(&end, Style::default(), Style::default(), 20)),
            ["ab", " ", ""]
        );
    }

    #[test]
    fn a_long_line_scrolls_to_keep_the_cursor_in_view() {
        let line = LineInput::new(&"x".repeat(50));
        let s = spans(&line, Style::default(), Style::default(), 10);
        let width: usize = s.iter().map(|s| s.width()).sum();
        assert_eq!(width, 10);
        assert_eq!(s[1].content, " ", "the cursor at the end is shown");
    }

    proptest::proptest! {
        /// Whatever is typed, pasted and moved over, the line is drawn within
        /// its width, with the cursor cell, and never panics.
        #[test]
        fn any_text_and_keys_draw_within_the_width(
            text in "\\PC{0,40}",
            pasted in ".{0,40}",
            moves in proptest::collection::vec(0u8..6, 0..30),
            width in 0usize..30,
        ) {
            let mut line = LineInput::new(&text);
            line.paste(&pasted);
            for m in moves {
                let code = match m {
                    0 => KeyCode::Left,
                    1 => KeyCode::Right,
                    2 => KeyCode::Home,
                    3 => KeyCode::End,
                    4 => KeyCode::Backspace,
                    _ => KeyCode::Char('界'),
                };
                line.input(KeyEvent::new(code, KeyModifiers::NONE));
            }
            let drawn = spans(&line, Style::default(), Style::default(), width);
            let used: usize = drawn.iter().map(|s| s.width()).sum();
            proptest::prop_assert!(used <= width, "{used} > {width}");
            if width >= 2 {
                proptest::prop_assert_eq!(drawn.len(), 3);
                proptest::prop_assert!(!drawn[1].content.is_empty(), "the cursor cell is drawn");
            }
        }
    }
}

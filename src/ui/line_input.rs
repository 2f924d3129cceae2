//! Draws a [`LineInput`]: its text with the cursor as a styled cell, scrolled
//! sideways so the cursor is always in view.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

use crate::app::line_input::LineInput;
use crate::sanitize;

/// The line as spans at most `width` cells wide (the cursor included).
pub fn spans(input: &LineInput, style: Style, cursor: Style, width: usize) -> Vec<Span<'static>> {
    let text = sanitize::for_display(input.text());
    let chars: Vec<char> = text.chars().collect();
    let at = input.cursor().min(chars.len());
    let cell = |c: char| c.width().unwrap_or(0);
    // Start far enough right that the cursor's cell fits.
    let mut start = 0;
    let mut used: usize = chars[..at].iter().map(|c| cell(*c)).sum::<usize>() + 1;
    while used > width.max(1) && start < at {
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
}

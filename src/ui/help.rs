//! The help overlay, generated from the keymap so it lists every binding.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{pane, search};
use crate::keymap::{self, Action, Scope};
use crate::theme::Theme;

/// Every line of the help text, unstyled, in order (for scrolling bounds).
pub fn row_count() -> usize {
    lines(&crate::theme::Theme::builtin_default()).len()
}

fn lines(theme: &Theme) -> Vec<Line<'static>> {
    // The status-bar key colour, without the status bar's background.
    let key_style = Style {
        bg: None,
        ..theme.roles.status_key
    };
    let mut out = Vec::new();
    for scope in Scope::ALL {
        // One row per action; several keys for it are listed together.
        let mut rows: Vec<(Action, Vec<String>)> = Vec::new();
        for binding in keymap::bindings_in(scope) {
            match rows.iter_mut().find(|(a, _)| *a == binding.action) {
                Some((_, keys)) => keys.push(binding.key.to_string()),
                None => rows.push((binding.action, vec![binding.key.to_string()])),
            }
        }
        if rows.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.push(Line::styled(scope.label(), theme.roles.focused_title));
        for (action, keys) in rows {
            out.push(Line::from(vec![
                Span::styled(format!("  {:<26} ", keys.join(" / ")), key_style),
                Span::styled(action.describe(), theme.roles.text),
            ]));
        }
    }
    out.push(Line::default());
    out.push(Line::styled(
        "In the composer, other keys edit text: arrows, Home/End, Ctrl+W deletes a word, Ctrl+U undoes, Ctrl+R redoes.",
        theme.roles.muted,
    ));
    out
}

pub fn render(scroll: usize, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let area = search::centered(screen, 80, 80);
    let title = Line::from(vec![
        Span::raw("Help"),
        Span::styled(" — Esc closes, ↑/↓ scroll", theme.roles.muted),
    ]);
    let block = pane::block(title, None, true, theme).border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    Paragraph::new(lines(theme))
        .block(block)
        .scroll((scroll.min(u16::MAX as usize) as u16, 0))
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_binding() {
        let text: Vec<String> = lines(&Theme::builtin_default())
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let all = text.join("\n");
        for binding in keymap::BINDINGS {
            assert!(
                all.contains(&binding.key.to_string()),
                "{} missing",
                binding.key
            );
            assert!(all.contains(binding.action.describe()));
        }
    }
}

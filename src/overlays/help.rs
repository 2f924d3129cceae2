//! The help overlay, generated from the keymap so it lists every binding.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{Component, Ctx, Input, Outcome, View};
use crate::component::Around;
use crate::keymap::{self, Scope};
use crate::theme::Theme;
use crate::ui::pane;

/// The help overlay: every binding, by scope, scrolled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Help {
    pub scroll: usize,
}

impl Component for Help {
    fn label(&self) -> &'static str {
        "Help"
    }

    fn scope(&self) -> Scope {
        Scope::Help
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        super::scrolled_text(&mut self.scroll, input, ctx)
    }

    fn before_frame(&mut self, around: Around<'_>) {
        // The last page is as far as it scrolls (End lands there).
        let inner = area(around.screen);
        let (width, height) = (
            inner.width.saturating_sub(2),
            inner.height.saturating_sub(2),
        );
        let last_top = row_count(usize::from(width)).saturating_sub(usize::from(height));
        self.scroll = self.scroll.min(last_top);
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let theme = view.theme;
        render(self.scroll, theme, screen, frame.buffer_mut());
    }
}

/// Columns of the key column (after a two-space indent).
const KEYS: usize = 24;

/// The help overlay's place on a screen of `screen` (its inner width is
/// what the text wraps to).
pub fn area(screen: Rect) -> Rect {
    pane::centered(screen, 80, 80)
}

/// Lines of the help text at `width` columns (for scrolling bounds).
fn row_count(width: usize) -> usize {
    lines(&crate::theme::Theme::builtin_default(), width).len()
}

/// The help text wrapped to `width`: a description that does not fit
/// beside its keys wraps in its column, or, when the keys are long or the
/// screen narrow, goes under them — never cut off.
fn lines(theme: &Theme, width: usize) -> Vec<Line<'static>> {
    // The status-bar key colour, without the status bar's background.
    let key_style = Style {
        bg: None,
        ..theme.roles.status_key
    };
    let width = width.max(20);
    let mut out = Vec::new();
    for section in keymap::help_sections() {
        if !out.is_empty() {
            out.push(Line::default());
        }
        out.push(Line::styled(section.title, theme.roles.focused_title));
        for (keys, does) in section.rows {
            let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
            row(&mut out, &keys.join(" / "), does, key_style, theme, width);
        }
    }
    out.push(Line::default());
    out.push(Line::styled("Mouse", theme.roles.focused_title));
    for note in keymap::MOUSE_NOTES {
        for (i, text) in crate::screen::wrap::wrap(note, width.saturating_sub(4))
            .into_iter()
            .enumerate()
        {
            let lead = if i == 0 { "  " } else { "    " };
            out.push(Line::styled(format!("{lead}{text}"), theme.roles.text));
        }
    }
    // The composer's commands, from the table the palette and the
    // dispatcher read.
    out.push(Line::default());
    out.push(Line::styled(
        "Commands (type / in the composer)",
        theme.roles.focused_title,
    ));
    for entry in crate::workbench::slash::BUILTINS {
        row(
            &mut out,
            &entry.usage(),
            entry.description,
            key_style,
            theme,
            width,
        );
    }
    out
}

/// One row: `keys` in the key column and `description` beside them,
/// wrapped in its column, or under them when the keys are long or the
/// screen narrow.
fn row(
    out: &mut Vec<Line<'static>>,
    keys: &str,
    description: &str,
    key_style: Style,
    theme: &Theme,
    width: usize,
) {
    let beside = width.saturating_sub(KEYS + 3);
    if keys.chars().count() <= KEYS && beside >= 24 {
        let mut rows = crate::screen::wrap::wrap(description, beside).into_iter();
        out.push(Line::from(vec![
            Span::styled(format!("  {keys:<KEYS$} "), key_style),
            Span::styled(rows.next().unwrap_or_default(), theme.roles.text),
        ]));
        for row in rows {
            out.push(Line::styled(
                format!("  {:KEYS$} {row}", ""),
                theme.roles.text,
            ));
        }
    } else {
        for keys in crate::screen::wrap::wrap(keys, width.saturating_sub(2)) {
            out.push(Line::styled(format!("  {keys}"), key_style));
        }
        for row in crate::screen::wrap::wrap(description, width.saturating_sub(6)) {
            out.push(Line::styled(format!("      {row}"), theme.roles.text));
        }
    }
}

fn render(scroll: usize, theme: &Theme, screen: Rect, buf: &mut ratatui::buffer::Buffer) {
    let area = area(screen);
    let title = Line::from(vec![
        Span::raw("Help"),
        Span::styled(" — Esc closes, ↑/↓ scroll", theme.roles.muted),
    ]);
    let block = pane::block(title, None, true, theme).border_style(theme.roles.overlay_border);
    let width = usize::from(block.inner(area).width);
    Clear.render(area, buf);
    Paragraph::new(lines(theme, width))
        .block(block)
        .scroll((scroll.min(u16::MAX as usize) as u16, 0))
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help text at 200 columns, one string.
    fn all_text() -> String {
        let text: Vec<String> = lines(&Theme::builtin_default(), 200)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        text.join("\n")
    }

    /// Every binding of the keymap and every key of the composer's table
    /// is in F1, once, in its section; and no row repeats one of its keys
    /// in its description ("Preview the next request… (F2)" beside F2).
    #[test]
    fn help_lists_every_key_once_and_says_it_once() {
        use crossterm::event::KeyCode;
        let all = all_text();
        let sections = keymap::help_sections();
        for section in &sections {
            let mut seen = std::collections::HashSet::new();
            for (keys, does) in &section.rows {
                let joined: Vec<String> = keys.iter().map(ToString::to_string).collect();
                assert!(all.contains(&joined.join(" / ")), "{joined:?} missing");
                assert!(all.contains(does), "{does} missing");
                for key in keys {
                    assert!(seen.insert(*key), "{key} twice in {}", section.title);
                    // A key as the help writes one: `(F2)`, or with a
                    // modifier (`Ctrl+P`); "Delete the character" is a verb.
                    let name = key.to_string();
                    let keylike = name.contains('+') || matches!(key.code, KeyCode::F(_));
                    assert!(
                        !(does.contains(&format!("({name})")) || keylike && does.contains(&name)),
                        "{does:?} repeats {name}"
                    );
                }
            }
        }
        for binding in keymap::BINDINGS {
            let section = sections
                .iter()
                .find(|s| s.title == binding.scope.label())
                .expect("every scope has a section");
            assert!(
                section
                    .rows
                    .iter()
                    .any(|(keys, does)| keys.contains(&binding.key)
                        && *does == binding.action.describe()),
                "{} missing from {}",
                binding.key,
                section.title
            );
        }
        let composer = sections
            .iter()
            .find(|s| s.title.starts_with("Composer"))
            .expect("the composer's section");
        for row in keymap::COMPOSER {
            assert!(composer.rows.iter().any(|(keys, _)| keys == row.keys));
        }
    }

    #[test]
    fn help_lists_every_command_of_the_table() {
        let all = all_text();
        for entry in crate::workbench::slash::BUILTINS {
            assert!(all.contains(&entry.usage()), "{} missing", entry.usage());
            assert!(all.contains(entry.description), "{}", entry.description);
        }
    }
}

#[cfg(test)]
mod wrap_tests {
    use super::*;

    /// Issue 14, item 12: at 80 and 120 columns no description is cut:
    /// every word of every description is on some line, and no line is
    /// wider than the overlay.
    #[test]
    fn descriptions_wrap_instead_of_being_cut() {
        for screen_width in [80u16, 120] {
            let width = usize::from(area(Rect::new(0, 0, screen_width, 40)).width - 2);
            let text: Vec<String> = lines(&Theme::builtin_default(), width)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            for line in &text {
                assert!(
                    unicode_width::UnicodeWidthStr::width(line.trim_end()) <= width,
                    "{screen_width}: {line:?} is wider than {width}"
                );
            }
            let words: Vec<&str> = text.iter().flat_map(|l| l.split_whitespace()).collect();
            for binding in keymap::BINDINGS {
                for word in binding.action.describe().split_whitespace() {
                    assert!(words.contains(&word), "{screen_width}: {word:?} missing");
                }
            }
        }
    }
}

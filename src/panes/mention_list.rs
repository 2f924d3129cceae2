//! The `@` list over the composer: typing `@` at the start of a word lists
//! the workspace's files, fuzzy-matched on the picker's worker as the word
//! grows; Enter or Tab puts the chosen path in place of the word
//! (`@src/auth.py `, a space after it to go on typing; `:` typed next
//! takes the space back, for a range: `@src/auth.py:12-40`), and on send
//! each mentioned file goes with the message (`workbench::mentions`). Esc
//! closes the list until the word changes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use tui_textarea::TextArea;

use crate::component::Around;
use crate::keymap::Action;
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::pane;
use crate::workspace::{FuzzyRequest, PathMatch, PickerResults};

/// Matches asked of the worker per query.
const LIMIT: usize = 50;
/// Rows the list shows at most.
const ROWS: usize = 8;

/// The list while an `@word` is typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MentionList {
    /// What follows the `@`, as typed.
    query: String,
    request: FuzzyRequest,
    pub matches: Vec<PathMatch>,
    pub selected: usize,
}

/// The composer's state for the list: open, or closed by Esc for a word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mentions {
    pub list: Option<MentionList>,
    /// The word Esc closed the list for: closed until the word changes.
    closed_for: Option<String>,
    /// Where the cursor was left after a path was inserted (past its
    /// space), until the next key.
    inserted_to: Option<(usize, usize)>,
}

/// The word before the composer's cursor when it is an `@` mention being
/// typed: what follows the `@` (empty right after it). `None` when the
/// cursor is not at the end of such a word, or the word has gone on to a
/// line range (`@a.py:12`).
fn typed(composer: &TextArea<'_>) -> Option<String> {
    let cursor = composer.cursor();
    let (row, col) = (cursor.0, cursor.1);
    let line = composer.lines().get(row)?;
    let before: String = line.chars().take(col).collect();
    if line.chars().nth(col).is_some_and(|c| !c.is_whitespace()) {
        return None;
    }
    let word = before.rsplit(char::is_whitespace).next().unwrap_or(&before);
    let query = word.strip_prefix('@')?;
    (!query.contains(':') && !query.contains('@')).then(|| query.to_owned())
}

impl Mentions {
    /// Brings the list up to date with the composer: opens it when an
    /// `@word` is being typed, sends the word to the worker as it grows,
    /// closes it otherwise.
    pub fn refresh(&mut self, composer: &TextArea<'_>, around: Around<'_>) {
        let Some(query) = typed(composer) else {
            self.list = None;
            self.closed_for = None;
            return;
        };
        if self.closed_for.as_deref() == Some(query.as_str()) {
            return;
        }
        self.closed_for = None;
        let list = self.list.get_or_insert_with(MentionList::default);
        if list.query == query && list.request != FuzzyRequest::default() {
            return;
        }
        list.query = query;
        let workbench = around.workbench;
        if let Some(results) = list.request.send(
            &list.query,
            false,
            workbench.services().picker.as_ref(),
            workbench.file_index(),
            LIMIT,
        ) {
            list.show(results);
        }
    }

    /// An answer of the worker: shown when it is the newest query's.
    pub fn take(&mut self, results: &PickerResults) -> bool {
        let Some(list) = &mut self.list else {
            return false;
        };
        let newest = list.request.accept(results);
        if newest {
            list.show(results.clone());
        }
        newest
    }

    /// The list's keys; `None` when the list is closed or `action` is
    /// not one of them. Inserting edits the composer.
    pub fn action(
        &mut self,
        action: Action,
        composer: &mut TextArea<'static>,
        around: Around<'_>,
    ) -> Option<bool> {
        let list = self.list.as_mut()?;
        let count = list.matches.len().max(1);
        match action {
            Action::MentionNext => list.selected = (list.selected + 1) % count,
            Action::MentionPrevious => list.selected = (list.selected + count - 1) % count,
            Action::MentionClose => {
                self.closed_for = Some(list.query.clone());
                self.list = None;
            }
            Action::MentionInsert => {
                // Keys and Enter in one burst: match the word as typed.
                if let Some(results) = list.request.settle(around.workbench.file_index(), LIMIT) {
                    list.show(results);
                }
                let Some(chosen) = list.matches.get(list.selected) else {
                    // Nothing matches: Enter is the composer's again.
                    self.closed_for = Some(list.query.clone());
                    self.list = None;
                    return Some(false);
                };
                for _ in list.query.chars() {
                    composer.delete_char();
                }
                composer.insert_str(format!("{} ", chosen.path));
                let cursor = composer.cursor();
                self.inserted_to = Some((cursor.0, cursor.1));
                self.list = None;
            }
            _ => return None,
        }
        Some(true)
    }

    /// A key typed right after a path was inserted: `:` takes the space
    /// the insertion added back and goes in its place, so a range joins
    /// the path (`@a.py:12`, not `@a.py :12`, which would mention the
    /// whole file). Whether it did; any other key goes on as typed.
    pub fn join_range(&mut self, composer: &mut TextArea<'static>, key: &KeyEvent) -> bool {
        let Some(at) = self.inserted_to.take() else {
            return false;
        };
        let cursor = composer.cursor();
        let joins = key.code == KeyCode::Char(':')
            && (key.modifiers - KeyModifiers::SHIFT).is_empty()
            && (cursor.0, cursor.1) == at
            && composer.selection_range().is_none()
            && at.1 > 0
            && composer
                .lines()
                .get(at.0)
                .is_some_and(|line| line.chars().nth(at.1 - 1) == Some(' '));
        if joins {
            composer.delete_char();
            composer.insert_char(':');
        }
        joins
    }

    /// Whatever comes next (a paste) is not a key typed after the
    /// inserted path.
    pub fn forget_inserted(&mut self) {
        self.inserted_to = None;
    }
}

impl MentionList {
    fn show(&mut self, results: PickerResults) {
        self.matches = results.matches;
        self.selected = 0;
    }

    /// The list over the bottom of the history (inside its frame), the
    /// matched characters highlighted.
    pub fn render(&self, theme: &Theme, history_area: Rect, frame: &mut Frame) {
        let rows = self.matches.len().clamp(1, ROWS);
        let area = crate::screen::conversation::list_over_history(history_area, rows);
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        let mut lines: Vec<Line> = self
            .matches
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .map(|(i, found)| {
                let base = if i == self.selected {
                    theme.roles.selection
                } else {
                    theme.roles.text
                };
                let hit = theme.roles.match_highlight.patch(base);
                let mut spans = vec![Span::styled(" @", base)];
                spans.extend(found.path.chars().enumerate().map(|(ci, c)| {
                    let style = if found.indices.contains(&(ci as u32)) {
                        hit
                    } else {
                        base
                    };
                    Span::styled(sanitize::for_display(&c.to_string()).into_owned(), style)
                }));
                Line::from(spans)
            })
            .collect();
        if lines.is_empty() {
            lines.push(Line::styled(" No file matches.", theme.roles.muted));
        }
        let title = format!("Files · {} · Enter inserts, Esc closes", self.matches.len());
        let block = pane::block(Line::from(title), None, true, theme)
            .border_style(theme.roles.overlay_border);
        ratatui::widgets::Clear.render(area, frame.buffer_mut());
        Paragraph::new(lines)
            .block(block)
            .render(area, frame.buffer_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn composer(text: &str) -> TextArea<'static> {
        let mut composer = TextArea::default();
        composer.insert_str(text);
        composer
    }

    #[test]
    fn the_word_at_the_cursor_is_a_mention_while_it_starts_with_an_at_sign() {
        assert_eq!(typed(&composer("see @")), Some(String::new()));
        assert_eq!(typed(&composer("see @src/ma")), Some("src/ma".into()));
        assert_eq!(typed(&composer("@a")), Some("a".into()));
        assert_eq!(typed(&composer("see @src/a.py ")), None, "the word ended");
        assert_eq!(typed(&composer("mail a@b")), None, "not at a word's start");
        assert_eq!(typed(&composer("@a.py:12")), None, "a range is typed");
        let mut middle = composer("@abc rest");
        middle.move_cursor(tui_textarea::CursorMove::Head);
        middle.move_cursor(tui_textarea::CursorMove::Forward);
        middle.move_cursor(tui_textarea::CursorMove::Forward);
        assert_eq!(typed(&middle), None, "the cursor is inside the word");
    }
}

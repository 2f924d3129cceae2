//! The variables inspector's own state: sort order, the filter typed into
//! the pane, and a selection that stays on the same variable when the
//! kernel refreshes the list (every cell, and every ~500 ms while one runs).

use crossterm::event::KeyEvent;

use super::state::{AppState, ListCursor, VariableRow};
use crate::keymap::Action;
use crate::overlays::Overlay;
use crate::overlays::variable::VariableDetail;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VariableSort {
    /// Alphabetical, case-insensitive.
    #[default]
    Name,
    /// Most recently changed first (then by name).
    Changed,
}

impl VariableSort {
    pub fn label(self) -> &'static str {
        match self {
            VariableSort::Name => "by name",
            VariableSort::Changed => "by last change",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VariablesView {
    pub sort: VariableSort,
    /// Case-insensitive substring of name, type or summary.
    pub filter: super::line_input::LineInput,
    /// The filter line has the keyboard.
    pub filtering: bool,
}

/// The rows the pane shows, in order: filtered, then sorted.
pub fn visible(state: &AppState) -> Vec<&VariableRow> {
    state.variables.view.visible(&state.variables.rows)
}

impl VariablesView {
    /// `rows` as the pane shows them: filtered, then sorted. A query on the
    /// view (drawing reads it too), not a change.
    pub fn visible<'a>(&self, rows: &'a [VariableRow]) -> Vec<&'a VariableRow> {
        let needle = self.filter.text().to_lowercase();
        let mut rows: Vec<&VariableRow> = rows
            .iter()
            .filter(|v| {
                needle.is_empty()
                    || v.name.to_lowercase().contains(&needle)
                    || v.type_name.to_lowercase().contains(&needle)
                    || v.summary.to_lowercase().contains(&needle)
            })
            .collect();
        let by_name = |a: &&VariableRow, b: &&VariableRow| {
            a.name
                .to_lowercase()
                .cmp(&b.name.to_lowercase())
                .then_with(|| a.name.cmp(&b.name))
        };
        match self.sort {
            VariableSort::Name => rows.sort_by(by_name),
            VariableSort::Changed => {
                rows.sort_by(|a, b| b.changed_by.cmp(&a.changed_by).then_with(|| by_name(a, b)))
            }
        }
        rows
    }
}

/// The variable under the cursor.
pub fn selected(state: &AppState) -> Option<&VariableRow> {
    visible(state).get(state.variables.cursor.selected).copied()
}

fn selected_name(state: &AppState) -> Option<String> {
    selected(state).map(|v| v.name.clone())
}

/// Puts the cursor back on `name` after the list changed (refresh, sort,
/// filter); if it is gone, the cursor stays in range.
fn reselect(state: &mut AppState, name: Option<String>) {
    let rows = visible(state);
    let len = rows.len();
    let found = name.and_then(|n| rows.iter().position(|v| v.name == n));
    state.variables.cursor = match found {
        Some(index) => ListCursor { selected: index },
        None => ListCursor {
            selected: state.variables.cursor.selected.min(len.saturating_sub(1)),
        },
    };
}

/// A new listing from the kernel; the selection follows its variable.
pub fn replace(state: &mut AppState, rows: Vec<VariableRow>) {
    let name = selected_name(state);
    state.variables.rows = rows;
    reselect(state, name);
}

/// The pane's own actions; `false` when `action` is not one of them.
pub fn apply(state: &mut AppState, action: Action) -> bool {
    let name = selected_name(state);
    match action {
        Action::SortVariables => {
            let view = &mut state.variables.view;
            view.sort = match view.sort {
                VariableSort::Name => VariableSort::Changed,
                VariableSort::Changed => VariableSort::Name,
            };
            reselect(state, name);
        }
        Action::FilterVariables => state.variables.view.filtering = true,
        Action::EndFilter => state.variables.view.filtering = false,
        Action::ClearFilter => {
            state.variables.view.filtering = false;
            state.variables.view.filter.clear();
            reselect(state, name);
        }
        Action::ShowVariable => {
            if let Some(name) = name {
                state.overlay = Some(Overlay::Variable(VariableDetail { name, scroll: 0 }));
            }
        }
        _ => return false,
    }
    true
}

/// Text typed while the filter line has the keyboard.
pub fn type_into_filter(state: &mut AppState, key: KeyEvent) -> bool {
    let edit = state.variables.view.filter.input(key);
    if edit.text_changed() {
        // While typing, the best match is the first row.
        state.variables.cursor = ListCursor::default();
    }
    edit.any()
}

/// Pasted text goes into the filter (first line only).
pub fn paste_into_filter(state: &mut AppState, text: &str) -> bool {
    let pasted = state.variables.view.filter.paste(text);
    if pasted {
        state.variables.cursor = ListCursor::default();
    }
    pasted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::keymap::{PaneId, Scope};
    use crossterm::event::{KeyCode, KeyModifiers};

    fn row(name: &str, changed_by: Option<u64>) -> VariableRow {
        VariableRow {
            name: name.into(),
            type_name: "int".into(),
            summary: String::new(),
            preview: "1".into(),
            size: Some(28),
            changed_by,
        }
    }

    fn state() -> AppState {
        let settings = Settings::defaults();
        let mut s = AppState::new("/tmp/demo".into(), settings);
        s.focus = PaneId::Variables;
        s.variables.rows = vec![
            row("zeta", Some(1)),
            row("Alpha", Some(3)),
            row("beta", None),
        ];
        s
    }

    fn names(s: &AppState) -> Vec<&str> {
        visible(s).iter().map(|v| v.name.as_str()).collect()
    }

    #[test]
    fn sorts_by_name_or_last_change_keeping_the_selection() {
        let mut s = state();
        assert_eq!(names(&s), ["Alpha", "beta", "zeta"]);
        s.variables.cursor.selected = 2; // zeta
        apply(&mut s, Action::SortVariables);
        assert_eq!(names(&s), ["Alpha", "zeta", "beta"]);
        assert_eq!(selected(&s).unwrap().name, "zeta");
    }

    #[test]
    fn filter_matches_and_clears() {
        let mut s = state();
        s.focus = PaneId::Variables;
        apply(&mut s, Action::FilterVariables);
        assert_eq!(s.key_scopes(), [Scope::VariableFilter]);
        for c in "ET".chars() {
            type_into_filter(&mut s, KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT));
        }
        assert_eq!(names(&s), ["beta", "zeta"]);
        apply(&mut s, Action::ClearFilter);
        assert_eq!(names(&s).len(), 3);
        assert!(!s.variables.view.filtering);
    }

    #[test]
    fn a_refresh_keeps_the_cursor_on_its_variable() {
        let mut s = state();
        s.variables.cursor.selected = 1; // beta
        let mut rows = s.variables.rows.clone();
        rows.push(row("aaa", Some(4)));
        replace(&mut s, rows);
        assert_eq!(selected(&s).unwrap().name, "beta");
        replace(&mut s, vec![row("only", None)]);
        assert_eq!(s.variables.cursor.selected, 0);
    }
}

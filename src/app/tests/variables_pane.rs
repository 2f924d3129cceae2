//! The variables pane driven through `update`, as keys reach it.

use crate::app::AppState;
use crate::app::update::{apply, handle_terminal_event};
use crate::config::Settings;
use crate::keymap::Scope;
use crate::keymap::{Action, PaneId};
use crate::overlays::Overlay;
use crate::overlays::variable::VariableDetail;
use crate::panes::variables::*;
use crate::workbench::VariableRow;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

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
    s.variables
        .visible()
        .iter()
        .map(|v| v.name.as_str())
        .collect()
}

#[test]
fn sorts_by_name_or_last_change_keeping_the_selection() {
    let mut s = state();
    assert_eq!(names(&s), ["Alpha", "beta", "zeta"]);
    s.variables.cursor.selected = 2; // zeta
    apply(&mut s, Action::SortVariables);
    assert_eq!(names(&s), ["Alpha", "zeta", "beta"]);
    assert_eq!(s.variables.selected().unwrap().name, "zeta");
}

#[test]
fn filter_matches_and_clears() {
    let mut s = state();
    s.focus = PaneId::Variables;
    apply(&mut s, Action::FilterVariables);
    assert_eq!(s.key_scopes(), [Scope::VariableFilter]);
    for c in "ET".chars() {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT);
        handle_terminal_event(&mut s, Event::Key(key));
    }
    assert_eq!(names(&s), ["beta", "zeta"]);
    apply(&mut s, Action::ClearFilter);
    assert_eq!(names(&s).len(), 3);
    assert!(!s.variables.view.filtering);
}

/// A search hit lands on its variable as the pane lists it (sorted),
/// not at its place in the kernel's listing.
#[test]
fn a_search_hit_selects_its_variable_as_the_pane_lists_it() {
    let mut s = state();
    s.focus = PaneId::Conversation;
    apply(&mut s, Action::OpenSearch);
    apply(&mut s, Action::SearchNextScope); // variables
    for c in "zeta".chars() {
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        handle_terminal_event(&mut s, Event::Key(key));
    }
    apply(&mut s, Action::SearchOpen);
    assert_eq!(s.focus, PaneId::Variables);
    assert_eq!(names(&s), ["Alpha", "beta", "zeta"]);
    assert_eq!(s.variables.selected().unwrap().name, "zeta");
}

/// A modal overlay over the pane takes every key: an action it does
/// not know goes no further down, even one the pane would take.
#[test]
fn a_modal_overlay_keeps_the_pane_from_acting() {
    let mut s = state();
    apply(&mut s, Action::ShowHelp);
    apply(&mut s, Action::SortVariables);
    assert_eq!(s.variables.view.sort, VariableSort::Name);
    assert!(matches!(s.overlay(), Some(Overlay::Help(_))));
}

#[test]
fn enter_opens_the_selected_variable_over_the_pane() {
    let mut s = state();
    s.variables.cursor.selected = 1; // beta
    apply(&mut s, Action::ShowVariable);
    assert_eq!(
        s.overlay(),
        Some(&Overlay::Variable(VariableDetail {
            name: "beta".into(),
            scroll: 0
        }))
    );
}

#[test]
fn a_refresh_keeps_the_cursor_on_its_variable() {
    let mut s = state();
    s.variables.cursor.selected = 1; // beta
    let mut rows = s.variables.rows.clone();
    rows.push(row("aaa", Some(4)));
    s.variables.replace(rows);
    assert_eq!(s.variables.selected().unwrap().name, "beta");
    s.variables.replace(vec![row("only", None)]);
    assert_eq!(s.variables.cursor.selected, 0);
}

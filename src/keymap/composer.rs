//! The composer's own keys: the editing keys of its text area that no
//! binding takes, and the recall of earlier messages. One table serves the
//! composer, which lets only these keys (and typed text) reach its text
//! area, and F1 and `docs/keys.md`, which list them: what the help says
//! the composer does is what it does, and a key it does not list does
//! nothing there (`Ctrl+V` does not scroll the composer by a page, as the
//! text area would on its own).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::KeyCombo;

/// One row of the composer's keys: the keys, and what they do, in F1's
/// words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ComposerKey {
    pub keys: &'static [KeyCombo],
    pub does: &'static str,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

const fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyCombo {
    KeyCombo::new(code, modifiers)
}

use KeyCode::{Backspace, Char, Delete, Down, End, Home, Left, Right, Up};

/// The composer's keys, in F1's order. (The bindings of the conversation
/// scope, e.g. Enter and Shift+Enter, are listed with the bindings.)
pub(crate) const COMPOSER: &[ComposerKey] = &[
    ComposerKey {
        keys: &[key(Up, NONE), key(Down, NONE)],
        does: "Move a line; on the first line ↑ recalls the previous message, \
               on the last line ↓ the next one (then what you were typing)",
    },
    ComposerKey {
        keys: &[key(Left, NONE), key(Right, NONE), key(Char('b'), CTRL)],
        does: "Move a character (back, forward, back)",
    },
    ComposerKey {
        keys: &[
            key(Left, CTRL),
            key(Right, CTRL),
            key(Char('b'), ALT),
            key(Char('f'), ALT),
        ],
        does: "Move a word (back, forward, back, forward)",
    },
    ComposerKey {
        keys: &[
            key(Home, NONE),
            key(End, NONE),
            key(Char('a'), CTRL),
            key(Char('e'), CTRL),
        ],
        does: "Go to the start or the end of the line",
    },
    ComposerKey {
        keys: &[key(Char('<'), ALT), key(Char('>'), ALT)],
        does: "Go to the first or the last line",
    },
    ComposerKey {
        keys: &[
            key(Left, SHIFT),
            key(Right, SHIFT),
            key(Up, SHIFT),
            key(Down, SHIFT),
            key(Home, SHIFT),
            key(End, SHIFT),
            key(Left, CTRL.union(SHIFT)),
            key(Right, CTRL.union(SHIFT)),
        ],
        does: "Select as the move without Shift goes",
    },
    ComposerKey {
        keys: &[key(Backspace, NONE), key(Char('h'), CTRL)],
        does: "Delete the character before the cursor",
    },
    ComposerKey {
        keys: &[key(Delete, NONE), key(Char('d'), CTRL)],
        does: "Delete the character after the cursor",
    },
    ComposerKey {
        keys: &[key(Char('w'), CTRL), key(Char('h'), ALT)],
        does: "Delete the word before the cursor",
    },
    ComposerKey {
        keys: &[key(Char('d'), ALT), key(Delete, ALT)],
        does: "Delete the word after the cursor",
    },
    ComposerKey {
        keys: &[key(Char('k'), CTRL)],
        does: "Delete to the end of the line",
    },
    ComposerKey {
        keys: &[key(Char('x'), CTRL)],
        does: "Cut the selection",
    },
    ComposerKey {
        keys: &[key(Char('y'), CTRL)],
        does: "Paste what was cut last",
    },
    ComposerKey {
        keys: &[key(Char('u'), CTRL)],
        does: "Undo (a typed word at a time)",
    },
    ComposerKey {
        keys: &[key(Char('r'), CTRL)],
        does: "Redo (a typed word at a time)",
    },
];

/// Whether the composer's text area takes `event`: typed text, or a key of
/// [`COMPOSER`]. (The bindings were asked first.)
pub(crate) fn takes(event: &KeyEvent) -> bool {
    let typed = matches!(event.code, KeyCode::Char(_))
        && (event.modifiers - KeyModifiers::SHIFT).is_empty();
    let combo = KeyCombo::from_event(event);
    typed || COMPOSER.iter().any(|row| row.keys.contains(&combo))
}

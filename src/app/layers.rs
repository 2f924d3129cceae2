//! Who gets input: one stack of layers, innermost first — a pending
//! approval, then the top overlay, then the focused pane — with the global
//! keys under them all. Keys look up their action through every layer's
//! scopes (a modal layer stops the search, see `keymap::lookup`); text,
//! paste, scrolling and the mouse go to the innermost layer. The help
//! overlay and the status-bar hints read the same stack, so what they say
//! is what a key does.
//!
//! The open overlay and the panes are components (`crate::component`):
//! this only passes them the input (`app::deliver::to_overlay`, `to_pane`)
//! and asks them for their key scopes. Nothing else decides who gets a
//! key. **Add an overlay or a pane:** see ARCHITECTURE.md.

use crossterm::event::{KeyEvent, MouseEvent, MouseEventKind};

use super::command::Command;
use super::deliver::{to_approval, to_overlay, to_pane};
use super::state::AppState;
use crate::component::Component;
use crate::keymap::{Action, PaneId, Scope};
use crate::overlays::{Input, Overlay};
use crate::workbench::Question;

/// One layer of the input stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// A question from running code, over everything else.
    Approval,
    /// The top overlay of the stack (help, search, picker, prompt,
    /// confirm, …); the ones below it wait.
    Overlay,
    /// The focused pane.
    Pane(PaneId),
}

/// The layers present now, innermost first. The focused pane is always
/// there; the global keys are implied under it.
///
/// A question that appears on its own (an approval, the start-up recovery
/// question) joins the stack only once a frame has drawn it: keys typed
/// before it appeared — a word that happens to contain `y`, a burst typed
/// at start-up — go to the layer below instead of answering something the
/// user never saw.
///
/// The same holds for keys of a burst of typing that began before the
/// question was drawn (`state.typing_through`, set per key by the terminal
/// loop: `tui::typing`).
pub fn stack(state: &AppState) -> Vec<Layer> {
    let mut layers = Vec::with_capacity(3);
    if state.approvals.front_shown() && !state.typing_through {
        layers.push(Layer::Approval);
    }
    let unseen_question = state
        .overlay()
        .and_then(Overlay::question)
        .is_some_and(|question| {
            question.interrupts()
                && (state.question_shown != Some(question) || state.typing_through)
        });
    if state.overlay().is_some() && !unseen_question {
        layers.push(Layer::Overlay);
    }
    layers.push(Layer::Pane(state.focus));
    layers
}

/// A question that appeared on its own and is on screen now: the keys
/// that follow may answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShownQuestion {
    /// An approval: its request id and, for a write reviewed hunk by hunk,
    /// the hunk.
    Approval(u64, usize),
    /// A question of the overlay (`Question::interrupts`).
    Overlay(Question),
}

/// The question on screen, as last drawn (see [`ShownQuestion`]).
pub(crate) fn shown_question(state: &AppState) -> Option<ShownQuestion> {
    if state.approvals.front_shown() {
        return state
            .approvals
            .front_question()
            .map(|(id, hunk)| ShownQuestion::Approval(id, hunk));
    }
    state
        .question_shown
        .filter(|question| question.interrupts())
        .map(ShownQuestion::Overlay)
}

/// Offers an action to the layers of the stack, innermost first, until one
/// takes it; a modal layer passes nothing further down. `None`: no layer
/// took it, so it is a global action (quit, focus, F-keys, a file action
/// bound everywhere).
pub(crate) fn route_action(state: &mut AppState, action: Action) -> Option<Command> {
    for layer in stack(state) {
        let modal = layer
            .scopes(state)
            .first()
            .is_some_and(|scope| crate::keymap::is_modal(*scope));
        let taken = match layer {
            Layer::Approval => to_approval(state, Input::Action(action)),
            Layer::Overlay => to_overlay(state, Input::Action(action)),
            Layer::Pane(pane) => to_pane(state, pane, Input::Action(action)),
        };
        if taken.is_some() || modal {
            return taken;
        }
    }
    None
}

/// The layer that takes text, paste, scrolling and clicks.
pub fn top(state: &AppState) -> Layer {
    stack(state)
        .first()
        .copied()
        .unwrap_or(Layer::Pane(state.focus))
}

/// Key scopes for lookup, innermost first, from every layer.
pub fn scopes(state: &AppState) -> Vec<Scope> {
    stack(state)
        .into_iter()
        .flat_map(|layer| layer.scopes(state))
        .collect()
}

impl Layer {
    /// The key scopes this layer adds, innermost first.
    pub fn scopes(self, state: &AppState) -> Vec<Scope> {
        match self {
            Layer::Approval => state.approvals.scopes(),
            Layer::Overlay => state
                .overlay()
                .into_iter()
                .map(|overlay| overlay.component().scope())
                .collect(),
            Layer::Pane(pane) => state.pane(pane).scopes(),
        }
    }

    /// A key that is no binding: text for this layer's input, if it has one.
    pub(crate) fn type_key(self, state: &mut AppState, key: KeyEvent) -> Command {
        match self {
            Layer::Approval => to_approval(state, Input::Key(key)).unwrap_or(Command::None),
            Layer::Overlay => to_overlay(state, Input::Key(key)).unwrap_or(Command::None),
            Layer::Pane(pane) => to_pane(state, pane, Input::Key(key)).unwrap_or(Command::None),
        }
    }

    /// Bracketed paste: the text arrives whole, so newlines stay newlines
    /// instead of each one sending a message. Inputs of one line take the
    /// first line. Many terminals (tmux among them) send line breaks as CR:
    /// every target gets `\n`, never a `␍`.
    pub fn paste(self, state: &mut AppState, text: &str) -> Command {
        let text = &text.replace("\r\n", "\n").replace('\r', "\n");
        let clean = crate::sanitize::for_display(text);
        match self {
            Layer::Approval => to_approval(state, Input::Paste(&clean)).unwrap_or(Command::None),
            Layer::Overlay => to_overlay(state, Input::Paste(&clean)).unwrap_or(Command::None),
            // The file view takes the text as pasted (tabs and all): it is a
            // document, not a line of the UI.
            Layer::Pane(PaneId::FileView) => {
                to_pane(state, PaneId::FileView, Input::Paste(text)).unwrap_or(Command::None)
            }
            Layer::Pane(pane) => {
                to_pane(state, pane, Input::Paste(&clean)).unwrap_or(Command::None)
            }
        }
    }

    /// Scrolls this layer by `delta` rows (a huge delta means top/bottom).
    pub fn scroll(self, state: &mut AppState, delta: isize) {
        match self {
            Layer::Approval => {
                to_approval(state, Input::Scroll(delta));
            }
            Layer::Overlay => {
                to_overlay(state, Input::Scroll(delta));
            }
            Layer::Pane(pane) => {
                to_pane(state, pane, Input::Scroll(delta));
            }
        }
    }

    /// A mouse event for an approval or an overlay: the wheel scrolls it,
    /// clicks go to it as `Input::Mouse` (the approval's buttons). `None`
    /// for a pane layer: the panes take the mouse where the pointer is
    /// (`app::update`, which knows the layout and the split).
    pub fn mouse(self, state: &mut AppState, mouse: MouseEvent) -> Option<Command> {
        let wheel = match mouse.kind {
            MouseEventKind::ScrollUp => Some(-1),
            MouseEventKind::ScrollDown => Some(1),
            _ => None,
        };
        Some(match (self, wheel) {
            (Layer::Pane(_), _) => return None,
            (Layer::Approval | Layer::Overlay, Some(delta)) => {
                self.scroll(state, delta);
                Command::Redraw
            }
            (Layer::Approval, None) => {
                to_approval(state, Input::Mouse(mouse)).unwrap_or(Command::None)
            }
            (Layer::Overlay, None) => {
                to_overlay(state, Input::Mouse(mouse)).unwrap_or(Command::None)
            }
        })
    }
}

/// Asked of the whole state: which keys it takes now (the layers decide).
impl AppState {
    /// Scopes for key lookup, innermost first (the layer stack's).
    pub(crate) fn key_scopes(&self) -> Vec<Scope> {
        scopes(self)
    }

    /// The scope whose hints the status bar shows.
    pub(crate) fn active_scope(&self) -> Scope {
        self.key_scopes()
            .first()
            .copied()
            .unwrap_or_else(|| self.focus.scope())
    }
}

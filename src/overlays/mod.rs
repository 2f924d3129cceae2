//! Overlays as components (`crate::component`): each one is a struct that
//! owns its state, says which keys it takes, answers input, and paints
//! itself. An overlay never changes the rest of the workbench directly: it
//! asks for [`Effect`]s — open a file, focus a pane, pin a result, answer
//! a question, close itself — which the app applies once the overlay is
//! back in its slot.
//!
//! **Add an overlay:** write a struct implementing [`Component`] in a file
//! of this folder, then register it once, as a variant of [`Overlay`] (and
//! its arm in [`Overlay::component`] / [`Overlay::component_mut`]). The
//! layer stack (`app::layers`), the help overlay, the status bar and the
//! renderer all reach it through the trait; its keys go in
//! `keymap::BINDINGS` under its own [`Scope`].

pub mod approval;
pub(crate) mod confirm;
pub mod conflict;
pub mod help;
pub(crate) mod picker;
pub(crate) mod problem;
pub(crate) mod prompt;
pub(crate) mod request_preview;
pub mod search;
pub mod stack;
pub mod variable;

use crate::component::Around;
pub use crate::component::{
    Answer, Component, Ctx, Effect, Input, Opening, Outcome, View, clamp_add, scrolled_text,
};
use crate::workbench::Question;

/// The overlays there are: the one place an overlay is registered. They
/// stack (`stack::OverlayStack`, `AppState::overlays`); the top one has
/// the keyboard.
#[derive(Debug, PartialEq, Eq)]
pub enum Overlay {
    Help(help::Help),
    /// F2: the next request, exactly as it would be sent now.
    RequestPreview(request_preview::RequestPreview),
    Search(search::Search),
    Confirm(confirm::Confirm),
    Variable(variable::VariableDetail),
    Problem(problem::ProblemDetail),
    /// Ctrl+P.
    Picker(picker::Picker),
    /// Ctrl+G go to line, Ctrl+F find in file.
    Prompt(prompt::Prompt),
    /// Keep mine / load theirs / diff for the active tab.
    Conflict(conflict::Conflict),
    Diff(conflict::Diff),
}

impl Overlay {
    pub fn component(&self) -> &dyn Component {
        match self {
            Overlay::Help(o) => o,
            Overlay::RequestPreview(o) => o,
            Overlay::Search(o) => o,
            Overlay::Confirm(o) => o,
            Overlay::Variable(o) => o,
            Overlay::Problem(o) => o,
            Overlay::Picker(o) => o,
            Overlay::Prompt(o) => o,
            Overlay::Conflict(o) => o,
            Overlay::Diff(o) => o,
        }
    }

    pub(crate) fn component_mut(&mut self) -> &mut dyn Component {
        match self {
            Overlay::Help(o) => o,
            Overlay::RequestPreview(o) => o,
            Overlay::Search(o) => o,
            Overlay::Confirm(o) => o,
            Overlay::Variable(o) => o,
            Overlay::Problem(o) => o,
            Overlay::Picker(o) => o,
            Overlay::Prompt(o) => o,
            Overlay::Conflict(o) => o,
            Overlay::Diff(o) => o,
        }
    }

    /// Builds the overlay a component asked for (`Effect::Open`), reading
    /// what it starts from; `None` when there is nothing to show (no file
    /// open for a prompt, no difference for a diff).
    pub(crate) fn open(opening: Opening, around: Around<'_>) -> Option<Self> {
        Some(match opening {
            Opening::Picker => Overlay::Picker(picker::Picker::new(around)),
            Opening::Prompt(kind) => Overlay::Prompt(prompt::Prompt::new(
                kind,
                around.workbench.editors().active(),
            )?),
            Opening::Question(question) => Overlay::Confirm(confirm::Confirm::new(question)),
            Opening::Conflict => Overlay::Conflict(conflict::Conflict),
            Opening::Diff => Overlay::Diff(conflict::Diff::of_active(around)?),
            Opening::Variable(name) => {
                Overlay::Variable(variable::VariableDetail { name, scroll: 0 })
            }
            Opening::Problem(index) => {
                Overlay::Problem(problem::ProblemDetail { index, scroll: 0 })
            }
        })
    }

    /// The question it asks, when it is one.
    pub fn question(&self) -> Option<Question> {
        match self {
            Overlay::Confirm(confirm) => Some(confirm.question),
            _ => None,
        }
    }
}

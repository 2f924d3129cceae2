//! What panes and overlays are made of: a [`Component`] owns its state,
//! answers [`Input`] with an [`Outcome`], and asks for changes to the rest
//! of the workbench as [`Effect`]s through its [`Ctx`], which the app
//! applies in one place (`app::effects`). While it handles an input it is
//! taken out of `AppState`, so `Ctx::app` (everything else) is read-only
//! and every change it causes elsewhere is visible in its `handle`.

use std::path::PathBuf;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::app::AppState;
use crate::keymap::{Action, PaneId, Scope};
use crate::overlays::Overlay;
use crate::overlays::search::SearchTarget;
use crate::theme::Theme;
use crate::workbench::{Pin, Question};
use crate::workspace::{PickerResults, SearchMessage};

/// What reaches a component.
#[derive(Debug)]
pub enum Input<'a> {
    /// A keymap action: from its own scope, or one the layers above it
    /// passed on (`app::layers::route_action`).
    Action(Action),
    /// A key that is no binding: text for its input, if it has one.
    Key(KeyEvent),
    /// Bracketed paste, line breaks already `\n` and control characters
    /// already removed.
    Paste(&'a str),
    /// Scroll keys and the wheel, in rows (a huge delta: top or bottom).
    Scroll(isize),
    Mouse(MouseEvent),
    /// An answer from the fuzzy worker (the picker and the search pane's
    /// files scope share it; each keeps only the answer to its own query).
    FileMatches(&'a PickerResults),
    /// Hits of a `#text` contents search.
    ContentHits(SearchMessage),
    /// The workspace file index grew.
    IndexGrew,
    /// Something it may show changed (the kernel's variables, the agent's
    /// conversation, diagnostics): bring it up to date before the next
    /// frame.
    SourcesChanged,
    /// The result of an effect it asked for (the find bar's "3 of 10").
    Report(String),
    /// A find in a big text: where its match is, and the count of all
    /// matches now running (`app::find_count`), to keep until it answers.
    Counting {
        status: String,
        counting: crate::workbench::find_count::Counting,
    },
    /// A count the find bar may be waiting for (marked stale when the
    /// document moved on while it ran).
    Counted(crate::workbench::find_count::Counted),
}

/// Whether an overlay took an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Not for this overlay: the input goes to the layer below.
    Ignored,
    /// Taken; nothing on screen changed.
    Unchanged,
    /// Taken; draw a new frame.
    Changed,
}

impl Outcome {
    pub fn from_changed(changed: bool) -> Self {
        if changed {
            Outcome::Changed
        } else {
            Outcome::Unchanged
        }
    }
}

/// A change to the rest of the workbench that an overlay asks for; the app
/// applies them in order (`app::effects::apply`).
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    /// Close this overlay.
    Close,
    /// Show an overlay (from an overlay: in its place).
    Open(Box<Overlay>),
    /// Open a file (1-based line and column to put the cursor on).
    OpenFile {
        path: PathBuf,
        at: Option<(usize, usize)>,
    },
    /// Put the active file's cursor on a 1-based line and column.
    GoTo { line: usize, column: usize },
    /// Select the next (or previous) match of a query in the active file;
    /// the overlay gets the outcome back as [`Input::Report`].
    Find { query: String, forward: bool },
    /// Clear the active file's match highlights.
    ClearFind,
    /// Bring a search result into view (focus its pane and select it).
    Reveal(SearchTarget),
    /// Attach text to the next prompt.
    Pin(Pin),
    /// The composer's text, sent: a prompt, a `%py` cell or a `/command`.
    Submit(String),
    /// A line from hello-tui in the conversation.
    Notice(String),
    /// The user answered a question.
    Answer(Question, Answer),
    /// A keymap action, run through `update::apply` as if its key had been
    /// pressed (the conflict choices' keep mine / load theirs reach the
    /// file view this way, wherever the focus is).
    Run(Action),
    /// Give a pane the keyboard.
    Focus(PaneId),
    /// Text copied: the system clipboard gets it (OSC 52).
    Clipboard(String),
    /// The open files changed (text, tabs, dirty state): the kernel's
    /// `fs.write` and the language servers hear of it.
    FilesChanged,
    /// A file was saved: language servers get `didSave`, checks run.
    Saved(PathBuf),
}

/// The answers a question can get (not every question offers each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    /// No, or cancel.
    No,
    Save,
    Discard,
}

/// What an overlay gets while it handles an input: the rest of the
/// workbench to read, and the effects it asks for.
pub struct Ctx<'a> {
    /// Everything but the component itself: its slot holds a placeholder
    /// meanwhile (no overlay; an empty default pane), so a component reads
    /// its own state from `self`, never through `app`.
    pub app: &'a AppState,
    effects: Vec<Effect>,
}

impl<'a> Ctx<'a> {
    pub fn new(app: &'a AppState) -> Self {
        Self {
            app,
            effects: Vec::new(),
        }
    }

    pub fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// Closes the overlay, then applies `effect` (the usual end of an
    /// overlay that acted).
    pub fn close_with(&mut self, effect: Effect) {
        self.effects.push(Effect::Close);
        self.effects.push(effect);
    }

    pub fn into_effects(self) -> Vec<Effect> {
        self.effects
    }
}

/// What drawing reads: the state, the frame model (layout caches, built
/// before the frame by `ui::prepare`) and the theme.
pub struct View<'a> {
    pub app: &'a AppState,
    pub model: &'a crate::ui::FrameModel,
    pub theme: &'a Theme,
}

/// A pane or an overlay: its state, its keys, how it answers input and
/// how it paints. Drawing reads the state only; `before_frame` is where derived
/// state is brought up to date.
pub trait Component {
    /// What the status bar calls it.
    fn label(&self) -> &'static str;

    /// Its key scope (`keymap::BINDINGS`), asked on every key: a question
    /// can change its keys as it goes.
    fn scope(&self) -> Scope;

    /// Every scope it takes keys from, innermost first (a list pane adds
    /// the shared list keys under its own).
    fn scopes(&self) -> Vec<Scope> {
        vec![self.scope()]
    }

    /// Answers an input. Effects go through `ctx`.
    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome;

    /// Brings what it shows up to date, once before each frame (after all
    /// the input of the frame). `screen` is the terminal's area. Called
    /// for the open overlay; panes bring their derived state up to date in
    /// `ui::prepare`, which has the frame model.
    fn before_frame(&mut self, _app: &AppState, _screen: Rect) {}

    /// Paints it: an overlay over the panes (`area` is the screen), a pane
    /// in its rectangle.
    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame);
}

/// Scrolls `value` by `delta`, within `0..=max`.
pub fn clamp_add(value: usize, delta: isize, max: usize) -> usize {
    (value as isize)
        .saturating_add(delta)
        .clamp(0, max as isize) as usize
}

/// How a read-only text overlay (help, a variable, a problem) answers:
/// Esc closes it, the scroll keys move it (`before_frame` or drawing clamps
/// to the text's length).
pub fn scrolled_text(scroll: &mut usize, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
    match input {
        Input::Action(Action::CloseOverlay) => {
            ctx.push(Effect::Close);
            Outcome::Changed
        }
        Input::Scroll(delta) => {
            *scroll = clamp_add(*scroll, delta, u16::MAX as usize);
            Outcome::Changed
        }
        _ => Outcome::Ignored,
    }
}

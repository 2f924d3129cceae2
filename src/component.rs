//! What panes and overlays are made of: a [`Component`] owns its state,
//! answers [`Input`] with an [`Outcome`], and asks for changes to the rest
//! of the workbench as [`Effect`]s through its [`Ctx`], which the app
//! queues and applies in one place (`app::deliver`, `app::effects`). What it may read of the rest is
//! an [`Around`]: the model and the few facts of the screen it needs,
//! read-only, so every change it causes elsewhere is visible in its
//! `handle`. Nothing here knows the app that holds the components.

use std::path::PathBuf;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::keymap::{Action, PaneId, Scope};
use crate::screen::layout::PaneLayout;
use crate::theme::Theme;
use crate::ui::markdown::CodeStyler;
use crate::workbench::diagnostics::DiagnosticRow;
use crate::workbench::{Pin, Question, VariableRow, Workbench};
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
    pub(crate) fn from_changed(changed: bool) -> Self {
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
    Open(Opening),
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
    /// Text copied: the system clipboard gets it (OSC 52), unless it is
    /// too long for that.
    Clipboard(String),
    /// The open files changed (text, tabs, dirty state): the kernel's
    /// `fs.write` and the language servers hear of it.
    FilesChanged,
    /// A file was saved: language servers get `didSave`, checks run.
    Saved(PathBuf),
}

/// An overlay to open, said as data: the app builds it
/// (`overlays::Overlay::open`) with what it needs to read, so a component
/// never names another component's type and `overlays` sits above this
/// module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opening {
    /// The file picker (Ctrl+P).
    Picker,
    /// Go to line or find, for the active file (nothing when none is).
    Prompt(PromptKind),
    /// A question to answer ([`Effect::Answer`]).
    Question(Question),
    /// Keep mine / load theirs / diff, for the active tab.
    Conflict,
    /// The active tab's text against the disk's (nothing when they agree).
    Diff,
    /// A kernel variable's detail.
    Variable(String),
    /// The diagnostic at this row of the Diagnostics pane, in full.
    Problem(usize),
}

/// The file view's one-line prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    GoToLine,
    Find,
}

impl PromptKind {
    pub fn label(self) -> &'static str {
        match self {
            PromptKind::GoToLine => "Go to line",
            PromptKind::Find => "Find",
        }
    }
}

/// Where a search result lives (the search pane reveals it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchTarget {
    /// Index into the conversation pane's messages.
    Message(usize),
    /// A conversation message no pane entry shows: Enter says so rather
    /// than jumping nowhere.
    NotShown(crate::context::MessageId),
    Variable(String),
    /// Index into the diagnostics pane's rows.
    Diagnostic(usize),
    /// A workspace-relative path, and a 1-based line to put the cursor on.
    File(String, Option<usize>),
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

/// What a component reads of everything around it while it handles input
/// or paints: the model, and the few facts of the screen it needs. All of
/// it is read-only; a component changes the rest only through [`Effect`]s.
#[derive(Clone, Copy)]
pub struct Around<'a> {
    pub workbench: &'a Workbench,
    /// The pane with the keyboard when no overlay is open.
    pub focus: PaneId,
    /// An overlay (or a question) is over the panes: they draw unfocused.
    pub overlay_open: bool,
    /// The whole terminal.
    pub screen: Rect,
    /// Where each pane is on it.
    pub layout: PaneLayout,
    /// The rows the variables and diagnostics panes list: the search pane
    /// searches what they show. (Empty while that pane itself handles an
    /// input: it reads its own rows from `self`.)
    pub variables: &'a [VariableRow],
    pub diagnostics: &'a [DiagnosticRow],
    /// Colours code (plain when there is no highlighter or under
    /// `NO_COLOR`).
    pub code: &'a dyn CodeStyler,
}

impl Around<'_> {
    /// Whether pane `id` has the keyboard now.
    pub(crate) fn has_keyboard(&self, id: PaneId) -> bool {
        self.focus == id && !self.overlay_open
    }
}

/// What a component gets while it handles an input: the rest of the
/// workbench to read, and the effects it asks for.
pub struct Ctx<'a> {
    pub around: Around<'a>,
    effects: Vec<Effect>,
}

impl<'a> Ctx<'a> {
    pub fn new(around: Around<'a>) -> Self {
        Self {
            around,
            effects: Vec::new(),
        }
    }

    pub fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// Closes the overlay, then applies `effect` (the usual end of an
    /// overlay that acted).
    pub(crate) fn close_with(&mut self, effect: Effect) {
        self.effects.push(Effect::Close);
        self.effects.push(effect);
    }

    pub(crate) fn into_effects(self) -> Vec<Effect> {
        self.effects
    }
}

/// What drawing reads: what is around, the frame model (layout caches,
/// built before the frame by `app::frame::prepare`) and the theme.
pub struct View<'a> {
    pub around: Around<'a>,
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
    /// the input of the frame). Called for the open overlays; panes bring
    /// their derived state up to date in `app::frame::prepare`, which has
    /// the frame model.
    fn before_frame(&mut self, _around: Around<'_>) {}

    /// Paints it: an overlay over the panes (`area` is the screen), a pane
    /// in its rectangle.
    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame);

    /// An overlay that leaves the panes in view (a bar over one of them):
    /// the part of `screen` it hides, so the pane can keep its cursor clear
    /// of it. None for what covers the screen or nothing in particular.
    fn covers(&self, _around: &Around<'_>) -> Option<Rect> {
        None
    }
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

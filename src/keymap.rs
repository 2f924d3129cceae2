//! The one keymap: every binding lives in [`BINDINGS`]; the help overlay and
//! the status-bar hints are generated from it, so they can never drift from
//! what the keys actually do.

mod composer;

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

pub(crate) use composer::{COMPOSER, takes as composer_takes};

/// Where a binding applies. Lookup goes from the innermost scope outwards:
/// the open overlay, then the focused pane, then [`Scope::Global`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Global,
    /// The conversation pane; typing goes to the composer.
    Conversation,
    /// Selecting text in the conversation's history with the keys.
    HistorySelect,
    FileView,
    /// The list panes (variables, diagnostics): no text input, so single
    /// letters can be bindings.
    List,
    Search,
    Help,
    /// A yes/no question.
    Confirm,
    /// Quitting or closing with unsaved edits: save, discard or cancel.
    Unsaved,
    /// A buffer recovered from an earlier session: restore, later, discard.
    Recovery,
    /// May the workspace's own programs run? No unless `y`.
    Trust,
    /// The variables pane (its list keys come from [`Scope::List`]).
    Variables,
    /// The diagnostics pane (its list keys come from [`Scope::List`]).
    Diagnostics,
    /// Typing a filter in the variables pane.
    VariableFilter,
    /// The approval overlay's choices.
    Approval,
    /// Typing the reason for a denial.
    ApprovalReason,
    /// A write's hunks, one at a time (`review` mode).
    HunkReview,
    /// The slash-command palette, open while a command name is typed.
    SlashPalette,
    /// The workspace's files, listed while an `@path` is typed in the
    /// composer.
    MentionList,
    /// The Ctrl+P file picker: typing edits the query.
    Picker,
    /// The go-to-line prompt and the find bar: typing edits the input.
    Prompt,
    /// Choices for a file that changed on disk under unsaved edits.
    Conflict,
    /// F2, the next request.
    RequestPreview,
}

impl Scope {
    pub fn label(self) -> &'static str {
        match self {
            Scope::Global => "Everywhere",
            Scope::Conversation => "Conversation",
            Scope::HistorySelect => "Selecting text in the conversation",
            Scope::FileView => "File view",
            Scope::List => "Variables and Diagnostics",
            Scope::Search => "Search",
            Scope::Help => "Help and details",
            Scope::Confirm => "Confirmation",
            Scope::Unsaved => "Unsaved edits (quit, close)",
            Scope::Recovery => "Recovered edits (at start)",
            Scope::Trust => "Trust the workspace (first open, /trust)",
            Scope::Variables => "Variables",
            Scope::Diagnostics => "Diagnostics",
            Scope::VariableFilter => "Variables filter",
            Scope::Approval => "Approval",
            Scope::ApprovalReason => "Approval: reason for denying",
            Scope::HunkReview => "Review a write hunk by hunk",
            Scope::SlashPalette => "Slash commands (type / in the composer)",
            Scope::MentionList => "Mention a file (type @ in the composer)",
            Scope::Picker => "File picker (Ctrl+P)",
            Scope::Prompt => "Go to line and find in file",
            Scope::Conflict => "Changed on disk",
            Scope::RequestPreview => "Next request (F2)",
        }
    }

    /// Scopes in the order the help overlay lists them.
    pub const ALL: [Scope; 23] = [
        Scope::Global,
        Scope::Conversation,
        Scope::HistorySelect,
        Scope::SlashPalette,
        Scope::MentionList,
        Scope::FileView,
        Scope::List,
        Scope::Variables,
        Scope::VariableFilter,
        Scope::Diagnostics,
        Scope::Search,
        Scope::Help,
        Scope::RequestPreview,
        Scope::Confirm,
        Scope::Unsaved,
        Scope::Recovery,
        Scope::Trust,
        Scope::Approval,
        Scope::ApprovalReason,
        Scope::HunkReview,
        Scope::Picker,
        Scope::Prompt,
        Scope::Conflict,
    ];
}

/// The panes of the workbench, in focus order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaneId {
    Conversation,
    FileView,
    Variables,
    Diagnostics,
}

impl PaneId {
    pub const ALL: [PaneId; 4] = [
        PaneId::Conversation,
        PaneId::FileView,
        PaneId::Variables,
        PaneId::Diagnostics,
    ];

    pub fn label(self) -> &'static str {
        match self {
            PaneId::Conversation => "Conversation",
            PaneId::FileView => "File",
            PaneId::Variables => "Variables",
            PaneId::Diagnostics => "Diagnostics",
        }
    }

    pub(crate) fn scope(self) -> Scope {
        match self {
            PaneId::Conversation => Scope::Conversation,
            PaneId::FileView => Scope::FileView,
            PaneId::Variables | PaneId::Diagnostics => Scope::List,
        }
    }
}

pub use crate::editor::Motion;

/// What a motion does, for the help overlay.
fn describe_motion(motion: Motion) -> &'static str {
    match motion {
        Motion::Left => "left",
        Motion::Right => "right",
        Motion::Up => "up",
        Motion::Down => "down",
        Motion::WordLeft => "a word left",
        Motion::WordRight => "a word right",
        Motion::LineStart => "to the line start (first non-blank, then column 1)",
        Motion::LineEnd => "to the line end",
        Motion::DocStart => "to the start of the file",
        Motion::DocEnd => "to the end of the file",
        Motion::PageUp => "a page up",
        Motion::PageDown => "a page down",
    }
}

/// Everything a key can do. Text typed into the composer is not an action:
/// keys without a binding fall through to the focused text input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    ShowHelp,
    ShowSnapshot,
    /// F2: the messages as JSON, exactly as the body carries them, or
    /// readable.
    ToggleRequestJson,
    CloseOverlay,
    FocusNext,
    FocusPrev,
    Focus(PaneId),
    OpenSearch,
    ToggleCells,
    NextDiagnostic,
    PrevDiagnostic,
    JumpToDiagnostic,
    /// The selected problem's whole message, source, code and related
    /// places.
    ShowProblem,
    Interrupt,
    CancelTurn,
    Suspend,
    Redraw,
    /// The focused pane fills the screen, or the layout comes back.
    ZoomPane,
    /// The border between the conversation and the right side moves.
    WidenConversation,
    NarrowConversation,
    SendMessage,
    InsertNewline,
    ScrollUp,
    ScrollDown,
    PageUp,
    PageDown,
    ScrollTop,
    ScrollBottom,
    SearchNextScope,
    SearchOpen,
    SearchPin,
    RemovePin,
    /// The composer's pasted-text chips become their text again.
    ExpandPastes,
    /// Conversation: select the message before the selected one (the
    /// newest, first).
    SelectPreviousMessage,
    /// Conversation: select the message after the selected one.
    SelectNextMessage,
    /// Conversation: copy the selected message, else the last answer.
    CopyMessage,
    CopyCodeBlock,
    // Selecting text in the conversation with the keys.
    StartTextSelection,
    HistoryCursor(Motion),
    HistoryExtend(Motion),
    ToggleSelectionAnchor,
    CopyTextSelection,
    LeaveTextSelection,
    SearchPrevScope,
    Confirm,
    Deny,
    /// A question about unsaved edits: throw them away (and quit, close,
    /// or forget a recovered buffer).
    AnswerDiscard,
    /// A question about unsaved edits: save first, then quit or close.
    AnswerSave,
    /// Approval overlay: run the command or cell once.
    ApproveOnce,
    /// Approval overlay: always for this exact command (cells: every cell).
    ApproveAlways,
    /// Approval overlay: deny, typing a reason first.
    StartDenial,
    /// Approval overlay: deny without a reason.
    DenyNow,
    SendDenial,
    CancelDenial,
    /// Hunk review: write this hunk.
    AcceptHunk,
    /// Hunk review: leave this hunk out.
    RejectHunk,
    /// Hunk review: write this hunk and every later one.
    AcceptRestHunks,
    /// Hunk review: leave out this hunk and every later one.
    RejectRestHunks,
    /// Hunk review: back to the previous hunk, to decide it again.
    PreviousHunk,
    /// Slash palette: the next command.
    PaletteNext,
    /// Slash palette: the previous command.
    PalettePrevious,
    /// Slash palette: complete the selected command's name.
    PaletteComplete,
    /// Slash palette: run the selected command.
    PaletteAccept,
    /// Slash palette: close it, keeping the text.
    PaletteClose,
    /// `@` list: the next file.
    MentionNext,
    /// `@` list: the previous file.
    MentionPrevious,
    /// `@` list: put the selected file's path in place of what is typed.
    MentionInsert,
    /// `@` list: close it, keeping the text.
    MentionClose,
    /// Switch the approval mode between `ask` and `auto`.
    CycleApprovalMode,
    SortVariables,
    FilterVariables,
    ShowVariable,
    ClearFilter,
    EndFilter,
    // Files and tabs.
    OpenPicker,
    /// Enter in the picker or a prompt.
    Accept,
    /// Shift+Enter in the find bar.
    FindPrev,
    Save,
    SaveAll,
    CloseTab,
    NextTab,
    PrevTab,
    // Editing in the file view.
    Move(Motion),
    Select(Motion),
    Newline,
    Indent,
    DeleteBack,
    DeleteForward,
    DeleteWordBack,
    DeleteWordForward,
    SelectAll,
    Copy,
    Cut,
    Paste,
    Undo,
    Redo,
    GoToLine,
    FindInFile,
    // A file changed on disk while it had unsaved edits.
    ResolveConflict,
    KeepMine,
    LoadTheirs,
    ShowDiff,
}

impl Action {
    /// The sentence the help overlay shows.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Quit => "Quit (asks first when there are unsaved edits)",
            Action::ShowHelp => "Show this help",
            Action::ShowSnapshot => "Preview the next request the model gets",
            Action::ToggleRequestJson => {
                "Show the messages as the JSON the request carries, or readable"
            }
            Action::CloseOverlay => "Close the overlay",
            Action::FocusNext => "Focus the next pane",
            Action::FocusPrev => "Focus the previous pane",
            Action::Focus(PaneId::Conversation) => "Focus the conversation",
            Action::Focus(PaneId::FileView) => "Focus the file view",
            Action::Focus(PaneId::Variables) => "Focus the variables inspector",
            Action::Focus(PaneId::Diagnostics) => "Focus the diagnostics list",
            Action::OpenSearch => "Open the search pane",
            Action::ToggleCells => {
                "Expand or collapse code cells and reasoning in the conversation"
            }
            Action::NextDiagnostic => "Go to the next diagnostic",
            Action::JumpToDiagnostic => "Open the file at the selected diagnostic",
            Action::ShowProblem => "Show the whole problem: message, source, code, related places",
            Action::PrevDiagnostic => "Go to the previous diagnostic",
            Action::Interrupt => {
                "Interrupt the running cell (variables kept), else cancel the turn"
            }
            Action::CancelTurn => "Cancel the agent's turn (stops the model, interrupts its cell)",
            Action::Suspend => "Suspend to the shell (resume with fg)",
            Action::Redraw => "Redraw the screen",
            Action::ZoomPane => "Zoom the focused pane to the whole screen, or back",
            Action::WidenConversation => {
                "Widen the conversation (or drag the border between the panes)"
            }
            Action::NarrowConversation => "Narrow the conversation",
            Action::SendMessage => "Send the message",
            Action::InsertNewline => "New line in the message",
            Action::ScrollUp => "Move up",
            Action::ScrollDown => "Move down",
            Action::PageUp => "Page up",
            Action::PageDown => "Page down",
            Action::ScrollTop => "Go to the top",
            Action::ScrollBottom => "Go to the bottom",
            Action::SearchNextScope => "Next search scope",
            Action::SearchOpen => "Go to the result",
            Action::SearchPin => "Pin the result to the next prompt",
            Action::RemovePin => "Remove the last pinned result",
            Action::ExpandPastes => "Put a big paste's text back in place of its chip, to edit it",
            Action::SelectPreviousMessage => "Select the previous message (to copy it)",
            Action::SelectNextMessage => "Select the next message",
            Action::CopyCodeBlock => {
                "Copy a code block: the one the selection is in, else the last one of the \
                 selected message or of the newest message with one"
            }
            Action::StartTextSelection => {
                "Select text with the keys: a cursor in the history, Shift or v to select"
            }
            Action::HistoryCursor(Motion::LineStart) => "Go to the start of the row",
            Action::HistoryCursor(Motion::LineEnd) => "Go to the end of the row",
            Action::HistoryCursor(Motion::PageUp | Motion::PageDown) => "Move a page",
            Action::HistoryCursor(_) => "Move the cursor",
            Action::HistoryExtend(_) => "Select as the move without Shift goes",
            Action::ToggleSelectionAnchor => "Start selecting at the cursor, or stop",
            Action::CopyTextSelection => "Copy the selection (or the cursor's row) and leave",
            Action::LeaveTextSelection => "Leave without copying",
            Action::CopyMessage => {
                "Copy the selected message, else the last answer, to the clipboard (OSC 52)"
            }
            Action::SearchPrevScope => "Previous search scope",
            Action::Confirm => "Yes",
            Action::AnswerDiscard => "Discard the unsaved edits (then quit or close)",
            Action::AnswerSave => "Save first (then quit or close)",
            Action::Deny => "No",
            Action::ApproveOnce => "Allow it once (run the command or cell, make the write)",
            Action::ApproveAlways => {
                "Always allow this exact command (for cells: every cell; for writes: every write) \
                 this session"
            }
            Action::StartDenial => "Deny, with a reason the code receives",
            Action::DenyNow => "Deny without a reason",
            Action::SendDenial => "Send the denial and its reason",
            Action::AcceptHunk => "Write this hunk",
            Action::RejectHunk => "Leave this hunk out",
            Action::AcceptRestHunks => "Write this hunk and all later ones",
            Action::RejectRestHunks => "Leave out this hunk and all later ones",
            Action::PreviousHunk => "Back to the previous hunk",
            Action::PaletteNext => "Next command",
            Action::PalettePrevious => "Previous command",
            Action::PaletteComplete => "Complete the command's name (then type its arguments)",
            Action::PaletteAccept => "Run the selected command",
            Action::PaletteClose => "Close the list, keep the text",
            Action::MentionNext => "Next file",
            Action::MentionPrevious => "Previous file",
            Action::MentionInsert => "Insert the file's path (it goes with the message)",
            Action::MentionClose => "Close the file list, keep the text",
            Action::CancelDenial => "Back to the choices",
            Action::CycleApprovalMode => "Approval mode ask ↔ auto (or /approval MODE)",
            Action::SortVariables => "Sort variables by name or by last change",
            Action::FilterVariables => "Filter variables as you type",
            Action::ShowVariable => "Show the selected variable in full",
            Action::ClearFilter => "Clear the filter",
            Action::EndFilter => "Keep the filter and go back to the list",
            Action::OpenPicker => "Open a file by fuzzy name",
            Action::Accept => "Open / go / find next",
            Action::FindPrev => "Find the previous match",
            Action::Save => "Save the file",
            Action::SaveAll => "Save all files",
            Action::CloseTab => "Close the tab (asks when it has unsaved edits)",
            Action::NextTab => "Next tab",
            Action::PrevTab => "Previous tab",
            Action::Move(m) => match m {
                Motion::Left | Motion::Right | Motion::Up | Motion::Down => "Move the cursor",
                _ => describe_motion(m),
            },
            Action::Select(_) => "Extend the selection",
            Action::Newline => "New line",
            Action::Indent => {
                "Indent (in the file view Tab is text: leave with Shift+Tab or Alt+1..4)"
            }
            Action::DeleteBack => "Delete the character before the cursor",
            Action::DeleteForward => "Delete the character after the cursor",
            Action::DeleteWordBack => "Delete the word before the cursor",
            Action::DeleteWordForward => "Delete the word after the cursor",
            Action::SelectAll => "Select all",
            Action::Copy => {
                "Copy (the line when nothing is selected; also to the system clipboard)"
            }
            Action::Cut => "Cut (the line when nothing is selected)",
            Action::Paste => "Paste",
            Action::Undo => "Undo",
            Action::Redo => "Redo",
            Action::GoToLine => "Go to line",
            Action::FindInFile => "Find in the file",
            Action::ResolveConflict => "Resolve a change on disk (keep mine, load theirs, diff)",
            Action::KeepMine => "Keep my text (the next save overwrites the disk)",
            Action::LoadTheirs => "Load the disk version (asks first: discards my edits)",
            Action::ShowDiff => "Show the diff of disk and buffer",
        }
    }

    /// A short word for the status-bar hints.
    pub fn hint(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::ShowHelp => "help",
            Action::ShowSnapshot => "next request",
            Action::ToggleRequestJson => "json/readable",
            Action::CloseOverlay => "close",
            Action::FocusNext => "next pane",
            Action::OpenSearch => "search",
            Action::SendMessage => "send",
            Action::InsertNewline => "newline",
            Action::SearchNextScope => "scope",
            Action::SearchOpen => "go",
            Action::SearchPin => "pin",
            Action::Confirm => "yes",
            Action::AnswerDiscard => "discard",
            Action::AnswerSave => "save",
            Action::Deny => "no",
            Action::ApproveOnce => "allow once",
            Action::ApproveAlways => "always",
            Action::StartDenial => "deny…",
            Action::DenyNow => "deny",
            Action::SendDenial => "send",
            Action::AcceptHunk => "accept",
            Action::RejectHunk => "reject",
            Action::AcceptRestHunks => "accept rest",
            Action::RejectRestHunks => "reject rest",
            Action::PreviousHunk => "back",
            Action::PaletteNext => "next",
            Action::PalettePrevious => "previous",
            Action::PaletteComplete => "complete",
            Action::PaletteAccept => "run",
            Action::PaletteClose => "close",
            Action::MentionNext => "next",
            Action::MentionPrevious => "previous",
            Action::MentionInsert => "insert",
            Action::MentionClose => "close",
            Action::CancelDenial => "back",
            Action::CycleApprovalMode => "mode",
            Action::SortVariables => "sort",
            Action::FilterVariables => "filter",
            Action::ShowVariable => "details",
            Action::ClearFilter => "clear",
            Action::EndFilter => "done",
            Action::OpenPicker => "open file",
            Action::Accept => "open",
            Action::Save => "save",
            Action::GoToLine => "line",
            Action::FindInFile => "find",
            Action::KeepMine => "keep mine",
            Action::LoadTheirs => "load theirs",
            Action::ShowDiff => "diff",
            Action::ResolveConflict => "resolve",
            Action::JumpToDiagnostic => "open",
            Action::ShowProblem => "details",
            Action::ToggleSelectionAnchor => "select",
            Action::CopyTextSelection => "copy",
            Action::CopyCodeBlock => "copy code",
            Action::LeaveTextSelection => "leave",
            _ => "",
        }
    }
}

/// A key with its modifiers, as written in the help ("Ctrl+Q").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KeyCombo {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl KeyCombo {
    pub const fn new(code: KeyCode, modifiers: KeyModifiers) -> Self {
        Self { code, modifiers }
    }

    /// Normalises a terminal key event so it compares equal to the table:
    /// terminals report Shift+Tab as `BackTab` (with or without SHIFT) and
    /// upper-case letters with SHIFT; the table spells them one way.
    pub(crate) fn from_event(event: &KeyEvent) -> Self {
        let mut modifiers = event.modifiers;
        let code = match event.code {
            KeyCode::BackTab => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            KeyCode::Char(c) if c.is_ascii_punctuation() || c.is_ascii_uppercase() => {
                // `?` arrives as Shift+'?' on some terminals and plain '?' on others.
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::Char(c)
            }
            other => other,
        };
        Self { code, modifiers }
    }
}

impl fmt::Display for KeyCombo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl+")?;
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            f.write_str("Alt+")?;
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift+")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            // As typed: `y`, `?`; with a modifier as editors write it
            // (`Ctrl+S`).
            KeyCode::Char(c) if self.modifiers.is_empty() => write!(f, "{c}"),
            KeyCode::Char(c) => write!(f, "{}", c.to_ascii_uppercase()),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift+Tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Delete"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// One row of the keymap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub scope: Scope,
    pub key: KeyCombo,
    pub action: Action,
    /// Shown in the status bar when this scope is active.
    pub hint: bool,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const CTRL_SHIFT: KeyModifiers = KeyModifiers::CONTROL.union(KeyModifiers::SHIFT);
const CTRL_ALT: KeyModifiers = KeyModifiers::CONTROL.union(KeyModifiers::ALT);

const fn bind(scope: Scope, code: KeyCode, modifiers: KeyModifiers, action: Action) -> Binding {
    Binding {
        scope,
        key: KeyCombo::new(code, modifiers),
        action,
        hint: false,
    }
}

const fn hinted(scope: Scope, code: KeyCode, modifiers: KeyModifiers, action: Action) -> Binding {
    Binding {
        scope,
        key: KeyCombo::new(code, modifiers),
        action,
        hint: true,
    }
}

use KeyCode::{Char, F};

/// The single source of truth for key bindings.
pub(crate) const BINDINGS: &[Binding] = &[
    // Everywhere.
    hinted(Scope::Global, Char('q'), CTRL, Action::Quit),
    hinted(Scope::Global, F(1), NONE, Action::ShowHelp),
    bind(Scope::Global, F(2), NONE, Action::ShowSnapshot),
    hinted(Scope::Global, KeyCode::Tab, NONE, Action::FocusNext),
    bind(Scope::Global, KeyCode::BackTab, NONE, Action::FocusPrev),
    bind(
        Scope::Global,
        Char('1'),
        ALT,
        Action::Focus(PaneId::Conversation),
    ),
    bind(
        Scope::Global,
        Char('2'),
        ALT,
        Action::Focus(PaneId::FileView),
    ),
    bind(
        Scope::Global,
        Char('3'),
        ALT,
        Action::Focus(PaneId::Variables),
    ),
    bind(
        Scope::Global,
        Char('4'),
        ALT,
        Action::Focus(PaneId::Diagnostics),
    ),
    bind(Scope::Global, Char('5'), ALT, Action::OpenSearch),
    hinted(Scope::Global, Char('f'), CTRL, Action::OpenSearch),
    bind(Scope::Global, F(4), NONE, Action::CycleApprovalMode),
    bind(Scope::Global, Char('o'), CTRL, Action::ToggleCells),
    bind(Scope::Global, Char('c'), CTRL, Action::Interrupt),
    bind(Scope::Global, F(8), NONE, Action::NextDiagnostic),
    bind(Scope::Global, F(8), SHIFT, Action::PrevDiagnostic),
    hinted(
        Scope::Diagnostics,
        KeyCode::Enter,
        NONE,
        Action::JumpToDiagnostic,
    ),
    hinted(Scope::Diagnostics, Char('K'), NONE, Action::ShowProblem),
    bind(Scope::Global, KeyCode::Esc, NONE, Action::CancelTurn),
    bind(Scope::Global, Char('z'), CTRL, Action::Suspend),
    bind(Scope::Global, Char('l'), CTRL, Action::Redraw),
    bind(Scope::Global, Char('z'), ALT, Action::ZoomPane),
    bind(Scope::Global, Char('='), ALT, Action::WidenConversation),
    bind(Scope::Global, Char('-'), ALT, Action::NarrowConversation),
    // Conversation: the composer takes every other key as text.
    hinted(
        Scope::Conversation,
        KeyCode::Enter,
        NONE,
        Action::SendMessage,
    ),
    hinted(
        Scope::Conversation,
        KeyCode::Enter,
        SHIFT,
        Action::InsertNewline,
    ),
    bind(
        Scope::Conversation,
        KeyCode::Enter,
        ALT,
        Action::InsertNewline,
    ),
    bind(Scope::Conversation, Char('j'), CTRL, Action::InsertNewline),
    bind(
        Scope::Conversation,
        KeyCode::Backspace,
        ALT,
        Action::RemovePin,
    ),
    bind(
        Scope::Conversation,
        KeyCode::Up,
        ALT,
        Action::SelectPreviousMessage,
    ),
    bind(
        Scope::Conversation,
        KeyCode::Down,
        ALT,
        Action::SelectNextMessage,
    ),
    bind(Scope::Conversation, Char('c'), ALT, Action::CopyMessage),
    bind(Scope::Conversation, Char('k'), ALT, Action::CopyCodeBlock),
    bind(
        Scope::Conversation,
        Char('v'),
        ALT,
        Action::StartTextSelection,
    ),
    // Selecting text in the history with the keys (modal: typing is not
    // text for the composer meanwhile).
    bind(
        Scope::HistorySelect,
        KeyCode::Up,
        NONE,
        Action::HistoryCursor(Motion::Up),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Down,
        NONE,
        Action::HistoryCursor(Motion::Down),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Left,
        NONE,
        Action::HistoryCursor(Motion::Left),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Right,
        NONE,
        Action::HistoryCursor(Motion::Right),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Home,
        NONE,
        Action::HistoryCursor(Motion::LineStart),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::End,
        NONE,
        Action::HistoryCursor(Motion::LineEnd),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::PageUp,
        NONE,
        Action::HistoryCursor(Motion::PageUp),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::PageDown,
        NONE,
        Action::HistoryCursor(Motion::PageDown),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Up,
        SHIFT,
        Action::HistoryExtend(Motion::Up),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Down,
        SHIFT,
        Action::HistoryExtend(Motion::Down),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Left,
        SHIFT,
        Action::HistoryExtend(Motion::Left),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Right,
        SHIFT,
        Action::HistoryExtend(Motion::Right),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Home,
        SHIFT,
        Action::HistoryExtend(Motion::LineStart),
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::End,
        SHIFT,
        Action::HistoryExtend(Motion::LineEnd),
    ),
    hinted(
        Scope::HistorySelect,
        Char('v'),
        NONE,
        Action::ToggleSelectionAnchor,
    ),
    bind(
        Scope::HistorySelect,
        Char(' '),
        NONE,
        Action::ToggleSelectionAnchor,
    ),
    hinted(
        Scope::HistorySelect,
        Char('y'),
        NONE,
        Action::CopyTextSelection,
    ),
    bind(
        Scope::HistorySelect,
        KeyCode::Enter,
        NONE,
        Action::CopyTextSelection,
    ),
    hinted(Scope::HistorySelect, Char('k'), ALT, Action::CopyCodeBlock),
    hinted(
        Scope::HistorySelect,
        KeyCode::Esc,
        NONE,
        Action::LeaveTextSelection,
    ),
    bind(Scope::Conversation, Char('e'), ALT, Action::ExpandPastes),
    bind(Scope::Conversation, KeyCode::PageUp, NONE, Action::PageUp),
    bind(
        Scope::Conversation,
        KeyCode::PageDown,
        NONE,
        Action::PageDown,
    ),
    bind(Scope::Conversation, KeyCode::Home, CTRL, Action::ScrollTop),
    bind(
        Scope::Conversation,
        KeyCode::End,
        CTRL,
        Action::ScrollBottom,
    ),
    hinted(Scope::Global, Char('p'), CTRL, Action::OpenPicker),
    bind(Scope::Global, Char('s'), CTRL, Action::Save),
    bind(Scope::Global, Char('s'), CTRL_ALT, Action::SaveAll),
    bind(Scope::Global, KeyCode::PageDown, CTRL, Action::NextTab),
    bind(Scope::Global, KeyCode::PageUp, CTRL, Action::PrevTab),
    // File view: keys without a binding are typed as text. Tab is text here.
    hinted(Scope::FileView, Char('s'), CTRL, Action::Save),
    bind(Scope::FileView, KeyCode::Tab, NONE, Action::Indent),
    bind(Scope::FileView, KeyCode::Enter, NONE, Action::Newline),
    bind(
        Scope::FileView,
        KeyCode::Backspace,
        NONE,
        Action::DeleteBack,
    ),
    bind(
        Scope::FileView,
        KeyCode::Backspace,
        SHIFT,
        Action::DeleteBack,
    ),
    bind(
        Scope::FileView,
        KeyCode::Delete,
        NONE,
        Action::DeleteForward,
    ),
    bind(
        Scope::FileView,
        KeyCode::Backspace,
        CTRL,
        Action::DeleteWordBack,
    ),
    bind(
        Scope::FileView,
        KeyCode::Backspace,
        ALT,
        Action::DeleteWordBack,
    ),
    bind(Scope::FileView, Char('h'), CTRL, Action::DeleteWordBack),
    bind(
        Scope::FileView,
        KeyCode::Delete,
        CTRL,
        Action::DeleteWordForward,
    ),
    bind(
        Scope::FileView,
        KeyCode::Left,
        NONE,
        Action::Move(Motion::Left),
    ),
    bind(
        Scope::FileView,
        KeyCode::Right,
        NONE,
        Action::Move(Motion::Right),
    ),
    bind(Scope::FileView, KeyCode::Up, NONE, Action::Move(Motion::Up)),
    bind(
        Scope::FileView,
        KeyCode::Down,
        NONE,
        Action::Move(Motion::Down),
    ),
    bind(
        Scope::FileView,
        KeyCode::Left,
        CTRL,
        Action::Move(Motion::WordLeft),
    ),
    bind(
        Scope::FileView,
        KeyCode::Right,
        CTRL,
        Action::Move(Motion::WordRight),
    ),
    bind(
        Scope::FileView,
        KeyCode::Home,
        NONE,
        Action::Move(Motion::LineStart),
    ),
    bind(
        Scope::FileView,
        KeyCode::End,
        NONE,
        Action::Move(Motion::LineEnd),
    ),
    bind(
        Scope::FileView,
        KeyCode::Home,
        CTRL,
        Action::Move(Motion::DocStart),
    ),
    bind(
        Scope::FileView,
        KeyCode::End,
        CTRL,
        Action::Move(Motion::DocEnd),
    ),
    bind(
        Scope::FileView,
        KeyCode::PageUp,
        NONE,
        Action::Move(Motion::PageUp),
    ),
    bind(
        Scope::FileView,
        KeyCode::PageDown,
        NONE,
        Action::Move(Motion::PageDown),
    ),
    bind(
        Scope::FileView,
        KeyCode::Left,
        SHIFT,
        Action::Select(Motion::Left),
    ),
    bind(
        Scope::FileView,
        KeyCode::Right,
        SHIFT,
        Action::Select(Motion::Right),
    ),
    bind(
        Scope::FileView,
        KeyCode::Up,
        SHIFT,
        Action::Select(Motion::Up),
    ),
    bind(
        Scope::FileView,
        KeyCode::Down,
        SHIFT,
        Action::Select(Motion::Down),
    ),
    bind(
        Scope::FileView,
        KeyCode::Left,
        CTRL_SHIFT,
        Action::Select(Motion::WordLeft),
    ),
    bind(
        Scope::FileView,
        KeyCode::Right,
        CTRL_SHIFT,
        Action::Select(Motion::WordRight),
    ),
    bind(
        Scope::FileView,
        KeyCode::Home,
        SHIFT,
        Action::Select(Motion::LineStart),
    ),
    bind(
        Scope::FileView,
        KeyCode::End,
        SHIFT,
        Action::Select(Motion::LineEnd),
    ),
    bind(
        Scope::FileView,
        KeyCode::Home,
        CTRL_SHIFT,
        Action::Select(Motion::DocStart),
    ),
    bind(
        Scope::FileView,
        KeyCode::End,
        CTRL_SHIFT,
        Action::Select(Motion::DocEnd),
    ),
    bind(
        Scope::FileView,
        KeyCode::PageUp,
        SHIFT,
        Action::Select(Motion::PageUp),
    ),
    bind(
        Scope::FileView,
        KeyCode::PageDown,
        SHIFT,
        Action::Select(Motion::PageDown),
    ),
    bind(Scope::FileView, Char('a'), CTRL, Action::SelectAll),
    bind(Scope::FileView, Char('c'), CTRL, Action::Copy),
    bind(Scope::FileView, Char('x'), CTRL, Action::Cut),
    bind(Scope::FileView, Char('v'), CTRL, Action::Paste),
    bind(Scope::FileView, Char('z'), CTRL, Action::Undo),
    bind(Scope::FileView, Char('y'), CTRL, Action::Redo),
    bind(Scope::FileView, Char('z'), CTRL_SHIFT, Action::Redo),
    hinted(Scope::FileView, Char('g'), CTRL, Action::GoToLine),
    hinted(Scope::FileView, Char('f'), CTRL, Action::FindInFile),
    bind(Scope::FileView, Char('w'), CTRL, Action::CloseTab),
    bind(Scope::FileView, KeyCode::Left, ALT, Action::PrevTab),
    bind(Scope::FileView, KeyCode::Right, ALT, Action::NextTab),
    bind(Scope::FileView, Char('r'), CTRL, Action::ResolveConflict),
    // File picker.
    hinted(Scope::Picker, KeyCode::Enter, NONE, Action::Accept),
    hinted(Scope::Picker, KeyCode::Esc, NONE, Action::CloseOverlay),
    bind(Scope::Picker, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::Picker, Char('p'), CTRL, Action::ScrollUp),
    bind(Scope::Picker, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::Picker, Char('n'), CTRL, Action::ScrollDown),
    bind(Scope::Picker, KeyCode::PageUp, NONE, Action::PageUp),
    bind(Scope::Picker, KeyCode::PageDown, NONE, Action::PageDown),
    // Go to line and find bar.
    hinted(Scope::Prompt, KeyCode::Enter, NONE, Action::Accept),
    hinted(Scope::Prompt, KeyCode::Enter, SHIFT, Action::FindPrev),
    hinted(Scope::Prompt, KeyCode::Esc, NONE, Action::CloseOverlay),
    // Changed on disk.
    hinted(Scope::Conflict, Char('k'), NONE, Action::KeepMine),
    hinted(Scope::Conflict, Char('t'), NONE, Action::LoadTheirs),
    hinted(Scope::Conflict, Char('d'), NONE, Action::ShowDiff),
    hinted(Scope::Conflict, KeyCode::Esc, NONE, Action::CloseOverlay),
    // Lists.
    hinted(Scope::List, Char('?'), NONE, Action::ShowHelp),
    bind(Scope::List, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::List, Char('k'), NONE, Action::ScrollUp),
    bind(Scope::List, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::List, Char('j'), NONE, Action::ScrollDown),
    bind(Scope::List, KeyCode::PageUp, NONE, Action::PageUp),
    bind(Scope::List, KeyCode::PageDown, NONE, Action::PageDown),
    bind(Scope::List, KeyCode::Home, NONE, Action::ScrollTop),
    bind(Scope::List, KeyCode::End, NONE, Action::ScrollBottom),
    // Variables pane (plus the list keys above).
    hinted(Scope::Variables, KeyCode::Enter, NONE, Action::ShowVariable),
    hinted(Scope::Variables, Char('/'), NONE, Action::FilterVariables),
    hinted(Scope::Variables, Char('s'), NONE, Action::SortVariables),
    bind(Scope::Variables, KeyCode::Esc, NONE, Action::ClearFilter),
    // Variables filter: typing edits the filter.
    hinted(
        Scope::VariableFilter,
        KeyCode::Enter,
        NONE,
        Action::EndFilter,
    ),
    hinted(
        Scope::VariableFilter,
        KeyCode::Esc,
        NONE,
        Action::ClearFilter,
    ),
    bind(Scope::VariableFilter, KeyCode::Up, NONE, Action::ScrollUp),
    bind(
        Scope::VariableFilter,
        KeyCode::Down,
        NONE,
        Action::ScrollDown,
    ),
    // Approval overlay.
    hinted(Scope::Approval, Char('y'), NONE, Action::ApproveOnce),
    hinted(Scope::Approval, Char('a'), NONE, Action::ApproveAlways),
    hinted(Scope::Approval, Char('d'), NONE, Action::StartDenial),
    bind(Scope::Approval, Char('n'), NONE, Action::StartDenial),
    hinted(Scope::Approval, KeyCode::Esc, NONE, Action::DenyNow),
    bind(Scope::Approval, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::Approval, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::Approval, KeyCode::PageUp, NONE, Action::PageUp),
    bind(Scope::Approval, KeyCode::PageDown, NONE, Action::PageDown),
    bind(Scope::Approval, KeyCode::Home, NONE, Action::ScrollTop),
    bind(Scope::Approval, KeyCode::End, NONE, Action::ScrollBottom),
    hinted(
        Scope::SlashPalette,
        KeyCode::Enter,
        NONE,
        Action::PaletteAccept,
    ),
    hinted(
        Scope::SlashPalette,
        KeyCode::Tab,
        NONE,
        Action::PaletteComplete,
    ),
    bind(
        Scope::SlashPalette,
        KeyCode::Down,
        NONE,
        Action::PaletteNext,
    ),
    bind(
        Scope::SlashPalette,
        KeyCode::Up,
        NONE,
        Action::PalettePrevious,
    ),
    hinted(
        Scope::SlashPalette,
        KeyCode::Esc,
        NONE,
        Action::PaletteClose,
    ),
    hinted(
        Scope::MentionList,
        KeyCode::Enter,
        NONE,
        Action::MentionInsert,
    ),
    bind(
        Scope::MentionList,
        KeyCode::Tab,
        NONE,
        Action::MentionInsert,
    ),
    bind(Scope::MentionList, KeyCode::Down, NONE, Action::MentionNext),
    bind(
        Scope::MentionList,
        KeyCode::Up,
        NONE,
        Action::MentionPrevious,
    ),
    hinted(Scope::MentionList, KeyCode::Esc, NONE, Action::MentionClose),
    hinted(Scope::HunkReview, Char('y'), NONE, Action::AcceptHunk),
    hinted(Scope::HunkReview, Char('n'), NONE, Action::RejectHunk),
    hinted(Scope::HunkReview, Char('a'), NONE, Action::AcceptRestHunks),
    hinted(Scope::HunkReview, Char('d'), NONE, Action::RejectRestHunks),
    bind(Scope::HunkReview, Char('k'), NONE, Action::PreviousHunk),
    hinted(Scope::HunkReview, KeyCode::Esc, NONE, Action::DenyNow),
    bind(Scope::HunkReview, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::HunkReview, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::HunkReview, KeyCode::PageUp, NONE, Action::PageUp),
    bind(Scope::HunkReview, KeyCode::PageDown, NONE, Action::PageDown),
    bind(Scope::HunkReview, KeyCode::Home, NONE, Action::ScrollTop),
    bind(Scope::HunkReview, KeyCode::End, NONE, Action::ScrollBottom),
    hinted(
        Scope::ApprovalReason,
        KeyCode::Enter,
        NONE,
        Action::SendDenial,
    ),
    hinted(
        Scope::ApprovalReason,
        KeyCode::Esc,
        NONE,
        Action::CancelDenial,
    ),
    // Search overlay: typing edits the query.
    hinted(Scope::Search, KeyCode::Esc, NONE, Action::CloseOverlay),
    hinted(Scope::Search, KeyCode::Tab, NONE, Action::SearchNextScope),
    hinted(Scope::Search, KeyCode::Enter, NONE, Action::SearchOpen),
    hinted(Scope::Search, Char('p'), ALT, Action::SearchPin),
    bind(Scope::Search, KeyCode::Enter, CTRL, Action::SearchPin),
    bind(
        Scope::Search,
        KeyCode::BackTab,
        NONE,
        Action::SearchPrevScope,
    ),
    bind(Scope::Search, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::Search, Char('p'), CTRL, Action::ScrollUp),
    bind(Scope::Search, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::Search, Char('n'), CTRL, Action::ScrollDown),
    // Help overlay.
    hinted(Scope::Help, KeyCode::Esc, NONE, Action::CloseOverlay),
    bind(Scope::Help, Char('?'), NONE, Action::CloseOverlay),
    bind(Scope::Help, Char('q'), NONE, Action::CloseOverlay),
    bind(Scope::Help, KeyCode::Up, NONE, Action::ScrollUp),
    bind(Scope::Help, KeyCode::Down, NONE, Action::ScrollDown),
    bind(Scope::Help, KeyCode::PageUp, NONE, Action::PageUp),
    bind(Scope::Help, KeyCode::PageDown, NONE, Action::PageDown),
    bind(Scope::Help, KeyCode::Home, NONE, Action::ScrollTop),
    bind(Scope::Help, KeyCode::End, NONE, Action::ScrollBottom),
    // F2, the next request.
    hinted(
        Scope::RequestPreview,
        KeyCode::Esc,
        NONE,
        Action::CloseOverlay,
    ),
    hinted(
        Scope::RequestPreview,
        KeyCode::Tab,
        NONE,
        Action::ToggleRequestJson,
    ),
    bind(Scope::RequestPreview, F(2), NONE, Action::CloseOverlay),
    bind(Scope::RequestPreview, Char('q'), NONE, Action::CloseOverlay),
    bind(Scope::RequestPreview, KeyCode::Up, NONE, Action::ScrollUp),
    bind(
        Scope::RequestPreview,
        KeyCode::Down,
        NONE,
        Action::ScrollDown,
    ),
    bind(Scope::RequestPreview, KeyCode::PageUp, NONE, Action::PageUp),
    bind(
        Scope::RequestPreview,
        KeyCode::PageDown,
        NONE,
        Action::PageDown,
    ),
    bind(
        Scope::RequestPreview,
        KeyCode::Home,
        NONE,
        Action::ScrollTop,
    ),
    bind(
        Scope::RequestPreview,
        KeyCode::End,
        NONE,
        Action::ScrollBottom,
    ),
    // Yes/no questions.
    hinted(Scope::Confirm, Char('y'), NONE, Action::Confirm),
    hinted(Scope::Confirm, Char('n'), NONE, Action::Deny),
    bind(Scope::Confirm, KeyCode::Esc, NONE, Action::Deny),
    // No is the default: an Enter meant for the composer (or typed into
    // the terminal by someone else) never says yes.
    bind(Scope::Confirm, KeyCode::Enter, NONE, Action::Deny),
    // Unsaved edits when quitting or closing: no `y`, so a reflex "yes"
    // loses nothing.
    hinted(Scope::Unsaved, Char('s'), NONE, Action::AnswerSave),
    hinted(Scope::Unsaved, Char('d'), NONE, Action::AnswerDiscard),
    hinted(Scope::Unsaved, KeyCode::Esc, NONE, Action::CloseOverlay),
    bind(Scope::Unsaved, Char('n'), NONE, Action::Deny),
    // A recovered buffer: restore it, keep it for the next start, or drop it.
    hinted(Scope::Recovery, Char('y'), NONE, Action::Confirm),
    hinted(Scope::Recovery, Char('n'), NONE, Action::Deny),
    hinted(Scope::Recovery, Char('d'), NONE, Action::AnswerDiscard),
    bind(Scope::Recovery, KeyCode::Esc, NONE, Action::Deny),
    // Trusting a workspace: only `y` says yes; Enter and Esc say no.
    hinted(Scope::Trust, Char('y'), NONE, Action::Confirm),
    hinted(Scope::Trust, Char('n'), NONE, Action::Deny),
    bind(Scope::Trust, KeyCode::Enter, NONE, Action::Deny),
    bind(Scope::Trust, KeyCode::Esc, NONE, Action::Deny),
];

/// Scopes that own the whole keyboard while open: global bindings other
/// than quitting do not reach through them.
pub(crate) fn is_modal(scope: Scope) -> bool {
    matches!(
        scope,
        Scope::Confirm
            | Scope::Unsaved
            | Scope::Recovery
            | Scope::Trust
            | Scope::Help
            | Scope::RequestPreview
            | Scope::Search
            | Scope::Approval
            | Scope::ApprovalReason
            | Scope::HunkReview
            | Scope::Picker
            | Scope::Prompt
            | Scope::Conflict
            | Scope::HistorySelect
    )
}

/// Finds the action for a key, innermost scope first. `scopes` is ordered
/// from innermost (an overlay) to the focused pane; Global is implied.
pub(crate) fn lookup(scopes: &[Scope], event: &KeyEvent) -> Option<Action> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let key = KeyCombo::from_event(event);
    let find = |scope: Scope| {
        BINDINGS
            .iter()
            .find(|b| b.scope == scope && b.key == key)
            .map(|b| b.action)
    };
    for &scope in scopes {
        if let Some(action) = find(scope) {
            return Some(action);
        }
        if is_modal(scope) {
            // Only the emergency exits stay reachable under a modal overlay,
            // and Ctrl+C: a cell waiting on an approval can be interrupted.
            return find(Scope::Global)
                .filter(|a| matches!(a, Action::Quit | Action::Suspend | Action::Interrupt));
        }
    }
    find(Scope::Global)
}

/// Bindings to show in the status bar for the given scope (plus global ones).
pub(crate) fn hints(scope: Scope) -> impl Iterator<Item = &'static Binding> {
    // The palette is not modal (typing goes on), but while it is open its
    // keys are the ones worth showing.
    let modal = is_modal(scope) || matches!(scope, Scope::SlashPalette | Scope::MentionList);
    BINDINGS
        .iter()
        .filter(move |b| b.hint && (b.scope == scope || (!modal && b.scope == Scope::Global)))
}

/// The rows of one scope's help, in table order: one per action, with
/// every key bound to it. F1's overlay and `docs/keys.md` both list these.
pub(crate) fn rows_in(scope: Scope) -> Vec<(Action, Vec<KeyCombo>)> {
    let mut rows: Vec<(Action, Vec<KeyCombo>)> = Vec::new();
    for binding in BINDINGS.iter().filter(|b| b.scope == scope) {
        match rows.iter_mut().find(|(a, _)| *a == binding.action) {
            Some((_, keys)) => keys.push(binding.key),
            None => rows.push((binding.action, vec![binding.key])),
        }
    }
    rows
}

/// The generated part of `docs/keys.md`: every scope's rows as a Markdown
/// table, in F1's order, so the file cannot drift from what the keys do
/// (`tests/docs.rs` compares them).
pub fn markdown() -> String {
    // A `|` would end a table cell.
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = String::new();
    for section in help_sections() {
        out.push_str(&format!(
            "\n### {}\n\n| key | does |\n|---|---|\n",
            section.title
        ));
        for (keys, does) in section.rows {
            let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
            out.push_str(&format!(
                "| {} | {} |\n",
                cell(&keys.join(" / ")),
                cell(does)
            ));
        }
    }
    out.push_str("\n### Mouse\n\n");
    for note in MOUSE_NOTES {
        out.push_str(&format!("- {note}\n"));
    }
    out
}

/// What the mouse does, for F1 and `docs/keys.md` (no key table has it).
pub(crate) const MOUSE_NOTES: &[&str] = &[
    "Click a pane to focus it; the wheel scrolls the pane under the pointer.",
    "Drag in the conversation to select its text: it is copied on release (OSC 52); \
     Alt+C copies it again, Alt+K the code block it is in.",
    "Shift+drag is the terminal's own selection: it crosses panes and borders.",
    "Drag the border between the conversation and the file view to move it.",
];

/// One titled table of the help.
pub(crate) struct HelpSection {
    pub title: &'static str,
    /// Keys and what they do, one row per action.
    pub rows: Vec<(Vec<KeyCombo>, &'static str)>,
}

/// Every key the workbench handles, as F1 and `docs/keys.md` list them:
/// each scope's bindings (`rows_in`), and after the conversation's, the
/// composer's own keys ([`COMPOSER`]).
pub(crate) fn help_sections() -> Vec<HelpSection> {
    let mut sections = Vec::new();
    for scope in Scope::ALL {
        let rows = rows_in(scope);
        if !rows.is_empty() {
            sections.push(HelpSection {
                title: scope.label(),
                rows: rows
                    .into_iter()
                    .map(|(action, keys)| (keys, action.describe()))
                    .collect(),
            });
        }
        if scope == Scope::Conversation {
            sections.push(HelpSection {
                title: "Composer (typing a message)",
                rows: COMPOSER
                    .iter()
                    .map(|row| (row.keys.to_vec(), row.does))
                    .collect(),
            });
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    /// Every action the workbench has must be reachable from some key.
    #[test]
    fn every_action_is_bound() {
        let bound: HashSet<Action> = BINDINGS.iter().map(|b| b.action).collect();
        let all = [
            Action::CopyCodeBlock,
            Action::StartTextSelection,
            Action::HistoryCursor(Motion::Up),
            Action::HistoryExtend(Motion::Up),
            Action::ToggleSelectionAnchor,
            Action::CopyTextSelection,
            Action::LeaveTextSelection,
            Action::Quit,
            Action::ShowHelp,
            Action::ShowSnapshot,
            Action::CloseOverlay,
            Action::FocusNext,
            Action::FocusPrev,
            Action::Focus(PaneId::Conversation),
            Action::Focus(PaneId::FileView),
            Action::Focus(PaneId::Variables),
            Action::Focus(PaneId::Diagnostics),
            Action::OpenSearch,
            Action::ToggleCells,
            Action::Interrupt,
            Action::NextDiagnostic,
            Action::PrevDiagnostic,
            Action::JumpToDiagnostic,
            Action::CancelTurn,
            Action::Suspend,
            Action::Redraw,
            Action::ZoomPane,
            Action::WidenConversation,
            Action::NarrowConversation,
            Action::SendMessage,
            Action::InsertNewline,
            Action::ScrollUp,
            Action::ScrollDown,
            Action::PageUp,
            Action::PageDown,
            Action::ScrollTop,
            Action::ScrollBottom,
            Action::SearchNextScope,
            Action::SearchOpen,
            Action::SearchPin,
            Action::RemovePin,
            Action::ExpandPastes,
            Action::SearchPrevScope,
            Action::Confirm,
            Action::Deny,
            Action::ApproveOnce,
            Action::ApproveAlways,
            Action::StartDenial,
            Action::DenyNow,
            Action::SendDenial,
            Action::CancelDenial,
            Action::AcceptHunk,
            Action::RejectHunk,
            Action::AcceptRestHunks,
            Action::RejectRestHunks,
            Action::PreviousHunk,
            Action::PaletteNext,
            Action::PalettePrevious,
            Action::PaletteComplete,
            Action::PaletteAccept,
            Action::PaletteClose,
            Action::CycleApprovalMode,
            Action::SortVariables,
            Action::FilterVariables,
            Action::ShowVariable,
            Action::ClearFilter,
            Action::EndFilter,
            Action::OpenPicker,
            Action::Accept,
            Action::FindPrev,
            Action::Save,
            Action::SaveAll,
            Action::CloseTab,
            Action::NextTab,
            Action::PrevTab,
            Action::Move(Motion::WordLeft),
            Action::Select(Motion::DocEnd),
            Action::Newline,
            Action::Indent,
            Action::DeleteBack,
            Action::DeleteForward,
            Action::DeleteWordBack,
            Action::DeleteWordForward,
            Action::SelectAll,
            Action::Copy,
            Action::Cut,
            Action::Paste,
            Action::Undo,
            Action::Redo,
            Action::GoToLine,
            Action::FindInFile,
            Action::ResolveConflict,
            Action::KeepMine,
            Action::LoadTheirs,
            Action::ShowDiff,
        ];
        for action in all {
            assert!(bound.contains(&action), "{action:?} has no key");
            assert!(!action.describe().is_empty());
        }
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        let mut seen = HashSet::new();
        for b in BINDINGS {
            assert!(
                seen.insert((b.scope, b.key)),
                "{} is bound twice in {:?}",
                b.key,
                b.scope
            );
        }
    }

    /// A pane may override a global key (Tab in the search overlay), but the
    /// ways out — quit and help via F1 — must work from every pane.
    #[test]
    fn exits_are_never_shadowed_by_a_pane() {
        for pane in PaneId::ALL {
            let scopes = [pane.scope()];
            assert_eq!(lookup(&scopes, &key(Char('q'), CTRL)), Some(Action::Quit));
            assert_eq!(lookup(&scopes, &key(F(1), NONE)), Some(Action::ShowHelp));
        }
        for overlay in [Scope::Search, Scope::Help, Scope::Confirm] {
            let scopes = [overlay, Scope::Conversation];
            assert_eq!(lookup(&scopes, &key(Char('q'), CTRL)), Some(Action::Quit));
        }
    }

    #[test]
    fn scopes_resolve_innermost_first() {
        let tab = key(KeyCode::Tab, NONE);
        assert_eq!(lookup(&[Scope::List], &tab), Some(Action::FocusNext));
        assert_eq!(
            lookup(&[Scope::Search, Scope::List], &tab),
            Some(Action::SearchNextScope)
        );
        // A modal overlay swallows global focus keys.
        assert_eq!(lookup(&[Scope::Help, Scope::List], &tab), None);
    }

    #[test]
    fn question_mark_opens_help_only_outside_text_input() {
        let q = key(Char('?'), SHIFT);
        assert_eq!(lookup(&[Scope::List], &q), Some(Action::ShowHelp));
        assert_eq!(lookup(&[Scope::Conversation], &q), None);
    }

    #[test]
    fn terminal_spellings_are_normalised() {
        let back_tab = key(KeyCode::BackTab, SHIFT);
        assert_eq!(lookup(&[Scope::List], &back_tab), Some(Action::FocusPrev));
        let ctrl_upper_q = key(Char('Q'), CTRL | SHIFT);
        assert_eq!(
            KeyCombo::from_event(&ctrl_upper_q).code,
            Char('q'),
            "Ctrl+Shift+Q should still read as the letter q"
        );
        let release = KeyEvent::new_with_kind(Char('q'), CTRL, KeyEventKind::Release);
        assert_eq!(lookup(&[Scope::List], &release), None);
    }

    #[test]
    fn shift_enter_and_alt_enter_insert_newlines() {
        let scopes = [Scope::Conversation];
        assert_eq!(
            lookup(&scopes, &key(KeyCode::Enter, NONE)),
            Some(Action::SendMessage)
        );
        assert_eq!(
            lookup(&scopes, &key(KeyCode::Enter, SHIFT)),
            Some(Action::InsertNewline)
        );
        assert_eq!(
            lookup(&scopes, &key(KeyCode::Enter, ALT)),
            Some(Action::InsertNewline)
        );
    }

    #[test]
    fn key_names_read_well() {
        assert_eq!(KeyCombo::new(Char('q'), CTRL).to_string(), "Ctrl+Q");
        assert_eq!(
            KeyCombo::new(KeyCode::Enter, SHIFT).to_string(),
            "Shift+Enter"
        );
        assert_eq!(KeyCombo::new(Char('1'), ALT).to_string(), "Alt+1");
        assert_eq!(
            KeyCombo::new(KeyCode::BackTab, NONE).to_string(),
            "Shift+Tab"
        );
    }

    #[test]
    fn hints_come_from_the_table() {
        let conversation: Vec<_> = hints(Scope::Conversation).map(|b| b.action).collect();
        assert!(conversation.contains(&Action::SendMessage));
        assert!(conversation.contains(&Action::Quit));
        let help: Vec<_> = hints(Scope::Help).map(|b| b.action).collect();
        assert_eq!(help, vec![Action::CloseOverlay]);
    }
}

//! `AppState`: everything the screen shows, owned by the UI loop alone.
//! Background tasks never touch it; they send [`super::AppEvent`]s.

use std::path::PathBuf;

use ratatui::layout::Size;
use tui_textarea::TextArea;

use std::sync::Arc;

use super::agent::AgentState;
use super::approvals::{ApprovalBroker, ApprovalQueue};
use super::kernel::KernelClient;
use super::safety::{KernelLauncher, SafetyView};
use super::snapshot::SnapshotView;
use super::variables::VariablesView;
use crate::config::Settings;
use crate::diagnostics::{DiagnosticsService, DiagnosticsStore};
use crate::editor::Highlighter;
use crate::keymap::{PaneId, Scope};

/// Who said a message in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    User,
    Assistant,
    Tool,
    /// A message from hello-tui itself (configuration hints, errors).
    Notice,
}

impl Speaker {
    pub fn label(self) -> &'static str {
        match self {
            Speaker::User => "you",
            Speaker::Assistant => "assistant",
            Speaker::Tool => "tool",
            Speaker::Notice => "hello-tui",
        }
    }
}

/// One entry of the conversation pane: a view of a conversation message
/// (tied to it by `message`), a `%py` cell or a notice. Tool entries carry
/// the code cell that ran and its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneEntry {
    pub role: Speaker,
    pub text: String,
    pub cell: Option<CellView>,
    /// The conversation message this entry shows, once the conversation
    /// has stored it (`None` for notices, `%py` cells, and until then): how
    /// search hits find their entry.
    pub message: Option<crate::context::MessageId>,
}

impl PaneEntry {
    pub fn new(role: Speaker, text: impl Into<String>) -> Self {
        Self {
            role,
            text: text.into(),
            cell: None,
            message: None,
        }
    }

    /// A code cell that is about to run; `text` collects its output.
    pub fn cell(id: u64, code: impl Into<String>) -> Self {
        Self {
            role: Speaker::Tool,
            text: String::new(),
            cell: Some(CellView {
                id,
                code: code.into(),
                status: CellStatus::Running,
            }),
            message: None,
        }
    }
}

/// How a code cell ended (or that it is still running).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellStatus {
    Running,
    Succeeded { duration_ms: u64 },
    Failed { summary: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellView {
    /// The kernel service's cell id, so streamed output finds its cell.
    pub id: u64,
    pub code: String,
    pub status: CellStatus,
}

/// Where the history is scrolled to. Kept as a place in the transcript,
/// not as rows from the bottom, so a frame lays out only the entries it
/// shows (and the view stays put while new messages arrive below it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryScroll {
    /// The newest line is at the bottom, and new messages stay in view.
    #[default]
    Follow,
    /// The top row of the pane is row `row` of entry `entry`'s block (its
    /// separator, header and body).
    Anchored { entry: usize, row: usize },
}

/// The conversation history and how far it is scrolled.
#[derive(Debug, Default)]
pub struct ConversationState {
    pub messages: super::transcript::Transcript,
    /// Where the last frame was scrolled to; `ui::prepare` resolves the
    /// requests below into it, because only layout knows entry heights.
    pub scroll: HistoryScroll,
    /// Rows to scroll before the next frame (negative: back in history).
    pub scroll_request: isize,
    /// Code cells show everything (Ctrl+O) instead of their first and last
    /// lines.
    pub cells_expanded: bool,
    /// A search result to bring into view before the next frame.
    pub jump_to: Option<usize>,
    /// The message a search jump landed on, highlighted until the next key.
    pub flash: Option<usize>,
}

impl ConversationState {
    /// Scrolls by `rows` (negative: back in history) before the next frame.
    pub fn scroll_by(&mut self, rows: isize) {
        self.scroll_request = self.scroll_request.saturating_add(rows);
    }

    /// Shows the first message at the top.
    pub fn scroll_to_top(&mut self) {
        self.scroll = HistoryScroll::Anchored { entry: 0, row: 0 };
        self.scroll_request = 0;
        self.jump_to = None;
    }

    /// Shows the newest line and follows new messages.
    pub fn follow(&mut self) {
        self.scroll = HistoryScroll::Follow;
        self.scroll_request = 0;
        self.jump_to = None;
    }
}

/// One row of the variables inspector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableRow {
    pub name: String,
    pub type_name: String,
    pub summary: String,
    pub preview: String,
    /// Approximate size in bytes, when the kernel could tell.
    pub size: Option<u64>,
    /// Execution id of the cell that last changed it; compared with
    /// `AppState::last_exec_id` when drawing, because the variables refresh
    /// can arrive before the cell's result.
    pub changed_by: Option<u64>,
}

/// What the status bar and the inspector say about the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelView {
    NotStarted,
    Starting,
    Idle { python: String },
    Busy { python: String },
    Dead { reason: String },
}

impl KernelView {
    pub fn label(&self) -> String {
        match self {
            KernelView::NotStarted => "kernel not started".into(),
            KernelView::Starting => "kernel starting".into(),
            KernelView::Idle { python } => format!("python {python} idle"),
            KernelView::Busy { python } => format!("python {python} busy"),
            KernelView::Dead { reason } => format!("kernel dead: {reason}"),
        }
    }
}

pub use crate::diagnostics::Severity;

/// One row of the diagnostics list (derived from the diagnostics store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticRow {
    pub severity: Severity,
    /// Workspace-relative path, as shown.
    pub path: String,
    /// Where to jump.
    pub abs_path: PathBuf,
    /// 1-based, as shown to people.
    pub line: usize,
    pub column: usize,
    /// The message on one line: its parts (a server may send several
    /// lines, e.g. ruff's `help:`) joined by ` · `.
    pub message: String,
    pub source: Option<String>,
    /// The whole message as the server sent it, and the places it refers
    /// to (`path:line:col message`), for the detail view.
    pub detail: String,
    pub related: Vec<String>,
}

/// The variables inspector's state in one place: the kernel's variables
/// (from its listing), the selected row, and the sort order and filter.
#[derive(Debug, Default)]
pub struct VariablesPane {
    pub rows: Vec<VariableRow>,
    pub cursor: ListCursor,
    pub view: VariablesView,
}

/// The Diagnostics pane's state in one place: every diagnostic by file and
/// source (fed by the diagnostics service's events), the rows it shows, its
/// cursor, and the service with what it has sent the language servers.
#[derive(Default)]
pub struct DiagnosticsPane {
    pub store: DiagnosticsStore,
    /// The rows, grouped by file (active file first), rebuilt when the
    /// store changes.
    pub rows: Vec<DiagnosticRow>,
    pub cursor: ListCursor,
    /// `None` in tests without language servers.
    pub client: Option<DiagnosticsService>,
    /// Buffers the language servers have open, with a hash of the text they
    /// were last sent (to send `didChange` only when it changed).
    pub sent: std::collections::HashMap<PathBuf, u64>,
    /// The last service notice put in the conversation (not repeated).
    pub last_notice: Option<String>,
}

/// A scrollable list with a selected row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub selected: usize,
}

impl ListCursor {
    /// Moves by `delta` rows, clamped to `len` rows.
    pub fn move_by(&mut self, delta: isize, len: usize) {
        let last = len.saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last.max(0)) as usize;
    }
}

/// The search pane's scopes, switched with Tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchScope {
    Conversation,
    Variables,
    Files,
    Diagnostics,
}

impl SearchScope {
    pub const ALL: [SearchScope; 4] = [
        SearchScope::Conversation,
        SearchScope::Variables,
        SearchScope::Files,
        SearchScope::Diagnostics,
    ];

    pub fn label(self) -> &'static str {
        match self {
            SearchScope::Conversation => "conversation",
            SearchScope::Variables => "variables",
            SearchScope::Files => "files",
            SearchScope::Diagnostics => "diagnostics",
        }
    }

    pub fn cycle(self, forward: bool) -> Self {
        let all = Self::ALL;
        let i = all.iter().position(|s| *s == self).unwrap_or(0);
        let n = all.len();
        all[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchState {
    pub query: super::line_input::LineInput,
    pub scope: SearchScope,
    pub cursor: ListCursor,
    /// The files scope's fuzzy matches, computed off the UI thread.
    pub file_matches: FileMatches,
    /// What the pane lists: computed when the query or the scope changes
    /// (`app::search::recompute`), and once before the next frame when what
    /// they search changed (`stale`), never when drawn.
    pub results: super::search::PaneResults,
    /// What the results were computed from has changed since.
    pub stale: bool,
}

impl SearchState {
    pub fn new() -> Self {
        Self {
            query: super::line_input::LineInput::default(),
            scope: SearchScope::Conversation,
            cursor: ListCursor::default(),
            file_matches: FileMatches::default(),
            results: super::search::PaneResults::Prompt("type to search"),
            stale: false,
        }
    }
}

impl Default for SearchState {
    fn default() -> Self {
        Self::new()
    }
}

/// Paths matching the files scope's query. Matching 100 000 paths takes
/// milliseconds to tens of them, so it runs on the picker's worker thread
/// and the pane shows the newest answer (a keystroke behind at worst).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMatches {
    /// The newest query sent and whether `matches` answer it.
    pub request: crate::workspace::FuzzyRequest,
    pub matches: Vec<crate::workspace::PathMatch>,
}

/// A search result attached to the next prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub label: String,
    pub text: String,
}

/// A yes/no question that blocks the workbench until answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Question {
    QuitWithUnsavedEdits {
        count: usize,
    },
    /// Ctrl+W on a tab with unsaved edits.
    CloseDirtyTab {
        tab: usize,
    },
    /// "Load theirs" discards the buffer's edits.
    LoadTheirs {
        tab: usize,
    },
    /// Unsaved edits an earlier session of this workspace left behind,
    /// asked one file at a time (`index` of `count`, in
    /// `Editors::found_recoveries`): restore, keep for later, or discard.
    RestoreRecovery {
        index: usize,
        count: usize,
    },
}

impl Question {
    /// It appears on its own, not in answer to a key (the first recovery
    /// question at start): keys typed before it was drawn were meant for
    /// something else. The others follow the user's own key (Ctrl+Q,
    /// Ctrl+W, `t`, the answer to the previous file), so a key typed right
    /// after is meant for them.
    /// Its keys: yes/no, save/discard/cancel, or restore/later/discard.
    pub fn scope(self) -> Scope {
        match self {
            Question::QuitWithUnsavedEdits { .. } | Question::CloseDirtyTab { .. } => {
                Scope::Unsaved
            }
            Question::RestoreRecovery { .. } => Scope::Recovery,
            Question::LoadTheirs { .. } => Scope::Confirm,
        }
    }

    pub fn interrupts(self) -> bool {
        matches!(self, Question::RestoreRecovery { index: 0, .. })
    }
}

/// F2's state: where it is scrolled, which form it shows, and what it shows
/// (computed before each frame while open, never when drawn).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPreview {
    pub scroll: usize,
    /// The request's `messages` as the JSON the HTTP body carries, instead
    /// of one readable block per message (Tab switches).
    pub json: bool,
    /// `Err` says why there is nothing to show (a turn holds the
    /// conversation).
    pub view: Result<RequestView, &'static str>,
}

impl RequestPreview {
    pub fn new() -> Self {
        Self {
            scroll: 0,
            json: false,
            view: Err("preparing the preview"),
        }
    }
}

impl Default for RequestPreview {
    fn default() -> Self {
        Self::new()
    }
}

/// The next request as F2 draws it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    /// `ctx 41% · 52k/128k`.
    pub gauge: String,
    /// At 80 % of the window or more.
    pub nearly_full: bool,
    /// The prompt budget and where the window size came from.
    pub budget: String,
    /// A compaction runs before this request goes out.
    pub compacts_first: bool,
    /// Each section of the prompt and its tokens.
    pub sections: Vec<(String, usize)>,
    /// The messages, readable or as JSON.
    pub text: String,
    /// Lines of `text` (the scroll limit).
    pub lines: usize,
}

/// What is drawn over the panes. Only one at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Overlay {
    Help {
        scroll: usize,
    },
    /// F2: the next request, exactly as it would be sent now.
    RequestPreview(RequestPreview),
    Search(SearchState),
    Confirm(Question),
    /// Enter on a variable: its full bounded preview, by name (it may be
    /// rebound or vanish while open).
    Variable {
        name: String,
        scroll: usize,
    },
    /// K on a problem: its whole message, source, code and related places
    /// (`index` into the diagnostics rows when opened).
    Problem {
        index: usize,
        scroll: usize,
    },
    /// Ctrl+P: fuzzy file picker.
    Picker(super::editors::PickerState),
    /// Ctrl+G go to line, Ctrl+F find in file.
    Prompt(super::editors::PromptState),
    /// Keep mine / load theirs / diff for the active tab.
    Conflict,
    /// The unified diff of disk and buffer (scrolls like help), opened
    /// from the conflict choices: closing it goes back to them (the next
    /// key is meant for them, not the file).
    Diff {
        text: String,
        scroll: usize,
    },
}

impl Overlay {
    /// What the status bar calls the overlay that has the keyboard.
    pub fn label(&self) -> &'static str {
        match self {
            Overlay::Help { .. } => "Help",
            Overlay::RequestPreview(_) => "Next request",
            Overlay::Search(_) => "Search",
            Overlay::Confirm(_) => "Confirm",
            Overlay::Variable { .. } => "Variable",
            Overlay::Problem { .. } => "Problem",
            Overlay::Picker(_) => "Open file",
            Overlay::Prompt(p) => p.kind.label(),
            Overlay::Conflict => "Changed on disk",
            Overlay::Diff { .. } => "Diff",
        }
    }

    pub fn scope(&self) -> Scope {
        match self {
            Overlay::Help { .. } => Scope::Help,
            Overlay::RequestPreview(_) => Scope::RequestPreview,
            Overlay::Search(_) => Scope::Search,
            Overlay::Confirm(question) => question.scope(),
            Overlay::Variable { .. } | Overlay::Problem { .. } => Scope::Help,
            Overlay::Picker(_) => Scope::Picker,
            Overlay::Prompt(_) => Scope::Prompt,
            Overlay::Conflict => Scope::Conflict,
            Overlay::Diff { .. } => Scope::Help,
        }
    }
}

/// The whole state of the workbench.
pub struct AppState {
    pub workspace_root: PathBuf,
    pub workspace_name: String,
    pub settings: Settings,
    pub focus: PaneId,
    pub overlay: Option<Overlay>,
    pub conversation: ConversationState,
    pub composer: TextArea<'static>,
    pub kernel: KernelView,
    /// Queues cells on the kernel service (`None` in tests without one).
    pub kernel_client: Option<KernelClient>,
    /// Execution id of the last finished cell, to mark what it changed.
    pub last_exec_id: Option<u64>,
    /// The variables inspector.
    pub variables: VariablesPane,
    /// The Diagnostics pane and the service feeding it.
    pub diagnostics: DiagnosticsPane,
    /// The running or finished `#text` search of file contents.
    pub content_search: Option<super::search::ContentSearch>,
    /// Search results pinned to the next prompt (shown above the composer).
    pub pins: Vec<Pin>,
    /// A transient line for the status bar (language server states, notices).
    pub status_notice: Option<String>,
    /// The latest snapshot of the scene (built in the background).
    pub snapshot: Option<SnapshotView>,
    /// Syntax highlighting for the file view and code in the conversation
    /// (a read-only resource; `None` draws code plain, as with `NO_COLOR`).
    pub highlighter: Option<Arc<Highlighter>>,
    /// Approval mode, sandbox status and whether the kernel is confined.
    pub safety: SafetyView,
    /// Questions from model-written code, shown one at a time over
    /// everything else.
    pub approvals: ApprovalQueue,
    /// The yes/no question the last frame drew (`Overlay::Confirm`); until
    /// a question has been drawn it takes no keys.
    pub question_shown: Option<Question>,
    /// Asks the user on behalf of `shell.run` and the agent's cells
    /// (`None` in tests without one).
    pub approval_broker: Option<ApprovalBroker>,
    /// Starts a new kernel when the mode crosses `full`.
    pub kernel_launcher: Option<KernelLauncher>,
    /// The model, the running turn, the shared conversation store.
    pub agent: AgentState,
    /// Open files (tabs), clipboard, recovery, watcher status.
    pub editors: super::editors::Editors,
    /// Workspace-relative paths for the picker, filled in the background.
    pub file_index: crate::workspace::FileIndex,
    /// Matches picker queries off the loop (`None` in tests: inline).
    pub picker_worker: Option<crate::workspace::FuzzyWorker>,
    /// Ids of queries sent to the picker worker, shared by the Ctrl+P picker
    /// and the search pane so an answer meant for one never shows in the other.
    pub fuzzy_queries: u64,
    /// Publishes the paths with unsaved edits to the kernel's `fs.write`.
    pub dirty_paths_tx: Option<tokio::sync::watch::Sender<crate::kernel::caps::DirtyPaths>>,
    /// The terminal size the last frame was laid out for (mouse hit-testing).
    pub size: Size,
    pub should_quit: bool,
}

impl AppState {
    pub fn new(workspace_root: PathBuf, settings: Settings) -> Self {
        let workspace_name = workspace_root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| workspace_root.display().to_string());
        let mut composer = TextArea::default();
        composer.set_placeholder_text("Ask the agent…");
        Self {
            workspace_root,
            workspace_name,
            settings,
            focus: PaneId::Conversation,
            overlay: None,
            conversation: ConversationState::default(),
            composer,
            kernel: KernelView::NotStarted,
            kernel_client: None,
            last_exec_id: None,
            variables: VariablesPane::default(),
            diagnostics: DiagnosticsPane::default(),
            status_notice: None,
            pins: Vec::new(),
            content_search: None,
            snapshot: None,
            highlighter: Highlighter::new(Highlighter::DEFAULT_DARK)
                .ok()
                .map(Arc::new),
            safety: SafetyView::default(),
            approvals: ApprovalQueue::default(),
            question_shown: None,
            approval_broker: None,
            kernel_launcher: None,
            agent: AgentState::default(),
            editors: super::editors::Editors::default(),
            file_index: crate::workspace::FileIndex::new(),
            picker_worker: None,
            fuzzy_queries: 0,
            dirty_paths_tx: None,
            size: Size::new(120, 40),
            should_quit: false,
        }
    }

    /// Scopes for key lookup, innermost first (the layer stack's).
    pub fn key_scopes(&self) -> Vec<Scope> {
        super::layers::scopes(self)
    }

    /// The scope whose hints the status bar shows.
    pub fn active_scope(&self) -> Scope {
        self.key_scopes()
            .first()
            .copied()
            .unwrap_or_else(|| self.focus.scope())
    }

    /// Uses the theme's syntax colours, re-using the loaded grammars (loading
    /// them again costs tens of milliseconds at start), then compiles the
    /// Python grammar on another thread while a session loads, so the first
    /// frame does not wait for it.
    pub fn prepare_highlighter(&mut self, syntax_theme: &str) {
        let themed = match self.highlighter.as_mut().and_then(Arc::get_mut) {
            Some(hl) => hl.set_theme(syntax_theme),
            None => Highlighter::new(syntax_theme).map(|hl| self.highlighter = Some(Arc::new(hl))),
        };
        if let Err(error) = themed {
            tracing::warn!(%error, "keeping the default syntax theme");
        }
        if let Some(hl) = self.highlighter.clone() {
            let warm = std::thread::Builder::new()
                .name("syntax-warm-up".into())
                .spawn(move || {
                    hl.highlight_snippet("python", "def f(x):\n    return x\n")
                        .len()
                });
            if let Err(error) = warm {
                tracing::warn!(%error, "no syntax warm-up thread");
            }
        }
    }

    /// A path as the user reads it: relative to the workspace when inside
    /// it, stripped of control characters.
    pub fn display_path(&self, path: &std::path::Path) -> String {
        let shown = path.strip_prefix(&self.workspace_root).unwrap_or(path);
        crate::sanitize::for_display(&shown.to_string_lossy()).into_owned()
    }

    /// The first diagnostic under the file view's cursor (the status bar
    /// shows it).
    pub fn diagnostic_under_cursor(&self) -> Option<&crate::diagnostics::Diagnostic> {
        let doc = self.editors.active()?;
        let (line, character) = doc.cursor();
        self.diagnostics
            .store
            .at(
                doc.path(),
                crate::diagnostics::Position::new(line, character),
            )
            .into_iter()
            .next()
    }

    /// Buffers with edits not yet on disk; quitting asks first when non-zero.
    pub fn unsaved_count(&self) -> usize {
        self.editors.tabs.iter().filter(|d| d.is_dirty()).count()
    }
}

//! `AppState`: everything the screen shows, owned by the UI loop alone.
//! Background tasks never touch it; they send [`super::AppEvent`]s.

use std::path::PathBuf;

use ratatui::layout::Size;

use std::sync::Arc;

use crate::component::Around;
use crate::config::Settings;
use crate::editor::Highlighter;
use crate::keymap::PaneId;
use crate::overlays::Overlay;
use crate::screen::layout::{LayoutChoice, PaneLayout};
use crate::ui::markdown::PlainCode;
use crate::workbench::{Question, Workbench};

/// The whole state of the terminal UI: the [`Workbench`] it shows, and
/// what only a screen has — focus, the overlay, the pane components and
/// the terminal's size.
pub struct AppState {
    /// The model: everything that exists without a terminal.
    pub workbench: Workbench,
    pub focus: PaneId,
    /// Questions from model-written code, shown one at a time over
    /// everything else.
    pub approvals: crate::overlays::approval::ApprovalQueue,
    /// The open overlays, components of `crate::overlays`: the top one has
    /// the keyboard.
    pub overlays: crate::overlays::stack::OverlayStack,
    /// The conversation pane: its scroll and the composer.
    pub conversation: crate::panes::conversation::ConversationState,
    /// The variables inspector.
    pub variables: crate::panes::variables::VariablesPane,
    /// The Diagnostics pane: its rows and cursor.
    pub diagnostics: crate::panes::diagnostics::DiagnosticsPane,
    /// Syntax highlighting for the file view and code in the conversation
    /// (a read-only resource; `None` draws code plain, as with `NO_COLOR`).
    pub highlighter: Option<Arc<Highlighter>>,
    /// The yes/no question the last frame drew (`Overlay::Confirm`); until
    /// a question has been drawn it takes no keys.
    pub question_shown: Option<Question>,
    /// The key being handled belongs to a burst of typing that began
    /// before the question on screen was drawn, so it must not answer it
    /// (set per key by the terminal loop, `tui::typing`).
    pub typing_through: bool,
    /// The terminal size the last frame was laid out for (mouse hit-testing).
    pub size: Size,
    /// Zoom and the split, as the user left them (kept per workspace).
    pub layout_choice: LayoutChoice,
    /// A drag of the border between the conversation and the right side
    /// is under way.
    pub dragging_split: bool,
    /// Ctrl+C interrupted the running cell then (`app::interrupt`): a
    /// second Ctrl+C a moment later stops a cell that ignores it.
    pub interrupted: Option<std::time::Instant>,
    /// What "a moment later" is measured by (tests move it forward).
    pub clock: crate::workbench::clock::Clock,
    pub should_quit: bool,
    /// What components asked for while handling an input, in order, not
    /// yet applied: `app::deliver` queues them, `app::update` applies them
    /// (`settle`) before it returns to the loop.
    pub(crate) pending_effects: Vec<crate::component::Effect>,
}

impl AppState {
    pub fn new(workspace_root: PathBuf, settings: Settings) -> Self {
        let history = crate::workbench::prompt_history::PromptHistory::load(&workspace_root);
        Self {
            workbench: Workbench::new(workspace_root, settings),
            focus: PaneId::Conversation,
            approvals: Default::default(),
            overlays: Default::default(),
            conversation: crate::panes::conversation::ConversationState::with_history(history),
            variables: Default::default(),
            diagnostics: Default::default(),
            highlighter: Highlighter::new(Highlighter::DEFAULT_DARK)
                .ok()
                .map(Arc::new),
            question_shown: None,
            typing_through: false,
            size: Size::new(120, 40),
            layout_choice: LayoutChoice::default(),
            dragging_split: false,
            interrupted: None,
            clock: crate::workbench::clock::Clock::default(),
            should_quit: false,
            pending_effects: Vec::new(),
        }
    }

    /// The overlay that has the keyboard (the top of the stack).
    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlays.top()
    }

    /// What the components read of everything around them.
    pub fn around(&self) -> Around<'_> {
        Around {
            workbench: &self.workbench,
            focus: self.focus,
            overlay_open: self.overlay().is_some(),
            screen: self.screen(),
            layout: self.layout(),
            variables: &self.variables.rows,
            diagnostics: &self.diagnostics.rows,
            // Syntax colours would defeat NO_COLOR.
            code: match &self.highlighter {
                Some(hl) if !self.workbench.settings().no_color => hl.as_ref(),
                _ => &PlainCode,
            },
        }
    }

    /// Where each pane is on the screen now.
    pub fn layout(&self) -> PaneLayout {
        crate::screen::layout::compute(
            self.screen(),
            self.focus,
            self.layout_choice,
            self.workbench.editors().active().is_some(),
        )
    }

    /// The composer's text as it stands.
    pub fn draft(&self) -> String {
        self.conversation.text()
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
                    crate::background::lower_this_thread();
                    hl.highlight_snippet("python", "def f(x):\n    return x\n")
                        .len()
                });
            if let Err(error) = warm {
                tracing::warn!(%error, "no syntax warm-up thread");
            }
        }
    }

    /// The first diagnostic under the file view's cursor (the status bar
    /// shows it).
    pub(crate) fn diagnostic_under_cursor(&self) -> Option<&crate::diagnostics::Diagnostic> {
        let doc = self.workbench.editors().active()?;
        let (line, character) = doc.cursor();
        self.workbench
            .diagnostic_sources()
            .store
            .at(
                doc.path(),
                crate::diagnostics::Position::new(line, character),
            )
            .into_iter()
            .next()
    }

    /// The pane `id` as a component: how layers ask it for its key scopes
    /// and how the frame paints it. (Input reaches it through
    /// `app::deliver::to_pane`, which takes it out of the state meanwhile.)
    pub fn pane(&self, id: crate::keymap::PaneId) -> &dyn crate::component::Component {
        use crate::keymap::PaneId;
        match id {
            PaneId::Conversation => &self.conversation,
            PaneId::FileView => self.workbench.editors(),
            PaneId::Variables => &self.variables,
            PaneId::Diagnostics => &self.diagnostics,
        }
    }

    /// The whole terminal, as the last resize reported it (layout and
    /// hit-testing start from it).
    pub fn screen(&self) -> ratatui::layout::Rect {
        ratatui::layout::Rect::new(0, 0, self.size.width, self.size.height)
    }

    /// Buffers with edits not yet on disk; quitting asks first when non-zero.
    pub fn unsaved_count(&self) -> usize {
        self.workbench
            .editors()
            .tabs
            .iter()
            .filter(|d| d.is_dirty())
            .count()
    }
}

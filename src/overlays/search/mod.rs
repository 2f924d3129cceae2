//! The search pane (Alt+5 / Ctrl+F outside a file): one query over
//! everything the agent can see, in four scopes switched with Tab. Results
//! are computed when the query or the scope changes, and once before the
//! next frame when what they search changed (`Input::SourcesChanged`), so a
//! burst of streamed output costs one search, not one per event. Drawing
//! only reads them. Fuzzy matching every workspace path and reading file
//! contents run on background threads; the pane shows their newest answer.

mod find;
mod view;

use ratatui::Frame;
use ratatui::layout::Rect;

pub use crate::component::SearchTarget;
pub use find::{ContentSearch, PaneResults, ResultRow};
pub use view::area;

use super::{Component, Ctx, Effect, Input, Outcome, View};
use crate::component::Around;
use crate::keymap::{Action, Scope};
use crate::ui::line_input::LineInput;
use crate::ui::list_cursor::ListCursor;
use crate::workbench::Pin;

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

    pub(crate) fn cycle(self, forward: bool) -> Self {
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

/// The next id a contents search gets (see `refresh_contents`).
static NEXT_CONTENT_SEARCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

#[derive(Debug, PartialEq, Eq)]
pub struct Search {
    pub query: LineInput,
    pub scope: SearchScope,
    pub cursor: ListCursor,
    /// The files scope's fuzzy matches, computed off the UI thread.
    pub file_matches: FileMatches,
    /// The running or finished `#text` search of file contents.
    pub content: Option<ContentSearch>,
    /// What the pane lists, computed from the state (never when drawn).
    pub results: PaneResults,
    /// What the results were computed from has changed since.
    pub stale: bool,
}

impl Search {
    /// An empty search in the conversation scope.
    pub fn new() -> Self {
        Self {
            query: LineInput::default(),
            scope: SearchScope::Conversation,
            cursor: ListCursor::default(),
            file_matches: FileMatches::default(),
            content: None,
            results: PaneResults::Prompt("type to search"),
            stale: false,
        }
    }

    /// The search pane as it opens: what an empty query shows now.
    pub fn open(around: Around<'_>) -> Self {
        let mut search = Self::new();
        search.refresh(around);
        search
    }

    /// The query or the scope changed: start the background work it needs
    /// (the files scope's fuzzy match, a `#text` contents search) and
    /// compute the rows.
    fn refresh(&mut self, around: Around<'_>) {
        self.refresh_contents(around);
        self.request_file_matches(around, false);
        self.recompute(around);
    }

    fn recompute(&mut self, around: Around<'_>) {
        self.results = find::find(around, self);
        self.stale = false;
        self.cursor.move_by(0, self.results.len());
    }

    /// Sends the files scope's query to the fuzzy worker (or, without one,
    /// matches inline). `again` resends an unchanged query.
    fn request_file_matches(&mut self, around: Around<'_>, again: bool) {
        let query = self.query.text().trim();
        if self.scope != SearchScope::Files || query.is_empty() || query.starts_with('#') {
            return;
        }
        if let Some(results) = self.file_matches.request.send(
            query,
            again,
            around.workbench.services().picker.as_ref(),
            around.workbench.file_index(),
            find::RESULT_LIMIT,
        ) {
            self.file_matches.matches = results.matches;
        }
    }

    /// Starts (or stops) the contents search: a files-scope query starting
    /// with `#` searches file contents; only the latest query's runs.
    fn refresh_contents(&mut self, around: Around<'_>) {
        let wanted = (self.scope == SearchScope::Files)
            .then(|| self.query.text().trim().strip_prefix('#'))
            .flatten()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(str::to_owned);
        if wanted.as_deref() == self.content.as_ref().map(|c| c.query.as_str()) {
            return;
        }
        // Ids are unique in the process: messages of a search that was
        // dropped (another query, or a search pane closed and opened again)
        // and still in flight are never taken for this one's. Dropping the
        // old search cancels it.
        let id = NEXT_CONTENT_SEARCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.content = wanted.and_then(|query| ContentSearch::start(around, query, id));
    }

    /// Before Enter acts: if the worker has not answered the query as typed
    /// (keys and Enter can arrive in one burst), match it here, once, so
    /// Enter never opens a result of an older query. Results are brought up
    /// to date too.
    fn settle(&mut self, around: Around<'_>) {
        if self.scope == SearchScope::Files
            && let Some(results) = self
                .file_matches
                .request
                .settle(around.workbench.file_index(), find::RESULT_LIMIT)
        {
            self.file_matches.matches = results.matches;
            self.cursor = ListCursor::default();
            self.stale = true;
        }
        if self.stale {
            self.recompute(around);
        }
    }

    fn selected_hit(&mut self, around: Around<'_>) -> Option<ResultRow> {
        self.settle(around);
        match &self.results {
            PaneResults::Hits(hits) => hits.get(self.cursor.selected).cloned(),
            _ => None,
        }
    }

    fn edited(&mut self, changed_text: bool, around: Around<'_>) {
        if changed_text {
            self.cursor = ListCursor::default();
            self.refresh(around);
        }
    }
}

impl Default for Search {
    fn default() -> Self {
        Self::new()
    }
}

impl Component for Search {
    fn label(&self) -> &'static str {
        "Search"
    }

    fn scope(&self) -> Scope {
        Scope::Search
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(Action::CloseOverlay) => ctx.push(Effect::Close),
            // Enter: close and bring the result into view.
            Input::Action(Action::SearchOpen) => match self.selected_hit(ctx.around) {
                Some(hit) => ctx.close_with(Effect::Reveal(hit.target)),
                None => return Outcome::Changed,
            },
            // Alt+P: attach the result to the next prompt (once).
            Input::Action(Action::SearchPin) => {
                if let Some(hit) = self.selected_hit(ctx.around)
                    && !ctx
                        .around
                        .workbench
                        .pins()
                        .iter()
                        .any(|p| p.text == hit.pin_text)
                {
                    ctx.push(Effect::Pin(Pin {
                        label: hit.label,
                        text: hit.pin_text,
                    }));
                }
            }
            Input::Action(action @ (Action::SearchNextScope | Action::SearchPrevScope)) => {
                self.scope = self.scope.cycle(action == Action::SearchNextScope);
                self.cursor = ListCursor::default();
                self.refresh(ctx.around);
            }
            Input::Scroll(delta) => self.cursor.move_by(delta, self.results.len()),
            Input::Key(key) => {
                let edit = self.query.input(key);
                self.edited(edit.text_changed(), ctx.around);
                return Outcome::from_changed(edit.any());
            }
            Input::Paste(text) => {
                let pasted = self.query.paste(text);
                self.edited(pasted, ctx.around);
                return Outcome::from_changed(pasted);
            }
            Input::FileMatches(results) => {
                if self.scope != SearchScope::Files || !self.file_matches.request.accept(results) {
                    return Outcome::Unchanged;
                }
                self.file_matches.matches = results.matches.clone();
                // The rows changed under the cursor: start from the best match.
                self.cursor = ListCursor::default();
                self.recompute(ctx.around);
            }
            Input::ContentHits(message) => {
                let taken = self.content.as_mut().is_some_and(|c| c.take(message));
                if !taken {
                    return Outcome::Unchanged;
                }
                self.recompute(ctx.around);
            }
            Input::IndexGrew => {
                self.request_file_matches(ctx.around, true);
                self.stale = true;
            }
            Input::SourcesChanged => {
                self.stale = true;
                return Outcome::Unchanged;
            }
            _ => return Outcome::Ignored,
        }
        Outcome::Changed
    }

    fn before_frame(&mut self, around: Around<'_>) {
        if self.stale {
            self.recompute(around);
        }
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let theme = view.theme;
        view::render(self, theme, screen, frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every contents search gets its own id, also across search panes:
    /// a closed pane's search still in flight is never taken for a new
    /// pane's (its ids used to start at 1 each time).
    #[test]
    fn contents_searches_never_share_an_id() {
        let workspace = tempfile::tempdir().unwrap();
        let mut workbench = crate::workbench::Workbench::new(
            workspace.path().to_path_buf(),
            crate::config::Settings::defaults(),
        );
        let (events, _rx) = crate::workbench::event::channel();
        workbench.agent_mut().events = Some(events);
        let around = Around {
            workbench: &workbench,
            focus: crate::keymap::PaneId::Conversation,
            overlay_open: true,
            screen: Rect::new(0, 0, 120, 40),
            layout: crate::screen::layout::PaneLayout::default(),
            variables: &[],
            diagnostics: &[],
            code: &crate::ui::markdown::PlainCode,
        };
        let mut ids = Vec::new();
        for query in ["#foo", "#bar"] {
            let mut search = Search::new();
            search.scope = SearchScope::Files;
            assert!(search.query.paste(query));
            search.refresh(around);
            ids.push(search.content.as_ref().map(|c| c.id));
        }
        assert!(
            ids[0].is_some() && ids[1].is_some(),
            "both searches started: {ids:?}"
        );
        assert_ne!(ids[0], ids[1]);
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

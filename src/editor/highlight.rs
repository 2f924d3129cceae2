//! Syntax highlighting with syntect, incremental and bounded per frame.
//!
//! `Highlighter` holds what is expensive and shared (syntax definitions,
//! theme). Each document owns a `HighlightCache`: parse-state checkpoints
//! every `CHECKPOINT_STRIDE` lines, and a window of styled lines around the
//! viewport that also remembers the state before each line. A frame
//! highlights only what is visible, continuing from the window or from the
//! checkpoint at the window's first line, and stops after
//! `max_lines_per_frame` lines or `max_time_per_frame`; the rest renders
//! plain until the next frame (`needs_more_work`). When that checkpoint is
//! not known yet, the sequential pass that finds it runs on its own thread
//! (`highlight_pass`) and the frame does no parsing beyond the approximate
//! colours below. An edit invalidates from
//! the edited line; re-highlighting resumes at that line, and when the
//! state after a re-highlighted line equals the old state before the next
//! unedited line, everything after it is valid again (the state converged):
//! a keystroke usually re-parses one line, never the rest of the file.
//! After a jump far from any cached state, the viewport is highlighted at
//! once from an approximate start `APPROX_CONTEXT` lines above it (a fresh
//! parse state, right for nearly all code); the exact pass keeps going
//! from the nearest checkpoint in the background and replaces the
//! approximate colours when it arrives (it wakes the app for that frame:
//! no frames are drawn while it runs). An edit above the pass's target
//! cancels it; the next frame starts a new one from the last checkpoint
//! still valid, so only what follows the edit is parsed again.

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter as ThemeHighlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use two_face::theme::LazyThemeSet;

use ropey::Rope;

use super::document::line_text;
use super::error::EditorError;
use super::highlight_pass::{Arrived, Pass, Wake};

/// Lines between parse-state checkpoints.
pub const CHECKPOINT_STRIDE: usize = 128;
/// Lines parsed above the viewport from a fresh state when the exact pass
/// is far away: enough to close most constructs that began above.
pub(crate) const APPROX_CONTEXT: usize = 64;
/// Lines longer than this render plain and are not parsed.
pub const MAX_HIGHLIGHT_LINE_BYTES: usize = 16 * 1024;
/// Default caps on highlighting work per frame (whichever comes first).
/// syntect parses a few thousand lines per second on this machine's class
/// of CPU (see `benches/editor.rs`), so time is the cap that matters.
pub(crate) const DEFAULT_LINES_PER_FRAME: usize = 2000;
pub(crate) const DEFAULT_TIME_PER_FRAME: Duration = Duration::from_millis(12);

/// Shared syntax definitions and the active theme. Load once per app.
pub struct Highlighter {
    /// Shared with background passes (`highlight_pass`).
    syntaxes: Arc<SyntaxSet>,
    theme: Arc<Theme>,
    theme_name: String,
    /// Called by a background pass that reached the view, so the app draws
    /// it then instead of polling with frames for the pass's duration.
    /// Unset (tests, headless), frames keep coming while a pass runs.
    wake: OnceLock<Wake>,
}

impl Highlighter {
    pub const DEFAULT_DARK: &'static str = "base16-ocean.dark";
    #[cfg(test)]
    pub(crate) const DEFAULT_LIGHT: &'static str = "InspiredGitHub";

    /// Load syntaxes (syntect defaults plus bat's extras such as TOML and
    /// TypeScript) and the named theme.
    pub fn new(theme_name: &str) -> Result<Self, EditorError> {
        Ok(Self {
            syntaxes: Arc::new(two_face::syntax::extra_newlines()),
            theme: Arc::new(load_theme(theme_name)?),
            theme_name: theme_name.to_string(),
            wake: OnceLock::new(),
        })
    }

    /// Set once by the app: how a finished background pass asks for a
    /// frame. Later calls change nothing.
    pub(crate) fn wake_when_a_pass_is_done(&self, wake: impl Fn() + Send + Sync + 'static) {
        let _ = self.wake.set(Arc::new(wake));
    }

    /// Switch theme; documents re-highlight on their next frame.
    pub(crate) fn set_theme(&mut self, theme_name: &str) -> Result<(), EditorError> {
        self.theme = Arc::new(load_theme(theme_name)?);
        self.theme_name = theme_name.to_string();
        Ok(())
    }

    /// Every theme name `new` accepts.
    pub(crate) fn theme_names() -> Vec<String> {
        let mut names: Vec<String> = ThemeSet::load_defaults().themes.into_keys().collect();
        let extra: LazyThemeSet = two_face::theme::extra().into();
        names.extend(extra.theme_names().map(str::to_string));
        names.sort();
        names.dedup();
        names
    }

    /// The syntax for a file: by extension or file name, then by first
    /// line (shebang, modelines), else plain text.
    pub(crate) fn syntax_for(&self, path: &Path, first_line: &str) -> &SyntaxReference {
        let by_name = |s: &str| self.syntaxes.find_syntax_by_extension(s);
        path.extension()
            .and_then(|e| by_name(&e.to_string_lossy()))
            .or_else(|| path.file_name().and_then(|n| by_name(&n.to_string_lossy())))
            .or_else(|| self.syntaxes.find_syntax_by_first_line(first_line))
            .unwrap_or_else(|| self.syntaxes.find_syntax_plain_text())
    }
}

impl Highlighter {
    /// Highlights a short snippet in one pass — a code block in a message,
    /// a cell's code — with the syntax a fence token names (`python`, `ts`,
    /// `rust`); unknown tokens are plain text. Each entry pairs a line with
    /// its styled byte ranges.
    pub(crate) fn highlight_snippet<'c>(
        &self,
        language: &str,
        code: &'c str,
    ) -> Vec<(&'c str, StyledLine)> {
        let syntax = self
            .syntaxes
            .find_syntax_by_token(language)
            .unwrap_or_else(|| self.syntaxes.find_syntax_plain_text());
        let theme = ThemeHighlighter::new(&self.theme);
        let mut state = State {
            parse: ParseState::new(syntax),
            highlight: HighlightState::new(&theme, ScopeStack::new()),
        };
        let mut buf = String::new();
        code.lines()
            .map(|line| {
                (
                    line,
                    highlight_str(&self.syntaxes, &theme, &mut state, line, &mut buf),
                )
            })
            .collect()
    }
}

fn load_theme(name: &str) -> Result<Theme, EditorError> {
    let extra: LazyThemeSet = two_face::theme::extra().into();
    if let Some(theme) = extra.get(name) {
        return Ok(theme.clone());
    }
    let mut defaults = ThemeSet::load_defaults();
    defaults
        .themes
        .remove(name)
        .ok_or_else(|| EditorError::UnknownTheme {
            name: name.to_string(),
            available: Highlighter::theme_names().join(", "),
        })
}

/// Lines to highlight: the document's rope (and plain lines in tests).
pub(crate) trait LineSource {
    fn line_count(&self) -> usize;
    /// Bytes of line `n`, without its line break.
    fn line_bytes(&self, n: usize) -> usize;
    /// Line `n` without its line break.
    fn line(&self, n: usize) -> Cow<'_, str>;
    /// The same lines for a background pass to own.
    fn snapshot(&self) -> Rope;
}

impl LineSource for Rope {
    fn line_count(&self) -> usize {
        self.len_lines()
    }

    fn line_bytes(&self, n: usize) -> usize {
        line_text(self, n).len_bytes()
    }

    fn line(&self, n: usize) -> Cow<'_, str> {
        line_text(self, n).into()
    }

    /// A clone shares the rope's chunks: O(1), whatever the size.
    fn snapshot(&self) -> Rope {
        self.clone()
    }
}

impl LineSource for [String] {
    fn line_count(&self) -> usize {
        self.len()
    }

    fn line_bytes(&self, n: usize) -> usize {
        self[n].len()
    }

    fn line(&self, n: usize) -> Cow<'_, str> {
        Cow::Borrowed(&self[n])
    }

    fn snapshot(&self) -> Rope {
        Rope::from(self.join("\n"))
    }
}

/// Styled byte ranges of one line; empty means "draw plain".
pub(crate) type StyledLine = Vec<(Style, Range<usize>)>;

#[derive(Clone, PartialEq, Eq)]
pub(super) struct State {
    parse: ParseState,
    highlight: HighlightState,
}

/// A highlighted line of the window and the state before it, so an edit
/// can resume exactly at the edited line.
struct WindowLine {
    before: State,
    styled: StyledLine,
}

/// The view's lines coloured from an approximate start, each with the
/// state before it: an edit re-colours from the edited line until the
/// state meets the old one again (usually that line alone), instead of
/// parsing `APPROX_CONTEXT` lines and the view again at every key — that
/// took the UI thread 5–7 ms a key until the exact pass arrived
/// (`cargo bench --bench echo`).
struct Approx {
    start: usize,
    lines: Vec<WindowLine>,
    /// Leading lines still right; the next one's `before` is still valid.
    valid: usize,
    /// Highest edited line: a stale line past it that starts in the same
    /// state as before is right again, and so is the rest.
    edit_max: Option<usize>,
    /// The state after the last line, to extend them downwards.
    end_state: Option<State>,
}

impl Approx {
    /// The state before the first stale line (or the line after them).
    fn resume_state(&self) -> Option<State> {
        match self.lines.get(self.valid) {
            Some(stale) => Some(stale.before.clone()),
            None => self.end_state.clone(),
        }
    }
}

/// Per-document highlight state. Lives inside `Document`.
pub(crate) struct HighlightCache {
    syntax_name: Option<String>,
    theme_name: String,
    /// `checkpoints[k]` is the state before line `k * CHECKPOINT_STRIDE`.
    checkpoints: Vec<State>,
    /// Leading checkpoints known valid; later ones are stale.
    valid: usize,
    /// Highest edited line since the stale checkpoints were recorded; a
    /// stale checkpoint past it with an equal state proves convergence.
    /// None when stale checkpoints cannot be reused (line count changed).
    stale_edit_max: Option<usize>,
    /// Lines `window_start..` highlighted around the viewport.
    window_start: usize,
    window: Vec<WindowLine>,
    /// Leading window lines known valid; the next one still has a valid
    /// `before` state (an edit at line L leaves the state before L intact).
    window_valid: usize,
    /// Like `stale_edit_max`, for stale window lines.
    window_edit_max: Option<usize>,
    /// State after the last window line, to extend the window downwards.
    window_end_state: Option<State>,
    /// The exact pass towards the checkpoint at `window_start`, running
    /// on its own thread while that checkpoint is not known.
    pass: Option<Pass>,
    /// Lines highlighted from an approximate start (`APPROX_CONTEXT` above
    /// the view) while the exact pass has not reached them. Shown only
    /// where the window has nothing exact.
    approx: Option<Approx>,
    needs_more: bool,
    pub max_lines_per_frame: usize,
    pub max_time_per_frame: Duration,
}

impl Default for HighlightCache {
    fn default() -> Self {
        Self {
            syntax_name: None,
            theme_name: String::new(),
            checkpoints: Vec::new(),
            valid: 0,
            stale_edit_max: None,
            window_start: 0,
            window: Vec::new(),
            window_valid: 0,
            window_edit_max: None,
            window_end_state: None,
            pass: None,
            approx: None,
            needs_more: false,
            max_lines_per_frame: DEFAULT_LINES_PER_FRAME,
            max_time_per_frame: DEFAULT_TIME_PER_FRAME,
        }
    }
}

impl HighlightCache {
    /// An empty cache with the same work budget (after a reload).
    pub fn cleared(&self) -> Self {
        Self {
            max_lines_per_frame: self.max_lines_per_frame,
            max_time_per_frame: self.max_time_per_frame,
            ..Self::default()
        }
    }

    pub(crate) fn syntax_name(&self) -> Option<&str> {
        self.syntax_name.as_deref()
    }

    /// The last frame stopped early, or the exact pass is running in the
    /// background with no wake set: schedule another frame. (With a wake,
    /// the pass asks for the frame itself when it reaches the view.)
    pub fn needs_more_work(&self) -> bool {
        self.needs_more
    }

    /// Waits for the background pass to end and records what it found;
    /// the next `prepare` then starts from its last checkpoint. For tests
    /// and measurements that need the exact colours deterministically; the
    /// UI never waits.
    pub(crate) fn finish_pass(&mut self) {
        if let Some(pass) = self.pass.take() {
            for (k, state) in pass.wait() {
                self.record_checkpoint(k, &state);
            }
        }
    }

    /// Records the checkpoints the background pass sent since the last
    /// frame; forgets the pass once it ended or its target is known.
    fn take_pass_results(&mut self) {
        let Some(pass) = self.pass.take() else {
            return;
        };
        let (arrived, running) = match pass.take() {
            Arrived::Running(arrived) => (arrived, true),
            Arrived::Finished(arrived) => (arrived, false),
        };
        for (k, state) in arrived {
            self.record_checkpoint(k, &state);
        }
        if running && self.valid * CHECKPOINT_STRIDE <= pass.target {
            self.pass = Some(pass);
        }
    }

    /// Styled ranges for `line` if it is highlighted and current: exact,
    /// or else approximate.
    pub fn line(&self, line: usize) -> Option<&StyledLine> {
        line.checked_sub(self.window_start)
            .filter(|i| *i < self.window_valid)
            .and_then(|i| self.window.get(i))
            .map(|w| &w.styled)
            .or_else(|| {
                let approx = self.approx.as_ref()?;
                let i = line.checked_sub(approx.start)?;
                approx
                    .lines
                    .get(i)
                    .filter(|_| i < approx.valid)
                    .map(|w| &w.styled)
            })
    }

    /// Text changed from line `from` on; `line_count_changed` when lines
    /// were inserted or removed (later states then belong to other lines).
    pub(crate) fn invalidate(&mut self, from: usize, line_count_changed: bool) {
        let max = |m: Option<usize>| Some(m.map_or(from, |m| m.max(from)));
        if let Some(approx) = &mut self.approx
            && from < approx.start + approx.lines.len()
        {
            match from.checked_sub(approx.start) {
                // Above it: the states it started from may have changed.
                None => self.approx = None,
                Some(i) => {
                    approx.valid = approx.valid.min(i);
                    if line_count_changed {
                        // Keep the edited line's entry: its `before` holds.
                        approx.lines.truncate(i + 1);
                        approx.edit_max = None;
                        approx.end_state = None;
                    } else {
                        approx.edit_max = Some(approx.edit_max.map_or(from, |m| m.max(from)));
                    }
                }
            }
        }
        if from < self.window_start {
            self.clear_window();
        } else if from - self.window_start < self.window.len() {
            self.window_valid = self.window_valid.min(from - self.window_start);
            if line_count_changed {
                // Keep the edited line's entry: its `before` is still valid.
                self.window.truncate(self.window_valid + 1);
                self.window_end_state = None;
                self.window_edit_max = None;
            } else {
                self.window_edit_max = max(self.window_edit_max);
            }
        }
        // Edits at or below the window end leave every window line and the
        // window end state (the state before the first line below) valid.
        // A pass parsing the old text up to an edited line is cancelled;
        // one that stops above the edit stays right.
        if self.pass.as_ref().is_some_and(|pass| from < pass.target) {
            self.pass = None;
        }
        self.valid = self.valid.min(from / CHECKPOINT_STRIDE + 1);
        if line_count_changed {
            self.checkpoints.truncate(self.valid);
            self.stale_edit_max = None;
        } else if self.checkpoints.len() > self.valid {
            self.stale_edit_max = max(self.stale_edit_max);
        }
    }

    fn clear_window(&mut self) {
        self.window.clear();
        self.window_start = 0;
        self.window_valid = 0;
        self.window_edit_max = None;
        self.window_end_state = None;
    }

    /// State before line `window_start + window_valid`, if known.
    fn resume_state(&self) -> Option<State> {
        match self.window.get(self.window_valid) {
            Some(w) => Some(w.before.clone()),
            None => self.window_end_state.clone(),
        }
    }

    /// Highlight lines `visible` (clamped to the text), parsing at most
    /// `max_lines_per_frame` lines and for at most `max_time_per_frame`.
    /// Returns `needs_more_work()`.
    pub fn prepare<L: LineSource + ?Sized>(
        &mut self,
        hl: &Highlighter,
        path: &Path,
        lines: &L,
        visible: Range<usize>,
    ) -> bool {
        let started = Instant::now();
        let end = visible.end.min(lines.line_count());
        let first = visible.start.min(end);
        if self.syntax_name.is_none() || self.theme_name != hl.theme_name {
            self.reset(hl, path, lines);
        }
        let Some(syntax) = self
            .syntax_name
            .as_deref()
            .and_then(|n| hl.syntaxes.find_syntax_by_name(n))
        else {
            self.needs_more = false;
            return false;
        };
        let theme = ThemeHighlighter::new(&hl.theme);
        self.take_pass_results();
        if self.checkpoints.is_empty() {
            self.checkpoints.push(State {
                parse: ParseState::new(syntax),
                highlight: HighlightState::new(&theme, ScopeStack::new()),
            });
            self.valid = 1;
        }
        let ws = self.window_start;
        if ws <= first && ws + self.window_valid >= end {
            self.needs_more = false;
            return false;
        }
        // Continue from the window when it reaches at least as far as the
        // checkpoint a restart would use, and ends at most a stride above
        // the view: a window far above (the view jumped) would make the
        // frame do the sequential pass that belongs to the background.
        let k = (first / CHECKPOINT_STRIDE).min(self.valid.saturating_sub(1));
        let window_end = ws + self.window_valid;
        let resume = (ws <= first
            && window_end >= k * CHECKPOINT_STRIDE
            && window_end + CHECKPOINT_STRIDE >= first)
            .then(|| self.resume_state())
            .flatten();
        let (mut line, mut state) = match resume {
            Some(state) => {
                // Keep the window small: drop lines far above the view.
                let drop = first
                    .saturating_sub(ws + CHECKPOINT_STRIDE)
                    .min(self.window_valid);
                if drop > 0 {
                    self.window.drain(..drop.min(self.window.len()));
                    self.window_start += drop;
                    self.window_valid -= drop;
                }
                (self.window_start + self.window_valid, state)
            }
            None => {
                self.clear_window();
                self.window_start = first - first % CHECKPOINT_STRIDE;
                (k * CHECKPOINT_STRIDE, self.checkpoints[k].clone())
            }
        };
        let mut text = String::new();
        // Far from the view: colour it now from an approximate start, the
        // exact pass catches up over the next frames.
        if end.saturating_sub(line) > APPROX_CONTEXT + (end - first)
            && !self.approx_covers(first, end)
        {
            self.highlight_approx(hl, syntax, &theme, lines, first..end, &mut text);
        }
        if line < self.window_start {
            // The checkpoint at the window is at least a stride away: the
            // sequential pass to it is not the frame's work.
            self.run_pass(hl, lines, line, state);
            self.needs_more = self.pass.is_some() && hl.wake.get().is_none();
            return self.needs_more;
        }
        let mut budget = self.max_lines_per_frame.max(1);
        while line < end && budget > 0 {
            if line % CHECKPOINT_STRIDE == 0 {
                self.record_checkpoint(line / CHECKPOINT_STRIDE, &state);
            }
            let before = (line >= self.window_start).then(|| state.clone());
            let styled = highlight_line(&hl.syntaxes, &theme, &mut state, lines, line, &mut text);
            line += 1;
            budget -= 1;
            if let Some(before) = before {
                let idx = line - 1 - self.window_start;
                let entry = WindowLine { before, styled };
                match self.window.get_mut(idx) {
                    Some(slot) => *slot = entry,
                    None => self.window.push(entry),
                }
                self.window_valid = idx + 1;
                if self.window_converged(line, &state) {
                    line = self.window_start + self.window_valid;
                    match &self.window_end_state {
                        Some(end_state) => state = end_state.clone(),
                        None => break,
                    }
                    continue;
                }
                if self.window_valid == self.window.len() {
                    self.window_end_state = Some(state.clone());
                }
            }
            if started.elapsed() >= self.max_time_per_frame {
                break;
            }
        }
        if self.window_valid < self.window.len() && line < end && line >= self.window_start {
            // Stopped inside stale lines: the state before the next one is
            // `state`, which stale entries do not know; drop them.
            self.window.truncate(self.window_valid);
            self.window_end_state = Some(state);
            self.window_edit_max = None;
        }
        self.needs_more = line < end;
        if !self.needs_more {
            self.approx = None;
        }
        self.needs_more
    }

    /// Keeps the background pass to `window_start` running, or starts one
    /// from `line` in `state` (the last valid checkpoint).
    fn run_pass<L: LineSource + ?Sized>(
        &mut self,
        hl: &Highlighter,
        lines: &L,
        line: usize,
        state: State,
    ) {
        let target = self.window_start;
        if self.pass.as_ref().is_some_and(|pass| pass.target == target) {
            return;
        }
        self.pass = Pass::start(
            Arc::clone(&hl.syntaxes),
            Arc::clone(&hl.theme),
            lines.snapshot(),
            line,
            state,
            target,
            hl.wake.get().cloned(),
        );
    }

    fn approx_covers(&self, first: usize, end: usize) -> bool {
        self.approx
            .as_ref()
            .is_some_and(|a| a.start <= first && a.start + a.valid >= end)
    }

    /// Highlight `visible` from a fresh state `APPROX_CONTEXT` lines above,
    /// or, when the approximate lines still start at or above the view,
    /// from the first stale one of them on.
    fn highlight_approx<L: LineSource + ?Sized>(
        &mut self,
        hl: &Highlighter,
        syntax: &SyntaxReference,
        theme: &ThemeHighlighter<'_>,
        lines: &L,
        visible: Range<usize>,
        text: &mut String,
    ) {
        let resumable = self.approx.as_ref().is_some_and(|a| {
            a.start <= visible.start
                && a.start + a.valid + CHECKPOINT_STRIDE >= visible.start
                && (a.valid < a.lines.len() || a.end_state.is_some())
        });
        let mut approx = match self.approx.take() {
            Some(approx) if resumable => approx,
            _ => {
                let from = visible.start.saturating_sub(APPROX_CONTEXT);
                let mut state = State {
                    parse: ParseState::new(syntax),
                    highlight: HighlightState::new(theme, ScopeStack::new()),
                };
                for line in from..visible.start {
                    highlight_line(&hl.syntaxes, theme, &mut state, lines, line, text);
                }
                Approx {
                    start: visible.start,
                    lines: Vec::new(),
                    valid: 0,
                    edit_max: None,
                    end_state: Some(state),
                }
            }
        };
        // Re-colour from the first stale line, until the view's end or
        // until a stale line past every edit starts as it did.
        let mut line = approx.start + approx.valid;
        let Some(mut state) = approx.resume_state() else {
            return;
        };
        let end = visible.end.min(lines.line_count());
        while line < end {
            let i = line - approx.start;
            let past_edits = approx.edit_max.is_some_and(|m| line > m);
            if past_edits && approx.lines.get(i).is_some_and(|w| w.before == state) {
                approx.valid = approx.lines.len();
                approx.edit_max = None;
                break;
            }
            let before = state.clone();
            let styled = highlight_line(&hl.syntaxes, theme, &mut state, lines, line, text);
            let entry = WindowLine { before, styled };
            match approx.lines.get_mut(i) {
                Some(slot) => *slot = entry,
                None => approx.lines.push(entry),
            }
            approx.valid = i + 1;
            line += 1;
        }
        if line >= end && approx.start + approx.valid == line {
            // Stopped at the view's end: lines after it (stale, or none)
            // start in `state`.
            approx.lines.truncate(approx.valid);
            approx.edit_max = None;
            approx.end_state = Some(state);
        }
        self.approx = Some(approx);
    }

    /// After re-highlighting up to `line`, the next stale window line past
    /// every edit starts in the same state: the rest of the window holds.
    fn window_converged(&mut self, line: usize, state: &State) -> bool {
        let idx = line - self.window_start;
        let past_edits = self.window_edit_max.is_some_and(|m| line > m);
        if past_edits && self.window.get(idx).is_some_and(|w| w.before == *state) {
            self.window_valid = self.window.len();
            self.window_edit_max = None;
            // Checkpoints up to here were re-recorded on the way; stale ones
            // past every edit start from the same state, so they hold too.
            if self.stale_edit_max.is_some_and(|m| line > m)
                && self.valid * CHECKPOINT_STRIDE >= line
            {
                self.valid = self.checkpoints.len();
                self.stale_edit_max = None;
            }
            return true;
        }
        false
    }

    fn reset<L: LineSource + ?Sized>(&mut self, hl: &Highlighter, path: &Path, lines: &L) {
        let first_line =
            if lines.line_count() > 0 && lines.line_bytes(0) <= MAX_HIGHLIGHT_LINE_BYTES {
                lines.line(0)
            } else {
                Cow::Borrowed("")
            };
        let syntax = hl.syntax_for(path, &first_line);
        *self = Self {
            syntax_name: Some(syntax.name.clone()),
            theme_name: hl.theme_name.clone(),
            max_lines_per_frame: self.max_lines_per_frame,
            max_time_per_frame: self.max_time_per_frame,
            ..Self::default()
        };
    }

    fn record_checkpoint(&mut self, k: usize, state: &State) {
        // Only extend the valid prefix: a checkpoint after a gap of stale
        // ones would claim the gap valid.
        if k != self.valid {
            return;
        }
        let line = k * CHECKPOINT_STRIDE;
        let past_edits = self.stale_edit_max.is_some_and(|m| line > m);
        if k < self.checkpoints.len() && past_edits && self.checkpoints[k] == *state {
            self.valid = self.checkpoints.len();
            self.stale_edit_max = None;
            return;
        }
        if k < self.checkpoints.len() {
            self.checkpoints[k] = state.clone();
        } else {
            self.checkpoints.push(state.clone());
        }
        self.valid = k + 1;
        if self.valid == self.checkpoints.len() {
            self.stale_edit_max = None;
        }
    }
}

/// Parse and style line `n`, advancing `state`. Over-long lines (never
/// copied out of the rope) and parse errors leave the state as it was and
/// draw plain.
pub(super) fn highlight_line<L: LineSource + ?Sized>(
    syntaxes: &SyntaxSet,
    theme: &ThemeHighlighter<'_>,
    state: &mut State,
    lines: &L,
    n: usize,
    buf: &mut String,
) -> StyledLine {
    if lines.line_bytes(n) > MAX_HIGHLIGHT_LINE_BYTES {
        return Vec::new();
    }
    let line = lines.line(n);
    highlight_str(syntaxes, theme, state, &line, buf)
}

/// Parse and style one line of text, advancing `state`.
fn highlight_str(
    syntaxes: &SyntaxSet,
    theme: &ThemeHighlighter<'_>,
    state: &mut State,
    line: &str,
    buf: &mut String,
) -> StyledLine {
    if line.len() > MAX_HIGHLIGHT_LINE_BYTES {
        return Vec::new();
    }
    buf.clear();
    buf.push_str(line);
    buf.push('\n');
    let Ok(ops) = state.parse.parse_line(buf, syntaxes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut at = 0;
    for (style, piece) in HighlightIterator::new(&mut state.highlight, &ops, buf, theme) {
        let end = (at + piece.len()).min(line.len());
        if at < end {
            out.push((to_ratatui(style), at..end));
        }
        at += piece.len();
    }
    out
}

fn to_ratatui(s: syntect::highlighting::Style) -> Style {
    let mut style = Style::default().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    if s.font_style.contains(FontStyle::UNDERLINE) {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic: only the line cap applies, not the clock.
    fn unlimited() -> HighlightCache {
        HighlightCache {
            max_time_per_frame: Duration::MAX,
            ..HighlightCache::default()
        }
    }

    /// Frames until the view is exact, each waiting for the background pass.
    fn settle(cache: &mut HighlightCache, hl: &Highlighter, lines: &[String], view: Range<usize>) {
        let mut frames = 0;
        while cache.prepare(hl, Path::new("m.py"), lines, view.clone()) {
            cache.finish_pass();
            frames += 1;
            assert!(frames < 100, "no progress");
        }
    }

    fn python(n: usize) -> Vec<String> {
        (0..n)
            .flat_map(|i| [format!("def f{i}(x):"), format!("    return \"{i}\"")])
            .collect()
    }

    #[test]
    fn typing_converges_instead_of_reparsing_the_file() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut lines = python(500);
        let path = Path::new("m.py");
        let mut cache = unlimited();
        settle(&mut cache, &hl, &lines, 960..1000);
        assert_eq!(cache.syntax_name(), Some("Python"));
        let all = cache.checkpoints.len();
        assert_eq!(all, 960 / CHECKPOINT_STRIDE + 1);
        assert_eq!(cache.valid, all);
        // Type inside a string on line 3 (line count unchanged).
        lines[3].insert(12, 'x');
        cache.invalidate(3, false);
        assert_eq!(cache.valid, 1);
        cache.prepare(&hl, path, &lines[..], 0..40);
        // The viewport ends before checkpoint 1; nothing verified yet.
        assert_eq!(cache.valid, 1);
        settle(&mut cache, &hl, &lines, 130..170);
        assert_eq!(
            cache.valid, all,
            "state at line 128 equal: later checkpoints reused"
        );
        assert!(cache.line(131).is_some_and(|l| !l.is_empty()));
    }

    #[test]
    fn unterminated_string_does_not_converge_and_line_inserts_drop_checkpoints() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut lines = python(500);
        let mut cache = unlimited();
        settle(&mut cache, &hl, &lines, 960..1000);
        let all = cache.checkpoints.len();
        // Opening a triple-quoted string changes the state of every later line.
        lines[3] = "    \"\"\"".to_string();
        cache.invalidate(3, false);
        settle(&mut cache, &hl, &lines, 250..290);
        assert_eq!(
            cache.valid, 3,
            "checkpoints 1 and 2 re-recorded, not reused"
        );
        assert!(cache.checkpoints.len() == all);
        lines.insert(5, String::new());
        cache.invalidate(5, true);
        assert_eq!(
            cache.checkpoints.len(),
            1,
            "shifted checkpoints are dropped"
        );
    }

    #[test]
    fn long_lines_render_plain_and_unknown_theme_is_an_error() {
        let hl = Highlighter::new(Highlighter::DEFAULT_LIGHT).unwrap();
        let lines = [
            "x = 1".to_string(),
            "y".repeat(MAX_HIGHLIGHT_LINE_BYTES + 1),
        ];
        let mut cache = unlimited();
        cache.prepare(&hl, Path::new("a.py"), &lines[..], 0..2);
        assert!(!cache.line(0).is_some_and(Vec::is_empty));
        assert!(cache.line(1).is_some_and(Vec::is_empty));
        let err = Highlighter::new("no-such-theme").err().unwrap();
        assert!(err.to_string().contains("base16-ocean.dark"), "{err}");
    }

    #[test]
    fn keystroke_in_view_rehighlights_only_the_edited_line() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut lines = python(500);
        let path = Path::new("m.py");
        let mut cache = unlimited();
        settle(&mut cache, &hl, &lines, 200..240);
        lines[221].insert(12, 'x');
        cache.invalidate(221, false);
        cache.max_lines_per_frame = 3;
        assert!(
            !cache.prepare(&hl, path, &lines[..], 200..240),
            "1 line + convergence"
        );
        assert!(cache.line(239).is_some_and(|l| !l.is_empty()));
        // A new line shifts the rest: re-highlight to the end of the view,
        // but still not from the checkpoint.
        lines.insert(221, "y = 1".to_string());
        cache.invalidate(221, true);
        assert!(cache.prepare(&hl, path, &lines[..], 200..240));
        cache.max_lines_per_frame = 25;
        cache.invalidate(221, true);
        assert!(!cache.prepare(&hl, path, &lines[..], 200..240));
        let styled = cache.line(221).unwrap();
        assert!(!styled.is_empty());
        assert_eq!(styled.last().map(|(_, r)| r.end), Some(5));
    }

    /// A view far below any known state costs the frame no sequential
    /// parsing: it is coloured approximately at once, the pass runs on its
    /// own thread, and what it finds makes the next frame exact.
    #[test]
    fn the_pass_to_a_far_view_runs_off_the_frame() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let lines = python(2000);
        let path = Path::new("m.py");
        let mut cache = unlimited();
        cache.max_lines_per_frame = 300;
        // Opened at the top, then a jump: the window at the top is no
        // place to continue from.
        assert!(!cache.prepare(&hl, path, &lines[..], 0..20));
        assert!(
            cache.prepare(&hl, path, &lines[..], 3000..3020),
            "the pass is running"
        );
        assert_eq!(cache.valid, 1, "the frame parsed up to no checkpoint");
        assert!(cache.window.is_empty(), "nor extended the window");
        assert!(
            cache.line(3010).is_some_and(|l| !l.is_empty()),
            "coloured at once"
        );
        cache.finish_pass();
        assert_eq!(cache.valid, 3000 / CHECKPOINT_STRIDE + 1);
        assert!(
            !cache.prepare(&hl, path, &lines[..], 3000..3020),
            "exact from the checkpoint at the view"
        );
        assert!(cache.approx.is_none());
        assert!(cache.line(3010).is_some_and(|l| !l.is_empty()));
    }

    /// Lines as a `LineSource` that counts the lines read: what the frame
    /// parsed.
    struct Counted<'a> {
        lines: &'a [String],
        read: std::cell::Cell<usize>,
    }

    impl LineSource for Counted<'_> {
        fn line_count(&self) -> usize {
            self.lines.line_count()
        }
        fn line_bytes(&self, n: usize) -> usize {
            self.lines.line_bytes(n)
        }
        fn line(&self, n: usize) -> Cow<'_, str> {
            self.read.set(self.read.get() + 1);
            self.lines.line(n)
        }
        fn snapshot(&self) -> Rope {
            self.lines.snapshot()
        }
    }

    /// Before the exact pass reaches a far view, a key there re-colours
    /// the edited line (and what its state changes), not the approximate
    /// context and the whole view again; what is shown is what a fresh
    /// approximate colouring of the new text shows. A new line re-colours
    /// from it to the view's end.
    #[test]
    fn typing_in_a_far_view_before_the_pass_parses_the_edited_line_only() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        // A wake keeps the pass off the frames: it never finishes here.
        hl.wake_when_a_pass_is_done(|| {});
        let mut lines = python(4000);
        let path = Path::new("m.py");
        let view = 6000..6040;
        let mut cache = unlimited();
        assert!(!cache.prepare(&hl, path, &lines[..], 0..20));
        cache.prepare(&hl, path, &lines[..], view.clone());
        assert!(cache.approx.is_some());
        let fresh_colours = |lines: &[String]| {
            let mut fresh = unlimited();
            fresh.prepare(&hl, path, lines, 0..20);
            fresh.prepare(&hl, path, lines, view.clone());
            view.clone()
                .map(|l| fresh.line(l).cloned())
                .collect::<Vec<_>>()
        };
        for (at, text) in [(6010, "x"), (6010, " + 1"), (6021, "# \"")] {
            lines[at].push_str(text);
            cache.invalidate(at, false);
            let counted = Counted {
                lines: &lines,
                read: std::cell::Cell::new(0),
            };
            cache.prepare(&hl, path, &counted, view.clone());
            assert!(
                counted.read.get() <= 3,
                "{text}: {} lines parsed",
                counted.read.get()
            );
            let shown: Vec<_> = view.clone().map(|l| cache.line(l).cloned()).collect();
            assert_eq!(shown, fresh_colours(&lines), "{text}");
        }
        lines.insert(6020, "def g(y):".to_owned());
        cache.invalidate(6020, true);
        let counted = Counted {
            lines: &lines,
            read: std::cell::Cell::new(0),
        };
        cache.prepare(&hl, path, &counted, view.clone());
        assert!(
            counted.read.get() <= 21,
            "{} lines parsed",
            counted.read.get()
        );
        let shown: Vec<_> = view.clone().map(|l| cache.line(l).cloned()).collect();
        assert_eq!(shown, fresh_colours(&lines));
    }

    /// With a wake set (the app's), a running pass asks for no frames:
    /// it calls the wake once the checkpoint at the view is sent, and the
    /// frame after that is exact. Without one the loop would redraw at
    /// 60 Hz for the pass's whole run (most of a minute at 1M lines).
    #[test]
    fn a_pass_wakes_the_app_instead_of_asking_for_frames() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        hl.wake_when_a_pass_is_done(move || {
            let _ = tx.lock().map(|tx| tx.send(()));
        });
        let lines = python(2000);
        let path = Path::new("m.py");
        let mut cache = unlimited();
        assert!(!cache.prepare(&hl, path, &lines[..], 0..20));
        assert!(
            !cache.prepare(&hl, path, &lines[..], 3000..3020),
            "no frames asked for while the pass runs"
        );
        assert!(cache.pass.is_some() && cache.approx.is_some());
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the pass woke the app");
        assert!(!cache.prepare(&hl, path, &lines[..], 3000..3020));
        assert!(cache.approx.is_none(), "exact colours at the wake's frame");
        assert_eq!(rx.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty));
    }

    /// An edit above a running pass's target cancels it (its states are of
    /// the old text); one below leaves it running. The exact colours then
    /// follow the edit: a docstring opened above turns the view into string.
    #[test]
    fn an_edit_above_the_pass_cancels_it() {
        let hl = Highlighter::new(Highlighter::DEFAULT_DARK).unwrap();
        let mut lines = python(2000);
        let path = Path::new("m.py");
        let mut cache = unlimited();
        let colours = |cache: &HighlightCache| -> Vec<Style> {
            let mut styles: Vec<Style> = (3000..3020)
                .flat_map(|n| cache.line(n).cloned().unwrap_or_default())
                .map(|(style, _)| style)
                .collect();
            styles.dedup();
            styles
        };
        settle(&mut cache, &hl, &lines, 3000..3020);
        assert!(colours(&cache).len() > 1, "code: several colours");

        lines[1000] = "    \"\"\"".to_string();
        cache.invalidate(1000, false);
        assert_eq!(
            cache.valid,
            1000 / CHECKPOINT_STRIDE + 1,
            "kept above the edit"
        );
        assert!(cache.prepare(&hl, path, &lines[..], 3000..3020));
        assert!(cache.pass.is_some());
        cache.invalidate(3010, false);
        assert!(
            cache.pass.is_some(),
            "an edit below the target keeps the pass"
        );
        cache.invalidate(2000, false);
        assert!(cache.pass.is_none(), "an edit above the target cancels it");
        settle(&mut cache, &hl, &lines, 3000..3020);
        assert_eq!(colours(&cache).len(), 1, "all inside the docstring");
    }
}

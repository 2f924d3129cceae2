//! Syntax highlighting with syntect, incremental and bounded per frame.
//!
//! `Highlighter` holds what is expensive and shared (syntax definitions,
//! theme). Each document owns a `HighlightCache`: parse-state checkpoints
//! every `CHECKPOINT_STRIDE` lines and the styled lines of the visible
//! window. A frame highlights only what is visible, starting from the
//! nearest valid checkpoint, and stops after `max_lines_per_frame` lines;
//! the rest renders plain until the next frame (`needs_more_work`). An edit
//! invalidates from the edited line; when re-parsing reaches an old
//! checkpoint past the edit with an identical state, every later checkpoint
//! is valid again (the state converged), so typing does not re-parse the
//! rest of the file.

use std::ops::Range;
use std::path::Path;

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter as ThemeHighlighter, Theme, ThemeSet,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use two_face::theme::LazyThemeSet;

use super::error::EditorError;

/// Lines between parse-state checkpoints.
pub const CHECKPOINT_STRIDE: usize = 128;
/// Lines longer than this render plain and are not parsed.
pub const MAX_HIGHLIGHT_LINE_BYTES: usize = 16 * 1024;
/// Default cap on lines parsed per frame.
pub const DEFAULT_LINES_PER_FRAME: usize = 2000;

/// Shared syntax definitions and the active theme. Load once per app.
pub struct Highlighter {
    syntaxes: SyntaxSet,
    theme: Theme,
    theme_name: String,
}

impl Highlighter {
    pub const DEFAULT_DARK: &'static str = "base16-ocean.dark";
    pub const DEFAULT_LIGHT: &'static str = "InspiredGitHub";

    /// Load syntaxes (syntect defaults plus bat's extras such as TOML and
    /// TypeScript) and the named theme.
    pub fn new(theme_name: &str) -> Result<Self, EditorError> {
        Ok(Self {
            syntaxes: two_face::syntax::extra_newlines(),
            theme: load_theme(theme_name)?,
            theme_name: theme_name.to_string(),
        })
    }

    /// Switch theme; documents re-highlight on their next frame.
    pub fn set_theme(&mut self, theme_name: &str) -> Result<(), EditorError> {
        self.theme = load_theme(theme_name)?;
        self.theme_name = theme_name.to_string();
        Ok(())
    }

    pub fn theme_name(&self) -> &str {
        &self.theme_name
    }

    /// Every theme name `new` accepts.
    pub fn theme_names() -> Vec<String> {
        let mut names: Vec<String> = ThemeSet::load_defaults().themes.into_keys().collect();
        let extra: LazyThemeSet = two_face::theme::extra().into();
        names.extend(extra.theme_names().map(str::to_string));
        names.sort();
        names.dedup();
        names
    }

    /// The syntax for a file: by extension or file name, then by first
    /// line (shebang, modelines), else plain text.
    pub fn syntax_for(&self, path: &Path, first_line: &str) -> &SyntaxReference {
        let by_name = |s: &str| self.syntaxes.find_syntax_by_extension(s);
        path.extension()
            .and_then(|e| by_name(&e.to_string_lossy()))
            .or_else(|| path.file_name().and_then(|n| by_name(&n.to_string_lossy())))
            .or_else(|| self.syntaxes.find_syntax_by_first_line(first_line))
            .unwrap_or_else(|| self.syntaxes.find_syntax_plain_text())
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

/// Styled byte ranges of one line; empty means "draw plain".
pub type StyledLine = Vec<(Style, Range<usize>)>;

#[derive(Clone, PartialEq, Eq)]
struct State {
    parse: ParseState,
    highlight: HighlightState,
}

/// Per-document highlight state. Lives inside `Document`.
pub struct HighlightCache {
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
    window_start: usize,
    window: Vec<StyledLine>,
    /// State after the last window line, to extend the window downwards.
    window_end_state: Option<State>,
    needs_more: bool,
    pub max_lines_per_frame: usize,
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
            window_end_state: None,
            needs_more: false,
            max_lines_per_frame: DEFAULT_LINES_PER_FRAME,
        }
    }
}

impl HighlightCache {
    pub fn syntax_name(&self) -> Option<&str> {
        self.syntax_name.as_deref()
    }

    /// The last frame stopped early: schedule another frame.
    pub fn needs_more_work(&self) -> bool {
        self.needs_more
    }

    /// Styled ranges for `line` if it has been highlighted.
    pub fn line(&self, line: usize) -> Option<&StyledLine> {
        line.checked_sub(self.window_start)
            .and_then(|i| self.window.get(i))
    }

    /// Text changed from line `from` on; `line_count_changed` when lines
    /// were inserted or removed (later checkpoints then shifted).
    pub fn invalidate(&mut self, from: usize, line_count_changed: bool) {
        if from < self.window_start {
            self.window.clear();
            self.window_start = 0;
        } else {
            self.window.truncate(from - self.window_start);
        }
        self.window_end_state = None;
        self.valid = self.valid.min(from / CHECKPOINT_STRIDE + 1);
        if line_count_changed {
            self.checkpoints.truncate(self.valid);
            self.stale_edit_max = None;
        } else if self.checkpoints.len() > self.valid {
            self.stale_edit_max = Some(self.stale_edit_max.map_or(from, |m| m.max(from)));
        }
    }

    /// Highlight lines `visible` (clamped to the text), parsing at most
    /// `max_lines_per_frame` lines. Returns `needs_more_work()`.
    pub fn prepare(
        &mut self,
        hl: &Highlighter,
        path: &Path,
        lines: &[String],
        visible: Range<usize>,
    ) -> bool {
        let end = visible.end.min(lines.len());
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
        if self.checkpoints.is_empty() {
            self.checkpoints.push(State {
                parse: ParseState::new(syntax),
                highlight: HighlightState::new(&theme, ScopeStack::new()),
            });
            self.valid = 1;
        }
        let window_end = self.window_start + self.window.len();
        if self.window_start <= first && window_end >= end {
            self.needs_more = false;
            return false;
        }
        // Continue the window downwards, or restart at a checkpoint.
        let (mut line, mut state) = match &self.window_end_state {
            Some(s) if self.window_start <= first && window_end >= first => (window_end, s.clone()),
            _ => {
                let k = (first / CHECKPOINT_STRIDE).min(self.valid.saturating_sub(1));
                self.window.clear();
                self.window_start = first;
                (k * CHECKPOINT_STRIDE, self.checkpoints[k].clone())
            }
        };
        // Keep the window small: drop styled lines far above the view.
        let keep_from = first.saturating_sub(CHECKPOINT_STRIDE);
        if keep_from > self.window_start {
            let drop = (keep_from - self.window_start).min(self.window.len());
            self.window.drain(..drop);
            self.window_start += drop;
        }
        let mut budget = self.max_lines_per_frame.max(1);
        let mut text = String::new();
        while line < end && budget > 0 {
            if line % CHECKPOINT_STRIDE == 0 {
                self.record_checkpoint(line / CHECKPOINT_STRIDE, &state);
            }
            let styled = highlight_line(&hl.syntaxes, &theme, &mut state, &lines[line], &mut text);
            if line >= first {
                self.window.push(styled);
            }
            line += 1;
            budget -= 1;
        }
        // The saved state must be the one after the window's last line; if
        // the budget ran out before reaching the window, checkpoints keep
        // the progress instead.
        self.window_end_state = (line == self.window_start + self.window.len()).then_some(state);
        self.needs_more = line < end;
        self.needs_more
    }

    fn reset(&mut self, hl: &Highlighter, path: &Path, lines: &[String]) {
        let first_line = lines.first().map_or("", String::as_str);
        let syntax = hl.syntax_for(path, first_line);
        *self = Self {
            syntax_name: Some(syntax.name.clone()),
            theme_name: hl.theme_name.clone(),
            max_lines_per_frame: self.max_lines_per_frame,
            ..Self::default()
        };
    }

    fn record_checkpoint(&mut self, k: usize, state: &State) {
        if k < self.valid {
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

/// Parse and style one line, advancing `state`. Over-long lines and parse
/// errors leave the state as it was and draw plain.
fn highlight_line(
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
        let mut cache = HighlightCache::default();
        cache.prepare(&hl, path, &lines, 960..1000);
        assert_eq!(cache.syntax_name(), Some("Python"));
        let all = cache.checkpoints.len();
        assert_eq!(all, 960 / CHECKPOINT_STRIDE + 1);
        assert_eq!(cache.valid, all);
        // Type inside a string on line 3 (line count unchanged).
        lines[3].insert(12, 'x');
        cache.invalidate(3, false);
        assert_eq!(cache.valid, 1);
        cache.prepare(&hl, path, &lines, 0..40);
        // The viewport ends before checkpoint 1; nothing verified yet.
        assert_eq!(cache.valid, 1);
        cache.prepare(&hl, path, &lines, 130..170);
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
        let path = Path::new("m.py");
        let mut cache = HighlightCache::default();
        cache.prepare(&hl, path, &lines, 960..1000);
        let all = cache.checkpoints.len();
        // Opening a triple-quoted string changes the state of every later line.
        lines[3] = "    \"\"\"".to_string();
        cache.invalidate(3, false);
        cache.prepare(&hl, path, &lines, 250..290);
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
        let lines = vec![
            "x = 1".to_string(),
            "y".repeat(MAX_HIGHLIGHT_LINE_BYTES + 1),
        ];
        let mut cache = HighlightCache::default();
        cache.prepare(&hl, Path::new("a.py"), &lines, 0..2);
        assert!(!cache.line(0).is_some_and(Vec::is_empty));
        assert!(cache.line(1).is_some_and(Vec::is_empty));
        let err = Highlighter::new("no-such-theme").err().unwrap();
        assert!(err.to_string().contains("base16-ocean.dark"), "{err}");
    }
}

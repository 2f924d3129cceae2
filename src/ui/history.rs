//! The conversation history's layout, cached per entry.
//!
//! Laying out an entry (Markdown, wrapping, syntect for its code) costs
//! up to milliseconds, so it is done once per entry revision, pane width
//! and collapse state, and only for the entries a frame shows or scrolls
//! through. Scrolling is resolved here too, from the entries' heights:
//! the state keeps a place in the transcript (`HistoryScroll`), so neither
//! the first frame of a 2 000-entry session nor Ctrl+Home lays out more
//! than a screenful. Highlighted code blocks are memoised by their text,
//! so a streaming answer re-highlights only the block that is growing.

mod text;

pub use text::{HistoryPoint, moved, text_between};

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Range;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::markdown::{self, CodeStyler, PlainCode};
use crate::sanitize;
use crate::screen::wrap;
use crate::subcalls::{SubcallKind, SubcallStatus};
use crate::theme::Theme;
use crate::workbench::transcript::{CellStatus, CellView, PaneEntry, Speaker, SubcallView};
use crate::workbench::transcript::{EntryId, Transcript};

/// Collapsed cells show this many lines of code and of output.
const COLLAPSED_CODE_LINES: usize = 3;
const COLLAPSED_OUTPUT_LINES: usize = 4;
/// Collapsed reasoning shows its latest lines (where it is going).
const COLLAPSED_THINKING_LINES: usize = 2;

/// Highlighted blocks kept beyond those the last frame used.
const CODE_MEMO_CAP: usize = 256;

/// What every cached layout depends on besides its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LayoutKey {
    width: usize,
    expanded: bool,
    theme: String,
    /// Which code styler coloured the code (0: plain).
    styler: usize,
}

struct EntryLayout {
    id: EntryId,
    revision: u64,
    /// Body rows, each with the entry's "▏ " bar in front.
    body: Vec<Line<'static>>,
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

/// Where the conversation's history is and where it is asked to go: the
/// pane keeps it, and [`HistoryLayout::prepare`] resolves the requests,
/// because only layout knows entry heights.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HistoryPlace {
    /// Where the last frame was scrolled to.
    pub scroll: HistoryScroll,
    /// Rows to scroll before the next frame (negative: back in history).
    pub scroll_request: isize,
    /// Code cells show everything (Ctrl+O) instead of their first and last
    /// lines.
    pub cells_expanded: bool,
    /// A search result to bring into view before the next frame.
    pub jump_to: Option<usize>,
}

impl HistoryPlace {
    /// Scrolls by `rows` (negative: back in history) before the next frame.
    pub fn scroll_by(&mut self, rows: isize) {
        self.scroll_request = self.scroll_request.saturating_add(rows);
    }

    /// Shows the first message at the top.
    pub(crate) fn scroll_to_top(&mut self) {
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

/// A run of rows of one entry's block that the pane shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub entry: usize,
    pub rows: Range<usize>,
}

/// The history as laid out for the last frame. Lives in the frame model,
/// next to the state: `prepare` fills it, `paint` only reads it.
#[derive(Default)]
pub struct HistoryLayout {
    key: Option<LayoutKey>,
    entries: Vec<Option<EntryLayout>>,
    code: CodeMemo,
    visible: Vec<Slice>,
    /// Entries laid out by the last `prepare` (for tests and benchmarks:
    /// a frame should lay out a screenful, not the transcript).
    laid_out: usize,
}

/// What `prepare` needs to lay entries out.
pub struct Styling<'a> {
    pub theme: &'a Theme,
    pub code: &'a dyn CodeStyler,
    /// Identifies `code` (0 for plain) so a new highlighter re-lays out.
    pub code_id: usize,
}

impl Styling<'_> {
    pub fn plain(theme: &Theme) -> Styling<'_> {
        Styling {
            theme,
            code: &PlainCode,
            code_id: 0,
        }
    }
}

impl HistoryLayout {
    /// Resolves the scroll requests in `place` for `transcript`
    /// shown in `area` and lays out what will be shown.
    pub fn prepare(
        &mut self,
        transcript: &Transcript,
        place: &mut HistoryPlace,
        styling: &Styling,
        area: Rect,
    ) {
        let key = LayoutKey {
            width: area.width as usize,
            expanded: place.cells_expanded,
            theme: styling.theme.name.clone(),
            styler: styling.code_id,
        };
        if self.key.as_ref() != Some(&key) {
            self.entries.clear();
            if self.key.as_ref().is_some_and(|k| k.styler != key.styler) {
                // Memoised blocks are coloured by the old styler.
                self.code.blocks.clear();
            }
            self.key = Some(key);
        }
        self.laid_out = 0;
        self.code.generation += 1;
        let n = transcript.len();
        self.entries.truncate(n);
        self.entries.resize_with(n, || None);
        let height = area.height as usize;
        let request = std::mem::take(&mut place.scroll_request);
        let jump = place.jump_to.take();
        self.visible.clear();
        if n == 0 {
            place.scroll = HistoryScroll::Follow;
            return;
        }
        if height == 0 {
            // Nothing shows (a tiny terminal): keep the place and the
            // requests for when the pane is back.
            place.scroll_request = request;
            place.jump_to = jump;
            return;
        }
        let mut sizer = Sizer {
            layout: self,
            transcript,
            styling,
            expanded: place.cells_expanded,
            width: area.width as usize,
        };
        let anchor = match (jump, place.scroll) {
            // The entry's header at the top (its separator just above).
            (Some(index), _) => Some((index.min(n - 1), usize::from(index.min(n - 1) > 0))),
            (None, HistoryScroll::Anchored { entry, row }) => Some((entry.min(n - 1), row)),
            (None, HistoryScroll::Follow) if request != 0 => {
                Some(sizer.bottom_view(height).first_row())
            }
            (None, HistoryScroll::Follow) => None,
        };
        let resolved = anchor.and_then(|(entry, row)| {
            let row = row.min(sizer.height(entry).saturating_sub(1));
            let (entry, row) = sizer.moved((entry, row), request);
            sizer.view_from(entry, row, height)
        });
        let (visible, scroll) = match resolved {
            Some((visible, entry, row)) => (visible, HistoryScroll::Anchored { entry, row }),
            // Near the end there is nothing below to fill the pane with:
            // that is the bottom, which follows new messages again.
            None => (sizer.bottom_view(height).slices, HistoryScroll::Follow),
        };
        place.scroll = scroll;
        self.visible = visible;
        self.code.evict();
    }

    /// The rows `prepare` chose, in order.
    pub fn visible(&self) -> &[Slice] {
        &self.visible
    }

    /// Each row the pane shows, top to bottom: (entry, row of its block).
    pub fn shown_rows(&self) -> Vec<(usize, usize)> {
        self.visible
            .iter()
            .flat_map(|slice| slice.rows.clone().map(move |row| (slice.entry, row)))
            .collect()
    }

    /// Entries laid out by the last `prepare`.
    #[cfg(test)]
    pub(crate) fn laid_out(&self) -> usize {
        self.laid_out
    }

    /// The pane's rows: separators, headers and cached bodies.
    pub(crate) fn paint(
        &self,
        transcript: &Transcript,
        flash: Option<usize>,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        for slice in &self.visible {
            let (Some(message), Some(Some(layout))) =
                (transcript.get(slice.entry), self.entries.get(slice.entry))
            else {
                continue;
            };
            let lead = usize::from(slice.entry > 0);
            for row in slice.rows.clone() {
                if row < lead {
                    lines.push(Line::default());
                } else if row == lead {
                    lines.push(header(message, flash == Some(slice.entry), theme));
                } else if let Some(line) = layout.body.get(row - lead - 1) {
                    lines.push(line.clone());
                }
            }
        }
        lines
    }
}

/// Lays entries out on demand while scrolling is resolved.
struct Sizer<'a, 'b> {
    layout: &'a mut HistoryLayout,
    transcript: &'a Transcript,
    styling: &'a Styling<'b>,
    expanded: bool,
    width: usize,
}

/// The bottom of the history: its slices and where its first row is.
struct BottomView {
    slices: Vec<Slice>,
}

impl BottomView {
    fn first_row(&self) -> (usize, usize) {
        self.slices
            .first()
            .map(|s| (s.entry, s.rows.start))
            .unwrap_or((0, 0))
    }
}

impl Sizer<'_, '_> {
    /// Rows of entry `index`'s block, laying it out if its cache is stale.
    fn height(&mut self, index: usize) -> usize {
        let entry = &self.transcript.entries()[index];
        let fresh = matches!(
            &self.layout.entries[index],
            Some(l) if l.id == entry.id && l.revision == entry.revision
        );
        if !fresh {
            let memo = RefCell::new(&mut self.layout.code);
            let styler = Memoized {
                inner: self.styling.code,
                memo: &memo,
            };
            let body = body_rows(
                &entry.message,
                self.styling.theme,
                &styler,
                self.expanded,
                self.width,
            );
            self.layout.laid_out += 1;
            self.layout.entries[index] = Some(EntryLayout {
                id: entry.id,
                revision: entry.revision,
                body,
            });
        }
        let body = self.layout.entries[index]
            .as_ref()
            .map_or(0, |l| l.body.len());
        usize::from(index > 0) + 1 + body
    }

    /// `(entry, row)` moved by `rows`, stopping at the first row.
    fn moved(&mut self, (mut entry, row): (usize, usize), rows: isize) -> (usize, usize) {
        let mut row = row as isize + rows;
        while row < 0 && entry > 0 {
            entry -= 1;
            row += self.height(entry) as isize;
        }
        if row < 0 {
            return (0, 0);
        }
        let last = self.transcript.len() - 1;
        loop {
            let height = self.height(entry) as isize;
            if row < height || entry == last {
                return (entry, row.min(height - 1) as usize);
            }
            row -= height;
            entry += 1;
        }
    }

    /// The pane filled downwards from `(entry, row)`, or `None` when that
    /// shows the end of the history (the bottom, which follows).
    fn view_from(
        &mut self,
        mut entry: usize,
        row: usize,
        height: usize,
    ) -> Option<(Vec<Slice>, usize, usize)> {
        let (top_entry, top_row) = (entry, row);
        let mut slices = Vec::new();
        let mut start = row;
        let mut filled = 0;
        while entry < self.transcript.len() {
            let rows = self.height(entry);
            let take = (rows - start).min(height - filled);
            slices.push(Slice {
                entry,
                rows: start..start + take,
            });
            filled += take;
            let more_below = start + take < rows || entry + 1 < self.transcript.len();
            if filled == height {
                return more_below.then_some((slices, top_entry, top_row));
            }
            start = 0;
            entry += 1;
        }
        None
    }

    /// The last `height` rows of the history (all of it when shorter).
    fn bottom_view(&mut self, height: usize) -> BottomView {
        let mut slices = Vec::new();
        let mut filled = 0;
        for entry in (0..self.transcript.len()).rev() {
            let rows = self.height(entry);
            let take = rows.min(height - filled);
            slices.push(Slice {
                entry,
                rows: rows - take..rows,
            });
            filled += take;
            if filled == height {
                break;
            }
        }
        slices.reverse();
        BottomView { slices }
    }
}

/// Highlighted code blocks by their language and text.
#[derive(Default)]
struct CodeMemo {
    blocks: HashMap<u64, MemoEntry>,
    hasher: foldhash::fast::RandomState,
    /// Bumped once per frame; entries older than the frame may be evicted.
    generation: u64,
}

struct MemoEntry {
    language: String,
    code: String,
    lines: Vec<Vec<(Style, String)>>,
    used: u64,
}

impl CodeMemo {
    fn key(&self, language: &str, code: &str) -> u64 {
        let mut h = self.hasher.build_hasher();
        language.hash(&mut h);
        code.hash(&mut h);
        h.finish()
    }

    fn evict(&mut self) {
        if self.blocks.len() > CODE_MEMO_CAP {
            let generation = self.generation;
            self.blocks.retain(|_, e| e.used == generation);
        }
    }
}

/// A code styler that asks `inner` once per distinct block.
struct Memoized<'a, 'm> {
    inner: &'a dyn CodeStyler,
    memo: &'a RefCell<&'m mut CodeMemo>,
}

impl CodeStyler for Memoized<'_, '_> {
    fn style_code(&self, language: &str, code: &str) -> Vec<Vec<(Style, String)>> {
        let mut memo = self.memo.borrow_mut();
        let key = memo.key(language, code);
        let generation = memo.generation;
        if let Some(entry) = memo.blocks.get_mut(&key)
            && entry.language == language
            && entry.code == code
        {
            entry.used = generation;
            return entry.lines.clone();
        }
        let lines = self.inner.style_code(language, code);
        memo.blocks.insert(
            key,
            MemoEntry {
                language: language.to_owned(),
                code: code.to_owned(),
                lines: lines.clone(),
                used: generation,
            },
        );
        lines
    }
}

fn role_style(role: Speaker, theme: &Theme) -> Style {
    match role {
        Speaker::User => theme.roles.user_message,
        Speaker::Assistant => theme.roles.assistant_message,
        Speaker::Tool => theme.roles.tool_message,
        Speaker::Thinking | Speaker::Notice => theme.roles.muted,
    }
}

/// Reasoning reads dimmer than anything the model answered.
fn thinking_style(theme: &Theme) -> Style {
    theme
        .roles
        .muted
        .add_modifier(ratatui::style::Modifier::DIM | ratatui::style::Modifier::ITALIC)
}

/// "▍you", with a cell's status; highlighted when a search jump landed here.
fn header(message: &PaneEntry, flashed: bool, theme: &Theme) -> Line<'static> {
    let style = role_style(message.role, theme);
    let header_style = if flashed {
        style
            .patch(theme.roles.match_highlight)
            .patch(theme.roles.selection)
    } else {
        style
    };
    let mut spans = vec![Span::styled(
        format!("▍{}", message.role.label()),
        header_style,
    )];
    if let Some(cell) = &message.cell {
        spans.push(cell_status(&cell.status, theme));
    }
    Line::from(spans)
}

fn cell_status(status: &CellStatus, theme: &Theme) -> Span<'static> {
    match status {
        CellStatus::Running => Span::styled(" ● running", theme.roles.warning),
        CellStatus::Succeeded {
            duration_ms,
            waited_ms,
        } => {
            let mut text = match duration_ms {
                Some(ms) => format!(" ✓ {ms} ms"),
                None => " ✓".to_owned(),
            };
            if *waited_ms > 0 {
                text.push_str(&format!(" · waited {}", waited(*waited_ms)));
            }
            Span::styled(text, theme.roles.hint)
        }
        CellStatus::Failed { summary } => Span::styled(
            format!(" ✖ {}", sanitize::for_display(summary)),
            theme.roles.error,
        ),
    }
}

/// How long a cell waited on the user: `640 ms`, `6.0 s`.
fn waited(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// The last `n` lines of `text`, and how many lines come before them.
fn last_lines(text: &str, n: usize) -> (usize, &str) {
    let mut start = text.len();
    let mut kept = 0;
    while kept < n {
        match text[..start].rfind('\n') {
            Some(i) => {
                start = i;
                kept += 1;
            }
            None => return (0, text),
        }
    }
    let before = text[..start].matches('\n').count() + 1;
    (before, &text[start + 1..])
}

/// The body rows of one entry, each with the role's bar in front. The
/// assistant writes Markdown; what the user typed and tool output are
/// shown as they are.
fn body_rows(
    message: &PaneEntry,
    theme: &Theme,
    styler: &dyn CodeStyler,
    expanded: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let width = width.saturating_sub(2).max(1);
    let lines = match (&message.cell, message.role) {
        (Some(cell), _) => cell_lines(cell, &message.text, theme, styler, expanded, width),
        (None, Speaker::Assistant) => markdown::render(&message.text, width, theme, styler),
        (None, Speaker::Thinking) => thinking_lines(&message.text, theme, expanded, width),
        // Notices are read like what the user typed (an error in one must
        // not fade); the role's bar and header tell them apart.
        (None, _) => wrap::wrap(&sanitize::for_display(&message.text), width)
            .into_iter()
            .map(|row| Line::styled(row, theme.roles.text))
            .collect(),
    };
    let bar = Span::styled("▏ ", role_style(message.role, theme));
    lines
        .into_iter()
        .map(|row| {
            let mut spans = Vec::with_capacity(row.spans.len() + 1);
            spans.push(bar.clone());
            // A row styled as a whole (tool output, a diff line) keeps its
            // style on its text; the bar keeps the role's.
            spans.extend(
                row.spans
                    .into_iter()
                    .map(|span| span.patch_style(row.style)),
            );
            Line::from(spans)
        })
        .collect()
}

/// The model's reasoning, dimmed; collapsed (the default), its latest
/// lines under a count of the rest, so it never pushes the answer away.
fn thinking_lines(text: &str, theme: &Theme, expanded: bool, width: usize) -> Vec<Line<'static>> {
    let style = thinking_style(theme);
    let text = text.trim();
    let (skipped, tail) = if expanded {
        (0, text)
    } else {
        last_lines(text, COLLAPSED_THINKING_LINES)
    };
    let mut rows = wrap::wrap(&sanitize::for_display(tail), width);
    let over = if expanded {
        0
    } else {
        rows.len().saturating_sub(COLLAPSED_THINKING_LINES)
    };
    rows.drain(..over);
    let mut lines = Vec::with_capacity(rows.len() + 1);
    if skipped + over > 0 {
        lines.push(Line::styled(
            format!(
                "▸ {} more lines of reasoning (Ctrl+O expands)",
                skipped + over
            ),
            theme.roles.muted,
        ));
    }
    lines.extend(rows.into_iter().map(|row| Line::styled(row, style)));
    lines
}

/// A code cell: its Python (highlighted) and its output. Collapsed, it
/// keeps the first lines of code and the last lines of output — where the
/// result or the error is.
fn cell_lines(
    cell: &CellView,
    output: &str,
    theme: &Theme,
    styler: &dyn CodeStyler,
    expanded: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines = markdown::code_lines("python", &cell.code, width, theme, styler);
    if !expanded && lines.len() > COLLAPSED_CODE_LINES {
        let hidden = lines.len() - COLLAPSED_CODE_LINES;
        lines.truncate(COLLAPSED_CODE_LINES);
        lines.push(Line::styled(
            format!("▎… {hidden} more lines (Ctrl+O expands)"),
            theme.roles.muted,
        ));
    }
    let output_style = match cell.status {
        CellStatus::Failed { .. } => theme.roles.error,
        _ => theme.roles.muted,
    };
    let output = output.trim_end();
    // Collapsed, only the last lines are wrapped: a running cell's output
    // can be 256 KB, laid out again on every chunk.
    let (skipped, tail) = if expanded {
        (0, output)
    } else {
        last_lines(output, COLLAPSED_OUTPUT_LINES)
    };
    let mut rows = wrap::wrap(&sanitize::for_display(tail), width);
    if output.trim().is_empty() {
        rows.clear();
    }
    let over = rows.len().saturating_sub(COLLAPSED_OUTPUT_LINES);
    if !expanded && skipped + over > 0 {
        rows.drain(..over);
        lines.push(Line::styled(
            format!("… {} earlier output lines", skipped + over),
            theme.roles.muted,
        ));
    }
    lines.extend(rows.into_iter().map(|row| Line::styled(row, output_style)));
    for change in &cell.changes {
        lines.extend(change_lines(change, theme, expanded, width));
    }
    lines.extend(subcall_lines(&cell.subcalls, theme, expanded, width));
    lines
}

/// Sub-calls listed one line each until Ctrl+O expands the cell.
const COLLAPSED_SUBCALLS: usize = 6;

/// The cell's `llm_query` sub-calls: a total, then one line each (status,
/// tokens, time, prompt → answer, cut to the width); expanded, each shows
/// its model and the heads of its prompt and answer in full.
fn subcall_lines(
    calls: &[SubcallView],
    theme: &Theme,
    expanded: bool,
    width: usize,
) -> Vec<Line<'static>> {
    if calls.is_empty() {
        return Vec::new();
    }
    let tokens: u64 = calls.iter().map(|c| c.tokens).sum();
    let plural = if calls.len() == 1 { "" } else { "s" };
    let running = calls.iter().filter(|c| c.status.is_none()).count();
    let mut total = format!("◆ {} sub-call{plural} · {tokens} tok", calls.len());
    if running > 0 {
        total.push_str(&format!(" · {running} running"));
    }
    let mut lines = vec![Line::styled(
        wrap::fit_text(&total, width),
        theme.roles.title,
    )];
    let shown = if expanded {
        calls.len()
    } else {
        calls.len().min(COLLAPSED_SUBCALLS)
    };
    for call in &calls[..shown] {
        let (mark, style) = match call.status {
            None => ("● running".to_owned(), theme.roles.warning),
            Some(SubcallStatus::Ok) => (
                format!("✓ {} tok · {} ms", call.tokens, call.elapsed_ms),
                theme.roles.hint,
            ),
            Some(other) => (
                format!("✖ {} · {} ms", other.label(), call.elapsed_ms),
                theme.roles.error,
            ),
        };
        // A nested loop is told apart from a single answer.
        let loop_mark = match call.kind {
            SubcallKind::LlmQuery => "",
            SubcallKind::RlmQuery => "rlm ",
        };
        let one_line = |text: &str| sanitize::for_display(&text.replace('\n', " ")).into_owned();
        if !expanded {
            let mut spans = vec![
                Span::styled(format!("↳ {loop_mark}"), theme.roles.muted),
                Span::styled(mark, style),
                Span::styled(
                    format!("  {}", one_line(&call.prompt_head)),
                    theme.roles.muted,
                ),
            ];
            let outcome = match &call.error {
                Some(error) => Some((one_line(error), theme.roles.error)),
                None if !call.answer_head.is_empty() => {
                    Some((one_line(&call.answer_head), theme.roles.text))
                }
                None => None,
            };
            if let Some((text, style)) = outcome {
                spans.push(Span::styled(" → ", theme.roles.muted));
                spans.push(Span::styled(text, style));
            }
            lines.push(Line::from(wrap::fit(&spans, width)));
            continue;
        }
        let head = vec![
            Span::styled(format!("↳ #{} {loop_mark}", call.id), theme.roles.muted),
            Span::styled(mark, style),
            Span::styled(
                format!(" · {}", sanitize::for_display(&call.model)),
                theme.roles.muted,
            ),
        ];
        lines.push(Line::from(wrap::fit(&head, width)));
        let mut part = |label: &str, text: &str, chars: usize, style| {
            let cut = if chars > text.chars().count() {
                " …"
            } else {
                ""
            };
            let body = format!(
                "  {label} ({chars} chars): {}{cut}",
                sanitize::for_display(text)
            );
            for row in wrap::wrap(&body, width) {
                lines.push(Line::styled(row, style));
            }
        };
        part(
            "prompt",
            &call.prompt_head,
            call.prompt_chars,
            theme.roles.muted,
        );
        if call.status == Some(SubcallStatus::Ok) || !call.answer_head.is_empty() {
            part(
                "answer",
                &call.answer_head,
                call.answer_chars,
                theme.roles.text,
            );
        }
        if let Some(error) = &call.error {
            for row in wrap::wrap(&format!("  {}", sanitize::for_display(error)), width) {
                lines.push(Line::styled(row, theme.roles.error));
            }
        }
    }
    if shown < calls.len() {
        let more = format!("… {} more sub-calls (Ctrl+O expands)", calls.len() - shown);
        lines.push(Line::styled(
            wrap::fit_text(&more, width),
            theme.roles.muted,
        ));
    }
    lines
}

/// Diff lines shown per changed file until Ctrl+O expands the cell.
const COLLAPSED_DIFF_LINES: usize = 8;

/// A file the cell changed: its name and counts, then the diff, coloured
/// like the conflict diff (added lines in the info colour, removed in the
/// error colour).
fn change_lines(
    change: &crate::workbench::transcript::CellChange,
    theme: &Theme,
    expanded: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let mut header = vec![
        Span::styled("✎ ", theme.roles.title),
        Span::styled(
            sanitize::for_display(&change.shown).into_owned(),
            theme.roles.title,
        ),
    ];
    if change.earlier_unknown {
        // No counts to show; the note goes on its own wrapped lines.
        let mut lines = vec![Line::from(header)];
        let note = "changed; its earlier text is not known, so there is no diff \
                    (git diff shows it) and /undo cannot take it back";
        for row in wrap::wrap(note, width) {
            lines.push(Line::styled(row, theme.roles.muted));
        }
        return lines;
    }
    header.push(Span::styled(
        format!("  +{}", change.added),
        theme.roles.info,
    ));
    header.push(Span::styled(
        format!(" −{}", change.removed),
        theme.roles.error,
    ));
    let mut lines = vec![Line::from(header)];
    let diff: Vec<&str> = change.diff.lines().collect();
    let shown = if expanded {
        diff.len()
    } else {
        diff.len().min(COLLAPSED_DIFF_LINES)
    };
    for line in &diff[..shown] {
        let style = if line.starts_with("@@") {
            theme.roles.muted
        } else if line.starts_with('+') {
            theme.roles.info
        } else if line.starts_with('-') {
            theme.roles.error
        } else {
            theme.roles.text
        };
        for row in wrap::wrap(&sanitize::for_display(line), width) {
            lines.push(Line::styled(row, style));
        }
    }
    if shown < diff.len() {
        let more = format!("… {} more diff lines (Ctrl+O expands)", diff.len() - shown);
        for row in wrap::wrap(&more, width) {
            lines.push(Line::styled(row, theme.roles.muted));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use proptest::prelude::*;

    use super::*;
    use crate::workbench::transcript::PaneEntry;

    fn theme() -> Theme {
        Theme::builtin_default()
    }

    fn text_of(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn many_sub_calls_collapse_to_a_total_and_a_few_lines() {
        let call = |id: u64| SubcallView {
            id,
            kind: if id == 2 {
                SubcallKind::RlmQuery
            } else {
                SubcallKind::LlmQuery
            },
            model: "m".into(),
            prompt_head: format!("prompt {id}\nsecond line"),
            prompt_chars: 20,
            status: (id < 7).then_some(SubcallStatus::Ok),
            answer_head: if id < 7 {
                format!("answer {id}")
            } else {
                String::new()
            },
            answer_chars: 8,
            tokens: 10,
            elapsed_ms: 5,
            error: None,
        };
        let calls: Vec<SubcallView> = (1..=8).map(call).collect();
        let collapsed = text_of(&subcall_lines(&calls, &theme(), false, 60));
        assert_eq!(collapsed[0], "◆ 8 sub-calls · 80 tok · 2 running");
        assert_eq!(
            collapsed[1],
            "↳ ✓ 10 tok · 5 ms  prompt 1 second line → answer 1"
        );
        assert_eq!(collapsed.len(), 1 + COLLAPSED_SUBCALLS + 1);
        assert_eq!(collapsed[7], "… 2 more sub-calls (Ctrl+O expands)");
        for row in &collapsed {
            assert!(row.chars().count() <= 60, "{row}");
        }
        let expanded = text_of(&subcall_lines(&calls, &theme(), true, 60));
        assert!(
            !expanded.iter().any(|r| r.contains("answer 8")),
            "running: no answer yet"
        );
        assert!(expanded.iter().any(|r| r.starts_with("↳ #8 ● running · m")));
        assert!(
            expanded
                .iter()
                .any(|r| r.contains("answer (8 chars): answer 6"))
        );
        assert!(subcall_lines(&[], &theme(), true, 60).is_empty());
    }

    /// Entries of different heights: short prompts, Markdown with code,
    /// and a cell.
    fn conversation(entries: usize) -> Shown {
        let mut c = Shown::default();
        for i in 0..entries {
            let message = match i % 3 {
                0 => PaneEntry::new(Speaker::User, format!("question {i}")),
                1 => PaneEntry::new(
                    Speaker::Assistant,
                    format!(
                        "answer {i}\n\n```python\nx = {i}\ny = x + 1\n```\n\nand a long line that wraps around the pane {i}"
                    ),
                ),
                _ => PaneEntry::cell(i as u64, format!("print({i})")),
            };
            c.messages.push(message);
        }
        c
    }

    /// A transcript and the pane state that shows it.
    #[derive(Default)]
    struct Shown {
        messages: Transcript,
        view: HistoryPlace,
    }

    /// Every row of the history, laid out in one go.
    fn all_rows(c: &Shown, width: u16) -> Vec<String> {
        let mut whole = Shown {
            messages: c
                .messages
                .entries()
                .iter()
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
                .into(),
            view: HistoryPlace::default(),
        };
        let theme = theme();
        let mut layout = HistoryLayout::default();
        layout.prepare(
            &whole.messages,
            &mut whole.view,
            &Styling::plain(&theme),
            Rect::new(0, 0, width, u16::MAX),
        );
        text_of(&layout.paint(&whole.messages, None, &theme))
    }

    fn frame(layout: &mut HistoryLayout, c: &mut Shown, area: Rect) -> Vec<String> {
        let theme = theme();
        layout.prepare(&c.messages, &mut c.view, &Styling::plain(&theme), area);
        text_of(&layout.paint(&c.messages, None, &theme))
    }

    #[test]
    fn last_lines_counts_what_it_leaves_out() {
        assert_eq!(last_lines("a\nb\nc\nd\ne\nf", 4), (2, "c\nd\ne\nf"));
        assert_eq!(last_lines("a\nb\nc\nd", 4), (0, "a\nb\nc\nd"));
        assert_eq!(last_lines("a", 4), (0, "a"));
        assert_eq!(last_lines("", 4), (0, ""));
    }

    #[test]
    fn a_frame_lays_out_a_screenful_and_then_nothing_until_something_changes() {
        let mut c = conversation(2000);
        let mut layout = HistoryLayout::default();
        let area = Rect::new(0, 0, 60, 30);
        frame(&mut layout, &mut c, area);
        let first = layout.laid_out();
        assert!(first > 0 && first <= 10, "laid out {first} of 2000 entries");
        frame(&mut layout, &mut c, area);
        assert_eq!(layout.laid_out(), 0, "an unchanged frame lays out nothing");

        if let Some(m) = c.messages.edit(1999) {
            m.text.push_str(" more");
        }
        frame(&mut layout, &mut c, area);
        assert_eq!(layout.laid_out(), 1, "only the edited entry");

        c.view.scroll_to_top();
        let top = frame(&mut layout, &mut c, area);
        assert!(layout.laid_out() <= 10, "Ctrl+Home lays out the top only");
        assert_eq!(top[..2], ["▍you", "▏ question 0"], "{top:?}");
    }

    #[test]
    fn the_bottom_follows_new_messages_and_a_scrolled_view_stays_put() {
        let mut c = conversation(50);
        let mut layout = HistoryLayout::default();
        let area = Rect::new(0, 0, 60, 12);
        let rows = frame(&mut layout, &mut c, area);
        assert!(
            rows.last().is_some_and(|r| r.contains("pane 49")),
            "{rows:?}"
        );
        c.messages.push(PaneEntry::new(Speaker::User, "newest"));
        let rows = frame(&mut layout, &mut c, area);
        assert!(
            rows.last().is_some_and(|r| r.contains("newest")),
            "{rows:?}"
        );

        c.view.scroll_by(-20);
        let before = frame(&mut layout, &mut c, area);
        c.messages
            .push(PaneEntry::new(Speaker::User, "while reading"));
        let after = frame(&mut layout, &mut c, area);
        assert_eq!(before, after, "new messages do not move a scrolled view");

        c.view.scroll_by(1000);
        let rows = frame(&mut layout, &mut c, area);
        assert!(rows.last().is_some_and(|r| r.contains("while reading")));
        assert_eq!(
            c.view.scroll,
            HistoryScroll::Follow,
            "the bottom follows again"
        );
    }

    #[test]
    fn code_is_highlighted_once_per_block_across_frames_and_widths() {
        struct Counting(Cell<usize>);
        impl CodeStyler for Counting {
            fn style_code(&self, language: &str, code: &str) -> Vec<Vec<(Style, String)>> {
                self.0.set(self.0.get() + 1);
                PlainCode.style_code(language, code)
            }
        }
        let counting = Counting(Cell::new(0));
        let theme = theme();
        let styling = Styling {
            theme: &theme,
            code: &counting,
            code_id: 1,
        };
        let mut c = Shown::default();
        c.messages.push(PaneEntry::new(
            Speaker::Assistant,
            "```python\nx = 1\n```\n\nstreaming",
        ));
        let mut layout = HistoryLayout::default();
        layout.prepare(&c.messages, &mut c.view, &styling, Rect::new(0, 0, 60, 20));
        assert_eq!(counting.0.get(), 1);
        // A streamed delta after the block and a resize: the block's
        // highlighting is reused.
        if let Some(m) = c.messages.edit(0) {
            m.text.push_str(" more text");
        }
        layout.prepare(&c.messages, &mut c.view, &styling, Rect::new(0, 0, 60, 20));
        layout.prepare(&c.messages, &mut c.view, &styling, Rect::new(0, 0, 40, 20));
        assert_eq!(counting.0.get(), 1, "highlighted once");
        if let Some(m) = c.messages.edit(0) {
            m.text.push_str("\n\n```ts\nlet y = 2;\n```");
        }
        layout.prepare(&c.messages, &mut c.view, &styling, Rect::new(0, 0, 40, 20));
        assert_eq!(counting.0.get(), 2, "only the new block");
    }

    proptest! {
        /// Any sequence of scrolls shows exactly the rows a whole layout
        /// has at that offset, clamped at both ends.
        #[test]
        fn scrolling_shows_the_rows_of_the_whole_layout(
            entries in 1usize..40,
            height in 1u16..25,
            width in 8u16..70,
            steps in proptest::collection::vec(-60isize..60, 1..12),
        ) {
            let mut c = conversation(entries);
            let all = all_rows(&c, width);
            let area = Rect::new(0, 0, width, height);
            let h = height as usize;
            let max_offset = all.len().saturating_sub(h);
            let mut layout = HistoryLayout::default();
            let mut offset = max_offset;
            prop_assert_eq!(frame(&mut layout, &mut c, area), all[offset..].to_vec());
            for step in steps {
                c.view.scroll_by(step);
                offset = (offset as isize + step).clamp(0, max_offset as isize) as usize;
                let rows = frame(&mut layout, &mut c, area);
                prop_assert_eq!(&rows, &all[offset..(offset + h).min(all.len())].to_vec());
                prop_assert_eq!(c.view.scroll == HistoryScroll::Follow, offset == max_offset);
            }
        }
    }
}

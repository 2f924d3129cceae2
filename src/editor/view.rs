//! The file-view widget: line-number gutter, syntax colours, cursor line,
//! cursor cell, selection, search matches, horizontal scroll and a notice
//! row. `Document::prepare_frame` does all mutation (viewport, highlight
//! cache) before drawing; `render_file_view` is a pure function of state.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};

use ropey::RopeSlice;

use super::document::{DiskState, Document, line_text};
use super::grapheme::Graphemes;
use super::highlight::{Highlighter, StyledLine};
use super::marks::LONG_LINE;
use super::width::{
    CONTROL_GLYPH, Glyph, Piece, char_at_col_from, cluster_cells, display_col_from, glyph, pieces,
};

/// Styles of the file view; the app maps its theme into this. Set `cursor`
/// to `Style::default()` to hide the cursor cell in an unfocused pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileViewStyles {
    /// Base text colours of the pane.
    pub text: Style,
    pub gutter: Style,
    pub gutter_cursor_line: Style,
    /// Patched over the cursor row (usually a background).
    pub cursor_line: Style,
    pub cursor: Style,
    pub selection: Style,
    pub search_match: Style,
    /// Read-only, binary and invalid UTF-8 notices.
    pub notice: Style,
    /// Changed or deleted on disk.
    pub conflict: Style,
}

impl FileViewStyles {
    pub fn dark() -> Self {
        Self {
            text: Style::default()
                .fg(Color::Rgb(0xc0, 0xc5, 0xce))
                .bg(Color::Rgb(0x2b, 0x30, 0x3b)),
            gutter: Style::default().fg(Color::Rgb(0x65, 0x73, 0x7e)),
            gutter_cursor_line: Style::default().fg(Color::Rgb(0xc0, 0xc5, 0xce)),
            cursor_line: Style::default().bg(Color::Rgb(0x34, 0x3d, 0x46)),
            cursor: Style::default().add_modifier(Modifier::REVERSED),
            selection: Style::default().bg(Color::Rgb(0x4f, 0x5b, 0x66)),
            search_match: Style::default().bg(Color::Rgb(0x6b, 0x5b, 0x1f)),
            notice: Style::default().fg(Color::Black).bg(Color::Yellow),
            conflict: Style::default().fg(Color::White).bg(Color::Red),
        }
    }
}

/// Where the parts of the file view go inside its area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewLayout {
    pub notice: Option<Rect>,
    pub gutter: Rect,
    pub text: Rect,
}

/// Split `area` into notice row, gutter and text for `doc`.
pub fn layout(doc: &Document, area: Rect) -> ViewLayout {
    let mut body = area;
    let notice = doc.notice().filter(|_| area.height > 0).map(|_| {
        body.y += 1;
        body.height -= 1;
        Rect { height: 1, ..area }
    });
    let digits = doc.line_count().max(1).to_string().len().max(3) as u16;
    let gutter_w = if area.width > digits + 2 {
        digits + 1
    } else {
        0
    };
    ViewLayout {
        notice,
        gutter: Rect {
            width: gutter_w,
            ..body
        },
        text: Rect {
            x: body.x + gutter_w,
            width: body.width - gutter_w,
            ..body
        },
    }
}

impl Document {
    /// One line telling the user why the view is special, if it is.
    pub fn notice(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(reason) = &self.read_only {
            parts.push(reason.to_string());
        }
        match &self.disk_state {
            DiskState::InSync => {}
            DiskState::ChangedOnDisk { .. } => parts.push(
                "changed on disk: your edits are kept · Ctrl+R: keep mine, load theirs or diff"
                    .to_string(),
            ),
            DiskState::DeletedOnDisk => {
                parts.push("deleted on disk: saving recreates it".to_string())
            }
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }

    /// Update the viewport for `area` (keeping the cursor visible unless
    /// the user scrolled away) and highlight what will be visible. Call
    /// before every draw; returns `needs_more_work()`.
    pub fn prepare_frame(&mut self, hl: &Highlighter, area: Rect) -> bool {
        let text = layout(self, area).text;
        let (h, w) = (usize::from(text.height), usize::from(text.width));
        self.viewport.height = h;
        self.viewport.width = w;
        let (line, col) = self.cursor();
        let tab = self.tab_width();
        let center = std::mem::take(&mut self.viewport.center_jump);
        if self.viewport.follow_cursor {
            let vp = &mut self.viewport;
            // Rows under an overlay do not count as in view (a row or more
            // stays visible whatever covers the top).
            let covered = vp.covered_top.min(h.saturating_sub(1));
            let outside = line < vp.top + covered || line >= vp.top + h;
            if center && outside {
                vp.top = line.saturating_sub(covered + (h - covered) / 2);
            } else if line < vp.top + covered {
                vp.top = line.saturating_sub(covered);
            } else if h > 0 && line >= vp.top + h {
                vp.top = line + 1 - h;
            }
            let text = line_text(&self.rope, line);
            self.marks
                .keep(self.viewport.top..self.viewport.top + h.max(1), tab);
            self.marks.extend(line, text, col, 0);
            let cx = display_col_from(text, self.marks.before_char(line, col), col, tab);
            let vp = &mut self.viewport;
            if cx < vp.left {
                // Half a view of what lies before the cursor comes with it
                // (vim's `sidescroll=0`): landing on a short line from a long
                // one shows that line from its start, not an empty strip at
                // the cursor's column.
                vp.left = cx.saturating_sub(w / 2);
            } else if w > 0 && cx >= vp.left + w {
                vp.left = cx + 1 - w;
            }
        }
        // Long visible lines get marks up to the right edge of the view.
        let top = self.viewport.top;
        self.marks.keep(top..top + h.max(1), tab);
        for n in top..(top + h).min(self.line_count()) {
            let text = line_text(&self.rope, n);
            if text.len_chars() >= LONG_LINE {
                self.marks.extend(n, text, 0, self.viewport.left + w);
            }
        }
        self.viewport.top = self.viewport.top.min(self.line_count().saturating_sub(1));
        if self.is_binary() {
            return false;
        }
        let top = self.viewport.top;
        self.highlight
            .prepare(hl, &self.path, &self.rope, top..top + h)
    }

    /// The last `prepare_frame` stopped early: request another frame.
    pub fn needs_more_work(&self) -> bool {
        self.highlight.needs_more_work()
    }

    /// Waits for the background highlighting pass (see `HighlightCache::
    /// finish_pass`); the next `prepare_frame` shows its exact colours.
    /// For tests and measurements: the UI loop never waits.
    pub fn finish_highlight_pass(&mut self) {
        self.highlight.finish_pass();
    }

    /// Caps on highlighting work per `prepare_frame` (defaults: 2000 lines,
    /// 12 ms); whichever is hit first ends the frame's highlighting. The
    /// pass to a far view runs in the background and is not capped.
    pub fn set_highlight_budget(&mut self, lines_per_frame: usize, time_per_frame: Duration) {
        self.highlight.max_lines_per_frame = lines_per_frame.max(1);
        self.highlight.max_time_per_frame = time_per_frame;
    }

    /// Scroll the view by `lines` (mouse wheel) without moving the cursor.
    pub fn scroll_by(&mut self, lines: isize) {
        let max = self.line_count().saturating_sub(1);
        let top = self.viewport.top.saturating_add_signed(lines).min(max);
        self.viewport.top = top;
        self.viewport.follow_cursor = false;
    }

    /// Text position drawn at screen cell (`column`, `row`) of a view drawn
    /// in `area`; None on the notice row or outside the area.
    pub(crate) fn position_at(&self, area: Rect, column: u16, row: u16) -> Option<(usize, usize)> {
        let l = layout(self, area);
        if l.notice
            .is_some_and(|n| n.contains(Position::new(column, row)))
            || column < area.x
            || column >= area.right()
        {
            return None;
        }
        // Rows above/below the text scroll (dragging past the edge).
        let line = if row < l.text.y {
            self.viewport.top.checked_sub(1)?
        } else {
            self.viewport.top + usize::from(row - l.text.y).min(usize::from(l.text.height))
        };
        let line = line.min(self.line_count().saturating_sub(1));
        let col = if column < l.text.x {
            0
        } else {
            let want = self.viewport.left + usize::from(column - l.text.x);
            let from = self.marks.before_col(line, want);
            char_at_col_from(line_text(&self.rope, line), from, want, self.tab_width())
        };
        Some((line, col))
    }

    /// Mouse press at a screen cell: put the cursor there; `extend` (Shift)
    /// extends the selection instead.
    pub fn click(&mut self, area: Rect, column: u16, row: u16, extend: bool) {
        if let Some(pos) = self.position_at(area, column, row) {
            self.preferred_col = None;
            self.history.seal();
            self.viewport.follow_cursor = true;
            self.set_cursor(pos, extend);
        }
    }

    /// Mouse drag to a screen cell: select from the press point to here.
    pub fn drag_to(&mut self, area: Rect, column: u16, row: u16) {
        self.click(area, column, row, true);
    }
}

/// Screen cell of the cursor in a view drawn in `area` (for the terminal
/// cursor / IME), None when scrolled out of view.
pub fn cursor_screen_position(doc: &Document, area: Rect) -> Option<Position> {
    let text = layout(doc, area).text;
    let (line, col) = doc.cursor();
    let vp = doc.viewport();
    let from = doc.marks.before_char(line, col);
    let cx = display_col_from(line_text(doc.rope(), line), from, col, doc.tab_width());
    let row = line.checked_sub(vp.top)?;
    let x = cx.checked_sub(vp.left)?;
    (row < usize::from(text.height) && x < usize::from(text.width))
        .then(|| Position::new(text.x + x as u16, text.y + row as u16))
}

/// Draw `doc` into `area`. Pure: reads the state `prepare_frame` left.
pub fn render_file_view(doc: &Document, styles: &FileViewStyles, area: Rect, buf: &mut Buffer) {
    let area = area.intersection(buf.area);
    if area.is_empty() {
        return;
    }
    buf.set_style(area, styles.text);
    let l = layout(doc, area);
    if let (Some(rect), Some(notice)) = (l.notice, doc.notice()) {
        let style = if matches!(doc.disk_state(), DiskState::InSync) {
            styles.notice
        } else {
            styles.conflict
        };
        buf.set_style(rect, style);
        buf.set_stringn(
            rect.x + 1,
            rect.y,
            notice,
            usize::from(rect.width.saturating_sub(1)),
            style,
        );
    }
    if doc.is_binary() {
        return;
    }
    let vp = doc.viewport();
    let (cur_line, cur_col) = doc.cursor();
    let selection = doc.selection();
    for row in 0..l.text.height {
        let idx = vp.top + usize::from(row);
        if idx >= doc.line_count() {
            break;
        }
        let line = line_text(doc.rope(), idx);
        let y = l.text.y + row;
        let is_cursor_line = idx == cur_line;
        if l.gutter.width > 0 {
            let style = if is_cursor_line {
                styles.gutter_cursor_line
            } else {
                styles.gutter
            };
            let num = format!("{:>w$} ", idx + 1, w = usize::from(l.gutter.width - 1));
            buf.set_stringn(
                l.gutter.x,
                y,
                num,
                usize::from(l.gutter.width),
                styles.text.patch(style),
            );
        }
        let row_rect = Rect {
            y,
            height: 1,
            ..l.text
        };
        if is_cursor_line {
            buf.set_style(row_rect, styles.cursor_line);
        }
        let sel = selection.and_then(|((sl, sc), (el, ec))| {
            (sl..=el).contains(&idx).then(|| {
                let start = if idx == sl { sc } else { 0 };
                // Past the end of a non-final selected line, show the
                // selected line break as one extra cell.
                let end = if idx == el { ec } else { usize::MAX };
                (start, end)
            })
        });
        let matches = doc
            .search
            .as_ref()
            .map(|q| q.in_line(&std::borrow::Cow::<str>::from(line)))
            .unwrap_or_default();
        let line_view = LineView {
            text: line,
            start: doc.marks.before_col(idx, vp.left),
            styled: doc.highlight.line(idx),
            selection: sel,
            matches: &matches,
            tab: doc.tab_width(),
            left: vp.left,
        };
        line_view.draw(buf, row_rect, styles);
        if is_cursor_line {
            let from = doc.marks.before_char(idx, cur_col);
            let cx = display_col_from(line, from, cur_col, doc.tab_width());
            if let Some(x) = cx
                .checked_sub(vp.left)
                .filter(|x| *x < usize::from(row_rect.width))
            {
                let cell = &mut buf[(row_rect.x + x as u16, y)];
                cell.set_style(styles.cursor);
            }
        }
    }
}

/// One line's drawing inputs.
struct LineView<'a> {
    text: RopeSlice<'a>,
    /// Where drawing starts: a cluster boundary (char, display column) at
    /// or before the left edge (a column mark on a long line, else 0, 0).
    start: (usize, usize),
    styled: Option<&'a StyledLine>,
    selection: Option<(usize, usize)>,
    matches: &'a [(usize, usize)],
    tab: usize,
    left: usize,
}

/// What one drawn piece of a line shows in its first cell.
#[derive(Clone, Copy)]
enum Symbol<'a> {
    Text(&'a str),
    /// The replacement cell of a control or invisible character.
    Mark,
    /// Spaces (a tab).
    Blank,
}

/// Where a row's cells go: the view's columns `left..right` at screen row
/// `y` from screen column `x0`, in `style`.
struct Cells {
    left: usize,
    right: usize,
    y: u16,
    x0: u16,
    style: Style,
}

impl Cells {
    /// Draws `symbol`, `width` cells wide, at display column `col`. A wide
    /// symbol cut by either edge draws as spaces; the cells after a wide
    /// symbol's first hold nothing, as ratatui expects.
    fn put(&self, buf: &mut Buffer, col: usize, symbol: Symbol<'_>, width: usize) {
        let whole = col >= self.left && col + width <= self.right;
        for k in 0..width {
            let at = col + k;
            if at < self.left || at >= self.right {
                continue;
            }
            let cell = &mut buf[(self.x0 + (at - self.left) as u16, self.y)];
            match symbol {
                Symbol::Text(text) if k == 0 && whole => cell.set_symbol(text),
                Symbol::Mark if k == 0 && whole => cell.set_char(CONTROL_GLYPH),
                Symbol::Text(_) | Symbol::Mark if k > 0 && whole => cell.set_symbol(""),
                _ => cell.set_char(' '),
            };
            cell.set_style(self.style);
        }
    }
}

impl LineView<'_> {
    /// Draws cluster by cluster from `start` to the right edge of the
    /// view, and stops there: on a long line only the part around the view
    /// is read.
    fn draw(&self, buf: &mut Buffer, rect: Rect, styles: &FileViewStyles) {
        let width = usize::from(rect.width);
        let right = self.left + width;
        let mut ranges = self.styled.map(|v| v.iter().peekable());
        let (mut i, mut col) = self.start;
        let i0 = i.min(self.text.len_chars());
        let mut byte = self.text.char_to_byte(i0);
        for cluster in Graphemes::new(self.text.slice(i0..)) {
            if col >= right {
                break;
            }
            let w = cluster_cells(&cluster, col, self.tab);
            let mut style = Style::default();
            if let Some(it) = ranges.as_mut() {
                while it.peek().is_some_and(|(_, r)| r.end <= byte) {
                    it.next();
                }
                if let Some((s, r)) = it.peek()
                    && r.contains(&byte)
                {
                    style = *s;
                }
            }
            if self.matches.iter().any(|(s, e)| (*s..*e).contains(&i)) {
                style = style.patch(styles.search_match);
            }
            if self.selection.is_some_and(|(s, e)| i >= s && i < e) {
                style = style.patch(styles.selection);
            }
            let cells = Cells {
                left: self.left,
                right,
                y: rect.y,
                x0: rect.x,
                style,
            };
            match glyph(&cluster) {
                Glyph::Text => cells.put(buf, col, Symbol::Text(&cluster), w),
                Glyph::Replaced => cells.put(buf, col, Symbol::Mark, w),
                Glyph::Tab => cells.put(buf, col, Symbol::Blank, w),
                Glyph::Split => {
                    let mut at = col;
                    for piece in pieces(&cluster) {
                        let symbol = match piece {
                            Piece::Text(text, _) => Symbol::Text(text),
                            Piece::Mark => Symbol::Mark,
                        };
                        cells.put(buf, at, symbol, piece.width());
                        at += piece.width();
                    }
                }
            }
            col += w;
            byte += cluster.len();
            i += cluster.chars().count();
        }
        // The selected line break, one cell after the text.
        if let Some((s, e)) = self.selection
            && e == usize::MAX
            && col < right
            && i >= s
            && col >= self.left
        {
            let x = rect.x + (col - self.left) as u16;
            buf[(x, rect.y)].set_style(styles.selection);
        }
    }
}

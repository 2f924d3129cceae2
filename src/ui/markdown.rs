//! Markdown to terminal lines for the conversation: headings, emphasis,
//! inline code, links, lists, quotes, rules, tables and fenced code blocks
//! (highlighted through a [`CodeStyler`]). Everything is laid out for a given
//! width, with wide characters counted as two cells.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::sanitize;
use crate::theme::Theme;

/// Turns a code block into styled lines. The file view's syntect
/// highlighter implements it; [`PlainCode`] is the fallback.
pub trait CodeStyler {
    /// One entry per line of `code`: styled fragments in order.
    fn style_code(&self, language: &str, code: &str) -> Vec<Vec<(Style, String)>>;
}

/// Code without syntax colours.
pub struct PlainCode;

impl CodeStyler for PlainCode {
    fn style_code(&self, _language: &str, code: &str) -> Vec<Vec<(Style, String)>> {
        code.lines()
            .map(|l| vec![(Style::default(), l.to_owned())])
            .collect()
    }
}

/// Renders `text` as Markdown into lines at most `width` cells wide.
pub fn render(
    text: &str,
    width: usize,
    theme: &Theme,
    code: &dyn CodeStyler,
) -> Vec<Line<'static>> {
    let text = sanitize::for_display(text);
    let mut r = Renderer::new(width.max(4), theme, code);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(&text, options) {
        r.event(event);
    }
    r.flush_paragraph();
    while r.out.last().is_some_and(|l| l.width() == 0) {
        r.out.pop();
    }
    r.out
}

struct ListState {
    next_number: Option<u64>,
}

#[derive(Default)]
struct TableState {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
    in_header: bool,
}

struct Renderer<'a> {
    width: usize,
    theme: &'a Theme,
    code: &'a dyn CodeStyler,
    out: Vec<Line<'static>>,
    /// Inline content of the paragraph or heading being built.
    spans: Vec<Span<'static>>,
    style_stack: Vec<Style>,
    lists: Vec<ListState>,
    /// Marker for the next list item's first line ("• ", "3. ").
    pending_marker: Option<String>,
    quote_depth: usize,
    code_block: Option<(String, String)>,
    link_urls: Vec<String>,
    table: Option<TableState>,
}

impl<'a> Renderer<'a> {
    fn new(width: usize, theme: &'a Theme, code: &'a dyn CodeStyler) -> Self {
        Self {
            width,
            theme,
            code,
            out: Vec::new(),
            spans: Vec::new(),
            style_stack: vec![theme.roles.text],
            lists: Vec::new(),
            pending_marker: None,
            quote_depth: 0,
            code_block: None,
            link_urls: Vec::new(),
            table: None,
        }
    }

    fn style(&self) -> Style {
        self.style_stack.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, patch: Style) {
        let style = self.style().patch(patch);
        self.style_stack.push(style);
    }

    fn pop_style(&mut self) {
        if self.style_stack.len() > 1 {
            self.style_stack.pop();
        }
    }

    fn blank_line(&mut self) {
        if self.out.last().is_some_and(|l| l.width() > 0) {
            self.out.push(Line::default());
        }
    }

    /// Indentation for quotes and nested lists, as (first line, other lines).
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut base = Vec::new();
        for _ in 0..self.quote_depth {
            base.push(Span::styled("│ ", self.theme.roles.muted));
        }
        let list_indent = self.lists.len().saturating_sub(1) * 2;
        if !self.lists.is_empty() {
            base.push(Span::raw(" ".repeat(list_indent)));
        }
        match self.pending_marker.take() {
            Some(marker) => {
                let hang = " ".repeat(marker.width());
                let mut first = base.clone();
                first.push(Span::styled(marker, self.theme.roles.muted));
                let mut rest = base;
                rest.push(Span::raw(hang));
                (first, rest)
            }
            None if !self.lists.is_empty() => {
                // Continuation paragraphs of an item line up with its text.
                let mut rest = base;
                rest.push(Span::raw("  "));
                (rest.clone(), rest)
            }
            None => (base.clone(), base),
        }
    }

    fn flush_paragraph(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.spans);
        let (first, rest) = self.prefixes();
        let lines = wrap_spans(spans, self.width, first, rest);
        self.out.extend(lines);
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(table) = &mut self.table
            && let Some(done) = table_event(table, &event, self.theme)
        {
            if done {
                self.finish_table();
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                if let Some((_, code)) = &mut self.code_block {
                    code.push_str(&text);
                } else {
                    self.spans
                        .push(Span::styled(text.into_string(), self.style()));
                }
            }
            Event::Code(text) => {
                let style = self.style().patch(self.theme.roles.info);
                self.spans.push(Span::styled(format!("`{text}`"), style));
            }
            Event::SoftBreak => self.spans.push(Span::styled(" ", self.style())),
            Event::HardBreak => {
                self.flush_paragraph();
            }
            Event::Rule => {
                self.flush_paragraph();
                self.blank_line();
                self.out
                    .push(Line::styled("─".repeat(self.width), self.theme.roles.muted));
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                self.spans
                    .push(Span::styled(html.into_string(), self.theme.roles.muted));
            }
            Event::TaskListMarker(done) => {
                self.spans.push(Span::styled(
                    if done { "[x] " } else { "[ ] " },
                    self.style(),
                ));
            }
            Event::FootnoteReference(_) | Event::InlineMath(_) | Event::DisplayMath(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_paragraph();
                self.blank_line();
                let mut style = self.theme.roles.focused_title.add_modifier(Modifier::BOLD);
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.style_stack.push(style);
            }
            Tag::BlockQuote(_) => {
                self.flush_paragraph();
                self.quote_depth += 1;
                self.push_style(self.theme.roles.muted);
            }
            Tag::CodeBlock(kind) => {
                self.flush_paragraph();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code_block = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush_paragraph();
                if self.lists.is_empty() {
                    self.blank_line();
                }
                self.lists.push(ListState { next_number: start });
            }
            Tag::Item => {
                self.flush_paragraph();
                let marker = match self.lists.last_mut() {
                    Some(ListState {
                        next_number: Some(n),
                    }) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                self.pending_marker = Some(marker);
            }
            Tag::Emphasis => self.push_style(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.link_urls.push(dest_url.into_string());
                self.push_style(self.theme.roles.info.add_modifier(Modifier::UNDERLINED));
            }
            Tag::Table(alignments) => {
                self.flush_paragraph();
                self.blank_line();
                self.table = Some(TableState {
                    alignments,
                    ..TableState::default()
                });
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_paragraph();
                if self.lists.is_empty() {
                    self.out.push(Line::default());
                }
            }
            TagEnd::Heading(_) => {
                self.flush_paragraph();
                self.pop_style();
                self.out.push(Line::default());
            }
            TagEnd::BlockQuote(_) => {
                self.flush_paragraph();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.pop_style();
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code_block.take() {
                    self.code_block_lines(&language, &code);
                }
            }
            TagEnd::List(_) => {
                self.flush_paragraph();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.out.push(Line::default());
                }
            }
            TagEnd::Item => self.flush_paragraph(),
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link_urls.pop()
                    && !url.is_empty()
                {
                    self.spans
                        .push(Span::styled(format!(" ({url})"), self.theme.roles.muted));
                }
            }
            _ => {}
        }
    }

    /// A code block: a gutter bar, the language on top, long lines broken
    /// (never cut: the model's code must be readable whole).
    fn code_block_lines(&mut self, language: &str, code: &str) {
        let (indent, _) = self.prefixes();
        let indent_width: usize = indent.iter().map(|s| s.width()).sum();
        let room = self.width.saturating_sub(indent_width);
        if !language.is_empty() {
            // The info string is the model's text too: cleaned, and cut to
            // the pane rather than spilling past its edge.
            let label = format!("▎{}", sanitize::for_display(language));
            let mut head = indent.clone();
            head.extend(crate::screen::wrap::fit(
                &[Span::styled(label, self.theme.roles.muted)],
                room,
            ));
            self.out.push(Line::from(head));
        }
        for line in code_lines(language, code, room, self.theme, self.code) {
            let mut spans = indent.clone();
            spans.extend(line.spans);
            self.out.push(Line::from(spans));
        }
        if self.lists.is_empty() {
            self.out.push(Line::default());
        }
    }

    fn finish_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        self.out
            .extend(layout_table(&table, self.width, self.theme));
        self.out.push(Line::default());
    }
}

/// Code with a gutter bar, highlighted by `styler`, long lines broken at
/// `width` cells (never cut: code must be readable whole). Also used for
/// the code of tool cells.
pub(crate) fn code_lines(
    language: &str,
    code: &str,
    width: usize,
    theme: &Theme,
    styler: &dyn CodeStyler,
) -> Vec<Line<'static>> {
    let gutter = Span::styled("▎", theme.roles.muted);
    code_rows(language, code, width, styler)
        .into_iter()
        .map(|row| {
            let mut spans = vec![gutter.clone()];
            spans.extend(row);
            Line::from(spans)
        })
        .collect()
}

/// The rows [`code_lines`] draws, without their gutter: what counts them
/// (the approval overlay's scrolling) breaks lines exactly as drawing does.
pub(crate) fn code_rows(
    language: &str,
    code: &str,
    width: usize,
    styler: &dyn CodeStyler,
) -> Vec<Vec<Span<'static>>> {
    let code = sanitize::for_display(code);
    let room = width.saturating_sub(1).max(1);
    let mut out = Vec::new();
    for fragments in styler.style_code(language, code.trim_end_matches('\n')) {
        let spans = fragments
            .into_iter()
            .map(|(style, text)| Span::styled(text.replace('\t', "    "), style))
            .collect();
        out.extend(hard_wrap(spans, room));
    }
    out
}

/// Feeds table events; returns `Some(true)` at the end of the table,
/// `Some(false)` when the event was consumed, `None` when it is not a table
/// event (inline text is collected into the current cell instead).
fn table_event(table: &mut TableState, event: &Event<'_>, theme: &Theme) -> Option<bool> {
    match event {
        Event::Start(Tag::TableHead) => {
            table.in_header = true;
            table.rows.push(Vec::new());
        }
        Event::End(TagEnd::TableHead) => {
            table.in_header = false;
            table.header_rows = table.rows.len();
        }
        Event::Start(Tag::TableRow) => table.rows.push(Vec::new()),
        Event::Start(Tag::TableCell) => {
            if let Some(row) = table.rows.last_mut() {
                row.push(Vec::new());
            }
        }
        Event::End(TagEnd::Table) => return Some(true),
        Event::Text(text) | Event::Code(text) => {
            let style = if table.in_header {
                theme.roles.title
            } else if matches!(event, Event::Code(_)) {
                theme.roles.info
            } else {
                theme.roles.text
            };
            if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                cell.push(Span::styled(text.to_string(), style));
            }
        }
        Event::SoftBreak | Event::HardBreak => {
            if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                cell.push(Span::raw(" "));
            }
        }
        _ => {}
    }
    Some(false)
}

/// Columns get their natural width; when the table is too wide, the widest
/// columns shrink first and their cells are cut with an ellipsis.
fn layout_table(table: &TableState, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let cell_width = |cell: &Vec<Span<'static>>| cell.iter().map(|s| s.width()).sum::<usize>();
    let mut widths = vec![1usize; columns];
    for row in &table.rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell_width(cell));
        }
    }
    let separators = 3 * (columns - 1);
    let room = width.saturating_sub(separators).max(columns);
    while widths.iter().sum::<usize>() > room {
        let Some(widest) = (0..columns).max_by_key(|i| widths[*i]) else {
            break;
        };
        if widths[widest] <= 1 {
            break;
        }
        widths[widest] -= 1;
    }
    let border = theme.roles.muted;
    let mut out = Vec::new();
    for (r, row) in table.rows.iter().enumerate() {
        let mut spans = Vec::new();
        for (i, w) in widths.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" │ ", border));
            }
            let empty = Vec::new();
            let cell = row.get(i).unwrap_or(&empty);
            let fitted = crate::screen::wrap::fit(cell, *w);
            let pad = w.saturating_sub(fitted.iter().map(|s| s.width()).sum());
            let align = table.alignments.get(i).copied().unwrap_or(Alignment::None);
            let (left, right) = match align {
                Alignment::Right => (pad, 0),
                Alignment::Center => (pad / 2, pad - pad / 2),
                _ => (0, pad),
            };
            spans.push(Span::raw(" ".repeat(left)));
            spans.extend(fitted);
            spans.push(Span::raw(" ".repeat(right)));
        }
        out.push(Line::from(spans));
        if r + 1 == table.header_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::styled(rule.join("─┼─"), border));
        }
    }
    out
}

/// Greedy word wrap of styled spans: words never split unless longer than
/// the line; the first line gets `first` as prefix, the rest `rest`.
pub(crate) fn wrap_spans(
    spans: Vec<Span<'static>>,
    width: usize,
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
) -> Vec<Line<'static>> {
    // Split into words and single spaces, each keeping its style.
    let mut pieces: Vec<(String, Style)> = Vec::new();
    for span in spans {
        let mut word = String::new();
        for c in span.content.chars() {
            if c == ' ' || c == '\n' {
                if !word.is_empty() {
                    pieces.push((std::mem::take(&mut word), span.style));
                }
                pieces.push((" ".into(), span.style));
            } else {
                word.push(c);
            }
        }
        if !word.is_empty() {
            pieces.push((word, span.style));
        }
    }
    let mut lines = Vec::new();
    let mut prefix = first;
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    let prefix_width = |p: &Vec<Span<'static>>| p.iter().map(|s| s.width()).sum::<usize>();
    let mut room = width.saturating_sub(prefix_width(&prefix)).max(1);
    for (text, style) in pieces {
        let w = text.width();
        if text == " " {
            if used > 0 && used < room {
                current.push(Span::styled(text, style));
                used += 1;
            }
            continue;
        }
        if used + w > room && used > 0 {
            trim_trailing_space(&mut current);
            let mut line = std::mem::replace(&mut prefix, rest.clone());
            line.append(&mut current);
            lines.push(Line::from(line));
            used = 0;
            room = width.saturating_sub(prefix_width(&prefix)).max(1);
        }
        if w > room {
            // A word longer than a line is broken by cells.
            for chunk in hard_wrap(vec![Span::styled(text, style)], room) {
                if used > 0 {
                    let mut line = std::mem::replace(&mut prefix, rest.clone());
                    line.append(&mut current);
                    lines.push(Line::from(line));
                    room = width.saturating_sub(prefix_width(&prefix)).max(1);
                }
                used = chunk.iter().map(|s| s.width()).sum();
                current = chunk;
            }
            continue;
        }
        current.push(Span::styled(text, style));
        used += w;
    }
    trim_trailing_space(&mut current);
    let mut line = prefix;
    line.append(&mut current);
    lines.push(Line::from(line));
    lines
}

fn trim_trailing_space(spans: &mut Vec<Span<'static>>) {
    while spans.last().is_some_and(|s| s.content == " ") {
        spans.pop();
    }
}

/// Breaks styled text into rows of at most `width` cells, by character.
fn hard_wrap(spans: Vec<Span<'static>>, width: usize) -> Vec<Vec<Span<'static>>> {
    let width = width.max(2);
    let mut rows = vec![Vec::new()];
    let mut used = 0;
    for span in spans {
        let mut text = String::new();
        for c in span.content.chars() {
            let w = c.width().unwrap_or(0);
            if used + w > width {
                if !text.is_empty()
                    && let Some(row) = rows.last_mut()
                {
                    row.push(Span::styled(std::mem::take(&mut text), span.style));
                }
                rows.push(Vec::new());
                used = 0;
            }
            used += w;
            text.push(c);
        }
        if !text.is_empty()
            && let Some(row) = rows.last_mut()
        {
            row.push(Span::styled(text, span.style));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn md(text: &str, width: usize) -> Vec<String> {
        plain(&render(text, width, &Theme::builtin_default(), &PlainCode))
    }

    #[test]
    fn paragraphs_wrap_and_keep_styles() {
        let theme = Theme::builtin_default();
        let lines = render("Some **bold** and `code` here", 12, &theme, &PlainCode);
        assert_eq!(plain(&lines), ["Some bold", "and `code`", "here"]);
        let bold = lines[0].spans.iter().find(|s| s.content == "bold").unwrap();
        assert!(bold.style.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn lists_hang_their_text() {
        let lines = md("- first item that wraps\n- second\n\n1. one\n2. two", 14);
        assert_eq!(lines[0], "• first item");
        assert_eq!(lines[1], "  that wraps");
        assert_eq!(lines[2], "• second");
        assert!(lines.contains(&"1. one".to_owned()));
        assert!(lines.contains(&"2. two".to_owned()));
    }

    #[test]
    fn code_blocks_keep_lines_and_break_long_ones() {
        let lines = md(
            "```python\nx = 1\nprint('a very long line of code')\n```",
            16,
        );
        assert_eq!(lines[0], "▎python");
        assert_eq!(lines[1], "▎x = 1");
        assert!(lines[2].starts_with("▎print("));
        assert!(lines.iter().all(|l| l.width() <= 16), "{lines:?}");
    }

    #[test]
    fn tables_align_columns() {
        let lines = md("| name | n |\n|---|--:|\n| auth | 3 |\n| api | 12 |", 40);
        assert_eq!(lines[0], "name │  n");
        assert_eq!(lines[1], "─────┼───");
        assert_eq!(lines[2], "auth │  3");
        assert_eq!(lines[3], "api  │ 12");
    }

    #[test]
    fn narrow_tables_are_cut_not_overflowing() {
        let lines = md(
            "| a long header | another long header |\n|---|---|\n| x | y |",
            20,
        );
        assert!(lines.iter().all(|l| l.width() <= 20), "{lines:?}");
        assert!(lines[0].contains('…'));
    }

    #[test]
    fn links_show_their_target_and_headings_stand_out() {
        let lines = md("# Title\n\nsee [docs](https://example.com)", 60);
        assert_eq!(lines[0], "Title");
        assert!(lines.contains(&"see docs (https://example.com)".to_owned()));
    }

    #[test]
    fn wide_characters_wrap_by_cells() {
        let lines = md("你好世界 你好世界 你好世界", 10);
        assert!(lines.iter().all(|l| l.width() <= 10), "{lines:?}");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn escape_sequences_never_survive() {
        let lines = md("hi \u{1b}]0;title\u{7}there\n\n```\n\u{1b}[2Jboom\n```", 40);
        assert!(lines.iter().all(|l| !l.contains('\u{1b}')), "{lines:?}");
    }
}

//! The file view: a tab bar over the active document, drawn by the editor
//! core's widget with the theme's colours. Until a file is open it says how
//! to open one.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::pane;
use crate::app::AppState;
use crate::editor::{Document, FileViewStyles, render_file_view};
use crate::keymap::PaneId;
use crate::screen;
use crate::theme::Theme;

/// Scrolls the viewport to the cursor and highlights what will be visible
/// (bounded work per frame; the loop asks for another frame while
/// `needs_more_work`).
pub fn prepare(state: &mut AppState) {
    let screen = Rect::new(0, 0, state.size.width, state.size.height);
    let Some(rect) = crate::screen::layout::compute(screen, state.focus).rect(PaneId::FileView)
    else {
        return;
    };
    let area = screen::file_view::text_area(rect);
    let Some(hl) = state.highlighter.clone() else {
        return;
    };
    if let Some(doc) = state.editors.active_mut() {
        doc.prepare_frame(&hl, area);
    }
}

/// The theme's roles as the widget's styles; syntect keeps its colours.
pub fn styles(theme: &Theme, focused: bool) -> FileViewStyles {
    let r = &theme.roles;
    let base = FileViewStyles::dark();
    FileViewStyles {
        text: r.text,
        gutter: r.line_number,
        gutter_cursor_line: r.text,
        cursor_line: r.cursor_line,
        cursor: if focused { r.cursor } else { Style::default() },
        selection: r.selection,
        search_match: r.match_highlight,
        notice: if r.warning == Style::default() {
            base.notice
        } else {
            r.warning.reversed()
        },
        conflict: if r.error == Style::default() {
            base.conflict
        } else {
            r.error.reversed()
        },
    }
}

pub fn render(state: &AppState, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let Some(doc) = state.editors.active() else {
        let block = pane::block(Line::from("No file"), Some('2'), focused, theme);
        let inner = block.inner(area);
        block.render(area, buf);
        pane::empty_state("No file open. Ctrl+P opens one.", theme, inner, buf);
        return;
    };
    let mut title = vec![Span::raw(state.display_path(doc.path()))];
    if doc.is_dirty() {
        title.push(Span::styled(" ●", theme.roles.dirty_marker));
    }
    if doc.read_only_reason().is_some() {
        title.push(Span::styled(" (read-only)", theme.roles.muted));
    }
    let block = pane::block(Line::from(title), Some('2'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let text = screen::file_view::text_area(area);
    if text.y > inner.y {
        tab_bar(
            state,
            theme,
            Rect::new(inner.x, inner.y, inner.width, 1),
            buf,
        );
    }
    render_file_view(doc, &styles(theme, focused), text, buf);
    diagnostic_marks(state, doc, theme, text, buf);
    if state.settings.no_color {
        strip_colours(text, buf);
    }
}

/// NO_COLOR: syntect's colours go, modifiers (reverse for the cursor and
/// selection, underline for the cursor line) stay.
fn strip_colours(area: Rect, buf: &mut Buffer) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_fg(Color::Reset).set_bg(Color::Reset);
            }
        }
    }
}

/// One line of tabs: name, dirty marker, disk state; the active tab stands
/// out. Tabs that do not fit are cut at the right edge.
fn tab_bar(state: &AppState, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let mut spans = Vec::new();
    for (i, tab) in screen::file_view::tabs(&state.editors.tabs)
        .into_iter()
        .enumerate()
    {
        let active = i == state.editors.active;
        let style = if active {
            theme.roles.focused_title.reversed()
        } else {
            theme.roles.muted
        };
        spans.push(Span::styled(format!(" {}", tab.title), style));
        if tab.dirty {
            spans.push(Span::styled(" ●", theme.roles.dirty_marker.patch(style)));
        }
        if let Some(note) = tab.note {
            spans.push(Span::styled(note, theme.roles.error.patch(style)));
        }
        spans.push(Span::styled(" ", style));
        spans.push(Span::styled("│", theme.roles.pane_border));
    }
    Line::from(spans).render(area, buf);
}

/// Lines with diagnostics get the most severe one's icon in the gutter, and
/// the ranges on screen are underlined in its colour — the same clues the
/// Diagnostics pane lists, where the user is looking.
fn diagnostic_marks(state: &AppState, doc: &Document, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let diagnostics = state.diagnostic_sources.store.for_file(doc.path());
    if diagnostics.is_empty() || doc.is_binary() {
        return;
    }
    let layout = crate::editor::layout(doc, area);
    let viewport = doc.viewport();
    let (text, gutter) = (layout.text, layout.gutter);
    let lines = doc.lines();
    let tab = doc.tab_width();
    // Most severe last, so it wins the gutter cell.
    let mut ordered = diagnostics;
    ordered.sort_by_key(|d| std::cmp::Reverse(d.severity));
    for d in ordered {
        let style = super::severity::severity_style(d.severity, theme);
        let first = d.range.start.line;
        let last = d.range.end.line.max(first);
        for line in first..=last {
            let Some(row) = line.checked_sub(viewport.top) else {
                continue;
            };
            if row >= usize::from(text.height) {
                break;
            }
            let y = text.y + row as u16;
            if line == first && gutter.width > 0 {
                buf[(gutter.x, y)]
                    .set_symbol(super::severity::severity_icon(d.severity))
                    .set_style(style);
            }
            let Some(content) = lines.get(line) else {
                continue;
            };
            let len = content.chars().count();
            let start = if line == first {
                d.range.start.character.min(len)
            } else {
                0
            };
            let mut end = if line == last {
                d.range.end.character.min(len)
            } else {
                len
            };
            if end <= start {
                // An empty range still marks one cell.
                end = (start + 1).min(len.max(start + 1));
            }
            let from = crate::editor::display_col(content, start, tab);
            let to = crate::editor::display_col(content, end, tab).max(from + 1);
            for col in from..to {
                let Some(x) = col.checked_sub(viewport.left) else {
                    continue;
                };
                if x >= usize::from(text.width) {
                    break;
                }
                let underline = Style::default()
                    .add_modifier(Modifier::UNDERLINED)
                    .underline_color(style.fg.unwrap_or_default());
                let cell = &mut buf[(text.x + x as u16, y)];
                cell.set_style(cell.style().patch(underline));
            }
        }
    }
}

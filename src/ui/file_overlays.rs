//! The file view's overlays: the Ctrl+P picker (matched characters
//! highlighted), the go-to-line / find prompt, the changed-on-disk choices
//! and the diff of disk and buffer.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{pane, search};
use crate::app::AppState;
use crate::app::editors::{PickerState, PromptState};
use crate::sanitize;
use crate::theme::Theme;

pub fn picker(
    state: &AppState,
    picker: &PickerState,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let area = search::centered(screen, 70, 70);
    let total = state.file_index.len();
    let indexing = if state.file_index.is_complete() {
        ""
    } else {
        ", indexing…"
    };
    let title = format!("Open file ({} of {total}{indexing})", picker.matched);
    let block =
        pane::block(Line::from(title), None, true, theme).border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let mut query = vec![Span::styled("› ", theme.roles.status_key)];
    query.extend(super::line_input::spans(
        &picker.query,
        theme.roles.text,
        theme.roles.cursor,
        usize::from(inner.width.saturating_sub(2)),
    ));
    Line::from(query).render(Rect::new(inner.x, inner.y, inner.width, 1), buf);
    let rows = inner.height.saturating_sub(1) as usize;
    let first = picker
        .cursor
        .selected
        .saturating_sub(rows.saturating_sub(1));
    for (row, (i, found)) in picker
        .matches
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let selected = i == picker.cursor.selected;
        let base = if selected {
            theme.roles.selection
        } else {
            theme.roles.text
        };
        let hit = theme.roles.match_highlight.patch(base);
        let spans: Vec<Span> = found
            .path
            .chars()
            .enumerate()
            .map(|(ci, c)| {
                let style = if found.indices.contains(&(ci as u32)) {
                    hit
                } else {
                    base
                };
                Span::styled(sanitize::for_display(&c.to_string()).into_owned(), style)
            })
            .collect();
        let y = inner.y + 1 + row as u16;
        let line_area = Rect::new(inner.x, y, inner.width, 1);
        buf.set_style(line_area, base);
        let mut all = vec![Span::styled(if selected { "▌" } else { " " }, base)];
        all.extend(spans);
        Line::from(all).render(line_area, buf);
    }
    if picker.matches.is_empty() && rows > 0 {
        let text = if total == 0 {
            "No files indexed yet."
        } else {
            "No file matches."
        };
        Line::styled(text, theme.roles.muted)
            .render(Rect::new(inner.x, inner.y + 1, inner.width, 1), buf);
    }
}

/// A one-line bar at the bottom of the file view (or the screen).
pub fn prompt(
    state: &AppState,
    prompt: &PromptState,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let layout = crate::screen::layout::compute(screen, state.focus);
    let pane = layout.file_view.unwrap_or(screen);
    let width = pane.width.saturating_sub(2).min(60);
    if width < 10 || pane.height < 3 {
        return;
    }
    let area = Rect::new(pane.right().saturating_sub(width + 1), pane.y + 1, width, 3);
    let block = pane::block(Line::from(prompt.kind.label()), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    let status_width = prompt
        .status
        .as_ref()
        .map_or(0, |s| unicode_width::UnicodeWidthStr::width(s.as_str()) + 2);
    let mut spans = super::line_input::spans(
        &prompt.input,
        theme.roles.text,
        theme.roles.cursor,
        usize::from(inner.width).saturating_sub(status_width).max(8),
    );
    if let Some(status) = &prompt.status {
        spans.push(Span::styled(format!("  {status}"), theme.roles.muted));
    }
    Line::from(spans).render(inner, buf);
}

pub fn conflict(state: &AppState, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let name = state
        .editors
        .active()
        .map(|d| state.display_path(d.path()))
        .unwrap_or_default();
    let area = search::centered(screen, 60, 40);
    let block = pane::block(Line::from("Changed on disk"), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let key = |k: &'static str| Span::styled(k, theme.roles.status_key);
    let text = |t: &'static str| Span::styled(t, theme.roles.text);
    Paragraph::new(vec![
        Line::styled(
            format!("{name} changed on disk while you had unsaved edits. Your text is kept."),
            theme.roles.text,
        ),
        Line::default(),
        Line::from(vec![
            key("k"),
            text(" keep mine (the next save overwrites the disk)"),
        ]),
        Line::from(vec![
            key("t"),
            text(" load theirs (asks first: your edits are lost)"),
        ]),
        Line::from(vec![key("d"), text(" show the diff of disk and buffer")]),
        Line::from(vec![
            key("Esc"),
            text(" decide later (Ctrl+R in the file view)"),
        ]),
    ])
    .wrap(Wrap { trim: true })
    .block(block)
    .render(area, buf);
}

pub fn diff(text: &str, scroll: usize, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let area = search::centered(screen, 90, 85);
    let block = pane::block(
        Line::from("Diff: disk (-) → your buffer (+)   Esc close"),
        None,
        true,
        theme,
    )
    .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    let inner = block.inner(area);
    block.render(area, buf);
    for (row, line) in text
        .lines()
        .skip(scroll)
        .take(inner.height as usize)
        .enumerate()
    {
        let style: Style = if line.starts_with("+++") || line.starts_with("---") {
            theme.roles.title
        } else if line.starts_with('+') {
            theme.roles.info
        } else if line.starts_with('-') {
            theme.roles.error
        } else if line.starts_with("@@") {
            theme.roles.muted
        } else {
            theme.roles.text
        };
        Line::styled(line.to_string(), style).render(
            Rect::new(inner.x, inner.y + row as u16, inner.width, 1),
            buf,
        );
    }
}

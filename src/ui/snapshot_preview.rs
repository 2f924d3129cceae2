//! F2: the next request, exactly — every message the next model call would
//! send (with the composer's text as the new message and the latest
//! snapshot) and what each section costs in tokens, so "what did the model
//! see?" always has an answer.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{pane, search};
use crate::app::AppState;
use crate::sanitize;
use crate::theme::Theme;

fn truncate(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

/// "ActiveEditor" → "active editor".
fn section_label(section: crate::snapshot::Section) -> String {
    let mut label = String::new();
    for (i, c) in format!("{section:?}").chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            label.push(' ');
        }
        label.push(c.to_ascii_lowercase());
    }
    label
}

pub fn render(state: &AppState, scroll: usize, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let area = search::centered(screen, 90, 90);
    let title = Line::from(vec![
        Span::raw("Next request"),
        Span::styled(
            " — exactly what the next model call sends · Esc closes",
            theme.roles.muted,
        ),
    ]);
    let block = pane::block(title, None, true, theme).border_style(theme.roles.overlay_border);
    let inner = block.inner(area);
    Clear.render(area, buf);
    block.render(area, buf);

    let (prompt, window) = match crate::app::context_window::preview(state) {
        Ok(preview) => preview,
        Err(why) => {
            pane::empty_state(why, theme, inner, buf);
            return;
        }
    };
    let [breakdown_area, body_area] =
        Layout::horizontal([Constraint::Length(35), Constraint::Min(0)]).areas(inner);

    let full = prompt.tokens * 100 >= prompt.window * 80;
    let mut breakdown = vec![
        Line::styled(
            prompt.gauge(),
            if full {
                theme.roles.warning
            } else {
                theme.roles.title
            },
        ),
        Line::styled(
            format!("prompt budget {} ({})", prompt.budget, window.source),
            theme.roles.muted,
        ),
    ];
    if prompt.needs_compaction(&window) {
        breakdown.push(Line::styled(
            "compacts first, then sends",
            theme.roles.warning,
        ));
    }
    breakdown.push(Line::default());
    for section in &prompt.sections {
        breakdown.push(Line::from(vec![
            Span::styled(
                format!("{:<26}", truncate(&section.label, 26)),
                theme.roles.text,
            ),
            Span::styled(format!("{:>7}", section.tokens), theme.roles.muted),
        ]));
    }
    if let Some(view) = &state.snapshot {
        breakdown.push(Line::default());
        breakdown.push(Line::styled(
            format!("snapshot {}/{} chars", view.used, view.max),
            theme.roles.muted,
        ));
        if view.truncated {
            breakdown.push(Line::styled("snapshot truncated", theme.roles.warning));
        }
        for cost in &view.rendered.sections {
            breakdown.push(Line::from(vec![
                Span::styled(
                    format!("  {:<24}", section_label(cost.section)),
                    theme.roles.text,
                ),
                Span::styled(format!("{:>7}", cost.chars), theme.roles.muted),
            ]));
        }
    }
    if !state.pins.is_empty() {
        breakdown.push(Line::styled(
            format!("{} pinned (in the message)", state.pins.len()),
            theme.roles.muted,
        ));
    }
    Paragraph::new(breakdown).render(breakdown_area, buf);

    // Only the lines on screen are wrapped and drawn: a full 128k-token
    // request is ~500 KB of text.
    let text = prompt.readable();
    let lines: Vec<Line> = text
        .lines()
        .skip(scroll)
        .take(body_area.height as usize)
        .map(|line| {
            let shown = sanitize::for_display(line).into_owned();
            if line.starts_with("──── [") {
                Line::styled(shown, theme.roles.title)
            } else {
                Line::styled(shown, theme.roles.text)
            }
        })
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(body_area, buf);
}

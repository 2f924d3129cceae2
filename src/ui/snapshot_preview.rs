//! F2: the snapshot preview — exactly the Markdown the next turn sends, and
//! where its characters went, so "what did the model see?" always has an
//! answer.

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
        Span::raw("Snapshot preview"),
        Span::styled(
            " — what the next turn sends · Esc closes",
            theme.roles.muted,
        ),
    ]);
    let block = pane::block(title, None, true, theme).border_style(theme.roles.overlay_border);
    let inner = block.inner(area);
    Clear.render(area, buf);
    block.render(area, buf);

    let Some(view) = &state.snapshot else {
        pane::empty_state("building the snapshot…", theme, inner, buf);
        return;
    };
    let [breakdown_area, body_area] =
        Layout::horizontal([Constraint::Length(26), Constraint::Min(0)]).areas(inner);

    let mut breakdown = vec![
        Line::styled(
            format!("{}/{} chars", view.used, view.max),
            theme.roles.title,
        ),
        Line::styled(
            if view.truncated {
                "truncated: yes"
            } else {
                "truncated: no"
            },
            if view.truncated {
                theme.roles.warning
            } else {
                theme.roles.muted
            },
        ),
        Line::default(),
    ];
    for cost in &view.rendered.sections {
        breakdown.push(Line::from(vec![
            Span::styled(
                format!("{:<16}", section_label(cost.section)),
                theme.roles.text,
            ),
            Span::styled(format!("{:>7}", cost.chars), theme.roles.muted),
        ]));
    }
    if !state.pins.is_empty() {
        breakdown.push(Line::default());
        breakdown.push(Line::styled("pinned to the prompt", theme.roles.title));
        for pin in &state.pins {
            breakdown.push(Line::from(vec![
                Span::styled(
                    format!("{:<16}", truncate(&sanitize::for_display(&pin.label), 16)),
                    theme.roles.text,
                ),
                Span::styled(
                    format!("{:>7}", pin.text.chars().count()),
                    theme.roles.muted,
                ),
            ]));
        }
    }
    Paragraph::new(breakdown).render(breakdown_area, buf);

    let mut text = sanitize::for_display(&view.rendered.markdown).into_owned();
    for pin in &state.pins {
        text.push_str(&format!(
            "\n\n--- pinned: {} ({} chars) ---\n{}",
            sanitize::for_display(&pin.label),
            pin.text.chars().count(),
            sanitize::for_display(&pin.text)
        ));
    }
    Paragraph::new(text)
        .style(theme.roles.text)
        .wrap(Wrap { trim: false })
        .scroll((scroll.min(u16::MAX as usize) as u16, 0))
        .render(body_area, buf);
}

//! The status bar: where you are, what runs, what the next turn will cost,
//! and the keys that matter right now (generated from the keymap).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use crate::app::AppState;
use crate::app::state::Severity;
use crate::keymap;
use crate::sanitize;
use crate::theme::Theme;

/// Room kept for "Ctrl+Q quit  F1 help" even on a narrow terminal.
const MIN_HINTS_WIDTH: u16 = 24;

pub fn render(state: &AppState, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    buf.set_style(area, theme.roles.status_bar);
    let bar = theme.roles.status_bar;
    let model = state.agent.label();
    let agent = crate::app::agent::status_segment(state)
        .map(|text| format!("│ {text} "))
        .unwrap_or_default();
    let snapshot = match &state.snapshot {
        Some(view) => format!("snapshot {}/{}", view.used, view.max),
        None => format!("snapshot …/{}", state.settings.snapshot_budget),
    };
    let focus = if !state.approvals.is_empty() {
        "Approval"
    } else {
        state
            .overlay
            .as_ref()
            .map(|o| o.label())
            .unwrap_or_else(|| state.focus.label())
    };
    let safety_style = if state.safety.is_warning() {
        bar.patch(theme.roles.warning)
    } else {
        bar
    };
    let mut segments = vec![
        Span::styled(
            format!(" {} ", sanitize::for_display(&state.workspace_name)),
            theme.roles.status_key,
        ),
        Span::styled(format!("│ {} ", sanitize::for_display(&model)), bar),
        Span::styled(agent, bar),
        Span::styled(format!("│ {} ", state.kernel.label()), bar),
        Span::styled("│ ", bar),
        Span::styled(format!("{} ", state.safety.label()), safety_style),
        Span::styled(format!("│ {snapshot} "), bar),
    ];
    let counts = state.diagnostics_store.counts();
    if counts.total() > 0 {
        segments.push(Span::styled("│ ", bar));
        for (n, severity) in [
            (counts.errors, Severity::Error),
            (counts.warnings, Severity::Warning),
        ] {
            if n > 0 {
                let style = bar.patch(super::diagnostics::severity_style(severity, theme));
                segments.push(Span::styled(
                    format!("{} {n} ", super::diagnostics::severity_icon(severity)),
                    style,
                ));
            }
        }
    }
    segments.push(Span::styled(format!("│ [{focus}] "), bar));
    // The diagnostic under the file view's cursor, so the user reads it
    // without leaving the code.
    if let Some(text) = crate::app::diagnostics::under_cursor(state) {
        segments.push(Span::styled(
            format!("│ {} ", sanitize::for_display(&text)),
            bar.patch(theme.roles.warning),
        ));
    }
    if let Some(notice) = &state.status_notice {
        segments.push(Span::styled(
            format!("│ {} ", sanitize::for_display(notice)),
            bar,
        ));
    }
    let left = Line::from(segments);
    let mut left = left;
    left.spans
        .splice(1..1, super::file_status::position(state, theme));
    left.spans
        .extend(super::file_status::messages(state, theme));
    // Hints take the room the left segments leave, but always at least
    // enough for the first couple (quit, help); then the left side is cut.
    let mut spans = Vec::new();
    let mut width = 0usize;
    let left_width = left.width() as u16;
    let room = area
        .width
        .saturating_sub(left_width)
        .max(MIN_HINTS_WIDTH.min(area.width / 2)) as usize;
    for binding in keymap::hints(state.active_scope()) {
        let key = binding.key.to_string();
        let word = binding.action.hint();
        let cost = key.width() + word.width() + 3;
        if width + cost > room {
            break;
        }
        width += cost;
        spans.push(Span::styled(key, theme.roles.status_key));
        spans.push(Span::styled(format!(" {word}  "), bar));
    }
    let hints_width = width as u16;
    let hints_x = area.x + area.width.saturating_sub(hints_width);
    Line::from(spans).render(
        Rect::new(hints_x, area.y, hints_width, 1).intersection(area),
        buf,
    );
    left.render(Rect::new(area.x, area.y, area.width - hints_width, 1), buf);
}

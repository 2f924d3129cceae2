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
    // Display order; each segment is shown whole or not at all.
    let mut segments = vec![
        Segment::new(
            0,
            vec![Span::styled(
                format!(" {} ", sanitize::for_display(&state.workspace_name)),
                theme.roles.status_key,
            )],
        ),
        Segment::new(1, super::file_status::position(state, theme)),
        Segment::new(
            7,
            vec![Span::styled(
                format!("│ {} ", sanitize::for_display(&model)),
                bar,
            )],
        ),
        Segment::new(3, vec![Span::styled(agent, bar)]),
        Segment::new(
            3,
            vec![Span::styled(format!("│ {} ", state.kernel.label()), bar)],
        ),
        Segment::new(
            if state.safety.is_warning() { 2 } else { 6 },
            vec![
                Span::styled("│ ", bar),
                Span::styled(format!("{} ", state.safety.label()), safety_style),
            ],
        ),
        Segment::new(8, vec![Span::styled(format!("│ {snapshot} "), bar)]),
    ];
    let counts = state.diagnostics_store.counts();
    if counts.total() > 0 {
        let mut spans = vec![Span::styled("│ ", bar)];
        for (n, severity) in [
            (counts.errors, Severity::Error),
            (counts.warnings, Severity::Warning),
        ] {
            if n > 0 {
                let style = bar.patch(super::diagnostics::severity_style(severity, theme));
                spans.push(Span::styled(
                    format!("{} {n} ", super::diagnostics::severity_icon(severity)),
                    style,
                ));
            }
        }
        segments.push(Segment::new(5, spans));
    }
    segments.push(Segment::new(
        9,
        vec![Span::styled(format!("│ [{focus}] "), bar)],
    ));
    // The diagnostic under the file view's cursor, so the user reads it
    // without leaving the code.
    if let Some(text) = crate::app::diagnostics::under_cursor(state) {
        segments.push(Segment::new(
            4,
            vec![Span::styled(
                format!("│ {} ", sanitize::for_display(&text)),
                bar.patch(theme.roles.warning),
            )],
        ));
    }
    if let Some(notice) = &state.status_notice {
        segments.push(Segment::new(
            2,
            vec![Span::styled(
                format!("│ {} ", sanitize::for_display(notice)),
                bar,
            )],
        ));
    }
    segments.push(Segment::new(2, super::file_status::messages(state, theme)));

    // The hints keep room for the first couple (quit, help) and one column
    // of air; the left side gives up whole segments, least important first.
    let reserve = MIN_HINTS_WIDTH.min(area.width / 2) as usize + 1;
    let left = fit_segments(segments, (area.width as usize).saturating_sub(reserve));
    let left_width = left.width();
    let room = (area.width as usize).saturating_sub(left_width + 1);
    let mut spans = Vec::new();
    let mut width = 0usize;
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
    left.render(
        Rect::new(area.x, area.y, area.width.saturating_sub(hints_width), 1),
        buf,
    );
}

/// A piece of the bar's left side. Lower `priority` numbers matter more:
/// on a narrow terminal the highest numbers go first.
struct Segment {
    priority: u8,
    spans: Vec<Span<'static>>,
}

impl Segment {
    fn new(priority: u8, spans: Vec<Span<'static>>) -> Self {
        Self { priority, spans }
    }

    fn width(&self) -> usize {
        self.spans.iter().map(|s| s.content.width()).sum()
    }
}

/// Drops whole segments, least important first, until the rest fit in
/// `room` columns; what is left keeps its order. A single segment that is
/// still too wide (a long notice) is cut with `…`.
fn fit_segments(mut segments: Vec<Segment>, room: usize) -> Line<'static> {
    segments.retain(|s| s.width() > 0);
    while segments.iter().map(Segment::width).sum::<usize>() > room && segments.len() > 1 {
        let Some(least) = segments
            .iter()
            .enumerate()
            .max_by_key(|(i, s)| (s.priority, *i))
            .map(|(i, _)| i)
        else {
            break;
        };
        segments.remove(least);
    }
    let spans: Vec<Span<'static>> = segments.into_iter().flat_map(|s| s.spans).collect();
    Line::from(super::wrap::fit(&spans, room))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line<'_>) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    fn seg(priority: u8, text: &str) -> Segment {
        Segment::new(priority, vec![Span::raw(text.to_owned())])
    }

    #[test]
    fn narrow_bars_drop_whole_segments_least_important_first() {
        let segments = || {
            vec![
                seg(0, "ws "),
                seg(8, "snap "),
                seg(3, "kernel "),
                seg(9, "focus "),
            ]
        };
        assert_eq!(
            text(&fit_segments(segments(), 100)),
            "ws snap kernel focus "
        );
        assert_eq!(text(&fit_segments(segments(), 15)), "ws snap kernel ");
        assert_eq!(text(&fit_segments(segments(), 12)), "ws kernel ");
        assert_eq!(text(&fit_segments(segments(), 3)), "ws ");
    }

    #[test]
    fn a_lone_segment_too_wide_is_cut_with_an_ellipsis() {
        let line = fit_segments(vec![seg(0, "a very long notice")], 8);
        assert_eq!(text(&line), "a very …");
        assert!(line.width() <= 8);
    }
}

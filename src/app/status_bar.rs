//! The status bar: where you are, what runs, what the next turn will cost,
//! and the keys that matter right now (generated from the keymap).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use crate::app::AppState;
use crate::diagnostics::Severity;
use crate::keymap;
use crate::sanitize;
use crate::theme::Theme;
use crate::workbench::Workbench;

/// Key hints the bar keeps room for (up to half its width) when no
/// question is on screen.
const KEPT_HINTS: usize = 2;

/// Longest model name the bar shows.
const MODEL_CHARS: usize = 28;

/// The model's name, without the server it is reached at (F2 and `/model`
/// show that), shortened for the bar.
fn model_name(workbench: &Workbench) -> String {
    let Some(provider) = workbench.agent().provider() else {
        return "no model".to_owned();
    };
    let name = provider.model().unwrap_or_else(|| provider.label());
    if name.chars().count() <= MODEL_CHARS {
        return name;
    }
    let head: String = name.chars().take(MODEL_CHARS - 1).collect();
    format!("{head}…")
}

pub fn render(state: &AppState, theme: &Theme, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    buf.set_style(area, theme.roles.status_bar);
    let bar = theme.roles.status_bar;
    let model = model_name(&state.workbench);
    let agent = state
        .workbench
        .agent()
        .status_segment()
        .map(|text| format!("│ {text} "))
        .unwrap_or_default();
    let snapshot = match &state.workbench.snapshot() {
        Some(view) => format!("snapshot {}/{}", view.used, view.max),
        None => format!("snapshot …/{}", state.workbench.settings().snapshot_budget),
    };
    let focus = if !state.approvals.is_empty() {
        "Approval"
    } else {
        state
            .overlay()
            .map(|o| o.component().label())
            .unwrap_or_else(|| state.focus.label())
    };
    let safety_style = if state.workbench.safety().is_warning() {
        bar.patch(theme.roles.warning)
    } else {
        bar
    };
    // Display order; each segment is shown whole or not at all.
    let mut segments = vec![
        Segment::new(
            0,
            vec![Span::styled(
                format!(" {} ", state.workbench.workspace_name()),
                theme.roles.status_key,
            )],
        ),
        Segment::new(1, crate::ui::file_status::position(&state.workbench, theme)),
        // The model answering: before the turn's step and the kernel when
        // room is short, cut to the room left rather than dropped; "no
        // model" gives way to everything.
        if state.workbench.agent().has_model() {
            Segment::cuttable(3, vec![Span::styled(format!("│ {model} "), bar)])
        } else {
            Segment::new(7, vec![Span::styled(format!("│ {model} "), bar)])
        },
        Segment::new(3, vec![Span::styled(agent, bar)]),
        // What the server's prompt cache served: gives way before the rest.
        Segment::new(
            6,
            vec![Span::styled(
                state
                    .workbench
                    .agent()
                    .cache_segment()
                    .map(|text| format!("│ {text} "))
                    .unwrap_or_default(),
                bar,
            )],
        ),
        Segment::new(2, context_gauge(&state.workbench, theme)),
        Segment::new(
            3,
            vec![Span::styled(
                format!("│ {} ", state.workbench.kernel().label()),
                bar,
            )],
        ),
        // The approval mode is always shown (docs/sandbox.md): what may run unasked.
        Segment::new(
            1,
            vec![
                Span::styled("│ ", bar),
                Span::styled(
                    format!("{} ", state.workbench.safety().label()),
                    safety_style,
                ),
            ],
        ),
        Segment::new(8, vec![Span::styled(format!("│ {snapshot} "), bar)]),
    ];
    let counts = state.workbench.diagnostic_sources().store.counts();
    if counts.total() > 0 {
        let mut spans = vec![Span::styled("│ ", bar)];
        for (n, severity) in [
            (counts.errors, Severity::Error),
            (counts.warnings, Severity::Warning),
        ] {
            if n > 0 {
                let style = bar.patch(crate::ui::severity::severity_style(severity, theme));
                spans.push(Span::styled(
                    format!("{} {n} ", crate::ui::severity::severity_icon(severity)),
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
    if let Some(text) = state
        .diagnostic_under_cursor()
        .map(|d| format!("{} {}: {}", d.source, d.severity.as_str(), d.message))
    {
        segments.push(Segment::cuttable(
            4,
            vec![Span::styled(
                format!("│ {text} "),
                bar.patch(theme.roles.warning),
            )],
        ));
    }
    // After the model, the kernel and the window gauge, which stay when a
    // notice is long: it is cut to what is left (its whole text is in the
    // conversation or the log), before the snapshot size and the focus.
    if let Some(notice) = &state.workbench.status_notice() {
        segments.push(Segment::cuttable(
            7,
            vec![Span::styled(format!("│ {notice} "), bar)],
        ));
    }
    segments.push(Segment::cuttable(
        2,
        crate::ui::file_status::messages(&state.workbench, theme),
    ));

    // The key hints come from the keymap for what has the keyboard now;
    // the first few are kept (in a conflict they are the only way out), and
    // the left side gives up whole segments, least important first.
    let hints: Vec<(String, &str, usize)> = keymap::hints(state.active_scope())
        .map(|binding| {
            let key = binding.key.to_string();
            let word = binding.action.hint();
            let cost = key.width() + word.width() + 3;
            (key, word, cost)
        })
        .collect();
    // A question on screen (a conflict, an approval, a yes/no) is answered
    // with its keys: all of them are kept. Elsewhere, quit and help.
    let kept = match state.active_scope() {
        keymap::Scope::Conflict
        | keymap::Scope::Approval
        | keymap::Scope::HunkReview
        | keymap::Scope::Confirm => hints.len(),
        _ => KEPT_HINTS,
    };
    let wanted: usize = hints.iter().take(kept).map(|h| h.2).sum();
    let reserve = wanted.min(area.width as usize / 2) + 1;
    let left = fit_segments(segments, (area.width as usize).saturating_sub(reserve));
    let room = (area.width as usize).saturating_sub(left.width() + 1);
    let mut spans = Vec::new();
    let mut width = 0usize;
    for (key, word, cost) in hints {
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

/// `│ ctx 41% · 52k/128k`: how full the model's window is with the next
/// request (without the message being typed); warning-coloured from the
/// auto-compaction share (80%) up. Start-up (`app::sessions::configure`)
/// and every turn set it; a bare test state has none and shows nothing.
fn context_gauge(workbench: &Workbench, theme: &Theme) -> Vec<Span<'static>> {
    let bar = theme.roles.status_bar;
    let Some((used, window)) = workbench.agent().context_used else {
        return Vec::new();
    };
    let full = used * 100 >= window * 80;
    vec![
        Span::styled("│ ", bar),
        Span::styled(
            format!("{} ", crate::agent::prompt::gauge(used, window)),
            if full {
                bar.patch(theme.roles.warning)
            } else {
                bar
            },
        ),
    ]
}

/// A piece of the bar's left side. Lower `priority` numbers matter more:
/// on a narrow terminal the highest numbers go first.
struct Segment {
    priority: u8,
    /// Text worth reading in part (a notice, a diagnostic): cut to the room
    /// left rather than dropped.
    cuttable: bool,
    spans: Vec<Span<'static>>,
}

impl Segment {
    /// Every segment's text goes through the sanitizer here, whatever it
    /// holds (a server's retry reason, a file name, a kernel's exit reason,
    /// a diagnostic): the bar is one line, and nothing in it reaches the
    /// terminal raw.
    fn new(priority: u8, spans: Vec<Span<'static>>) -> Self {
        let spans = spans
            .into_iter()
            .map(|span| match sanitize::one_line(&span.content) {
                std::borrow::Cow::Borrowed(_) => span,
                std::borrow::Cow::Owned(clean) => Span::styled(clean, span.style),
            })
            .collect();
        Self {
            priority,
            cuttable: false,
            spans,
        }
    }

    fn cuttable(priority: u8, spans: Vec<Span<'static>>) -> Self {
        Self {
            cuttable: true,
            ..Self::new(priority, spans)
        }
    }

    fn width(&self) -> usize {
        self.spans.iter().map(|s| s.content.width()).sum()
    }
}

/// Least room a cut segment is worth showing in.
const MIN_CUT_WIDTH: usize = 20;

/// Chooses segments most important first: each one that fits in what is
/// left of `room` is kept, a cuttable one that does not is cut to what is
/// left (when that is worth it), the others are skipped. The kept ones are
/// shown in their own order.
fn fit_segments(segments: Vec<Segment>, room: usize) -> Line<'static> {
    let mut by_priority: Vec<usize> = (0..segments.len()).collect();
    by_priority.sort_by_key(|&i| segments[i].priority);
    let mut left = room;
    let mut shown: Vec<Option<usize>> = vec![None; segments.len()];
    for i in by_priority {
        let width = segments[i].width();
        if width == 0 {
            continue;
        }
        if width <= left {
            shown[i] = Some(width);
            left -= width;
        } else if (segments[i].cuttable || i == 0) && left >= MIN_CUT_WIDTH.min(room) {
            shown[i] = Some(left);
            left = 0;
        }
    }
    let mut spans = Vec::new();
    for (segment, width) in segments.into_iter().zip(shown) {
        match width {
            Some(w) if w < segment.width() => {
                spans.extend(crate::screen::wrap::fit(&segment.spans, w))
            }
            Some(_) => spans.extend(segment.spans),
            None => {}
        }
    }
    Line::from(spans)
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
    fn a_notice_too_wide_is_cut_to_the_room_left_not_dropped() {
        let segments = vec![
            seg(0, "ws "),
            Segment::cuttable(2, vec![Span::raw("a notice far too long for the bar ")]),
            seg(3, "kernel "),
            seg(9, "focus "),
        ];
        let line = fit_segments(segments, 30);
        assert_eq!(text(&line), "ws a notice far too long for …");
        assert!(line.width() <= 30);
    }

    #[test]
    fn the_first_segment_is_cut_rather_than_lost() {
        let line = fit_segments(vec![seg(0, "a very long workspace name")], 8);
        assert_eq!(text(&line), "a very …");
    }
}

//! The search pane, drawn over the layout: query, scopes, results.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListItem, ListState, Paragraph, StatefulWidget, Widget};

use super::{PaneResults, ResultRow, Search, SearchScope};
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::pane;

/// The overlay's rectangle: most of the screen, centred.
pub fn area(screen: Rect) -> Rect {
    pane::centered(screen, 80, 70)
}

pub(super) fn render(search: &Search, theme: &Theme, screen: Rect, frame: &mut Frame) {
    let area = area(screen);
    let outcome = &search.results;
    let mut count = match outcome {
        PaneResults::Hits(hits) => format!(
            " {} result{}",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" }
        ),
        _ => String::new(),
    };
    if let Some(note) = search.content.as_ref().and_then(|c| c.skipped_note()) {
        count.push_str(&format!(" · {note}"));
    }
    let title = Line::from(vec![
        Span::raw("Search"),
        Span::styled(
            format!(" in {}{count}", search.scope.label()),
            theme.roles.muted,
        ),
    ]);
    let block = pane::block(title, Some('5'), true, theme).border_style(theme.roles.overlay_border);
    let inner = block.inner(area);
    Clear.render(area, frame.buffer_mut());
    block.render(area, frame.buffer_mut());

    let [query_area, scopes_area, results_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);

    Paragraph::new(Line::from(
        vec![Span::styled("› ", theme.roles.focused_title)]
            .into_iter()
            .chain(crate::ui::line_input::spans(
                &search.query,
                theme.roles.text,
                theme.roles.cursor,
                usize::from(query_area.width.saturating_sub(2)),
            ))
            .collect::<Vec<_>>(),
    ))
    .render(query_area, frame.buffer_mut());

    let mut scopes = Vec::new();
    for scope in SearchScope::ALL {
        let style = if scope == search.scope {
            theme.roles.selection.patch(theme.roles.focused_title)
        } else {
            theme.roles.muted
        };
        scopes.push(Span::styled(format!(" {} ", scope.label()), style));
        scopes.push(Span::raw(" "));
    }
    Paragraph::new(Line::from(scopes)).render(scopes_area, frame.buffer_mut());

    match outcome {
        PaneResults::Prompt(text) | PaneResults::Unavailable(text) => {
            pane::empty_state(text, theme, results_area, frame.buffer_mut());
        }
        PaneResults::Hits(hits) if hits.is_empty() => {
            let text = format!(
                "no matches for “{}”",
                sanitize::for_display(search.query.text().trim())
            );
            pane::empty_state(&text, theme, results_area, frame.buffer_mut());
        }
        PaneResults::Hits(hits) => {
            let items: Vec<ListItem> = hits
                .iter()
                .map(|hit| ListItem::new(hit_line(hit, theme)))
                .collect();
            let list = List::new(items)
                .highlight_style(theme.roles.selection)
                .highlight_symbol("▶ ");
            let mut list_state = ListState::default().with_selected(Some(search.cursor.selected));
            StatefulWidget::render(list, results_area, frame.buffer_mut(), &mut list_state);
        }
    }
}

fn hit_line<'a>(hit: &'a ResultRow, theme: &Theme) -> Line<'a> {
    let mut spans = vec![Span::styled(
        format!("{:<14} ", hit.label),
        theme.roles.muted,
    )];
    let mut at = 0;
    for range in &hit.highlights {
        if range.start < at || range.end > hit.text.len() {
            continue;
        }
        push_clean(&mut spans, &hit.text[at..range.start], theme.roles.text);
        push_clean(
            &mut spans,
            &hit.text[range.clone()],
            theme.roles.match_highlight,
        );
        at = range.end;
    }
    push_clean(&mut spans, &hit.text[at..], theme.roles.text);
    Line::from(spans)
}

fn push_clean(spans: &mut Vec<Span<'_>>, text: &str, style: Style) {
    if !text.is_empty() {
        spans.push(Span::styled(
            sanitize::for_display(text).replace('\n', " "),
            style,
        ));
    }
}

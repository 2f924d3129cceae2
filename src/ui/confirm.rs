//! A yes/no question drawn over everything.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{pane, search};
use crate::app::state::Question;
use crate::theme::Theme;

pub fn render(question: &Question, theme: &Theme, screen: Rect, buf: &mut Buffer) {
    let text = match question {
        Question::QuitWithUnsavedEdits { count } => format!(
            "{count} file{} ha{} unsaved edits. Quit anyway and lose them?",
            if *count == 1 { "" } else { "s" },
            if *count == 1 { "s" } else { "ve" },
        ),
        Question::CloseDirtyTab { .. } => {
            "This file has unsaved edits. Close it and lose them?".to_string()
        }
        Question::LoadTheirs { .. } => {
            "Load the version on disk and discard your unsaved edits?".to_string()
        }
        Question::RestoreRecoveries { count } => format!(
            "hello-tui found {count} unsaved buffer{} from an earlier session. Restore {}?",
            if *count == 1 { "" } else { "s" },
            if *count == 1 { "it" } else { "them" },
        ),
    };
    let area = search::centered(screen, 50, 30);
    let block = pane::block(Line::from("Confirm"), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    Paragraph::new(vec![
        Line::styled(text, theme.roles.text),
        Line::default(),
        Line::from(vec![
            Span::styled("y", theme.roles.status_key),
            Span::styled(" yes   ", theme.roles.text),
            Span::styled("n", theme.roles.status_key),
            Span::styled(" / ", theme.roles.muted),
            Span::styled("Esc", theme.roles.status_key),
            Span::styled(" no", theme.roles.text),
        ]),
    ])
    .alignment(Alignment::Center)
    .wrap(Wrap { trim: true })
    .block(block)
    .render(area, buf);
}

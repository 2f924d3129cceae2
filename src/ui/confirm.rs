//! A yes/no question drawn over everything (the recovery question has a
//! third answer).

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::{pane, search};
use crate::app::AppState;
use crate::app::state::Question;
use crate::theme::Theme;

pub fn render(
    state: &AppState,
    question: &Question,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
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
        Question::RestoreRecovery { index, count } => {
            let found = state.editors.found_recoveries.get(*index);
            let path = found.map_or_else(String::new, |r| state.display_path(&r.path));
            let age = found.map_or_else(String::new, |r| age(r.written_at));
            let of = if *count > 1 {
                format!(" ({} of {count})", index + 1)
            } else {
                String::new()
            };
            format!(
                "Unsaved edits to {path} from an earlier session, written {age}{of}. Restore them?"
            )
        }
    };
    let answers: Vec<(&str, &str)> = match question {
        Question::RestoreRecovery { .. } => {
            vec![("y", " restore   "), ("n", " later   "), ("d", " discard")]
        }
        _ => vec![("y", " yes   "), ("n", " / "), ("Esc", " no")],
    };
    let mut keys = Vec::new();
    for (key, meaning) in answers {
        keys.push(Span::styled(key, theme.roles.status_key));
        keys.push(Span::styled(meaning, theme.roles.text));
    }
    let area = search::centered(screen, 50, 30);
    let block = pane::block(Line::from("Confirm"), None, true, theme)
        .border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    Paragraph::new(vec![
        Line::styled(text, theme.roles.text),
        Line::default(),
        Line::from(keys),
    ])
    .alignment(Alignment::Center)
    .wrap(Wrap { trim: true })
    .block(block)
    .render(area, buf);
}

/// `4 min ago` for a Unix time in seconds (`just now` under a minute, and
/// for a clock that went back).
fn age(written_at: u64) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let seconds = now.saturating_sub(written_at);
    match seconds {
        0..60 => "just now".to_owned(),
        60..3_600 => format!("{} min ago", seconds / 60),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

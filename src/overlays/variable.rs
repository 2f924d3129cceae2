//! Enter on a variable: everything the inspector knows about it — type,
//! summary, approximate size and the whole bounded preview, wrapped.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{Component, Ctx, Input, Outcome, View};
use crate::component::Around;
use crate::keymap::Scope;
use crate::sanitize;
use crate::theme::Theme;
use crate::ui::pane;

/// Enter on a variable: its full bounded preview, by name (it may be
/// rebound or vanish while open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableDetail {
    pub name: String,
    pub scroll: usize,
}

impl Component for VariableDetail {
    fn label(&self) -> &'static str {
        "Variable"
    }

    fn scope(&self) -> Scope {
        Scope::Help
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        super::scrolled_text(&mut self.scroll, input, ctx)
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        render(
            around,
            &self.name,
            self.scroll,
            theme,
            screen,
            frame.buffer_mut(),
        );
    }
}

fn render(
    around: Around<'_>,
    name: &str,
    scroll: usize,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    let title = sanitize::for_display(name).into_owned();
    let inner = pane::detail_overlay(title, "Esc closes", theme, screen, buf);
    let Some(var) = around.variables.iter().find(|v| v.name == name) else {
        pane::empty_state("this variable no longer exists", theme, inner, buf);
        return;
    };
    let field = |label: &str, value: String| {
        Line::from(vec![
            Span::styled(format!("{label:<9}"), theme.roles.title),
            Span::styled(value, theme.roles.text),
        ])
    };
    let changed = match var.changed_by {
        Some(id) if Some(id) == *around.workbench.last_exec_id() => "by the last cell".to_owned(),
        Some(id) => format!("by execution {id}"),
        None => "—".to_owned(),
    };
    let mut lines = vec![
        field("type", sanitize::for_display(&var.type_name).into_owned()),
        field(
            "summary",
            match var.summary.as_str() {
                "" => "—".to_owned(),
                s => sanitize::for_display(s).into_owned(),
            },
        ),
        field(
            "size",
            var.size.map(human_size).unwrap_or_else(|| "—".into()),
        ),
        field("changed", changed),
        Line::default(),
        Line::styled(
            "preview (bounded: long values are cut by the kernel)",
            theme.roles.muted,
        ),
    ];
    for line in sanitize::for_display(&var.preview).lines() {
        lines.push(Line::styled(line.to_owned(), theme.roles.text));
    }
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((scroll.min(u16::MAX as usize) as u16, 0))
        .render(inner, buf);
}

/// `~28 B`, `~7.6 KiB`, `~8.0 MiB` (approximate, as the kernel measures it).
pub(crate) fn human_size(bytes: u64) -> String {
    format!("~{}", crate::units::binary_size(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(28), "~28 B");
        assert_eq!(super::human_size(8 * 1024 * 1024), "~8.0 MiB");
    }
}

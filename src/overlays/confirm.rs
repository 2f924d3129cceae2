//! A yes/no question drawn over everything (the recovery question has a
//! third answer).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use super::{Answer, Component, Ctx, Effect, Input, Outcome, View};
use crate::keymap::{Action, Scope};
use crate::theme::Theme;
use crate::ui::pane;
use crate::workbench::Question;
use crate::workbench::Workbench;

/// A question that blocks the workbench until answered. What an answer
/// does is the around's business (`around::effects`, `answer`): this only asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirm {
    pub question: Question,
}

impl Confirm {
    pub fn new(question: Question) -> Self {
        Self { question }
    }
}

impl Component for Confirm {
    fn label(&self) -> &'static str {
        "Confirm"
    }

    fn scope(&self) -> Scope {
        self.question.scope()
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        let answer = match input {
            Input::Action(Action::Confirm) => Answer::Yes,
            Input::Action(Action::Deny | Action::CloseOverlay) => Answer::No,
            Input::Action(Action::AnswerSave) => Answer::Save,
            Input::Action(Action::AnswerDiscard) => Answer::Discard,
            _ => return Outcome::Ignored,
        };
        ctx.close_with(Effect::Answer(self.question, answer));
        Outcome::Changed
    }

    fn render(&self, view: &View<'_>, screen: Rect, frame: &mut Frame) {
        let (around, theme) = (view.around, view.theme);
        render(
            around.workbench,
            &self.question,
            theme,
            screen,
            frame.buffer_mut(),
        );
    }
}

fn render(
    workbench: &Workbench,
    question: &Question,
    theme: &Theme,
    screen: Rect,
    buf: &mut Buffer,
) {
    // Sized to what it says: the whole question and every answer show,
    // down to 80x24 (the answers on one line when they fit).
    let width = u16::try_from(u32::from(screen.width) * 3 / 5)
        .unwrap_or(u16::MAX)
        .max(40)
        .min(screen.width);
    let inner = usize::from(width.saturating_sub(4)).max(1);
    let text = match question {
        Question::QuitWithUnsavedEdits { count } => format!(
            "{count} file{} ha{} unsaved edits. Save before quitting?",
            if *count == 1 { "" } else { "s" },
            if *count == 1 { "s" } else { "ve" },
        ),
        Question::CloseDirtyTab { .. } => {
            "This file has unsaved edits. Save before closing it?".to_string()
        }
        Question::LoadTheirs { .. } => {
            "Load the version on disk and discard your unsaved edits?".to_string()
        }
        Question::TrustWorkspace => trust_text(workbench, inner, screen.height),
        Question::LeaveSandbox { .. } => format!(
            "Turn the sandbox off (approval mode `full`)? Model-written code then runs \
             without asking, and nothing stops it from {}. The kernel restarts (its \
             variables are lost). No is the default (n, Esc, Enter): `{}` stays.",
            crate::workbench::safety::FULL_TURNS_OFF,
            workbench.safety().mode
        ),
        Question::RestoreRecovery { index, count } => {
            let found = workbench.editors().found_recoveries.get(*index);
            let path = found.map_or_else(String::new, |r| workbench.display_path(&r.path));
            let age = found.map_or_else(String::new, |r| age(r.written_at));
            let of = if *count > 1 {
                format!(" ({} of {count})", index + 1)
            } else {
                String::new()
            };
            format!(
                "Unsaved edits to {path} from an earlier session, written {age}{of}. \
                 Restore them now? (no keeps them for the next start)"
            )
        }
    };
    let mut lines: Vec<Line> = crate::screen::wrap::wrap(&text, inner)
        .into_iter()
        .map(|row| Line::styled(row, theme.roles.text))
        .collect();
    lines.push(Line::default());
    // The keys come from the question's own scope, as the status bar's
    // hints do, so the two always agree.
    let answers: Vec<(String, String)> = crate::keymap::hints(question.scope())
        .map(|b| (b.key.to_string(), format!(" {}", b.action.hint())))
        .collect();
    let one_line: usize = answers
        .iter()
        .map(|(key, hint)| key.chars().count() + hint.chars().count() + 3)
        .sum();
    let answer_line = |answers: &[(String, String)]| {
        let mut spans = Vec::new();
        for (i, (key, hint)) in answers.iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw("   "));
            }
            spans.push(Span::styled(key.clone(), theme.roles.status_key));
            spans.push(Span::styled(hint.clone(), theme.roles.text));
        }
        Line::from(spans)
    };
    if one_line <= inner {
        lines.push(answer_line(&answers).centered());
    } else {
        lines.extend(answers.chunks(1).map(|a| answer_line(a).centered()));
    }
    let height = (lines.len() as u16 + 2).min(screen.height);
    let area = Rect::new(
        screen.x + (screen.width - width) / 2,
        screen.y + (screen.height - height) / 2,
        width,
        height,
    );
    let title = match question {
        Question::TrustWorkspace => "Trust this workspace?",
        _ => "Confirm",
    };
    let block =
        pane::block(Line::from(title), None, true, theme).border_style(theme.roles.overlay_border);
    Clear.render(area, buf);
    // A list (what a workspace would run) reads from the left.
    let alignment = match question {
        Question::TrustWorkspace => Alignment::Left,
        _ => Alignment::Center,
    };
    Paragraph::new(lines)
        .alignment(alignment)
        .block(block)
        .render(area, buf);
}

/// The trust question listing as many of the workspace's programs as
/// leave the answers on screen (a blank row, the answers and the borders
/// below the text); the rest are counted.
fn trust_text(workbench: &Workbench, inner: usize, height: u16) -> String {
    let rows = |text: &str| crate::screen::wrap::wrap(text, inner).len() + 4;
    let mut shown = workbench.trust().found.len();
    let mut text = crate::workbench::trust::question_text(workbench, shown);
    while shown > 1 && rows(&text) > usize::from(height) {
        shown -= 1;
        text = crate::workbench::trust::question_text(workbench, shown);
    }
    text
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

/// The keys each question takes (the layer stack looks them up).
impl Question {
    /// Its keys: yes/no, save/discard/cancel, or restore/later/discard.
    pub(crate) fn scope(self) -> Scope {
        match self {
            Question::QuitWithUnsavedEdits { .. } | Question::CloseDirtyTab { .. } => {
                Scope::Unsaved
            }
            Question::RestoreRecovery { .. } => Scope::Recovery,
            Question::LoadTheirs { .. } | Question::LeaveSandbox { .. } => Scope::Confirm,
            Question::TrustWorkspace => Scope::Trust,
        }
    }
}

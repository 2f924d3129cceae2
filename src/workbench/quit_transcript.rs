//! What quitting leaves in the terminal: the alternate screen takes the
//! session with it, so the workbench prints the conversation to the
//! normal screen, above the resume line, where the terminal's scrollback
//! keeps it (Codex's `--no-alt-screen` and Claude Code's inline drawing
//! answer the same wish). `[ui] on_quit` chooses the whole transcript, the
//! last answer or nothing.
//!
//! Plain text, sanitized: a model's answer or a cell's output must not
//! drive the user's terminal once the workbench is gone either.

use crate::config::OnQuit;
use crate::sanitize::for_display;
use crate::workbench::transcript::{CellStatus, CellView, PaneEntry, Speaker, Transcript};

/// Lines of a cell's output printed; the rest is counted.
const OUTPUT_LINES: usize = 6;
/// Lines of a notice or a tool message printed; the rest is counted.
const NOTE_LINES: usize = 3;

/// The text to print on quit, ending in a newline; empty when there is
/// nothing the user did (no prompt and no cell: a look at a file leaves
/// the terminal as it was) or `mode` is [`OnQuit::None`].
pub fn text(transcript: &Transcript, mode: OnQuit) -> String {
    let worked = transcript
        .iter()
        .any(|entry| entry.role == Speaker::User || entry.cell.is_some());
    if !worked {
        return String::new();
    }
    let body = match mode {
        OnQuit::None => return String::new(),
        OnQuit::Summary => match transcript
            .iter()
            .rev()
            .find(|entry| entry.role == Speaker::Assistant && !entry.text.trim().is_empty())
        {
            Some(answer) => format!("{}\n", answer.text.trim_end()),
            None => return String::new(),
        },
        OnQuit::Transcript => transcript
            .iter()
            .filter_map(entry)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let text = format!("── hello-tui ──\n\n{body}\n");
    for_display(&text).into_owned()
}

/// One entry as printed (`None`: not printed, as the model's reasoning).
fn entry(entry: &PaneEntry) -> Option<String> {
    let text = entry.text.trim_end();
    Some(match (entry.role, &entry.cell) {
        (Speaker::Thinking, _) => return None,
        (_, Some(cell)) => self::cell(cell, text),
        (Speaker::User, None) => indented(text, "› ", "  "),
        (Speaker::Assistant, None) => format!("{text}\n"),
        (Speaker::Tool, None) => indented(&first_lines(text, NOTE_LINES), "⎿ ", "  "),
        (Speaker::Notice, None) => {
            indented(&first_lines(text, NOTE_LINES), "hello-tui: ", "           ")
        }
    })
}

/// A cell: how it ended, its code, the start of its output, the files it
/// changed as `path +a −r`.
fn cell(cell: &CellView, output: &str) -> String {
    let status = match &cell.status {
        CellStatus::Running => "stopped while running".to_owned(),
        CellStatus::Succeeded {
            duration_ms: Some(ms),
            ..
        } => format!("✓ {ms} ms"),
        CellStatus::Succeeded { .. } => "✓".to_owned(),
        CellStatus::Failed { summary } => format!("✗ {}", summary.lines().next().unwrap_or("")),
    };
    let mut out = format!("▸ cell {status}\n");
    out.push_str(&indented(cell.code.trim_end(), "  │ ", "  │ "));
    if !output.is_empty() {
        out.push_str(&indented(
            &first_lines(output, OUTPUT_LINES),
            "  ⎿ ",
            "    ",
        ));
    }
    for change in &cell.changes {
        if change.earlier_unknown {
            out.push_str(&format!("  ✎ {} (changed)\n", change.shown));
        } else {
            out.push_str(&format!(
                "  ✎ {} +{} −{}\n",
                change.shown, change.added, change.removed
            ));
        }
    }
    out
}

/// `text`'s first `n` lines, then how many more there were.
fn first_lines(text: &str, n: usize) -> String {
    let mut kept: Vec<&str> = text.lines().take(n).collect();
    let more = text.lines().count().saturating_sub(n);
    let note = format!("… {more} more line{}", if more == 1 { "" } else { "s" });
    if more > 0 {
        kept.push(&note);
    }
    kept.join("\n")
}

/// Each line of `text` after a prefix: `first` for the first, `rest` for
/// the others; ends in a newline.
fn indented(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(first.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::transcript::CellChange;

    fn session() -> Transcript {
        let mut t = Transcript::new();
        t.push(PaneEntry::new(Speaker::Notice, "No model is set."));
        t.push(PaneEntry::new(Speaker::User, "fix the parser\nplease"));
        t.push(PaneEntry::new(Speaker::Thinking, "the user wants a fix"));
        let mut cell = PaneEntry::cell(1, "print('a')\nfs.write('p.py', 'x')");
        cell.text = (1..=10).map(|i| format!("out {i}\n")).collect();
        if let Some(view) = cell.cell.as_mut() {
            view.status = CellStatus::Succeeded {
                duration_ms: Some(12),
                waited_ms: 0,
            };
            view.changes.push(CellChange::new(
                "/w/p.py".into(),
                "p.py".into(),
                Some("a\nb\n".into()),
                "a\nc\nd\n",
            ));
        }
        t.push(cell);
        t.push(PaneEntry::new(
            Speaker::Assistant,
            "Fixed: `p.py` now parses.\n",
        ));
        t
    }

    #[test]
    fn the_transcript_has_prompts_answers_cells_and_changes() {
        let text = text(&session(), OnQuit::Transcript);
        let expected = "\
── hello-tui ──

hello-tui: No model is set.

› fix the parser
  please

▸ cell ✓ 12 ms
  │ print('a')
  │ fs.write('p.py', 'x')
  ⎿ out 1
    out 2
    out 3
    out 4
    out 5
    out 6
    … 4 more lines
  ✎ p.py +2 −1

Fixed: `p.py` now parses.

";
        assert_eq!(text, expected);
        assert!(!text.contains("the user wants"), "reasoning is not printed");
    }

    #[test]
    fn summary_is_the_last_answer_and_none_is_nothing() {
        assert_eq!(
            text(&session(), OnQuit::Summary),
            "── hello-tui ──\n\nFixed: `p.py` now parses.\n\n"
        );
        assert_eq!(text(&session(), OnQuit::None), "");
    }

    #[test]
    fn a_session_without_a_prompt_or_cell_prints_nothing() {
        let mut t = Transcript::new();
        t.push(PaneEntry::new(Speaker::Notice, "Trust this workspace?"));
        assert_eq!(text(&t, OnQuit::Transcript), "");
        assert_eq!(text(&t, OnQuit::Summary), "");
    }

    #[test]
    fn escapes_in_answers_and_output_never_reach_the_terminal() {
        let mut t = Transcript::new();
        t.push(PaneEntry::new(Speaker::User, "hi\x1b]0;owned\x07"));
        let mut cell = PaneEntry::cell(2, "print('\\x1b[2J')");
        cell.text = "\x1b[2J\x1b[31mred\n".into();
        t.push(cell);
        t.push(PaneEntry::new(Speaker::Assistant, "\x1b[?1049hgone"));
        for mode in [OnQuit::Transcript, OnQuit::Summary] {
            let text = text(&t, mode);
            assert!(!text.contains('\x1b'), "{text:?}");
            assert!(!text.contains('\x07'), "{text:?}");
        }
    }

    #[test]
    fn a_failed_or_interrupted_cell_says_so() {
        let mut t = Transcript::new();
        let mut failed = PaneEntry::cell(1, "1/0");
        if let Some(view) = failed.cell.as_mut() {
            view.status = CellStatus::Failed {
                summary: "ZeroDivisionError: division by zero\nTraceback".into(),
            };
        }
        t.push(failed);
        t.push(PaneEntry::cell(2, "while True: pass"));
        let text = text(&t, OnQuit::Transcript);
        assert!(
            text.contains("▸ cell ✗ ZeroDivisionError: division by zero\n"),
            "{text}"
        );
        assert!(text.contains("▸ cell stopped while running\n"), "{text}");
    }
}

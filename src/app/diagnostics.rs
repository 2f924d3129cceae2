//! The diagnostics service in the workbench: its events update the store,
//! the store's contents become the pane's rows (grouped by file, the active
//! file first), and F8 / Shift+F8 walk them.

use std::path::Path;

use std::sync::Arc;

use super::state::AppState;
use crate::diagnostics::{DiagnosticsEvent, Interner, Position};
use crate::workbench::diagnostics::DiagnosticRow;

/// Applies one event from the service; returns whether the screen changed.
pub fn apply(state: &mut AppState, event: DiagnosticsEvent) -> bool {
    state.workbench.diagnostic_sources_mut().lsp.record(&event);
    match &event {
        DiagnosticsEvent::Notice(text) => {
            state.workbench.set_status(text.clone());
            // The bar may cut it; the conversation shows it whole, once
            // (a check failing on every save says it once).
            if state.workbench.diagnostic_sources().last_notice.as_deref() != Some(text.as_str()) {
                state.workbench.diagnostic_sources_mut().last_notice = Some(text.clone());
                state.workbench.notice(text);
            }
            true
        }
        DiagnosticsEvent::ServerState {
            name,
            state: server,
        } => {
            // The bar gets a few words; the whole story, the server's own
            // reason included, goes to the conversation, where it can be
            // read at any width.
            state
                .workbench
                .set_status(format!("{name}: {}", server.brief()));
            if let crate::diagnostics::ServerState::GaveUp { reason } = server {
                state.workbench.notice(&format!(
                        "{name} stopped after repeated failures: {reason}. /lsp-restart starts it again."
                    ),
                );
            }
            true
        }
        DiagnosticsEvent::CheckState { name, state: check } => {
            state.workbench.set_status(format!("{name}: {check}"));
            true
        }
        // Kept for `/lsp` (above); nothing on screen changes.
        DiagnosticsEvent::Routed { .. } => false,
        DiagnosticsEvent::Published { diagnostics, .. } => {
            let large = diagnostics.len() >= crate::diagnostics::FILE_CAP;
            let changed = state.workbench.diagnostic_sources_mut().store.apply(event);
            if large {
                crate::diagnostics::give_back_freed_memory();
            }
            if changed {
                let active = state
                    .workbench
                    .editors()
                    .active()
                    .map(|d| d.path().to_path_buf());
                rebuild_rows(state, active.as_deref());
            }
            changed
        }
    }
}

/// Rebuilds the pane's rows from the store. `active` (the file in the file
/// view) comes first: what the user is looking at matters most. A file
/// gives at most `store::FILE_CAP` rows; the pane says how many more.
pub(crate) fn rebuild_rows(state: &mut AppState, active: Option<&Path>) {
    let root = state.workbench.workspace_root().clone();
    let selected = state
        .diagnostics
        .rows
        .get(state.diagnostics.cursor.selected)
        .map(|row| row.id.clone());
    let store = &state.workbench.diagnostic_sources().store;
    let mut files: Vec<&Path> = store.files().collect();
    files.sort_by_key(|path| Some(*path) != active);
    let mut labels = Interner::default();
    let mut rows = Vec::new();
    let mut more = Vec::new();
    for file in files {
        let shown: Arc<str> = Arc::from(file.strip_prefix(&root).unwrap_or(file).to_string_lossy());
        for d in store.for_file(file) {
            rows.push(DiagnosticRow {
                severity: d.severity,
                path: shown.clone(),
                abs_path: d.path.clone(),
                line: d.range.start.line + 1,
                column: d.range.start.character + 1,
                message: one_line(&d.message),
                detail: d.message.clone(),
                related: d
                    .related
                    .iter()
                    .map(|r| {
                        let path = r.path.strip_prefix(&root).unwrap_or(&r.path);
                        format!(
                            "{}:{}:{} {}",
                            path.display(),
                            r.line + 1,
                            r.character + 1,
                            joined(&r.message)
                        )
                    })
                    .collect(),
                source: Some(match &d.code {
                    Some(code) => labels.intern(&format!("{} {code}", d.source)),
                    None => d.source.clone(),
                }),
                id: d.id(),
            });
        }
        let omitted = store.omitted(file);
        if omitted > 0 {
            more.push((shown, omitted));
        }
    }
    state.diagnostics.counts = store.counts();
    state.diagnostics.rows = rows;
    state.diagnostics.more = more;
    // Keep the selection on the same diagnostic when it is still there.
    let index = selected
        .and_then(|id| state.diagnostics.rows.iter().position(|r| r.id == id))
        .unwrap_or(0);
    state.diagnostics.cursor.selected = index.min(state.diagnostics.rows.len().saturating_sub(1));
}

/// F8 / Shift+F8: the next (or previous) diagnostic after the editor's
/// cursor, across files, wrapping around. The cursor is the anchor (as in
/// helix and VS Code) so a problem under or after it is never skipped; with
/// no file open, the first F8 goes to the selected row itself, which nobody
/// has visited yet.
pub fn step(state: &mut AppState, forward: bool) -> Option<DiagnosticRow> {
    let store = &state.workbench.diagnostic_sources().store;
    let target = match state.workbench.editors().active() {
        Some(doc) => {
            let (line, character) = doc.cursor();
            let here = Position::new(line, character);
            if forward {
                store.next_after(doc.path(), here)
            } else {
                store.previous_before(doc.path(), here)
            }
        }
        None => {
            let row = state
                .diagnostics
                .rows
                .get(state.diagnostics.cursor.selected)?;
            if forward {
                return Some(row.clone());
            }
            let here = Position::new(row.line.saturating_sub(1), row.column.saturating_sub(1));
            store.previous_before(&row.abs_path, here)
        }
    }?
    .id();
    let index = state.diagnostics.rows.iter().position(|r| r.id == target)?;
    state.diagnostics.cursor.selected = index;
    state.diagnostics.rows.get(index).cloned()
}

/// Enter on a diagnostic, or F8: the file opens at the problem.
pub(crate) fn open_selected(state: &mut AppState) -> super::command::Command {
    let Some(row) = state
        .diagnostics
        .rows
        .get(state.diagnostics.cursor.selected)
        .cloned()
    else {
        return super::command::Command::None;
    };
    super::editors::open(state, &row.abs_path, Some((row.line, row.column)))
}

/// A message's lines, trimmed, joined by ` · `: servers send several
/// (ruff: the problem, then `help: …`), and a list row is one line. A
/// message that is one line already is shared, not copied.
fn one_line(message: &Arc<str>) -> Arc<str> {
    if !message.contains('\n') && message.trim() == &**message {
        return message.clone();
    }
    joined(message).into()
}

fn joined(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::diagnostics::{Diagnostic, Range, Severity};
    use std::path::PathBuf;

    fn state() -> AppState {
        let settings = Settings::defaults();
        AppState::new(PathBuf::from("/ws"), settings)
    }

    fn diag(path: &str, line: usize, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            path: Path::new(path).into(),
            range: Range::new(Position::new(line, 0), Position::new(line, 3)),
            severity,
            message: message.into(),
            source: "ruff".into(),
            code: Some("F401".into()),
            related: Vec::new(),
        }
    }

    fn publish(s: &mut AppState, path: &str, diagnostics: Vec<Diagnostic>) {
        apply(
            s,
            DiagnosticsEvent::Published {
                source: "ruff".into(),
                path: PathBuf::from(path),
                diagnostics,
            },
        );
    }

    #[test]
    fn published_diagnostics_become_relative_grouped_rows() {
        let mut s = state();
        publish(
            &mut s,
            "/ws/b.py",
            vec![diag("/ws/b.py", 4, Severity::Error, "undefined name")],
        );
        publish(
            &mut s,
            "/ws/a.py",
            vec![
                diag("/ws/a.py", 9, Severity::Warning, "later"),
                diag("/ws/a.py", 0, Severity::Hint, "unused import"),
            ],
        );
        let rows: Vec<_> = s
            .diagnostics
            .rows
            .iter()
            .map(|r| (&*r.path, r.line))
            .collect();
        assert_eq!(rows, vec![("a.py", 1), ("a.py", 10), ("b.py", 5)]);
        assert_eq!(s.diagnostics.rows[0].source.as_deref(), Some("ruff F401"));

        rebuild_rows(&mut s, Some(Path::new("/ws/b.py")));
        assert_eq!(
            &*s.diagnostics.rows[0].path, "b.py",
            "the active file comes first"
        );

        publish(&mut s, "/ws/b.py", vec![]);
        assert_eq!(
            s.diagnostics.rows.len(),
            2,
            "an empty publish clears that file"
        );
    }

    #[test]
    fn f8_without_an_open_file_starts_at_the_selection_and_wraps() {
        let mut s = state();
        publish(
            &mut s,
            "/ws/a.py",
            vec![diag("/ws/a.py", 1, Severity::Error, "one")],
        );
        publish(
            &mut s,
            "/ws/b.py",
            vec![diag("/ws/b.py", 2, Severity::Error, "two")],
        );
        assert_eq!(
            step(&mut s, true).map(|r| r.message),
            Some("one".into()),
            "with no file open, the first F8 goes to the selected problem itself"
        );
        assert_eq!(
            step(&mut s, false).map(|r| r.message),
            Some("two".into()),
            "wraps backwards"
        );
        assert_eq!(step(&mut s, false).map(|r| r.message), Some("one".into()));
    }

    #[test]
    fn notices_and_server_states_reach_the_status_line() {
        let mut s = state();
        apply(
            &mut s,
            DiagnosticsEvent::Notice("no language server for rust".into()),
        );
        assert_eq!(
            s.workbench.status_notice(),
            Some("no language server for rust")
        );
        // Whole in the conversation, and once.
        apply(
            &mut s,
            DiagnosticsEvent::Notice("no language server for rust".into()),
        );
        let said: Vec<&str> = s
            .workbench
            .transcript()
            .iter()
            .map(|m| m.text.as_str())
            .filter(|t| t.contains("no language server"))
            .collect();
        assert_eq!(said, ["no language server for rust"]);
    }

    #[test]
    fn a_server_giving_up_is_kept_in_the_conversation_with_the_way_back() {
        let mut s = state();
        apply(
            &mut s,
            DiagnosticsEvent::ServerState {
                name: "pyright".into(),
                state: crate::diagnostics::ServerState::GaveUp {
                    reason: "exit status 3".into(),
                },
            },
        );
        let last = s.workbench.transcript().last().expect("a notice");
        assert!(last.text.contains("pyright stopped"), "{}", last.text);
        assert!(last.text.contains("/lsp-restart"), "{}", last.text);
    }
}

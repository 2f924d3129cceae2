//! Markdown for the model, plus a per-section character breakdown.
//!
//! Every location is written out (path, language, 1-based line range,
//! truncation) so the model never guesses where a snippet comes from. File
//! content only ever appears inside a fence longer than any backtick run in
//! it, and free text (messages, names) is collapsed to one line, so data
//! cannot fake a section boundary or an instruction. The item functions are
//! also what [`super::collect`] measures, so the budget it enforces is the
//! exact size of this output.

use std::fmt::Write as _;

use super::model::*;
use super::text::{char_len, fence, inline_code, longest_run, one_line};

/// A section of the rendered snapshot, for the F2 preview's breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Header,
    ActiveEditor,
    Notes,
    Snippet,
    Diagnostics,
    OpenTabs,
    VisibleEditors,
    ProjectFiles,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SectionCost {
    pub section: Section,
    pub chars: usize,
}

/// The Markdown and where its characters went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rendered {
    pub markdown: String,
    pub sections: Vec<SectionCost>,
}

/// Renders `snapshot`. Sections after the header are separated by a blank
/// line, counted in the following section's cost.
pub fn render(snapshot: &Snapshot) -> Rendered {
    let mut parts: Vec<(Section, String)> = Vec::new();
    if let Some(active) = &snapshot.active_editor {
        parts.push((Section::ActiveEditor, active_section(active)));
    } else {
        parts.push((Section::ActiveEditor, no_active_section()));
    }
    if let Some(notes) = list_text(&snapshot.notes, notes_heading, |note| note_item(note)) {
        parts.push((Section::Notes, notes));
    }
    if let Some(snippet) = &snapshot.snippet {
        parts.push((Section::Snippet, snippet_section(snippet)));
    }
    let lists: [(Section, Option<String>); 4] = [
        (
            Section::Diagnostics,
            list_text(&snapshot.diagnostics, diagnostics_heading, diagnostic_item),
        ),
        (
            Section::OpenTabs,
            list_text(&snapshot.open_tabs, tabs_heading, tab_item),
        ),
        (
            Section::VisibleEditors,
            list_text(&snapshot.visible_editors, visible_heading, |path| {
                visible_item(path)
            }),
        ),
        (
            Section::ProjectFiles,
            list_text(&snapshot.project_files, project_heading, project_item),
        ),
    ];
    parts.extend(
        lists
            .into_iter()
            .filter_map(|(section, text)| Some((section, text?))),
    );

    let body_chars: usize = parts.iter().map(|(_, text)| char_len(text) + 1).sum();
    let header = header_with_used(snapshot, body_chars);
    let mut sections = vec![SectionCost {
        section: Section::Header,
        chars: char_len(&header),
    }];
    let mut markdown = header;
    for (section, text) in parts {
        markdown.push('\n');
        markdown.push_str(&text);
        sections.push(SectionCost {
            section,
            chars: char_len(&text) + 1,
        });
    }
    if char_len(&markdown) > snapshot.budget.max {
        // Only reachable when the budget cannot even hold the header: say so
        // in as many characters as there are.
        let note = format!(
            "Runtime context snapshot omitted: a budget of {} chars is too small.\n",
            snapshot.budget.max
        );
        let markdown: String = note.chars().take(snapshot.budget.max).collect();
        let chars = char_len(&markdown);
        return Rendered {
            markdown,
            sections: vec![SectionCost {
                section: Section::Header,
                chars,
            }],
        };
    }
    Rendered { markdown, sections }
}

/// The header states `used/max`, where `used` includes the header itself;
/// the only unknown is how many digits `used` has, so try each.
fn header_with_used(snapshot: &Snapshot, body_chars: usize) -> String {
    let budget = snapshot.budget;
    for digits in 1..=20 {
        let guess = header_len_with_digits(snapshot, digits) + body_chars;
        if guess.to_string().len() == digits {
            return header(&snapshot.workspace, guess, budget.max, budget.truncated);
        }
    }
    header(
        &snapshot.workspace,
        budget.max,
        budget.max,
        budget.truncated,
    )
}

fn header_len_with_digits(snapshot: &Snapshot, digits: usize) -> usize {
    let placeholder = 10usize.saturating_pow(digits as u32 - 1);
    char_len(&header(
        &snapshot.workspace,
        placeholder,
        snapshot.budget.max,
        snapshot.budget.truncated,
    ))
}

/// The top of the snapshot. `used`/`truncated` are written explicitly so the
/// model knows it sees a summary, not whole files.
pub fn header(workspace: &WorkspaceInfo, used: usize, max: usize, truncated: bool) -> String {
    let mut out = String::from("# Runtime context snapshot\n");
    let _ = write!(out, "Workspace: {}", inline_code(&workspace.name));
    if workspace.roots.len() > 1 {
        let names: Vec<String> = workspace
            .roots
            .iter()
            .take(10)
            .map(|r| inline_code(r))
            .collect();
        let more = workspace.roots.len().saturating_sub(10);
        let tail = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        let _ = write!(
            out,
            " (roots: {}{tail}; paths start with the root name)",
            names.join(", ")
        );
    } else if workspace.roots.is_empty() {
        out.push_str(" (no root folder)");
    } else {
        out.push_str(" (paths are relative to the workspace root)");
    }
    let _ = writeln!(
        out,
        "\nBudget: {used}/{max} chars used, truncated: {}",
        if truncated { "yes" } else { "no" }
    );
    out
}

pub(crate) fn no_active_section() -> String {
    "## Active editor\nNo file is open in the editor.\n".to_string()
}

pub(crate) fn active_section(active: &ActiveInfo) -> String {
    let mut out = String::from("## Active editor\n");
    let _ = writeln!(out, "- path: {}", inline_code(&active.path));
    match active.scope {
        super::paths::PathScope::Workspace => {}
        super::paths::PathScope::Home => {
            out.push_str("- location: outside the workspace (in the home directory)\n")
        }
        super::paths::PathScope::Outside => {
            out.push_str("- location: outside the workspace (full path not shared)\n")
        }
    }
    let _ = writeln!(out, "- language: {}", one_line(&active.language_id, 40));
    if let Some(lines) = active.line_count {
        let _ = writeln!(out, "- lines: {lines}");
    }
    out.push_str(match active.is_dirty {
        Some(true) => "- unsaved changes: YES — the editor buffer differs from the file on disk; tests, builds and running processes still see the saved version\n",
        Some(false) => "- unsaved changes: no (buffer matches disk)\n",
        None => "- unsaved changes: unknown\n",
    });
    if let Some(cursor) = active.cursor {
        let _ = writeln!(
            out,
            "- cursor: line {}, column {}",
            cursor.line, cursor.column
        );
    }
    match active.selection {
        Some(span) => {
            let _ = writeln!(
                out,
                "- selection: line {} column {} to line {} column {}",
                span.start.line, span.start.column, span.end.line, span.end.column
            );
        }
        None => out.push_str("- selection: none\n"),
    }
    if active.content_withheld {
        out.push_str("- content: WITHHELD — this file matches a privacy rule for secrets; only its name is shared\n");
    }
    out
}

pub(crate) fn notes_heading(_total: usize) -> String {
    "## Notes\n".to_string()
}

pub(crate) fn note_item(note: &str) -> String {
    format!("- {}\n", one_line(note, 200))
}

pub(crate) fn snippet_section(snippet: &CodeSnippet) -> String {
    let mut out = String::new();
    let what = match snippet.kind {
        SnippetKind::Selection => "Selected code",
        SnippetKind::Cursor => "Code around the cursor",
    };
    let _ = writeln!(
        out,
        "## {what}: {} lines {}–{}",
        inline_code(&snippet.path),
        snippet.start_line,
        snippet.end_line
    );
    let origin = if snippet.unsaved {
        "unsaved editor buffer (disk may still hold the old content)"
    } else {
        "editor buffer"
    };
    let truncated = if snippet.truncated {
        format!(
            "yes ({} is lines {}–{})",
            match snippet.kind {
                SnippetKind::Selection => "the selection",
                SnippetKind::Cursor => "the requested window",
            },
            snippet.requested_start_line,
            snippet.requested_end_line
        )
    } else {
        "no".to_string()
    };
    let _ = writeln!(
        out,
        "From: {origin}; language: {}; truncated: {truncated}",
        one_line(&snippet.language_id, 40)
    );
    let run = snippet
        .lines
        .iter()
        .map(|line| longest_run(line, '`'))
        .max()
        .unwrap_or(0);
    let fence = fence(run);
    let _ = writeln!(out, "{fence}{}", info_string(&snippet.language_id));
    for line in &snippet.lines {
        out.push_str(line);
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
    let around = match (snippet.more_above, snippet.more_below) {
        (true, true) => Some("The file continues above and below; read the file for more."),
        (true, false) => Some("The file continues above; read the file for more."),
        (false, true) => Some("The file continues below; read the file for more."),
        (false, false) => None,
    };
    if let Some(around) = around {
        let _ = writeln!(out, "{around}");
    }
    out
}

/// A fence info string cannot contain backticks or spaces; keep it simple.
fn info_string(language_id: &str) -> String {
    language_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '.' | '-' | '_'))
        .take(40)
        .collect()
}

pub(crate) fn diagnostics_heading(total: usize) -> String {
    format!(
        "## Diagnostics ({total})\nClues reported by tools (language servers, linters); they can be stale or wrong, so check the code before calling one the cause.\n"
    )
}

pub(crate) fn diagnostic_item(diagnostic: &DiagnosticInfo) -> String {
    let mut location = diagnostic.path.clone();
    if let Some(line) = diagnostic.line {
        let _ = write!(location, ":{line}");
        if let Some(column) = diagnostic.column {
            let _ = write!(location, ":{column}");
        }
    }
    let mut out = format!(
        "- {} {}",
        inline_code(&location),
        one_line(&diagnostic.severity, 20)
    );
    if let Some(source) = &diagnostic.source {
        let _ = write!(out, ", reported by {}", one_line(source, 40));
    }
    if let Some(code) = &diagnostic.code {
        let _ = write!(out, " [{}]", one_line(code, 40));
    }
    match &diagnostic.message {
        Some(message) => {
            let _ = writeln!(out, ": {}", one_line(message, 300));
        }
        None => out.push_str(": message withheld (file matches a privacy rule)\n"),
    }
    out
}

pub(crate) fn tabs_heading(total: usize) -> String {
    format!("## Open tabs ({total})\n")
}

pub(crate) fn tab_item(tab: &TabInfo) -> String {
    let flags: Vec<&str> = [(tab.is_active, "active"), (tab.is_dirty, "unsaved")]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect();
    if flags.is_empty() {
        format!("- {}\n", inline_code(&tab.path))
    } else {
        format!("- {} ({})\n", inline_code(&tab.path), flags.join(", "))
    }
}

pub(crate) fn visible_heading(total: usize) -> String {
    format!("## Visible editors ({total})\n")
}

pub(crate) fn visible_item(path: &str) -> String {
    format!("- {}\n", inline_code(path))
}

pub(crate) fn project_heading(total: usize) -> String {
    format!("## Project files ({total})\n")
}

pub(crate) fn project_item(file: &ProjectFileInfo) -> String {
    let path = inline_code(&file.path);
    match &file.content {
        ProjectFileContent::Withheld => format!("### {path}: content withheld (privacy rule)\n"),
        ProjectFileContent::Instructions => {
            format!("### {path}: project instructions, sent in full in the system prompt\n")
        }
        ProjectFileContent::Unavailable { reason } => {
            format!("### {path}: {}\n", one_line(reason, 160))
        }
        ProjectFileContent::Summary(summary) => {
            let mut out = if summary.excerpt.is_empty() {
                format!("### {path} ({})\n", summary.kind)
            } else {
                let more = if summary.excerpt_truncated {
                    ", more follows"
                } else {
                    ""
                };
                format!(
                    "### {path} ({}, first {} lines{more})\n",
                    summary.kind,
                    summary.excerpt.len()
                )
            };
            for fact in &summary.facts {
                let _ = writeln!(out, "- {}", one_line(fact, 400));
            }
            if !summary.excerpt.is_empty() {
                let run = summary
                    .excerpt
                    .iter()
                    .map(|line| longest_run(line, '`'))
                    .max()
                    .unwrap_or(0);
                let fence = fence(run);
                let _ = writeln!(out, "{fence}text");
                for line in &summary.excerpt {
                    out.push_str(line);
                    out.push('\n');
                }
                let _ = writeln!(out, "{fence}");
            }
            out
        }
    }
}

/// The closing line of a cut list.
pub(crate) fn omitted_line(omitted: usize) -> String {
    format!("- … {omitted} more not shown (limit or budget)\n")
}

fn list_text<T>(
    list: &Listed<T>,
    heading: fn(usize) -> String,
    item: fn(&T) -> String,
) -> Option<String> {
    if list.items.is_empty() {
        // Empty, or dropped entirely for budget (the header's
        // `truncated: yes` says so).
        return None;
    }
    Some(listed_section(
        &heading(list.total),
        &list.items,
        list.omitted(),
        item,
        omitted_line,
    ))
}

/// Heading, items, and the "… N more" line when something was cut.
pub(crate) fn listed_section<T>(
    heading: &str,
    items: &[T],
    omitted: usize,
    item: fn(&T) -> String,
    omitted_line: fn(usize) -> String,
) -> String {
    let mut out = heading.to_string();
    for entry in items {
        out.push_str(&item(entry));
    }
    if omitted > 0 {
        out.push_str(&omitted_line(omitted));
    }
    out
}

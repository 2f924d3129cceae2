//! Source → Snapshot: normalise, filter for privacy, and spend a character
//! budget in priority order.
//!
//! Priority follows the user's attention: the active file's facts, then the
//! selection or the code around the cursor, then diagnostics, then tabs and
//! visible editors, then project file summaries. Every item is measured with
//! the renderer's own item functions, so the rendered Markdown (header
//! included) never exceeds the budget. The work done depends on the budget,
//! not on the size of the buffer: lines are located by scanning, never by
//! splitting the whole text.

use super::language::language_id_for_path;
use super::model::*;
use super::paths::{PathDisplay, file_name};
use super::privacy::{OnDisk, PrivacyRules};
use super::project::{ProjectFileReader, summarize};
use super::render::{self, render};
use super::source::{ActiveEditor, SceneDiagnostic, Source};
use super::text::{char_len, clean_line, line_start, lines_from, one_line};

/// Characters kept per snippet line; minified code must not eat the budget.
const MAX_LINE_CHARS: usize = 500;

/// Limits and rules for one snapshot. `Default` matches the origin design:
/// 12 000 chars, ±80 lines, 20 tabs, 20 diagnostics, files up to 100 KB.
#[derive(Debug, Clone)]
pub struct CollectOptions {
    pub budget: usize,
    pub context_lines: usize,
    pub max_tabs: usize,
    pub max_diagnostics: usize,
    pub max_project_files: usize,
    pub max_project_file_bytes: u64,
    pub privacy: PrivacyRules,
    /// Paths under it are shown as `~/...`; taken from `$HOME` by default.
    pub home_dir: Option<String>,
}

impl Default for CollectOptions {
    fn default() -> Self {
        Self {
            budget: 12_000,
            context_lines: 80,
            max_tabs: 20,
            max_diagnostics: 20,
            max_project_files: 20,
            max_project_file_bytes: 100 * 1024,
            privacy: PrivacyRules::default(),
            home_dir: std::env::var("HOME").ok().filter(|home| !home.is_empty()),
        }
    }
}

/// Characters left, and whether anything had to be left out.
struct Budget {
    remaining: usize,
    truncated: bool,
}

impl Budget {
    fn fits(&self, chars: usize) -> bool {
        chars <= self.remaining
    }

    fn spend(&mut self, chars: usize) {
        self.remaining = self.remaining.saturating_sub(chars);
    }
}

/// Builds the budgeted snapshot of `source`. Never fails: parts that cannot
/// be read become notes. `budget.used` is the exact length of
/// `render(&snapshot).markdown`.
pub fn collect(
    source: &Source,
    options: &CollectOptions,
    reader: &dyn ProjectFileReader,
) -> Snapshot {
    let paths = PathDisplay::new(&source.workspace.roots, options.home_dir.as_deref());
    let workspace = WorkspaceInfo {
        name: one_line(&source.workspace.name, 100),
        roots: source
            .workspace
            .roots
            .iter()
            .map(|root| one_line(file_name(root), 100))
            .collect(),
    };
    let max = options.budget;
    let header_cost = char_len(&render::header(&workspace, max, max, true));
    let mut snapshot = Snapshot {
        workspace,
        active_editor: None,
        notes: Listed::default(),
        snippet: None,
        diagnostics: Listed::default(),
        open_tabs: Listed::default(),
        visible_editors: Listed::default(),
        project_files: Listed::default(),
        budget: BudgetInfo {
            used: 0,
            max,
            truncated: false,
        },
    };
    let mut budget = Budget {
        remaining: max.saturating_sub(header_cost),
        truncated: header_cost > max,
    };

    let editor = source.active_editor.as_ref();
    let privacy = OnDisk::new(&options.privacy, &source.workspace.roots);
    let active = editor.map(|editor| active_info(editor, &paths, &privacy));
    let active_cost = 1 + char_len(&match &active {
        Some(active) => render::active_section(active),
        None => render::no_active_section(),
    });
    snapshot.active_editor = active.clone();
    if header_cost > max || !budget.fits(active_cost) {
        // Rendering this overflows, so `render` prints its "budget too
        // small" notice rather than a misleading "no file is open".
        snapshot.budget.truncated = true;
        return finish(snapshot);
    }
    budget.spend(active_cost);

    let mut notes: Vec<String> = source
        .notes
        .iter()
        .flatten()
        .map(|note| paths.scrub(note))
        .collect();
    let plan = match (editor, &active) {
        (Some(editor), Some(active)) if !active.content_withheld => plan_snippet(
            editor,
            options.context_lines.min(budget.remaining),
            budget.remaining,
            &mut notes,
        ),
        _ => None,
    };
    snapshot.notes = fit_list(
        &mut budget,
        notes,
        usize::MAX,
        render::notes_heading,
        |note: &String| render::note_item(note),
    );

    let diagnostics = diagnostics(source, active.as_ref(), &paths, &privacy);
    let tabs = tabs(source, active.as_ref(), &paths);
    let visible: Vec<String> = source
        .visible_editors
        .iter()
        .flatten()
        .map(|path| paths.display(path).0)
        .collect();
    let project_count = source.project_files.as_ref().map_or(0, Vec::len);
    let anything_follows =
        !diagnostics.is_empty() || !tabs.is_empty() || !visible.is_empty() || project_count > 0;

    if let (Some(plan), Some(active)) = (plan, &active) {
        // Keep a quarter for what follows so a huge selection cannot erase
        // the diagnostic the user is asking about.
        let share = if anything_follows {
            budget.remaining - budget.remaining / 4
        } else {
            budget.remaining
        };
        match fit_snippet(&plan, active, share) {
            Some((snippet, cost)) => {
                budget.truncated |= snippet.truncated;
                budget.spend(cost);
                snapshot.snippet = Some(snippet);
            }
            None => budget.truncated = true,
        }
    }

    let not_listed = source.diagnostics_not_listed.unwrap_or(0);
    snapshot.diagnostics = fit_counted_list(
        &mut budget,
        diagnostics,
        not_listed,
        options.max_diagnostics,
        render::diagnostics_heading,
        render::diagnostic_item,
    );
    snapshot.open_tabs = fit_list(
        &mut budget,
        tabs,
        options.max_tabs,
        render::tabs_heading,
        render::tab_item,
    );
    snapshot.visible_editors = fit_list(
        &mut budget,
        visible,
        options.max_tabs,
        render::visible_heading,
        |path: &String| render::visible_item(path),
    );
    snapshot.project_files = project_files(source, options, reader, &paths, &privacy, &mut budget);

    snapshot.budget.truncated = budget.truncated;
    finish(snapshot)
}

/// Sets `budget.used`, and as a last line of defence drops the lowest
/// priority sections if the output would still exceed the budget.
fn finish(mut snapshot: Snapshot) -> Snapshot {
    loop {
        let used = char_len(&render(&snapshot).markdown);
        if used <= snapshot.budget.max {
            snapshot.budget.used = used;
            return snapshot;
        }
        snapshot.budget.truncated = true;
        if !snapshot.project_files.items.is_empty() {
            snapshot.project_files.items.clear();
        } else if !snapshot.visible_editors.items.is_empty() {
            snapshot.visible_editors.items.clear();
        } else if !snapshot.open_tabs.items.is_empty() {
            snapshot.open_tabs.items.clear();
        } else if !snapshot.diagnostics.items.is_empty() {
            snapshot.diagnostics.items.clear();
        } else if snapshot.snippet.is_some() {
            snapshot.snippet = None;
        } else if !snapshot.notes.items.is_empty() {
            snapshot.notes.items.clear();
        } else {
            // Only the header and active facts are left; `render` reduces
            // that to a one-line notice within the budget.
            snapshot.budget.used = char_len(&render(&snapshot).markdown);
            return snapshot;
        }
    }
}

fn active_info(editor: &ActiveEditor, paths: &PathDisplay, privacy: &OnDisk) -> ActiveInfo {
    let (path, scope) = paths.display(&editor.path);
    let language_id = editor
        .language_id
        .clone()
        .filter(|id| !id.trim().is_empty())
        .unwrap_or_else(|| language_id_for_path(&editor.path).to_string());
    let selection = editor
        .selection
        .filter(|range| range.start != range.end)
        .map(|range| {
            let (start, end) = if range.start <= range.end {
                (range.start, range.end)
            } else {
                (range.end, range.start)
            };
            Span {
                start: LineColumn {
                    line: start.line.saturating_add(1),
                    column: start.character.saturating_add(1),
                },
                end: LineColumn {
                    line: end.line.saturating_add(1),
                    column: end.character.saturating_add(1),
                },
            }
        });
    ActiveInfo {
        path,
        scope,
        language_id,
        line_count: editor.line_count,
        is_dirty: editor.is_dirty,
        cursor: editor.cursor.map(|cursor| LineColumn {
            line: cursor.line.saturating_add(1),
            column: cursor.character.saturating_add(1),
        }),
        selection,
        content_withheld: privacy.is_withheld(&editor.path),
    }
}

/// Lines gathered around the cursor or over the selection, before fitting.
struct SnippetPlan {
    kind: SnippetKind,
    /// 0-based line number of `lines[0]`.
    first_line: usize,
    lines: Vec<(String, bool)>,
    /// Index in `lines` the cursor window is centred on.
    focus: usize,
    /// 1-based inclusive range that was asked for.
    requested: (usize, usize),
    /// Lines exist after the last gathered one.
    more_below: bool,
}

fn plan_snippet(
    editor: &ActiveEditor,
    context_lines: usize,
    max_chars: usize,
    notes: &mut Vec<String>,
) -> Option<SnippetPlan> {
    let Some(text) = editor.text.as_deref() else {
        notes.push(
            "The editor did not provide the active file's text, so no code is included."
                .to_string(),
        );
        return None;
    };
    if text.is_empty() {
        notes.push("The active editor's buffer is empty.".to_string());
        return None;
    }
    let selection = editor
        .selection
        .filter(|range| range.start != range.end)
        .map(|range| {
            let (start, end) = if range.start <= range.end {
                (range.start, range.end)
            } else {
                (range.end, range.start)
            };
            // A selection ending at column 0 does not include that line.
            let last = if end.character == 0 && end.line > start.line {
                end.line - 1
            } else {
                end.line
            };
            (start.line, last)
        });
    // Lines before `base` were not sent by the host (see `text_start_line`).
    let base = editor.text_start_line.unwrap_or(0);
    let continues_after = |end: usize| editor.line_count.is_some_and(|count| end < count);
    let outside = |line: usize| {
        format!(
            "The editor sent lines from {} on; line {} is outside them, so no code is included.",
            base + 1,
            line + 1
        )
    };
    if let Some((start, last)) = selection {
        if last < base {
            notes.push(outside(last));
            return None;
        }
        let first = start.max(base);
        let Some(offset) = line_start(text, first - base) else {
            notes.push(format!(
                "The selection starts at line {}, past the end of the buffer.",
                first.saturating_add(1)
            ));
            return None;
        };
        let wanted = last - first + 1;
        let mut lines = lines_from(text, offset);
        let mut gathered = Vec::new();
        let mut chars = 0;
        while gathered.len() < wanted && chars <= max_chars {
            let Some(line) = lines.next() else { break };
            let cleaned = clean_line(line, MAX_LINE_CHARS);
            chars += char_len(&cleaned.0) + 1;
            gathered.push(cleaned);
        }
        let ended_early = gathered.len() < wanted && chars <= max_chars;
        let requested_end = if ended_early {
            first + gathered.len()
        } else {
            last + 1
        };
        let more_below = if gathered.len() < wanted {
            !ended_early
        } else {
            lines.next().is_some()
        };
        if gathered.is_empty() {
            return None;
        }
        return Some(SnippetPlan {
            kind: SnippetKind::Selection,
            first_line: first,
            lines: gathered,
            focus: 0,
            requested: (start + 1, requested_end),
            more_below,
        });
    }
    let cursor = editor.cursor.map_or(base, |cursor| cursor.line);
    if cursor < base {
        notes.push(outside(cursor));
        return None;
    }
    let first = cursor.saturating_sub(context_lines).max(base);
    let Some(offset) = line_start(text, first - base) else {
        notes.push(format!(
            "The cursor is at line {}, past the end of the buffer.",
            cursor.saturating_add(1)
        ));
        return None;
    };
    let wanted = (cursor - first)
        .saturating_add(context_lines)
        .saturating_add(1);
    let mut lines = lines_from(text, offset);
    let gathered: Vec<(String, bool)> = lines
        .by_ref()
        .take(wanted)
        .map(|line| clean_line(line, MAX_LINE_CHARS))
        .collect();
    if gathered.is_empty() {
        notes.push(format!(
            "The cursor is at line {}, past the end of the buffer.",
            cursor.saturating_add(1)
        ));
        return None;
    }
    let focus = (cursor - first).min(gathered.len() - 1);
    let more_below = lines.next().is_some() || continues_after(first + gathered.len());
    Some(SnippetPlan {
        kind: SnippetKind::Cursor,
        first_line: first,
        requested: (first + 1, first + gathered.len()),
        more_below,
        lines: gathered,
        focus,
    })
}

/// The largest part of the plan that fits in `max_chars` (section cost
/// including its separator): the cursor window shrinks symmetrically, a
/// selection keeps its beginning.
fn fit_snippet(
    plan: &SnippetPlan,
    active: &ActiveInfo,
    max_chars: usize,
) -> Option<(CodeSnippet, usize)> {
    let last = plan.lines.len() - 1;
    let window = |size: usize| match plan.kind {
        SnippetKind::Cursor => (
            plan.focus.saturating_sub(size),
            (plan.focus + size).min(last),
        ),
        SnippetKind::Selection => (0, size.min(last)),
    };
    let build = |size: usize| {
        let (lo, hi) = window(size);
        let shown = &plan.lines[lo..=hi];
        let clipped = shown.iter().any(|(_, clipped)| *clipped);
        let start_line = plan.first_line + lo + 1;
        let end_line = plan.first_line + hi + 1;
        let snippet = CodeSnippet {
            kind: plan.kind,
            path: active.path.clone(),
            language_id: active.language_id.clone(),
            unsaved: active.is_dirty == Some(true),
            start_line,
            end_line,
            requested_start_line: plan.requested.0,
            requested_end_line: plan.requested.1,
            truncated: clipped || (start_line, end_line) != plan.requested,
            more_above: start_line > 1,
            more_below: hi < last || plan.more_below,
            lines: shown.iter().map(|(line, _)| line.clone()).collect(),
        };
        let cost = 1 + char_len(&render::snippet_section(&snippet));
        (snippet, cost)
    };
    // Cost grows with size, so binary-search the largest size that fits.
    let (mut lo, mut hi) = (0usize, last);
    let (first, cost) = build(0);
    if cost > max_chars {
        return None;
    }
    let mut best = (first, cost);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let candidate = build(mid);
        if candidate.1 <= max_chars {
            best = candidate;
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(best)
}

fn severity_rank(severity: &str) -> u8 {
    match severity {
        "error" => 0,
        "warning" => 1,
        "information" => 2,
        "hint" => 3,
        _ => 4,
    }
}

fn normalise_severity(severity: Option<&str>) -> String {
    let severity = severity
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match severity.as_str() {
        "" => "unknown".to_string(),
        "warn" => "warning".to_string(),
        "info" => "information".to_string(),
        other => one_line(other, 20),
    }
}

/// Diagnostics of the active file first, then errors, warnings, the rest.
fn diagnostics(
    source: &Source,
    active: Option<&ActiveInfo>,
    paths: &PathDisplay,
    privacy: &OnDisk,
) -> Vec<DiagnosticInfo> {
    let mut items: Vec<(bool, DiagnosticInfo)> = source
        .diagnostics
        .iter()
        .flatten()
        .map(|diagnostic: &SceneDiagnostic| {
            let path = paths.display(&diagnostic.path).0;
            let in_active = active.is_some_and(|active| active.path == path);
            let message = (!privacy.is_withheld(&diagnostic.path))
                .then(|| one_line(&paths.scrub(&diagnostic.message), 300));
            let info = DiagnosticInfo {
                path,
                line: diagnostic.line.map(|line| line.saturating_add(1)),
                column: diagnostic
                    .line
                    .and(diagnostic.character)
                    .map(|column| column.saturating_add(1)),
                severity: normalise_severity(diagnostic.severity.as_deref()),
                message,
                source: diagnostic.source.as_deref().map(|s| one_line(s, 40)),
                code: diagnostic.code.as_deref().map(|c| one_line(c, 40)),
            };
            (in_active, info)
        })
        .collect();
    items.sort_by(|(a_active, a), (b_active, b)| {
        b_active
            .cmp(a_active)
            .then(severity_rank(&a.severity).cmp(&severity_rank(&b.severity)))
            .then_with(|| a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
    items.into_iter().map(|(_, info)| info).collect()
}

fn tabs(source: &Source, active: Option<&ActiveInfo>, paths: &PathDisplay) -> Vec<TabInfo> {
    source
        .open_tabs
        .iter()
        .flatten()
        .map(|tab| {
            let path = paths.display(&tab.path).0;
            TabInfo {
                is_active: active.is_some_and(|active| active.path == path),
                is_dirty: tab.is_dirty == Some(true),
                path,
            }
        })
        .collect()
}

/// Adds a heading and as many of the first `limit` items as fit, keeping
/// room for the "… N more" line while more remain (`all.len()` is the total
/// the heading counts). Nothing is spent if no item fits.
fn fit_list<T>(
    budget: &mut Budget,
    all: Vec<T>,
    limit: usize,
    heading: fn(usize) -> String,
    item: fn(&T) -> String,
) -> Listed<T> {
    fit_counted_list(budget, all, 0, limit, heading, item)
}

/// [`fit_list`] of a list the host already cut: `not_listed` more items
/// count in the total and the "N more" line.
fn fit_counted_list<T>(
    budget: &mut Budget,
    all: Vec<T>,
    not_listed: usize,
    limit: usize,
    heading: fn(usize) -> String,
    item: fn(&T) -> String,
) -> Listed<T> {
    let total = all.len() + not_listed;
    let candidates = all.into_iter().take(limit);
    if total == 0 {
        return Listed::default();
    }
    let mut cost = 1 + char_len(&heading(total));
    let reserve = char_len(&render::omitted_line(total));
    let mut items = Vec::new();
    for candidate in candidates {
        let item_cost = char_len(&item(&candidate));
        let more_after = total > items.len() + 1;
        let needed = cost + item_cost + if more_after { reserve } else { 0 };
        if !budget.fits(needed) {
            break;
        }
        cost += item_cost;
        items.push(candidate);
    }
    finish_list(items, total, cost, budget)
}

/// Closes a budgeted list: an empty or shortened list marks the snapshot
/// truncated, and the "N more not shown" line is paid for.
fn finish_list<T>(items: Vec<T>, total: usize, mut cost: usize, budget: &mut Budget) -> Listed<T> {
    if items.is_empty() {
        budget.truncated = true;
        return Listed { items, total };
    }
    if total > items.len() {
        budget.truncated = true;
        cost += char_len(&render::omitted_line(total - items.len()));
    }
    budget.spend(cost);
    Listed { items, total }
}

/// Reads and summarises project files while budget remains; a file is read
/// only when there is room to show something of it.
fn project_files(
    source: &Source,
    options: &CollectOptions,
    reader: &dyn ProjectFileReader,
    paths: &PathDisplay,
    privacy: &OnDisk,
    budget: &mut Budget,
) -> Listed<ProjectFileInfo> {
    let files = source.project_files.as_deref().unwrap_or_default();
    let total = files.len();
    if total == 0 {
        return Listed::default();
    }
    let heading_cost = 1 + char_len(&render::project_heading(total));
    let reserve = char_len(&render::omitted_line(total));
    let mut cost = heading_cost;
    let mut items = Vec::new();
    for file in files.iter().take(options.max_project_files) {
        if !budget.fits(cost + reserve + 10) {
            break;
        }
        let content = project_content(file, options, reader, paths, privacy);
        let more_after = total > items.len() + 1;
        let room = budget
            .remaining
            .saturating_sub(cost + if more_after { reserve } else { 0 });
        let Some((info, item_cost, shortened)) =
            fit_project_item(paths.display(&file.path).0, content, room)
        else {
            break;
        };
        budget.truncated |= shortened;
        cost += item_cost;
        items.push(info);
    }
    finish_list(items, total, cost, budget)
}

fn project_content(
    file: &super::source::ProjectFile,
    options: &CollectOptions,
    reader: &dyn ProjectFileReader,
    paths: &PathDisplay,
    privacy: &OnDisk,
) -> ProjectFileContent {
    if privacy.is_withheld(&file.path) {
        return ProjectFileContent::Withheld;
    }
    if is_instructions(&file.path) {
        return ProjectFileContent::Instructions;
    }
    let limit = options.max_project_file_bytes;
    let text = match &file.text {
        Some(text) if text.len() as u64 > limit => {
            Err(super::project::ReadError::TooLarge { limit })
        }
        Some(text) => Ok(text.clone()),
        None => reader.read(&file.path, limit),
    };
    match text {
        Ok(text) => ProjectFileContent::Summary(summarize(file_name(&file.path), &text)),
        Err(err) => ProjectFileContent::Unavailable {
            reason: one_line(&paths.scrub(&err.to_string()), 160),
        },
    }
}

/// Whether `path` is the instruction file the system prompt carries: an
/// `AGENTS.md`, or a `CLAUDE.md` with no `AGENTS.md` beside it (the same
/// rule `agent::instructions` reads them by).
fn is_instructions(path: &str) -> bool {
    let path = std::path::Path::new(path);
    let [agents, claude] = crate::agent::instructions::FILE_NAMES;
    match path.file_name().and_then(|n| n.to_str()) {
        Some(name) if name == agents => true,
        Some(name) if name == claude => !path.with_file_name(agents).is_file(),
        _ => false,
    }
}

/// The project item, shortened (trailing excerpt lines, then facts) until it
/// fits in `room`; also says whether it had to be shortened.
fn fit_project_item(
    path: String,
    content: ProjectFileContent,
    room: usize,
) -> Option<(ProjectFileInfo, usize, bool)> {
    let mut info = ProjectFileInfo { path, content };
    let mut shortened = false;
    loop {
        let cost = char_len(&render::project_item(&info));
        if cost <= room {
            return Some((info, cost, shortened));
        }
        shortened = true;
        let ProjectFileContent::Summary(summary) = &mut info.content else {
            return None;
        };
        if summary.excerpt.pop().is_some() {
            summary.excerpt_truncated = true;
        } else if summary.facts.pop().is_none() {
            return None;
        }
        if summary.excerpt.is_empty() && summary.facts.is_empty() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::source::{ScenePosition, SceneRange, SceneWorkspace};

    fn editor(text: &str, selection: Option<((usize, usize), (usize, usize))>) -> ActiveEditor {
        ActiveEditor {
            path: "/w/a.rs".to_string(),
            text: Some(text.to_string()),
            cursor: Some(ScenePosition {
                line: 0,
                character: 0,
            }),
            selection: selection.map(|(start, end)| SceneRange {
                start: ScenePosition {
                    line: start.0,
                    character: start.1,
                },
                end: ScenePosition {
                    line: end.0,
                    character: end.1,
                },
            }),
            ..ActiveEditor::default()
        }
    }

    fn numbered(count: usize) -> String {
        (1..=count).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn selection_ending_at_column_zero_excludes_that_line() {
        let mut notes = Vec::new();
        let plan = plan_snippet(
            &editor(&numbered(10), Some(((2, 0), (5, 0)))),
            80,
            10_000,
            &mut notes,
        )
        .unwrap();
        assert_eq!(plan.requested, (3, 5));
        assert_eq!(plan.lines.last().unwrap().0, "line 5");
    }

    #[test]
    fn reversed_selection_is_normalised() {
        let mut notes = Vec::new();
        let plan = plan_snippet(
            &editor(&numbered(10), Some(((6, 3), (1, 2)))),
            80,
            10_000,
            &mut notes,
        )
        .unwrap();
        assert_eq!(plan.requested, (2, 7));
        assert_eq!(plan.kind, SnippetKind::Selection);
    }

    #[test]
    fn empty_selection_falls_back_to_the_cursor() {
        let mut notes = Vec::new();
        let plan = plan_snippet(
            &editor(&numbered(10), Some(((4, 2), (4, 2)))),
            80,
            10_000,
            &mut notes,
        )
        .unwrap();
        assert_eq!(plan.kind, SnippetKind::Cursor);
    }

    #[test]
    fn selection_gathering_stops_at_the_budget() {
        let mut notes = Vec::new();
        let text = numbered(100_000);
        let plan = plan_snippet(
            &editor(&text, Some(((0, 0), (99_999, 3)))),
            80,
            500,
            &mut notes,
        )
        .unwrap();
        assert!(
            plan.lines.len() < 100,
            "gathered {} lines",
            plan.lines.len()
        );
        assert!(plan.more_below);
        assert_eq!(plan.requested, (1, 100_000));
    }

    #[test]
    fn missing_or_empty_text_is_a_note() {
        let mut notes = Vec::new();
        let mut active = editor("", None);
        assert!(plan_snippet(&active, 80, 1000, &mut notes).is_none());
        active.text = None;
        assert!(plan_snippet(&active, 80, 1000, &mut notes).is_none());
        assert_eq!(notes.len(), 2);
    }

    #[test]
    fn cursor_window_shrinks_symmetrically() {
        let mut notes = Vec::new();
        let mut active = editor(&numbered(1000), None);
        active.cursor = Some(ScenePosition {
            line: 500,
            character: 0,
        });
        let plan = plan_snippet(&active, 80, 10_000, &mut notes).unwrap();
        let info = active_info(
            &active,
            &PathDisplay::new(&["/w".to_string()], None),
            &OnDisk::new(&PrivacyRules::default(), &[]),
        );
        let (snippet, cost) = fit_snippet(&plan, &info, 600).unwrap();
        assert!(cost <= 600);
        assert!(snippet.truncated);
        assert_eq!(501 - snippet.start_line, snippet.end_line - 501);
        assert!(fit_snippet(&plan, &info, 10).is_none());
    }

    #[test]
    fn severities_are_normalised_and_ranked() {
        assert_eq!(normalise_severity(Some("Warn")), "warning");
        assert_eq!(normalise_severity(Some("info")), "information");
        assert_eq!(normalise_severity(None), "unknown");
        assert!(severity_rank("error") < severity_rank("warning"));
        assert!(severity_rank("hint") < severity_rank("unknown"));
    }

    #[test]
    fn fit_list_keeps_room_for_the_omission_line() {
        let mut budget = Budget {
            remaining: 90,
            truncated: false,
        };
        let items: Vec<String> = (0..10).map(|n| format!("item {n}")).collect();
        let listed = fit_list(
            &mut budget,
            items,
            usize::MAX,
            render::tabs_heading,
            |s: &String| render::visible_item(s),
        );
        let text = render::listed_section(
            &render::tabs_heading(10),
            &listed.items,
            listed.omitted(),
            |s: &String| render::visible_item(s),
            render::omitted_line,
        );
        assert!(!listed.items.is_empty() && listed.omitted() > 0);
        assert_eq!(90 - budget.remaining, char_len(&text) + 1);
        assert!(budget.truncated);
    }

    /// The workbench hands over the first diagnostics of thousands and
    /// counts the rest: the heading counts them all and "N more" says so.
    #[test]
    fn diagnostics_the_host_did_not_list_count_in_the_total() {
        let listed = |line| SceneDiagnostic {
            path: "/w/big.py".to_string(),
            severity: Some("error".to_string()),
            line: Some(line),
            message: format!("Undefined name `x{line}`"),
            ..SceneDiagnostic::default()
        };
        let source = Source {
            workspace: SceneWorkspace {
                name: "w".to_string(),
                roots: vec!["/w".to_string()],
            },
            diagnostics: Some((0..30).map(listed).collect()),
            diagnostics_not_listed: Some(19_970),
            ..Source::default()
        };
        let snapshot = collect(
            &source,
            &CollectOptions::default(),
            &crate::snapshot::DiskReader,
        );
        assert_eq!(snapshot.diagnostics.total, 20_000);
        assert_eq!(snapshot.diagnostics.items.len(), 20, "max_diagnostics");
        let markdown = render(&snapshot).markdown;
        assert!(markdown.contains("## Diagnostics (20000)"), "{markdown}");
        assert!(markdown.contains("… 19980 more not shown"), "{markdown}");
    }

    #[test]
    fn tiny_budget_yields_a_notice_within_budget() {
        let source = Source {
            workspace: SceneWorkspace {
                name: "w".to_string(),
                roots: vec!["/w".to_string()],
            },
            active_editor: Some(editor("secret-free text\n", None)),
            ..Source::default()
        };
        for budget in [0, 5, 40, 120, 180, 220] {
            let options = CollectOptions {
                budget,
                ..CollectOptions::default()
            };
            let snapshot = collect(&source, &options, &crate::snapshot::DiskReader);
            let markdown = render(&snapshot).markdown;
            assert!(char_len(&markdown) <= budget);
            assert!(snapshot.budget.truncated);
            assert!(!markdown.contains("No file is open"), "{markdown}");
        }
    }
}

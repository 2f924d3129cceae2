//! The file view's part of the snapshot scene: the active editor (path,
//! language, dirty state, cursor, selection and its text), the open tabs
//! and what is visible. Copied out on the UI loop, so big buffers send only
//! a window around the cursor and the selection (`text_start_line`), which
//! keeps the cost independent of the file size.

use crate::editor::Document;
use crate::snapshot::{language_id_for_path, source};
use crate::workbench::Workbench;

/// Buffers up to this many lines are sent whole.
const WHOLE_BUFFER_LINES: usize = 2_000;
/// Lines kept around the cursor and the selection in a bigger buffer.
const WINDOW_CONTEXT: usize = 200;

pub fn active_editor(workbench: &Workbench) -> Option<source::ActiveEditor> {
    let doc = workbench.editors.active()?;
    // The file's lines, not the view's: the model reads "10 000 lines" for
    // a file of 10 000 lines ending in a line break.
    let count = doc.file_line_count();
    let (line, character) = doc.cursor();
    let selection = doc.selection();
    let (first, last) = if count <= WHOLE_BUFFER_LINES {
        (0, count)
    } else {
        let lo = selection.map_or(line, |(s, _)| s.0.min(line));
        let hi = selection.map_or(line, |(_, e)| e.0.max(line));
        (
            lo.saturating_sub(WINDOW_CONTEXT),
            (hi + WINDOW_CONTEXT + 1).min(count),
        )
    };
    let text = (!doc.is_binary()).then(|| doc.lines_text(first..last));
    let position = |(line, character): (usize, usize)| source::ScenePosition { line, character };
    Some(source::ActiveEditor {
        path: path_of(doc),
        language_id: Some(language_id_for_path(doc.path()).to_owned()),
        text,
        text_start_line: (first > 0).then_some(first),
        line_count: Some(count),
        is_dirty: Some(doc.is_dirty()),
        cursor: Some(position((line, character))),
        selection: selection.map(|(s, e)| source::SceneRange {
            start: position(s),
            end: position(e),
        }),
    })
}

pub fn open_tabs(workbench: &Workbench) -> Vec<source::OpenTab> {
    workbench
        .editors
        .tabs
        .iter()
        .map(|doc| source::OpenTab {
            path: path_of(doc),
            is_dirty: Some(doc.is_dirty()),
        })
        .collect()
}

/// One file view, so the active editor is the only visible one.
pub fn visible_editors(workbench: &Workbench) -> Vec<String> {
    workbench
        .editors
        .active()
        .map(path_of)
        .into_iter()
        .collect()
}

fn path_of(doc: &Document) -> String {
    doc.path().to_string_lossy().into_owned()
}

//! The file view's geometry: where the text goes and where each tab is.

use std::ops::Range;
use std::path::Path;

use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

use crate::editor::{DiskState, Document};
use crate::sanitize;

/// Where the document's text goes inside the pane: inside the border, below
/// the tab bar.
pub fn text_area(pane: Rect) -> Rect {
    let inner = Rect::new(
        pane.x.saturating_add(1),
        pane.y.saturating_add(1),
        pane.width.saturating_sub(2),
        pane.height.saturating_sub(2),
    );
    if inner.height < 2 {
        return inner;
    }
    Rect::new(inner.x, inner.y + 1, inner.width, inner.height - 1)
}

/// One tab as drawn: " title", " ●" when dirty, the disk note, " │".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    pub title: String,
    pub dirty: bool,
    pub note: Option<&'static str>,
    /// Columns from the tab bar's left edge.
    pub columns: Range<usize>,
}

/// The tab bar's tabs, left to right.
pub fn tabs(docs: &[Document]) -> Vec<Tab> {
    let mut x = 0;
    docs.iter()
        .zip(tab_titles(docs))
        .map(|(doc, title)| {
            let dirty = doc.is_dirty();
            let note = disk_note(doc);
            let width = 1
                + title.width()
                + if dirty { 2 } else { 0 }
                + note.map_or(0, UnicodeWidthStr::width)
                + 2;
            let columns = x..x + width;
            x += width;
            Tab {
                title,
                dirty,
                note,
                columns,
            }
        })
        .collect()
}

/// Which tab is drawn at `column` cells from the tab bar's left edge.
pub(crate) fn tab_at(docs: &[Document], column: u16) -> Option<usize> {
    tabs(docs)
        .iter()
        .position(|t| t.columns.contains(&usize::from(column)))
}

fn disk_note(doc: &Document) -> Option<&'static str> {
    match doc.disk_state() {
        DiskState::ChangedOnDisk { .. } => Some(" (changed on disk)"),
        DiskState::DeletedOnDisk => Some(" (deleted on disk)"),
        DiskState::InSync => None,
    }
}

/// Tab names: the file name, with the parent directory added where two
/// open files share a name.
fn tab_titles(tabs: &[Document]) -> Vec<String> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    tabs.iter()
        .map(|doc| {
            let own = name(doc.path());
            let shared = tabs
                .iter()
                .filter(|other| name(other.path()) == own)
                .count()
                > 1;
            let title = match doc.path().parent().and_then(|p| p.file_name()) {
                Some(parent) if shared => format!("{own} — {}", parent.to_string_lossy()),
                _ => own,
            };
            sanitize::for_display(&title).into_owned()
        })
        .collect()
}

//! Where each pane goes for a given terminal size. A pure function of the
//! size and the focused pane, shared by rendering and mouse hit-testing.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::keymap::PaneId;

/// Terminals at least this big get every pane.
pub(crate) const FULL_WIDTH: u16 = 80;
pub(crate) const FULL_HEIGHT: u16 = 24;

/// The rectangles of one frame. A pane that does not fit is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaneLayout {
    pub conversation: Option<Rect>,
    pub file_view: Option<Rect>,
    pub variables: Option<Rect>,
    pub diagnostics: Option<Rect>,
    pub status: Rect,
}

impl PaneLayout {
    pub fn rect(&self, pane: PaneId) -> Option<Rect> {
        match pane {
            PaneId::Conversation => self.conversation,
            PaneId::FileView => self.file_view,
            PaneId::Variables => self.variables,
            PaneId::Diagnostics => self.diagnostics,
        }
    }

    fn set(&mut self, pane: PaneId, rect: Rect) {
        let slot = match pane {
            PaneId::Conversation => &mut self.conversation,
            PaneId::FileView => &mut self.file_view,
            PaneId::Variables => &mut self.variables,
            PaneId::Diagnostics => &mut self.diagnostics,
        };
        *slot = Some(rect);
    }

    /// The pane under a terminal cell, for mouse clicks and the wheel.
    pub(crate) fn pane_at(&self, column: u16, row: u16) -> Option<PaneId> {
        let point = ratatui::layout::Position::new(column, row);
        PaneId::ALL
            .into_iter()
            .find(|p| self.rect(*p).is_some_and(|r| r.contains(point)))
    }
}

/// Lays out the workbench:
/// - at least 80x24: conversation on the left; file view above variables and
///   diagnostics on the right;
/// - smaller but at least 60x12: the inspector is hidden;
/// - narrower: file view above conversation;
/// - tiny: only the focused pane.
///
/// A hidden pane that has focus takes the place of the last pane shown, so
/// the user always sees what the keyboard is aimed at.
pub fn compute(area: Rect, focus: PaneId) -> PaneLayout {
    let [body, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    let mut layout = PaneLayout {
        status,
        ..PaneLayout::default()
    };
    if body.is_empty() {
        return layout;
    }
    let mut slots: Vec<(PaneId, Rect)> = if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(body);
        let [file, bottom] =
            Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(right);
        let [vars, diags] =
            Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
                .areas(bottom);
        vec![
            (PaneId::Conversation, left),
            (PaneId::FileView, file),
            (PaneId::Variables, vars),
            (PaneId::Diagnostics, diags),
        ]
    } else if area.width >= 60 && area.height >= 12 {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(body);
        let [file, diags] =
            Layout::vertical([Constraint::Percentage(65), Constraint::Percentage(35)]).areas(right);
        vec![
            (PaneId::Conversation, left),
            (PaneId::FileView, file),
            (PaneId::Diagnostics, diags),
        ]
    } else if area.height >= 12 {
        let [file, conversation] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
        vec![
            (PaneId::FileView, file),
            (PaneId::Conversation, conversation),
        ]
    } else {
        vec![(focus, body)]
    };
    if !slots.iter().any(|(pane, _)| *pane == focus)
        && let Some(last) = slots.last_mut()
    {
        last.0 = focus;
    }
    for (pane, rect) in slots {
        layout.set(pane, rect);
    }
    layout
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_visible(layout: &PaneLayout) -> usize {
        PaneId::ALL
            .iter()
            .filter(|p| layout.rect(**p).is_some())
            .count()
    }

    #[test]
    fn full_size_shows_every_pane_without_overlap() {
        let layout = compute(Rect::new(0, 0, 120, 40), PaneId::Conversation);
        assert_eq!(count_visible(&layout), 4);
        let rects: Vec<Rect> = PaneId::ALL.iter().filter_map(|p| layout.rect(*p)).collect();
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                assert!(!a.intersects(*b), "{a:?} overlaps {b:?}");
            }
            assert!(!a.intersects(layout.status));
        }
        assert_eq!(layout.status, Rect::new(0, 39, 120, 1));
    }

    #[test]
    fn below_80x24_hides_the_inspector_unless_focused() {
        let layout = compute(Rect::new(0, 0, 79, 24), PaneId::Conversation);
        assert!(layout.variables.is_none());
        assert!(layout.diagnostics.is_some());
        let layout = compute(Rect::new(0, 0, 79, 24), PaneId::Variables);
        assert!(
            layout.variables.is_some(),
            "the focused pane is always shown"
        );
        assert!(layout.diagnostics.is_none());
    }

    #[test]
    fn tiny_terminals_show_the_focused_pane_only_and_never_panic() {
        for width in 0..=130 {
            for height in 0..=45 {
                for focus in PaneId::ALL {
                    let layout = compute(Rect::new(0, 0, width, height), focus);
                    if width < 60 && height < 12 && height > 1 && width > 0 {
                        assert_eq!(count_visible(&layout), 1);
                        assert!(layout.rect(focus).is_some());
                    }
                }
            }
        }
    }

    #[test]
    fn pane_at_finds_the_pane_under_a_cell() {
        let layout = compute(Rect::new(0, 0, 120, 40), PaneId::Conversation);
        assert_eq!(layout.pane_at(1, 1), Some(PaneId::Conversation));
        assert_eq!(layout.pane_at(119, 38), Some(PaneId::Diagnostics));
        assert_eq!(
            layout.pane_at(119, 39),
            None,
            "the status bar is not a pane"
        );
    }
}

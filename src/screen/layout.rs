//! Where each pane goes for a given terminal size. A pure function of the
//! size, the focused pane, the user's choice (zoom, where the split is)
//! and whether a file is open; shared by rendering and mouse hit-testing.

use ratatui::layout::{Constraint, Layout, Rect};
use serde::{Deserialize, Serialize};

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

/// What the user chose about the layout (kept per workspace): whether the
/// focused pane fills the screen, and how much of the width the
/// conversation gets beside an open file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LayoutChoice {
    /// The conversation's share of the width, in percent, when a file is
    /// open beside it ([`MIN_SPLIT`]..=[`MAX_SPLIT`]).
    pub conversation_percent: u16,
    /// The focused pane takes the whole screen (tmux's prefix-z).
    pub zoomed: bool,
}

/// The split moves in these steps, within these bounds.
pub const SPLIT_STEP: u16 = 5;
pub const MIN_SPLIT: u16 = 20;
pub const MAX_SPLIT: u16 = 80;

/// With no file open the conversation gets this much more of the width
/// (the file view's room), so the split the user set moves both layouts.
const NO_FILE_EXTRA: u16 = 25;

impl Default for LayoutChoice {
    fn default() -> Self {
        Self {
            conversation_percent: 40,
            zoomed: false,
        }
    }
}

impl LayoutChoice {
    /// The choice with its numbers in bounds (a remembered file may hold
    /// anything).
    pub fn clamped(self) -> Self {
        Self {
            conversation_percent: self.conversation_percent.clamp(MIN_SPLIT, MAX_SPLIT),
            ..self
        }
    }

    /// The split moved by `steps` (negative: narrower conversation).
    pub fn moved(self, steps: i16) -> Self {
        let percent =
            i32::from(self.conversation_percent) + i32::from(steps) * i32::from(SPLIT_STEP);
        Self {
            conversation_percent: u16::try_from(percent.max(0)).unwrap_or(MAX_SPLIT),
            ..self
        }
        .clamped()
    }

    /// The conversation's share of the width, in percent, beside a file
    /// or (`with_file` false) beside the inspector alone.
    pub fn conversation_share(self, with_file: bool) -> u16 {
        let percent = self.clamped().conversation_percent;
        if with_file {
            percent
        } else {
            (percent + NO_FILE_EXTRA).min(100 - MIN_SPLIT)
        }
    }

    /// The split put where a drag of the border reached: `column` of a
    /// screen `width` wide, in the layout with or without a file.
    pub fn dragged_to(self, column: u16, width: u16, with_file: bool) -> Self {
        let share = (u32::from(column) * 100)
            .checked_div(u32::from(width))
            .unwrap_or_else(|| u32::from(self.conversation_share(with_file)));
        let extra = if with_file {
            0
        } else {
            u32::from(NO_FILE_EXTRA)
        };
        Self {
            conversation_percent: u16::try_from(share.saturating_sub(extra)).unwrap_or(MAX_SPLIT),
            ..self
        }
        .clamped()
    }
}

/// Whether the layout has a file view: when a file is open, or the
/// keyboard is on the file view.
pub fn shows_file(focus: PaneId, file_open: bool) -> bool {
    file_open || focus == PaneId::FileView
}

/// Lays out the workbench so the layout follows the work:
/// - zoomed: the focused pane fills the screen;
/// - at least 80x24: conversation on the left (its share is the user's
///   split), file view above variables and diagnostics on the right; with
///   no file open (and the keyboard elsewhere) the file view gives its
///   room to the conversation, the inspector stays;
/// - smaller but at least 60x12: the inspector is hidden;
/// - narrower: panes stack, the focused one taller; with no file open the
///   conversation alone;
/// - tiny: only the focused pane.
///
/// A hidden pane that has focus takes the place of the last pane shown, so
/// the user always sees what the keyboard is aimed at.
pub fn compute(area: Rect, focus: PaneId, choice: LayoutChoice, file_open: bool) -> PaneLayout {
    let [body, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    let mut layout = PaneLayout {
        status,
        ..PaneLayout::default()
    };
    if body.is_empty() {
        return layout;
    }
    let choice = choice.clamped();
    // The file view is shown when there is a file, or the keyboard is on it.
    let with_file = shows_file(focus, file_open);
    let mut slots: Vec<(PaneId, Rect)> = if choice.zoomed {
        vec![(focus, body)]
    } else if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT && !with_file {
        let percent = choice.conversation_share(false);
        let [left, right] = Layout::horizontal([
            Constraint::Percentage(percent),
            Constraint::Percentage(100 - percent),
        ])
        .areas(body);
        let [vars, diags] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(right);
        vec![
            (PaneId::Conversation, left),
            (PaneId::Variables, vars),
            (PaneId::Diagnostics, diags),
        ]
    } else if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT {
        let percent = choice.conversation_percent;
        let [left, right] = Layout::horizontal([
            Constraint::Percentage(percent),
            Constraint::Percentage(100 - percent),
        ])
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
        let percent = if with_file {
            45
        } else {
            choice.conversation_share(false)
        };
        let [left, right] = Layout::horizontal([
            Constraint::Percentage(percent),
            Constraint::Percentage(100 - percent),
        ])
        .areas(body);
        if with_file {
            let [file, diags] =
                Layout::vertical([Constraint::Percentage(65), Constraint::Percentage(35)])
                    .areas(right);
            vec![
                (PaneId::Conversation, left),
                (PaneId::FileView, file),
                (PaneId::Diagnostics, diags),
            ]
        } else {
            vec![(PaneId::Conversation, left), (PaneId::Diagnostics, right)]
        }
    } else if area.height >= 12 && with_file {
        // Stacked: the pane with the keyboard gets two thirds.
        let file_share = if focus == PaneId::FileView { 65 } else { 35 };
        let [file, conversation] = Layout::vertical([
            Constraint::Percentage(file_share),
            Constraint::Percentage(100 - file_share),
        ])
        .areas(body);
        vec![
            (PaneId::FileView, file),
            (PaneId::Conversation, conversation),
        ]
    } else if area.height >= 12 {
        vec![(PaneId::Conversation, body)]
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
        let layout = compute(
            Rect::new(0, 0, 120, 40),
            PaneId::Conversation,
            LayoutChoice::default(),
            true,
        );
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
        let layout = compute(
            Rect::new(0, 0, 79, 24),
            PaneId::Conversation,
            LayoutChoice::default(),
            true,
        );
        assert!(layout.variables.is_none());
        assert!(layout.diagnostics.is_some());
        let layout = compute(
            Rect::new(0, 0, 79, 24),
            PaneId::Variables,
            LayoutChoice::default(),
            true,
        );
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
                for (focus, file_open) in PaneId::ALL
                    .into_iter()
                    .flat_map(|f| [(f, true), (f, false)])
                {
                    let layout = compute(
                        Rect::new(0, 0, width, height),
                        focus,
                        LayoutChoice::default(),
                        file_open,
                    );
                    if width < 60 && height < 12 && height > 1 && width > 0 {
                        assert_eq!(count_visible(&layout), 1);
                        assert!(layout.rect(focus).is_some());
                    }
                }
            }
        }
    }

    #[test]
    fn with_no_file_open_the_conversation_takes_the_file_views_room() {
        let screen = Rect::new(0, 0, 120, 40);
        let with = compute(screen, PaneId::Conversation, LayoutChoice::default(), true);
        let without = compute(screen, PaneId::Conversation, LayoutChoice::default(), false);
        assert!(without.file_view.is_none());
        let width = |l: &PaneLayout| l.conversation.map_or(0, |r| r.width);
        assert_eq!(width(&with), 48);
        assert!(width(&without) >= 78, "{without:?}");
        assert!(without.variables.is_some() && without.diagnostics.is_some());
        // The keyboard on the file view shows it, file or not.
        let aimed = compute(screen, PaneId::FileView, LayoutChoice::default(), false);
        assert!(aimed.file_view.is_some());
        // At 40x12 the conversation has the whole body.
        let small = compute(
            Rect::new(0, 0, 40, 12),
            PaneId::Conversation,
            LayoutChoice::default(),
            false,
        );
        assert_eq!(small.conversation, Some(Rect::new(0, 0, 40, 11)));
    }

    #[test]
    fn zoom_gives_the_focused_pane_the_screen() {
        let zoomed = LayoutChoice {
            zoomed: true,
            ..LayoutChoice::default()
        };
        for focus in PaneId::ALL {
            let layout = compute(Rect::new(0, 0, 120, 40), focus, zoomed, true);
            assert_eq!(count_visible(&layout), 1);
            assert_eq!(layout.rect(focus), Some(Rect::new(0, 0, 120, 39)));
        }
    }

    #[test]
    fn the_split_moves_in_steps_and_stays_in_bounds() {
        let choice = LayoutChoice::default();
        assert_eq!(choice.moved(1).conversation_percent, 45);
        assert_eq!(choice.moved(-100).conversation_percent, MIN_SPLIT);
        assert_eq!(choice.moved(100).conversation_percent, MAX_SPLIT);
        assert_eq!(choice.dragged_to(60, 120, true).conversation_percent, 50);
        assert_eq!(
            choice.dragged_to(0, 120, true).conversation_percent,
            MIN_SPLIT
        );
        assert_eq!(choice.dragged_to(5, 0, true).conversation_percent, 40);
        // Without a file the drag lands where the border is drawn.
        let dragged = choice.dragged_to(96, 120, false);
        assert_eq!(dragged.conversation_share(false), 80);
        let wide = compute(
            Rect::new(0, 0, 120, 40),
            PaneId::Conversation,
            choice.moved(4),
            true,
        );
        assert_eq!(wide.conversation.map(|r| r.width), Some(72));
        // A remembered file with nonsense in it is clamped.
        let odd = LayoutChoice {
            conversation_percent: 999,
            zoomed: false,
        };
        assert_eq!(odd.clamped().conversation_percent, MAX_SPLIT);
    }

    #[test]
    fn stacked_panes_give_the_focused_one_more_room() {
        let screen = Rect::new(0, 0, 50, 30);
        let on_file = compute(screen, PaneId::FileView, LayoutChoice::default(), true);
        let on_chat = compute(screen, PaneId::Conversation, LayoutChoice::default(), true);
        let height = |l: &PaneLayout, p| l.rect(p).map_or(0, |r| r.height);
        assert!(height(&on_file, PaneId::FileView) > height(&on_file, PaneId::Conversation));
        assert!(height(&on_chat, PaneId::Conversation) > height(&on_chat, PaneId::FileView));
    }

    #[test]
    fn pane_at_finds_the_pane_under_a_cell() {
        let layout = compute(
            Rect::new(0, 0, 120, 40),
            PaneId::Conversation,
            LayoutChoice::default(),
            true,
        );
        assert_eq!(layout.pane_at(1, 1), Some(PaneId::Conversation));
        assert_eq!(layout.pane_at(119, 38), Some(PaneId::Diagnostics));
        assert_eq!(
            layout.pane_at(119, 39),
            None,
            "the status bar is not a pane"
        );
    }
}

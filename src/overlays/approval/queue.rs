//! The approval overlay's state: the questions from model-written code
//! (`workbench::approvals`) queued as the overlay shows them — the scroll,
//! the deny reason being typed, whether the end was on screen.

use std::collections::VecDeque;

use crate::kernel::caps::ApprovalDecision;
use crate::workbench::approvals::{ApprovalSubject, PendingApproval};
use crate::workbench::clock::Clock;

/// How long a hunk after the first is on screen before a key decides it.
pub const HUNK_SETTLE: std::time::Duration = std::time::Duration::from_millis(250);

/// The queue the approval overlay shows, front first, and the deny reason
/// being typed (`Some` while the reason line has the keyboard).
#[derive(Debug, Default)]
pub struct ApprovalQueue {
    pub pending: VecDeque<PendingApproval>,
    pub reason: Option<crate::ui::line_input::LineInput>,
    /// Rows (as drawn, long lines broken) of the front request's text
    /// scrolled past.
    pub scroll: usize,
    /// The question a frame has shown (`app::update::before_frame`). Until
    /// the front one is drawn it takes no keys: what the user typed before
    /// it appeared was meant for something else. A write reviewed hunk by
    /// hunk is a new question at each hunk.
    shown: Option<(u64, usize)>,
    /// When the shown question was first drawn: a later hunk takes a
    /// decision only [`HUNK_SETTLE`] after it appeared, so a fast `yy`
    /// (the second key lands a frame after the first) never accepts a
    /// hunk nobody read (review finding).
    shown_since: Option<std::time::Instant>,
    /// What "how long on screen" is measured by (tests move it forward).
    pub clock: Clock,
    /// The shown question's last row has been on screen (all of it fit,
    /// or the user scrolled to its end). Until then no key or click
    /// approves it: what is approved must have been seen whole (a long
    /// line's tail included).
    end_seen: bool,
    /// An approve key came before the end was seen: the overlay says why
    /// nothing happened.
    refused: bool,
}

impl ApprovalQueue {
    pub fn front(&self) -> Option<&PendingApproval> {
        self.pending.front()
    }

    /// The front request has been drawn (for a review, any of its hunks),
    /// so the approval layer takes the keys.
    pub(crate) fn front_shown(&self) -> bool {
        self.front()
            .is_some_and(|p| self.shown.is_some_and(|(id, _)| id == p.id))
    }

    /// A frame is about to draw the queue on `screen`: remember what it
    /// shows, since when, and whether the text's end is in sight.
    pub fn drawn(&mut self, screen: ratatui::layout::Rect) {
        let question = self.front_question();
        if question != self.shown {
            self.shown = question;
            self.shown_since = question.map(|_| self.clock.now());
            self.end_seen = false;
            self.refused = false;
        }
        if let Some(pending) = self.front() {
            let g = super::geometry::geometry(pending, screen);
            self.scroll = self.scroll.min(g.max_scroll());
            self.end_seen |= g.shows_end(self.scroll);
        }
    }

    /// Every row of the shown question has been on screen.
    pub(crate) fn end_seen(&self) -> bool {
        self.end_seen && self.front_question().is_some_and(|q| self.shown == Some(q))
    }

    /// An approve key was refused because the end was not seen yet.
    pub fn refused(&self) -> bool {
        self.refused
    }

    /// May an approval take effect now? When not, remembers that it was
    /// tried, so the overlay says why nothing happened.
    pub(crate) fn may_approve(&mut self) -> bool {
        let ready = self.end_seen();
        self.refused = !ready;
        ready
    }

    /// May a key decide the hunk on screen? The first hunk once drawn; a
    /// later one once it has been on screen for [`HUNK_SETTLE`].
    pub(crate) fn hunk_ready(&self) -> bool {
        let Some(question) = self.front_question() else {
            return false;
        };
        self.shown == Some(question)
            && (question.1 == 0
                || self
                    .shown_since
                    .is_some_and(|since| self.clock.now().duration_since(since) >= HUNK_SETTLE))
    }

    /// The front request and, for a hunk-by-hunk review, the hunk shown.
    pub(crate) fn front_question(&self) -> Option<(u64, usize)> {
        self.front().map(|p| {
            let hunk = match &p.subject {
                ApprovalSubject::Write(review) if review.per_hunk => review.current(),
                _ => 0,
            };
            (p.id, hunk)
        })
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Drops questions nobody waits for any more.
    pub(crate) fn prune(&mut self) {
        let before = self.pending.len();
        self.pending.retain(|p| !p.is_abandoned());
        if self.pending.len() != before && self.pending.is_empty() {
            self.reason = None;
        }
    }

    /// Answers the front request.
    pub(crate) fn answer_front(&mut self, decision: ApprovalDecision) -> bool {
        self.reason = None;
        self.scroll = 0;
        match self.pending.pop_front() {
            Some(pending) => {
                pending.answer(decision);
                true
            }
            None => false,
        }
    }

    /// Answers every waiting request the same way (switching to `auto`).
    /// The mode changed to one that answers: every waiting question gets
    /// its answer, but those a hook asked for (unless the answer is a
    /// denial), which stay for the user.
    pub(crate) fn answer_all(&mut self, decision: ApprovalDecision) {
        if self.front().is_some_and(|p| p.mode_may_answer(&decision)) {
            self.reason = None;
            self.scroll = 0;
        }
        let (answered, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|p| p.mode_may_answer(&decision));
        for pending in answered {
            pending.answer(decision.clone());
        }
        self.pending = kept;
    }
}

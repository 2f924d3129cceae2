//! Keys typed through a question's appearance do not answer it.
//!
//! A question (an approval, `/approval full`, the trust question) that
//! appears while the user is typing — a prompt for the composer, typed
//! ahead while the agent works — would otherwise take the next keys of
//! that sentence as its answer: the `y` of "analyze" runs a command, the
//! `a` of "and" approves every cell to come (a review found both). Keys
//! typed before the question was drawn already go to the layer below
//! (`app::layers`); this extends that to the burst of typing it cut into.
//!
//! A burst is keys less than [`BURST_GAP`] apart. A question takes keys
//! only from a burst that began after it was first drawn, that is once the
//! user paused. Someone who was not typing answers at once as before;
//! someone who was goes on typing into the composer until they stop.
//!
//! It lives in the terminal loop because it is about real time between
//! real key presses; the model (`update`) is told per key.

use std::time::{Duration, Instant};

use crate::app::layers::ShownQuestion;

/// Keys closer together than this are one burst of typing.
pub(crate) const BURST_GAP: Duration = Duration::from_millis(400);

#[derive(Debug, Default)]
pub(crate) struct TypingGuard {
    /// When the current burst of keys began, and its last key.
    burst: Option<(Instant, Instant)>,
    /// The question on screen and when it was first drawn.
    question: Option<(ShownQuestion, Instant)>,
}

impl TypingGuard {
    /// After a frame: what question it showed (if any), at `now`.
    pub fn drawn(&mut self, shown: Option<ShownQuestion>, now: Instant) {
        match (shown, self.question) {
            (Some(shown), Some((current, _))) if shown == current => {}
            (Some(shown), _) => self.question = Some((shown, now)),
            (None, _) => self.question = None,
        }
    }

    /// A key at `now`: true when it belongs to a burst that began before
    /// the question on screen was drawn, so it must not answer it.
    pub fn key(&mut self, now: Instant) -> bool {
        let start = match self.burst {
            Some((start, last)) if now.saturating_duration_since(last) < BURST_GAP => start,
            _ => now,
        };
        self.burst = Some((start, now));
        self.question.is_some_and(|(_, since)| start < since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTION: ShownQuestion = ShownQuestion::Approval(7, 0);

    fn at(base: Instant, ms: u64) -> Instant {
        base + Duration::from_millis(ms)
    }

    #[test]
    fn typing_through_a_question_does_not_answer_it_until_a_pause() {
        let t0 = Instant::now();
        let mut guard = TypingGuard::default();
        assert!(!guard.key(at(t0, 0)));
        assert!(!guard.key(at(t0, 120)));
        guard.drawn(Some(QUESTION), at(t0, 200));
        // The sentence goes on, 120 ms a key: none of it answers.
        for ms in [240, 360, 480, 600, 720] {
            assert!(guard.key(at(t0, ms)), "{ms}");
        }
        // A frame redrawing the same question does not restart anything.
        guard.drawn(Some(QUESTION), at(t0, 750));
        // A pause, then a key: the user's answer.
        assert!(!guard.key(at(t0, 720 + 400)));
    }

    #[test]
    fn a_question_that_appears_while_nobody_types_answers_at_once() {
        let t0 = Instant::now();
        let mut guard = TypingGuard::default();
        assert!(!guard.key(at(t0, 0)));
        guard.drawn(Some(QUESTION), at(t0, 1_000));
        assert!(!guard.key(at(t0, 1_050)));
    }

    #[test]
    fn a_new_question_counts_from_its_own_drawing() {
        let t0 = Instant::now();
        let mut guard = TypingGuard::default();
        guard.drawn(Some(QUESTION), at(t0, 0));
        assert!(!guard.key(at(t0, 500)));
        // Answered; the next question appears while the user types on.
        guard.drawn(None, at(t0, 520));
        assert!(!guard.key(at(t0, 600)));
        guard.drawn(Some(ShownQuestion::Approval(8, 0)), at(t0, 650));
        assert!(guard.key(at(t0, 700)));
    }
}

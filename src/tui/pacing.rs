//! When the next frame may be drawn. Background changes (a streamed
//! answer, the highlighting pass, snapshots, servers, the spinner) are
//! paced: at most one frame per [`FRAME_INTERVAL`], so a burst costs one
//! frame. A frame that answers the user's own input (a key, a paste, a
//! resize) waits only [`INPUT_INTERVAL`] after the last one: echo is what
//! a user feels, and typing every 30 ms behind frames paced at 16 ms by
//! background work echoed in 7.6 ms at the median and 25 ms at p99
//! (`cargo bench --bench echo`; vim: 0.5 ms). Keys that arrive faster
//! than that (a paste without bracketed paste, key repeat) still coalesce.

use tokio::time::{Duration, Instant};

/// Frames for background changes are at least this far apart.
pub(crate) const FRAME_INTERVAL: Duration = Duration::from_millis(16);

/// Frames that answer input are at least this far apart.
pub(crate) const INPUT_INTERVAL: Duration = Duration::from_millis(4);

#[derive(Debug, Clone, Copy)]
pub(crate) struct FramePacer {
    last_draw: Instant,
    /// The pending frame answers input.
    answers_input: bool,
}

impl FramePacer {
    /// A pacer whose first frame is due at once.
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            last_draw: now.checked_sub(FRAME_INTERVAL).unwrap_or(now),
            answers_input: false,
        }
    }

    /// The user's input changed what is shown.
    pub(crate) fn input(&mut self) {
        self.answers_input = true;
    }

    /// When the pending frame may be drawn.
    pub(crate) fn due(&self) -> Instant {
        let interval = if self.answers_input {
            INPUT_INTERVAL
        } else {
            FRAME_INTERVAL
        };
        self.last_draw + interval
    }

    pub(crate) fn drawn(&mut self, at: Instant) {
        self.last_draw = at;
        self.answers_input = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_answered_sooner_than_background_work() {
        let start = Instant::now();
        let mut pacer = FramePacer::new(start);
        assert!(pacer.due() <= start, "the first frame is due at once");
        pacer.drawn(start);
        assert_eq!(pacer.due(), start + FRAME_INTERVAL, "background: paced");
        pacer.input();
        assert_eq!(pacer.due(), start + INPUT_INTERVAL, "a key: soon after");
        pacer.drawn(start + INPUT_INTERVAL);
        assert_eq!(
            pacer.due(),
            start + INPUT_INTERVAL + FRAME_INTERVAL,
            "the next background frame is paced from the key's frame"
        );
    }
}

//! The time as the workbench reads it where behaviour depends on it: the
//! system's monotonic clock, which a test moves forward instead of
//! sleeping (a sleep makes the suite slow and, on a loaded machine, still
//! not certain).

use std::time::{Duration, Instant};

/// The monotonic clock, plus however far a test moved it forward.
#[derive(Debug, Default, Clone, Copy)]
pub struct Clock {
    ahead: Duration,
}

impl Clock {
    pub fn now(&self) -> Instant {
        Instant::now() + self.ahead
    }

    /// Moves this clock forward by `by`, as if that much time passed.
    pub fn advance(&mut self, by: Duration) {
        self.ahead += by;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_moves_now_forward_without_waiting() {
        let mut clock = Clock::default();
        let before = clock.now();
        clock.advance(Duration::from_secs(60));
        let after = clock.now();
        assert!(after.duration_since(before) >= Duration::from_secs(60));
        assert!(after.duration_since(before) < Duration::from_secs(61));
    }
}

//! What the sub-calls of the current turn have used, against the limits.
//!
//! A turn is what the front end says it is ([`super::Subcalls::begin_turn`]):
//! one agent answer, or one `%py` cell the user runs. Checked before a call
//! starts (a batch takes all its calls at once, so it never half-runs for
//! lack of calls); tokens are added as answers arrive, so the call that
//! crosses the token limit finishes and the next one is refused.

use std::sync::Mutex;

use super::config::Limits;
use crate::kernel::{CapabilityError, lock};

#[derive(Debug, Default)]
struct TurnUse {
    calls: u32,
    tokens: u64,
    /// The user allowed sub-calls for this turn (ask mode).
    approved: bool,
}

#[derive(Debug, Default)]
pub(super) struct Ledger(Mutex<TurnUse>);

impl Ledger {
    pub fn begin_turn(&self) {
        *lock(&self.0) = TurnUse::default();
    }

    /// Takes `n` calls from the turn's allowance, or refuses them all.
    pub(crate) fn take_calls(&self, n: u32, limits: &Limits) -> Result<(), CapabilityError> {
        let mut turn = lock(&self.0);
        tokens_left(&turn, limits)?;
        let max = limits.max_calls_per_turn;
        if turn.calls.saturating_add(n) > max {
            return Err(CapabilityError::SubcallLimit(format!(
                "sub-call limit reached: this turn made {} of its {max} sub-calls and this \
                 needs {n} more ([subcalls] max_calls_per_turn); nothing was sent, and the \
                 cell's variables are kept",
                turn.calls
            )));
        }
        turn.calls += n;
        Ok(())
    }

    /// Returns calls taken for what was then refused (by the user).
    pub(crate) fn give_back(&self, n: u32) {
        let mut turn = lock(&self.0);
        turn.calls = turn.calls.saturating_sub(n);
    }

    /// Refuses a call once the turn's tokens are spent.
    pub(crate) fn check_tokens(&self, limits: &Limits) -> Result<(), CapabilityError> {
        tokens_left(&lock(&self.0), limits)
    }

    pub(crate) fn add_tokens(&self, tokens: u64) {
        let mut turn = lock(&self.0);
        turn.tokens = turn.tokens.saturating_add(tokens);
    }

    pub fn approved(&self) -> bool {
        lock(&self.0).approved
    }

    pub fn approve(&self) {
        lock(&self.0).approved = true;
    }

    /// Calls and tokens used so far this turn.
    pub fn used(&self) -> (u32, u64) {
        let turn = lock(&self.0);
        (turn.calls, turn.tokens)
    }
}

fn tokens_left(turn: &TurnUse, limits: &Limits) -> Result<(), CapabilityError> {
    let max = limits.max_tokens_per_turn;
    if turn.tokens >= max {
        return Err(CapabilityError::SubcallLimit(format!(
            "sub-call token limit reached: this turn's sub-calls used {} of {max} tokens \
             ([subcalls] max_tokens_per_turn); the cell's variables are kept",
            turn.tokens
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_tokens_are_bounded_per_turn() {
        let limits = Limits {
            max_calls_per_turn: 3,
            max_tokens_per_turn: 100,
            ..Limits::default()
        };
        let ledger = Ledger::default();
        ledger.take_calls(2, &limits).unwrap();
        let err = ledger.take_calls(2, &limits).unwrap_err();
        assert_eq!(err.python_type(), "SubcallLimitError");
        assert!(err.to_string().contains("2 of its 3"), "{err}");
        assert_eq!(ledger.used().0, 2, "a refused batch takes nothing");
        ledger.take_calls(1, &limits).unwrap();
        ledger.add_tokens(100);
        assert!(ledger.check_tokens(&limits).is_err());
        ledger.begin_turn();
        assert_eq!(ledger.used(), (0, 0));
        ledger.take_calls(3, &limits).unwrap();
    }
}

//! The host's copy of the kernel's variable listing, kept current by
//! incremental `state` frames.
//!
//! A describe of 1 000 variables is ~120 KB of JSON; sending and parsing it
//! whole on every inspector refresh cost ~1 ms on top of building it. So the
//! driver numbers each listing it sends (`epoch`), the host says which one
//! it holds (`since`), and the driver answers with only what changed since
//! then (`base` set) or, when it cannot tell, the whole listing (`base`
//! null). Frames are applied in the order they arrive, which is the order
//! the driver sent them, so a delta's base is always the listing applied
//! just before it; a base that does not match (a frame lost to a parse
//! error) is reported, and the caller asks again for the whole listing.

use std::collections::HashMap;
use std::sync::Arc;

use super::state::{RuntimeState, Variable};

/// One `state` frame as the driver sent it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateUpdate {
    pub alive: bool,
    pub truncated: bool,
    pub running: Option<u64>,
    pub error: Option<String>,
    pub elapsed_ms: Option<f64>,
    /// Number of this listing; `None` from a driver that could not build one.
    pub epoch: Option<u64>,
    /// The listing this frame changes; `None` when it is a whole listing.
    pub base: Option<u64>,
    /// The whole listing, or (with `base`) the entries that changed or are
    /// new, new ones in listing order.
    pub variables: Vec<Variable>,
    /// Names no longer listed (deltas only).
    pub removed: Vec<String>,
    /// The full order of names, sent only when removing and appending would
    /// not produce it (a name deleted and bound again moves to the end).
    pub order: Option<Vec<String>>,
}

/// The frame's base is not the listing held here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseMismatch;

/// The last listing applied, and its epoch.
#[derive(Debug, Default)]
pub struct Listing {
    epoch: Option<u64>,
    /// Shared with the states handed out; copied only when a delta changes
    /// it while a caller still holds the previous one.
    variables: Arc<Vec<Variable>>,
}

impl Listing {
    /// What to send as `since`: the listing a delta may be based on.
    pub fn epoch(&self) -> Option<u64> {
        self.epoch
    }

    /// Applies one frame and returns the whole state it describes.
    pub fn apply(&mut self, update: StateUpdate) -> Result<RuntimeState, BaseMismatch> {
        match update.base {
            None => self.variables = Arc::new(update.variables),
            Some(base) if Some(base) == self.epoch => {
                if !update.variables.is_empty()
                    || !update.removed.is_empty()
                    || update.order.is_some()
                {
                    merge(
                        Arc::make_mut(&mut self.variables),
                        update.variables,
                        &update.removed,
                        update.order.as_deref(),
                    );
                }
            }
            Some(_) => {
                // Whatever we hold is stale now: the next ask gets a whole listing.
                self.epoch = None;
                return Err(BaseMismatch);
            }
        }
        self.epoch = update.epoch;
        Ok(RuntimeState {
            alive: update.alive,
            variables: Arc::clone(&self.variables),
            truncated: update.truncated,
            running: update.running,
            error: update.error,
            elapsed_ms: update.elapsed_ms,
        })
    }
}

/// Applies a delta: drop `removed`, replace changed entries where they stand,
/// append new ones, then reorder if the driver sent an order.
fn merge(
    variables: &mut Vec<Variable>,
    changed: Vec<Variable>,
    removed: &[String],
    order: Option<&[String]>,
) {
    if !removed.is_empty() {
        variables.retain(|v| !removed.contains(&v.name));
    }
    // Where each changed entry stands now; a scan is cheaper than an index
    // for the few entries a typical cell changes.
    let positions: Vec<Option<usize>> = if changed.len() <= 8 {
        changed
            .iter()
            .map(|c| variables.iter().position(|v| v.name == c.name))
            .collect()
    } else {
        let index: HashMap<&str, usize> = variables
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        changed
            .iter()
            .map(|c| index.get(c.name.as_str()).copied())
            .collect()
    };
    for (variable, position) in changed.into_iter().zip(positions) {
        match position {
            Some(i) => variables[i] = variable,
            None => variables.push(variable),
        }
    }
    if let Some(order) = order {
        let rank: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        variables.sort_by_key(|v| rank.get(v.name.as_str()).copied().unwrap_or(usize::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, preview: &str) -> Variable {
        Variable {
            name: name.to_owned(),
            type_name: "int".to_owned(),
            preview: Some(preview.to_owned()),
            ..Variable::default()
        }
    }

    fn names(state: &RuntimeState) -> Vec<&str> {
        state.variables.iter().map(|v| v.name.as_str()).collect()
    }

    fn full(epoch: u64, variables: Vec<Variable>) -> StateUpdate {
        StateUpdate {
            alive: true,
            epoch: Some(epoch),
            variables,
            ..StateUpdate::default()
        }
    }

    fn delta(base: u64, epoch: u64, variables: Vec<Variable>) -> StateUpdate {
        StateUpdate {
            base: Some(base),
            ..full(epoch, variables)
        }
    }

    #[test]
    fn a_delta_replaces_appends_and_removes_in_place() {
        let mut listing = Listing::default();
        listing
            .apply(full(1, vec![var("a", "1"), var("b", "2"), var("c", "3")]))
            .unwrap();
        let state = listing
            .apply(StateUpdate {
                removed: vec!["a".to_owned()],
                ..delta(1, 2, vec![var("c", "30"), var("d", "4")])
            })
            .unwrap();
        assert_eq!(names(&state), ["b", "c", "d"]);
        assert_eq!(state.get("c").unwrap().preview.as_deref(), Some("30"));
        assert_eq!(listing.epoch(), Some(2));
    }

    #[test]
    fn an_empty_delta_shares_the_listing_and_a_held_state_never_changes() {
        let mut listing = Listing::default();
        let first = listing.apply(full(1, vec![var("a", "1")])).unwrap();
        let idle = listing.apply(delta(1, 2, Vec::new())).unwrap();
        assert!(Arc::ptr_eq(&first.variables, &idle.variables), "no copy");
        let changed = listing.apply(delta(2, 3, vec![var("a", "2")])).unwrap();
        assert_eq!(first.get("a").unwrap().preview.as_deref(), Some("1"));
        assert_eq!(changed.get("a").unwrap().preview.as_deref(), Some("2"));
    }

    #[test]
    fn many_changes_at_once_land_in_place() {
        let mut listing = Listing::default();
        let names: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
        listing
            .apply(full(1, names.iter().map(|n| var(n, "0")).collect()))
            .unwrap();
        let mut changed: Vec<Variable> = names.iter().rev().map(|n| var(n, "1")).collect();
        changed.push(var("new", "2"));
        let state = listing.apply(delta(1, 2, changed)).unwrap();
        assert_eq!(state.variables.len(), 21);
        assert_eq!(state.variables[0].name, "v0");
        assert!(
            state.variables[..20]
                .iter()
                .all(|v| v.preview.as_deref() == Some("1"))
        );
        assert_eq!(state.variables[20].name, "new");
    }

    #[test]
    fn an_explicit_order_wins() {
        let mut listing = Listing::default();
        listing
            .apply(full(1, vec![var("a", "1"), var("b", "2")]))
            .unwrap();
        let state = listing
            .apply(StateUpdate {
                order: Some(vec!["b".to_owned(), "a".to_owned()]),
                ..delta(1, 2, vec![var("a", "9")])
            })
            .unwrap();
        assert_eq!(names(&state), ["b", "a"]);
    }

    #[test]
    fn a_delta_on_another_base_is_refused_and_forgets_the_epoch() {
        let mut listing = Listing::default();
        listing.apply(full(3, vec![var("a", "1")])).unwrap();
        assert_eq!(
            listing.apply(delta(2, 4, vec![var("b", "2")])),
            Err(BaseMismatch)
        );
        assert_eq!(
            listing.epoch(),
            None,
            "the next ask must get a whole listing"
        );
        let state = listing.apply(full(5, vec![var("z", "0")])).unwrap();
        assert_eq!(names(&state), ["z"]);
    }

    #[test]
    fn a_whole_listing_replaces_everything() {
        let mut listing = Listing::default();
        listing.apply(full(1, vec![var("a", "1")])).unwrap();
        let state = listing
            .apply(StateUpdate {
                error: Some("boom".to_owned()),
                epoch: None,
                ..full(0, Vec::new())
            })
            .unwrap();
        assert!(state.variables.is_empty());
        assert_eq!(listing.epoch(), None);
    }
}

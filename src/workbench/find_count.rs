//! Counting a find's matches in a big text off the UI loop: the count running and the answer it sends back.

use crate::editor::{MatchCount, MatchCounter, TextRange};
use crate::workbench::Workbench;
use crate::workbench::event::AppEvent;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A count the find bar waits for. Dropping it (a newer find, the bar
/// closed, the query edited) stops the thread at its next window.
#[derive(Debug)]
pub struct Counting {
    id: u64,
    cancel: Arc<AtomicBool>,
}

impl Counting {
    /// True when `counted` is this count's answer.
    pub fn answers(&self, counted: &Counted) -> bool {
        counted.id == self.id
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Equal when they are the same count (the flag is the thread's).
impl PartialEq for Counting {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Counting {}

/// A finished count, and what it was counted for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub(crate) id: u64,
    pub(crate) query: String,
    pub(crate) generation: u64,
    pub(crate) selection: Option<((usize, usize), (usize, usize))>,
    /// The match the find selected.
    pub(crate) current: TextRange,
    /// The document moved on before it arrived (set by `arrived`).
    pub(crate) stale: bool,
    pub count: MatchCount,
}

impl Counted {
    /// What the find bar says for this count: "3 of 10", or, when the
    /// text, query or selection changed while it ran, where the match was
    /// and that Enter counts again (it must not say "counting…" forever).
    pub fn status(&self) -> String {
        if self.stale {
            format!(
                "{}; changed while counting, Enter counts again",
                pending_status(self.current, false)
            )
        } else {
            status(self.count)
        }
    }
}

/// Starts counting the active document's matches of its query, `current`
/// being the match its find just selected. None when there is no event
/// channel (tests without one), no query, or no thread.
pub fn start(workbench: &Workbench, current: TextRange) -> Option<Counting> {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let events = workbench.agent.events.clone()?;
    let doc = workbench.editors.active()?;
    let counter: MatchCounter = doc.match_counter(current)?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&cancel);
    let mut counted = Counted {
        id,
        query: doc.search_query()?.to_string(),
        generation: doc.generation(),
        selection: doc.selection(),
        current,
        stale: false,
        count: MatchCount { index: 0, total: 0 },
    };
    std::thread::Builder::new()
        .name("find-count".into())
        .spawn(move || {
            crate::background::lower_this_thread();
            if let Some(count) = counter.count(&stop) {
                counted.count = count;
                let _ = events.send(AppEvent::FindCounted(counted));
            }
        })
        .ok()?;
    Some(Counting { id, cancel })
}

/// What the find bar says for a counted match.
pub fn status(count: MatchCount) -> String {
    format!("{} of {}", count.index + 1, count.total)
}

/// What the find bar says while the count runs (or when no thread could
/// count): where the match is, 1-based like the status bar.
pub(crate) fn pending_status(current: TextRange, counting: bool) -> String {
    let line = current.start.0 + 1;
    if counting {
        format!("line {line}, counting…")
    } else {
        format!("line {line}")
    }
}

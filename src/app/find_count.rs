//! The find bar's "3 of 10" for a text too big to count on the UI loop
//! (over `editor::COUNT_INLINE_BYTES`): the find selects its match at
//! once and the bar says where it is ("line 734201, counting…"); a thread
//! counts every match in a rope clone and sends `AppEvent::FindCounted`,
//! and the bar shows "3 of 10" only if nothing moved since: same query,
//! same text (`Document::generation`), same selection, and the count the
//! find bar is waiting for (a newer find replaces it; the replaced one is
//! cancelled, as is the one of a closed bar).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::effects::to_overlay;
use super::state::AppState;
use super::update::Command;
use crate::component::Input;
use crate::editor::{MatchCount, MatchCounter, TextRange};
use crate::workbench::Workbench;
use crate::workbench::event::AppEvent;

/// What the find bar says for a counted match.
pub fn status(count: MatchCount) -> String {
    format!("{} of {}", count.index + 1, count.total)
}

/// What the find bar says while the count runs (or when no thread could
/// count): where the match is, 1-based like the status bar.
pub fn pending_status(current: TextRange, counting: bool) -> String {
    let line = current.start.0 + 1;
    if counting {
        format!("line {line}, counting…")
    } else {
        format!("line {line}")
    }
}

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
    id: u64,
    query: String,
    generation: u64,
    selection: Option<((usize, usize), (usize, usize))>,
    /// The match the find selected.
    current: TextRange,
    /// The document moved on before it arrived (set by `arrived`).
    stale: bool,
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
            if let Some(count) = counter.count(&stop) {
                counted.count = count;
                let _ = events.send(AppEvent::FindCounted(counted));
            }
        })
        .ok()?;
    Some(Counting { id, cancel })
}

/// A count arrived: the find bar shows it if it waits for it, as "3 of
/// 10", or, when the document moved on meanwhile (another text, query or
/// selection), as stale: the number is never shown then.
pub fn arrived(state: &mut AppState, mut counted: Counted) -> Command {
    let fresh = state.workbench.editors.active().is_some_and(|doc| {
        doc.generation() == counted.generation
            && doc.search_query() == Some(counted.query.as_str())
            && doc.selection() == counted.selection
    });
    counted.stale = !fresh;
    to_overlay(state, Input::Counted(counted)).unwrap_or(Command::None)
}

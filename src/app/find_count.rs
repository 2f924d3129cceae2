//! The find bar's "3 of 10" for a text too big to count on the UI loop
//! (over `editor::COUNT_INLINE_BYTES`): the find selects its match at
//! once and the bar says where it is ("line 734201, counting…"); a thread
//! counts every match in a rope clone and sends `AppEvent::FindCounted`,
//! and the bar shows "3 of 10" only if nothing moved since: same query,
//! same text (`Document::generation`), same selection, and the count the
//! find bar is waiting for (a newer find replaces it; the replaced one is
//! cancelled, as is the one of a closed bar).

use super::command::Command;
use super::deliver::to_overlay;
use super::state::AppState;
use crate::component::Input;
use crate::workbench::find_count::Counted;

/// A count arrived: the find bar shows it if it waits for it, as "3 of
/// 10", or, when the document moved on meanwhile (another text, query or
/// selection), as stale: the number is never shown then.
pub fn arrived(state: &mut AppState, mut counted: Counted) -> Command {
    let fresh = state.workbench.editors().active().is_some_and(|doc| {
        doc.generation() == counted.generation
            && doc.search_query() == Some(counted.query.as_str())
            && doc.selection() == counted.selection
    });
    counted.stale = !fresh;
    to_overlay(state, Input::Counted(counted)).unwrap_or(Command::None)
}

//! The agent as the TUI drives it: a prompt from the composer starts a turn with the scene on screen, the spinner in the status bar, and naming the session at exit.

use crate::app::state::AppState;
use crate::workbench::agent::*;
use std::time::Duration;

/// How long quitting waits for a cancelled turn to let go of the
/// conversation before giving up on naming its session.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Sends `prompt` to the model (from `update::send_message`), with the
/// scene on screen.
pub fn send(state: &mut AppState, prompt: String) {
    if state.workbench.agent().busy {
        // Keep the text: nothing was sent.
        state.conversation.composer.insert_str(&prompt);
        state.workbench.notice("The agent is still working on the previous message; wait for it or press Esc to cancel.",
        );
        return;
    }
    let scene = crate::app::snapshot::request(state);
    start_turn(&mut state.workbench, prompt, scene);
}

/// The session this run wrote to (created at the first prompt, or resumed),
/// for the line printed after quitting; the files open in the editor are
/// recorded in it, for `--continue` to open again. A turn still running is
/// cancelled first and given a moment to let go of the conversation.
pub async fn session_at_exit(state: &mut AppState) -> Option<String> {
    cancel(&mut state.workbench);
    let conversation = state.workbench.agent().conversation().clone();
    let mut conversation = tokio::time::timeout(EXIT_WAIT, conversation.lock())
        .await
        .ok()?;
    let id = conversation.session_id()?.to_owned();
    let tabs = crate::workbench::editors::open_tabs(&state.workbench);
    conversation.record(&crate::session::SessionEvent::Tabs(tabs));
    Some(id)
}

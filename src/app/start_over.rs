//! `/new`: a new conversation without leaving the workbench, as `/new` and
//! `/clear` do in Codex CLI and Claude Code.
//!
//! What goes: the transcript, the model's memory of it (the shared
//! `context` store is emptied in place, so the kernel's `context` and the
//! search pane see the new one at once), pins, the turn's counters. The
//! next prompt starts a new session file; the old session stays on disk
//! for `--resume`.
//!
//! What stays: open files and their unsaved edits, the model, the approval
//! mode, and the change log (`/undo` still reaches what the agent changed
//! before — files are not part of a conversation). Kernel variables stay
//! too, because they can hold work that is slow to redo; `/new kernel`
//! restarts the kernel as well, for a truly clean start (and stops a cell
//! that will not stop).

use super::state::AppState;

/// Runs `/new [kernel]`.
pub fn command(state: &mut AppState, args: &str) {
    let restart_kernel = match args.trim() {
        "" => false,
        "kernel" => true,
        other => {
            state.workbench.notice(&format!(
                "/new takes no argument, or `kernel` to restart the kernel too (got `{other}`)."
            ));
            return;
        }
    };
    if state.workbench.agent().busy {
        state
            .workbench
            .notice("The agent is still working; wait for it or press Esc, then /new.");
        return;
    }
    // A running cell reports into a transcript entry that would be gone —
    // unless its kernel goes too (`/new kernel`: the way out of a cell that
    // ignores Ctrl+C).
    let stops_the_cell = restart_kernel && state.workbench.services().kernel_launcher.is_some();
    if crate::workbench::cells::any_running(&state.workbench) && !stops_the_cell {
        state.workbench.notice(
            "A cell is still running; wait for it or press Ctrl+C, then /new (or /new kernel, \
             which stops it with the kernel).",
        );
        return;
    }
    let Some(old_session) = state.workbench.agent_mut().start_over() else {
        state
            .workbench
            .notice("The conversation is busy (being summarised); try /new again in a moment.");
        return;
    };
    *state.workbench.transcript_mut() = crate::workbench::transcript::Transcript::new();
    state.conversation.place.follow();
    state.conversation.flash = None;
    state.conversation.selection = None;
    state.conversation.text_cursor = None;
    state.workbench.take_pins();
    crate::workbench::agent::refresh_instructions(&mut state.workbench);

    let mut lines = vec!["New conversation.".to_owned()];
    if let Some(id) = old_session {
        lines.push(format!(
            "The last one is saved as session {id} (hello-tui --resume {id})."
        ));
    }
    if restart_kernel {
        let mode = state.workbench.safety().mode;
        // A clean start on purpose: nothing kept comes back.
        if let Some(store) = state
            .workbench
            .services()
            .kernel_launcher
            .as_ref()
            .and_then(|launcher| launcher.kept_variables())
        {
            store.reset();
        }
        match crate::app::safety::relaunch_kernel(state, mode) {
            Ok(launch_notice) => {
                lines.push("The kernel restarted: its variables are gone.".into());
                lines.extend(launch_notice);
            }
            Err(error) => lines.push(format!("The kernel could not be restarted: {error}")),
        }
    } else {
        lines.push(
            "Kernel variables are kept (/new kernel restarts it too); /undo still reaches \
             earlier file changes."
                .into(),
        );
    }
    state.workbench.notice(&lines.join(" "));
    crate::workbench::hooks::cleared(&state.workbench);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::context::Message;
    use crate::workbench::transcript::{PaneEntry, Speaker};

    fn state() -> AppState {
        AppState::new(std::env::temp_dir(), Settings::defaults())
    }

    #[test]
    fn new_empties_the_shared_store_in_place_and_the_transcript() {
        let mut state = state();
        // What the kernel's `context` capability and search hold: a clone
        // of the store handle, taken before /new.
        let held_by_kernel = state.workbench.agent().context.clone();
        state
            .workbench
            .agent()
            .context
            .push(Message::user("remember the secret plan"));
        state
            .workbench
            .transcript_mut()
            .push(PaneEntry::new(Speaker::User, "remember the secret plan"));
        state.workbench.pin(crate::workbench::Pin {
            label: "old pin".into(),
            text: "x".into(),
        });
        state.workbench.agent_mut().usage.completion_tokens = 99;

        command(&mut state, "");

        assert_eq!(
            held_by_kernel.len(),
            0,
            "the kernel's handle sees the empty store"
        );
        assert!(state.workbench.pins().is_empty());
        assert_eq!(state.workbench.agent().usage.completion_tokens, 0);
        let shown: Vec<&str> = state
            .workbench
            .transcript()
            .iter()
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(shown.len(), 1, "only the notice: {shown:?}");
        assert!(shown[0].starts_with("New conversation."), "{shown:?}");
        assert!(shown[0].contains("Kernel variables are kept"), "{shown:?}");
        // The new conversation is built over the same store (its ids are
        // the store's), so a message pushed now is message 0 for both.
        let conversation = state.workbench.agent().conversation().clone();
        let conversation = conversation.try_lock().expect("not held");
        assert!(conversation.messages().is_empty());
        assert!(
            conversation.session_id().is_none(),
            "the next prompt starts a new session"
        );
    }

    #[test]
    fn new_refuses_while_a_turn_or_a_cell_runs_and_keeps_everything() {
        let mut state = state();
        state
            .workbench
            .agent()
            .context
            .push(Message::user("keep me"));
        state.workbench.agent_mut().busy = true;
        command(&mut state, "");
        assert_eq!(state.workbench.agent().context.len(), 1);
        state.workbench.agent_mut().busy = false;

        state
            .workbench
            .transcript_mut()
            .push(PaneEntry::cell(1, "import time; time.sleep(60)"));
        command(&mut state, "");
        assert_eq!(
            state.workbench.agent().context.len(),
            1,
            "a running cell keeps the conversation"
        );
        assert!(
            state
                .workbench
                .transcript()
                .iter()
                .any(|m| m.text.contains("A cell is still running")),
        );

        command(&mut state, "everything");
        assert!(
            state
                .workbench
                .transcript()
                .iter()
                .any(|m| m.text.contains("/new takes no argument")),
        );
    }
}

//! Components as layers: an input goes to the approval queue, the open
//! overlay or a pane through [`to_approval`], [`to_overlay`] and
//! [`to_pane`] (which layer, in which order, is `app::layers`). The
//! component is taken out of the state while it handles the input, sees
//! the rest through an `Around`, and is put back; what it asks for (its
//! [`Effect`]s) is queued on the state, and `app::update` applies the
//! queue (`app::effects`) before it returns to the loop.
//!
//! Queuing instead of applying here is what keeps the dispatcher's
//! modules in one direction: an effect may run an action or submit text,
//! which is `app::update`'s work, and opening a file may deliver an input
//! again; applied from here, each of those would call back up.

use super::command::Command;
use super::state::AppState;
use crate::component::{Component, Ctx, Effect, Input, Outcome};
use crate::keymap::PaneId;

/// Offers `input` to the open overlay. `None` when there is none or it
/// passed the input on (the layer below gets it).
pub(crate) fn to_overlay(state: &mut AppState, input: Input<'_>) -> Option<Command> {
    let mut overlay = state.overlays.pop()?;
    let mut ctx = Ctx::new(state.around());
    let outcome = overlay.component_mut().handle(input, &mut ctx);
    let effects = ctx.into_effects();
    state.overlays.push(overlay);
    finish(state, outcome, effects)
}

/// Offers `input` to a pane (`crate::panes`). `None` when it passed the
/// input on.
pub(crate) fn to_pane(state: &mut AppState, pane: PaneId, input: Input<'_>) -> Option<Command> {
    let (outcome, effects) = match pane {
        PaneId::Conversation => run_taken(state, |s| &mut s.conversation, input),
        PaneId::FileView => run_taken(state, |s| s.workbench.editors_mut(), input),
        PaneId::Variables => run_taken(state, |s| &mut s.variables, input),
        PaneId::Diagnostics => run_taken(state, |s| &mut s.diagnostics, input),
    };
    finish(state, outcome, effects)
}

/// Offers `input` to the approval queue (its layer is above any overlay).
pub(crate) fn to_approval(state: &mut AppState, input: Input<'_>) -> Option<Command> {
    let (outcome, effects) = run_taken(state, |s| &mut s.approvals, input);
    finish(state, outcome, effects)
}

/// Runs `f` on the file view as its `handle` would run (with a `Ctx`),
/// queuing its effects: for the app's own flows (an answer to a question,
/// a go-to from an overlay) that need what a key would do.
pub(crate) fn with_file_view(
    state: &mut AppState,
    f: impl FnOnce(&mut crate::workbench::editors::Editors, &mut Ctx<'_>) -> Outcome,
) -> Command {
    let mut editors = std::mem::take(state.workbench.editors_mut());
    let mut ctx = Ctx::new(state.around());
    let outcome = f(&mut editors, &mut ctx);
    let effects = ctx.into_effects();
    *state.workbench.editors_mut() = editors;
    finish(state, outcome, effects).unwrap_or(Command::None)
}

/// Brings the open overlays up to date before a frame (each is drawn).
pub(crate) fn before_frame(state: &mut AppState) {
    let mut overlays = state.overlays.take_all();
    for overlay in &mut overlays {
        overlay.component_mut().before_frame(state.around());
    }
    state.overlays.restore(overlays);
}

/// Takes a pane out of the state (its slot holds a default meanwhile),
/// lets it handle `input` with the rest of the state to read, and puts it
/// back.
fn run_taken<P: Component + Default>(
    state: &mut AppState,
    slot: fn(&mut AppState) -> &mut P,
    input: Input<'_>,
) -> (Outcome, Vec<Effect>) {
    let mut pane = std::mem::take(slot(state));
    let mut ctx = Ctx::new(state.around());
    let outcome = pane.handle(input, &mut ctx);
    let effects = ctx.into_effects();
    *slot(state) = pane;
    (outcome, effects)
}

/// Queues what a component asked for and turns its outcome into the
/// loop's command (`None`: it passed the input on).
fn finish(state: &mut AppState, outcome: Outcome, effects: Vec<Effect>) -> Option<Command> {
    state.pending_effects.extend(effects);
    match outcome {
        Outcome::Ignored => None,
        Outcome::Unchanged => Some(Command::None),
        Outcome::Changed => Some(Command::Redraw),
    }
}

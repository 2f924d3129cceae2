//! Questions from model-written code reach the approval overlay here.

use super::AppState;
use crate::kernel::caps::ApprovalDecision;
use crate::sandbox::ApprovalMode;
use crate::workbench::approvals::PendingApproval;

/// A request arrived. In a mode that does not ask (the user switched while
/// it was on its way) it gets that mode's answer at once — `deny` refuses
/// it, `auto` and `full` allow it — unless a hook asked for it: that
/// question is the user's in every mode but `deny`.
pub fn request(state: &mut AppState, pending: PendingApproval) {
    state.approvals.prune();
    if state.workbench.services().approvals.is_some()
        && let Some(decision) = mode_answer(state.workbench.safety().mode)
        && pending.mode_may_answer(&decision)
    {
        pending.answer(decision);
        return;
    }
    state.approvals.pending.push_back(pending);
}

/// What a mode that does not ask answers for the user; `None` when it
/// asks.
pub(crate) fn mode_answer(mode: ApprovalMode) -> Option<ApprovalDecision> {
    match mode {
        ApprovalMode::Ask | ApprovalMode::Review => None,
        ApprovalMode::Deny => Some(ApprovalDecision::Deny {
            reason: "the approval mode is `deny`".to_owned(),
        }),
        ApprovalMode::Auto | ApprovalMode::Full => Some(ApprovalDecision::AllowOnce),
    }
}

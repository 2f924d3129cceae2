//! Questions from model-written code reach the approval overlay here.

use super::AppState;
use crate::kernel::caps::ApprovalDecision;
use crate::workbench::approvals::PendingApproval;

/// A request arrived. In a mode that does not ask (the user switched while
/// it was on its way) it is answered at once, unless a hook asked for it:
/// that question is the user's whatever the mode.
pub fn request(state: &mut AppState, pending: PendingApproval) {
    state.approvals.prune();
    if !state.workbench.safety().mode.asks()
        && state.workbench.services().approvals.is_some()
        && pending.hook_asks.is_none()
    {
        pending.answer(ApprovalDecision::AllowOnce);
        return;
    }
    state.approvals.pending.push_back(pending);
}

//! `llm_query` sub-calls in the workbench: each appears under the cell
//! that made it (while it runs, then with its answer, tokens, time and
//! status), and its tokens count in the status bar's turn total. The user
//! is asked about the first one of a turn through the approval queue.

use futures_util::future::BoxFuture;

use crate::kernel::caps::{Approval, ApprovalPolicy};
use crate::subcalls::SubcallEvent;
use crate::workbench::Workbench;
use crate::workbench::approvals::ApprovalBroker;
use crate::workbench::transcript::{CellStatus, SubcallView};

pub fn apply(workbench: &mut Workbench, event: SubcallEvent) {
    let messages = &mut workbench.transcript;
    match event {
        SubcallEvent::Started(started) => {
            // Cells run one at a time: the running one made the call.
            let entry = messages.edit_last_where(|m| {
                m.cell
                    .as_ref()
                    .is_some_and(|c| c.status == CellStatus::Running)
            });
            if let Some(cell) = entry.and_then(|m| m.cell.as_mut()) {
                cell.subcalls.push(SubcallView {
                    id: started.id,
                    kind: started.kind,
                    model: started.model,
                    prompt_head: started.prompt_head,
                    prompt_chars: started.prompt_chars,
                    status: None,
                    answer_head: String::new(),
                    answer_chars: 0,
                    tokens: 0,
                    elapsed_ms: 0,
                    error: None,
                });
            }
        }
        SubcallEvent::Completed(done) => {
            workbench.agent.subcall_tokens += done.tokens();
            let id = done.id;
            let entry = messages.edit_last_where(|m| {
                m.cell
                    .as_ref()
                    .is_some_and(|c| c.subcalls.iter().any(|s| s.id == id))
            });
            let view = entry
                .and_then(|m| m.cell.as_mut())
                .and_then(|c| c.subcalls.iter_mut().find(|s| s.id == id));
            if let Some(view) = view {
                view.status = Some(done.status);
                view.tokens = done.tokens();
                view.elapsed_ms = done.elapsed_ms;
                view.answer_chars = done.answer_chars;
                view.answer_head = done.answer_head;
                view.error = done.error;
            }
        }
    }
}

/// The broker as the sub-calls' approval: "always" covers every later
/// sub-call of the session, and the user's own `%py` cell needs no question.
pub struct SubcallApproval(pub ApprovalBroker);

impl ApprovalPolicy for SubcallApproval {
    fn check(&self, what: &str) -> BoxFuture<'static, Approval> {
        self.0.approve_subcalls(what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::caps::ApprovalDecision;
    use crate::sandbox::ApprovalMode;
    use crate::workbench::approvals::ApprovalSubject;
    use crate::workbench::event::{self, AppEvent};
    use crate::workbench::kernel::CellOrigin;

    #[tokio::test]
    async fn ask_mode_asks_once_and_always_covers_the_session() {
        let (tx, mut rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Ask);
        let policy = SubcallApproval(broker.clone());
        let asking = tokio::spawn(policy.check("2 sub-calls to small-model"));
        let Some(AppEvent::ApprovalRequested(pending)) = rx.recv().await else {
            panic!("no question was put");
        };
        assert_eq!(
            pending.subject,
            ApprovalSubject::Subcalls("2 sub-calls to small-model".into())
        );
        pending.answer(ApprovalDecision::AllowAlways);
        assert_eq!(asking.await.unwrap(), Approval::Allow);
        assert_eq!(policy.check("a later turn").await, Approval::Allow);
        assert_eq!(broker.asked(), 1, "\"always\" is remembered");
    }

    #[tokio::test]
    async fn the_users_own_cell_is_not_asked_about_and_deny_mode_refuses() {
        let (tx, _rx) = event::channel();
        let broker = ApprovalBroker::new(tx, ApprovalMode::Deny);
        let policy = SubcallApproval(broker.clone());
        assert!(matches!(policy.check("x").await, Approval::Deny(_)));
        broker
            .cell_owner()
            .start(7, CellOrigin::User, "llm_query('hi')");
        assert_eq!(policy.check("x").await, Approval::Allow);
        assert_eq!(broker.asked(), 0);
    }
}

//! Who decides whether a shell command may run.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::kernel::lock;

/// The verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    /// Refused; the reason reaches the cell inside a `PermissionError`.
    Deny(String),
}

pub trait ApprovalPolicy: Send + Sync + 'static {
    fn check(&self, command: &str) -> BoxFuture<'static, Approval>;

    /// The command ran and answered `result` (`PostToolUse` hooks hear of
    /// it); nothing by default.
    fn ran(&self, _command: &str, _result: &serde_json::Value) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// Runs everything (the `auto`/`full` modes).
pub struct AllowAll;

impl ApprovalPolicy for AllowAll {
    fn check(&self, _command: &str) -> BoxFuture<'static, Approval> {
        Box::pin(async { Approval::Allow })
    }
}

/// Runs nothing, with a reason the cell can show.
pub struct DenyAll {
    pub reason: String,
}

impl Default for DenyAll {
    fn default() -> Self {
        Self {
            reason: "shell commands are disabled in this session".to_owned(),
        }
    }
}

impl ApprovalPolicy for DenyAll {
    fn check(&self, _command: &str) -> BoxFuture<'static, Approval> {
        let reason = self.reason.clone();
        Box::pin(async move { Approval::Deny(reason) })
    }
}

/// One question to the user; answer on `respond`. Dropping it denies.
#[derive(Debug)]
pub struct ApprovalRequest {
    pub command: String,
    pub respond: oneshot::Sender<ApprovalDecision>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    AllowOnce,
    /// Allow, and never ask again this session for this exact command.
    AllowAlways,
    Deny {
        reason: String,
    },
    /// A write reviewed hunk by hunk: write `text` (the file with only the
    /// accepted hunks), `rejected` hunks left out.
    AllowPart {
        text: Vec<u8>,
        rejected: usize,
    },
}

/// Asks the UI for each command over an mpsc, remembering "always" answers
/// for the session. The calling cell blocks until the user answers.
#[derive(Clone)]
pub struct AskUser {
    requests: mpsc::Sender<ApprovalRequest>,
    always: Arc<Mutex<HashSet<String>>>,
}

impl AskUser {
    pub fn new(requests: mpsc::Sender<ApprovalRequest>) -> Self {
        Self {
            requests,
            always: Arc::default(),
        }
    }
}

impl ApprovalPolicy for AskUser {
    fn check(&self, command: &str) -> BoxFuture<'static, Approval> {
        let command = command.to_owned();
        let requests = self.requests.clone();
        let always = Arc::clone(&self.always);
        Box::pin(async move {
            if lock(&always).contains(&command) {
                return Approval::Allow;
            }
            let (respond, answer) = oneshot::channel();
            let request = ApprovalRequest {
                command: command.clone(),
                respond,
            };
            if requests.send(request).await.is_err() {
                return Approval::Deny("no one is there to approve shell commands".to_owned());
            }
            match answer.await {
                Ok(ApprovalDecision::AllowOnce | ApprovalDecision::AllowPart { .. }) => {
                    Approval::Allow
                }
                Ok(ApprovalDecision::AllowAlways) => {
                    lock(&always).insert(command);
                    Approval::Allow
                }
                Ok(ApprovalDecision::Deny { reason }) => Approval::Deny(reason),
                Err(_) => Approval::Deny("the approval request was dismissed".to_owned()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ask_user_remembers_always_for_the_exact_command() {
        let (tx, mut rx) = mpsc::channel(4);
        let policy = AskUser::new(tx);
        let first = tokio::spawn(policy.check("ls"));
        let request = rx.recv().await.unwrap();
        assert_eq!(request.command, "ls");
        request.respond.send(ApprovalDecision::AllowAlways).unwrap();
        assert_eq!(first.await.unwrap(), Approval::Allow);
        // Asked again? No: answered from memory, nothing on the channel.
        assert_eq!(policy.check("ls").await, Approval::Allow);
        assert!(rx.try_recv().is_err());
        // A different command is asked; a dropped request denies.
        let other = tokio::spawn(policy.check("ls -l"));
        drop(rx.recv().await.unwrap());
        assert!(matches!(other.await.unwrap(), Approval::Deny(_)));
    }
}

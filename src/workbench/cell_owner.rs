//! Which cell the kernel runs now and who queued it, as the kernel service
//! knows it: the service sets it when it hands a cell to the kernel and
//! clears it when the result comes back. Code running in the kernel cannot
//! change it, so approvals can trust it to tell the user's own `%py` cell
//! from the model's.
//!
//! Only the running cell is known, not which Python thread asks, nor
//! whether the function the user's cell calls is still the one the
//! workbench put there. So the user's own calls (a literal command, a
//! literal path, a tool called by name) skip the question only while no
//! model-written code has run in this session: after that, a thread or a
//! monkeypatch that code left can make any call look like the user's
//! (issue 25, routes 12 and 13), and nothing the kernel reports can tell
//! them apart. Checked here, on the host: [`CellOwner::model_code_runs`]
//! is called before the model's code reaches any kernel (its cells, and
//! the cells of an `rlm_query` loop, whose kernel acts through the same
//! approvals), and it is never undone — not even by a fresh kernel
//! process, which may import what that code wrote into the workspace (a
//! module the user's cell imports, a `.pth` file in a workspace venv).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::workbench::kernel::CellOrigin;

#[derive(Debug)]
struct Running {
    cell_id: u64,
    origin: CellOrigin,
    /// The literals of the cell's code when the user queued it; empty for
    /// the model's cells.
    user_literals: Vec<String>,
    /// The paths the user's cell passes literally to `fs.write`/`fs.edit`.
    user_paths: Vec<String>,
    /// The MCP tools the user's cell calls by name (`mcp.server.tool(…)`).
    user_tools: Vec<(String, String)>,
    /// The time the cell spent blocked on the user's answer to a question
    /// it asked (a write to review, a command to approve).
    waits: Waits,
}

/// The stretches a cell waited on the user, merged: two questions open at
/// once (two threads of one cell) count their overlap once.
#[derive(Debug, Default)]
struct Waits {
    /// Questions open now.
    open: u32,
    /// When the current stretch began (some question was open since).
    since: Option<Instant>,
    /// The stretches that ended.
    total: Duration,
}

impl Waits {
    fn so_far(&self) -> Duration {
        self.total + self.since.map_or(Duration::ZERO, |since| since.elapsed())
    }
}

#[derive(Debug, Default)]
struct Owner {
    running: Option<Running>,
    /// Model-written code has run (or is about to) in a kernel of this
    /// session: the user's own calls are no longer told apart.
    model_ran: bool,
}

/// Shared between the kernel service (which writes it) and the approval
/// broker (which reads it). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CellOwner(Arc<Mutex<Owner>>);

impl CellOwner {
    /// Model-written code is about to run in a kernel that acts through
    /// these approvals. From now on, for the rest of the session, no call
    /// counts as the user's own (see the module docs).
    pub(crate) fn model_code_runs(&self) {
        crate::kernel::lock(&self.0).model_ran = true;
    }

    /// The running cell, when it is the user's and no model code has run
    /// this session: only then can a call be told to be the user's.
    fn users_untainted<T>(&self, check: impl FnOnce(&Running) -> T) -> Option<T> {
        let owner = crate::kernel::lock(&self.0);
        match &owner.running {
            Some(running) if running.origin == CellOrigin::User && !owner.model_ran => {
                Some(check(running))
            }
            _ => None,
        }
    }

    /// The service handed cell `cell_id` (queued by `origin`) to the kernel.
    pub fn start(&self, cell_id: u64, origin: CellOrigin, code: &str) {
        let (user_literals, user_paths, user_tools) = match origin {
            CellOrigin::User => (
                crate::workbench::python_literals::shell_run_literals(code),
                crate::workbench::python_literals::fs_write_paths(code),
                crate::workbench::python_literals::mcp_tool_calls(code),
            ),
            CellOrigin::Agent => (Vec::new(), Vec::new(), Vec::new()),
        };
        let mut owner = crate::kernel::lock(&self.0);
        // Before the kernel sees the model's code.
        owner.model_ran |= origin == CellOrigin::Agent;
        owner.running = Some(Running {
            cell_id,
            origin,
            user_literals,
            user_paths,
            user_tools,
            waits: Waits::default(),
        });
    }

    /// Cell `cell_id` finished (a later cell's start is left alone).
    /// Returns how long it waited on the user's answers: its run time is
    /// the kernel's measure less that.
    pub fn finish(&self, cell_id: u64) -> Duration {
        let mut owner = crate::kernel::lock(&self.0);
        if owner.running.as_ref().is_some_and(|r| r.cell_id == cell_id) {
            return owner
                .running
                .take()
                .map_or(Duration::ZERO, |r| r.waits.so_far());
        }
        Duration::ZERO
    }

    /// The running cell now waits on the user (a question it asked is on
    /// screen) until the returned guard is dropped; `None` when no cell
    /// runs. Dropped with the asking future, so an abandoned question ends
    /// its wait too.
    pub(crate) fn wait_begins(&self) -> Option<WaitGuard> {
        let mut owner = crate::kernel::lock(&self.0);
        let running = owner.running.as_mut()?;
        if running.waits.open == 0 {
            running.waits.since = Some(Instant::now());
        }
        running.waits.open += 1;
        Some(WaitGuard {
            owner: self.clone(),
            cell_id: running.cell_id,
        })
    }

    /// Is `path` one the user's running cell writes, word for word
    /// (`fs.write("notes.md", …)`)? As with commands, a thread an earlier
    /// model cell left could write while the user's cell runs: only a
    /// literal path counts as the user's, and only before any model code
    /// ran (a monkeypatched `fs.write` keeps the path and changes the text).
    pub(crate) fn wrote_by_user(&self, path: &str) -> bool {
        self.users_untainted(|r| r.user_paths.iter().any(|p| p == path))
            .unwrap_or(false)
    }

    /// Does the user's running cell call MCP tool `tool` of `server` by
    /// name (`mcp.server.tool(…)`, as the code spells it), with no model
    /// code run before (a thread it left could call the same tool with
    /// other arguments)?
    pub(crate) fn calls_tool_by_user(&self, server: &str, tool: &str) -> bool {
        self.users_untainted(|r| r.user_tools.iter().any(|(s, t)| s == server && t == tool))
            .unwrap_or(false)
    }

    /// Is the running cell one the user typed (`%py`), with no model code
    /// run before? Enough for `llm_query`, which only reaches the
    /// configured model within the turn's bounds; a command needs
    /// [`Self::typed_by_user`].
    pub(crate) fn users_cell_runs(&self) -> bool {
        self.users_untainted(|_| ()).is_some()
    }

    /// Is `command` one the user typed into the cell running now, with no
    /// model code run before?
    pub(crate) fn typed_by_user(&self, command: &str) -> bool {
        self.users_untainted(|r| r.user_literals.iter().any(|l| l == command))
            .unwrap_or(false)
    }
}

/// A running cell's wait on the user, ended when dropped (see
/// [`CellOwner::wait_begins`]).
#[derive(Debug)]
pub(crate) struct WaitGuard {
    owner: CellOwner,
    cell_id: u64,
}

impl Drop for WaitGuard {
    fn drop(&mut self) {
        let mut owner = crate::kernel::lock(&self.owner.0);
        let Some(running) = owner.running.as_mut().filter(|r| r.cell_id == self.cell_id) else {
            return;
        };
        let waits = &mut running.waits;
        waits.open = waits.open.saturating_sub(1);
        if waits.open == 0
            && let Some(since) = waits.since.take()
        {
            waits.total += since.elapsed();
        }
    }
}

/// The cells an `rlm_query` loop runs, approved as the agent's are, but
/// first marked as model code in `owner`: the nested kernel acts through
/// the same approvals while the user's cell that called `rlm_query` runs.
pub(crate) struct NestedCells {
    pub approval: std::sync::Arc<dyn crate::agent::turn::CellApproval>,
    pub owner: CellOwner,
}

impl crate::agent::turn::CellApproval for NestedCells {
    fn approve_cell(
        &self,
        code: &str,
    ) -> futures_util::future::BoxFuture<'static, crate::agent::turn::Verdict> {
        self.owner.model_code_runs();
        // The user's cell that called `rlm_query` is blocked while the
        // question is open: that is a wait, not its run time.
        let wait = self.owner.wait_begins();
        let verdict = self.approval.approve_cell(code);
        Box::pin(async move {
            let verdict = verdict.await;
            drop(wait);
            verdict
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_users_running_cell_and_its_literal_commands_count() {
        let running = CellOwner::default();
        let code = "shell.run('ls -la')";
        assert!(!running.typed_by_user("ls -la"), "nothing runs");
        running.start(2, CellOrigin::User, code);
        assert!(running.typed_by_user("ls -la"));
        assert!(!running.typed_by_user("ls"), "a part is not what was typed");
        running.finish(1);
        assert!(running.typed_by_user("ls -la"), "a stale finish is ignored");
        running.finish(2);
        assert!(!running.typed_by_user("ls -la"), "finished");
    }

    /// Issue 27: a cell's time to answer its questions is counted once
    /// (two open at once overlap), ends with the question even when it is
    /// dropped unanswered, belongs to the cell that asked, and is handed
    /// over when the cell finishes.
    #[test]
    fn a_cells_waits_on_the_user_are_merged_and_handed_over_at_its_end() {
        let owner = CellOwner::default();
        assert!(owner.wait_begins().is_none(), "no cell runs");
        owner.start(1, CellOrigin::Agent, "fs.write('a', 'b')");
        let started = Instant::now();
        let first = owner.wait_begins().unwrap();
        let second = owner.wait_begins().unwrap();
        std::thread::sleep(Duration::from_millis(60));
        drop(first);
        std::thread::sleep(Duration::from_millis(60));
        drop(second);
        std::thread::sleep(Duration::from_millis(60));
        let stray = owner.wait_begins().unwrap();
        assert_eq!(owner.finish(2), Duration::ZERO, "another cell's finish");
        let waited = owner.finish(1);
        let whole = started.elapsed();
        assert!(
            waited >= Duration::from_millis(120) && waited + Duration::from_millis(60) <= whole,
            "the two overlapping questions count once, the gap not at all: {waited:?} of {whole:?}"
        );
        // A question of the finished cell ending late changes no later cell.
        owner.start(3, CellOrigin::Agent, "");
        drop(stray);
        assert_eq!(owner.finish(3), Duration::ZERO);
    }

    /// Issue 25, routes 12 and 13: once the model's code has run, a thread
    /// or monkeypatch it left can make any call while the user's cell runs
    /// look like the user's own. No exemption holds from then on, for the
    /// rest of the session, whichever kernel runs next.
    #[test]
    fn after_model_code_ran_nothing_counts_as_the_users_own() {
        let owner = CellOwner::default();
        let code = "shell.run('ls')\nfs.write('notes.py', t)\nmcp.t3.delete_repo(name='x')";
        owner.start(1, CellOrigin::User, code);
        assert!(owner.typed_by_user("ls") && owner.wrote_by_user("notes.py"));
        assert!(owner.calls_tool_by_user("t3", "delete_repo") && owner.users_cell_runs());
        owner.finish(1);
        owner.start(2, CellOrigin::Agent, "import threading");
        owner.finish(2);
        owner.start(3, CellOrigin::User, code);
        assert!(!owner.typed_by_user("ls"));
        assert!(!owner.wrote_by_user("notes.py"));
        assert!(!owner.calls_tool_by_user("t3", "delete_repo"));
        assert!(!owner.users_cell_runs());

        // An `rlm_query` loop's cells count as model code too.
        let fresh = CellOwner::default();
        let nested = NestedCells {
            approval: std::sync::Arc::new(crate::agent::turn::AllowCells),
            owner: fresh.clone(),
        };
        fresh.start(4, CellOrigin::User, code);
        assert!(fresh.wrote_by_user("notes.py"));
        let _verdict = crate::agent::turn::CellApproval::approve_cell(&nested, "x = 1");
        assert!(!fresh.wrote_by_user("notes.py"));
    }
}

//! Which cell the kernel runs now and who queued it, as the kernel service
//! knows it: the service sets it when it hands a cell to the kernel and
//! clears it when the result comes back. Code running in the kernel cannot
//! change it, so approvals can trust it to tell the user's own `%py` cell
//! from the model's.
//!
//! Only the running cell is known, not which Python thread asks: a thread
//! an earlier model cell left behind could call `shell.run` while the
//! user's cell runs. So a command counts as the user's only when it is,
//! word for word, a string literal the user's running cell passes to
//! `shell.run` ([`super::python_literals::shell_run_literals`]); anything
//! else is asked about as before.

use std::sync::{Arc, Mutex};

use super::kernel::CellOrigin;

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
}

/// Shared between the kernel service (which writes it) and the approval
/// broker (which reads it). Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct CellOwner(Arc<Mutex<Option<Running>>>);

impl CellOwner {
    /// The service handed cell `cell_id` (queued by `origin`) to the kernel.
    pub fn start(&self, cell_id: u64, origin: CellOrigin, code: &str) {
        let (user_literals, user_paths, user_tools) = match origin {
            CellOrigin::User => (
                super::python_literals::shell_run_literals(code),
                super::python_literals::fs_write_paths(code),
                super::python_literals::mcp_tool_calls(code),
            ),
            CellOrigin::Agent => (Vec::new(), Vec::new(), Vec::new()),
        };
        *crate::kernel::lock(&self.0) = Some(Running {
            cell_id,
            origin,
            user_literals,
            user_paths,
            user_tools,
        });
    }

    /// Cell `cell_id` finished (a later cell's start is left alone).
    pub fn finish(&self, cell_id: u64) {
        let mut running = crate::kernel::lock(&self.0);
        if running.as_ref().is_some_and(|r| r.cell_id == cell_id) {
            *running = None;
        }
    }

    /// Is `path` one the user's running cell writes, word for word
    /// (`fs.write("notes.md", …)`)? As with commands, a thread an earlier
    /// model cell left could write while the user's cell runs: only a
    /// literal path counts as the user's.
    pub fn wrote_by_user(&self, path: &str) -> bool {
        crate::kernel::lock(&self.0)
            .as_ref()
            .is_some_and(|r| r.user_paths.iter().any(|p| p == path))
    }

    /// Does the user's running cell call MCP tool `tool` of `server` by
    /// name (`mcp.server.tool(…)`, as the code spells it)? As with
    /// commands, a thread an earlier model cell left could call while the
    /// user's cell runs: only a tool the cell names counts.
    pub fn calls_tool_by_user(&self, server: &str, tool: &str) -> bool {
        crate::kernel::lock(&self.0)
            .as_ref()
            .is_some_and(|r| r.user_tools.iter().any(|(s, t)| s == server && t == tool))
    }

    /// Is the running cell one the user typed (`%py`)? Enough for
    /// `llm_query`, which only reaches the configured model within the
    /// turn's bounds; a command needs [`Self::typed_by_user`].
    pub fn users_cell_runs(&self) -> bool {
        crate::kernel::lock(&self.0)
            .as_ref()
            .is_some_and(|r| r.origin == CellOrigin::User)
    }

    /// Is `command` one the user typed into the cell running now?
    pub fn typed_by_user(&self, command: &str) -> bool {
        crate::kernel::lock(&self.0)
            .as_ref()
            .is_some_and(|r| r.user_literals.iter().any(|l| l == command))
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
        running.start(1, CellOrigin::Agent, code);
        assert!(!running.typed_by_user("ls -la"), "the model's cell");
        running.start(2, CellOrigin::User, code);
        assert!(running.typed_by_user("ls -la"));
        assert!(!running.typed_by_user("ls"), "a part is not what was typed");
        running.finish(1);
        assert!(running.typed_by_user("ls -la"), "a stale finish is ignored");
        running.finish(2);
        assert!(!running.typed_by_user("ls -la"), "finished");
    }
}

//! Runs one check command to completion, or kills it at the timeout, with
//! `process_group::run`: killing it also kills what it started (cargo →
//! rustc), and dropping the run (supersede) kills it too.

use std::path::PathBuf;
use std::time::Duration;

use tokio::process::Command;

use crate::process_group::{self, Limits, RunError};
use crate::sandbox::Confinement;

/// Output kept per stream (head and tail); the rest is drained, counted
/// and dropped.
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Checks run project code (`build.rs`, `conftest.py`, npm scripts),
    /// so they start under the kernel's confinement.
    pub confinement: Confinement,
}

#[derive(Debug)]
pub(crate) enum RunResult {
    Finished {
        exit_code: Option<i32>,
        /// stdout then stderr; matchers look at both.
        output: String,
    },
    TimedOut,
    Failed(String),
}

pub async fn run(invocation: Invocation) -> RunResult {
    let mut command = Command::new(&invocation.program);
    command.args(&invocation.args).current_dir(&invocation.cwd);
    crate::background::lower_child(&mut command);
    if let Err(error) = invocation.confinement.apply(command.as_std_mut()) {
        return RunResult::Failed(format!(
            "`{}` not run: its sandbox could not be set up ({error})",
            invocation.program
        ));
    }
    let limits = Limits {
        timeout: invocation.timeout,
        head: MAX_OUTPUT / 2,
        tail: MAX_OUTPUT / 2,
    };
    match process_group::run(command, limits).await {
        Ok(done) => RunResult::Finished {
            exit_code: done.status.code(),
            output: format!("{}\n{}", done.stdout, done.stderr),
        },
        Err(RunError::TimedOut(_)) => RunResult::TimedOut,
        Err(RunError::Spawn(error)) => {
            RunResult::Failed(format!("could not start `{}`: {error}", invocation.program))
        }
        Err(RunError::Wait(error)) => {
            RunResult::Failed(format!("waiting for the command failed: {error}"))
        }
    }
}

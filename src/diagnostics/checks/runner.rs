//! Runs one check command to completion, or kills it at the timeout. The
//! command gets its own process group so that killing it also kills what it
//! started (cargo → rustc), and dropping the run (supersede) kills it too.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::sandbox::Confinement;

/// Output beyond this per stream is drained but not kept.
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// Checks run project code (`build.rs`, `conftest.py`, npm scripts),
    /// so they start under the kernel's confinement.
    pub confinement: Confinement,
}

#[derive(Debug)]
pub enum RunResult {
    Finished {
        exit_code: Option<i32>,
        /// stdout then stderr; matchers look at both.
        output: String,
    },
    TimedOut,
    Failed(String),
}

/// Kills the whole process group when dropped, unless disarmed.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg has no memory-safety preconditions; a stale pgid
            // just yields ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

pub async fn run(invocation: Invocation) -> RunResult {
    let mut command = Command::new(&invocation.program);
    command
        .args(&invocation.args)
        .current_dir(&invocation.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Err(error) = invocation.confinement.apply(command.as_std_mut()) {
        return RunResult::Failed(format!(
            "`{}` not run: its sandbox could not be set up ({error})",
            invocation.program
        ));
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return RunResult::Failed(format!("could not start `{}`: {error}", invocation.program));
        }
    };
    let mut guard = GroupGuard(child.id().and_then(|id| i32::try_from(id).ok()));
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return RunResult::Failed("child pipes unavailable".into());
    };
    let work = async {
        let (out, err, status) =
            tokio::join!(read_capped(stdout), read_capped(stderr), child.wait());
        (out, err, status)
    };
    match tokio::time::timeout(invocation.timeout, work).await {
        Err(_) => RunResult::TimedOut, // guard kills the group
        Ok((out, err, status)) => {
            guard.0 = None;
            let status = match status {
                Ok(status) => status,
                Err(error) => {
                    return RunResult::Failed(format!("waiting for the command failed: {error}"));
                }
            };
            let mut output = String::from_utf8_lossy(&out).into_owned();
            output.push('\n');
            output.push_str(&String::from_utf8_lossy(&err));
            RunResult::Finished {
                exit_code: status.code(),
                output,
            }
        }
    }
}

async fn read_capped(mut reader: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
    }
}

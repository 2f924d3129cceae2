//! The one way the workbench runs a child that may start others (the
//! kernel, `shell.run` commands, check commands): it leads its own process
//! group, so a timeout or a cancel kills everything it started (cargo →
//! rustc, `sh` → its pipeline), never just the direct child.
//!
//! - [`lead_group`]: set a `Command` up to lead a new group and die with
//!   its handle.
//! - [`signal_group`]: signal a whole group. It refuses pids 0 and 1 and
//!   anything that is not a positive `i32`: `kill(-1, sig)` signals every
//!   process the caller may signal, `kill(0, sig)` the caller's own group.
//! - [`run`]: spawn, capture stdout and stderr with a head + tail cap that
//!   says exactly how many bytes it dropped, and kill the group at the
//!   timeout or when the run is dropped (a superseded check).

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::kernel::CappedText;

/// Background processes that left the group's control may hold the pipes
/// open after the command exits: what they write after this is not waited
/// for.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// Sets `cmd` to lead a new process group and to be killed when its
/// handle is dropped.
pub(crate) fn lead_group(cmd: &mut Command) -> &mut Command {
    cmd.process_group(0).kill_on_drop(true)
}

/// Sends `sig` to the group `pid` leads. False, and nothing is sent, for a
/// pid that is 0, 1 or does not fit a positive `i32`, or when kill(2) fails.
pub(crate) fn signal_group(pid: u32, sig: i32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    if pid <= 1 {
        return false;
    }
    // SAFETY: kill(2) has no memory-safety preconditions; a negative pid
    // addresses the process group `pid` leads (spawned by `lead_group`).
    unsafe { libc::kill(-pid, sig) == 0 }
}

/// Kills the whole group when dropped, unless disarmed: a run that is
/// cancelled (its future dropped) takes its group with it.
struct GroupGuard(Option<u32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            signal_group(pid, libc::SIGKILL);
        }
    }
}

/// Bounds of one [`run`].
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes kept from the start and from the end of each stream; what
    /// lies between is dropped and counted (`kernel::dropped_marker`).
    pub head: usize,
    pub tail: usize,
}

/// A command that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Both streams were read to their end. False when a process it left
    /// behind still held one open after [`PIPE_GRACE`]: what had arrived
    /// by then is kept, what came later is not.
    pub complete: bool,
}

/// What becomes of the command's group once the command itself exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterExit {
    /// Left running (a `shell.run` may start a server on purpose).
    Leave,
    /// Killed: a hook's answer is the command's, and a child it left
    /// must not hold its output open or outlive it.
    EndGroup,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("could not start: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("waiting for it failed: {0}")]
    Wait(#[source] std::io::Error),
    /// Killed, with its whole group, at the timeout.
    #[error("timed out after {:.1} s and was killed", .0.as_secs_f64())]
    TimedOut(Duration),
}

/// Runs `cmd` (already given its program, arguments, directory and
/// confinement) in its own group with stdin closed, capturing both streams
/// within `limits`.
pub async fn run(cmd: Command, limits: Limits) -> Result<Finished, RunError> {
    run_with_input(cmd, None, limits, AfterExit::Leave).await
}

/// [`run`], with `input` written to its stdin (then closed) instead of
/// stdin closed: a hook reads its event there. A child that exits without
/// reading it all is not an error.
pub async fn run_with_input(
    mut cmd: Command,
    input: Option<Vec<u8>>,
    limits: Limits,
    after_exit: AfterExit,
) -> Result<Finished, RunError> {
    lead_group(&mut cmd)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let mut guard = GroupGuard(child.id());
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let stdout = child.stdout.take().map(|pipe| Drained::start(pipe, limits));
    let stderr = child.stderr.take().map(|pipe| Drained::start(pipe, limits));
    let status = match tokio::time::timeout(limits.timeout, child.wait()).await {
        Ok(status) => status.map_err(RunError::Wait)?,
        Err(_) => {
            drop(guard); // kills the group
            let _ = child.wait().await;
            return Err(RunError::TimedOut(limits.timeout));
        }
    };
    if after_exit == AfterExit::Leave {
        guard.0 = None;
    }
    drop(guard);
    let (stdout, stdout_whole) = Drained::collect(stdout).await;
    let (stderr, stderr_whole) = Drained::collect(stderr).await;
    Ok(Finished {
        status,
        stdout,
        stderr,
        complete: stdout_whole && stderr_whole,
    })
}

/// One stream read into a shared buffer, so what arrived is kept even
/// when the stream is never closed.
struct Drained {
    text: std::sync::Arc<std::sync::Mutex<CappedText>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drained {
    fn start(mut pipe: impl AsyncRead + Unpin + Send + 'static, limits: Limits) -> Self {
        let text = std::sync::Arc::new(std::sync::Mutex::new(CappedText::new(
            limits.head,
            limits.tail,
        )));
        let into = std::sync::Arc::clone(&text);
        let task = tokio::spawn(async move {
            let mut decoder = Utf8Chunks::default();
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                crate::kernel::lock(&into).push(&decoder.push(&buf[..n]));
            }
            crate::kernel::lock(&into).push(&decoder.finish());
        });
        Drained { text, task }
    }

    /// The text, and whether the stream ended within [`PIPE_GRACE`].
    async fn collect(drained: Option<Drained>) -> (String, bool) {
        let Some(Drained { text, task }) = drained else {
            return (String::new(), true);
        };
        let whole = matches!(tokio::time::timeout(PIPE_GRACE, task).await, Ok(Ok(())));
        let mut text = crate::kernel::lock(&text);
        let taken = std::mem::replace(&mut *text, CappedText::new(0, 0));
        (taken.finish(), whole)
    }
}

/// Lossy UTF-8 decoding that does not break characters split across reads.
#[derive(Default)]
struct Utf8Chunks {
    carry: Vec<u8>,
}

impl Utf8Chunks {
    fn push(&mut self, bytes: &[u8]) -> String {
        self.carry.extend_from_slice(bytes);
        let keep = incomplete_suffix(&self.carry);
        let rest = self.carry.split_off(self.carry.len() - keep);
        let text = String::from_utf8_lossy(&self.carry).into_owned();
        self.carry = rest;
        text
    }

    fn finish(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.carry)).into_owned()
    }
}

/// Length of a trailing, possibly incomplete UTF-8 sequence (0..=3).
fn incomplete_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // continuation byte: look further back
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if need > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout_ms: u64, head: usize, tail: usize) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            head,
            tail,
        }
    }

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    /// Dead, or a zombie nobody reaped yet: it runs no more.
    fn gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z')),
        }
    }

    async fn wait_gone(pid: i32) -> bool {
        for _ in 0..100 {
            if gone(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    async fn read_pid(path: &std::path::Path) -> i32 {
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no pid written to {}", path.display());
    }

    #[tokio::test]
    async fn a_timeout_kills_the_grandchildren_too() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let outcome = run(sh(&script), limits(300, 100, 100)).await;
        assert!(matches!(outcome, Err(RunError::TimedOut(_))), "{outcome:?}");
        let grandchild = read_pid(&pidfile).await;
        assert!(wait_gone(grandchild).await, "sleep {grandchild} survived");
    }

    #[tokio::test]
    async fn a_dropped_run_kills_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let running = tokio::spawn(run(sh(&script), limits(30_000, 100, 100)));
        let grandchild = read_pid(&pidfile).await;
        running.abort();
        let _ = running.await;
        assert!(wait_gone(grandchild).await, "sleep {grandchild} survived");
    }

    #[tokio::test]
    async fn the_output_cap_is_exact_and_counts_what_it_dropped() {
        let script = "printf 'a%.0s' $(seq 1000); printf 'é' >&2";
        let done = run(sh(script), limits(10_000, 100, 50)).await.unwrap();
        assert!(done.status.success());
        assert_eq!(
            done.stdout,
            format!(
                "{}\n[... 850 bytes of output dropped ...]\n{}",
                "a".repeat(100),
                "a".repeat(50)
            )
        );
        assert_eq!(done.stderr, "é", "small output is untouched");
    }

    #[test]
    fn pids_0_and_1_are_never_signalled() {
        // Signal 0 only checks: were these sent, kill(2) would succeed
        // (as root, -1 reaches every process; 0 is our own group).
        assert!(!signal_group(0, 0));
        assert!(!signal_group(1, 0));
        assert!(!signal_group(u32::MAX, 0), "-1 after a cast");
        // A real group is signalled.
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        assert!(signal_group(child.id(), libc::SIGKILL));
        assert!(!child.wait().unwrap().success());
    }

    #[test]
    fn split_characters_survive_chunking() {
        let mut chunks = Utf8Chunks::default();
        let bytes = "aé€😀".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&chunks.push(&[*b]));
        }
        out.push_str(&chunks.finish());
        assert_eq!(out, "aé€😀");
    }
}

//! Spawning the `python3` child that runs the driver (written out by
//! [`DriverDir`]), and the small tasks that own its pipes and its exit status.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdout, Command};
use tokio::sync::{mpsc, watch};

use super::capability::CapabilitySpec;
use super::config::KernelConfig;
use super::driver::DriverDir;
use super::error::KernelError;
use super::lock;

/// How much of the child's real stderr (only the interpreter itself writes
/// there once the driver runs) is kept for the "why did it die" message.
const STDERR_TAIL: usize = 2048;

pub(crate) struct Spawned {
    pub pid: u32,
    pub stdout: ChildStdout,
    /// Frames to write to the driver; a task owns the pipe so writes never interleave.
    pub out: mpsc::UnboundedSender<Vec<u8>>,
    /// `Some(reason)` once the process has exited.
    pub exited: watch::Receiver<Option<String>>,
    pub stderr_tail: Arc<Mutex<String>>,
    /// The driver's files; kept while this kernel runs.
    pub driver: DriverDir,
}

pub(crate) fn spawn(
    config: &KernelConfig,
    python: &Path,
    specs: &[CapabilitySpec],
) -> Result<Spawned, KernelError> {
    let driver_config = serde_json::json!({
        "capabilities": specs,
        "memory_limit_bytes": config.memory_limit_bytes,
        "stream_head_bytes": config.output_head_bytes,
        "stream_tail_bytes": config.output_tail_bytes,
        "max_frame_bytes": super::connection::MAX_FRAME,
        "sandboxed": config.sandboxed,
        "keep_variables": config.keep_variables,
    });
    let spawn_err = |source| KernelError::Spawn {
        python: python.display().to_string(),
        source,
    };
    let driver = DriverDir::create(&config.workspace).map_err(spawn_err)?;
    let mut cmd = Command::new(python);
    cmd.arg("-u")
        .arg(driver.entry())
        .arg(driver_config.to_string())
        .current_dir(&config.workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Own process group: a timeout kill takes the cell's subprocesses too.
    crate::process_group::lead_group(&mut cmd);
    if let Some(hook) = &config.pre_spawn {
        (hook.0)(cmd.as_std_mut()).map_err(spawn_err)?;
    }
    let mut child = cmd.spawn().map_err(spawn_err)?;
    let (Some(mut stdin), Some(stdout), Some(mut stderr), Some(pid)) = (
        child.stdin.take(),
        child.stdout.take(),
        child.stderr.take(),
        child.id(),
    ) else {
        return Err(spawn_err(std::io::Error::other("child pipes missing")));
    };

    let (out, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(frame) = out_rx.recv().await {
            if stdin.write_all(&frame).await.is_err() {
                break;
            }
        }
    });

    let stderr_tail = Arc::new(Mutex::new(String::new()));
    let tail = Arc::clone(&stderr_tail);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf[..n]);
            tracing::debug!(target: "kernel", stderr = %text);
            let mut tail = lock(&tail);
            tail.push_str(&text);
            if tail.len() > STDERR_TAIL {
                let mut cut = tail.len() - STDERR_TAIL;
                while !tail.is_char_boundary(cut) {
                    cut += 1;
                }
                tail.drain(..cut);
            }
        }
    });

    let (exit_tx, exited) = watch::channel(None);
    tokio::spawn(async move {
        let reason = match child.wait().await {
            Ok(status) => describe_exit(status),
            Err(err) => format!("lost track of the process: {err}"),
        };
        let _ = exit_tx.send(Some(reason));
    });

    Ok(Spawned {
        pid,
        stdout,
        out,
        exited,
        stderr_tail,
        driver,
    })
}

/// "exited with code 3", "killed by signal 11 (segmentation fault)".
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exited with code {code}");
    }
    match status.signal() {
        Some(sig) => {
            let what = match sig {
                libc::SIGKILL => "SIGKILL: killed, e.g. out of memory or a timeout",
                libc::SIGSEGV => "SIGSEGV: segmentation fault",
                libc::SIGABRT => "SIGABRT: aborted",
                libc::SIGBUS => "SIGBUS: bus error",
                libc::SIGTERM => "SIGTERM: terminated",
                libc::SIGINT => "SIGINT",
                _ => "signal",
            };
            format!("killed by signal {sig} ({what})")
        }
        None => "exited".to_owned(),
    }
}

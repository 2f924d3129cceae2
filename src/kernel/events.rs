//! What the runtime tells the UI loop, on one `mpsc` channel.

use super::protocol::StreamName;
use super::state::RuntimeState;
use super::status::KernelInfo;

#[derive(Debug, Clone)]
pub enum KernelEvent {
    /// An `execute` call was sent to the kernel; its stream chunks and its
    /// `ExecResult` carry this id.
    CellStarted { exec_id: u64 },
    /// Same value as the status `watch`, for loops that prefer one channel.
    Status(KernelInfo),
    /// Output as it happens. `exec_id` is `None` for background output:
    /// written between cells, or by a thread an earlier cell started (the
    /// next `ExecResult::background` carries it too).
    Stream {
        exec_id: Option<u64>,
        stream: StreamName,
        text: String,
    },
    /// A fresh variable listing: after every cell and periodically while busy.
    State(RuntimeState),
    /// The kernel was killed and started again; every variable is gone.
    Restarted { reason: String },
}

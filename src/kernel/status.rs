//! Kernel liveness, published on a `tokio::sync::watch` for the status bar.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KernelStatus {
    /// Not started yet (it starts on the first execute) or starting now.
    #[default]
    Starting,
    Idle,
    Busy,
    /// The process is gone; the reason is written for the user. The next
    /// execute starts a fresh kernel.
    Dead(String),
}

impl fmt::Display for KernelStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Starting => f.write_str("starting"),
            Self::Idle => f.write_str("idle"),
            Self::Busy => f.write_str("busy"),
            Self::Dead(reason) => write!(f, "dead: {reason}"),
        }
    }
}

/// What the status bar shows: status plus the interpreter it runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelInfo {
    pub status: KernelStatus,
    /// Python version reported by the driver, e.g. `3.11.7`.
    pub python: Option<String>,
    /// The process the host spawned and signals: with the sandbox, its
    /// reaper outside the kernel's PID namespace.
    pub pid: Option<u32>,
}

//! The kernel sandbox and the approval modes.
//!
//! The kernel runs code a model wrote. Approving `shell.run` alone protects
//! nothing (a cell can `import subprocess`), so the boundary is the kernel
//! process itself: on Linux it is confined with Landlock before `exec`, and
//! everything it starts inherits that confinement.
//!
//! Use from the kernel's spawn code (single-threaded UI loop, no blocking
//! worth mentioning: the probe forks once, `start` opens a few fds):
//!
//! ```no_run
//! use hello_tui::sandbox::{ApprovalMode, SandboxSession, SandboxStatus, effective_mode};
//! # fn spawn(workspace: &std::path::Path) -> anyhow::Result<()> {
//! let status = SandboxStatus::probe(); // once, at start-up
//! let mode = effective_mode(ApprovalMode::Auto, &status);
//! let mut cmd = tokio::process::Command::new("python3");
//! let session = if mode.sandboxed() && status.is_enforced() {
//!     let session = SandboxSession::start(workspace, false, Vec::new())?;
//!     session.install(cmd.as_std_mut())?;
//!     Some(session) // keep alive as long as the kernel runs
//! } else {
//!     None
//! };
//! let child = cmd.spawn()?;
//! # drop((child, session)); Ok(()) }
//! ```
//!
//! Things the kernel's spawn code must know:
//! - call [`install`] after any `env_clear()`: it sets `TMPDIR`, `TMP` and
//!   `TEMP` to the private temp dir;
//! - the host↔kernel channel must be inherited fds (pipes, a socketpair) or
//!   a pathname unix socket (e.g. in the private temp dir): TCP is denied
//!   without network, and a host-side *abstract* unix socket is outside the
//!   sandbox's scope, so connecting to it is denied too;
//! - `multiprocessing` semaphores live in `/dev/shm`, which is not writable
//!   by default (shared with every other program); add it to
//!   `extra_writable` from a config option when users want it;
//! - switching between `full` and a sandboxed mode needs a kernel restart.
//!
//! Known gaps (Landlock's, stated so nobody over-trusts it): metadata changes
//! to existing files (chmod, chown, utimes, xattrs) are not confined;
//! connecting to pathname unix sockets such as a Docker socket is not
//! confined before Landlock ABI 9, which this module does not request yet;
//! on CPUs other than x86_64/aarch64 there is no socket filter, so only TCP
//! is confined there. Reads are not confined at all (by design of this
//! policy): a cell can read `~/.ssh` and print it into the conversation.

mod child;
pub mod cli;
mod error;
mod mode;
mod policy;
mod prepare;
mod seccomp;
mod session;
mod status;

pub use child::{apply_in_child, install};
pub use error::SandboxError;
pub use mode::{ApprovalMode, ParseModeError, effective_mode, fallback_notice};
pub use policy::{PrivateTmp, SandboxPolicy};
pub use prepare::{PreparedSandbox, prepare};
pub use session::SandboxSession;
pub use status::SandboxStatus;

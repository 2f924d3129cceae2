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
//! Known gaps (Landlock's, stated so nobody over-trusts it): metadata changes
//! to existing files (chmod, chown, utimes, xattrs) are not confined;
//! connecting to pathname unix sockets such as a Docker socket is not
//! confined before Landlock ABI 9, which this module does not request yet;
//! on CPUs other than x86_64/aarch64 there is no socket filter, so only TCP
//! is confined there.

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

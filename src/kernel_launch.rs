//! The one way a kernel is started. The workbench (`app::safety`),
//! `hello-tui exec` and the kernel of an `rlm_query` loop
//! (`subcalls::nested`) all come here, so its confinement, its children's
//! environment, its limits and its capabilities are decided once: a safety
//! fix made here holds for every kernel. What differs between them is
//! spelled out as the fields of [`KernelLaunch`] (every caller names every
//! one), and by which of [`confine`] and [`confine_or_unconfined`] it
//! calls; the parts come from `kernel_setup`.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::config::Settings;
use crate::kernel::caps::ApprovalPolicy;
use crate::kernel::{CodeRuntime, KernelEvent};
use crate::kernel_setup::{self, ContextLink, FsLinks};
use crate::mcp::{McpDirectory, ToolCallApproval};
use crate::sandbox::{ApprovalMode, Confinement, SandboxError, SandboxStatus};
use crate::subcalls::Subcalls;

/// The confinement a kernel gets, and what to tell the user about it.
pub struct Confined {
    pub confinement: Confinement,
    /// Why the kernel runs unconfined, or what the sandbox cannot do here.
    pub notice: Option<String>,
}

/// How the kernel's children run under `settings` in `mode`: confined
/// unless the mode is `full`. An error means the sandbox is needed but
/// cannot be prepared here; `exec` then refuses to run anything (nobody
/// reads a warning in time).
pub fn confine(
    settings: &Settings,
    mode: ApprovalMode,
    status: &SandboxStatus,
    workspace: &Path,
) -> Result<Confined, SandboxError> {
    kernel_setup::confinement(settings, mode, status, workspace).map(with_limits_notice)
}

/// As [`confine`], but where the sandbox cannot be prepared the kernel
/// runs unconfined and the notice says why (the workbench: the user reads
/// it, and the caller must then ask about every cell and command).
pub(crate) fn confine_or_unconfined(
    settings: &Settings,
    mode: ApprovalMode,
    status: &SandboxStatus,
    workspace: &Path,
) -> Confined {
    confine(settings, mode, status, workspace).unwrap_or_else(|error| Confined {
        // Never silently unconfined.
        confinement: Confinement::unconfined(kernel_setup::child_env(settings)),
        notice: Some(format!(
            "the sandbox could not be prepared ({error}); the kernel runs \
             unconfined and every model cell and shell command is shown for approval"
        )),
    })
}

/// What the sandbox cannot enforce on this machine, said once at launch.
fn with_limits_notice(confinement: Confinement) -> Confined {
    let notice = confinement
        .session()
        .map(|session| session.limitations())
        .filter(|limits| !limits.is_empty())
        .map(|limits| format!("sandbox limits here: {}", limits.join("; ")));
    Confined {
        confinement,
        notice,
    }
}

/// Whether the kernel refreshes the variable inspector after every cell
/// and while one runs (only the workbench shows one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variables {
    Refreshed,
    NotShown,
}

/// MCP servers for the kernel: who approves each tool call, and where the
/// servers report (the agent's prompt lists their tools from there).
pub(crate) struct McpLink<'a> {
    pub approval: Arc<dyn ToolCallApproval>,
    pub directory: &'a McpDirectory,
}

/// One kernel to start. Every field is a difference between the front
/// ends, named where the kernel is started; everything else (config from
/// the settings, the interpreter a trusted workspace may choose, the
/// confinement on every spawn, `fs` and `shell`) is the same for all.
pub(crate) struct KernelLaunch<'a> {
    pub settings: &'a Settings,
    pub root: &'a Path,
    /// From [`confine`], or the calling kernel's for a nested loop.
    pub confinement: &'a Confinement,
    /// Who is asked about each `shell.run` command.
    pub shell_policy: Arc<dyn ApprovalPolicy>,
    /// `fs` tied to the editors (or to `exec`'s `files.changed` events).
    pub fs_links: Option<&'a FsLinks>,
    /// The conversation the `context` capability reads.
    pub context: Option<&'a ContextLink>,
    /// The `llm` capability (`llm_query`, `rlm_query`).
    pub subcalls: Option<&'a Subcalls>,
    /// `None`: no MCP servers are started for this kernel.
    pub mcp: Option<McpLink<'a>>,
    pub variables: Variables,
    /// Where the kernel keeps its variables across restarts (`None`: it
    /// does not; nor when `[kernel] keep_variables` is off).
    pub keep: Option<&'a crate::session::VarStore>,
}

impl KernelLaunch<'_> {
    /// Builds the kernel's capabilities and config and starts its runtime
    /// (the process itself starts at the first cell, under the
    /// confinement). The events are the runtime's (`KernelEvent`s).
    pub fn start(self) -> std::io::Result<(CodeRuntime, mpsc::UnboundedReceiver<KernelEvent>)> {
        let mut registry = kernel_setup::registry(
            self.root,
            self.confinement,
            self.shell_policy,
            self.fs_links,
            self.context,
            self.subcalls,
        )?;
        if let Some(mcp) = self.mcp {
            kernel_setup::add_mcp(
                &mut registry,
                self.settings,
                self.root,
                self.confinement,
                mcp.approval,
                mcp.directory,
            );
        }
        let mut config = kernel_setup::kernel_config(self.settings, self.root, self.confinement);
        if self.variables == Variables::NotShown {
            config.auto_refresh = None;
        }
        if let Some(store) = self.keep
            && self.settings.keep_variables.is_some()
        {
            registry = registry.with(Arc::new(store.clone()));
            config.keep_variables = Some(store.limits());
        }
        Ok(CodeRuntime::new(config, registry))
    }
}

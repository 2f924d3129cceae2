//! Knobs of the kernel runtime, with the defaults the workbench uses.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Runs on the kernel's `Command` just before every spawn (first start and
/// each restart), e.g. to confine the child with the sandbox. Whatever the
/// hook must keep alive (the sandbox's private temp dir) it owns, so it
/// lives exactly as long as the runtime's config.
/// The hook's function: may change the command, or refuse the spawn.
pub(crate) type PreSpawnFn =
    dyn Fn(&mut std::process::Command) -> std::io::Result<()> + Send + Sync;

#[derive(Clone)]
pub struct PreSpawnHook(pub Arc<PreSpawnFn>);

impl fmt::Debug for PreSpawnHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PreSpawnHook")
    }
}

/// How much of the kernel's variables is kept across restarts
/// (`[kernel] keep_variable_mb`, `keep_variables_mb`): the driver saves
/// within these bounds, and the host's store refuses past them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct KeepLimits {
    pub per_variable_bytes: u64,
    pub total_bytes: u64,
}

impl KeepLimits {
    /// Bounded by what one frame carries: a variable goes to the host
    /// base64-encoded in one capability call.
    pub fn within_a_frame(self) -> Self {
        let most = (super::connection::MAX_FRAME as u64 - (64 << 10)) / 4 * 3;
        Self {
            per_variable_bytes: self.per_variable_bytes.min(most),
            ..self
        }
    }
}

#[derive(Debug, Clone)]
pub struct KernelConfig {
    /// Interpreter to run (`python3` on `PATH` by default). A shim (a
    /// script) is asked once per process for the interpreter it runs.
    pub python: PathBuf,
    /// Working directory of the kernel (the workspace root).
    pub workspace: PathBuf,
    /// Per-cell timeout when `execute` is given none.
    pub default_timeout: Duration,
    /// After a timeout's SIGINT, how long the cell gets to stop before the
    /// kernel is killed and restarted (losing its variables).
    pub interrupt_grace: Duration,
    pub start_timeout: Duration,
    pub describe_timeout: Duration,
    /// Address-space limit (RLIMIT_AS) the driver sets on itself, inherited
    /// by what its cells start. By default half the machine's memory
    /// ([`default_memory_limit`]): a runaway cell gets a `MemoryError`
    /// instead of driving the machine into the OOM killer, which may pick
    /// the workbench and its unsaved buffers. `None`: no limit.
    pub memory_limit_bytes: Option<u64>,
    /// Bytes of each stream forwarded live per cell before the driver keeps
    /// only the tail; the host applies the same bound to `ExecResult`.
    pub output_head_bytes: usize,
    pub output_tail_bytes: usize,
    /// Variable refresh for the inspector: after every cell, and at this
    /// interval while a cell runs. `None` turns both off.
    pub auto_refresh: Option<Duration>,
    /// Applied to every spawn; an error stops the spawn (nothing runs
    /// unconfined when the sandbox cannot be installed).
    pub pre_spawn: Option<PreSpawnHook>,
    /// The kernel runs inside the sandbox. The driver is told, so a cell's
    /// write outside the writable roots (`EROFS` from the read-only mount)
    /// reaches the model as a `PermissionError` that says why.
    pub sandboxed: bool,
    /// The driver saves its variables after each cell and restores them
    /// after a restart (through the `_vars` capability), within these
    /// bounds. `None`: it does not.
    pub keep_variables: Option<KeepLimits>,
}

/// Half the machine's physical memory, the kernel's address-space limit
/// unless `[kernel] memory_limit_mb` says otherwise; `None` where the size
/// cannot be read.
pub fn default_memory_limit() -> Option<u64> {
    // SAFETY: sysconf takes an integer name and has no preconditions.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let total = u64::try_from(pages)
        .ok()?
        .checked_mul(u64::try_from(page_size).ok()?)?;
    (total > 0).then_some(total / 2)
}

/// `[kernel] memory_limit_mb` in bytes (`0` turns the limit off), else
/// [`default_memory_limit`]: the kernel's address-space limit, and its
/// sandbox session's total where a cgroup can be made.
pub fn memory_limit_bytes(settings: &crate::config::Settings) -> Option<u64> {
    match settings.memory_limit_mb {
        Some(mb) => (mb > 0).then(|| mb.saturating_mul(1024 * 1024)),
        None => default_memory_limit(),
    }
}

impl Default for KernelConfig {
    fn default() -> Self {
        Self {
            python: PathBuf::from("python3"),
            workspace: PathBuf::from("."),
            default_timeout: Duration::from_secs(60),
            interrupt_grace: Duration::from_secs(2),
            start_timeout: Duration::from_secs(15),
            describe_timeout: Duration::from_secs(2),
            memory_limit_bytes: default_memory_limit(),
            output_head_bytes: 1 << 20,
            output_tail_bytes: 64 << 10,
            auto_refresh: Some(Duration::from_millis(500)),
            pre_spawn: None,
            sandboxed: false,
            keep_variables: None,
        }
    }
}

impl KernelConfig {
    /// What a restart costs, in the words the model and the user read.
    pub(crate) fn after_a_restart(&self) -> &'static str {
        if self.keep_variables.is_some() {
            "the variables kept after each cell come back when the next cell runs"
        } else {
            "variables lost"
        }
    }

    pub fn for_workspace(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            ..Self::default()
        }
    }

    /// Every `[kernel]` setting (interpreter, memory limit, cell timeout)
    /// applied to the defaults. The confinement is added by
    /// `kernel_setup::kernel_config`, the one place front ends get a config.
    pub fn from_settings(settings: &crate::config::Settings, workspace: &std::path::Path) -> Self {
        let mut config = Self::for_workspace(workspace);
        config.python = settings.python.clone();
        config.memory_limit_bytes = memory_limit_bytes(settings);
        if let Some(secs) = settings.cell_timeout_secs.filter(|s| *s > 0) {
            config.default_timeout = Duration::from_secs(secs);
        }
        config
    }
}

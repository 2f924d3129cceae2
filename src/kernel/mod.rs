//! The Python kernel core: a persistent `python3` process running an
//! embedded driver package (`assets/kernel/`, see [`DriverDir`]), the protocol to it, the
//! capability bridge (`fs`, `shell`; `context` lives in `crate::context` and all
//! three are registered by `crate::kernel_setup::registry`) and the live runtime
//! state for the inspector. Host-agnostic: no terminal code.
//!
//! # Wiring it into a single-threaded UI loop
//!
//! ```no_run
//! # async fn wire() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use hello_tui::kernel::caps::{AskUser, DirtyPaths, FsCapability, ShellCapability};
//! use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig, KernelEvent};
//! use hello_tui::sandbox::{ChildEnv, Confinement};
//! use tokio::sync::{mpsc, watch};
//!
//! let root = std::path::PathBuf::from(".");
//! let (dirty_tx, dirty_rx) = watch::channel(DirtyPaths::default()); // editor publishes here
//! let (written_tx, mut written_rx) = mpsc::unbounded_channel(); // reload these files
//! let (ask_tx, mut ask_rx) = mpsc::channel(8); // ApprovalRequest -> approval dialog
//! let registry = CapabilityRegistry::new()
//!     .with(Arc::new(FsCapability::new(&root)?.with_dirty_paths(dirty_rx).with_write_events(written_tx)))
//!     .with(Arc::new(ShellCapability::new(
//!         &root,
//!         Arc::new(AskUser::new(ask_tx)),
//!         Confinement::unconfined(ChildEnv::from_host(&[], "OPENAI_API_KEY")),
//!     )));
//! let (runtime, mut events) = CodeRuntime::new(KernelConfig::for_workspace(&root), registry);
//! let status = runtime.status(); // watch: KernelInfo { status, python, pid } for the status bar
//!
//! // Run a cell without blocking the loop; the result comes back as a message.
//! let rt = runtime.clone();
//! tokio::spawn(async move { let result = rt.execute("print('hi')", None).await; /* send AppEvent */ });
//! // In the loop's select!: events.recv() => Stream / State / Status / Restarted,
//! // ask_rx.recv() => show the command, answer on request.respond,
//! // written_rx.recv() => reload the file view. Ctrl-C => runtime.interrupt().
//! # Ok(()) }
//! ```
//!
//! To confine the kernel, set `KernelConfig::pre_spawn` to a [`PreSpawnHook`]
//! that applies a `sandbox::Confinement` to the `Command` (front ends get
//! theirs from `crate::kernel_setup::kernel_config`, with the same
//! confinement as `shell`); it runs before every spawn, restarts included,
//! and an error from it stops the spawn.

/// The one tool the model calls: a cell for this kernel. Hooks name a
/// cell by it too, so a matcher written for the model's tool matches.
pub const CODE_ACTION_TOOL: &str = "code_action";

mod capability;
pub mod caps;
mod config;
mod connection;
mod driver;
mod error;
mod events;
mod framing;
mod interpreter;
mod listing;
mod output;
mod process;
pub mod protocol;
mod result;
mod runtime;
mod state;
mod status;

pub use capability::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilityRegistry, CapabilitySpec,
    ParamSpec, arg_seconds, arg_str,
};
pub use config::{
    KeepLimits, KernelConfig, PreSpawnHook, default_memory_limit, memory_limit_bytes,
};
pub use driver::{DRIVER_FILES, DriverDir};
pub use error::KernelError;
pub use events::KernelEvent;
pub use listing::{BaseMismatch, Listing, StateUpdate};
pub use output::{CappedText, dropped_marker, dropped_markers_in};
pub use protocol::{ExecError, StreamName};
pub use result::{ExecOutcome, ExecResult, FileChanged, labelled_background};
pub use runtime::{CodeRuntime, RuntimeStateHandle};
pub use state::{RuntimeState, Variable, VariableKind};
pub use status::{KernelInfo, KernelStatus};

/// Lock a std mutex, recovering from poisoning: the data guarded here (maps
/// of waiters, text buffers) stays consistent even if a holder panicked.
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

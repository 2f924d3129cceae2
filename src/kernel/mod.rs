//! The Python kernel core: a persistent `python3` process running an
//! embedded driver, the protocol to it, the capability bridge (`fs`, `shell`,
//! and later `context`) and the live runtime state for the inspector.
//!
//! Host-agnostic: no terminal code. The UI loop owns a [`CodeRuntime`], spawns
//! `execute` calls as tasks, and reads [`KernelEvent`]s and the
//! [`KernelInfo`] watch.

mod capability;
pub mod caps;
mod config;
mod error;
mod events;
mod framing;
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
pub use config::KernelConfig;
pub use error::KernelError;
pub use events::KernelEvent;
pub use output::CappedText;
pub use process::DRIVER_SOURCE;
pub use protocol::{ExecError, StreamName};
pub use result::{ExecOutcome, ExecResult};
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

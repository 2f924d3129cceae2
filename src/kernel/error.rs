//! Runtime-level failures (a cell's own exception is an `ExecError` value).

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("could not start {python}: {source}")]
    Spawn {
        python: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the kernel did not become ready within {0:?}")]
    StartTimeout(Duration),
    #[error("the kernel exited while starting: {0}")]
    StartFailed(String),
    #[error("the kernel did not answer describe within {0:?}")]
    DescribeTimeout(Duration),
    #[error("the kernel's variable listing could not be brought up to date")]
    ListingOutOfStep,
    #[error("the kernel runtime is gone")]
    Gone,
}

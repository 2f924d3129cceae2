//! Our own small LSP client: framing, JSON-RPC transport, one supervised
//! connection per server. Only what diagnostics need.

pub(crate) mod config;
mod connection;
mod convert;
pub mod framing;
mod peek;
pub(crate) mod resolve;
pub(crate) mod supervisor;
mod transport;

use std::time::Duration;

pub use supervisor::PACED_ABOVE_BYTES;

#[derive(Debug, thiserror::Error)]
pub(crate) enum LspError {
    #[error("could not start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{method}` got no answer within {after:?}")]
    Timeout { method: String, after: Duration },
    #[error("the server connection is closed")]
    Closed,
    #[error("server error {code}: {message}")]
    Server { code: i64, message: String },
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The answer was over the message limit and was dropped unread.
    #[error("the answer of {bytes} bytes was over the message limit and was dropped")]
    TooLarge { bytes: usize },
}

//! Errors of the editor core. Every failure the user can cause (a file they
//! cannot read, a save into a read-only directory, a conflict) is a value
//! with a message that names the file and says what to do.

use std::path::PathBuf;

/// Why a document cannot be edited or saved; shown in the file view notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOnlyReason {
    /// NUL bytes or mostly non-text content: never shown nor written.
    Binary { bytes: u64 },
    /// Not valid UTF-8: shown lossily, never written back mangled.
    InvalidUtf8,
}

impl std::fmt::Display for ReadOnlyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Binary { bytes } => write!(f, "binary file, {bytes} bytes"),
            Self::InvalidUtf8 => {
                write!(
                    f,
                    "read-only: not valid UTF-8 (shown with replacement characters)"
                )
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot save {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is {reason}")]
    ReadOnly {
        path: PathBuf,
        reason: ReadOnlyReason,
    },
    #[error(
        "{path} changed on disk since it was opened: choose keep mine, load theirs or diff before saving"
    )]
    Conflict { path: PathBuf },
    #[error("recovery file {path}: {message}")]
    Recovery { path: PathBuf, message: String },
    #[error("unknown syntax theme {name:?}; available: {available}")]
    UnknownTheme { name: String, available: String },
}

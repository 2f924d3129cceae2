//! Built-in capabilities: `fs` (workspace files) and `shell` (commands behind
//! an approval policy).

mod approval;
mod confine;
mod fs;
mod patch;
mod review;
mod shell;
mod write_beneath;

pub use approval::{
    AllowAll, Approval, ApprovalDecision, ApprovalPolicy, ApprovalRequest, AskUser, DenyAll,
};
pub use confine::confine;
pub use fs::{DirtyPaths, FsCapability, FsWritten, Prior};
pub use review::{WriteProposal, WriteReview, WriteVerdict};
pub use shell::ShellCapability;
pub(crate) use write_beneath::{
    Found, WriteError, check_writable, open_in, own_folder, read_beneath, remove_beneath,
    write_beneath,
};

//! Approval modes: how much the user is asked before model-written code runs,
//! and whether the kernel process is confined while it runs.

use std::fmt;
use std::str::FromStr;

use super::status::SandboxStatus;

/// How model-written code (kernel cells and `shell.run` commands) is approved.
///
/// Approval and confinement are separate questions: approving a cell cannot
/// stop that cell from `import subprocess`, so the sandbox wraps the whole
/// kernel process whenever [`ApprovalMode::sandboxed`] says so, and the
/// approval prompt is an extra check on top of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ApprovalMode {
    /// Each cell, each shell command and each write's diff is shown for
    /// approval; the kernel still runs inside the sandbox when the sandbox
    /// is available.
    #[default]
    Ask,
    /// As `Ask`, and a write's diff is accepted or rejected hunk by hunk:
    /// only the accepted hunks reach the disk.
    Review,
    /// Everything runs without asking, inside the sandbox. Only meaningful
    /// when the sandbox is enforced; see [`effective_mode`].
    Auto,
    /// No sandbox, no questions. Chosen explicitly by the user, never as a
    /// fallback.
    Full,
    /// Nothing that needs approval runs: every cell and shell command is
    /// refused. This is what `Ask` becomes in a headless run (`exec`) where
    /// nobody can answer a prompt; see [`ApprovalMode::headless`].
    Deny,
}

impl ApprovalMode {
    /// Every mode, in the order a mode picker shows them.
    pub const ALL: [ApprovalMode; 5] = [
        ApprovalMode::Ask,
        ApprovalMode::Review,
        ApprovalMode::Auto,
        ApprovalMode::Full,
        ApprovalMode::Deny,
    ];

    /// The name used in config files, flags and the status bar.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Ask => "ask",
            ApprovalMode::Review => "review",
            ApprovalMode::Auto => "auto",
            ApprovalMode::Full => "full",
            ApprovalMode::Deny => "deny",
        }
    }

    /// Whether the user must approve each cell and shell command.
    pub fn asks(self) -> bool {
        matches!(self, ApprovalMode::Ask | ApprovalMode::Review)
    }

    /// Whether the kernel process must be started inside the sandbox.
    /// Switching between a sandboxed and an unsandboxed mode needs a kernel
    /// restart: a process cannot leave its Landlock domain.
    pub fn sandboxed(self) -> bool {
        !matches!(self, ApprovalMode::Full)
    }

    /// The mode to use when nobody can answer an approval prompt: `Ask`
    /// becomes `Deny`, the other modes already need no answer.
    pub fn headless(self) -> ApprovalMode {
        match self {
            ApprovalMode::Ask | ApprovalMode::Review => ApprovalMode::Deny,
            other => other,
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of `ask`, `auto`, `full`, `deny`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown approval mode `{0}`: expected one of ask, review, auto, full, deny")]
pub struct ParseModeError(pub String);

impl FromStr for ApprovalMode {
    type Err = ParseModeError;

    /// Case-insensitive, surrounding whitespace ignored, so values typed in a
    /// config file or an environment variable are forgiven their spelling.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        ApprovalMode::ALL
            .into_iter()
            .find(|mode| mode.as_str().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ParseModeError(s.to_owned()))
    }
}

/// Config files spell modes the way flags do (`approval = "auto"`), with the
/// same forgiving parser and the same error message.
impl<'de> serde::Deserialize<'de> for ApprovalMode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for ApprovalMode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// The mode that actually applies given what the sandbox can do here.
///
/// `Auto` without an enforced sandbox would run model code unconfined and
/// unasked, so it falls back to `Ask`. Every other mode stands: `Ask` and
/// `Deny` are safe without a sandbox (the user is asked, or nothing runs) and
/// `Full` was chosen explicitly.
pub fn effective_mode(requested: ApprovalMode, status: &SandboxStatus) -> ApprovalMode {
    match (requested, status) {
        (ApprovalMode::Auto, SandboxStatus::Unavailable(_)) => ApprovalMode::Ask,
        (mode, _) => mode,
    }
}

/// A sentence for the start-up notice and the status bar when
/// [`effective_mode`] changed the requested mode, `None` when it did not.
pub fn fallback_notice(requested: ApprovalMode, status: &SandboxStatus) -> Option<String> {
    let SandboxStatus::Unavailable(reason) = status else {
        return None;
    };
    let effective = effective_mode(requested, status);
    (effective != requested).then(|| {
        format!(
            "approval mode `{requested}` needs the sandbox, which is unavailable ({reason}); \
             using `{effective}`: every cell and shell command will be shown for approval"
        )
    })
}

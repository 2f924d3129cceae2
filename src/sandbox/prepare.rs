//! Builds the Landlock ruleset for a [`SandboxPolicy`] in the parent, where
//! allocating and opening files is fine, so the child only has to apply it.
//!
//! Rules:
//! - read and execute everywhere (`/`): Python, its libraries and the tools a
//!   cell shells out to live all over the filesystem;
//! - full access beneath the workspace, the private temp dir and any extra
//!   writable paths;
//! - write (no create/delete) on the few devices ordinary programs write to:
//!   `/dev/null`, `/dev/zero` and `/dev/full`. Truncate is granted with
//!   write because `open("/dev/null", "w")` and the shell's `>` open with
//!   `O_TRUNC`. No terminal device is writable (`/dev/tty`, `/dev/ptmx`,
//!   `/dev/pts/*`, consoles), and with device ioctls handled (ABI 5+) no
//!   ioctl reaches a terminal opened inside: a terminal is a way out, as
//!   typed input (`TIOCSTI`) or escape sequences (clipboard, title, fake
//!   text) on the user's screen. So `pty`, `script` and curses programs do
//!   not work in a cell. `/dev/shm` is *not* writable by default: it is a
//!   shared, world-writable dir; `multiprocessing` users add it to
//!   `extra_writable`;
//! - no network unless the policy allows it: Landlock denies TCP bind and
//!   connect, and a seccomp filter refuses non-unix sockets (UDP included;
//!   see [`super::seccomp`]);
//! - scoped abstract unix sockets and signals: the kernel cannot talk to
//!   abstract sockets or signal processes outside its own sandbox.
//!
//! Best effort vs. hard requirement: Landlock itself is a hard requirement
//! (no ruleset from the kernel means [`SandboxError::Unavailable`], never an
//! unconfined "success"). Rights newer than the running kernel's ABI are
//! dropped by the landlock crate's best-effort mode and reported through
//! [`PreparedSandbox::limitations`], the network most of all.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope, make_bitflags,
};

use super::error::SandboxError;
use super::namespace::{KeptTmp, Namespace};
use super::policy::SandboxPolicy;
use super::seccomp::{self, Filter};
use super::status::{NETWORK_ABI, kernel_abi};

/// The newest ABI whose rights we request and have tested (Linux 6.12+:
/// filesystem incl. truncate and device ioctl, TCP, scopes). Newer kernels
/// enforce exactly this set; older ones get the part they support.
const TARGET_ABI: ABI = ABI::V6;

/// Devices a confined program may write to (see the module docs for why).
const WRITABLE_DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// A ruleset ready to be applied in a child, plus what it will and will not
/// confine on this kernel.
#[derive(Debug)]
pub struct PreparedSandbox {
    ruleset: OwnedFd,
    /// The paths the namespace is planned from, again at each spawn.
    policy: SandboxPolicy,
    /// The namespace plan as of `prepare`, for [`super::apply_in_child`]
    /// (which cannot plan in the child); `install` plans per spawn.
    namespace: Namespace,
    kernel_abi: u32,
    /// Whether spawns get the policy's process cap (the kernel keeps a
    /// `pid_max` per PID namespace).
    processes_limited: bool,
    /// `None` on CPUs this build has no seccomp filter for.
    filter: Option<Filter>,
    /// The keeper of the capped private `/tmp`, when not root.
    kept_tmp: Option<KeptTmp>,
}

impl PreparedSandbox {
    /// The running kernel's Landlock ABI version.
    pub fn abi(&self) -> u32 {
        self.kernel_abi
    }

    /// Whether the network is denied. False when the policy allows it, and
    /// also when neither the socket filter nor Landlock's TCP rules can be
    /// used here.
    pub fn network_confined(&self) -> bool {
        !self.policy.allow_network && (seccomp::SUPPORTED || self.kernel_abi >= NETWORK_ABI)
    }

    /// The dir the child sees as `/tmp` (and `/var/tmp`).
    pub fn private_tmp(&self) -> &Path {
        &self.policy.private_tmp
    }

    /// Restrictions the policy asked for that this kernel cannot enforce,
    /// one sentence each, for the start-up notice. Empty on a current kernel.
    pub fn limitations(&self) -> Vec<String> {
        let abi = self.kernel_abi;
        let mut notes = Vec::new();
        if !self.policy.allow_network && !seccomp::SUPPORTED {
            notes.push(if abi < NETWORK_ABI {
                format!(
                    "network not confined: no socket filter for this CPU and Landlock ABI {abi} \
                     cannot deny TCP (needs ABI {NETWORK_ABI}, Linux 6.7+)"
                )
            } else {
                "only TCP is confined: no socket filter for this CPU, so UDP stays open".to_owned()
            });
        }
        if !seccomp::SUPPORTED {
            notes.push(
                "unix sockets, device nodes, ptrace and bpf are not filtered: no seccomp \
                 filter for this CPU"
                    .to_owned(),
            );
        }
        if abi < 3 {
            notes.push(format!(
                "truncating files outside the workspace is not confined (Landlock ABI {abi} < 3)"
            ));
        }
        if !self.processes_limited {
            notes.push(
                "the number of processes is not limited: Linux before 6.14 keeps no pid_max \
                 per PID namespace"
                    .to_owned(),
            );
        }
        if abi < 6 {
            notes.push(format!(
                "signals and abstract unix sockets are not scoped (Landlock ABI {abi} < 6)"
            ));
        }
        notes
    }

    /// A fresh namespace plan: a `.git/` made or moved since the last one
    /// is protected too. The workspace is walked again for every spawn: a
    /// list kept from an earlier walk would miss a repository a cell
    /// renamed a moment ago. Fails (the spawn is refused) when the walk
    /// could not look everywhere.
    pub(crate) fn plan_namespace(&self) -> io::Result<Namespace> {
        let policy = &self.policy;
        let nested = super::protected::nested_protected(&policy.workspace)?;
        let mut namespace = Namespace::plan(
            &policy.workspace,
            &policy.private_tmp,
            &policy.extra_writable,
            &nested,
            self.kept_tmp.as_ref(),
        )?;
        namespace.limit_processes(policy.max_processes);
        Ok(namespace)
    }

    pub(crate) fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    pub(crate) fn ruleset_fd(&self) -> RawFd {
        self.ruleset.as_raw_fd()
    }

    /// The seccomp filter the child installs, where this CPU has one.
    pub(crate) fn filter(&self) -> Option<&Filter> {
        self.filter.as_ref()
    }

    pub(crate) fn ruleset_owned(&self) -> io::Result<OwnedFd> {
        self.ruleset.try_clone()
    }
}

/// Builds the ruleset for `policy`. Run this in the parent, once per kernel
/// spawn (or once per session: the result can be installed on any number of
/// commands).
pub fn prepare(policy: &SandboxPolicy) -> Result<PreparedSandbox, SandboxError> {
    prepare_kept(policy, None)
}

/// [`prepare`] for a private temp dir whose capped `tmpfs` `kept`'s keeper
/// holds: spawns join the keeper's namespaces, and the rule that lets them
/// write there is on that `tmpfs` (Landlock rules hold inodes, and the
/// host's own dir at that path is another, empty one).
pub(crate) fn prepare_kept(
    policy: &SandboxPolicy,
    kept: Option<KeptTmp>,
) -> Result<PreparedSandbox, SandboxError> {
    let abi = kernel_abi().map_err(SandboxError::Unavailable)?;

    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let device_write = make_bitflags!(AccessFs::{WriteFile | Truncate | IoctlDev});

    let mut ruleset = Ruleset::default()
        .handle_access(all)?
        .scope(Scope::from_all(TARGET_ABI))?;
    if !policy.allow_network {
        // Handled with no rule allowing any port: every bind and connect is denied.
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let mut created = ruleset.create()?.add_rule(beneath(Path::new("/"), read)?)?;

    let tmp = kept
        .as_ref()
        .map_or(policy.private_tmp.as_path(), |kept| kept.view.as_path());
    let writable = [policy.workspace.as_path(), tmp]
        .into_iter()
        .chain(policy.extra_writable.iter().map(PathBuf::as_path));
    for path in writable {
        created = created.add_rule(beneath(path, all)?)?;
    }
    for device in WRITABLE_DEVICES.iter().map(Path::new) {
        // Devices a minimal container lacks are skipped.
        if device.exists() {
            created = created.add_rule(beneath(device, device_write)?)?;
        }
    }

    let ruleset = ruleset_fd(created)?;
    let path_error = |source: io::Error| SandboxError::Path {
        path: policy.workspace.clone(),
        source,
    };
    let nested = super::protected::nested_protected(&policy.workspace)
        .map_err(|error| path_error(error.into()))?;
    let mut namespace = Namespace::plan(
        &policy.workspace,
        &policy.private_tmp,
        &policy.extra_writable,
        &nested,
        None,
    )
    .map_err(path_error)?;
    let processes_limited = namespace.limit_processes(policy.max_processes);
    Ok(PreparedSandbox {
        ruleset,
        policy: policy.clone(),
        namespace,
        kernel_abi: abi,
        processes_limited,
        filter: seccomp::SUPPORTED.then(|| Filter::build(!policy.allow_network)),
        kept_tmp: kept,
    })
}

/// A rule granting `access` beneath `path`, reduced to the rights that make
/// sense for a non-directory when `path` is a file (the kernel rejects
/// directory rights on files).
fn beneath(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, SandboxError> {
    let path_error = |source: io::Error| SandboxError::Path {
        path: path.to_path_buf(),
        source,
    };
    let is_dir = std::fs::metadata(path).map_err(path_error)?.is_dir();
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(TARGET_ABI)
    };
    let fd = PathFd::new(path).map_err(|error| path_error(io::Error::other(error)))?;
    Ok(PathBeneath::new(fd, access))
}

/// The kernel's ruleset fd. The crate returns none when the kernel supports
/// nothing we asked for; that must not pass as a sandbox.
fn ruleset_fd(created: RulesetCreated) -> Result<OwnedFd, SandboxError> {
    Option::<OwnedFd>::from(created).ok_or_else(|| {
        SandboxError::Unavailable("the kernel created no Landlock ruleset".to_owned())
    })
}

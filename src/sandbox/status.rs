//! Can this machine enforce the sandbox? Probed once at start-up so the UI
//! can say so plainly instead of discovering it when a cell runs.

use std::io;

use landlock::{ABI, Access, AccessFs, Ruleset, RulesetAttr};

use super::child::restrict_self;
use super::namespace::Namespace;
use super::pid_namespace;
use super::seccomp::{self, Filter};

/// The Landlock ABI that added TCP bind/connect rules.
pub(crate) const NETWORK_ABI: u32 = 4;

/// What the sandbox can do on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxStatus {
    /// A test process was really confined. `abi` is the running kernel's
    /// Landlock ABI version; `network_confined` says whether the network can
    /// be denied (by the seccomp socket filter on x86_64/aarch64, else by
    /// Landlock ABI 4+ for TCP). Without it the filesystem is still confined
    /// but the network is open, and the UI must say so.
    Enforced { abi: u32, network_confined: bool },
    /// Landlock cannot be applied; the reason is a sentence for the user.
    Unavailable(String),
}

impl SandboxStatus {
    /// Asks the kernel for its Landlock ABI, then confines a forked test
    /// process with a real ruleset: a kernel that advertises Landlock but
    /// refuses `landlock_restrict_self` (a seccomp profile in a container,
    /// for instance) is caught here rather than at the first kernel spawn.
    /// Costs three forks (the test process, then init and the program of
    /// its PID namespace); call it once at start-up.
    ///
    /// The PID namespace is part of the sandbox, not an option: where its
    /// fresh `/proc` cannot be mounted (a container that masks parts of
    /// `/proc`: in a user namespace the kernel refuses a new proc while the
    /// host's has locked mounts on top), the sandbox is unavailable and
    /// `auto` falls back to asking, with that reason. A "partly" sandbox
    /// would need a second way to spawn in every spawner and a status the
    /// user must decode, for a case where one more door (every process's
    /// command line, and as non-root the environment of the user's other
    /// programs) is open; failing closed keeps the status bar's word true.
    pub fn probe() -> SandboxStatus {
        match probe_enforcement() {
            Ok(abi) => SandboxStatus::Enforced {
                abi,
                network_confined: seccomp::SUPPORTED || abi >= NETWORK_ABI,
            },
            Err(reason) => SandboxStatus::Unavailable(reason),
        }
    }

    pub fn is_enforced(&self) -> bool {
        matches!(self, SandboxStatus::Enforced { .. })
    }

    /// A short label for the status bar.
    pub fn label(&self) -> String {
        match self {
            SandboxStatus::Enforced {
                abi,
                network_confined: true,
            } => format!("sandbox: landlock v{abi}"),
            SandboxStatus::Enforced {
                abi,
                network_confined: false,
            } => format!("sandbox: landlock v{abi}, network not confined"),
            SandboxStatus::Unavailable(_) => "sandbox: unavailable".to_owned(),
        }
    }
}

/// The running kernel's Landlock ABI version, or why there is none.
///
/// The landlock crate keeps its own probe private (it wants callers to
/// request a fixed ABI and let it degrade), but the user deserves to see the
/// real version, so we ask the kernel directly.
pub(crate) fn kernel_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the
    // syscall reads no memory and only returns the ABI number or an error.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version >= 1 {
        return u32::try_from(version).map_err(|_| format!("odd Landlock ABI {version}"));
    }
    let error = io::Error::last_os_error();
    Err(match error.raw_os_error() {
        Some(libc::ENOSYS) => "this Linux kernel has no Landlock support \
                               (it needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK, \
                               or a seccomp profile blocks the Landlock syscalls)"
            .to_owned(),
        Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but disabled \
                                   (add `landlock` to the `lsm=` boot parameter)"
            .to_owned(),
        _ => format!("the Landlock version query failed: {error}"),
    })
}

fn probe_enforcement() -> Result<u32, String> {
    let abi = kernel_abi()?;
    let ruleset: Option<std::os::fd::OwnedFd> = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .map_err(|error| format!("cannot create a Landlock ruleset: {error}"))?
        .into();
    let ruleset = ruleset.ok_or("the kernel created no Landlock ruleset")?;
    let filter = seccomp::SUPPORTED.then(|| Filter::build(true));
    let namespace = Namespace::probe()
        .map_err(|error| format!("cannot plan the sandbox's mount namespace: {error}"))?;
    let ruleset = std::os::fd::AsRawFd::as_raw_fd(&ruleset);
    in_forked_child(|| restrict_self(ruleset, filter.as_ref(), &namespace, None, &[])).map_err(
        |error| {
            // Which step? Only worth two more forks when something failed.
            let mounts = in_forked_child(|| namespace.enter());
            let proc = in_forked_child(|| {
                namespace.enter()?;
                pid_namespace::enter(None)?.run_program()
            });
            if mounts.is_ok() && proc.is_err() {
                format!(
                    "cannot mount a fresh /proc for the sandbox's PID namespace \
                 (a container masking parts of /proc refuses it): {error}"
                )
            } else {
                format!("a test process could not be confined: {error}")
            }
        },
    )?;
    Ok(abi)
}

/// Runs `confine` in a throwaway child, the way a real spawn runs it
/// (there: a private mount and PID namespace with a fresh `/proc`,
/// capabilities dropped, the ruleset, the seccomp filter where this build
/// has one), and reports whether it worked.
///
/// `confine` must be async-signal-safe: after fork only the calling thread
/// exists in the child. `restrict_self` and its steps are (unshare, mount,
/// fork, capset, prctl, landlock_restrict_self, seccomp: raw syscalls, no
/// allocation, no locks), and so is `_exit`.
pub(super) fn in_forked_child(confine: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    // SAFETY: see above; the child only runs `confine` and `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = match confine() {
            Ok(()) => 0,
            Err(error) => error.raw_os_error().unwrap_or(libc::EPERM).clamp(1, 255),
        };
        // SAFETY: _exit ends the child without running the parent's atexit
        // handlers or destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child forked above; status is a valid out pointer.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else if libc::WIFEXITED(status) {
        Err(io::Error::from_raw_os_error(libc::WEXITSTATUS(status)))
    } else {
        Err(io::Error::other("the probe process was killed by a signal"))
    }
}

//! The part that runs in the forked child between `fork` and `exec`, and the
//! helper that hooks it into a `Command`.
//!
//! Between fork and exec a multi-threaded parent's child may only call
//! async-signal-safe functions: another thread may have held the allocator's
//! or any other lock at fork time. The landlock crate's
//! `RulesetCreated::restrict_self` consumes the ruleset, updates compatibility
//! bookkeeping and builds a status value, which is more than we can vouch for
//! in that window. So the ruleset is built in the parent (see
//! [`super::prepare`]) and the child only makes the raw syscalls itself.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::caps;
use super::cgroup;
use super::namespace::Namespace;
use super::pid_namespace;
use super::prepare::PreparedSandbox;
use super::registration::Announce;
use super::seccomp::Filter;
use super::terminal;

/// Confines what the calling process goes on to run (and every process
/// that starts) with the prepared ruleset. The calling process itself
/// stays outside the PID namespace as the reaper and never returns: only
/// the program, forked inside, returns `Ok` (to exec). Safe to call from
/// `CommandExt::pre_exec`: it only makes raw syscalls, allocates nothing
/// and takes no lock.
///
/// Processes confined this way are no session's: a `.git` made after they
/// started stays writable to them (see [`super::SandboxSession::install`]).
pub fn apply_in_child(prepared: &PreparedSandbox) -> io::Result<()> {
    restrict_self(
        prepared.ruleset_fd(),
        prepared.filter(),
        prepared.namespace(),
        None,
        &[],
    )
}

/// Sets up `cmd` so the process it spawns runs inside the sandbox: its
/// `TMPDIR` (and `TMP`, `TEMP`, which Python's `tempfile` also reads) is
/// `/tmp`, where the private temp dir is mounted, and a `pre_exec` hook applies the ruleset before the
/// program starts. Children of that process inherit the restriction; there is
/// no way out of a Landlock domain.
///
/// For a `tokio::process::Command`, pass `cmd.as_std_mut()`.
///
/// The hook owns a duplicate of the ruleset fd, so `cmd` stays usable after
/// `prepared` is dropped. If the hook fails, `spawn` returns that error and
/// nothing runs unconfined.
///
/// Processes confined this way are no session's: a `.git` made after they
/// started stays writable to them (see [`super::SandboxSession::install`]).
pub fn install(cmd: &mut Command, prepared: &PreparedSandbox) -> io::Result<()> {
    install_announcing(cmd, prepared, None, Vec::new())
}

/// [`install`], and the child joins its session's cgroup (`cgroup_procs`,
/// see [`super::cgroup`]) first thing, and announces itself to its
/// session's guard ([`super::guard`]) once in its namespaces. `announce` is
/// taken before the walk for protected entries, which planning the
/// namespace makes.
pub(crate) fn install_announcing(
    cmd: &mut Command,
    prepared: &PreparedSandbox,
    announce: Option<Announce>,
    cgroup_procs: Vec<OwnedFd>,
) -> io::Result<()> {
    // try_clone dups with F_DUPFD_CLOEXEC: the fd is closed when the child
    // execs, so the confined program never sees it.
    let ruleset = prepared.ruleset_owned()?;
    let filter = prepared.filter().cloned();
    let namespace = prepared.plan_namespace()?;
    // The private temp dir is mounted there (see `super::namespace`).
    for var in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(var, "/tmp");
    }
    // SAFETY: the closure runs in the child after fork. It only reads an
    // fd and a filter program it owns and calls restrict_self, which makes
    // raw syscalls without allocating or locking, so it is async-signal-safe.
    let cgroup: Vec<RawFd> = cgroup_procs.iter().map(AsRawFd::as_raw_fd).collect();
    unsafe {
        cmd.pre_exec(move || {
            // Owned here, so the fds stay open as long as the command.
            let _owned = &cgroup_procs;
            restrict_self(
                ruleset.as_raw_fd(),
                filter.as_ref(),
                &namespace,
                announce.as_ref(),
                &cgroup,
            )
        });
    }
    Ok(())
}

/// Lets go of every terminal ([`super::terminal`]), enters the private
/// mount, IPC and PID namespaces (private `/tmp`, read-only tree
/// outside the writable roots, read-only protected folders:
/// [`super::namespace`]), drops every capability ([`super::caps`]), then
/// `prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self(ruleset, 0)` and the
/// seccomp filter of [`super::seccomp`] (where this CPU has one).
///
/// The namespace comes first (mounting needs `CAP_SYS_ADMIN`), capabilities
/// next (dropping the bounding set needs `CAP_SETPCAP`).
/// No-new-privs is required for an unprivileged process to restrict itself,
/// and it also stops a setuid binary from escaping the sandbox.
/// `io::Error::last_os_error` only reads errno and stores an integer.
pub(crate) fn restrict_self(
    ruleset: RawFd,
    filter: Option<&Filter>,
    namespace: &Namespace,
    announce: Option<&Announce>,
    cgroup_procs: &[RawFd],
) -> io::Result<()> {
    // First, so everything this process starts is counted with it.
    cgroup::join(cgroup_procs)?;
    terminal::detach()?;
    namespace.enter()?;
    // The spawned process, in its namespaces (and the future reaper, which
    // lives as long as the program), tells its session's guard.
    if let Some(announce) = announce {
        announce.send()?;
    }
    // From here on this is init (pid 1) of the new PID namespace; the
    // spawned process stays outside as its reaper.
    let init = pid_namespace::enter(namespace.pid_max())?;
    caps::drop_all()?;
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    let nnp = unsafe {
        libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if nnp != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: landlock_restrict_self takes an fd and a flags integer; a bad fd
    // is reported as EBADF, not undefined behaviour.
    let restricted =
        unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as libc::c_uint) };
    if restricted != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some(filter) = filter {
        filter.install()?;
    }
    // Only the program returns (to exec), confined like init.
    init.run_program()
}

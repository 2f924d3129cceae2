//! The size cap of the private `/tmp` for a workbench that is not root.
//!
//! Root mounts the capped `tmpfs` on the session's temp dir in its own
//! mount namespace ([`super::PrivateTmp::cap`]). Another user cannot: a
//! `tmpfs` needs a mount namespace of one's own, and the workbench, being
//! multi-threaded, may not enter one. A `tmpfs` per spawn would split
//! `/tmp` between the kernel and the `shell.run` commands the host starts
//! for it. So a small **keeper** process, forked once per session, enters a
//! user and mount namespace, mounts the capped `tmpfs` on the temp dir's
//! path there and waits; every spawn of the session joins the keeper's
//! user and mount namespace (`setns` through its pidfd) before making its
//! own from there, so all of them find that one `tmpfs` at the temp dir's
//! path and mount it over `/tmp` as usual. The host reaches the files
//! through `/proc/<keeper>/root` ([`TmpKeeper::view`]).
//!
//! The keeper ends when the session drops its end of a pipe, or when the
//! workbench dies (every copy of that end closes with it), and its `tmpfs`
//! goes with its namespace: nothing is left mounted anywhere.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::mounts::{self, check};

/// A running keeper.
#[derive(Debug)]
pub(crate) struct TmpKeeper {
    pid: libc::pid_t,
    pidfd: Arc<OwnedFd>,
    /// Dropped to end the keeper.
    lifetime: Option<OwnedFd>,
    view: PathBuf,
}

impl TmpKeeper {
    /// Forks a keeper holding a `tmpfs` of `size_mb` MiB at `dir` (an
    /// existing folder of this user) in a user and mount namespace of its
    /// own, once it is mounted.
    pub(crate) fn start(dir: &Path, size_mb: u64) -> io::Result<TmpKeeper> {
        let target = CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let options = CString::new(format!("size={size_mb}m,mode=0700"))
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let maps = super::namespace::IdMaps::current();
        let (lifetime_read, lifetime_write) = pipe()?;
        let (status_read, status_write) = pipe()?;
        // SAFETY: the child only makes raw syscalls until it exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let lifetime = lifetime_read.as_raw_fd();
            let status = status_write.as_raw_fd();
            let code = match keep(&target, &options, &maps, status) {
                Ok(()) => {
                    super::pid_namespace::close_all_except(&[lifetime]);
                    wait_for_eof(lifetime);
                    0
                }
                Err(error) => error.raw_os_error().unwrap_or(libc::EPERM),
            };
            // SAFETY: ends the keeper without running the host's destructors.
            unsafe { libc::_exit(code) };
        }
        drop((lifetime_read, status_write));
        let mut ready = [0u8; 1];
        // SAFETY: reads one byte into a live array.
        let read = unsafe { libc::read(status_read.as_raw_fd(), ready.as_mut_ptr().cast(), 1) };
        // SAFETY: pidfd_open takes integers; the keeper is our child.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let keeper = TmpKeeper {
            pid,
            pidfd: Arc::new(if pidfd < 0 {
                let error = io::Error::last_os_error();
                end(pid, lifetime_write);
                return Err(error);
            } else {
                // SAFETY: a new fd nothing else owns.
                unsafe { OwnedFd::from_raw_fd(pidfd as libc::c_int) }
            }),
            lifetime: Some(lifetime_write),
            view: PathBuf::from(format!("/proc/{pid}/root"))
                .join(dir.strip_prefix("/").unwrap_or(dir)),
        };
        if read != 1 {
            // It failed before mounting: its exit code says why.
            let mut keeper = keeper;
            let status = keeper.stop();
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                libc::EPERM
            };
            return Err(io::Error::from_raw_os_error(code));
        }
        Ok(keeper)
    }

    /// The keeper's pidfd, which spawns join through.
    pub(crate) fn pidfd(&self) -> Arc<OwnedFd> {
        self.pidfd.clone()
    }

    /// The temp dir as the keeper sees it (its `tmpfs`), reached from the
    /// host.
    pub(crate) fn view(&self) -> &Path {
        &self.view
    }

    /// Ends the keeper and returns its wait status.
    fn stop(&mut self) -> libc::c_int {
        drop(self.lifetime.take());
        wait(self.pid)
    }
}

impl Drop for TmpKeeper {
    fn drop(&mut self) {
        if self.lifetime.is_some() {
            self.stop();
        }
    }
}

/// The keeper's work before it waits: its namespaces, the `tmpfs`, and
/// one byte on `status` once mounted.
fn keep(
    target: &std::ffi::CStr,
    options: &std::ffi::CStr,
    maps: &super::namespace::IdMaps,
    status: libc::c_int,
) -> io::Result<()> {
    // SAFETY: unshare takes an integer; the fork has one thread.
    check(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) })?;
    maps.write_own()?;
    mounts::make_private()?;
    // SAFETY: mount reads C strings that outlive the call.
    check(unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    })?;
    // Its copy of the workbench's big mappings: it lives as long as the
    // session.
    // SAFETY: open reads a C string; the fd is closed below.
    let maps_fd = unsafe {
        libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if maps_fd >= 0 {
        super::host_memory::release(maps_fd);
        // SAFETY: closes the fd opened above.
        unsafe { libc::close(maps_fd) };
    }
    // SAFETY: writes one byte from a live array.
    unsafe { libc::write(status, [b'K'].as_ptr().cast(), 1) };
    Ok(())
}

/// Blocks until every write end of `fd` is closed.
fn wait_for_eof(fd: libc::c_int) {
    let mut byte = [0u8; 1];
    loop {
        // SAFETY: reads at most one byte into a live array.
        let read = unsafe { libc::read(fd, byte.as_mut_ptr().cast(), 1) };
        if read == 0
            || (read < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted)
        {
            return;
        }
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two new fds into the array.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both fds are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn end(pid: libc::pid_t, lifetime: OwnedFd) {
    drop(lifetime);
    wait(pid);
}

/// Waits for the child `pid` (retrying on signals); its wait status.
fn wait(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    // SAFETY: waits for our own child into a live integer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
    status
}

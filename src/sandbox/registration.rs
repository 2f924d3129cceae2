//! How each sandboxed spawn tells its session where it lives, so that a
//! `.git` appearing later can be made read-only in its mount namespace too
//! ([`super::guard`]).
//!
//! The session holds a `SOCK_SEQPACKET` socket pair. Between fork and exec,
//! once the spawned process has entered its namespaces (and before it forks
//! init), it sends one message on its end: a pidfd of itself (the reaper,
//! which lives exactly as long as the program, in the program's mount and
//! user namespaces) and the guard's generation as it was when the spawn's
//! walk for protected entries began. The session's thread receives it on
//! the other end. Done by the child, every spawner is covered without
//! having to report pids.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// One spawn's announcement, made in the child ([`Announce::send`]).
#[derive(Debug, Clone)]
pub(crate) struct Announce {
    socket: Arc<OwnedFd>,
    generation: u64,
}

/// A socket pair: the session's end and the one spawns write to.
pub(crate) fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair writes two new fds into the array.
    let made = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if made != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are new and owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Announce {
    pub(crate) fn new(socket: Arc<OwnedFd>, generation: u64) -> Self {
        Announce { socket, generation }
    }

    /// Sends a pidfd of the calling process and the generation. Failing
    /// fails the spawn: a process the session does not know of would stay
    /// writable to every repository made after it started.
    /// Async-signal-safe (raw syscalls on stack memory).
    pub(crate) fn send(&self) -> io::Result<()> {
        // SAFETY: getpid has no preconditions; pidfd_open takes integers.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
        if pidfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let pidfd = pidfd as libc::c_int;
        let mut payload = self.generation.to_ne_bytes();
        let mut iov = libc::iovec {
            iov_base: payload.as_mut_ptr().cast(),
            iov_len: payload.len(),
        };
        // Room for one fd's control message, aligned for cmsghdr.
        let mut control = [0u64; 4];
        // SAFETY: a zeroed msghdr is valid; the pointers set below point at
        // live stack memory of the sizes given; CMSG_* only compute
        // addresses within `control`, which CMSG_SPACE(4) fits.
        let sent = unsafe {
            let mut msg = std::mem::zeroed::<libc::msghdr>();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
            let header = libc::CMSG_FIRSTHDR(&msg);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), pidfd);
            libc::sendmsg(self.socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL)
        };
        let error = io::Error::last_os_error();
        // SAFETY: closes the pidfd made above; the session has its own copy.
        unsafe { libc::close(pidfd) };
        if sent != payload.len() as isize {
            return Err(error);
        }
        Ok(())
    }
}

/// The next announcement on the session's end: the spawn's pidfd and the
/// generation it planned at. `None` once the end is shut down.
pub(crate) fn receive(socket: &OwnedFd) -> io::Result<Option<(OwnedFd, u64)>> {
    loop {
        let mut payload = [0u8; 8];
        let mut iov = libc::iovec {
            iov_base: payload.as_mut_ptr().cast(),
            iov_len: payload.len(),
        };
        let mut control = [0u64; 4];
        // SAFETY: as in `send`; recvmsg writes within the buffers given.
        let (received, msg) = unsafe {
            let mut msg = std::mem::zeroed::<libc::msghdr>();
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control) as _;
            let received = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            (received, msg)
        };
        if received < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        if received == 0 {
            return Ok(None);
        }
        // SAFETY: `msg` was filled by recvmsg; CMSG_* walk `control` only.
        let pidfd = unsafe {
            let header = libc::CMSG_FIRSTHDR(&msg);
            (!header.is_null()
                && (*header).cmsg_level == libc::SOL_SOCKET
                && (*header).cmsg_type == libc::SCM_RIGHTS)
                .then(|| std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>()))
        };
        let Some(pidfd) = pidfd.filter(|&fd| fd >= 0) else {
            continue;
        };
        // SAFETY: SCM_RIGHTS gave this process a new fd.
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        if received as usize == payload.len() {
            return Ok(Some((pidfd, u64::from_ne_bytes(payload))));
        }
    }
}

//! Root keeps no powers in the sandbox: the confined child drops every
//! capability before it execs.
//!
//! Landlock confines paths, not privileges. A root process keeps
//! `CAP_MKNOD` (make a block device, then write raw disk blocks),
//! `CAP_CHOWN`/`CAP_FOWNER` (change owners and modes anywhere),
//! `CAP_SYS_PTRACE` (read other processes' memory and environment),
//! `CAP_NET_*`, `CAP_SYS_ADMIN` and the rest. So the child empties its
//! bounding set (which is what an `exec` as uid 0 would otherwise refill the
//! permitted set from), its ambient set, and its effective, permitted and
//! inheritable sets. What remains is uid 0 as an ordinary owner: it may
//! still write files it owns, where Landlock allows.
//!
//! Every function here is async-signal-safe: raw syscalls, no allocation.

use std::io;

/// The kernel's `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// The kernel's `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit sets as two 32-bit halves.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Highest capability number the loop tries; the kernel answers `EINVAL`
/// past its own last one.
const MAX_CAP: libc::c_ulong = 63;

/// Drops every capability of the calling thread, for good.
///
/// Fails (so the spawn fails and nothing runs) when a capability stays in
/// the bounding set while the process runs as uid 0, i.e. when root would
/// get it back at `exec`. An unprivileged process cannot drop its bounding
/// set (`EPERM`) and does not need to: with no-new-privs, `exec` grants it
/// nothing from there.
pub(crate) fn drop_all() -> io::Result<()> {
    for cap in 0..=MAX_CAP {
        // SAFETY: PR_CAPBSET_DROP takes integer arguments only.
        let dropped = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if dropped != 0 {
            match io::Error::last_os_error().raw_os_error() {
                Some(libc::EINVAL) => break,
                Some(libc::EPERM) => {}
                _ => return Err(io::Error::last_os_error()),
            }
        }
    }
    // SAFETY: integer arguments only. Fails with EINVAL on kernels before
    // 4.3, which have no ambient set to clear.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a header and two data structs laid out as the
    // kernel's (repr(C), version 3), both alive for the call.
    let set = unsafe {
        libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        )
    };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && any_left_in_bounding_set() {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(())
}

fn any_left_in_bounding_set() -> bool {
    (0..=MAX_CAP).any(|cap| {
        // SAFETY: PR_CAPBSET_READ takes integer arguments only; it returns
        // 1 when held, 0 when not, -1 (EINVAL) past the last capability.
        unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) == 1 }
    })
}

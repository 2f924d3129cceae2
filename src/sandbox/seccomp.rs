//! The network half Landlock cannot do: a seccomp filter that refuses to
//! create any socket but a unix one.
//!
//! Landlock (ABI 4+) only confines TCP bind/connect. UDP stays open, and with
//! it DNS queries, which are enough to smuggle a workspace out. So when the
//! network is denied the child also gets this filter: `socket()` with any
//! family except `AF_UNIX` fails with `EACCES` (Python: `PermissionError`),
//! and `io_uring_setup` is refused because io_uring can create sockets
//! without the `socket` syscall. Unix sockets keep working: asyncio,
//! `multiprocessing` and `subprocess` rely on them.
//!
//! The program is a `static` array, so installing it in the forked child
//! allocates nothing: one `prctl` with a pointer into it.

use std::io;

/// Whether this build carries a filter for the CPU it runs on. Where it does
/// not, only Landlock's TCP rules confine the network.
pub(crate) const SUPPORTED: bool = arch::AUDIT_ARCH.is_some();

/// Installs the filter on the calling thread (inherited by everything it
/// execs and forks). Requires no-new-privs to be set first. Async-signal-safe.
pub(crate) fn deny_network() -> io::Result<()> {
    if !SUPPORTED {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    let program = libc::sock_fprog {
        len: FILTER.len() as libc::c_ushort,
        filter: FILTER.as_ptr().cast_mut(),
    };
    // SAFETY: PR_SET_SECCOMP with SECCOMP_MODE_FILTER reads `program`, which
    // points at a static array that outlives the call; the kernel copies it.
    let installed = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &program as *const libc::sock_fprog as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if installed != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(all(target_arch = "x86_64", target_endian = "little"))]
mod arch {
    pub const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
}

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod arch {
    pub const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
}

#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
mod arch {
    pub const AUDIT_ARCH: Option<u32> = None;
}

// Offsets into `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
/// Low 32 bits of args[0] on a little-endian CPU: `socket`'s `int domain`.
const ARG0_OFFSET: u32 = 16;
/// x32 syscalls share x86_64's audit arch but set this bit in the number;
/// they would otherwise slip past the `socket` comparison.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const LOAD_WORD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JUMP_EQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JUMP_GE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const DENY: u32 = libc::SECCOMP_RET_ERRNO | (libc::EACCES as u32 & libc::SECCOMP_RET_DATA);
/// A syscall from a foreign ABI (e.g. 32-bit `int 0x80` on x86_64) has other
/// numbers; rather than filter those too, such a process is killed.
const KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

const fn op(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

/// `if A == k` (or `>=`) skip `jt` instructions, else skip `jf`.
const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

static FILTER: [libc::sock_filter; 13] = [
    op(LOAD_WORD, ARCH_OFFSET),
    jump(JUMP_EQ, arch_or_zero(), 1, 0),
    op(RETURN, KILL),
    op(LOAD_WORD, NR_OFFSET),
    jump(JUMP_GE, X32_SYSCALL_BIT, 0, 1),
    op(RETURN, DENY),
    jump(JUMP_EQ, libc::SYS_io_uring_setup as u32, 0, 1),
    op(RETURN, DENY),
    jump(JUMP_EQ, libc::SYS_socket as u32, 0, 3),
    op(LOAD_WORD, ARG0_OFFSET),
    jump(JUMP_EQ, libc::AF_UNIX as u32, 1, 0),
    op(RETURN, DENY),
    op(RETURN, ALLOW),
];

const fn arch_or_zero() -> u32 {
    match arch::AUDIT_ARCH {
        Some(arch) => arch,
        None => 0,
    }
}

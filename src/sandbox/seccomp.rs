//! What Landlock cannot do: a seccomp filter on the syscalls that lead out
//! of a sandbox whatever the filesystem rules say.
//!
//! Always (with or without network):
//! - `socket(AF_UNIX, …)` fails: a pathname unix socket is a door to
//!   whatever listens on it (the user's tmux server runs commands on request,
//!   a Docker socket starts containers), and Landlock cannot confine
//!   `connect` to one before ABI 9. `socketpair` stays allowed, so asyncio,
//!   `multiprocessing` pipes and `subprocess` keep working;
//! - device nodes cannot be made (`mknod` of a block or character device:
//!   a loop device would give raw access to files outside the workspace);
//!   FIFOs and plain files still can;
//! - `bpf`, `perf_event_open`, `ptrace`, `process_vm_readv`/`writev`,
//!   `keyctl`, `add_key`, `request_key`, `sethostname`, `setdomainname` and
//!   `io_uring_setup` (io_uring can make sockets without `socket`) fail;
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` fail whatever the fd: the first
//!   pushes bytes into a terminal's input queue (keystrokes the workbench or
//!   the user's shell would read as typed), the second can paste a virtual
//!   console's selection the same way. Confined processes hold no terminal
//!   (see [`super::child`]), but a kernel with `legacy_tiocsti = 1` lets any
//!   fd to a terminal do it, so the call itself is refused.
//!
//! When the network is denied, `socket` fails for every family (Landlock
//! ABI 4+ only confines TCP; UDP and so DNS tunnelling would stay open).
//!
//! Denials return `EACCES`/`EPERM`, so Python raises `PermissionError`.
//! A syscall from a foreign ABI (32-bit `int 0x80`, x32) would bypass the
//! numbers below, so such a process is killed or refused.
//!
//! The program is built in the parent; installing it in the forked child
//! allocates nothing: one `prctl` with a pointer into it.

use std::io;

/// Whether this build carries a filter for the CPU it runs on. Where it does
/// not, only Landlock confines the child (TCP only, no unix-socket rule).
pub(crate) const SUPPORTED: bool = arch::AUDIT_ARCH.is_some();

/// A compiled filter program, ready to install in a child.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    program: Vec<libc::sock_filter>,
}

impl Filter {
    /// The filter for a sandbox that allows the network or not.
    pub(crate) fn build(deny_network: bool) -> Filter {
        let mut program = vec![
            op(LOAD_WORD, ARCH_OFFSET),
            jump(JUMP_EQ, arch_or_zero(), 1, 0),
            op(RETURN, KILL),
            op(LOAD_WORD, NR_OFFSET),
            jump(JUMP_GE, X32_SYSCALL_BIT, 0, 1),
            op(RETURN, EACCES),
        ];
        for nr in DENIED {
            program.push(jump(JUMP_EQ, nr as u32, 0, 1));
            program.push(op(RETURN, EPERM));
        }
        // Socket: the last check that looks at the number, because the ones
        // below load an argument into the accumulator.
        if deny_network {
            program.push(jump(JUMP_EQ, libc::SYS_socket as u32, 0, 1));
            program.push(op(RETURN, EACCES));
        } else {
            program.push(jump(JUMP_EQ, libc::SYS_socket as u32, 0, 4));
            program.push(op(LOAD_WORD, arg_offset(0)));
            program.push(jump(JUMP_EQ, libc::AF_UNIX as u32, 0, 1));
            program.push(op(RETURN, EACCES));
            program.push(op(RETURN, ALLOW));
        }
        // ioctl: refuse the requests that type into a terminal. The kernel
        // reads the request as an `unsigned int`, so only its low word counts.
        program.push(jump(JUMP_EQ, libc::SYS_ioctl as u32, 0, 5));
        program.push(op(LOAD_WORD, arg_offset(1)));
        program.push(jump(JUMP_EQ, TIOCSTI, 1, 0));
        program.push(jump(JUMP_EQ, TIOCLINUX, 0, 1));
        program.push(op(RETURN, EPERM));
        program.push(op(RETURN, ALLOW));
        for (nr, mode_arg) in arch::MKNOD {
            program.push(jump(JUMP_EQ, nr as u32, 0, 6));
            program.push(op(LOAD_WORD, arg_offset(mode_arg)));
            program.push(op(AND, libc::S_IFMT));
            program.push(jump(JUMP_EQ, libc::S_IFCHR, 2, 0));
            program.push(jump(JUMP_EQ, libc::S_IFBLK, 1, 0));
            program.push(op(RETURN, ALLOW));
            program.push(op(RETURN, EPERM));
        }
        program.push(op(RETURN, ALLOW));
        Filter { program }
    }

    /// Installs the filter on the calling thread (inherited by everything it
    /// execs and forks). Requires no-new-privs to be set first.
    /// Async-signal-safe: reads the program, allocates nothing.
    pub(crate) fn install(&self) -> io::Result<()> {
        if !SUPPORTED {
            return Err(io::Error::from_raw_os_error(libc::ENOSYS));
        }
        let program = libc::sock_fprog {
            len: self.program.len() as libc::c_ushort,
            filter: self.program.as_ptr().cast_mut(),
        };
        // SAFETY: PR_SET_SECCOMP with SECCOMP_MODE_FILTER reads `program`,
        // which points into a Vec that outlives the call; the kernel copies it.
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
}

#[cfg(all(target_arch = "x86_64", target_endian = "little"))]
mod arch {
    pub(crate) const AUDIT_ARCH: Option<u32> = Some(0xC000_003E);
    /// Syscalls that make nodes, with the index of their `mode` argument.
    pub(crate) const MKNOD: [(libc::c_long, u32); 2] =
        [(libc::SYS_mknod, 1), (libc::SYS_mknodat, 2)];
}

#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod arch {
    pub(crate) const AUDIT_ARCH: Option<u32> = Some(0xC000_00B7);
    /// aarch64 has no `mknod`, only `mknodat`.
    pub(crate) const MKNOD: [(libc::c_long, u32); 1] = [(libc::SYS_mknodat, 2)];
}

#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
mod arch {
    pub(crate) const AUDIT_ARCH: Option<u32> = None;
    pub(crate) const MKNOD: [(libc::c_long, u32); 0] = [];
}

/// Refused outright (see the module docs for why each).
#[cfg(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
))]
const DENIED: [libc::c_long; 11] = [
    libc::SYS_io_uring_setup,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
];

#[cfg(not(any(
    all(target_arch = "x86_64", target_endian = "little"),
    all(target_arch = "aarch64", target_endian = "little")
)))]
const DENIED: [libc::c_long; 0] = [];

/// `ioctl` requests that inject input into a terminal.
const TIOCSTI: u32 = libc::TIOCSTI as u32;
const TIOCLINUX: u32 = libc::TIOCLINUX as u32;

// Offsets into `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;

/// Low 32 bits of `args[index]` on a little-endian CPU (the `int` arguments
/// this filter looks at: a socket's domain, a node's mode).
const fn arg_offset(index: u32) -> u32 {
    16 + 8 * index
}

/// x32 syscalls share x86_64's audit arch but set this bit in the number;
/// they would otherwise slip past every comparison.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const LOAD_WORD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const AND: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
const JUMP_EQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JUMP_GE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const RETURN: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const EACCES: u32 = libc::SECCOMP_RET_ERRNO | (libc::EACCES as u32 & libc::SECCOMP_RET_DATA);
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA);
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

const fn arch_or_zero() -> u32 {
    match arch::AUDIT_ARCH {
        Some(arch) => arch,
        None => 0,
    }
}

//! No confined process holds a terminal.
//!
//! A terminal is a way out of any sandbox: bytes pushed into its input
//! queue (`TIOCSTI`) are read by the workbench or the user's shell as if
//! typed, and escape sequences written to it set the clipboard (OSC 52),
//! the title, or draw fake text on the user's screen. So, before anything
//! else, the spawned process lets go of every terminal it inherited:
//!
//! - stdin, stdout and stderr that are terminals are pointed at
//!   `/dev/null` (spawners that want output pass pipes; `hello-tui
//!   sandbox` at a terminal relays through pipes of its own);
//! - every other fd the program would inherit is closed: a confined
//!   program starts with stdin, stdout and stderr only. Not only fds that
//!   are terminals: an `O_PATH` fd to one, or a folder fd to `/dev/pts`,
//!   is no terminal to `isatty` but opens one again through
//!   `/proc/self/fd/N` or `openat`;
//! - init starts a new session ([`super::pid_namespace`]), so the program
//!   has no controlling terminal and `/dev/tty` opens nothing.
//!
//! The rest is refused elsewhere: `ioctl(TIOCSTI|TIOCLINUX)` by seccomp,
//! writing or ioctls on terminal devices by Landlock, and the host's
//! `/dev/pts` is hidden by the mount namespace.
//!
//! Runs between fork and exec: raw syscalls on stack memory only.

use std::io;

/// Points terminal stdio at `/dev/null` and closes every other fd that
/// would survive `exec`. Async-signal-safe.
pub(crate) fn detach() -> io::Result<()> {
    let mut null = -1;
    for fd in 0..=2 {
        if !is_terminal(fd) {
            continue;
        }
        if null < 0 {
            // SAFETY: open reads a C string that outlives the call.
            null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
            if null < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        // SAFETY: dup2 between two fds this process holds.
        if unsafe { libc::dup2(null, fd) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    if null >= 0 {
        // SAFETY: closes the fd opened above.
        unsafe { libc::close(null) };
    }
    close_inherited()
}

/// Whether `fd` is open without close-on-exec.
fn survives_exec(fd: libc::c_int) -> bool {
    // SAFETY: F_GETFD reads an fd number's flags; -1 for a closed one.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    flags >= 0 && flags & libc::FD_CLOEXEC == 0
}

fn is_terminal(fd: libc::c_int) -> bool {
    // SAFETY: isatty reads an fd number; EBADF for a closed one.
    unsafe { libc::isatty(fd) == 1 }
}

/// Closes every fd above 2 that is not close-on-exec, found by listing
/// `/proc/self/fd` into a stack buffer (an fd may be inherited at any
/// number, and scanning up to the fd limit would cost a syscall per number).
/// Close-on-exec fds stay: the spawner's own (its exec-error pipe, the
/// ruleset) are needed until `exec`, which closes them.
fn close_inherited() -> io::Result<()> {
    // SAFETY: open reads a C string that outlives the call.
    let dir = unsafe {
        libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = [0u8; 4096];
    let result = loop {
        // SAFETY: getdents64 writes at most `buf.len()` bytes into `buf`.
        let read = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir,
                buf.as_mut_ptr(),
                buf.len() as libc::c_uint,
            )
        };
        let Ok(read) = usize::try_from(read) else {
            break Err(io::Error::last_os_error());
        };
        if read == 0 {
            break Ok(());
        }
        for fd in fd_numbers(&buf[..read.min(buf.len())]) {
            // Closing while listing is fine: the listing is of numbers,
            // and a closed number is simply not there on the next read.
            if fd > 2 && fd != dir && survives_exec(fd) {
                // SAFETY: closes an fd this process holds.
                unsafe { libc::close(fd) };
            }
        }
    };
    // SAFETY: closes the directory opened above.
    unsafe { libc::close(dir) };
    result
}

/// The fd numbers named by the `linux_dirent64` records in `records`
/// (`d_ino: u64, d_off: i64, d_reclen: u16, d_type: u8, d_name[]`);
/// `.` and `..` are not numbers and are skipped.
fn fd_numbers(records: &[u8]) -> impl Iterator<Item = libc::c_int> + '_ {
    const NAME: usize = 19;
    let mut at = 0;
    std::iter::from_fn(move || {
        while at + NAME <= records.len() {
            let reclen = usize::from(u16::from_ne_bytes([records[at + 16], records[at + 17]]));
            if reclen == 0 {
                return None;
            }
            let end = (at + reclen).min(records.len());
            let name = &records[at + NAME..end];
            at += reclen;
            let digits = name.iter().take_while(|b| b.is_ascii_digit());
            let mut number: libc::c_int = 0;
            let mut any = false;
            for digit in digits {
                number = number
                    .saturating_mul(10)
                    .saturating_add(libc::c_int::from(digit - b'0'));
                any = true;
            }
            if any {
                return Some(number);
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::fd_numbers;

    fn record(name: &str) -> Vec<u8> {
        let reclen = (19 + name.len() + 1).next_multiple_of(8);
        let mut record = vec![0u8; reclen];
        record[16..18].copy_from_slice(&(reclen as u16).to_ne_bytes());
        record[19..19 + name.len()].copy_from_slice(name.as_bytes());
        record
    }

    #[test]
    fn the_numbers_of_a_listing_are_read_and_dots_skipped() {
        let listing: Vec<u8> = [".", "..", "0", "17", "1023"]
            .iter()
            .flat_map(|name| record(name))
            .collect();
        assert_eq!(fd_numbers(&listing).collect::<Vec<_>>(), [0, 17, 1023]);
    }
}

//! Giving back the workbench's memory that a long-lived fork holds.
//!
//! The PID namespace's reaper and init ([`super::pid_namespace`]) are forks
//! of the workbench that never exec, and they live as long as the program
//! (the kernel: the whole session). A fork shares the parent's pages only
//! until the parent writes them; from then on each page the workbench
//! changes costs a second copy, held by the fork. Measured: a host that
//! rewrote 200 MB after the spawn left 206 MB pinned by the reaper and init.
//!
//! So each drops (`MADV_DONTNEED`) the big private anonymous mappings it
//! inherited: malloc arenas, large allocations, other threads' stacks.
//! Neither touches them again: after fork they only make raw syscalls on
//! their stack. Kept, as they may be in use: the mapping holding the
//! current stack (with this thread's TLS), the brk heap (glibc may keep
//! the main thread's TLS there), anything file-backed or named, the
//! anonymous tail of a file mapping (`.bss`: statics) and mappings under
//! [`MIN_RELEASE`] (loader and TLS bookkeeping).
//!
//! Async-signal-safe: `/proc/self/maps` is read into a stack buffer and
//! parsed in place.

/// Smallest mapping given back.
const MIN_RELEASE: usize = 1 << 20;

/// Drops the large anonymous mappings of the calling process (see the
/// module docs), reading its map from `maps` (an open `/proc/<self>/maps`,
/// read from the start).
pub(crate) fn release(maps: libc::c_int) {
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    let mut buf = [0u8; 8192];
    let mut filled = 0;
    // Inside a line too long for the buffer: drop bytes up to its end.
    let mut skipping = false;
    let mut after_file = false;
    loop {
        // SAFETY: reads into the unfilled part of a live stack buffer.
        let read =
            unsafe { libc::read(maps, buf[filled..].as_mut_ptr().cast(), buf.len() - filled) };
        let Ok(read) = usize::try_from(read) else {
            return;
        };
        if read == 0 {
            return;
        }
        filled += read;
        let mut start = 0;
        while let Some(newline) = buf[start..filled].iter().position(|&b| b == b'\n') {
            if skipping {
                skipping = false;
            } else {
                after_file = consider(&buf[start..start + newline], here, after_file);
            }
            start += newline + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled == buf.len() {
            skipping = true;
            filled = 0;
        }
    }
}

/// Releases the mapping `line` describes when it is one to give back;
/// returns whether it is file-backed (the next anonymous one may be its
/// `.bss`).
fn consider(line: &[u8], here: usize, after_file: bool) -> bool {
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let (Some(range), Some(perms), Some(_offset), Some(_device), Some(inode)) = (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) else {
        return false;
    };
    let file_backed = inode != b"0";
    let named = fields.next().is_some();
    let Some((start, end)) = parse_range(range) else {
        return file_backed;
    };
    let release = perms == b"rw-p"
        && !file_backed
        && !named
        && !after_file
        && !(start..end).contains(&here)
        && end - start >= MIN_RELEASE;
    if release {
        // SAFETY: an anonymous private mapping this process does not use
        // (module docs); its pages read as zero afterwards.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    }
    file_backed
}

/// `start-end` in hex.
fn parse_range(range: &[u8]) -> Option<(usize, usize)> {
    let dash = range.iter().position(|&b| b == b'-')?;
    let hex = |digits: &[u8]| {
        digits.iter().try_fold(0usize, |n, &b| {
            let digit = (b as char).to_digit(16)?;
            n.checked_mul(16)?.checked_add(digit as usize)
        })
    };
    let start = hex(&range[..dash])?;
    let end = hex(&range[dash + 1..])?;
    (end > start).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_odd_ones_do_not() {
        assert_eq!(parse_range(b"7f00-7f10"), Some((0x7f00, 0x7f10)));
        assert_eq!(parse_range(b"7f10-7f00"), None);
        assert_eq!(parse_range(b"zz-7f00"), None);
        assert_eq!(parse_range(b"7f00"), None);
    }

    /// A forked child with a big buffer the parent then rewrites: the
    /// child gives its copy back, and what it keeps (its stack, statics)
    /// still works.
    #[test]
    fn a_fork_gives_back_the_parents_big_heap_and_keeps_its_stack() {
        let mut big = vec![1u8; 64 << 20];
        for i in (0..big.len()).step_by(4096) {
            big[i] = 2;
        }
        // SAFETY: the child only makes raw syscalls and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: opens our own map, read by `release`, then closed.
            let code = unsafe {
                let maps = libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY);
                release(maps);
                libc::close(maps);
                // The stack is intact, and the big buffer reads as zero.
                let alive = [7u8; 64];
                i32::from(alive.iter().all(|&b| b == 7) && big[4096] == 0)
            };
            // SAFETY: ends the child.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 1,
            "{status}"
        );
        assert_eq!(big[4096], 2, "the parent's copy is untouched");
    }
}

//! Handles a sandboxed process opened inside a repository before the guard
//! made it read-only for it ([`super::guard`]).
//!
//! A read-only bind changes what is reached by a path from then on, not
//! what was opened before: a folder fd or working directory inside the new
//! `.git` (taken in the moment between its creation and the bind, by a
//! process watching for it) still reaches the writable mount below, and
//! `openat(fd, "config", O_WRONLY)` through it still writes. Nothing can
//! take such a handle away short of ending the process, so the guard looks
//! for them after each bind and the session reports them.
//!
//! How: every process sharing the spawn's mount namespace (its
//! `/proc/<pid>/ns/mnt`) is looked at; a working directory or fd whose path
//! lies inside the entry but whose mount is not the entry's bind (`statx`'s
//! mount id, through the magic links of `/proc/<pid>`) was opened before.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, StatxFlags};

/// A sandboxed process holding something inside a protected entry from
/// before it was bound read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    /// The process's name and host pid, for the user (`python3 (pid 12)`).
    pub process: String,
    /// The entry it holds something inside.
    pub entry: PathBuf,
}

/// Handles held inside `entries` (just bound read-only in the mount
/// namespace of the process `pidfd` holds) from before the bind.
pub(crate) fn held_from_before(pidfd: &OwnedFd, entries: &[PathBuf]) -> Vec<Held> {
    let Some(pid) = pid_of(pidfd) else {
        return Vec::new();
    };
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let Ok(namespace) = std::fs::read_link(proc.join("ns/mnt")) else {
        return Vec::new();
    };
    // Each entry's bind, as the spawn sees it.
    let binds: Vec<(&PathBuf, u64)> = entries
        .iter()
        .filter_map(|entry| {
            let seen = proc.join("root").join(entry.strip_prefix("/").ok()?);
            Some((entry, mount_id(&seen, AtFlags::SYMLINK_NOFOLLOW)?))
        })
        .collect();
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for process in processes.flatten() {
        let dir = process.path();
        let numeric = process
            .file_name()
            .to_str()
            .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()));
        if !numeric || std::fs::read_link(dir.join("ns/mnt")).ok() != Some(namespace.clone()) {
            continue;
        }
        let mut handles = vec![dir.join("cwd")];
        if let Ok(fds) = std::fs::read_dir(dir.join("fd")) {
            handles.extend(fds.flatten().map(|fd| fd.path()));
        }
        let process = describe(&dir);
        for handle in handles {
            if let Some(entry) = from_before(&handle, &binds)
                && !held
                    .iter()
                    .any(|h: &Held| h.entry == *entry && h.process == process)
            {
                held.push(Held {
                    process: process.clone(),
                    entry: entry.clone(),
                });
            }
        }
    }
    held
}

/// The entry `handle` (a `/proc/<pid>` magic link) lies inside through a
/// mount other than its bind, if any.
fn from_before<'a>(handle: &Path, binds: &[(&'a PathBuf, u64)]) -> Option<&'a PathBuf> {
    let target = std::fs::read_link(handle).ok()?;
    let (entry, bind) = binds.iter().find(|(entry, _)| target.starts_with(entry))?;
    (mount_id(handle, AtFlags::empty())? != *bind).then_some(*entry)
}

/// The mount id of what `path` leads to (`statx`, Linux 5.8+).
fn mount_id(path: &Path, flags: AtFlags) -> Option<u64> {
    let stat = rustix::fs::statx(CWD, path, flags, StatxFlags::MNT_ID).ok()?;
    (stat.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(stat.stx_mnt_id)
}

/// The host pid of the process a pidfd holds (its `fdinfo`'s `Pid:`).
fn pid_of(pidfd: &OwnedFd) -> Option<u32> {
    let info =
        std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_fd().as_raw_fd())).ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse().ok())
        .filter(|&pid: &u32| pid > 0)
}

/// `name (pid N)` for the process at `/proc/<pid>`.
fn describe(dir: &Path) -> String {
    let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
    let pid = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{} (pid {pid})", name.trim())
}

//! A cgroup per sandbox session, so memory and processes are capped for
//! the session as a whole: the kernel's `RLIMIT_AS` caps one process's
//! address space, but not the children its cells start, nor the pages of a
//! `memfd` or a `tmpfs` it fills, and the PID namespace's `pid_max` caps
//! each spawn on its own (and only on Linux 6.14+).
//!
//! Where the workbench may make one (root, with the `memory` and `pids`
//! controllers mounted, cgroup v1 or v2), the session makes a cgroup of its
//! own below the workbench's, sets `memory.max` (v1:
//! `memory.limit_in_bytes`, swap included where it can) and `pids.max`,
//! and every spawn joins it first thing in the child (writing `0` to the
//! `cgroup.procs` the parent opened), so all it starts stays in it. Past
//! the memory cap the kernel's OOM killer ends a process of the session,
//! not one of the user's. The cgroup is removed when the session ends.
//! Where it cannot be made, the session says why in its limitations, and
//! only the per-process limits apply.

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What the session's cgroup caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Bytes of memory for all the session's processes together.
    pub memory_bytes: Option<u64>,
    /// Processes alive at once, all spawns of the session together.
    pub max_processes: u32,
}

/// The session's cgroup (one folder per hierarchy holding a controller),
/// removed on drop.
#[derive(Debug)]
pub(crate) struct SessionCgroup {
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each folder, for spawns to join.
    procs: Vec<OwnedFd>,
}

/// How long a drop's thread waits for the session's last processes to go
/// before it gives up removing the cgroup (the kernel's children are
/// killed as the session ends, but may take a moment).
const REMOVE_FOR: Duration = Duration::from_secs(10);

impl SessionCgroup {
    /// Makes the cgroup with `limits`, or says why it cannot.
    pub(crate) fn create(limits: Limits) -> Result<SessionCgroup, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("making a cgroup needs root here".to_owned());
        }
        let cgroups = std::fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("/proc/self/mountinfo: {e}"))?;
        let name = unique_name();
        let mut made = SessionCgroup {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for controller in ["memory", "pids"] {
            let Some(hierarchy) = hierarchy_of(controller, &cgroups, &mounts) else {
                return Err(format!("no {controller} controller is mounted"));
            };
            let dir = hierarchy.dir.join(&name);
            if !made.dirs.contains(&dir) {
                remove_stale(&hierarchy.dir);
                std::fs::create_dir(&dir)
                    .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
                made.dirs.push(dir.clone());
                made.procs.push(open_procs(&dir)?);
            }
            if controller == "pids" {
                write(&dir.join("pids.max"), &limits.max_processes.to_string())?;
            } else if let Some(bytes) = limits.memory_bytes {
                set_memory(&dir, bytes, hierarchy.v2)?;
            }
        }
        Ok(made)
    }

    /// Copies of the `cgroup.procs` fds, for a spawn to write to first
    /// thing in the child ([`join`]); owned, so a spawn made after the
    /// session ended writes to no other file.
    pub(crate) fn procs(&self) -> io::Result<Vec<OwnedFd>> {
        self.procs.iter().map(OwnedFd::try_clone).collect()
    }
}

impl Drop for SessionCgroup {
    /// Removes the cgroup once its last processes are gone: at once when
    /// they are (or within [`REMOVE_AT_ONCE`], as the last ones of a
    /// namespace finish dying), else from a thread that tries for
    /// [`REMOVE_FOR`]. One left behind (the workbench killed, or exiting
    /// first) is removed by the next session that finds it empty.
    fn drop(&mut self) {
        let mut left = std::mem::take(&mut self.dirs);
        let at_once = std::time::Instant::now() + REMOVE_AT_ONCE;
        if remove_until(&mut left, at_once) {
            return;
        }
        let remove = move || {
            if !remove_until(&mut left, std::time::Instant::now() + REMOVE_FOR) {
                for dir in left {
                    tracing::warn!("sandbox: could not remove the cgroup {}", dir.display());
                }
            }
        };
        if std::thread::Builder::new()
            .name("sandbox-cgroup".into())
            .spawn(remove)
            .is_err()
        {
            tracing::warn!("sandbox: could not start removing the session's cgroup");
        }
    }
}

/// How long a drop waits on the caller's thread for the cgroup to empty.
const REMOVE_AT_ONCE: Duration = Duration::from_millis(200);

/// Removes the folders of `left` (and drops them from it) until none is
/// left (true) or `until` passed (false).
fn remove_until(left: &mut Vec<PathBuf>, until: std::time::Instant) -> bool {
    loop {
        left.retain(|dir| std::fs::remove_dir(dir).is_err() && dir.exists());
        if left.is_empty() {
            return true;
        }
        if std::time::Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes the cgroups sessions of workbenches no longer running left in
/// `parent` (`hello-tui-<pid>-<n>` with no process `<pid>`). Only an empty
/// cgroup can be removed, so one still in use stays.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("hello-tui-"))
            .and_then(|rest| rest.split_once('-'))
            .map(|(pid, _)| pid)
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Moves the calling process into each cgroup of `procs` (the fds of
/// [`SessionCgroup::procs`]). Async-signal-safe.
pub(crate) fn join(procs: &[RawFd]) -> io::Result<()> {
    for &fd in procs {
        // SAFETY: writes one byte from a static string to a live fd.
        if unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) } != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Where a controller's hierarchy holds this process's cgroup.
struct Hierarchy {
    dir: PathBuf,
    v2: bool,
}

/// The folder of this process's cgroup in the hierarchy holding
/// `controller` (v1: a hierarchy of its own; else the v2 one, when the
/// controller is enabled for children there).
fn hierarchy_of(controller: &str, cgroups: &str, mounts: &str) -> Option<Hierarchy> {
    // Lines of /proc/self/cgroup: `ID:CONTROLLERS:PATH` (v2: `0::PATH`).
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.split(',').any(|c| c == controller) {
            let dir = mount_dir(
                mounts,
                |fs, options| fs == "cgroup" && options.split(',').any(|o| o == controller),
                path,
            )?;
            return Some(Hierarchy { dir, v2: false });
        }
    }
    let path = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let dir = mount_dir(mounts, |fs, _| fs == "cgroup2", path)?;
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    enabled
        .split_whitespace()
        .any(|c| c == controller)
        .then_some(Hierarchy { dir, v2: true })
}

/// `path` (a cgroup path) inside the mount `matches` picks from
/// `/proc/self/mountinfo`: `ID PARENT DEV ROOT MOUNTPOINT ... - FS SOURCE
/// OPTIONS`; a mount of a sub-hierarchy (`ROOT` not `/`) holds paths below
/// its root.
fn mount_dir(mounts: &str, matches: impl Fn(&str, &str) -> bool, path: &str) -> Option<PathBuf> {
    mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split(' ');
        let (fs, _, options) = (after.next()?, after.next()?, after.next()?);
        if !matches(fs, options) {
            return None;
        }
        let fields: Vec<&str> = before.split(' ').collect();
        let (root, mount_point) = (fields.get(3)?, fields.get(4)?);
        let below = Path::new(path).strip_prefix(root).ok()?;
        Some(Path::new(mount_point).join(below))
    })
}

fn set_memory(dir: &Path, bytes: u64, v2: bool) -> Result<(), String> {
    let bytes = bytes.to_string();
    if v2 {
        write(&dir.join("memory.max"), &bytes)?;
        // Not into swap either, where the machine has it.
        let _ = write(&dir.join("memory.swap.max"), "0");
    } else {
        write(&dir.join("memory.limit_in_bytes"), &bytes)?;
        let _ = write(&dir.join("memory.memsw.limit_in_bytes"), &bytes);
    }
    Ok(())
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn open_procs(dir: &Path) -> Result<OwnedFd, String> {
    let path = dir.join("cgroup.procs");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map(OwnedFd::from)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// A name no other session (of this or another workbench) uses.
fn unique_name() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "hello-tui-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory
31 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids
32 25 0:28 / /sys/fs/cgroup/unified rw,relatime shared:14 - cgroup2 cgroup2 rw
";

    /// v1: each controller in its hierarchy, at this process's path there.
    #[test]
    fn a_v1_controller_is_found_at_this_processs_path_in_its_hierarchy() {
        let cgroups = "8:pids:/\n4:memory:/jobs/abc\n0::/\n";
        let memory = hierarchy_of("memory", cgroups, MOUNTS).unwrap();
        assert_eq!(memory.dir, Path::new("/sys/fs/cgroup/memory/jobs/abc"));
        assert!(!memory.v2);
        let pids = hierarchy_of("pids", cgroups, MOUNTS).unwrap();
        assert_eq!(pids.dir, Path::new("/sys/fs/cgroup/pids"));
    }

    /// A mount of a sub-hierarchy (a container's) holds paths below its
    /// root; a controller mounted nowhere is not found.
    #[test]
    fn a_mount_of_a_sub_hierarchy_and_a_missing_controller() {
        let mounts = "40 25 0:26 /jobs /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
        let dir = mount_dir(
            mounts,
            |fs, options| fs == "cgroup" && options.contains("memory"),
            "/jobs/abc",
        );
        assert_eq!(dir.unwrap(), Path::new("/sys/fs/cgroup/memory/abc"));
        assert!(hierarchy_of("cpu", "4:memory:/\n", mounts).is_none());
    }
}

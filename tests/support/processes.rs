//! Finding host processes by their command line, for tests that check what
//! a confined command left running (from the host, where the sandbox's PID
//! namespace does not hide them).

use std::time::Duration;

/// Host processes whose command line holds `needle`.
pub fn host_processes_with(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(needle))
        })
        .collect()
}

/// The processes matching `needle` once there are any (up to 5 s). A
/// program's `Popen` returns as soon as its child's exec closed the
/// close-on-exec pipe, which the kernel does before it sets up the new
/// command line, so for a moment `/proc/PID/cmdline` is still empty: a
/// busy machine widens that moment.
#[allow(
    dead_code,
    reason = "tests/safety.rs uses it; tests/sandbox.rs includes this module too"
)]
pub fn started(needle: &str) -> Vec<i32> {
    for _ in 0..250 {
        let found = host_processes_with(needle);
        if !found.is_empty() {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Vec::new()
}

/// Waits up to 2 s for every process matching `needle` to go; returns
/// those still there, after killing them (so a failing test leaves nothing
/// behind).
pub fn survivors(needle: &str) -> Vec<i32> {
    for _ in 0..100 {
        if host_processes_with(needle).is_empty() {
            return Vec::new();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = host_processes_with(needle);
    for pid in &left {
        // SAFETY: kill(2) of a leftover the test started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    left
}

/// The command line `sleep 300 <marker>` has in `/proc` (GNU sleep adds
/// its arguments up, so a unique fraction finds it without changing much).
pub fn sleep_needle(marker: &str) -> String {
    format!("sleep\u{0}300\u{0}{marker}")
}

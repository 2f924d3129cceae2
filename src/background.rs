//! Background work yields the CPU to the keyboard. On a two-core machine a
//! highlight pass, a 40 MB recovery write, a workspace index or a language
//! server re-linting a huge file can hold both cores when a key arrives,
//! and the key's frame waits its turn (echo spikes of 10–16 ms, issue 30).
//! Such threads and child processes run at a lower priority (`nice` 10):
//! they still get every cycle the UI thread leaves idle, but a key is drawn
//! first. Linux only; elsewhere nothing changes.

/// How much lower: `nice` 10, as `nice(1)` does by default.
const NICENESS: i32 = 10;

/// Lowers the calling thread's priority (on Linux a thread's `nice` is its
/// own). Call first thing in a background thread. Failing is harmless: the
/// work runs at the normal priority.
pub(crate) fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread's own id; no memory is
    // passed.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICENESS);
    }
}

/// Makes `command`'s child (a language server, a check) run at the lower
/// priority, and everything it starts too (a child inherits its `nice`).
pub(crate) fn lower_child(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: the hook runs in the forked child before exec and makes one
    // async-signal-safe syscall (`setpriority`), allocating nothing.
    unsafe {
        command.pre_exec(|| {
            libc::setpriority(libc::PRIO_PROCESS, 0, NICENESS);
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice_of_this_thread() -> i32 {
        // SAFETY: plain syscalls; errno is cleared first because -1 is
        // also a valid nice value.
        unsafe {
            *libc::__errno_location() = 0;
            libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
        }
    }

    #[test]
    fn a_background_thread_runs_below_the_ui_thread() {
        let ui = nice_of_this_thread();
        let background = std::thread::spawn(|| {
            lower_this_thread();
            nice_of_this_thread()
        })
        .join()
        .unwrap();
        assert_eq!(background, (ui + NICENESS).min(19));
        assert_eq!(
            nice_of_this_thread(),
            ui,
            "the caller's thread is untouched"
        );
    }

    #[tokio::test]
    async fn a_child_and_what_it_starts_run_below_the_ui() {
        let mut command = tokio::process::Command::new("sh");
        command.args(["-c", "sh -c 'cut -d\" \" -f19 /proc/$$/stat'"]);
        lower_child(&mut command);
        let out = command.output().await.unwrap();
        let grandchild_nice: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(grandchild_nice, (nice_of_this_thread() + NICENESS).min(19));
    }
}

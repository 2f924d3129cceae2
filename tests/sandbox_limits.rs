//! Limits on what a sandbox session may use: the size of its private
//! `/tmp`, shared by every process of the session. Real processes writing
//! real bytes; the cap needs root (as CI runs), so as another user the
//! tests check that the session says there is no cap.

#[path = "support/confined.rs"]
mod confined;
#[path = "support/scratch.rs"]
mod scratch;

use std::process::{Command, Output, Stdio};

use hello_tui::sandbox::{SandboxOptions, SandboxSession};

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Python that writes `argv[2]` MiB to `argv[1]` and prints `ok` or the
/// errno's name.
const WRITE_MIB: &str = "import errno, sys\n\
try:\n    f = open(sys.argv[1], 'wb')\n    for _ in range(int(sys.argv[2])): f.write(b'x' * (1 << 20))\n    f.close()\n    print('ok')\n\
except OSError as e:\n    print(errno.errorcode[e.errno])\n";

use confined::{Fixture, available};

fn session(fixture: &Fixture, tmp_size_mb: u64) -> SandboxSession {
    let options = SandboxOptions {
        tmp_size_mb,
        ..SandboxOptions::default()
    };
    SandboxSession::start(&fixture.workspace, false, options).unwrap()
}

fn write_mib(session: &SandboxSession, fixture: &Fixture, path: &str, mib: u32) -> String {
    let mut cmd = Command::new("python3");
    cmd.args(["-c", WRITE_MIB, path, &mib.to_string()])
        .current_dir(&fixture.workspace)
        .stdin(Stdio::null());
    session.install(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Issue 25, "a size cap on the private `/tmp`": a cell filling `/tmp`
/// stops at the cap with `ENOSPC` instead of filling the host's disk or
/// memory, and the workspace is not capped by it.
#[test]
fn writing_past_the_private_tmps_cap_fails_with_enospc() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture, 8);
    if !root() {
        let notes = session.limitations().join("\n");
        assert!(notes.contains("no size cap"), "{notes}");
        return;
    }
    assert_eq!(write_mib(&session, &fixture, "/tmp/small", 4), "ok");
    assert_eq!(write_mib(&session, &fixture, "/tmp/big", 16), "ENOSPC");
    assert_eq!(write_mib(&session, &fixture, "big-in-workspace", 16), "ok");
    // The host still finds the session's temp files where it always did.
    assert_eq!(
        std::fs::metadata(session.private_tmp().join("small"))
            .unwrap()
            .len(),
        4 << 20
    );
    assert!(
        session
            .limitations()
            .iter()
            .all(|n| !n.contains("size cap"))
    );
}

/// The cap is the session's, not each spawn's: the kernel and the
/// `shell.run` commands the host starts for it (each in a namespace of its
/// own) share one `/tmp`, files and budget alike.
#[test]
fn every_spawn_of_a_session_shares_one_capped_tmp() {
    if !available() || !root() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture, 8);
    assert_eq!(write_mib(&session, &fixture, "/tmp/first", 5), "ok");
    assert_eq!(write_mib(&session, &fixture, "/tmp/second", 5), "ENOSPC");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "wc -c < /tmp/first"])
        .current_dir(&fixture.workspace);
    session.install(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5242880");
}

/// Dropping the session unmounts the cap and removes the dir: nothing of
/// it is left on the host.
#[test]
fn the_cap_goes_with_the_session() {
    if !available() || !root() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture, 8);
    assert_eq!(write_mib(&session, &fixture, "/tmp/x", 1), "ok");
    let path = session.private_tmp().to_path_buf();
    let mounts = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(mounts().contains(path.to_str().unwrap()));
    drop(session);
    assert!(!path.exists());
    assert!(!mounts().contains(path.to_str().unwrap()));
}

fn cli(args: &[&str], fixture: &Fixture) -> Output {
    const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");
    Command::new(BIN)
        .arg("sandbox")
        .arg("-C")
        .arg(&fixture.workspace)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `hello-tui sandbox` caps `/tmp` by default (1024 MiB, what the kernel
/// gets too unless `[safety] tmp_size_mb` says otherwise), and
/// `--tmp-size-mb` sets it.
#[test]
fn the_sandbox_command_caps_tmp_by_default_and_takes_a_size() {
    if !available() || !root() {
        return;
    }
    let fixture = Fixture::new();
    let size = "import os; s = os.statvfs('/tmp'); print(s.f_blocks * s.f_frsize >> 20)";
    let out = cli(&["--", "python3", "-c", size], &fixture);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1024",
        "{out:?}"
    );
    let out = cli(
        &[
            "--tmp-size-mb",
            "4",
            "--",
            "python3",
            "-c",
            WRITE_MIB,
            "/tmp/f",
            "8",
        ],
        &fixture,
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ENOSPC",
        "{out:?}"
    );
    let out = cli(
        &["--tmp-size-mb", "0", "--", "python3", "-c", size],
        &fixture,
    );
    assert_ne!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "1024",
        "{out:?}"
    );
}

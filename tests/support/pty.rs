//! A pseudo-terminal of the test's own, made the controlling terminal of a
//! process under test: what a confined program types into it (TIOCSTI)
//! waits in its input queue, and what it draws is read from the master.

// Each test binary that includes this uses a different part of it.
#![allow(dead_code)]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

pub struct Pty {
    master: OwnedFd,
    slave: OwnedFd,
}

impl Pty {
    /// A fresh pty in raw mode, so every byte pushed into its input queue
    /// counts (canonical mode would count whole lines only).
    pub fn open() -> Pty {
        let (mut master, mut slave) = (-1, -1);
        // SAFETY: openpty writes two fds; null name, termios and winsize
        // are allowed.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: openpty returned two new fds that nothing else owns.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        // SAFETY: termios calls on a live fd and a zeroed struct.
        unsafe {
            let mut mode = std::mem::zeroed::<libc::termios>();
            assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut mode), 0);
            libc::cfmakeraw(&mut mode);
            assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &mode), 0);
            let flags = libc::fcntl(master.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Pty { master, slave }
    }

    /// Runs `cmd` as a user at this terminal would: in a session of its
    /// own whose controlling terminal is the pty, stdout and stderr on it.
    /// Stdin is `/dev/null`, so nothing of ours reads the input queue.
    pub fn control(&self, cmd: &mut Command) {
        let slave = self.slave.as_raw_fd();
        cmd.stdin(Stdio::null())
            .stdout(self.slave_stdio())
            .stderr(self.slave_stdio());
        // SAFETY: setsid and ioctl are async-signal-safe raw syscalls.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(slave, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// The terminal's side, for a test that passes it on by hand.
    pub fn slave_fd(&self) -> std::os::fd::RawFd {
        self.slave.as_raw_fd()
    }

    /// The terminal's path (`/dev/pts/N`).
    pub fn slave_name(&self) -> String {
        std::fs::read_link(format!("/proc/self/fd/{}", self.slave.as_raw_fd()))
            .expect("the pty's name")
            .display()
            .to_string()
    }

    /// The terminal's side as a child's stdio.
    pub fn slave_stdio(&self) -> Stdio {
        Stdio::from(self.slave.try_clone().expect("dup slave"))
    }

    /// Bytes waiting in the terminal's input queue: what the next program
    /// reading it (the user's shell) would take as typed.
    pub fn pending_input(&self) -> usize {
        let mut count: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int.
        let done = unsafe { libc::ioctl(self.slave.as_raw_fd(), libc::FIONREAD, &mut count) };
        assert_eq!(done, 0, "FIONREAD: {}", std::io::Error::last_os_error());
        usize::try_from(count).unwrap_or(0)
    }

    /// Asserts that nothing waits in the input queue and no escape was
    /// drawn; returns what was drawn.
    pub fn assert_nothing_typed(&self) -> String {
        let drawn = String::from_utf8_lossy(&self.drawn()).into_owned();
        assert_eq!(
            self.pending_input(),
            0,
            "bytes were typed into the terminal: {drawn}"
        );
        assert!(
            !drawn.contains('\u{1b}'),
            "an escape reached the terminal: {drawn:?}"
        );
        drawn
    }

    /// What was drawn on the terminal so far.
    pub fn drawn(&self) -> Vec<u8> {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: reads into a live buffer of its length.
            let read =
                unsafe { libc::read(self.master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            let Ok(read) = usize::try_from(read) else {
                break;
            };
            if read == 0 {
                break;
            }
            all.extend_from_slice(&buf[..read]);
        }
        all
    }
}

/// Python that tries to type `touch PWNED` into every terminal it can
/// reach (its stdio, `/dev/tty`, every host pty) and to draw a title
/// and clipboard escape on them; prints what each try met.
pub const ATTACK: &str = r#"
import fcntl, os, termios
payload = b"touch PWNED\n"
report = []
targets = {"stdout": 1, "stderr": 2}
try:
    targets["/dev/tty"] = os.open("/dev/tty", os.O_RDWR)
except OSError as e:
    report.append("/dev/tty open: " + e.strerror)
for name in os.listdir("/dev/pts"):
    try:
        targets["/dev/pts/" + name] = os.open("/dev/pts/" + name, os.O_RDWR)
    except OSError as e:
        report.append("/dev/pts/%s open: %s" % (name, e.strerror))
for name, fd in targets.items():
    try:
        for byte in payload:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        report.append(name + " TIOCSTI: typed")
    except OSError as e:
        report.append(name + " TIOCSTI: " + e.strerror)
    try:
        os.write(fd, b"\x1b]2;PWNED-TITLE\x07\x1b]52;c;UFdORUQ=\x07")
    except OSError as e:
        report.append(name + " write: " + e.strerror)
try:
    fcntl.ioctl(0, 0x541C, b"\x06")
    report.append("TIOCLINUX: allowed")
except OSError as e:
    report.append("TIOCLINUX: " + e.strerror)
print("report:", report, "sid-is-pgid:", os.getsid(0) == os.getpgid(0))
"#;

/// Checks the attack's report: it ran, and every try was refused.
pub fn assert_refused(report: &str) {
    assert!(report.contains("report:"), "{report}");
    assert!(!report.contains("typed"), "{report}");
    assert!(
        report.contains("TIOCLINUX: Operation not permitted"),
        "{report}"
    );
}

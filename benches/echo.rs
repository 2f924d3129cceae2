//! Key echo through a real terminal, next to vim in the same run: the
//! release `hello-tui` and `vim -u NONE` each open the same 1 000 000-line
//! Python file at line 500 000 in a pseudo-terminal of 120x40; a key is
//! typed every 30 ms (200 keys), and the echo is the time from the key's
//! `write()` to the first output that carries the typed character. Twice
//! per program: "after opening" (typing starts as soon as line 500 000 is
//! on screen, while the highlighting pass and any server start) and
//! "quiet" (after 10 s). The programs alternate, three rounds each.
//!
//! Run: `cargo bench --bench echo` (vim on `PATH`);
//! `ECHO_BASELINE=/path/to/other/hello-tui cargo bench --bench echo` adds
//! that build to every round (a change's before and after, same run). The in-process
//! keystroke → frame numbers are `cargo bench --bench editor -- typing`;
//! this one adds what a user sees: the terminal, the event loop and the
//! frame pacing.

#[path = "support/python_file.rs"]
mod python_file;

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEYS: usize = 200;
const EVERY: Duration = Duration::from_millis(30);
const QUIET_AFTER: Duration = Duration::from_secs(10);
const LINE: usize = 500_000;
const ROUNDS: usize = 3;

/// The editor benches' file, with `compute` defined at the top.
fn python_source(lines: usize) -> String {
    format!(
        "def compute(x, factor):\n    return x * factor\n\n\n\n{}",
        python_file::python_source(lines.saturating_sub(5))
    )
}

/// Output as it arrived: when, and the bytes.
type Chunk = (Instant, Vec<u8>);

/// Each phase's echoes and the keys that showed none.
type Phases = [(Vec<Duration>, usize); 2];

/// A pseudo-terminal whose output is read by a thread that timestamps
/// each chunk.
struct Terminal {
    master: OwnedFd,
    slave: OwnedFd,
    chunks: Arc<Mutex<Vec<Chunk>>>,
}

impl Terminal {
    fn open() -> Terminal {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two fds; the winsize is read.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: two new fds nothing else owns.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let chunks = Arc::new(Mutex::new(Vec::new()));
        let reader = master.try_clone().expect("dup master");
        let answerer = master.try_clone().expect("dup master");
        let into = Arc::clone(&chunks);
        std::thread::spawn(move || {
            let mut file = std::fs::File::from(reader);
            let mut answers = std::fs::File::from(answerer);
            let mut buf = [0u8; 65536];
            while let Ok(n) = file.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                // Answered as a terminal does (xterm's primary device
                // attributes): hello-tui asks at start whether the
                // terminal knows the kitty keyboard protocol and waits for
                // one answer or the other.
                if chunk.windows(3).any(|w| w == b"\x1b[c") {
                    use std::io::Write;
                    let _ = answers.write_all(b"\x1b[?62;22c");
                }
                into.lock().unwrap().push((Instant::now(), chunk.to_vec()));
            }
        });
        Terminal {
            master,
            slave,
            chunks,
        }
    }

    /// Starts `cmd` with the terminal as its stdio and controlling tty.
    fn start(&self, mut cmd: Command) -> Child {
        let slave = self.slave.as_raw_fd();
        let stdio = || Stdio::from(self.slave.try_clone().expect("dup slave"));
        cmd.stdin(stdio()).stdout(stdio()).stderr(stdio());
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(slave, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.spawn().expect("start")
    }

    fn type_byte(&self, byte: u8) -> Instant {
        let at = Instant::now();
        // SAFETY: writes one byte from a live buffer.
        let wrote = unsafe { libc::write(self.master.as_raw_fd(), (&raw const byte).cast(), 1) };
        assert_eq!(wrote, 1);
        at
    }

    fn output_since(&self, from: usize) -> (usize, Vec<u8>) {
        let chunks = self.chunks.lock().unwrap();
        let bytes = chunks[from.min(chunks.len())..]
            .iter()
            .flat_map(|(_, b)| b.iter().copied())
            .collect();
        (chunks.len(), bytes)
    }

    /// Waits until the output holds `text` (the line number drawn).
    fn wait_for(&self, text: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut seen = Vec::new();
        let mut from = 0;
        while Instant::now() < deadline {
            let (next, bytes) = self.output_since(from);
            from = next;
            seen.extend(bytes);
            if seen.windows(text.len()).any(|w| w == text.as_bytes()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    /// Types `KEYS` keys `EVERY` apart; each key's echo is the first chunk
    /// after it that draws the typed letter (outside escape sequences),
    /// before the next key. The letters cycle: a line of one letter
    /// scrolled sideways by one more would look the same, and a view that
    /// shows nothing new sends no letter at all.
    fn type_keys(&self) -> (Vec<Duration>, usize) {
        let start = self.chunks.lock().unwrap().len();
        let mut sent = Vec::with_capacity(KEYS);
        let mut next = Instant::now();
        for i in 0..KEYS {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            sent.push((
                self.type_byte(LETTERS[i % LETTERS.len()]),
                LETTERS[i % LETTERS.len()],
            ));
            next += EVERY;
        }
        std::thread::sleep(Duration::from_millis(300));
        let chunks = self.chunks.lock().unwrap();
        let chunks = &chunks[start..];
        let mut echoes = Vec::new();
        let mut missed = 0;
        for (i, (at, letter)) in sent.iter().enumerate() {
            let until = sent.get(i + 1).map(|(t, _)| *t);
            let echo = chunks
                .iter()
                .filter(|(t, _)| t >= at && until.is_none_or(|u| *t < u))
                .find(|(_, bytes)| drawn_text(bytes).contains(letter));
            match echo {
                Some((t, _)) => echoes.push(*t - *at),
                None => missed += 1,
            }
        }
        (echoes, missed)
    }
}

/// Letters typed in turn; none is the final byte of an escape sequence
/// either program writes (those are stripped anyway).
const LETTERS: &[u8] = b"xyzwvpokjigbea";

/// The bytes of `chunk` outside CSI and OSC escape sequences: what is
/// drawn as text.
fn drawn_text(chunk: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(chunk.len());
    let mut i = 0;
    while i < chunk.len() {
        match (chunk[i], chunk.get(i + 1)) {
            (0x1b, Some(b'[')) => {
                i += 2;
                while i < chunk.len() && !(0x40..=0x7e).contains(&chunk[i]) {
                    i += 1;
                }
                i += 1;
            }
            (0x1b, Some(b']')) => {
                i += 2;
                while i < chunk.len() && chunk[i] != 0x07 && chunk[i] != 0x1b {
                    i += 1;
                }
                i += 1;
            }
            (0x1b, Some(_)) => i += 2,
            (byte, _) => {
                text.push(byte);
                i += 1;
            }
        }
    }
    text
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Program {
    HelloTui,
    /// Another build of hello-tui (`ECHO_BASELINE=/path/to/hello-tui`),
    /// measured in the same run: a change's before and after.
    Baseline,
    Vim,
}

impl Program {
    fn name(self) -> &'static str {
        match self {
            Program::HelloTui => "hello-tui",
            Program::Baseline => "hello-tui (baseline)",
            Program::Vim => "vim",
        }
    }

    fn command(self, file: &Path, home: &Path) -> Command {
        let mut cmd = match self {
            Program::HelloTui | Program::Baseline => {
                let binary = match self {
                    Program::Baseline => std::env::var_os("ECHO_BASELINE").unwrap_or_default(),
                    _ => env!("CARGO_BIN_EXE_hello-tui").into(),
                };
                let mut cmd = Command::new(binary);
                cmd.arg(format!("{}:{LINE}", file.display()))
                    .env("HELLO_TUI_CONFIG", home.join("config.toml"))
                    .env("HELLO_TUI_TRUST_FILE", home.join("trust.json"));
                cmd
            }
            Program::Vim => {
                let mut cmd = Command::new("vim");
                cmd.args([
                    "-u",
                    "NONE",
                    "-N",
                    "-n",
                    "-c",
                    "set number",
                    "-c",
                    "syntax on",
                ])
                .arg(format!("+{LINE}"))
                .arg(file);
                cmd
            }
        };
        cmd.current_dir(file.parent().unwrap_or(Path::new(".")))
            .env("TERM", "xterm-256color")
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home)
            .env("XDG_DATA_HOME", home)
            .env("XDG_STATE_HOME", home)
            .env("XDG_CACHE_HOME", home);
        cmd
    }
}

/// One program, opened fresh: the echoes right after opening and once
/// quiet, and how many keys showed no echo.
fn run(program: Program, file: &Path, home: &Path) -> Phases {
    let terminal = Terminal::open();
    // A home of its own: no recovery question from an earlier run.
    let home = tempfile::tempdir_in(home).expect("home");
    std::fs::write(home.path().join("config.toml"), "").expect("config");
    let mut child = terminal.start(program.command(file, home.path()));
    let opened = terminal.wait_for(&LINE.to_string(), Duration::from_secs(60));
    assert!(opened, "{} never drew line {LINE}", program.name());
    if program == Program::Vim {
        // Insert mode first; hello-tui's file view types at once.
        terminal.type_byte(b'i');
        std::thread::sleep(Duration::from_millis(50));
    }
    let after_open = terminal.type_keys();
    std::thread::sleep(QUIET_AFTER);
    let quiet = terminal.type_keys();
    // SAFETY: signals the process group the child leads (setsid).
    let group = i32::try_from(child.id()).unwrap_or(0);
    unsafe {
        libc::kill(group, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above; whatever is left of its group goes.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
    [after_open, quiet]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    if Command::new("vim").arg("--version").output().is_err() {
        eprintln!("vim is not on PATH: this bench compares with it");
        std::process::exit(1);
    }
    // Outside any repository: a file's workspace is its git repository,
    // and this one's would ask whether to trust it.
    let dir = tempfile::tempdir().expect("temp dir");
    let file: PathBuf = dir.path().join("huge.py");
    std::fs::write(&file, python_source(1_000_000)).expect("write the file");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let mut programs = vec![Program::HelloTui, Program::Vim];
    if std::env::var_os("ECHO_BASELINE").is_some() {
        programs.insert(1, Program::Baseline);
    }
    let mut all: Vec<(Program, Phases)> = Vec::new();
    for round in 1..=ROUNDS {
        for &program in &programs {
            // Each opens its own copy: vim's swap file and hello-tui's
            // recovery never meet the other's run.
            let own = dir
                .path()
                .join(format!("{}-{round}.py", program.name().replace(' ', "_")));
            std::fs::copy(&file, &own).expect("copy");
            let result = run(program, &own, &home);
            eprintln!(
                "round {round} {}: after opening p50 {:.2} ms, quiet p50 {:.2} ms",
                program.name(),
                ms(percentile(&sorted(&result[0].0), 0.5)),
                ms(percentile(&sorted(&result[1].0), 0.5)),
            );
            all.push((program, result));
        }
    }
    println!("| program | phase | keys echoed | p50 | p90 | p99 | max |");
    println!("|---|---|---|---|---|---|---|");
    let mut p50s = std::collections::HashMap::new();
    for &program in &programs {
        for (phase, name) in [(0, "after opening"), (1, "quiet")] {
            let mut echoes: Vec<Duration> = Vec::new();
            let mut missed = 0;
            for (p, result) in &all {
                if *p == program {
                    echoes.extend(&result[phase].0);
                    missed += result[phase].1;
                }
            }
            echoes.sort();
            let p50 = percentile(&echoes, 0.5);
            let p99 = percentile(&echoes, 0.99);
            p50s.insert((program, phase), (p50, p99));
            println!(
                "| {} | {name} | {}/{} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |",
                program.name(),
                echoes.len(),
                echoes.len() + missed,
                ms(p50),
                ms(percentile(&echoes, 0.9)),
                ms(p99),
                ms(echoes.last().copied().unwrap_or_default()),
            );
        }
    }
    for (phase, name) in [(0, "after opening"), (1, "quiet")] {
        let (vim, vim99) = p50s[&(Program::Vim, phase)];
        for &program in programs.iter().filter(|p| **p != Program::Vim) {
            let (ours, ours99) = p50s[&(program, phase)];
            println!(
                "{name}: {} / vim = {:.2}x at p50, {:.2}x at p99",
                program.name(),
                ours.as_secs_f64() / vim.as_secs_f64().max(1e-9),
                ours99.as_secs_f64() / vim99.as_secs_f64().max(1e-9)
            );
        }
    }
}

fn sorted(echoes: &[Duration]) -> Vec<Duration> {
    let mut sorted = echoes.to_vec();
    sorted.sort();
    sorted
}

//! What the sandbox costs a kernel spawn: the start-up probe, preparing a
//! session's ruleset, and spawning a process confined vs. unconfined (the
//! baseline, measured in the same run and interleaved so machine noise hits
//! both alike).
//!
//! Run: `cargo bench --bench sandbox`

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hello_tui::sandbox::{SandboxOptions, SandboxSession, SandboxStatus};

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn report(name: &str, samples: &mut [Duration]) -> Duration {
    let p50 = percentile(samples, 0.50);
    let p99 = percentile(samples, 0.99);
    println!(
        "{name:<44} p50 {:>9.3} ms   p99 {:>9.3} ms   (n={})",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        samples.len()
    );
    p50
}

fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    black_box(f());
    start.elapsed()
}

fn bench_alone(name: &str, warmup: usize, iterations: usize, mut f: impl FnMut()) {
    for _ in 0..warmup {
        f();
    }
    let mut samples: Vec<Duration> = (0..iterations).map(|_| time(&mut f)).collect();
    report(name, &mut samples);
}

/// Spawns `program args` to completion, confined by `session` or not.
fn spawn(session: Option<&SandboxSession>, cwd: &Path, program: &str, args: &[&str]) {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(session) = session {
        session.install(&mut cmd).expect("install");
    }
    let status = cmd.status().expect("spawn");
    assert!(status.success(), "{program} failed: {status}");
}

fn bench_spawn(
    label: &str,
    session: &SandboxSession,
    cwd: &Path,
    program: &str,
    args: &[&str],
    (warmup, iterations): (usize, usize),
) {
    for _ in 0..warmup {
        spawn(None, cwd, program, args);
        spawn(Some(session), cwd, program, args);
    }
    let mut baseline = Vec::with_capacity(iterations);
    let mut confined = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        baseline.push(time(|| spawn(None, cwd, program, args)));
        confined.push(time(|| spawn(Some(session), cwd, program, args)));
    }
    let base = report(
        &format!("spawn {label} unconfined (baseline)"),
        &mut baseline,
    );
    let sand = report(&format!("spawn {label} sandboxed"), &mut confined);
    println!(
        "{:<44} ratio sandboxed/baseline p50 = {:.2}x",
        "",
        sand.as_secs_f64() / base.as_secs_f64()
    );
}

fn main() {
    let status = SandboxStatus::probe();
    println!("status: {status:?}");
    if !status.is_enforced() {
        println!("Landlock unavailable here: nothing to measure");
        return;
    }
    let workspace = tempfile::tempdir().expect("workspace");
    let ws = workspace.path();

    bench_alone("SandboxStatus::probe (fork + restrict)", 20, 300, || {
        black_box(SandboxStatus::probe());
    });
    bench_alone("SandboxSession::start (tmp dir + ruleset)", 20, 300, || {
        black_box(SandboxSession::start(ws, false, SandboxOptions::default()).expect("start"));
    });

    let session = SandboxSession::start(ws, false, SandboxOptions::default()).expect("start");
    bench_spawn("/bin/true", &session, ws, "/bin/true", &[], (20, 300));
    bench_spawn(
        "python3 -c pass",
        &session,
        ws,
        "python3",
        &["-c", "pass"],
        (5, 60),
    );
    bench_big_workspace(&session, ws);
}

/// Each spawn walks the whole workspace for nested `.git` and `.hello-tui`
/// folders (no folder skipped, no depth limit): `/bin/true` confined in a
/// workspace of 50 000 files in 550 folders (under `node_modules`, with a
/// nested repository 8 deep), against the empty one, interleaved.
fn bench_big_workspace(small: &SandboxSession, small_ws: &Path) {
    let big = tempfile::tempdir().expect("workspace");
    for a in 0..50 {
        for b in 0..10 {
            let dir = big.path().join(format!("node_modules/a{a}/b{b}"));
            std::fs::create_dir_all(&dir).expect("tree");
            for f in 0..100 {
                std::fs::write(dir.join(format!("f{f}.js")), "").expect("file");
            }
        }
    }
    std::fs::create_dir_all(big.path().join("node_modules/a1/b1/c/d/e/f/.git/hooks"))
        .expect("nested repository");
    let session =
        SandboxSession::start(big.path(), false, SandboxOptions::default()).expect("start");
    let mut empty = Vec::new();
    let mut tree = Vec::new();
    for i in 0..120 {
        let e = time(|| spawn(Some(small), small_ws, "/bin/true", &[]));
        let t = time(|| spawn(Some(&session), big.path(), "/bin/true", &[]));
        if i >= 20 {
            empty.push(e);
            tree.push(t);
        }
    }
    let e = report("spawn /bin/true sandboxed, empty workspace", &mut empty);
    let t = report("spawn /bin/true sandboxed, 50 000 entries", &mut tree);
    println!(
        "{:<44} ratio 50 000 entries/empty p50 = {:.2}x",
        "",
        t.as_secs_f64() / e.as_secs_f64()
    );
}

//! Kernel round-trip costs next to a bare JSON-lines pipe to a trivial Python
//! echo child, measured in the same run.
//!
//! Run: `cargo bench --bench kernel` (`-- start` for the kernel start
//! comparison alone, `-- keep` for the cost of keeping variables across
//! restarts, each cell against a kernel that does not keep them)

use std::process::Stdio;
use std::time::{Duration, Instant};

use hello_tui::kernel::protocol::parse_kernel_line;
use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, DriverDir, KernelConfig};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const WARMUP: usize = 200;
const ROUNDS: usize = 2000;

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        p50: at(0.50),
        p99: at(0.99),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(name: &str, s: &Stats, baseline: Option<&Stats>) {
    let ratio = baseline
        .map(|b| format!("  ({:.2}x bare pipe p50)", ms(s.p50) / ms(b.p50)))
        .unwrap_or_default();
    println!(
        "{name:<34} p50 {:>8.3} ms   p99 {:>8.3} ms{ratio}",
        ms(s.p50),
        ms(s.p99)
    );
}

/// The floor: one JSON line to a Python child that echoes it, parsed back.
async fn bare_pipe(rounds: usize) -> Stats {
    let mut child = Command::new("python3")
        .args([
            "-u",
            "-c",
            "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let mut samples = Vec::with_capacity(rounds);
    for i in 0..WARMUP + rounds {
        let frame = format!("{{\"type\":\"execute\",\"id\":{i},\"code\":\"x = 1\"}}\n");
        let started = Instant::now();
        stdin.write_all(frame.as_bytes()).await.expect("write");
        line.clear();
        stdout.read_line(&mut line).await.expect("read");
        let parsed: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(parsed["id"], i);
        if i >= WARMUP {
            samples.push(started.elapsed());
        }
    }
    stats(samples)
}

/// One driver start, spawn to `ready`, through `python`.
fn driver_start(python: &std::path::Path) -> Duration {
    use std::io::BufRead;
    let scratch = tempfile::tempdir().expect("scratch");
    let files = DriverDir::create(scratch.path()).expect("driver written");
    let started = Instant::now();
    let mut child = std::process::Command::new(python)
        .arg("-u")
        .arg(files.entry())
        .arg("{}")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python starts");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    while out.read_line(&mut line).expect("read") > 0 && !line.contains("\"ready\"") {
        line.clear();
    }
    let took = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    took
}

/// Kernel start through `python3` as found on `PATH` (a pyenv shim on many
/// machines: what every start paid before) and through the interpreter it
/// resolves to (what every start after the first pays now), interleaved.
fn start_through_shim_or_not() {
    let Some(on_path) = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("python3"))
            .find(|p| p.is_file())
    }) else {
        return;
    };
    let is_script = std::fs::read(&on_path).is_ok_and(|bytes| bytes.starts_with(b"#!"));
    let output = std::process::Command::new(&on_path)
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let resolved = std::path::PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    println!(
        "python3 on PATH: {} ({}); resolves to {}",
        on_path.display(),
        if is_script {
            "a script: shim"
        } else {
            "a binary"
        },
        resolved.display()
    );
    let (mut shim, mut direct) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        driver_start(&on_path);
        driver_start(&resolved);
    }
    for _ in 0..20 {
        shim.push(driver_start(&on_path));
        direct.push(driver_start(&resolved));
    }
    let direct = stats(direct);
    report("kernel start via python3 on PATH", &stats(shim), None);
    report("kernel start via resolved path", &direct, None);
}

/// Runs `cell` then times one describe, 300 times after 30 warm-ups: the
/// whole round trip, and the part the driver spent building the listing.
async fn describe_after_each(rt: &CodeRuntime, cell: &str) -> (Stats, Stats) {
    let mut samples = Vec::with_capacity(300);
    let mut in_kernel = Vec::with_capacity(300);
    for i in 0..30 + 300 {
        let r = rt.execute(cell, None).await;
        assert!(r.ok, "{:?}", r.error);
        let started = Instant::now();
        let state = rt.describe().await.expect("describe");
        assert!(state.variables.len() >= 1000);
        if i >= 30 {
            samples.push(started.elapsed());
            in_kernel.push(Duration::from_secs_f64(
                state.elapsed_ms.unwrap_or_default() / 1000.0,
            ));
        }
    }
    (stats(samples), stats(in_kernel))
}

/// A kernel that keeps its variables (`[kernel] keep_variables`, the
/// default) or not.
fn kernel(keep: bool) -> CodeRuntime {
    let dir = std::env::temp_dir();
    let mut config = KernelConfig::for_workspace(&dir);
    config.auto_refresh = None;
    let mut registry = CapabilityRegistry::new();
    if keep {
        let limits = hello_tui::kernel::KeepLimits {
            per_variable_bytes: 8 << 20,
            total_bytes: 64 << 20,
        };
        let store = hello_tui::session::VarStore::new(limits);
        config.keep_variables = Some(store.limits());
        registry = registry.with(std::sync::Arc::new(store));
    }
    CodeRuntime::new(config, registry).0
}

/// Back-to-back cells (the next one waits for the last one's save), the
/// two kernels taking turns so load affects both alike.
async fn keep_or_not(
    kept: &CodeRuntime,
    plain: &CodeRuntime,
    label: &str,
    cell: &dyn Fn(usize) -> String,
) {
    let rounds = 1000;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for i in 0..100 + rounds {
        for (rt, samples) in [(kept, &mut with), (plain, &mut without)] {
            let started = Instant::now();
            let r = rt.execute(&cell(i), None).await;
            assert!(r.ok, "{:?}", r.error);
            if i >= 100 {
                samples.push(started.elapsed());
            }
        }
    }
    let (with, without) = (stats(with), stats(without));
    println!(
        "{label:<44} kept p50 {:>7.3} ms p99 {:>7.3} ms | not kept p50 {:>7.3} ms p99 {:>7.3} ms | p50 ratio {:.2}",
        ms(with.p50),
        ms(with.p99),
        ms(without.p50),
        ms(without.p99),
        ms(with.p50) / ms(without.p50)
    );
}

async fn keep_costs() {
    let (kept, plain) = (kernel(true), kernel(false));
    for rt in [&kept, &plain] {
        rt.start().await.expect("kernel starts");
    }
    keep_or_not(&kept, &plain, "x = 1 (nothing new)", &|_| "x = 1".into()).await;
    keep_or_not(&kept, &plain, "x = i (a small change)", &|i| {
        format!("x = {i}")
    })
    .await;
    keep_or_not(
        &kept,
        &plain,
        "rows.append(i) (a list of 1 000 grows)",
        &|i| format!("rows = globals().get('rows') or list(range(1000))\nrows.append({i})"),
    )
    .await;
    let setup = "for i in range(1000):\n    k = i % 4\n    globals()['v%d' % i] = i if k == 0 else ('s' * (i % 50)) if k == 1 else list(range(i % 20)) if k == 2 else {'a': i, 'b': [i]}";
    for rt in [&kept, &plain] {
        assert!(rt.execute(setup, None).await.ok);
    }
    keep_or_not(
        &kept,
        &plain,
        "x = i, 1 000 vars live (half containers)",
        &|i| format!("x = {i}"),
    )
    .await;
    for rt in [&kept, &plain] {
        assert!(rt.execute("big = list(range(200_000))", None).await.ok);
    }
    keep_or_not(&kept, &plain, "x = i, and a 200 000-item list live", &|i| {
        format!("x = {i}")
    })
    .await;
    kept.shutdown().await;
    plain.shutdown().await;
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "keep") {
        keep_costs().await;
        return;
    }
    start_through_shim_or_not();
    if std::env::args().any(|a| a == "start") {
        return;
    }
    let dir = std::env::temp_dir();
    let mut config = KernelConfig::for_workspace(&dir);
    config.auto_refresh = None; // measure the call itself, not the inspector refresh
    let (rt, _events) = CodeRuntime::new(config, CapabilityRegistry::new());
    let first = Instant::now();
    rt.start().await.expect("kernel starts");
    println!(
        "{:<34} {:>12.3} ms (python3 from PATH)",
        "first kernel start (spawn to ready)",
        ms(first.elapsed())
    );
    let mut starts = Vec::new();
    for _ in 0..5 {
        rt.shutdown().await;
        let started = Instant::now();
        rt.start().await.expect("kernel starts");
        starts.push(started.elapsed());
    }
    report("restart, n=5", &stats(starts), None);

    let bare = bare_pipe(ROUNDS).await;
    report("bare JSON-lines pipe round trip", &bare, None);

    let mut samples = Vec::with_capacity(ROUNDS);
    for i in 0..WARMUP + ROUNDS {
        let started = Instant::now();
        let r = rt.execute("x = 1", None).await;
        assert!(r.ok);
        if i >= WARMUP {
            samples.push(started.elapsed());
        }
    }
    report(
        "execute(\"x = 1\") round trip",
        &stats(samples),
        Some(&bare),
    );

    // 1 000 variables of mixed kinds, as a real session would hold.
    let setup = "import random\nfor i in range(1000):\n    k = i % 4\n    globals()['v%d' % i] = i if k == 0 else ('s' * (i % 50)) if k == 1 else list(range(i % 20)) if k == 2 else {'a': i, 'b': [i]}";
    let r = rt.execute(setup, None).await;
    assert!(r.ok, "{:?}", r.error);
    let state = rt.describe().await.expect("describe");
    assert!(state.variables.len() >= 1000, "{}", state.variables.len());
    let mut samples = Vec::with_capacity(500);
    for i in 0..50 + 500 {
        let started = Instant::now();
        let state = rt.describe().await.expect("describe");
        assert!(state.variables.len() >= 1000);
        if i >= 50 {
            samples.push(started.elapsed());
        }
    }
    report(
        "describe(), 1 000 vars, unchanged",
        &stats(samples),
        Some(&bare),
    );

    // The inspector's real pattern: one describe right after each cell.
    let (after, in_kernel) = describe_after_each(&rt, "x = 1").await;
    report("describe(), 1 000 vars, after a cell", &after, Some(&bare));
    report("  of which built in Python", &in_kernel, None);

    // A cell that rebinds ten of them: ten entries travel.
    let (rebound, _) = describe_after_each(
        &rt,
        "for i in range(0, 40, 4):\n    globals()['v%d' % i] += 1",
    )
    .await;
    report("describe(), 1 000 vars, 10 rebound", &rebound, Some(&bare));

    // Host side of a whole listing (first describe, or after a restart):
    // parsing 1 000 variables.
    let mut frame = serde_json::to_value(rt.describe().await.expect("describe")).expect("json");
    frame["type"] = "state".into();
    frame["id"] = 1.into();
    let line = serde_json::to_vec(&frame).expect("encode");
    let mut parse = Vec::with_capacity(500);
    for i in 0..550 {
        let started = Instant::now();
        let msg = parse_kernel_line(&line);
        assert!(msg.is_some());
        if i >= 50 {
            parse.push(started.elapsed());
        }
    }
    report(
        &format!("whole listing: host parse of {} KB", line.len() / 1024),
        &stats(parse),
        None,
    );

    let mut samples = Vec::with_capacity(ROUNDS);
    for i in 0..WARMUP + ROUNDS {
        let started = Instant::now();
        let r = rt.execute("x = 1", None).await;
        assert!(r.ok);
        if i >= WARMUP {
            samples.push(started.elapsed());
        }
    }
    report(
        "execute(\"x = 1\"), 1 000 vars live",
        &stats(samples),
        Some(&bare),
    );
    rt.shutdown().await;
}

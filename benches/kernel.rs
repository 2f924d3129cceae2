//! Kernel round-trip costs next to a bare JSON-lines pipe to a trivial Python
//! echo child, measured in the same run.
//!
//! Run: `cargo bench --bench kernel`

use std::process::Stdio;
use std::time::{Duration, Instant};

use hello_tui::kernel::protocol::parse_kernel_line;
use hello_tui::kernel::{CapabilityRegistry, CodeRuntime, KernelConfig};
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

#[tokio::main(flavor = "current_thread")]
async fn main() {
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

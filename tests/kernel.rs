//! The kernel core against a real `python3`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use hello_tui::kernel::caps::{
    AllowAll, ApprovalDecision, AskUser, DenyAll, DirtyPaths, FsCapability, FsWritten, Prior,
    ShellCapability,
};
use hello_tui::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilityRegistry, CapabilitySpec,
    CodeRuntime, ExecOutcome, ExecResult, FileChanged, KernelConfig, KernelEvent, KernelStatus,
    StreamName,
};
use hello_tui::sandbox::{ChildEnv, Confinement};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

/// A stand-in for the `context` capability: its handler asks the runtime for
/// its state while the calling cell is blocked on the reply.
struct Probe;

impl Capability for Probe {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "probe".into(),
            description: "test capability".into(),
            actions: vec![
                ActionSpec::new("get_runtime_state", "describe from inside a call")
                    .alias("getRuntimeState"),
                ActionSpec::new("echo", "returns its argument").param("value"),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let action = action.to_owned();
        Box::pin(async move {
            match action.as_str() {
                "get_runtime_state" => {
                    let state = ctx
                        .runtime
                        .describe()
                        .await
                        .map_err(|e| CapabilityError::Failed(e.to_string()))?;
                    let names: Vec<_> = state.variables.iter().map(|v| v.name.clone()).collect();
                    Ok(
                        json!({ "total_variables": names.len(), "names": names, "alive": state.alive }),
                    )
                }
                "echo" => Ok(args["value"].clone()),
                _ => Err(CapabilityError::InvalidArgument(action)),
            }
        })
    }
}

struct Kernel {
    rt: CodeRuntime,
    events: mpsc::UnboundedReceiver<KernelEvent>,
    dir: tempfile::TempDir,
    dirty: watch::Sender<DirtyPaths>,
    written: mpsc::UnboundedReceiver<FsWritten>,
}

/// These tests are about the kernel, not the sandbox (tests/sandbox.rs,
/// tests/safety.rs): shell children start with the allowlisted environment
/// only.
fn unconfined() -> Confinement {
    Confinement::unconfined(ChildEnv::from_host(&[], ""))
}

fn kernel_with(tune: impl FnOnce(&mut KernelConfig), shell_denied: bool) -> Kernel {
    let dir = tempfile::tempdir().unwrap();
    let (dirty, dirty_rx) = watch::channel(DirtyPaths::default());
    let (written_tx, written) = mpsc::unbounded_channel();
    let fs = FsCapability::new(dir.path())
        .unwrap()
        .with_dirty_paths(dirty_rx)
        .with_write_events(written_tx);
    let shell = if shell_denied {
        ShellCapability::new(
            dir.path(),
            Arc::new(DenyAll {
                reason: "no shell in this test".into(),
            }),
            unconfined(),
        )
    } else {
        ShellCapability::new(dir.path(), Arc::new(AllowAll), unconfined())
    };
    let registry = CapabilityRegistry::new()
        .with(Arc::new(fs))
        .with(Arc::new(shell))
        .with(Arc::new(Probe));
    let mut config = KernelConfig::for_workspace(dir.path());
    config.auto_refresh = None;
    tune(&mut config);
    let (rt, events) = CodeRuntime::new(config, registry);
    Kernel {
        rt,
        events,
        dir,
        dirty,
        written,
    }
}

fn kernel() -> Kernel {
    kernel_with(|_| {}, false)
}

async fn run(k: &Kernel, code: &str) -> ExecResult {
    k.rt.execute(code, Some(Duration::from_secs(30))).await
}

async fn ok(k: &Kernel, code: &str) -> ExecResult {
    let r = run(k, code).await;
    assert!(r.ok, "cell failed: {code}\n{:?}", r.error);
    r
}

async fn wait_busy(k: &Kernel) {
    let mut status = k.rt.status();
    tokio::time::timeout(
        Duration::from_secs(10),
        status.wait_for(|i| i.status == KernelStatus::Busy),
    )
    .await
    .expect("kernel never became busy")
    .unwrap();
}

/// Asks the kernel for its state until `done` holds (at most 10 s): a wait
/// on what the test needs, not on how long it usually takes.
async fn describe_until(
    k: &Kernel,
    done: impl Fn(&hello_tui::kernel::RuntimeState) -> bool,
) -> hello_tui::kernel::RuntimeState {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = k.rt.describe().await.unwrap();
        if done(&state) {
            return state;
        }
        assert!(Instant::now() < deadline, "never came: {state:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

mod cells {
    use super::*;

    #[tokio::test]
    async fn globals_persist_across_cells() {
        let k = kernel();
        ok(&k, "x = 41\ndef bump(n):\n    return n + 1").await;
        let r = ok(&k, "bump(x)").await;
        assert_eq!(r.value_repr.as_deref(), Some("42"));
        let info = k.rt.status().borrow().clone();
        assert_eq!(info.status, KernelStatus::Idle);
        assert!(info.python.unwrap().starts_with('3'));
    }

    #[tokio::test]
    async fn subprocess_output_interleaves_in_order() {
        let k = kernel();
        let r = ok(
            &k,
            "import os, sys\nprint('a', end='')\nos.system('echo hi')\nprint('b')\nsys.stderr.write('oops\\n')",
        )
        .await;
        assert_eq!(r.stdout, "ahi\nb\n");
        assert_eq!(r.stderr, "oops\n");
    }

    #[tokio::test]
    async fn stream_events_arrive_tagged_with_the_cell() {
        let mut k = kernel();
        let r = ok(&k, "print('live')").await;
        let mut seen = String::new();
        let mut started = None;
        while let Ok(event) = k.events.try_recv() {
            if let KernelEvent::CellStarted { exec_id } = event {
                assert!(seen.is_empty(), "started after its output");
                started = Some(exec_id);
            }
            if let KernelEvent::Stream {
                exec_id,
                stream: StreamName::Stdout,
                text,
            } = event
            {
                assert_eq!(exec_id, Some(r.id));
                seen.push_str(&text);
            }
        }
        assert_eq!(seen, "live\n");
        assert_eq!(started, Some(r.id));
    }

    #[tokio::test]
    async fn trailing_expression_value_and_unserialisable_values() {
        let k = kernel();
        assert_eq!(ok(&k, "1 + 2").await.value_repr.as_deref(), Some("3"));
        assert_eq!(ok(&k, "x = 5").await.value_repr, None);
        assert_eq!(ok(&k, "{3}").await.value_repr.as_deref(), Some("{3}"));
        let r = ok(
            &k,
            "class P:\n    def __repr__(self):\n        return 'P!'\nP()",
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("P!"));
        let r = ok(
            &k,
            "class Bad:\n    def __repr__(self):\n        raise ValueError('no')\nBad()",
        )
        .await;
        assert!(
            r.value_repr
                .unwrap()
                .contains("repr() failed: ValueError: no")
        );
        let r = ok(&k, "list(range(100000))").await;
        let repr = r.value_repr.unwrap();
        assert!(repr.len() < 10_000, "{}", repr.len());
        assert!(repr.contains("…+99900"), "{repr}");
    }

    /// The driver runs by path from its own directory, not as `python -c
    /// SOURCE`: the command line is short, its files are real (so its
    /// frames quote their lines), and a cell still imports the workspace's
    /// modules first, as under `-c` (`sys.path[0] == ""`).
    #[tokio::test]
    async fn the_driver_runs_by_path_and_the_workspace_imports_first() {
        let k = kernel();
        std::fs::write(k.dir.path().join("mymod.py"), "ANSWER = 42\n").unwrap();
        // A workspace module named like a driver module must win too.
        std::fs::write(k.dir.path().join("framing.py"), "MINE = True\n").unwrap();
        let r = ok(
            &k,
            "import mymod, framing, sys\n(mymod.ANSWER, framing.MINE, sys.path[0])",
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("(42, True, '')"));
        let pid = k.rt.status().borrow().pid.unwrap();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        assert!(
            cmdline.len() < 4096,
            "{} bytes of command line",
            cmdline.len()
        );
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        assert!(!args.iter().any(|a| a == "-c"), "{args:?}");
        let r = ok(
            &k,
            "import os, hello_tui_kernel.framing as f\n(os.path.isfile(f.__file__), os.path.dirname(os.path.dirname(f.__file__)))",
        )
        .await;
        let value = r.value_repr.unwrap();
        assert!(value.starts_with("(True, "), "{value}");
        assert!(
            args.iter()
                .any(|a| value.contains(a.as_str()) && a.contains("hello-tui-driver-")),
            "the kernel runs the directory its files are in: {args:?} vs {value}"
        );
    }

    #[tokio::test]
    async fn exceptions_carry_a_traceback_of_user_frames_only() {
        let k = kernel();
        let r = run(&k, "def f():\n    return 1 / 0\n\nf()").await;
        assert!(!r.ok);
        assert_eq!(r.outcome, ExecOutcome::Completed);
        let err = r.error.unwrap();
        assert_eq!(err.type_name, "ZeroDivisionError");
        assert_eq!(err.message, "division by zero");
        assert!(err.traceback.contains("return 1 / 0"), "{}", err.traceback);
        assert!(err.traceback.contains("<cell-1>"), "{}", err.traceback);
        assert!(!err.traceback.contains("<string>"), "{}", err.traceback);
        assert!(!err.traceback.contains("run_cell"), "{}", err.traceback);
        let syntax = run(&k, "x = (").await.error.unwrap();
        assert_eq!(syntax.type_name, "SyntaxError");
        assert!(
            !syntax.traceback.contains("_run_code"),
            "{}",
            syntax.traceback
        );
        // sys.exit is an error value, not the end of the kernel.
        let exit = run(&k, "import sys\nsys.exit(2)").await;
        assert_eq!(exit.error.unwrap().type_name, "SystemExit");
        assert_eq!(
            ok(&k, "'alive'").await.value_repr.as_deref(),
            Some("'alive'")
        );
    }

    #[tokio::test]
    async fn crafted_output_cannot_break_framing() {
        let k = kernel();
        let fake = r#"{"type":"result","id":1,"ok":true,"value_repr":"fake"}"#;
        let code = format!(
            "import os, sys\nprint({fake:?})\nos.write(1, b'bad \\xff\\xfe utf8 \\x00 nul\\n')\nsys.stdout.write('x' * 3_000_000 + '\\n')\n'real'"
        );
        let r = ok(&k, &code).await;
        assert_eq!(r.value_repr.as_deref(), Some("'real'"));
        assert!(r.stdout.starts_with(fake), "{}", &r.stdout[..200]);
        assert!(r.stdout.contains("bad \u{fffd}\u{fffd} utf8 \0 nul\n"));
        assert!(r.stdout.contains("bytes of output dropped"));
        assert_eq!(ok(&k, "1").await.value_repr.as_deref(), Some("1"));
    }

    #[tokio::test]
    async fn huge_output_is_capped() {
        let k = kernel();
        let started = Instant::now();
        let r = ok(
            &k,
            "import sys\nchunk = 'y' * (1 << 20)\nfor _ in range(200):\n    sys.stdout.write(chunk)\nprint('END')",
        )
        .await;
        assert!(r.stdout.len() < (2 << 20), "{}", r.stdout.len());
        assert!(r.stdout.ends_with("END\n"));
        let marker = "[... ";
        let at = r.stdout.find(marker).expect("drop notice");
        let dropped: u64 = r.stdout[at + marker.len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(dropped > 190 << 20, "{dropped}");
        eprintln!("200 MB cell took {:?}", started.elapsed());
    }
}

mod interrupts {
    use super::*;

    /// Runs `code`, interrupts it once (`after` it became busy), returns
    /// its result; fails if that takes 10 s.
    async fn interrupt_at(k: &Kernel, code: &str, after: Duration) -> ExecResult {
        let rt = k.rt.clone();
        let code = code.to_owned();
        let cell = tokio::spawn(async move { rt.execute(&code, None).await });
        wait_busy(k).await;
        tokio::time::sleep(after).await;
        assert!(k.rt.interrupt());
        tokio::time::timeout(Duration::from_secs(10), cell)
            .await
            .expect("the interrupt did not end the cell within 10 s")
            .unwrap()
    }

    /// Starts a 30 s sleep, interrupts it once it runs, returns its result.
    async fn interrupt_a_sleeping_cell(k: &Kernel) -> ExecResult {
        let rt = k.rt.clone();
        let cell =
            tokio::spawn(async move { rt.execute("import time\ntime.sleep(30)", None).await });
        wait_busy(k).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(k.rt.interrupt());
        cell.await.unwrap()
    }

    #[tokio::test]
    async fn interrupt_keeps_variables() {
        let k = kernel();
        ok(&k, "kept = [1, 2, 3]").await;
        let r = interrupt_a_sleeping_cell(&k).await;
        assert_eq!(r.outcome, ExecOutcome::Interrupted);
        assert_eq!(r.error.unwrap().type_name, "KeyboardInterrupt");
        assert_eq!(
            ok(&k, "kept").await.value_repr.as_deref(),
            Some("[1, 2, 3]")
        );
        // A stray interrupt on an idle kernel is ignored.
        assert!(!k.rt.interrupt());
        k.rt.shutdown().await;
    }

    /// Ctrl+C the moment a cell is sent, before the driver has even read
    /// it, still stops that cell: the interrupt waits for the cell's
    /// `started` frame (a SIGINT sent at once found the driver idle and
    /// was dropped, and the cell slept on).
    #[tokio::test(flavor = "multi_thread")]
    async fn an_interrupt_right_after_the_cell_is_sent_is_not_lost() {
        let k = kernel();
        ok(&k, "kept = 5").await;
        for _ in 0..10 {
            let rt = k.rt.clone();
            let cell =
                tokio::spawn(async move { rt.execute("import time\ntime.sleep(30)", None).await });
            wait_busy(&k).await;
            assert!(k.rt.interrupt());
            let r = tokio::time::timeout(Duration::from_secs(10), cell)
                .await
                .expect("the interrupt was lost: the cell slept on")
                .unwrap();
            assert_eq!(r.outcome, ExecOutcome::Interrupted, "{r:?}");
        }
        assert_eq!(ok(&k, "kept").await.value_repr.as_deref(), Some("5"));
    }

    /// A SIGINT whose handler CPython left pending while the cell sleeps
    /// (here a thread of the cell takes it while the main thread blocks
    /// it, the state CPython's race leaves) is acted on: the kernel is
    /// woken, the sleep ends and the pending handler raises. Before, the
    /// cell slept its whole 30 s.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_sigint_left_pending_while_the_cell_sleeps_is_acted_on() {
        let k = kernel();
        let r = interrupt_at(
            &k,
            "import signal, threading, time\n\
             threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n\
             signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n\
             time.sleep(30)",
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(r.outcome, ExecOutcome::Interrupted, "{r:?}");
    }

    /// One Ctrl+C is one KeyboardInterrupt: the cell's own `except
    /// KeyboardInterrupt:` cleanup runs to its end even when it holds the
    /// interpreter for longer than the wake interval (a second SIGINT,
    /// repeated because the answer was slow to leave, cut it short).
    #[tokio::test(flavor = "multi_thread")]
    async fn a_cells_own_cleanup_is_not_interrupted_twice() {
        let k = kernel();
        let r = interrupt_at(
            &k,
            "import time\n\
             cleaned = False\n\
             try:\n    time.sleep(30)\n\
             except KeyboardInterrupt:\n    n = sum(range(10**8))\n    cleaned = True\n    raise",
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(r.outcome, ExecOutcome::Interrupted, "{r:?}");
        assert_eq!(ok(&k, "cleaned").await.value_repr.as_deref(), Some("True"));
    }

    /// A cell with a SIGINT handler of its own (a server's "press Ctrl+C
    /// again to force quit") gets one SIGINT per Ctrl+C, not one every
    /// 300 ms.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_cells_own_sigint_handler_runs_once_per_interrupt() {
        let k = kernel();
        let r = interrupt_at(
            &k,
            "import signal, time\n\
             hits = []\n\
             signal.signal(signal.SIGINT, lambda *a: hits.append(1))\n\
             end = time.monotonic() + 2.5\n\
             while time.monotonic() < end:\n    time.sleep(0.05)\n\
             len(hits)",
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("1"), "{r:?}");
    }

    /// A cell that swaps the SIGINT handler does not disarm Ctrl+C for the
    /// cells after it.
    #[tokio::test]
    async fn the_interrupt_handler_is_restored_after_a_cell_replaces_it() {
        let k = kernel();
        ok(
            &k,
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nkept = 1",
        )
        .await;
        let r = interrupt_a_sleeping_cell(&k).await;
        assert_eq!(r.outcome, ExecOutcome::Interrupted);
        assert_eq!(ok(&k, "kept").await.value_repr.as_deref(), Some("1"));
    }

    #[tokio::test]
    async fn idle_kernel_survives_a_stray_sigint() {
        let k = kernel();
        ok(&k, "v = 7").await;
        let pid = k.rt.status().borrow().pid.unwrap();
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        // Once no signal is pending, the kernel has handled it.
        let pending = |line: &str| {
            (line.starts_with("SigPnd:") || line.starts_with("ShdPnd:"))
                && line.split_whitespace().nth(1).is_some_and(|mask| {
                    u64::from_str_radix(mask, 16)
                        .map_or(true, |m| m & (1 << (libc::SIGINT - 1)) != 0)
                })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(format!("/proc/{pid}/status"))
            .is_ok_and(|status| status.lines().any(pending))
        {
            assert!(Instant::now() < deadline, "SIGINT never handled");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(ok(&k, "v").await.value_repr.as_deref(), Some("7"));
    }

    #[tokio::test]
    async fn busy_loop_timeout_interrupts_and_keeps_variables() {
        let k = kernel();
        ok(&k, "kept = 'yes'").await;
        let r =
            k.rt.execute("while True:\n    pass", Some(Duration::from_millis(500)))
                .await;
        assert_eq!(r.outcome, ExecOutcome::TimedOut { restarted: false });
        let err = r.error.unwrap();
        assert!(err.message.contains("variables kept"), "{}", err.message);
        assert_eq!(ok(&k, "kept").await.value_repr.as_deref(), Some("'yes'"));
    }

    #[tokio::test]
    async fn sleep_timeout_interrupts() {
        let k = kernel();
        let started = Instant::now();
        let r =
            k.rt.execute(
                "import time\ntime.sleep(100)",
                Some(Duration::from_millis(500)),
            )
            .await;
        assert_eq!(r.outcome, ExecOutcome::TimedOut { restarted: false });
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn a_cell_ignoring_sigint_is_killed_and_the_kernel_restarted() {
        let k = kernel_with(|c| c.interrupt_grace = Duration::from_millis(500), false);
        ok(&k, "lost = 1").await;
        let old_pid = k.rt.status().borrow().pid.unwrap();
        let r = k
            .rt
            .execute(
                "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('before')\ntime.sleep(100)",
                Some(Duration::from_millis(500)),
            )
            .await;
        assert_eq!(r.outcome, ExecOutcome::TimedOut { restarted: true });
        assert!(r.lost_state());
        let err = r.error.unwrap();
        assert!(
            err.message.contains("kernel restarted — variables lost"),
            "{}",
            err.message
        );
        assert_eq!(r.stdout, "before\n");
        let info = k.rt.status().borrow().clone();
        assert_eq!(info.status, KernelStatus::Idle);
        assert_ne!(info.pid, Some(old_pid));
        let gone = run(&k, "lost").await;
        assert_eq!(gone.error.unwrap().type_name, "NameError");
    }
}

mod faults {
    use super::*;

    async fn crash_and_recover(code: &str, expect: &str) {
        let k = kernel();
        ok(&k, "x = 1").await;
        let r = run(&k, code).await;
        assert!(!r.ok);
        let ExecOutcome::KernelDied { reason } = &r.outcome else {
            panic!("{:?}", r.outcome)
        };
        assert!(reason.contains(expect), "{reason}");
        assert!(r.error.unwrap().message.contains("variables lost"));
        let status = k.rt.status().borrow().status.clone();
        assert!(matches!(status, KernelStatus::Dead(_)), "{status:?}");
        assert!(!k.rt.describe().await.unwrap().alive);
        let r = ok(&k, "y = 2\ny").await;
        assert_eq!(r.value_repr.as_deref(), Some("2"));
        assert_eq!(run(&k, "x").await.error.unwrap().type_name, "NameError");
    }

    #[tokio::test]
    async fn os_exit_is_reported_and_the_next_cell_gets_a_fresh_kernel() {
        crash_and_recover("print('bye')\nimport os\nos._exit(3)", "exited with code 3").await;
    }

    #[tokio::test]
    async fn segfault_is_reported_and_the_next_cell_gets_a_fresh_kernel() {
        crash_and_recover("import ctypes\nctypes.string_at(0)", "SIGSEGV").await;
    }

    #[tokio::test]
    async fn memory_limit_turns_runaway_allocation_into_memory_error() {
        let k = kernel_with(|c| c.memory_limit_bytes = Some(1 << 30), false);
        let r = run(&k, "big = bytearray(4 << 30)").await;
        assert_eq!(r.error.unwrap().type_name, "MemoryError");
        assert_eq!(
            ok(&k, "'still here'").await.value_repr.as_deref(),
            Some("'still here'")
        );
    }

    /// Issue 25: with no setting, a kernel still has a memory limit (half
    /// the machine's memory), so a runaway cell meets `MemoryError` instead
    /// of the OOM killer; `memory_limit_mb = 0` turns it off.
    #[tokio::test]
    async fn a_kernel_has_a_memory_limit_by_default() {
        let half = hello_tui::kernel::default_memory_limit().expect("the machine's memory");
        let k = kernel_with(|_| {}, false);
        let limit = "import resource\nresource.getrlimit(resource.RLIMIT_AS)[0]";
        let r = ok(&k, limit).await;
        assert_eq!(r.value_repr.as_deref(), Some(half.to_string().as_str()));
        let mut settings = hello_tui::config::Settings::defaults();
        settings.memory_limit_mb = Some(0);
        let off = KernelConfig::from_settings(&settings, std::path::Path::new("."));
        assert_eq!(off.memory_limit_bytes, None);
    }

    #[tokio::test]
    async fn dropping_the_runtime_ends_the_kernel_and_its_children() {
        let k = kernel();
        let r = ok(
            &k,
            "import subprocess\nchild = subprocess.Popen(['sleep', '60'])\nchild.pid",
        )
        .await;
        let child: i32 = r.value_repr.unwrap().parse().unwrap();
        let pid = k.rt.status().borrow().pid.unwrap() as i32;
        drop(k);
        let deadline = Instant::now() + Duration::from_secs(5);
        let alive = |p: i32| unsafe { libc::kill(p, 0) == 0 };
        while (alive(pid) || alive(child)) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(!alive(pid), "kernel {pid} survived");
        assert!(!alive(child), "child {child} survived");
    }

    #[tokio::test]
    async fn a_missing_interpreter_is_a_readable_error() {
        let k = kernel_with(|c| c.python = PathBuf::from("/nonexistent/python3"), false);
        let r = run(&k, "1").await;
        assert_eq!(r.outcome, ExecOutcome::NotRun);
        assert!(r.error.unwrap().message.contains("/nonexistent/python3"));
    }
}

mod state {
    use super::*;

    #[tokio::test]
    async fn describe_lists_user_variables_only() {
        let k = kernel();
        ok(
            &k,
            "import os\nfrom os.path import join\n_private = 1\nnums = [1, 2, 3]\nname = 'x' * 1000\ndef helper(a, b):\n    pass\nclass Point:\n    def __init__(self):\n        self.x, self.y = 1, 2\n    def __repr__(self):\n        raise RuntimeError('never called')\np = Point()",
        )
        .await;
        let state = k.rt.describe().await.unwrap();
        assert!(state.alive);
        let names: Vec<_> = state.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["nums", "name", "helper", "Point", "p"]);
        let nums = state.get("nums").unwrap();
        assert_eq!(nums.type_name, "list");
        assert_eq!(nums.summary.as_deref(), Some("len 3 items"));
        assert_eq!(nums.preview.as_deref(), Some("[1, 2, 3]"));
        assert!(nums.size.unwrap() > 50);
        let name = state.get("name").unwrap();
        assert!(name.preview.as_ref().unwrap().len() < 200);
        assert_eq!(
            state.get("helper").unwrap().summary.as_deref(),
            Some("def helper(a, b)")
        );
        assert_eq!(
            state.get("p").unwrap().preview.as_deref(),
            Some("Point(x=1, y=2)")
        );
    }

    #[tokio::test]
    async fn duck_typed_arrays_show_shape_and_dtype() {
        let k = kernel();
        ok(
            &k,
            "class FakeArray:\n    def __init__(self):\n        self.shape = (3, 4)\n        self.dtype = 'float64'\n        self.nbytes = 96\n    def __getattr__(self, name):\n        raise RuntimeError('must not be called')\narr = FakeArray()",
        )
        .await;
        let state = k.rt.describe().await.unwrap();
        let arr = state.get("arr").unwrap();
        assert_eq!(arr.summary.as_deref(), Some("shape (3, 4) float64"));
        assert_eq!(arr.size, Some(96));
        assert_eq!(
            arr.preview.as_deref(),
            Some("FakeArray(shape=(3, 4), dtype=float64)")
        );
    }

    #[tokio::test]
    async fn pathological_objects_cannot_stall_describe() {
        let k = kernel();
        ok(
            &k,
            r#"import time
class Evil:
    def __getattr__(self, name):
        time.sleep(10)
    def __len__(self):
        time.sleep(10)
        return 1
    def __repr__(self):
        time.sleep(10)
        return "never"
    def __sizeof__(self):
        time.sleep(10)
        return 1
    @property
    def shape(self):
        time.sleep(10)
        return (1,)
class EvilList(list):
    def __iter__(self):
        time.sleep(10)
        return iter([])
    def __len__(self):
        time.sleep(10)
        return 0
evil = Evil()
evil_list = EvilList([1, 2])
huge = list(range(10**6))
deep = [[[[[[1]]]]]]
big_int = 10**5000
text = "y" * 10**7"#,
        )
        .await;
        let asked = Instant::now();
        let state = k.rt.describe().await.unwrap();
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
        let preview = |name: &str| state.get(name).unwrap().preview.clone().unwrap();
        assert_eq!(preview("evil"), "<Evil object>");
        assert_eq!(preview("evil_list"), "EvilList([1, 2])");
        assert!(
            preview("huge").ends_with("…+999992]"),
            "{}",
            preview("huge")
        );
        assert_eq!(preview("deep"), "[[[…1]]]");
        assert_eq!(preview("big_int"), "<int 16610 bits>");
        assert!(preview("text").len() < 200);
        assert_eq!(
            state.get("huge").unwrap().summary.as_deref(),
            Some("len 1000000 items")
        );
    }

    #[tokio::test]
    async fn describe_answers_during_a_long_cell() {
        let k = kernel();
        let rt = k.rt.clone();
        let cell = tokio::spawn(async move {
            rt.execute(
                "import time\nearly = [1, 2]\ntime.sleep(0.2)\nalso = 'here'\ntime.sleep(4.8)\nlate = 1",
                None,
            )
            .await
        });
        wait_busy(&k).await;
        describe_until(&k, |s| s.get("also").is_some()).await;
        // The cell sleeps for seconds more: the answer comes now.
        let asked = Instant::now();
        let state = k.rt.describe().await.unwrap();
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
        let running = state.running.expect("a cell is running");
        let names: Vec<_> = state.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["early", "also"]);
        assert_eq!(state.changed_by(running).count(), 2);
        let r = cell.await.unwrap();
        assert!(r.ok);
        assert_eq!(r.id, running);
    }

    #[tokio::test]
    async fn changed_by_marks_the_cell_that_changed_a_variable() {
        let k = kernel();
        let first = ok(&k, "a = 1\nb = [1]").await;
        let second = ok(&k, "b.append(2)\nc = 3").await;
        let state = k.rt.describe().await.unwrap();
        assert_eq!(state.get("a").unwrap().changed_by, Some(first.id));
        assert_eq!(state.get("b").unwrap().changed_by, Some(second.id));
        assert_eq!(state.get("c").unwrap().changed_by, Some(second.id));
    }

    /// Who changed what, when the inspector did not look after every cell
    /// and when it looked in the middle of one.
    #[tokio::test]
    async fn changed_by_credits_the_cell_that_changed_a_container_in_place() {
        let k = kernel();
        let made = ok(&k, "a = [1, 2, 3]\nd = [0]\ne = [0]").await;
        let _look = k.rt.describe().await.unwrap();
        let grew = ok(&k, "a.append(4)").await;
        let _other = ok(&k, "c = 1").await;
        let state = k.rt.describe().await.unwrap();
        let by = |state: &hello_tui::kernel::RuntimeState, name: &str| {
            state.get(name).unwrap().changed_by
        };
        assert_eq!(by(&state, "a"), Some(grew.id), "the append, two cells ago");

        // Same length, other contents, one cell since the last look.
        let set = ok(&k, "d[0] = 7").await;
        let state = k.rt.describe().await.unwrap();
        assert_eq!(by(&state, "d"), Some(set.id));

        // Two cells since the last look: either could have done it, so
        // neither is credited.
        let _first = ok(&k, "e[0] = 5").await;
        let second = ok(&k, "f = 2").await;
        let state = k.rt.describe().await.unwrap();
        assert_eq!(state.get("e").unwrap().preview.as_deref(), Some("[5]"));
        assert_eq!(
            by(&state, "e"),
            Some(made.id),
            "not credited to the wrong cell"
        );
        assert_ne!(by(&state, "e"), Some(second.id));

        // Looked at in the middle of the cell, before and after the change.
        // The cell changes `d` when the test says so, and ends when it says
        // so: each look falls where the test wants it, however loaded the
        // machine.
        let change = k.dir.path().join("change");
        let end = k.dir.path().join("end");
        let code = format!(
            "import os, time\n\
             while not os.path.exists({change:?}): time.sleep(0.01)\n\
             d[0] = 8\n\
             while not os.path.exists({end:?}): time.sleep(0.01)"
        );
        let rt = k.rt.clone();
        let cell = tokio::spawn(async move { rt.execute(&code, None).await });
        wait_busy(&k).await;
        let before = k.rt.describe().await.unwrap();
        assert_eq!(before.get("d").unwrap().preview.as_deref(), Some("[7]"));
        std::fs::write(&change, "").unwrap();
        let during = describe_until(&k, |s| {
            s.get("d").unwrap().preview.as_deref() == Some("[8]")
        })
        .await;
        let running = during.running.expect("still running");
        assert_eq!(by(&during, "d"), Some(running));
        std::fs::write(&end, "").unwrap();
        let r = cell.await.unwrap();
        assert_eq!(r.id, running);
        let after = k.rt.describe().await.unwrap();
        assert_eq!(by(&after, "d"), Some(running));
    }

    #[tokio::test]
    async fn previews_follow_in_place_mutation() {
        let k = kernel();
        ok(&k, "flat = [1, 2, 3]\nnested = [[1]]\nd = {'k': 1}").await;
        let _warm = k.rt.describe().await.unwrap();
        let _cached = k.rt.describe().await.unwrap();
        ok(&k, "flat[0] = 99\nnested[0].append(2)\nd['k'] = 'v'").await;
        let state = k.rt.describe().await.unwrap();
        let preview = |name: &str| state.get(name).unwrap().preview.clone().unwrap();
        assert_eq!(preview("flat"), "[99, 2, 3]");
        assert_eq!(preview("nested"), "[[1, 2]]");
        assert_eq!(preview("d"), "{'k': 'v'}");
    }

    /// The host keeps the listing and the driver sends only what changed:
    /// after every kind of change the merged listing must equal the
    /// namespace, in order, with exact previews.
    #[tokio::test]
    async fn the_incremental_listing_follows_every_kind_of_change() {
        let k = kernel();
        let steps: &[(&str, &[(&str, &str)])] = &[
            (
                "a = [1, 2]\nb = {'k': [1]}\nc = 5",
                &[("a", "[1, 2]"), ("b", "{'k': [1]}"), ("c", "5")],
            ),
            (
                "a.append(3)",
                &[("a", "[1, 2, 3]"), ("b", "{'k': [1]}"), ("c", "5")],
            ),
            (
                "b['k'].append(2)",
                &[("a", "[1, 2, 3]"), ("b", "{'k': [1, 2]}"), ("c", "5")],
            ),
            // Same length, an equal value of another type: identity, not ==.
            (
                "a[0] = True",
                &[("a", "[True, 2, 3]"), ("b", "{'k': [1, 2]}"), ("c", "5")],
            ),
            (
                "del a\nimport os\nd = 1",
                &[("b", "{'k': [1, 2]}"), ("c", "5"), ("d", "1")],
            ),
            // Deleted and bound again: it moves to the end of the namespace.
            ("del b\nb = 7", &[("c", "5"), ("d", "1"), ("b", "7")]),
            // A module rebound to a value is listed where its name stands.
            (
                "c = 'x' * 3\nos = 2",
                &[("c", "'xxx'"), ("os", "2"), ("d", "1"), ("b", "7")],
            ),
            (
                "e = (1,)\ndel d",
                &[("c", "'xxx'"), ("os", "2"), ("b", "7"), ("e", "(1,)")],
            ),
        ];
        for (code, expected) in steps {
            let cell = ok(&k, code).await;
            for look in 0..2 {
                let state = k.rt.describe().await.unwrap();
                let got: Vec<(&str, &str)> = state
                    .variables
                    .iter()
                    .map(|v| (v.name.as_str(), v.preview.as_deref().unwrap_or("")))
                    .collect();
                assert_eq!(&got, expected, "after {code:?}, look {look}");
                assert!(state.changed_by(cell.id).count() > 0, "after {code:?}");
            }
        }
    }

    #[tokio::test]
    async fn inspector_refreshes_after_each_cell_and_while_busy() {
        let mut k = kernel_with(|c| c.auto_refresh = Some(Duration::from_millis(200)), false);
        ok(&k, "import time\nfirst = 1\ntime.sleep(1)").await;
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut states = Vec::new();
        while Instant::now() < deadline
            && states
                .iter()
                .all(|s: &hello_tui::kernel::RuntimeState| s.running.is_some())
        {
            if let Ok(Some(KernelEvent::State(state))) =
                tokio::time::timeout(Duration::from_millis(100), k.events.recv()).await
            {
                states.push(state);
            }
        }
        assert!(
            states.iter().any(|s| s.running.is_some()),
            "no mid-cell refresh"
        );
        assert!(
            states
                .iter()
                .any(|s| s.running.is_none() && s.get("first").is_some()),
            "no after-cell refresh"
        );
    }
}

mod capabilities {
    use super::*;

    #[tokio::test]
    async fn a_capability_may_ask_for_the_runtime_state_mid_cell() {
        let k = kernel();
        let started = Instant::now();
        let r = ok(
            &k,
            "before = 5\nr = probe.getRuntimeState()\n(r.totalVariables, r['total_variables'], r.names, r.alive)",
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("(1, 1, ['before'], True)"));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn replies_larger_than_64k_arrive_intact() {
        let k = kernel();
        let big: String = (0..300_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        std::fs::write(k.dir.path().join("big.txt"), &big).unwrap();
        let r = ok(&k, "import hashlib\ndata = fs.read('big.txt')\n(len(data), hashlib.sha256(data.encode()).hexdigest())").await;
        let expected = format!("(300000, '{}')", sha256_hex(big.as_bytes()));
        assert_eq!(r.value_repr.as_deref(), Some(expected.as_str()));
        let r = ok(
            &k,
            "echoed = probe.echo({'nested': [{'x': 'y' * 100000}]})\nlen(echoed.nested[0].x)",
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("100000"));
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(bytes)?;
                child.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    #[tokio::test]
    async fn fs_refuses_escapes() {
        let k = kernel();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), k.dir.path().join("link")).unwrap();
        for path in ["../secret.txt", "/etc/passwd", "link/secret.txt"] {
            let r = run(&k, &format!("fs.read({path:?})")).await;
            let err = r.error.unwrap();
            assert_eq!(err.type_name, "PermissionError", "{path}: {err:?}");
            assert!(
                err.message.contains("outside the workspace"),
                "{}",
                err.message
            );
            assert!(!err.traceback.contains("Calls.call"), "{}", err.traceback);
        }
        let r = run(&k, "fs.write('link/new.txt', 'x')").await;
        assert_eq!(r.error.unwrap().type_name, "PermissionError");
        assert!(!outside.path().join("new.txt").exists());
        let missing = run(&k, "fs.read('nope.txt')").await.error.unwrap();
        assert_eq!(missing.type_name, "FileNotFoundError");
    }

    #[tokio::test]
    async fn fs_write_respects_unsaved_editor_changes_and_announces_writes() {
        let mut k = kernel();
        let target = k.dir.path().canonicalize().unwrap().join("notes.md");
        std::fs::write(&target, "disk").unwrap();
        k.dirty
            .send(Arc::new(BTreeSet::from([target.clone()])))
            .unwrap();
        let err = run(&k, "fs.write('notes.md', 'agent')")
            .await
            .error
            .unwrap();
        assert_eq!(err.type_name, "PermissionError");
        assert!(err.message.contains("unsaved changes"), "{}", err.message);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "disk");
        k.dirty.send(DirtyPaths::default()).unwrap();
        let r = ok(&k, "w = fs.write('notes.md', 'agent')\n(w.path, w.bytes, fs.exists('notes.md'), fs.list())").await;
        assert_eq!(
            r.value_repr.as_deref(),
            Some("('notes.md', 5, True, ['notes.md'])")
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "agent");
        // The write is announced with what the file held before and after
        // (what `/undo` puts back).
        assert_eq!(
            k.written.try_recv().unwrap(),
            FsWritten {
                path: target,
                before: Prior::Bytes(b"disk".to_vec()),
                after: b"agent".to_vec(),
            }
        );
    }

    /// `fs.edit` changes one exact snippet and says where; it refuses a
    /// snippet that is missing or occurs a different number of times than
    /// asked (naming the lines), and a file with unsaved edits — writing
    /// nothing in each case.
    #[tokio::test]
    async fn fs_edit_replaces_exactly_what_it_is_told_or_nothing() {
        let mut k = kernel();
        let target = k.dir.path().canonicalize().unwrap().join("app.py");
        let original = "def f():\n    return 1\n\ndef g():\n    return 1\n";
        std::fs::write(&target, original).unwrap();

        let refused = run(&k, "fs.edit('app.py', 'return 1', 'return 2')").await;
        assert!(
            refused.files_changed.is_empty(),
            "a refused edit changed nothing"
        );
        let ambiguous = refused.error.unwrap();
        assert_eq!(ambiguous.type_name, "ValueError");
        assert!(
            ambiguous.message.contains("occurs 2 times (lines 2, 5)"),
            "{}",
            ambiguous.message
        );
        let missing = run(&k, "fs.edit('app.py', 'return 3', 'return 4')")
            .await
            .error
            .unwrap();
        assert_eq!(missing.type_name, "ValueError");
        assert!(missing.message.contains("not found"), "{}", missing.message);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), original);
        assert!(k.written.try_recv().is_err(), "nothing was written");

        let r = ok(
            &k,
            "e = fs.edit('app.py', 'def g():\\n    return 1', 'def g():\\n    return 2')\n(e.path, e.replaced, e.line)",
        )
        .await;
        assert_eq!(r.value_repr.as_deref(), Some("('app.py', 1, 4)"));
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "def f():\n    return 1\n\ndef g():\n    return 2\n"
        );
        assert_eq!(
            k.written.try_recv().unwrap(),
            FsWritten {
                path: target.clone(),
                before: Prior::Bytes(original.as_bytes().to_vec()),
                after: b"def f():\n    return 1\n\ndef g():\n    return 2\n".to_vec(),
            }
        );

        let all = ok(&k, "fs.edit('app.py', 'return', 'yield', count=2).replaced").await;
        assert_eq!(all.value_repr.as_deref(), Some("2"));
        // The result says which files the cell changed, with line counts
        // (what the model is told): one entry per file, writes summed.
        let two = ok(
            &k,
            "fs.write('new.txt', 'a\\nb\\n')\nfs.edit('app.py', 'yield 1', 'yield 10')\nfs.edit('app.py', 'yield 2', 'yield 20')",
        )
        .await;
        assert_eq!(
            two.files_changed,
            vec![
                FileChanged {
                    path: "new.txt".into(),
                    added: 2,
                    removed: 0
                },
                FileChanged {
                    path: "app.py".into(),
                    added: 2,
                    removed: 2
                },
            ]
        );
        assert!(all.files_changed.len() == 1 && r.files_changed.len() == 1);

        k.dirty
            .send(Arc::new(BTreeSet::from([target.clone()])))
            .unwrap();
        let dirty = run(&k, "fs.edit('app.py', 'def f', 'def h')")
            .await
            .error
            .unwrap();
        assert_eq!(dirty.type_name, "PermissionError");
        assert!(std::fs::read_to_string(&target).unwrap().contains("def f"));
    }

    /// `fs.apply_patch` takes a unified diff as models write it (a wrong
    /// line number is forgiven, a wrong context is not), changes several
    /// files at once, and writes nothing when one hunk does not match.
    #[tokio::test]
    async fn fs_apply_patch_changes_every_file_or_none() {
        let k = kernel();
        let root = k.dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "x = 1\ny = 2\n").unwrap();
        let cell = |patch: &str| {
            format!(
                "r = fs.apply_patch({patch:?})\n[(f.path, f.added, f.removed) for f in r.files]"
            )
        };
        let bad = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+z = 3\n--- a/a.py\n+++ b/a.py\n@@ -2 +2 @@\n-y = 99\n+y = 3\n";
        let refused = run(&k, &cell(bad)).await;
        let error = refused.error.unwrap();
        assert_eq!(error.type_name, "ValueError");
        assert!(
            error.message.contains("a.py: hunk 1 does not match"),
            "{}",
            error.message
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.py")).unwrap(),
            "x = 1\ny = 2\n"
        );
        assert!(!root.join("b.py").exists(), "nothing was written");
        assert!(refused.files_changed.is_empty());

        let good = "--- a/a.py\n+++ b/a.py\n@@ -7,2 +7,2 @@\n x = 1\n-y = 2\n+y = 20\n--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+z = 3\n";
        let r = ok(&k, &cell(good)).await;
        assert_eq!(
            r.value_repr.as_deref(),
            Some("[('a.py', 1, 1), ('b.py', 1, 0)]")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.py")).unwrap(),
            "x = 1\ny = 20\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("b.py")).unwrap(),
            "z = 3\n"
        );
        assert_eq!(
            r.files_changed,
            vec![
                FileChanged {
                    path: "a.py".into(),
                    added: 1,
                    removed: 1
                },
                FileChanged {
                    path: "b.py".into(),
                    added: 1,
                    removed: 0
                },
            ]
        );
    }

    /// Review finding: the workbench writes on a cell's behalf outside the
    /// sandbox, so `fs.write`/`fs.edit`/`fs.apply_patch` must refuse what
    /// the sandbox keeps read-only (`.git/`, `.hello-tui/`, at any depth),
    /// or a hook or `core.fsmonitor` would run at the user's next git
    /// command. A written file keeps its permissions.
    #[tokio::test]
    async fn fs_never_writes_git_or_workbench_state_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let k = kernel();
        let root = k.dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        for cell in [
            "fs.write('.git/hooks/pre-commit', '#!/bin/sh\\nid\\n')",
            "fs.write('sub/.git/config', '[core]\\n')",
            "fs.write('.hello-tui/sessions/forged.jsonl', '{}')",
            "fs.edit('.git/config', '[core]', '[core]\\n\\tfsmonitor = id')",
            "fs.apply_patch('--- /dev/null\\n+++ b/ok.txt\\n@@ -0,0 +1 @@\\n+fine\\n--- a/.git/config\\n+++ b/.git/config\\n@@ -1 +1,2 @@\\n [core]\\n+\\tpager = id\\n')",
        ] {
            let error = run(&k, cell).await.error.unwrap();
            assert_eq!(error.type_name, "PermissionError", "{cell}: {error:?}");
            assert!(
                error.message.contains("read-only to cells"),
                "{cell}: {}",
                error.message
            );
        }
        assert!(!root.join(".git/hooks/pre-commit").exists());
        assert!(!root.join("sub/.git/config").exists());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert!(
            !root.join("ok.txt").exists(),
            "a patch touching .git writes nothing"
        );

        let script = root.join("run.sh");
        std::fs::write(&script, "echo a\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o751)).unwrap();
        ok(&k, "fs.edit('run.sh', 'echo a', 'echo b')").await;
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o751, "still executable");
    }

    #[tokio::test]
    async fn shell_runs_in_the_workspace_with_a_timeout() {
        let k = kernel();
        std::fs::write(k.dir.path().join("here.txt"), "").unwrap();
        let r = ok(
            &k,
            "r = shell.run('ls; echo err >&2; exit 3')\n(r.code, r.stdout, r.stderr)",
        )
        .await;
        assert_eq!(
            r.value_repr.as_deref(),
            Some("(3, 'here.txt\\n', 'err\\n')")
        );
        let started = Instant::now();
        let err = run(&k, "shell.run('sleep 30', timeout=0.5)")
            .await
            .error
            .unwrap();
        assert_eq!(err.type_name, "TimeoutError");
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[tokio::test]
    async fn an_approval_answered_after_the_cell_gave_up_runs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (ask_tx, mut ask_rx) = mpsc::channel(4);
        let shell = ShellCapability::new(dir.path(), Arc::new(AskUser::new(ask_tx)), unconfined());
        let mut config = KernelConfig::for_workspace(dir.path());
        config.auto_refresh = None;
        let (rt, _events) =
            CodeRuntime::new(config, CapabilityRegistry::new().with(Arc::new(shell)));
        let r = rt
            .execute(
                "shell.run('touch approved.txt')",
                Some(Duration::from_millis(500)),
            )
            .await;
        assert_eq!(r.outcome, ExecOutcome::TimedOut { restarted: false });
        let mut request = ask_rx.recv().await.unwrap();
        assert_eq!(request.command, "touch approved.txt");
        // The call was cancelled with the cell: nobody listens any more.
        tokio::time::timeout(Duration::from_secs(5), request.respond.closed())
            .await
            .expect("the cancelled call lets go of its question");
        assert!(request.respond.send(ApprovalDecision::AllowOnce).is_err());
        // A cell that ends after it: the kernel runs one thing at a time,
        // so the late answer had its chance to run anything before.
        assert!(rt.execute("1", None).await.ok);
        assert!(!dir.path().join("approved.txt").exists());
        // Approved in time, the same command runs.
        let rt2 = rt.clone();
        let cell = tokio::spawn(async move {
            rt2.execute("shell.run('touch approved.txt').code", None)
                .await
        });
        let request = ask_rx.recv().await.unwrap();
        request.respond.send(ApprovalDecision::AllowOnce).unwrap();
        assert_eq!(cell.await.unwrap().value_repr.as_deref(), Some("0"));
        assert!(dir.path().join("approved.txt").exists());
    }

    #[tokio::test]
    async fn shell_denial_reason_reaches_the_cell() {
        let k = kernel_with(|_| {}, true);
        let err = run(&k, "shell.run('rm -rf /')").await.error.unwrap();
        assert_eq!(err.type_name, "PermissionError");
        assert!(
            err.message.contains("no shell in this test"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn proxies_check_arguments_like_python_functions() {
        let k = kernel();
        let err = run(&k, "fs.read()").await.error.unwrap();
        assert_eq!(err.type_name, "TypeError");
        assert!(
            err.message.contains("missing required argument 'path'"),
            "{}",
            err.message
        );
        let err = run(&k, "fs.read('a', bogus=1)").await.error.unwrap();
        assert!(err.message.contains("unexpected keyword argument 'bogus'"));
        let err = run(&k, "probe.echo({1, 2})").await.error.unwrap();
        assert!(err.message.contains("JSON"), "{}", err.message);
        let r = ok(&k, "repr(fs)").await;
        assert!(r.value_repr.unwrap().contains("read(path)"));
    }
}

/// The driver's state frames on the wire: whole, then deltas.
mod listing_protocol {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

    use hello_tui::kernel::protocol::{KernelMessage, parse_kernel_line};
    use hello_tui::kernel::{DriverDir, Listing, StateUpdate, Variable};
    use serde_json::{Value, json};

    struct Driver {
        _files: DriverDir,
        child: Child,
        input: ChildStdin,
        output: BufReader<ChildStdout>,
    }

    impl Driver {
        fn start() -> Self {
            Self::start_with(json!({}))
        }

        fn start_with(config: Value) -> Self {
            let files = DriverDir::create_in(&std::env::temp_dir()).expect("driver written");
            let mut child = Command::new("python3")
                .arg("-u")
                .arg(files.entry())
                .arg(config.to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("python3 starts");
            let input = child.stdin.take().expect("stdin");
            let output = BufReader::new(child.stdout.take().expect("stdout"));
            let mut driver = Self {
                _files: files,
                child,
                input,
                output,
            };
            driver.wait_for("ready");
            driver
        }

        fn send(&mut self, frame: Value) {
            writeln!(self.input, "{frame}").expect("write");
        }

        fn next_frame(&mut self) -> Value {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).expect("read") > 0,
                "driver exited"
            );
            serde_json::from_str(&line).expect("json frame")
        }

        fn wait_for(&mut self, kind: &str) -> Value {
            loop {
                let frame = self.next_frame();
                if frame["type"] == kind {
                    return frame;
                }
            }
        }

        fn run(&mut self, id: u64, code: &str) {
            self.send(json!({"type": "execute", "id": id, "code": code}));
            assert_eq!(self.wait_for("result")["ok"], true, "{code}");
        }

        /// Runs a cell and returns what it printed.
        fn output_of(&mut self, id: u64, code: &str) -> String {
            self.send(json!({"type": "execute", "id": id, "code": code}));
            let mut printed = String::new();
            loop {
                let frame = self.next_frame();
                match frame["type"].as_str() {
                    Some("stream") => printed.push_str(frame["text"].as_str().unwrap_or("")),
                    Some("result") => {
                        assert_eq!(frame["ok"], true, "{frame}");
                        return printed;
                    }
                    _ => {}
                }
            }
        }

        /// Runs a cell and asks for the listing while it runs; returns
        /// that state once the cell is done.
        fn run_and_look(&mut self, id: u64, code: &str, since: Option<u64>) -> StateUpdate {
            self.send(json!({"type": "execute", "id": id, "code": code}));
            std::thread::sleep(std::time::Duration::from_millis(5));
            self.send(json!({"type": "describe", "id": 1, "since": since}));
            let (mut state, mut done) = (None, false);
            while state.is_none() || !done {
                let frame = self.next_frame();
                match frame["type"].as_str() {
                    Some("state") => state = Some(state_update(&frame)),
                    Some("result") => done = true,
                    _ => {}
                }
            }
            state.expect("a state frame")
        }

        fn describe(&mut self, since: Option<u64>) -> Value {
            self.send(json!({"type": "describe", "id": 1, "since": since}));
            self.wait_for("state")
        }
    }

    impl Drop for Driver {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn names(frame: &Value) -> Vec<&str> {
        frame["variables"]
            .as_array()
            .expect("variables")
            .iter()
            .map(|v| v["name"].as_str().expect("name"))
            .collect()
    }

    /// Random cells over a few names (rebinding, in-place and nested
    /// mutation, deletes, aliases, modules, hidden names); after each, the
    /// host's merged listing must equal a listing built from scratch.
    #[test]
    fn merged_deltas_equal_a_listing_from_scratch() {
        random_cells_against_scratch(json!({}), false);
    }

    /// The same with a cap of three variables (the first three in namespace
    /// order are listed) and a look in the middle of every cell.
    #[test]
    fn capped_listing_with_looks_mid_cell_equals_a_listing_from_scratch() {
        random_cells_against_scratch(json!({"max_variables": 3}), true);
    }

    fn random_cells_against_scratch(config: Value, look_mid_cell: bool) {
        let mut driver = Driver::start_with(config.clone());
        let mut listing = Listing::default();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut deltas = 0;
        for id in 1..=250 {
            let mut code = String::new();
            for step in 0..=next(4) {
                if look_mid_cell && step == 1 {
                    code.push_str("__import__('time').sleep(0.01)\n");
                }
                let x = format!("n{}", next(6));
                let y = format!("n{}", next(6));
                let k = next(5);
                let op = match next(12) {
                    0 => format!("{x} = [{k}, 'a']"),
                    1 => format!("{x} = {{'k': [{k}], 'j': {k}}}"),
                    2 => format!("{x} = {k}"),
                    3 => format!("{x} = 's' * {k}"),
                    4 => format!("{x}.append({k})"),
                    5 => format!("{x}[0] = True"),
                    6 => format!("del {x}"),
                    7 => format!("{x} = {y}"),
                    8 => format!("{x}['k'].append({k})"),
                    9 => format!("import json as {x}"),
                    10 => format!("_{x} = {k}"),
                    _ => format!("{x} = {{{k}, 'z'}}"),
                };
                code.push_str(&format!("try:\n    {op}\nexcept Exception:\n    pass\n"));
            }
            if look_mid_cell {
                let during = driver.run_and_look(id, &code, listing.epoch());
                listing.apply(during).expect("a look mid-cell applies");
            } else {
                driver.run(id, &code);
            }
            let frame = driver.describe(listing.epoch());
            let update = state_update(&frame);
            deltas += usize::from(update.base.is_some());
            let merged = listing.apply(update).expect("delta on the listing held");
            // Ground truth without any cache: a fresh copy of the driver's
            // inspector, run from a cell over the same namespace.
            let fresh = driver.output_of(
                1000 + id,
                &format!(
                    "import sys as _sys\n_k = _sys.modules['hello_tui_kernel.listing'].Kernel({config})\n_k.ns = globals()\n_k.hidden = {{'_k', '_sys'}}\nprint(_k.describe(0))\ndel _k, _sys"
                ),
            );
            let fresh: Value = serde_json::from_str(&fresh).expect("fresh listing");
            let truth = state_update(&fresh);
            let shown = |v: &Variable| {
                (
                    v.name.clone(),
                    v.type_name.clone(),
                    v.kind,
                    v.summary.clone(),
                    v.size,
                    v.preview.clone(),
                )
            };
            assert_eq!(
                merged.variables.iter().map(shown).collect::<Vec<_>>(),
                truth.variables.iter().map(shown).collect::<Vec<_>>(),
                "after cell {id}:\n{code}"
            );
            assert_eq!(merged.truncated, truth.truncated, "after cell {id}");
        }
        assert!(deltas >= 249, "deltas were used: {deltas}");
    }

    fn state_update(frame: &Value) -> StateUpdate {
        let line = serde_json::to_vec(frame).expect("encode");
        match parse_kernel_line(&line) {
            Some(KernelMessage::State { update, .. }) => update,
            other => panic!("not a state frame: {other:?}"),
        }
    }

    /// Past the time budget the rest is listed without previews, the
    /// listing says it was cut, and those entries are inspected again.
    #[test]
    fn a_spent_time_budget_marks_the_listing_truncated() {
        let mut driver = Driver::start_with(json!({"describe_budget_s": 0}));
        driver.run(1, "a = 1\nb = [1]");
        for since in [None, Some(1)] {
            let frame = driver.describe(since);
            assert_eq!(frame["truncated"], true, "{frame}");
            let summaries: Vec<&str> = frame["variables"]
                .as_array()
                .expect("variables")
                .iter()
                .map(|v| v["summary"].as_str().unwrap_or(""))
                .collect();
            assert!(
                summaries.iter().all(|s| s.contains("time budget")),
                "{frame}"
            );
            if since.is_none() {
                assert_eq!(summaries.len(), 2, "{frame}");
            }
        }
    }

    #[test]
    fn only_what_changed_travels() {
        let mut driver = Driver::start();
        driver.run(1, "xs = [1, 2]\nn = 1\nbig = list(range(1000))");
        let whole = driver.describe(None);
        assert_eq!(whole["base"], Value::Null);
        assert_eq!(names(&whole), ["xs", "n", "big"]);
        let epoch = whole["epoch"].as_u64().expect("epoch");

        let idle = driver.describe(Some(epoch));
        assert_eq!(idle["base"], epoch);
        assert!(names(&idle).is_empty(), "{idle}");

        driver.run(2, "xs.append(3)\nm = 2\ndel n");
        let delta = driver.describe(idle["epoch"].as_u64());
        assert_eq!(names(&delta), ["xs", "m"]);
        assert_eq!(delta["removed"], json!(["n"]));
        assert_eq!(delta["variables"][0]["changed_by"], 2);
        assert!(
            delta.get("order").is_none(),
            "appending gives the order: {delta}"
        );

        // A host holding some other listing gets the whole one.
        let stale = driver.describe(Some(epoch));
        assert_eq!(stale["base"], Value::Null);
        assert_eq!(names(&stale), ["xs", "big", "m"]);
    }
}

/// Route 10: a cell can write protocol frames (here through the driver's
/// own `send`). A forged `ready` naming another program must never choose
/// the next kernel's interpreter, and a forged `result` for another cell id
/// is ignored.
#[tokio::test(flavor = "multi_thread")]
async fn forged_frames_never_choose_the_interpreter_or_answer_for_another_cell() {
    let k = kernel();
    let marker = k.dir.path().join("evil-ran");
    let evil = k.dir.path().join("evil.sh");
    std::fs::write(
        &evil,
        format!(
            "#!/bin/sh\ntouch {}\nexec python3 \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    let forge = format!(
        "from hello_tui_kernel.framing import send\n\
send({{'type': 'ready', 'python': '0.0', 'pid': 1, 'executable': {:?}}})\n\
send({{'type': 'result', 'id': 999, 'ok': True, 'value_repr': 'forged'}})\n\
'real'",
        evil.display().to_string()
    );
    let r = ok(&k, &forge).await;
    assert_eq!(r.value_repr.as_deref(), Some("'real'"));
    let r = run(&k, "import os\nos._exit(3)").await;
    assert!(!r.ok);
    let r = ok(&k, "40 + 2").await;
    assert_eq!(r.value_repr.as_deref(), Some("42"));
    assert!(!marker.exists(), "the forged executable ran as the kernel");
}

/// A capability call bigger than a frame may be once hung the cell until its
/// timeout (the host dropped the frame). It fails at once, clearly, and the
/// kernel goes on.
#[tokio::test(flavor = "multi_thread")]
async fn an_oversized_capability_call_fails_at_once_with_a_clear_error() {
    let k = kernel();
    let r = run(&k, "fs.write('big.txt', 'x' * (17 << 20))").await;
    let error = r.error.expect("the call is refused");
    assert_eq!(error.type_name, "ValueError", "{error:?}");
    assert!(error.message.contains("at most"), "{}", error.message);
    assert!(!k.dir.path().join("big.txt").exists());
    let r = ok(&k, "fs.write('small.txt', 'x' * 1000)['bytes']").await;
    assert_eq!(r.value_repr.as_deref(), Some("1000"));
}

/// "1108157 characters dropped" was once all the model heard of 200 MB of
/// output: the driver's own count vanished in the second cut. Now the counts
/// add up exactly: kept + dropped characters + dropped bytes = printed.
#[tokio::test(flavor = "multi_thread")]
async fn the_model_is_told_exactly_how_much_output_was_dropped() {
    use hello_tui::agent::tool_result::{MAX_STREAM_CHARS, from_exec};
    let k = kernel();
    let printed: u64 = 5_000_000;
    let r = ok(&k, &format!("print('x' * {printed}, end='')")).await;
    let state = k.rt.describe().await.unwrap();
    let stdout = from_exec(&r, &state, None)["stdout"]
        .as_str()
        .unwrap()
        .to_owned();
    let counts =
        regex::Regex::new(r"\[(\d+) characters and (\d+) more bytes of output dropped\]").unwrap();
    let caps = counts.captures(&stdout).expect("both counts are given");
    let (chars, bytes): (u64, u64) = (caps[1].parse().unwrap(), caps[2].parse().unwrap());
    assert_eq!(
        chars + bytes + MAX_STREAM_CHARS as u64,
        printed,
        "{}",
        &caps[0]
    );
}

/// Issue 12: output a thread printed after its cell ended was counted in
/// the next cell. It is background output now: never in a cell's
/// stdout/stderr, reported in the next result's `background` and as stream
/// events without a cell.
#[tokio::test(flavor = "multi_thread")]
async fn late_thread_output_is_background_output_not_the_next_cells() {
    let mut k = kernel();
    ok(
        &k,
        "import threading, time\ndef late(tag):\n    time.sleep(0.3)\n    print('LATE ' + tag)\nthreading.Thread(target=late, args=('during',)).start()",
    )
    .await;
    // Cell 2 runs while the thread prints: the case that was miscounted.
    let r = ok(&k, "time.sleep(0.8)\nprint('cell two')").await;
    assert_eq!(r.stdout, "cell two\n");
    assert!(r.background.contains("LATE during"), "{:?}", r.background);
    let mut unattributed = String::new();
    while let Ok(event) = k.events.try_recv() {
        if let KernelEvent::Stream {
            exec_id: None,
            text,
            ..
        } = event
        {
            unattributed.push_str(&text);
        }
    }
    assert!(unattributed.contains("LATE during"), "{unattributed:?}");

    // Printed between cells: reported with the next cell, not in it.
    ok(
        &k,
        "threading.Thread(target=late, args=('between',)).start()",
    )
    .await;
    // Wait for the thread's line to arrive (as a stream event without a
    // cell), not for a time that a loaded machine may overrun.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), k.events.recv())
            .await
            .expect("the thread printed")
            .expect("events flow");
        if let KernelEvent::Stream {
            exec_id: None,
            text,
            ..
        } = event
            && text.contains("LATE between")
        {
            break;
        }
        assert!(Instant::now() < deadline, "never printed");
    }
    let r = ok(&k, "print('cell four')").await;
    assert_eq!(r.stdout, "cell four\n");
    assert!(r.background.contains("LATE between"), "{:?}", r.background);
    assert!(!r.background.contains("LATE during"), "reported once");

    // A thread the cell starts (and waits for) is the cell's own output.
    let r = ok(
        &k,
        "t = threading.Thread(target=lambda: print('mine'))\nt.start()\nt.join()",
    )
    .await;
    assert_eq!(r.stdout, "mine\n");
    assert!(r.background.is_empty(), "{:?}", r.background);
}

/// Issue 15: a pyenv-style shim as the configured interpreter is run once
/// (to ask for `sys.executable`), not on every kernel start: starts and
/// restarts run the interpreter behind it directly.
#[tokio::test(flavor = "multi_thread")]
async fn a_shim_interpreter_is_resolved_once_not_run_per_start() {
    use std::os::unix::fs::PermissionsExt;
    let shims = tempfile::tempdir().unwrap();
    let runs = shims.path().join("runs");
    let shim = shims.path().join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho run >> {}\nexec python3 \"$@\"\n",
            runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let k = kernel_with(|c| c.python = shim.clone(), false);
    ok(&k, "x = 1").await;
    let r = run(&k, "import os\nos._exit(3)").await;
    assert!(!r.ok);
    let r = ok(&k, "import sys\nsys.executable").await;
    let executable = r.value_repr.unwrap();
    assert!(
        !executable.contains(&*shims.path().to_string_lossy()),
        "{executable}"
    );
    let count = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(count, 1, "two kernel starts, one run of the shim");
}

/// Issue 29: the kernel's variables survive a restart. After each cell the
/// driver keeps what changed in the workbench's store (`_vars`); a kernel
/// that was killed gets it back before its next cell runs, and that cell's
/// output says what came back and what was never kept. A session's folder
/// brings them back in a new process (`--continue`).
mod kept_variables {
    use super::*;
    use hello_tui::kernel::KeepLimits;
    use hello_tui::session::{VarStore, VarsPlace, VarsReport};

    const LIMITS: KeepLimits = KeepLimits {
        per_variable_bytes: 64 << 10,
        total_bytes: 1 << 20,
    };

    fn runtime(dir: &std::path::Path, store: &VarStore) -> CodeRuntime {
        let registry = CapabilityRegistry::new().with(Arc::new(store.clone()));
        let mut config = KernelConfig::for_workspace(dir);
        config.auto_refresh = None;
        config.keep_variables = Some(store.limits());
        CodeRuntime::new(config, registry).0
    }

    async fn cell(rt: &CodeRuntime, code: &str) -> ExecResult {
        rt.execute(code, Some(Duration::from_secs(30))).await
    }

    async fn killed(rt: &CodeRuntime) {
        let r = cell(
            rt,
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
        )
        .await;
        assert!(matches!(r.outcome, ExecOutcome::KernelDied { .. }), "{r:?}");
        let message = &r.error.as_ref().unwrap().message;
        assert!(
            message.contains("the variables kept after each cell come back"),
            "the model is told: {message}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn variables_come_back_after_the_kernel_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let (reports, mut reported) = mpsc::unbounded_channel::<VarsReport>();
        let store = VarStore::new(LIMITS).with_reports(reports);
        let rt = runtime(dir.path(), &store);
        let setup = "import json\nimport os.path as p\nx = 41\nrows = [1, 2]\n\
                     def add(a):\n    return a + x\n\
                     fh = open('/dev/null')\nbig = 'y' * 100_000\n";
        assert!(cell(&rt, setup).await.ok);
        killed(&rt).await;
        let r = cell(
            &rt,
            "print(x, rows, add(1), json.dumps([1]), p.join('a', 'b'), '_vars' in globals())",
        )
        .await;
        assert!(r.ok, "{r:?}");
        assert!(
            r.stdout.contains("41 [1, 2] 42 [1] a/b False"),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout
                .contains("[hello-tui] restored 5 variables from before: add, json, p, rows, x"),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("fh (cannot be pickled"), "{}", r.stdout);
        assert!(r.stdout.contains("big (over 64 KiB)"), "{}", r.stdout);
        let report = reported.recv().await.unwrap();
        assert_eq!(report.restored, ["add", "json", "p", "rows", "x"]);
        assert_eq!(
            report
                .not_kept
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["big", "fh"]
        );
        // Only the first cell after the restart restores.
        let again = cell(&rt, "print('plain')").await;
        assert_eq!(again.stdout, "plain\n");
        rt.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_continued_session_brings_its_variables_back_in_a_new_process() {
        let dir = tempfile::tempdir().unwrap();
        let place = VarsPlace {
            workspace: dir.path().to_path_buf(),
            session: "20261206-120000-00ab".into(),
        };
        let first = VarStore::new(LIMITS);
        first.keep_in(place.clone());
        let rt = runtime(dir.path(), &first);
        assert!(
            cell(&rt, "x = 41\ndef add(a):\n    return a + x\n")
                .await
                .ok
        );
        assert!(cell(&rt, "del x\nx = 1").await.ok);
        rt.shutdown().await;
        drop(rt);
        // The store writes on a thread of its own: wait for both files.
        let deadline = Instant::now() + Duration::from_secs(10);
        while place.read_all().unwrap().files.len() < 2 {
            assert!(Instant::now() < deadline, "{:?}", place.read_all());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let files: Vec<String> = place
            .read_all()
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(files, ["add.py", "x.pickle"]);

        // A file the workbench did not sign (a repository can ship one) is
        // never unpickled: `os.system` would run at load.
        let shipped = dir
            .path()
            .join(".hello-tui/sessions/20261206-120000-00ab.vars/evil.pickle");
        std::fs::write(&shipped, b"\x80\x04cos\nsystem\n(S'touch pwned'\ntR.").unwrap();

        let resumed = VarStore::new(LIMITS);
        resumed.resume_from(place);
        let rt = runtime(dir.path(), &resumed);
        let r = cell(&rt, "print('evil' in globals(), add(1))").await;
        assert!(r.ok, "{r:?}");
        assert!(r.stdout.ends_with("False 2\n"), "{}", r.stdout);
        assert!(
            r.stdout
                .contains("evil (not loaded: this workbench did not write it"),
            "{}",
            r.stdout
        );
        assert!(!dir.path().join("pwned").exists());
        rt.shutdown().await;
    }

    /// A list changed in place (same length) is saved while the kernel
    /// is idle, not after every cell: it comes back as changed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_in_place_is_kept_once_the_kernel_is_idle() {
        let dir = tempfile::tempdir().unwrap();
        let store = VarStore::new(LIMITS);
        let rt = runtime(dir.path(), &store);
        assert!(cell(&rt, "rows = [1, 2]").await.ok);
        let deadline = Instant::now() + Duration::from_secs(10);
        let before = loop {
            if let Some(bytes) = store.kept("rows") {
                break bytes;
            }
            assert!(Instant::now() < deadline, "rows never kept");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(cell(&rt, "rows[0] = 9").await.ok);
        while store.kept("rows").as_ref() == Some(&before) {
            assert!(
                Instant::now() < deadline,
                "the change in place was never kept"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        killed(&rt).await;
        let r = cell(&rt, "print(rows)").await;
        assert!(r.stdout.ends_with("[9, 2]\n"), "{}", r.stdout);
        rt.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reset_store_brings_nothing_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = VarStore::new(LIMITS);
        let rt = runtime(dir.path(), &store);
        assert!(cell(&rt, "x = 41").await.ok);
        killed(&rt).await;
        store.reset();
        let r = cell(&rt, "print('x' in globals())").await;
        assert_eq!(r.stdout, "False\n");
        rt.shutdown().await;
    }
}

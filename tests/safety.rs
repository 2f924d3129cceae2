//! The workbench's kernel as the TUI starts it (`app::safety::KernelLauncher`)
//! against a real `python3` and the real sandbox: what a cell may write,
//! start and connect to in each approval mode, and the approval round trip
//! of a `shell.run` command.
//!
//! Where Landlock is missing the sandboxed cases say so loudly and are
//! skipped, unless `HELLO_TUI_REQUIRE_LANDLOCK=1` demands it.

#[path = "support/exec_json.rs"]
mod exec_json;
#[path = "support/loopback.rs"]
#[allow(dead_code)]
mod loopback;
#[path = "support/processes.rs"]
mod processes;
#[path = "support/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use hello_tui::app::update::{handle_app_event, handle_terminal_event};
use hello_tui::app::{AppEvent, AppState};
use hello_tui::config::GlobalOptions;
use hello_tui::config::{ConfigFile, Settings};
use hello_tui::kernel::{ExecOutcome, ExecResult};
use hello_tui::sandbox::{ApprovalMode, SandboxStatus};
use hello_tui::workbench::approvals::ApprovalBroker;
use hello_tui::workbench::event::{self, AppEventReceiver};
use hello_tui::workbench::kernel::{CellOrigin, KernelClient};
use hello_tui::workbench::safety::KernelLauncher;

fn settings(allow_network: bool) -> Settings {
    let flags = GlobalOptions {
        allow_network,
        ..Default::default()
    };
    Settings::merge(ConfigFile::default(), None, &flags, &|_: &str| None).unwrap()
}

/// A workspace inside a scratch root, so `../` is a real writable place
/// (not under `/tmp`, which the sandbox replaces with its private dir).
struct Fixture {
    root: tempfile::TempDir,
    workspace: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
        let workspace = root.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        Self { root, workspace }
    }
}

struct Kernel {
    client: KernelClient,
    confined: bool,
    notice: Option<String>,
    sandbox: Option<std::sync::Arc<hello_tui::sandbox::SandboxSession>>,
    events: AppEventReceiver,
}

fn sandbox() -> Option<SandboxStatus> {
    match SandboxStatus::probe() {
        status @ SandboxStatus::Enforced { .. } => Some(status),
        SandboxStatus::Unavailable(reason) => {
            eprintln!("\n!!!!! LANDLOCK UNAVAILABLE: {reason}; sandboxed kernel cases skipped\n");
            assert!(
                std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none(),
                "HELLO_TUI_REQUIRE_LANDLOCK is set but Landlock is unavailable: {reason}"
            );
            None
        }
    }
}

fn launch(
    fixture: &Fixture,
    mode: ApprovalMode,
    allow_network: bool,
    status: SandboxStatus,
) -> Kernel {
    launch_with(fixture, mode, settings(allow_network), status)
}

fn launch_with(
    fixture: &Fixture,
    mode: ApprovalMode,
    settings: Settings,
    status: SandboxStatus,
) -> Kernel {
    let (tx, events) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), mode);
    let launcher = KernelLauncher::new(tx, settings, fixture.workspace.clone(), broker, status);
    let launched = launcher.launch(mode).unwrap();
    Kernel {
        client: launched.client,
        confined: launched.confined,
        notice: launched.notice,
        sandbox: launched.sandbox,
        events,
    }
}

async fn run(k: &Kernel, code: &str) -> ExecResult {
    run_limited(k, code, None).await
}

/// A cell with its own timeout (`None`: the default).
async fn run_limited(k: &Kernel, code: &str, timeout: Option<Duration>) -> ExecResult {
    let (_, rx) = k.client.execute(code.to_owned(), CellOrigin::User, timeout);
    tokio::time::timeout(Duration::from_secs(30), rx)
        .await
        .expect("the cell finished in time")
        .expect("the service answered")
}

/// The error type a cell raised, or "ok".
async fn outcome(k: &Kernel, code: &str) -> String {
    let r = run(k, code).await;
    match r.error {
        Some(e) => e.type_name,
        None => "ok".to_owned(),
    }
}

async fn still_works(k: &Kernel) {
    let r = run(k, "alive = 41 + 1\nalive").await;
    assert_eq!(r.value_repr.as_deref(), Some("42"), "{r:?}");
}

fn write_cell(path: &Path) -> String {
    format!("open({:?}, 'w').write('x')", path.display().to_string())
}

fn unique(stem: &str) -> String {
    format!("hello-tui-safety-{stem}-{}", std::process::id())
}

/// Writes a cell tries outside the workspace; each must fail in a sandbox
/// (`/tmp` is the kernel's private temp dir: see the private-tmp test).
fn outside_targets(fixture: &Fixture) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into());
    vec![
        home.join(unique("home")),
        fixture.root.path().join("outside.txt"),
    ]
}

/// What a write outside the writable roots raises in a cell: the mount is
/// read-only there (`EROFS`, before Landlock's `EACCES`), and the driver
/// of a confined kernel reports that as the `PermissionError` it is.
const READ_ONLY: &str = "PermissionError";

#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_kernel_writes_only_inside_the_workspace_and_keeps_working() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert!(k.confined, "auto mode must confine the kernel");

    assert_eq!(
        outcome(&k, &write_cell(&fixture.workspace.join("in.txt"))).await,
        "ok"
    );
    assert!(fixture.workspace.join("in.txt").exists());
    assert_eq!(
        outcome(
            &k,
            "import tempfile\nwith tempfile.NamedTemporaryFile() as f: f.write(b'x')"
        )
        .await,
        "ok",
        "the private temp dir is writable"
    );
    for target in outside_targets(&fixture) {
        assert_eq!(
            outcome(&k, &write_cell(&target)).await,
            READ_ONLY,
            "{}",
            target.display()
        );
        assert!(!target.exists(), "{} was written", target.display());
        still_works(&k).await;
    }
    let relative = "open('../escape.txt', 'w').write('x')";
    assert_eq!(outcome(&k, relative).await, READ_ONLY);
    assert!(!fixture.root.path().join("escape.txt").exists());

    let outside = fixture.root.path().join("touched");
    let code = format!(
        "import subprocess\nr = subprocess.run(['touch', {:?}], capture_output=True)\nr.returncode",
        outside.display().to_string()
    );
    let r = run(&k, &code).await;
    assert_ne!(r.value_repr.as_deref(), Some("0"), "{r:?}");
    assert!(!outside.exists(), "a child process escaped the sandbox");
    still_works(&k).await;
}

fn connect_cell(port: u16) -> String {
    format!(
        "import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n'connected'"
    )
}

/// `llm_query` is made by the workbench, outside the sandbox: a kernel
/// with the network closed cannot connect to the model server itself, yet
/// its sub-call reaches it (docs/sandbox.md, "What the sandbox guarantees").
#[tokio::test(flavor = "multi_thread")]
async fn llm_query_reaches_the_model_server_from_a_kernel_without_network() {
    use hello_tui::subcalls::Subcalls;
    use loopback::{Framing, LoopbackServer, Part, Reply, data};
    let Some(status) = sandbox() else { return };
    let server = LoopbackServer::respond_with(Duration::from_secs(30), |_| {
        let body = [
            data(r#"{"choices":[{"index":0,"delta":{"content":"pong"},"finish_reason":"stop"}]}"#),
            "data: [DONE]\r\n\r\n".to_owned(),
        ]
        .concat();
        Reply::sse(Framing::Chunked, vec![Part::Bytes(body.into_bytes())])
    })
    .await;
    let port: u16 = server.base_url.rsplit(':').next().unwrap().parse().unwrap();
    let fixture = Fixture::new();
    let mut settings = settings(false);
    settings.model = Some("m".into());
    settings.base_url = Some(server.base_url.clone());
    let provider = hello_tui::agent::setup::from_settings(&settings, &|_| None)
        .unwrap()
        .unwrap();
    let (tx, _events) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), ApprovalMode::Auto);
    let policy = hello_tui::workbench::subcalls::SubcallApproval(broker.clone());
    let subcalls = Subcalls::new(
        &settings,
        &fixture.workspace,
        Some(provider),
        hello_tui::subcalls::Approvals {
            calls: std::sync::Arc::new(policy),
            cells: std::sync::Arc::new(broker.clone()),
        },
        None,
        &|_| None,
    );
    subcalls.begin_turn();
    let launcher = KernelLauncher::new(
        tx,
        settings,
        fixture.workspace.clone(),
        broker,
        status.clone(),
    )
    .with_subcalls(subcalls);
    let launched = launcher.launch(ApprovalMode::Auto).unwrap();
    assert!(launched.confined);
    let k = Kernel {
        client: launched.client,
        confined: launched.confined,
        notice: launched.notice,
        sandbox: launched.sandbox,
        events: event::channel().1,
    };
    if matches!(
        status,
        SandboxStatus::Enforced {
            network_confined: true,
            ..
        }
    ) {
        assert_eq!(outcome(&k, &connect_cell(port)).await, "PermissionError");
    }
    let r = run(&k, "llm_query('ping')").await;
    assert_eq!(r.value_repr.as_deref(), Some("'pong'"), "{r:?}");
    assert_eq!(server.requests().len(), 1);
}

/// The driver's files are the host's: a confined cell can read them (the
/// kernel runs) but cannot change, add or remove what it runs, now or at
/// the next start.
#[tokio::test(flavor = "multi_thread")]
async fn a_sandboxed_cell_cannot_change_the_drivers_files() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert!(k.confined);
    let code = r##"
import errno, os, hello_tui_kernel.framing as f
d = os.path.dirname(f.__file__)
tries = [
    lambda: open(f.__file__, "a").write("#"),
    lambda: open(os.path.join(d, "evil.py"), "w"),
    lambda: os.remove(f.__file__),
    lambda: os.rename(f.__file__, f.__file__ + ".x"),
]
denied = 0
for t in tries:
    try:
        t()
    except OSError as e:
        # Landlock (EACCES) or the read-only tree (EROFS).
        denied += e.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
denied
"##;
    let r = run(&k, code).await;
    assert_eq!(r.value_repr.as_deref(), Some("4"), "{r:?}");
    still_works(&k).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn network_is_denied_unless_allowed() {
    let Some(status) = sandbox() else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    let fixture = Fixture::new();
    let denied = launch(&fixture, ApprovalMode::Auto, false, status.clone());
    if matches!(
        status,
        SandboxStatus::Enforced {
            network_confined: true,
            ..
        }
    ) {
        assert_eq!(
            outcome(&denied, &connect_cell(port)).await,
            "PermissionError"
        );
        still_works(&denied).await;
    }
    let allowed = launch(&fixture, ApprovalMode::Auto, true, status);
    assert_eq!(outcome(&allowed, &connect_cell(port)).await, "ok");
}

#[tokio::test(flavor = "multi_thread")]
async fn full_mode_runs_unconfined() {
    let fixture = Fixture::new();
    let status = SandboxStatus::probe();
    let k = launch(&fixture, ApprovalMode::Full, false, status);
    assert!(!k.confined);
    let targets = [
        PathBuf::from("/tmp").join(unique("full")),
        fixture.root.path().join("outside.txt"),
    ];
    for target in &targets {
        assert_eq!(outcome(&k, &write_cell(target)).await, "ok");
        assert!(target.exists());
    }
    let _ = std::fs::remove_file(&targets[0]);
}

#[tokio::test(flavor = "multi_thread")]
async fn restarts_stay_sandboxed() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let r = run(&k, "import os\nos._exit(3)").await;
    assert!(r.error.is_some());
    // The next cell starts a fresh kernel through the same config.
    let target = fixture.root.path().join("after-restart.txt");
    assert_eq!(outcome(&k, &write_cell(&target)).await, READ_ONLY);
    assert!(!target.exists());
}

/// Ask mode: the model's `shell.run` waits for the overlay; a denial's
/// reason reaches the cell as a `PermissionError`.
#[tokio::test(flavor = "multi_thread")]
async fn a_denied_shell_command_raises_the_reason_in_the_cell() {
    use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
    let fixture = Fixture::new();
    let status = SandboxStatus::probe();
    let mut k = launch(&fixture, ApprovalMode::Ask, false, status);
    let (_, result) = k.client.execute(
        "shell.run('rm -rf ~/important')".to_owned(),
        CellOrigin::Agent,
        None,
    );
    let mut state = AppState::new(fixture.workspace.clone(), settings(false));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let ev = tokio::time::timeout_at(deadline, k.events.recv())
            .await
            .expect("an approval request")
            .expect("channel open");
        let is_request = matches!(ev, AppEvent::ApprovalRequested(_));
        handle_app_event(&mut state, ev);
        if is_request {
            break;
        }
    }
    let front = state.approvals.front().expect("queued");
    assert_eq!(front.subject.text(), "rm -rf ~/important");
    // The overlay is drawn before the user answers it.
    hello_tui::app::update::before_frame(&mut state);
    let key = |s: &mut AppState, code| {
        handle_terminal_event(s, Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    };
    key(&mut state, KeyCode::Char('d'));
    for c in "never my home".chars() {
        key(&mut state, KeyCode::Char(c));
    }
    key(&mut state, KeyCode::Enter);
    let r = tokio::time::timeout(Duration::from_secs(30), result)
        .await
        .unwrap()
        .unwrap();
    let error = r.error.expect("the cell failed");
    assert_eq!(error.type_name, "PermissionError");
    assert!(error.message.contains("never my home"), "{error:?}");
    still_works(&k).await;
}

/// Runs `code` as `origin`'s cell, answering every approval question with
/// a denial; returns the cell's result and the commands asked about.
async fn run_answering(
    k: &mut Kernel,
    code: &str,
    origin: CellOrigin,
) -> (ExecResult, Vec<String>) {
    use hello_tui::kernel::caps::ApprovalDecision;
    let (_, mut result) = k.client.execute(code.to_owned(), origin, None);
    let mut asked = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        tokio::select! {
            r = &mut result => return (r.expect("the service answered"), asked),
            ev = k.events.recv() => {
                if let Some(AppEvent::ApprovalRequested(pending)) = ev {
                    asked.push(pending.subject.text().to_owned());
                    pending.answer(ApprovalDecision::Deny { reason: "not asked for".into() });
                }
            }
            _ = tokio::time::sleep_until(deadline) => panic!("the cell did not finish"),
        }
    }
}

/// Issue 14, item 7: in ask mode the user's own `%py` cell runs the
/// command they typed without a question; the same command in the model's
/// cell is asked about.
#[tokio::test(flavor = "multi_thread")]
async fn the_users_own_shell_command_is_not_asked_about_the_models_is() {
    let fixture = Fixture::new();
    let mut k = launch(&fixture, ApprovalMode::Ask, false, SandboxStatus::probe());
    let code = "print(shell.run('echo mine')['stdout'], end='')";
    let (r, asked) = run_answering(&mut k, code, CellOrigin::User).await;
    assert_eq!(asked, Vec::<String>::new());
    assert_eq!(r.stdout, "mine\n", "{r:?}");
    let (r, asked) = run_answering(&mut k, code, CellOrigin::Agent).await;
    assert_eq!(asked, vec!["echo mine".to_owned()]);
    assert_eq!(r.error.expect("refused").type_name, "PermissionError");
}

/// Model-written code cannot borrow the user's cell: a thread a model cell
/// left running calls `shell.run` while the user's cell runs, and is asked
/// about. Since issue 25 (route 12), the user's own literal command is
/// asked about too once model code has run: the thread could as well have
/// replaced `shell.run` itself.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_thread_running_during_the_users_cell_is_still_asked_about() {
    let fixture = Fixture::new();
    let mut k = launch(&fixture, ApprovalMode::Ask, false, SandboxStatus::probe());
    let plant = "import threading, time\n\
                 sneaky = {}\n\
                 def later():\n\
                 \x20   time.sleep(1.0)\n\
                 \x20   try:\n\
                 \x20       sneaky['r'] = shell.run('echo sneaky')\n\
                 \x20   except Exception as e:\n\
                 \x20       sneaky['r'] = type(e).__name__\n\
                 threading.Thread(target=later, daemon=True).start()";
    let (r, asked) = run_answering(&mut k, plant, CellOrigin::Agent).await;
    assert!(r.error.is_none() && asked.is_empty(), "{r:?} {asked:?}");
    let (r, mut asked) = run_answering(
        &mut k,
        "import time\ntime.sleep(2.5)\ntry:\n    shell.run('echo mine')\nexcept PermissionError:\n    pass\nsneaky['r']",
        CellOrigin::User,
    )
    .await;
    asked.sort();
    assert_eq!(asked, ["echo mine", "echo sneaky"], "{r:?}");
    assert_eq!(r.value_repr.as_deref(), Some("'PermissionError'"), "{r:?}");
}

/// Issue 25, route 13: the literal-path exemption keyed on the path only,
/// so a model cell that replaced `fs.write` had the user's later
/// `fs.write("notes.py", …)` write its text with no question. Once model
/// code has run in the session, the user's write is shown for review.
#[tokio::test(flavor = "multi_thread")]
async fn a_monkeypatched_write_in_the_users_cell_is_shown_first() {
    let fixture = Fixture::new();
    // As the workbench starts its kernel: writes are reviewed by the broker.
    let (tx, events) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), ApprovalMode::Ask);
    let (_dirty, dirty) = tokio::sync::watch::channel(std::sync::Arc::default());
    let (written, _written) = tokio::sync::mpsc::unbounded_channel();
    let links = hello_tui::kernel_setup::FsLinks {
        dirty,
        written,
        review: Some(std::sync::Arc::new(broker.clone())),
    };
    let launcher = KernelLauncher::new(
        tx,
        settings(false),
        fixture.workspace.clone(),
        broker,
        SandboxStatus::probe(),
    )
    .with_fs_links(links);
    let launched = launcher.launch(ApprovalMode::Ask).unwrap();
    let mut k = Kernel {
        client: launched.client,
        confined: launched.confined,
        notice: launched.notice,
        sandbox: launched.sandbox,
        events,
    };
    let patch = "_real_write = fs.write\n\
                 def _evil(path, text, *a, **kw):\n\
                 \x20   return _real_write(path, 'INJECTED = True\\n', *a, **kw)\n\
                 fs.write = _evil";
    let (r, asked) = run_answering(&mut k, patch, CellOrigin::Agent).await;
    assert!(r.error.is_none() && asked.is_empty(), "{r:?} {asked:?}");
    let (r, asked) = run_answering(
        &mut k,
        "fs.write('notes.py', 'mine = 1\\n')",
        CellOrigin::User,
    )
    .await;
    assert_eq!(asked.len(), 1, "the write was shown: {asked:?} {r:?}");
    assert!(asked[0].contains("INJECTED"), "{asked:?}");
    assert!(!fixture.workspace.join("notes.py").exists(), "{r:?}");
}

/// Route 1: `shell.run` is spawned by the workbench, not the kernel, so it
/// must get the kernel's confinement explicitly. Ordinary work (git in the
/// workspace) still goes on.
#[tokio::test(flavor = "multi_thread")]
async fn shell_run_children_are_confined_like_the_kernel() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let outside = fixture.root.path().join("shell-outside.txt");
    let code = format!(
        "r = shell.run(\"grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; touch {}\")\nprint(r['stdout'], end='')",
        outside.display()
    );
    let r = run(&k, &code).await;
    assert_eq!(
        r.stdout, "CapEff:\t0000000000000000\nNoNewPrivs:\t1\n",
        "{r:?}"
    );
    assert!(!outside.exists(), "shell.run wrote outside the workspace");
    // `git status` works on a repository the user made (one a confined
    // process makes turns read-only under it: tests/sandbox_guard.rs).
    let init = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&fixture.workspace)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let r = run(
        &k,
        "r = shell.run('echo x > a.txt && git status --short')\nprint(r['stdout'], r['stderr'], end='')",
    )
    .await;
    assert_eq!(r.stdout.trim(), "?? a.txt", "{r:?}");
    still_works(&k).await;
}

/// Route 4: the API key's variable never reaches a cell or a shell child,
/// even when `[kernel] env` lists it, while listed names do; and the
/// workbench's own `/proc/<pid>/environ` (which holds the key) is
/// unreadable from both. Cargo's `CARGO_*` variables stand in for secrets.
#[tokio::test(flavor = "multi_thread")]
async fn the_api_key_and_the_hosts_environ_stay_out_of_reach() {
    let Some(status) = sandbox() else { return };
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let fixture = Fixture::new();
    let mut settings = settings(false);
    settings.api_key_env = "CARGO_MANIFEST_DIR".to_owned();
    settings.kernel_env = vec!["CARGO_MANIFEST_DIR".to_owned(), "CARGO_PKG_NAME".to_owned()];
    let k = launch_with(&fixture, ApprovalMode::Auto, settings, status);
    let host = std::process::id();
    let code = format!(
        "import os\n\
print(sorted(k for k in os.environ if k in ('CARGO_MANIFEST_DIR', 'CARGO_PKG_NAME')))\n\
print(shell.run('env | cut -d= -f1 | grep -x -e CARGO_MANIFEST_DIR -e CARGO_PKG_NAME')['stdout'].split())\n\
try:\n    open('/proc/{host}/environ').read(); print('read')\n\
except Exception as e:\n    print(type(e).__name__)\n\
print(shell.run('cat /proc/{host}/environ >/dev/null 2>&1 && echo read || echo denied')['stdout'].strip())\n"
    );
    let r = run(&k, &code).await;
    // Not even there: the host is outside the kernel's PID namespace.
    assert_eq!(
        r.stdout, "['CARGO_PKG_NAME']\n['CARGO_PKG_NAME']\nFileNotFoundError\ndenied\n",
        "{r:?}"
    );
}

/// Route 2: `fs.write` is done by the workbench, outside the sandbox, so a
/// cell plants links for it: at the old predictable temp name, at the
/// target, and as a folder on the way. None may lead the write out.
#[tokio::test(flavor = "multi_thread")]
async fn fs_write_cannot_be_steered_out_by_planted_links() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let victim = fixture.root.path().join("victim");
    let existing = fixture.root.path().join("existing");
    std::fs::write(&existing, "orig").unwrap();
    let code = format!(
        "import os\n\
os.symlink({victim:?}, '.p.hello-tui-tmp')\n\
fs.write('p', 'X')\n\
print(open('p').read(), os.path.islink('p'))\n\
os.symlink({existing:?}, 'q')\n\
try:\n    fs.write('q', 'X')\n\
except PermissionError as e:\n    print('PermissionError', 'symlink' in str(e))\n\
os.symlink({outside:?}, 'd')\n\
try:\n    fs.write('d/x.txt', 'X')\n\
except PermissionError:\n    print('PermissionError')\n\
open('inner.txt', 'w').write('inner')\n\
os.symlink('inner.txt', 'alias')\n\
try:\n    fs.write('alias', 'X')\n\
except PermissionError as e:\n    print('PermissionError', 'symlink' in str(e))\n\
print(open('inner.txt').read())\n",
        victim = victim.display().to_string(),
        existing = existing.display().to_string(),
        outside = fixture.root.path().display().to_string(),
    );
    let r = run(&k, &code).await;
    assert_eq!(
        r.stdout, "X False\nPermissionError True\nPermissionError\nPermissionError True\ninner\n",
        "{r:?}"
    );
    assert!(!victim.exists(), "fs.write followed a planted link out");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "orig");
    assert!(!fixture.root.path().join("x.txt").exists());
    let leftovers: Vec<_> = std::fs::read_dir(&fixture.workspace)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".hello-tui-tmp") && name != ".p.hello-tui-tmp")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Fail closed in the TUI: when the sandbox cannot be prepared, `auto`
/// gets an unconfined kernel only together with a notice saying why (the
/// caller then asks about every cell), never silently.
#[tokio::test(flavor = "multi_thread")]
async fn an_unpreparable_sandbox_is_reported_not_silently_skipped() {
    let fixture = Fixture::new();
    let status = SandboxStatus::Unavailable("no Landlock in this test".into());
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert!(!k.confined);
    let notice = k.notice.as_deref().unwrap_or_default();
    assert!(
        notice.contains("no Landlock in this test") && notice.contains("shown for approval"),
        "{notice}"
    );
    still_works(&k).await;
}

/// Route 5/6 through a cell: the kernel and its `shell.run` children see
/// `.git/` and `.hello-tui/` read-only, so nothing planted there runs at the
/// user's next git command or is sent by `--continue`.
#[tokio::test(flavor = "multi_thread")]
async fn a_cell_cannot_plant_git_hooks_or_forge_sessions() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&fixture.workspace)
        .status()
        .unwrap();
    assert!(git.success());
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let code = concat!(
        "def attempt(path):\n",
        "    try:\n",
        "        open(path, 'w').write('x'); print('wrote', path)\n",
        "    except OSError as e:\n",
        "        print(type(e).__name__, e.strerror)\n",
        "attempt('.git/hooks/pre-commit')\n",
        "attempt('.hello-tui/sessions.jsonl')\n",
        "print(shell.run('git config core.fsmonitor evil || echo refused')['stdout'].strip())\n",
    );
    let r = run(&k, code).await;
    assert_eq!(
        r.stdout, "OSError Read-only file system\nOSError Read-only file system\nrefused\n",
        "{r:?}"
    );
    assert!(!fixture.workspace.join(".git/hooks/pre-commit").exists());
    still_works(&k).await;
}

/// Ordinary work goes on in the sandbox: `pip install --target` into the
/// workspace (from a wheel the cell builds, so no network is needed).
#[tokio::test(flavor = "multi_thread")]
async fn pip_install_target_into_the_workspace_works_confined() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let code = concat!(
        "import sys, zipfile\n",
        "info = 'hello12-0.1.dist-info/'\n",
        "with zipfile.ZipFile('hello12-0.1-py3-none-any.whl', 'w') as z:\n",
        "    z.writestr('hello12/__init__.py', 'X = 42\\n')\n",
        "    z.writestr(info + 'METADATA', 'Metadata-Version: 2.1\\nName: hello12\\nVersion: 0.1\\n')\n",
        "    z.writestr(info + 'WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n",
        "    z.writestr(info + 'RECORD', '')\n",
        "r = shell.run(sys.executable + ' -m pip install -q --no-index --target lib hello12-0.1-py3-none-any.whl', timeout=120)\n",
        "sys.path.insert(0, 'lib')\n",
        "import hello12\n",
        "hello12.X\n",
    );
    let r = run(&k, code).await;
    assert_eq!(r.value_repr.as_deref(), Some("42"), "{r:?}");
    assert!(fixture.workspace.join("lib/hello12/__init__.py").exists());
}

/// Issue 25, the kernel's side: the kernel runs, the user clones a
/// repository into the workspace (`git init sub` from outside), and the
/// next cell can no longer plant a hook or `core.fsmonitor` there, while
/// it still writes the rest of the workspace.
#[tokio::test(flavor = "multi_thread")]
async fn a_repository_made_while_the_kernel_runs_is_read_only_to_its_cells() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert!(k.confined);
    still_works(&k).await;
    let init = std::process::Command::new("git")
        .args(["init", "-q", "sub"])
        .current_dir(&fixture.workspace)
        .output()
        .unwrap();
    assert!(init.status.success(), "{init:?}");
    let code = "import errno, time\n\
def attempt(path, mode):\n\
\x20   try:\n\
\x20       open(path, mode).write('x'); return 'ok'\n\
\x20   except OSError as e:\n\
\x20       return errno.errorcode[e.errno]\n\
end = time.time() + 10\n\
while attempt('sub/.git/hooks/pre-commit', 'w') == 'ok' and time.time() < end: time.sleep(0.01)\n\
print(attempt('sub/.git/hooks/pre-commit', 'w'), attempt('sub/.git/config', 'a'), attempt('sub/work.txt', 'w'))\n";
    let r = run(&k, code).await;
    assert_eq!(r.stdout.trim(), "EROFS EROFS ok", "{r:?}");
    let notice = k
        .sandbox
        .as_ref()
        .and_then(|session| session.appeared_notice())
        .unwrap_or_default();
    assert!(notice.contains("sub/.git"), "{notice}");
}

/// Issue 25 through a cell: `[safety] tmp_size_mb` caps the private
/// `/tmp` the kernel and its `shell.run` children share (`ENOSPC` past it,
/// the cell's file seen by the shell command). Needs root (as CI runs).
#[tokio::test(flavor = "multi_thread")]
async fn the_tmp_a_cell_and_its_shell_commands_share_is_capped() {
    let Some(status) = sandbox() else { return };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("\n!!!!! not root: the /tmp cap is not tried\n");
        return;
    }
    let fixture = Fixture::new();
    let mut settings = settings(false);
    settings.tmp_size_mb = 8;
    let k = launch_with(&fixture, ApprovalMode::Auto, settings, status);
    let code = "import errno\n\
open('/tmp/cell.bin', 'wb').write(b'x' * (5 << 20))\n\
try:\n\
\x20   open('/tmp/more.bin', 'wb').write(b'x' * (5 << 20)); print('written')\n\
except OSError as e:\n\
\x20   print(errno.errorcode[e.errno])\n\
print(shell.run('wc -c < /tmp/cell.bin; head -c 5000000 /dev/zero > /tmp/sh.bin || echo refused')['stdout'], end='')\n";
    let r = run(&k, code).await;
    assert_eq!(r.stdout, "ENOSPC\n5242880\nrefused\n", "{r:?}");
}

/// Issue 12 through a cell: the kernel and its `shell.run` children see a
/// private `/tmp` (none of the host's files, their writes stay off the
/// host, `tempfile` works), and cannot change the mode or times of a file
/// the user owns outside the workspace, while inside they can.
#[tokio::test(flavor = "multi_thread")]
async fn a_cell_gets_a_private_tmp_and_cannot_change_metadata_outside() {
    let Some(status) = sandbox() else { return };
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let fixture = Fixture::new();
    let host_file = PathBuf::from("/tmp").join(unique("cell-host"));
    std::fs::write(&host_file, "host").unwrap();
    let outside = fixture.root.path().join("mine.txt");
    std::fs::write(&outside, "x").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let written = unique("cell-written");
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let code = format!(
        "import errno, os, tempfile\n\
def attempt(name, change):\n\
\x20   try: change(); print(name, 'ok')\n\
\x20   except OSError as e: print(name, errno.errorcode[e.errno])\n\
print(os.path.exists({host:?}), os.path.basename({host:?}) in os.listdir('/tmp'))\n\
with tempfile.NamedTemporaryFile() as f: print(os.path.dirname(f.name))\n\
open('/tmp/{written}', 'w').write('x')\n\
attempt('chmod', lambda: os.chmod({outside:?}, 0o777))\n\
attempt('utime', lambda: os.utime({outside:?}, (0, 0)))\n\
open('in.txt', 'w').write('x')\n\
attempt('chmod-inside', lambda: os.chmod('in.txt', 0o777))\n\
print(shell.run('ls /tmp | grep -c cell-host; chmod 777 {outside} || echo refused')['stdout'], end='')\n",
        host = host_file.display().to_string(),
        outside = outside.display().to_string(),
    );
    let r = run(&k, &code).await;
    let _ = std::fs::remove_file(&host_file);
    let leaked = Path::new("/tmp").join(&written).exists();
    assert_eq!(
        r.stdout, "False False\n/tmp\nchmod EROFS\nutime EROFS\nchmod-inside ok\n0\nrefused\n",
        "{r:?}"
    );
    assert!(!leaked, "a cell's /tmp write reached the host");
    assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o777, 0o600);
    still_works(&k).await;
}

/// A `.git/` a cell creates where there was none is writable to that
/// kernel (a read-only mount needs an existing folder): the workbench says
/// so after the cell, once, naming it, so the user checks its hooks before
/// running git there.
#[tokio::test(flavor = "multi_thread")]
async fn the_workbench_warns_once_when_a_cell_makes_a_git_folder() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let mut k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert!(k.confined);
    let mut state = AppState::new(fixture.workspace.clone(), settings(false));
    state.workbench.safety_mut().kernel_sandbox = k.sandbox.take();
    let notices = |s: &AppState| {
        s.workbench
            .transcript()
            .iter()
            .filter(|m| m.text.contains("appeared during this sandboxed session"))
            .count()
    };
    // One step: the session's guard turns a new `.git` read-only at once,
    // so a cell that goes on to fill it may fail part-way.
    for code in ["x = 1", "import os; os.mkdir('.git')", "y = 2"] {
        let (_, result) = k.client.execute(code.to_owned(), CellOrigin::User, None);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let ev = tokio::time::timeout_at(deadline, k.events.recv())
                .await
                .expect("the cell's events")
                .expect("channel open");
            let finished = matches!(
                ev,
                AppEvent::Kernel(hello_tui::workbench::kernel::KernelUpdate::Finished { .. })
            );
            handle_app_event(&mut state, ev);
            if finished {
                break;
            }
        }
        let r = result.await.unwrap();
        assert!(r.error.is_none(), "{code}: {:?}", r.error);
        let expected = usize::from(code != "x = 1");
        assert_eq!(notices(&state), expected, "after {code}");
    }
    let warning = state
        .workbench
        .transcript()
        .iter()
        .find(|m| m.text.contains("appeared"))
        .unwrap();
    assert!(warning.text.contains(".git"), "{}", warning.text);
}

/// Issue 12's promise: a write outside the writable roots reaches the
/// model as a `PermissionError` that names the path and says why, not as
/// `OSError: Read-only file system`.
#[tokio::test(flavor = "multi_thread")]
async fn a_write_outside_the_roots_is_a_permission_error_naming_the_path() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let r = run(&k, "open('/etc/hello-tui-x', 'w')").await;
    let error = r.error.expect("the write failed");
    assert_eq!(error.type_name, "PermissionError", "{error:?}");
    assert!(error.message.contains("'/etc/hello-tui-x'"), "{error:?}");
    assert!(
        error
            .message
            .contains("outside the sandbox's writable roots"),
        "{error:?}"
    );
    assert!(
        error.traceback.contains("PermissionError: [Errno 13]"),
        "{error:?}"
    );
    assert!(!std::path::Path::new("/etc/hello-tui-x").exists());
    still_works(&k).await;
}

/// A cell sees its own processes only: not the workbench, not the user's
/// other programs, not their command lines.
#[tokio::test(flavor = "multi_thread")]
async fn a_confined_kernel_sees_only_its_own_processes() {
    use std::os::unix::process::CommandExt;
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let marker = unique("argv-marker");
    let mut other = std::process::Command::new("sleep");
    let mut other = other.arg0(&marker).arg("30").spawn().unwrap();
    let code = format!(
        "import os\n\
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n\
print(pids, os.getpid(), os.path.exists('/proc/{host}'), os.path.exists('/proc/{other}'))\n\
print(any(b'{marker}' in open('/proc/%d/cmdline' % p, 'rb').read() for p in pids))\n",
        host = std::process::id(),
        other = other.id(),
    );
    let r = run(&k, &code).await;
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(r.stdout, "[1, 2] 2 False False\nFalse\n", "{r:?}");
}

/// Ctrl+C and the cell timeout go through the sandbox's reaper: an
/// interrupt still raises `KeyboardInterrupt` in the cell (once: the
/// variables are kept), a timeout still interrupts, and a cell that
/// ignores the interrupt is still killed with its kernel.
#[tokio::test(flavor = "multi_thread")]
async fn interrupts_and_timeouts_still_work_confined() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    assert_eq!(
        run(&k, "import os\nkept = os.getpid()\nkept")
            .await
            .value_repr
            .as_deref(),
        Some("2")
    );
    let (_, busy) = k.client.execute(
        "import time\ntime.sleep(30)".to_owned(),
        CellOrigin::User,
        None,
    );
    let mut interrupted = false;
    for _ in 0..200 {
        if k.client.runtime().interrupt() {
            interrupted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(interrupted, "the cell never ran");
    let r = tokio::time::timeout(Duration::from_secs(10), busy)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        r.error.map(|e| e.type_name).as_deref(),
        Some("KeyboardInterrupt")
    );
    assert_eq!(run(&k, "kept").await.value_repr.as_deref(), Some("2"));

    let half_second = Some(Duration::from_millis(500));
    let r = run_limited(&k, "time.sleep(100)", half_second).await;
    assert_eq!(
        r.outcome,
        ExecOutcome::TimedOut { restarted: false },
        "{r:?}"
    );
    let stubborn = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(100)";
    let r = run_limited(&k, stubborn, half_second).await;
    assert_eq!(
        r.outcome,
        ExecOutcome::TimedOut { restarted: true },
        "{r:?}"
    );
    still_works(&k).await;
}

/// The kernel is the child of its namespace's init: when it ends (a
/// restart, a stop), whatever its cells left running ends with it, even a
/// process in a session of its own (which a group kill misses).
#[tokio::test(flavor = "multi_thread")]
async fn background_processes_of_a_cell_die_with_the_kernel() {
    let Some(status) = sandbox() else { return };
    let fixture = Fixture::new();
    let k = launch(&fixture, ApprovalMode::Auto, false, status);
    let start = |tag: u32| {
        let marker = format!("0.{}{tag}", std::process::id());
        let code = format!(
            "import subprocess\n\
subprocess.Popen(['sleep', '300', '{marker}'], start_new_session=True, \
stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nNone"
        );
        (processes::sleep_needle(&marker), code)
    };
    let (restarted, code) = start(1);
    assert!(run(&k, &code).await.error.is_none());
    assert_eq!(processes::started(&restarted).len(), 1, "it runs");
    let r = run(&k, "import os\nos._exit(3)").await;
    assert!(r.lost_state(), "{r:?}");
    assert_eq!(processes::survivors(&restarted), Vec::<i32>::new());

    let (stopped, code) = start(2);
    assert!(run(&k, &code).await.error.is_none());
    assert_eq!(processes::started(&stopped).len(), 1, "it runs");
    k.client.runtime().shutdown().await;
    assert_eq!(processes::survivors(&stopped), Vec::<i32>::new());
}

/// What a cell can see of how its kernel was started: its environment and
/// that of a `shell.run` child, its memory limit, its interpreter, whether
/// it can write outside the workspace and reach a local port.
fn launch_probe(outside: &Path, port: u16) -> String {
    format!(
        "import json, os, resource, socket, sys\n\
seen = {{'env': sorted(os.environ), 'passed': os.environ.get('CARGO_PKG_NAME'),\n\
        'shell_env': sorted(shell.run('env | cut -d= -f1')['stdout'].split()),\n\
        'memory': resource.getrlimit(resource.RLIMIT_AS)[0], 'python': sys.executable,\n\
        'cwd': os.getcwd()}}\n\
try:\n    open({outside:?}, 'w').write('x'); seen['outside'] = 'written'\n\
except OSError as e:\n    seen['outside'] = type(e).__name__\n\
try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close(); seen['network'] = 'connected'\n\
except OSError as e:\n    seen['network'] = type(e).__name__\n\
print(json.dumps(seen, sort_keys=True))\n",
        outside = outside.display().to_string(),
    )
}

/// The workbench's kernel, the kernel of its `rlm_query` loop and the
/// kernel of `hello-tui exec` are started by one launcher
/// (`kernel_launch`): under the same settings a cell in each sees the same
/// environment (the API key's variable in none), the same memory limit,
/// interpreter and confinement. A safety fix made for one front end and
/// not the others fails here.
#[tokio::test(flavor = "multi_thread")]
async fn every_front_end_starts_the_same_kernel_for_the_same_settings() {
    use loopback::{Framing, LoopbackServer, Part, Reply, data};
    let mode = match SandboxStatus::probe() {
        SandboxStatus::Enforced { .. } => ApprovalMode::Auto,
        SandboxStatus::Unavailable(_) => ApprovalMode::Full,
    };
    let fixture = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let probe = launch_probe(
        &fixture.root.path().join("outside.txt"),
        listener.local_addr().unwrap().port(),
    );
    // The model runs the probe once, then answers with what it printed.
    let code = probe.clone();
    let server = LoopbackServer::respond_with(Duration::from_secs(60), move |request| {
        let body = request.json();
        let printed = body["messages"].as_array().and_then(|messages| {
            let tool = messages.iter().find(|m| m["role"] == "tool")?;
            let result: serde_json::Value =
                serde_json::from_str(tool["content"].as_str()?).ok()?;
            Some(result["stdout"].as_str()?.trim().to_owned())
        });
        let (delta, reason) = match printed {
            Some(text) => (serde_json::json!({ "content": text }), "stop"),
            None => {
                let call = serde_json::json!({"index": 0, "id": "c1", "type": "function",
                    "function": {"name": "code_action",
                                 "arguments": serde_json::json!({ "code": code }).to_string()}});
                (serde_json::json!({ "tool_calls": [call] }), "tool_calls")
            }
        };
        let body = [
            data(&serde_json::json!({"choices": [{"index": 0, "delta": delta}]}).to_string()),
            data(
                &serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
                    .to_string(),
            ),
            "data: [DONE]\r\n\r\n".to_owned(),
        ]
        .concat();
        Reply::sse(Framing::Chunked, vec![Part::Bytes(body.into_bytes())])
    })
    .await;
    // Cargo's variables stand in for the key and for a name `[kernel] env`
    // passes on.
    let host = |name: &str| std::env::var(name).unwrap_or_default();
    let config_text = format!(
        "[model]\nname = \"m\"\nbase_url = \"{}\"\napi_key_env = \"CARGO_MANIFEST_DIR\"\n\
         context_window = 32000\n[kernel]\nmemory_limit_mb = 1536\nenv = [\"CARGO_PKG_NAME\"]\n\
         [safety]\napproval = \"{mode}\"\n",
        server.base_url
    );
    let config = fixture.root.path().join("config.toml");
    std::fs::write(&config, &config_text).unwrap();
    let file = ConfigFile::parse(&config_text, &config).unwrap();
    let settings = Settings::merge(file, None, &GlobalOptions::default(), &|_: &str| None).unwrap();

    // The workbench's kernel, with `rlm_query` as the workbench wires it.
    let provider = hello_tui::agent::setup::from_settings(&settings, &|_| None)
        .unwrap()
        .unwrap();
    let (tx, events) = event::channel();
    let broker = ApprovalBroker::new(tx.clone(), mode);
    let subcalls = hello_tui::subcalls::Subcalls::new(
        &settings,
        &fixture.workspace,
        Some(provider),
        hello_tui::subcalls::Approvals::allow_all(),
        None,
        &|_| None,
    );
    subcalls.begin_turn();
    let launched = KernelLauncher::new(
        tx,
        settings,
        fixture.workspace.clone(),
        broker,
        SandboxStatus::probe(),
    )
    .with_subcalls(subcalls)
    .launch(mode)
    .unwrap();
    let k = Kernel {
        client: launched.client,
        confined: launched.confined,
        notice: launched.notice,
        sandbox: launched.sandbox,
        events,
    };
    let tui = run(&k, &probe).await;
    assert!(tui.error.is_none(), "{tui:?}");
    let nested = run(&k, "print(rlm_query('probe'))").await;
    assert!(nested.error.is_none(), "{nested:?}");

    let home = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hello-tui"));
    command
        .arg("exec")
        .arg("-C")
        .arg(&fixture.workspace)
        .arg("--config")
        .arg(&config)
        .args(["--json", "probe"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("CARGO_MANIFEST_DIR", host("CARGO_MANIFEST_DIR"))
        .env("CARGO_PKG_NAME", host("CARGO_PKG_NAME"))
        .env_remove("HELLO_TUI_CONFIG");
    let (events, stdout) = exec_json::run(command, Duration::from_secs(60)).await;
    let exec = events
        .iter()
        .find(|event| event["type"] == "tool.result")
        .and_then(|event| event["stdout"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no tool.result in {stdout}"))
        // exec redacts the key's value from what it prints, and the
        // stand-in key is the checkout's path, which the workspace's path
        // starts with when the build's target dir is inside the checkout.
        .replace("[REDACTED]", &host("CARGO_MANIFEST_DIR"));

    let seen = |printed: &str| -> serde_json::Value {
        serde_json::from_str(printed.trim()).unwrap_or_else(|e| panic!("{e}: {printed}"))
    };
    let tui = seen(&tui.stdout);
    assert_eq!(tui["passed"], host("CARGO_PKG_NAME").as_str(), "{tui}");
    assert!(
        !tui["env"]
            .as_array()
            .unwrap()
            .contains(&"CARGO_MANIFEST_DIR".into()),
        "{tui}"
    );
    assert_eq!(tui["memory"], 1536 * 1024 * 1024, "{tui}");
    if mode == ApprovalMode::Auto {
        assert_ne!(tui["outside"], "written", "{tui}");
    }
    assert_eq!(seen(&nested.stdout), tui, "rlm_query's kernel");
    assert_eq!(seen(&exec), tui, "exec's kernel");
}

//! Repositories that appear in the workspace while sandboxed processes run
//! (the user's `git clone`/`git init` in a terminal, or one a confined
//! process makes): every running sandboxed process gets them read-only,
//! the way processes spawned afterwards do. Real processes, real git.
//!
//! Before the session's guard, a long-lived confined process (the kernel,
//! a language or MCP server) could plant `core.fsmonitor` or a hook in any
//! repository made after it started, to run at the user's next git command
//! outside the sandbox.

#[path = "support/confined.rs"]
mod confined;
#[path = "support/scratch.rs"]
mod scratch;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use hello_tui::sandbox::{SandboxOptions, SandboxSession};

/// A confined, long-lived process: says `ready`, waits for the folder
/// `<ws>/<repo>`, then tries for up to 10 s to create a file in it and to
/// open its `config` (once there) for appending, until both fail with
/// `EROFS` (`protected <ms>`: how long after it saw the folder) or the time
/// is up (`writable`). Then it writes next to the repository and elsewhere
/// in the workspace (`work ok`). It leaves nothing in the repository.
const PROBE: &str = r#"
import errno, os, sys, time
ws, repo = sys.argv[1], sys.argv[2]
git = os.path.join(ws, repo)
print("ready", flush=True)
end = time.time() + 60
while not os.path.isdir(git):
    if time.time() > end:
        print("no repository"); sys.exit(1)
    time.sleep(0.005)
seen = time.time()
def refused(path, flags):
    try:
        fd = os.open(path, flags, 0o755)
    except OSError as e:
        return e.errno == errno.EROFS
    os.close(fd)
    if flags & os.O_CREAT:
        try:
            os.unlink(path)
        except OSError:
            pass  # turned read-only in between: seen on the next try
    return False
while True:
    made = refused(os.path.join(git, "probe-" + os.urandom(8).hex()), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    config = os.path.join(git, "config")
    if made and (not os.path.exists(config) or refused(config, os.O_WRONLY | os.O_APPEND)):
        print("protected", int((time.time() - seen) * 1000), flush=True); break
    if time.time() > seen + 10:
        print("writable", flush=True); break
    time.sleep(0.005)
parent = os.path.dirname(git)
for path in (os.path.join(parent, "work.txt"), os.path.join(ws, "other.txt")):
    open(path, "w").write("x")
print("work ok", flush=True)
"#;

use confined::{Fixture, available};

fn session(fixture: &Fixture) -> SandboxSession {
    SandboxSession::start(&fixture.workspace, false, SandboxOptions::default()).unwrap()
}

/// The session's notice once it names `what` (at most 10 s): the guard
/// records what appeared as it binds it, on its own thread, so on a loaded
/// machine the probe can see the bind first.
fn notice_naming(session: &SandboxSession, what: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let notice = session.appeared_notice().unwrap_or_default();
        if notice.contains(what) || std::time::Instant::now() > deadline {
            return notice;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The probe, confined by `session`, once it said `ready`.
fn start_probe(
    session: &SandboxSession,
    workspace: &Path,
    repo: &str,
) -> (Child, BufReader<ChildStdout>) {
    let mut cmd = Command::new("python3");
    cmd.args(["-c", PROBE])
        .arg(workspace)
        .arg(repo)
        .current_dir(workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    session.install(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout);
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    assert_eq!(first.trim(), "ready");
    (child, lines)
}

/// What the probe said after `ready`, once it ended.
fn finish_probe(mut child: Child, stdout: BufReader<ChildStdout>) -> String {
    let mut rest = String::new();
    for line in stdout.lines() {
        rest.push_str(&line.unwrap());
        rest.push('\n');
    }
    assert!(child.wait().unwrap().success(), "{rest}");
    rest
}

/// Asserts the probe found the repository read-only and could still work,
/// and says how long protection took.
fn assert_protected(said: &str, what: &str) {
    let mut lines = said.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("protected "),
        "{what}: the running process could still write the new repository: {said}"
    );
    eprintln!(
        "{what}: read-only for the running process {} ms after it saw it",
        &first[10..]
    );
    assert_eq!(lines.next(), Some("work ok"), "{said}");
}

fn git(cwd: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(cwd)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// The route of issue 25 this closes: the kernel runs, the user makes a
/// repository in a new folder of the workspace (`git init sub`: the folder
/// and its `.git` a moment apart, the case a watcher misses most easily),
/// and the kernel can no longer write its config or hooks, while the rest
/// of the workspace stays writable.
#[test]
fn a_repository_made_in_a_new_folder_while_a_process_runs_turns_read_only_for_it() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture);
    let (child, stdout) = start_probe(&session, &fixture.workspace, "deep/er/sub/.git");
    std::fs::create_dir_all(fixture.workspace.join("deep/er")).unwrap();
    git(&fixture.workspace.join("deep/er"), &["init", "-q", "sub"]);
    let said = finish_probe(child, stdout);
    assert_protected(&said, "git init in a new folder");
    assert!(fixture.workspace.join("deep/er/sub/work.txt").exists());
    assert!(fixture.workspace.join("other.txt").exists());
    let notice = notice_naming(&session, "deep/er/sub/.git");
    assert!(notice.contains("deep/er/sub/.git"), "{notice}");
}

/// The same for a `git clone` (from a repository outside the workspace)
/// and for the workspace's own `.git`, made by `git init` at its top.
#[test]
fn a_clone_and_the_workspaces_own_new_git_turn_read_only_for_running_processes() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let source = fixture.root.path().join("source");
    std::fs::create_dir(&source).unwrap();
    git(&source, &["init", "-q"]);
    let session = session(&fixture);
    let (clone_probe, clone_out) = start_probe(&session, &fixture.workspace, "cloned/.git");
    let (own_probe, own_out) = start_probe(&session, &fixture.workspace, ".git");
    git(
        &fixture.workspace,
        &["clone", "-q", source.to_str().unwrap(), "cloned"],
    );
    git(&fixture.workspace, &["init", "-q"]);
    assert_protected(&finish_probe(clone_probe, clone_out), "git clone");
    assert_protected(&finish_probe(own_probe, own_out), "git init at the top");
}

/// A repository a confined process makes itself (a cell's `git init`) is
/// the model's: it may have planted its config before anything could see
/// it. Running processes (the maker included, so its `git init` may fail
/// part-way) get it read-only all the same, and the session says it
/// appeared, for the user to check.
#[test]
fn a_repository_a_confined_process_made_is_reported_and_read_only_for_the_others() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture);
    assert_eq!(session.appeared_notice(), None);
    let (child, stdout) = start_probe(&session, &fixture.workspace, "own/.git");
    let mut maker = Command::new("git");
    maker
        .args(["init", "-q", "own"])
        .current_dir(&fixture.workspace)
        .env("GIT_CONFIG_NOSYSTEM", "1");
    session.install(&mut maker).unwrap();
    maker.status().unwrap();
    assert_protected(
        &finish_probe(child, stdout),
        "git init by a confined process",
    );
    let notice = notice_naming(&session, "own/.git");
    assert!(
        notice.contains("own/.git") && notice.contains("hooks/"),
        "{notice}"
    );
}

/// A process started while the guard handles a new repository (its walk
/// may come before the repository, its registration after) gets it
/// read-only too: many short spawns race one `git init`.
#[test]
fn processes_started_around_the_moment_a_repository_appears_get_it_read_only() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture);
    let mut probes = Vec::new();
    for i in 0..6 {
        if i == 3 {
            git(&fixture.workspace, &["init", "-q", "race"]);
        }
        probes.push(start_probe(&session, &fixture.workspace, "race/.git"));
    }
    for (i, (child, stdout)) in probes.into_iter().enumerate() {
        assert_protected(&finish_probe(child, stdout), &format!("probe {i}"));
    }
}

/// Without a root, `hello-tui sandbox` runs the command in a user
/// namespace: the guard must join that one before its mount namespace.
/// Run as `nobody` when the tests run as root (as in CI).
#[test]
fn a_non_root_users_running_command_gets_a_new_repository_read_only() {
    if !available() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err()
    {
        eprintln!("\n!!!!! not root, or no setpriv: non-root case not tried\n");
        return;
    }
    const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");
    let fixture = Fixture::new();
    for path in [fixture.root.path(), &fixture.workspace] {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
    let as_nobody = |program: &str| {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", program])
            .env("HOME", &fixture.workspace)
            .env("GIT_CONFIG_NOSYSTEM", "1");
        cmd
    };
    let mut reach = as_nobody("test");
    reach.args(["-x", BIN]);
    if !reach.status().unwrap().success() {
        eprintln!("\n!!!!! nobody cannot run the binary here: non-root case not tried\n");
        return;
    }
    let mut cmd = as_nobody(BIN);
    cmd.args(["sandbox", "-C"])
        .arg(&fixture.workspace)
        .args(["--", "python3", "-c", PROBE])
        .arg(&fixture.workspace)
        .arg("sub/.git")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    if first.is_empty() {
        let out = child.wait_with_output().unwrap();
        // The kernel refuses unprivileged user namespaces: the sandbox is
        // unavailable for this user and says so, nothing ran.
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        return;
    }
    assert_eq!(first.trim(), "ready");
    let mut init = as_nobody("git");
    init.args(["init", "-q", "sub"])
        .current_dir(&fixture.workspace);
    assert!(init.status().unwrap().success());
    let mut rest = String::new();
    for line in stdout.lines() {
        rest.push_str(&line.unwrap());
        rest.push('\n');
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_protected(
        &format!("{rest}{stderr}"),
        "as nobody, through a user namespace",
    );
    assert!(stderr.contains("sub/.git appeared"), "{stderr}");
}

/// A handle taken inside a repository before it turned read-only keeps
/// writing (a bind changes paths, not what is open): here a folder the
/// confined process holds becomes `sub/.git` by a rename. Nothing short of
/// ending the process takes that away, so the session names the process
/// in its notice.
#[test]
fn a_handle_held_inside_a_new_repository_from_before_is_reported() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let stage = fixture.workspace.join("sub/stage");
    std::fs::create_dir_all(&stage).unwrap();
    let session = session(&fixture);
    const HOLDER: &str = r#"
import errno, os, sys, time
fd = os.open("sub/stage", os.O_RDONLY | os.O_DIRECTORY)
print("holding", flush=True)
end = time.time() + 10
while time.time() < end:
    try:
        os.close(os.open("sub/.git/p-" + os.urandom(8).hex(), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except OSError as e:
        if e.errno == errno.EROFS:
            print("protected", flush=True); break
    time.sleep(0.005)
try:
    os.close(os.open("config", os.O_WRONLY | os.O_CREAT, dir_fd=fd)); print("old handle writes", flush=True)
except OSError as e:
    print(errno.errorcode[e.errno], flush=True)
while not os.path.exists("go") and time.time() < end + 20:
    time.sleep(0.01)
"#;
    let mut cmd = Command::new("python3");
    cmd.args(["-c", HOLDER])
        .current_dir(&fixture.workspace)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    session.install(&mut cmd).unwrap();
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "holding");
    std::fs::rename(&stage, fixture.workspace.join("sub/.git")).unwrap();
    let mut said = String::new();
    for _ in 0..2 {
        out.read_line(&mut said).unwrap();
    }
    assert_eq!(said, "protected\nold handle writes\n");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut notice = String::new();
    while std::time::Instant::now() < deadline && !notice.contains("open from before") {
        std::thread::sleep(std::time::Duration::from_millis(20));
        notice = session.appeared_notice().unwrap_or_default();
    }
    std::fs::write(fixture.workspace.join("go"), "").unwrap();
    child.wait().unwrap();
    assert!(
        notice.contains("open from before") && notice.contains("python3 (pid "),
        "{notice}"
    );
    assert!(notice.contains("sub/.git"), "{notice}");
}

/// The session keeps a pidfd of each live spawn, not of every spawn it
/// ever made: a session running many short commands (`shell.run`, check
/// commands) does not pile up an fd per command until the workbench runs
/// out of them.
#[test]
fn many_short_commands_leave_no_fd_behind() {
    if !available() {
        return;
    }
    let fixture = Fixture::new();
    let session = session(&fixture);
    let run = || {
        let mut cmd = Command::new("true");
        // In the workspace, as every spawner runs its commands: a test run
        // from a checkout under /tmp would otherwise start in a folder the
        // private /tmp hides.
        cmd.current_dir(&fixture.workspace);
        session.install(&mut cmd).unwrap();
        assert!(cmd.status().unwrap().success());
    };
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    run();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = fds();
    for _ in 0..150 {
        run();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let after = fds();
    // Other tests of this binary open a few fds meanwhile; a pidfd per
    // command would be 150.
    assert!(
        after < before + 60,
        "{before} fds before 150 commands, {after} after"
    );
}

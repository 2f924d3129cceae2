//! The kernel sandbox against real processes: `python3` and `sh` children
//! spawned through the `hello_tui::sandbox` API, real files, real sockets.
//!
//! Tests that need Landlock check for it first. Where it is missing they print
//! a loud notice, assert the `Unavailable` path instead, and fail outright if
//! `HELLO_TUI_REQUIRE_LANDLOCK=1` says this machine must have it.

#[path = "support/processes.rs"]
mod processes;
#[path = "support/pty.rs"]
mod pty;
#[path = "support/scratch.rs"]
mod scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use hello_tui::sandbox::{
    ApprovalMode, SandboxError, SandboxOptions, SandboxPolicy, SandboxSession, SandboxStatus,
    effective_mode, fallback_notice, prepare,
};

/// A workspace inside a scratch root, so `../` of the workspace is a real,
/// otherwise writable place outside it. The root is not under `/tmp`, which
/// the sandbox replaces with its private temp dir.
struct Fixture {
    root: tempfile::TempDir,
    workspace: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        Self::in_dir(&scratch::scratch_parent())
    }

    /// A fixture under the host's `/tmp` (where a user may open a project).
    fn in_tmp() -> Fixture {
        Self::in_dir(Path::new("/tmp"))
    }

    fn in_dir(parent: &Path) -> Fixture {
        let root = tempfile::tempdir_in(parent).unwrap();
        let workspace = root.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        Fixture { root, workspace }
    }

    fn session(&self, allow_network: bool) -> SandboxSession {
        SandboxSession::start(&self.workspace, allow_network, SandboxOptions::default()).unwrap()
    }
}

/// True when Landlock can be used here; otherwise says so loudly and checks
/// that preparing a sandbox is refused rather than silently unconfined.
fn landlock_available() -> bool {
    match SandboxStatus::probe() {
        SandboxStatus::Enforced { .. } => true,
        SandboxStatus::Unavailable(reason) => {
            eprintln!("\n!!!!! LANDLOCK UNAVAILABLE ON THIS MACHINE: {reason}");
            eprintln!("!!!!! sandbox enforcement tests only check the Unavailable path\n");
            assert!(
                std::env::var_os("HELLO_TUI_REQUIRE_LANDLOCK").is_none(),
                "HELLO_TUI_REQUIRE_LANDLOCK is set but Landlock is unavailable: {reason}"
            );
            let fixture = Fixture::new();
            let tmp = hello_tui::sandbox::PrivateTmp::create().unwrap();
            let policy = SandboxPolicy::new(&fixture.workspace, tmp.path(), false);
            assert!(matches!(
                prepare(&policy),
                Err(SandboxError::Unavailable(_))
            ));
            false
        }
    }
}

/// A fixture `nobody` (uid 65534) owns, for the non-root cases, when the
/// tests run as root (as in CI) and `tools` are installed; else says so.
fn nobody_fixture(tools: &[&str]) -> Option<Fixture> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let missing = tools
        .iter()
        .find(|tool| Command::new(tool).arg("--version").output().is_err());
    if !root || missing.is_some() {
        eprintln!("\n!!!!! not root, or no {missing:?}: non-root case not tried\n");
        return None;
    }
    let fixture = Fixture::new();
    for path in [fixture.root.path(), &fixture.workspace] {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
    Some(fixture)
}

/// A name no other test (or earlier run) uses.
fn unique(stem: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "hello-tui-sandbox-{stem}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

fn output_of(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null()).output().unwrap()
}

fn sandboxed(session: &SandboxSession, cwd: &Path, program: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(cwd);
    session.install(&mut cmd).unwrap();
    output_of(cmd)
}

fn unconfined(cwd: &Path, program: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(cwd);
    output_of(cmd)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// Python that tries to create `path` and prints `ok` or the errno's name.
/// Outside the writable roots the read-only mount answers first: `EROFS`
/// (Python's `OSError: Read-only file system`), not Landlock's `EACCES`.
const TRY_WRITE: &str = "import errno, sys\n\
try:\n    open(sys.argv[1], 'w').write('x')\n    print('ok')\n\
except OSError as e:\n    print(errno.errorcode[e.errno])\n";

/// Places outside the workspace that a sandboxed child must not write to
/// (`/tmp` is its private temp dir: see `private_tmp`).
fn outside_targets(fixture: &Fixture) -> Vec<(String, PathBuf)> {
    let home = PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/root".into()));
    vec![
        ("$HOME".to_owned(), home.join(unique("home"))),
        (
            "../ of the workspace".to_owned(),
            fixture.workspace.join("..").join(unique("parent")),
        ),
    ]
}

mod modes {
    use super::*;

    #[test]
    fn parses_every_mode_forgivingly_and_displays_it_back() {
        for (text, mode) in [
            ("ask", ApprovalMode::Ask),
            ("AUTO", ApprovalMode::Auto),
            (" full\n", ApprovalMode::Full),
            ("Deny", ApprovalMode::Deny),
        ] {
            assert_eq!(text.parse::<ApprovalMode>().unwrap(), mode);
        }
        for mode in ApprovalMode::ALL {
            assert_eq!(mode.to_string().parse::<ApprovalMode>().unwrap(), mode);
        }
        assert_eq!(ApprovalMode::default(), ApprovalMode::Ask);
    }

    #[test]
    fn rejects_unknown_modes_with_the_choices() {
        for bad in ["", "yolo", "full-auto", "asks"] {
            let error = bad.parse::<ApprovalMode>().unwrap_err().to_string();
            assert!(error.contains("ask, review, auto, full, deny"), "{error}");
        }
    }

    #[test]
    fn modes_round_trip_through_config_values() {
        let mode: ApprovalMode = serde_json::from_str("\"Auto\"").unwrap();
        assert_eq!(mode, ApprovalMode::Auto);
        assert_eq!(
            serde_json::to_string(&ApprovalMode::Full).unwrap(),
            "\"full\""
        );
        let error = serde_json::from_str::<ApprovalMode>("\"sometimes\"").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("expected one of ask, review, auto, full, deny")
        );
        assert!(serde_json::from_str::<ApprovalMode>("3").is_err());
    }

    #[test]
    fn auto_falls_back_to_ask_only_when_the_sandbox_is_unavailable() {
        let unavailable = SandboxStatus::Unavailable("no Landlock".into());
        let enforced = SandboxStatus::Enforced {
            abi: 6,
            network_confined: true,
        };
        assert_eq!(
            effective_mode(ApprovalMode::Auto, &unavailable),
            ApprovalMode::Ask
        );
        assert_eq!(
            effective_mode(ApprovalMode::Auto, &enforced),
            ApprovalMode::Auto
        );
        for mode in [ApprovalMode::Ask, ApprovalMode::Full, ApprovalMode::Deny] {
            assert_eq!(effective_mode(mode, &unavailable), mode);
            assert_eq!(effective_mode(mode, &enforced), mode);
        }
        let notice = fallback_notice(ApprovalMode::Auto, &unavailable).unwrap();
        assert!(
            notice.contains("no Landlock") && notice.contains("`ask`"),
            "{notice}"
        );
        assert_eq!(fallback_notice(ApprovalMode::Auto, &enforced), None);
        assert_eq!(fallback_notice(ApprovalMode::Full, &unavailable), None);
    }

    #[test]
    fn only_full_runs_unsandboxed_and_only_ask_asks() {
        assert!(!ApprovalMode::Full.sandboxed());
        assert!(ApprovalMode::Ask.sandboxed());
        assert!(ApprovalMode::Auto.sandboxed());
        assert!(ApprovalMode::Deny.sandboxed());
        assert!(ApprovalMode::Ask.asks());
        assert!(!ApprovalMode::Auto.asks());
        assert_eq!(ApprovalMode::Ask.headless(), ApprovalMode::Deny);
        assert_eq!(ApprovalMode::Auto.headless(), ApprovalMode::Auto);
        assert_eq!(ApprovalMode::Full.headless(), ApprovalMode::Full);
    }
}

mod status {
    use super::*;

    #[test]
    fn probe_reports_abi_and_network_confinement_consistently() {
        match SandboxStatus::probe() {
            SandboxStatus::Enforced {
                abi,
                network_confined,
            } => {
                assert!(abi >= 1);
                if abi >= 4 {
                    assert!(network_confined);
                }
                assert!(SandboxStatus::probe().label().contains(&format!("v{abi}")));
            }
            SandboxStatus::Unavailable(reason) => {
                assert!(!reason.is_empty());
                assert!(!landlock_available());
            }
        }
    }

    #[test]
    fn labels_say_plainly_what_is_and_is_not_confined() {
        let open = SandboxStatus::Enforced {
            abi: 3,
            network_confined: false,
        };
        assert_eq!(open.label(), "sandbox: landlock v3, network not confined");
        let off = SandboxStatus::Unavailable("x".into());
        assert_eq!(off.label(), "sandbox: unavailable");
        assert!(!off.is_enforced());
    }
}

mod filesystem {
    use super::*;

    #[test]
    fn python_writes_inside_the_workspace() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let nested = fixture.workspace.join("sub/dir");
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &[
                "-c",
                "import os; os.makedirs('sub/dir'); open('sub/dir/f.txt','w').write('inside'); \
                 os.rename('sub/dir/f.txt', 'sub/dir/g.txt'); print('ok')",
            ],
        );
        assert_eq!(stdout(&out), "ok", "{out:?}");
        assert_eq!(
            std::fs::read_to_string(nested.join("g.txt")).unwrap(),
            "inside"
        );
    }

    #[test]
    fn python_cannot_write_to_home_or_outside_the_workspace() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        for (place, target) in outside_targets(&fixture) {
            let out = sandboxed(
                &session,
                &fixture.workspace,
                "python3",
                &["-c", TRY_WRITE, target.to_str().unwrap()],
            );
            let exists = target.exists();
            let _ = std::fs::remove_file(&target);
            assert_eq!(stdout(&out), "EROFS", "writing to {place}: {out:?}");
            assert!(!exists, "{place}: {} was created", target.display());
        }
    }

    #[test]
    fn touch_outside_fails_and_inside_succeeds() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let outside = fixture.root.path().join(unique("touch"));
        let script = format!("touch inside.txt && touch {}", outside.display());
        let out = sandboxed(&session, &fixture.workspace, "sh", &["-c", &script]);
        let escaped = outside.exists();
        let _ = std::fs::remove_file(&outside);
        assert!(!out.status.success(), "{out:?}");
        assert!(!escaped);
        assert!(fixture.workspace.join("inside.txt").exists());
    }

    #[test]
    fn a_subprocess_of_the_python_child_inherits_the_restriction() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let outside = fixture.root.path().join(unique("subprocess"));
        let script = "import subprocess, sys\n\
                      r = subprocess.run(['touch', sys.argv[1]])\n\
                      print(r.returncode)";
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", script, outside.to_str().unwrap()],
        );
        let escaped = outside.exists();
        let _ = std::fs::remove_file(&outside);
        assert_ne!(stdout(&out), "0", "{out:?}");
        assert!(out.status.success(), "{out:?}");
        assert!(!escaped);
    }

    #[test]
    fn tmpdir_is_tmp_where_the_private_temp_dir_is_mounted() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let script = "import os, tempfile\n\
                      with tempfile.NamedTemporaryFile(delete=False) as f:\n    f.write(b'scratch')\n\
                      print(os.environ['TMPDIR'])\n\
                      print(os.path.dirname(f.name))";
        let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", script]);
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines, ["/tmp", "/tmp"], "{out:?}");
        let written = std::fs::read_dir(session.private_tmp()).unwrap().count();
        assert_eq!(written, 1);
    }

    /// Issue 12: a program that hard-codes `/tmp` works, sees none of the
    /// host's `/tmp` (the user's tmux sockets, other programs' files) and
    /// writes into the session's private temp dir; `/var/tmp` too.
    #[test]
    fn tmp_is_private_host_files_are_invisible_and_writes_land_in_the_private_dir() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let host_file = PathBuf::from("/tmp").join(unique("host-secret"));
        std::fs::write(&host_file, "host").unwrap();
        let written = unique("written");
        let script = "import os, sys\n\
host, name = sys.argv[1], sys.argv[2]\n\
print(os.path.exists(host), os.path.basename(host) in os.listdir('/tmp'))\n\
open('/tmp/' + name, 'w').write('inside')\n\
if os.path.isdir('/var/tmp'):\n    open('/var/tmp/' + name + '.var', 'w').write('inside')\n\
print('ok')";
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", script, host_file.to_str().unwrap(), &written],
        );
        let _ = std::fs::remove_file(&host_file);
        let on_host = Path::new("/tmp").join(&written).exists();
        assert_eq!(stdout(&out), "False False\nok", "{out:?}");
        assert!(!on_host, "a write to /tmp reached the host's /tmp");
        assert_eq!(
            std::fs::read_to_string(session.private_tmp().join(&written)).unwrap(),
            "inside"
        );
        if Path::new("/var/tmp").is_dir() {
            let var = format!("{written}.var");
            assert!(session.private_tmp().join(&var).exists());
            assert!(!Path::new("/var/tmp").join(&var).exists());
        }
    }

    /// A project opened under `/tmp` is mounted back at its own path on top
    /// of the private `/tmp`: it stays writable (and `git` works there),
    /// while its siblings in the host's `/tmp` stay out of reach.
    #[test]
    fn a_workspace_under_tmp_stays_writable_and_its_siblings_stay_private() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::in_tmp();
        let sibling = fixture.root.path().join("sibling.txt");
        std::fs::write(&sibling, "host").unwrap();
        let session = fixture.session(false);
        let script = "import os\n\
open('in.txt', 'w').write('inside'); os.chmod('in.txt', 0o600)\n\
print(os.path.exists('../sibling.txt'))\n\
open('../new.txt', 'w').write('x')\n\
print(os.getcwd())";
        let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", script]);
        let cwd = fixture.workspace.canonicalize().unwrap();
        assert_eq!(stdout(&out), format!("False\n{}", cwd.display()), "{out:?}");
        assert_eq!(
            std::fs::read_to_string(fixture.workspace.join("in.txt")).unwrap(),
            "inside"
        );
        assert!(!fixture.root.path().join("new.txt").exists());
        assert_eq!(std::fs::read_to_string(&sibling).unwrap(), "host");
    }

    /// The mount points for a workspace under `/tmp` are made by the
    /// unconfined host inside the private dir, which confined code writes:
    /// a link planted at their place must not steer that mkdir out.
    #[test]
    fn a_link_planted_at_a_mount_point_does_not_steer_the_host() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::in_tmp();
        let victim = tempfile::tempdir_in(scratch::scratch_parent()).unwrap();
        let session = fixture.session(false);
        let name = fixture.root.path().file_name().unwrap().to_str().unwrap();
        let plant = format!(
            "mv /tmp/{name} /tmp/moved && ln -s {victim} /tmp/{name} && echo planted",
            victim = victim.path().display()
        );
        let out = sandboxed(&session, &fixture.workspace, "sh", &["-c", &plant]);
        assert_eq!(stdout(&out), "planted", "{out:?}");
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &["-c", "echo again > a.txt && pwd"],
        );
        let cwd = fixture.workspace.canonicalize().unwrap();
        assert_eq!(stdout(&out), cwd.display().to_string(), "{out:?}");
        assert!(
            !victim.path().join("ws").exists(),
            "the host followed a planted link"
        );
        assert_eq!(
            std::fs::read_to_string(fixture.workspace.join("a.txt")).unwrap(),
            "again\n"
        );
    }

    /// Python that changes the mode, times and an xattr of `argv[1]` and
    /// prints what each did: `ok` or the errno's name.
    const TRY_METADATA: &str = concat!(
        "import errno, os, sys\n",
        "def attempt(name, change):\n",
        "    try:\n",
        "        change(); print(name, 'ok')\n",
        "    except OSError as e:\n",
        "        print(name, errno.errorcode[e.errno])\n",
        "path = sys.argv[1]\n",
        "attempt('chmod', lambda: os.chmod(path, 0o777))\n",
        "attempt('utime', lambda: os.utime(path, (0, 0)))\n",
        "attempt('setxattr', lambda: os.setxattr(path, 'user.hello', b'1'))\n",
    );

    /// Issue 12, route 8: Landlock does not confine metadata. Outside the
    /// writable roots every mount is read-only in the child, so `chmod`,
    /// `utime` and xattrs of a file the user owns fail; inside they work.
    #[test]
    fn metadata_outside_the_writable_roots_cannot_change_but_inside_can() {
        if !landlock_available() {
            return;
        }
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let fixture = Fixture::new();
        let outside = fixture.root.path().join("owned.txt");
        let inside = fixture.workspace.join("owned.txt");
        for path in [&outside, &inside] {
            std::fs::write(path, "x").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let before = std::fs::metadata(&outside).unwrap();
        let session = fixture.session(false);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", TRY_METADATA, outside.to_str().unwrap()],
        );
        assert_eq!(
            stdout(&out),
            "chmod EROFS\nutime EROFS\nsetxattr EROFS",
            "{out:?}"
        );
        let after = std::fs::metadata(&outside).unwrap();
        assert_eq!(after.mode(), before.mode());
        assert_eq!(after.mtime(), before.mtime());
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", TRY_METADATA, "owned.txt"],
        );
        let text = stdout(&out);
        // Some file systems have no user xattrs; the mode and times must change.
        assert!(text.starts_with("chmod ok\nutime ok\nsetxattr "), "{out:?}");
        let changed = std::fs::metadata(&inside).unwrap();
        assert_eq!(changed.mode() & 0o777, 0o777);
        assert_eq!(changed.mtime(), 0);
    }

    /// The recursive read-only flag skips configured writable roots, also
    /// ones reached through a symlink and ones on another mount (`/dev/shm`
    /// for `multiprocessing`).
    #[test]
    fn configured_writable_roots_keep_metadata_changes_even_through_a_link() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let real = fixture.root.path().join("cache-real");
        std::fs::create_dir(&real).unwrap();
        let link = fixture.root.path().join("cache-link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let mut writable = vec![link.clone()];
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            writable.push(shm.to_path_buf());
        }
        let session = SandboxSession::start(
            &fixture.workspace,
            false,
            SandboxOptions {
                extra_writable: writable.clone(),
                ..SandboxOptions::default()
            },
        )
        .unwrap();
        let name = unique("meta");
        for dir in &writable {
            let target = dir.join(&name);
            let script = format!(
                "import os\nopen({t:?}, 'w').write('x'); os.chmod({t:?}, 0o640); os.utime({t:?}, (0, 0)); print('ok')",
                t = target.display().to_string()
            );
            let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", &script]);
            let exists = target.exists();
            let _ = std::fs::remove_file(&target);
            assert_eq!(stdout(&out), "ok", "{}: {out:?}", dir.display());
            assert!(exists, "{}", dir.display());
        }
    }

    /// Devices stay writable on the read-only `/dev` mount: `/dev/null`.
    /// Other devices are Landlock's to refuse (a read-only mount does not
    /// stop device writes): `/dev/urandom` is writable by everyone on the
    /// host. No pty can be made (issue 25: a terminal is a way out; the
    /// host's `/dev/pts` is hidden, so `/dev/ptmx` finds no pty filesystem).
    #[test]
    fn dev_null_stays_writable_ptys_and_other_devices_do_not() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &[
                "-c",
                "echo hidden > /dev/null && python3 -c \"open('/dev/null','w').write('x')\" && echo ok; \
                 python3 -c \"import os; os.openpty()\" 2>/dev/null && echo pty; \
                 echo x > /dev/urandom && echo urandom",
            ],
        );
        assert_eq!(stdout(&out), "ok", "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
            "{out:?}"
        );
    }

    /// Issue 12, gap 3: a bind needs an existing folder, so a `.git/` made
    /// by a confined process was its own before anything could protect
    /// it. The session reports it; the running process gets it read-only
    /// as soon as the session's guard sees it (so the maker's own writes
    /// after that fail: `tests/sandbox_guard.rs`), and every process
    /// spawned afterwards gets it read-only.
    #[test]
    fn a_git_folder_made_during_the_session_is_reported_and_protected_from_then_on() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        assert!(session.appeared_protected().is_empty());
        assert_eq!(session.appeared_notice(), None);
        sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &["-c", "git init -q; echo evil > .git/hooks/pre-commit"],
        );
        assert_eq!(
            session.appeared_protected(),
            [fixture.workspace.join(".git")]
        );
        let notice = session.appeared_notice().unwrap();
        assert!(
            notice.contains(".git") && notice.contains("hooks"),
            "{notice}"
        );
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &[
                "-c",
                // git must not look above the workspace (the checkout the
                // tests run in has a status of its own).
                "echo evil > .git/hooks/post-checkout && echo planted; \
                 GIT_CEILING_DIRECTORIES=\"$(dirname \"$PWD\")\" git status --short; exit 0",
            ],
        );
        assert_eq!(stdout(&out), "", "{out:?}");
        assert!(!fixture.workspace.join(".git/hooks/post-checkout").exists());
    }

    #[test]
    fn without_the_sandbox_the_same_writes_succeed() {
        let fixture = Fixture::new();
        for (place, target) in outside_targets(&fixture) {
            let out = unconfined(
                &fixture.workspace,
                "python3",
                &["-c", TRY_WRITE, target.to_str().unwrap()],
            );
            let exists = target.exists();
            let _ = std::fs::remove_file(&target);
            assert_eq!(stdout(&out), "ok", "writing to {place}: {out:?}");
            assert!(exists, "{place}");
        }
        let outside = PathBuf::from("/tmp").join(unique("touch-full"));
        let script = format!("touch {}", outside.display());
        let out = unconfined(&fixture.workspace, "sh", &["-c", &script]);
        let exists = outside.exists();
        let _ = std::fs::remove_file(&outside);
        assert!(out.status.success() && exists, "{out:?}");
    }
}

mod network {
    use super::*;
    use std::net::TcpListener;

    const CONNECT: &str = "import socket, sys\n\
try:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()\n    print('connected')\n\
except Exception as e:\n    print(type(e).__name__)\n";

    fn connect_from_sandbox(allow_network: bool) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let fixture = Fixture::new();
        let session = fixture.session(allow_network);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", CONNECT, &port],
        );
        stdout(&out)
    }

    #[test]
    fn tcp_connect_is_denied_unless_the_network_is_allowed() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        if !session.prepared().network_confined() {
            eprintln!(
                "\n!!!!! NETWORK NOT CONFINED: {:?}\n",
                session.limitations()
            );
            assert!(!session.limitations().is_empty());
            return;
        }
        assert!(session.limitations().is_empty());
        assert_eq!(connect_from_sandbox(false), "PermissionError");
        assert_eq!(connect_from_sandbox(true), "connected");
    }

    const SEND_UDP: &str = "import socket, sys\n\
try:\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    s.sendto(b'leak', ('127.0.0.1', int(sys.argv[1])))\n    print('sent')\n\
except Exception as e:\n    print(type(e).__name__)\n";

    /// Landlock only knows TCP; UDP (and so DNS tunnelling) must be stopped
    /// by the socket filter.
    #[test]
    fn udp_is_denied_unless_the_network_is_allowed() {
        if !landlock_available() {
            return;
        }
        for allow_network in [false, true] {
            let receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            receiver
                // A datagram that was sent arrives at once on loopback; the
                // denied case only waits out this timeout.
                .set_read_timeout(Some(std::time::Duration::from_secs(1)))
                .unwrap();
            let port = receiver.local_addr().unwrap().port().to_string();
            let fixture = Fixture::new();
            let session = fixture.session(allow_network);
            if !allow_network && !session.prepared().network_confined() {
                eprintln!(
                    "\n!!!!! NETWORK NOT CONFINED: {:?}\n",
                    session.limitations()
                );
                return;
            }
            let out = sandboxed(
                &session,
                &fixture.workspace,
                "python3",
                &["-c", SEND_UDP, &port],
            );
            let mut buf = [0u8; 16];
            let received = receiver.recv(&mut buf).ok();
            if allow_network {
                assert_eq!(stdout(&out), "sent", "{out:?}");
                assert_eq!(received, Some(4));
            } else {
                assert_eq!(stdout(&out), "PermissionError", "{out:?}");
                assert_eq!(received, None);
            }
        }
    }

    #[test]
    fn unix_sockets_and_asyncio_still_work_without_network() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let script = "import asyncio, socket\n\
a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n\
async def main():\n    await asyncio.sleep(0)\n    return 'ok'\n\
print(asyncio.run(main()))";
        let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", script]);
        assert_eq!(stdout(&out), "ok", "{out:?}");
    }

    /// A pathname unix socket is a door to whatever listens on it (a tmux
    /// server, a Docker daemon), with or without network: `socket(AF_UNIX)`
    /// is refused, even for a socket in the sandbox's own temp dir.
    #[test]
    fn connecting_to_a_host_unix_socket_is_denied() {
        if !landlock_available() {
            return;
        }
        for allow_network in [false, true] {
            let fixture = Fixture::new();
            let session = fixture.session(allow_network);
            let path = session.private_tmp().join("door.sock");
            let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
            let script = "import socket, sys\n\
try:\n    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('connected')\n\
except Exception as e:\n    print(type(e).__name__)\n";
            let out = sandboxed(
                &session,
                &fixture.workspace,
                "python3",
                &["-c", script, path.to_str().unwrap()],
            );
            assert_eq!(stdout(&out), "PermissionError", "{out:?}");
        }
    }

    #[test]
    fn binding_a_listener_is_denied_without_network() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        if !session.prepared().network_confined() {
            return;
        }
        let script = "import socket\n\
try:\n    s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); print('listening')\n\
except Exception as e:\n    print(type(e).__name__)\n";
        let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", script]);
        assert_eq!(stdout(&out), "PermissionError", "{out:?}");
    }
}

mod api {
    use super::*;
    use hello_tui::sandbox::{PrivateTmp, apply_in_child, install};
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    use std::sync::Arc;

    #[test]
    fn private_tmp_is_0700_and_removed_on_drop() {
        let tmp = PrivateTmp::create().unwrap();
        let path = tmp.path().to_path_buf();
        std::fs::write(path.join("leftover"), "x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(path.starts_with(std::env::temp_dir()));
        drop(tmp);
        assert!(!path.exists());
    }

    #[test]
    fn session_drop_removes_the_private_temp_dir() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let path = session.private_tmp().to_path_buf();
        assert!(path.is_dir());
        drop(session);
        assert!(!path.exists());
    }

    #[test]
    fn a_missing_workspace_is_a_readable_error() {
        if !landlock_available() {
            return;
        }
        let tmp = PrivateTmp::create().unwrap();
        let missing = Path::new("/nonexistent/hello-tui-workspace");
        let error = prepare(&SandboxPolicy::new(missing, tmp.path(), false)).unwrap_err();
        assert!(matches!(error, SandboxError::Path { .. }), "{error:?}");
        assert!(
            error
                .to_string()
                .contains("/nonexistent/hello-tui-workspace")
        );
    }

    #[test]
    fn apply_in_child_works_from_a_raw_pre_exec_hook() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let tmp = PrivateTmp::create().unwrap();
        let prepared =
            Arc::new(prepare(&SandboxPolicy::new(&fixture.workspace, tmp.path(), false)).unwrap());
        let outside = fixture.root.path().join("raw-hook.txt");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("touch ok.txt; touch {}", outside.display())])
            .current_dir(&fixture.workspace);
        let hook = Arc::clone(&prepared);
        // SAFETY: apply_in_child only makes raw syscalls (see its docs).
        unsafe {
            cmd.pre_exec(move || apply_in_child(&hook));
        }
        let out = output_of(cmd);
        assert!(!out.status.success(), "{out:?}");
        assert!(fixture.workspace.join("ok.txt").exists());
        assert!(!outside.exists());
    }

    /// Model code cannot kill the user's other processes (or the
    /// workbench) even when running as their owner: outside its PID
    /// namespace their pids name nothing (Landlock ABI 6 would refuse the
    /// signal as well).
    #[test]
    fn signals_to_processes_outside_the_sandbox_are_denied() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let mut victim = Command::new("sleep").arg("30").spawn().unwrap();
        let script = "import os, signal, sys\n\
try:\n    os.kill(int(sys.argv[1]), signal.SIGTERM)\n    print('killed')\n\
except Exception as e:\n    print(type(e).__name__)\n";
        let pid = victim.id().to_string();
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", script, &pid],
        );
        let still_running = victim.try_wait().unwrap().is_none();
        let _ = victim.kill();
        let _ = victim.wait();
        assert_eq!(stdout(&out), "ProcessLookupError", "{out:?}");
        assert!(still_running);
    }

    #[test]
    fn extra_writable_paths_are_writable() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let extra = fixture.root.path().join("cache");
        std::fs::create_dir(&extra).unwrap();
        let session = SandboxSession::start(
            &fixture.workspace,
            false,
            SandboxOptions {
                extra_writable: vec![extra.clone()],
                ..SandboxOptions::default()
            },
        )
        .unwrap();
        let target = extra.join("c.bin");
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "python3",
            &["-c", TRY_WRITE, target.to_str().unwrap()],
        );
        assert_eq!(stdout(&out), "ok", "{out:?}");
        assert!(target.exists());
    }

    #[tokio::test]
    async fn a_tokio_command_is_confined_through_as_std_mut() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let outside = fixture.root.path().join("tokio.txt");
        let mut cmd = tokio::process::Command::new("python3");
        cmd.args(["-c", TRY_WRITE, outside.to_str().unwrap()])
            .current_dir(&fixture.workspace)
            .stdin(Stdio::null());
        install(cmd.as_std_mut(), session.prepared()).unwrap();
        let out = cmd.output().await.unwrap();
        assert_eq!(stdout(&out), "EROFS", "{out:?}");
        assert!(!outside.exists());
    }
}

mod cli {
    use super::*;
    use clap::Parser;
    use hello_tui::sandbox::cli::{SandboxArgs, run};
    use std::process::ExitCode;

    /// How the lead's CLI embeds these arguments (and an approval flag).
    #[derive(Debug, Parser)]
    struct Harness {
        #[arg(long)]
        approval: Option<ApprovalMode>,
        #[command(flatten)]
        args: SandboxArgs,
    }

    #[test]
    fn approval_mode_works_as_a_clap_flag() {
        let parsed = Harness::try_parse_from(["x", "--approval", "auto", "--", "ls"]).unwrap();
        assert_eq!(parsed.approval, Some(ApprovalMode::Auto));
        let error = Harness::try_parse_from(["x", "--approval", "nope", "--", "ls"]).unwrap_err();
        assert!(
            error.to_string().contains("ask, review, auto, full, deny"),
            "{error}"
        );
    }

    #[test]
    fn parses_flags_and_the_command_after_the_double_dash() {
        let parsed = Harness::try_parse_from([
            "sandbox",
            "--allow-network",
            "-C",
            "/work",
            "--",
            "python3",
            "-c",
            "print(1)",
        ])
        .unwrap()
        .args;
        assert!(parsed.allow_network);
        assert_eq!(parsed.workspace, PathBuf::from("/work"));
        assert_eq!(parsed.command, ["python3", "-c", "print(1)"]);

        let defaults = Harness::try_parse_from(["sandbox", "--", "ls"])
            .unwrap()
            .args;
        assert!(!defaults.allow_network);
        assert_eq!(defaults.workspace, PathBuf::from("."));
        assert!(Harness::try_parse_from(["sandbox"]).is_err());
    }

    #[test]
    fn run_returns_the_commands_exit_code_and_confines_it() {
        let fixture = Fixture::new();
        let outside = fixture.root.path().join("cli-outside.txt");
        let script = format!(
            "touch in-workspace.txt || exit 3; touch {} && exit 4; exit 7",
            outside.display()
        );
        let args = SandboxArgs {
            allow_network: false,
            tmp_size_mb: hello_tui::sandbox::DEFAULT_TMP_SIZE_MB,
            memory_limit_mb: 0,
            workspace: fixture.workspace.clone(),
            command: vec!["sh".into(), "-c".into(), script],
        };
        let code = run(&args).unwrap();
        if !landlock_available() {
            assert_eq!(code, ExitCode::from(2));
            return;
        }
        assert_eq!(code, ExitCode::from(7));
        assert!(fixture.workspace.join("in-workspace.txt").exists());
        assert!(!outside.exists());
    }

    #[test]
    fn a_missing_program_is_an_error_not_a_panic() {
        let fixture = Fixture::new();
        let args = SandboxArgs {
            allow_network: false,
            tmp_size_mb: hello_tui::sandbox::DEFAULT_TMP_SIZE_MB,
            memory_limit_mb: 0,
            workspace: fixture.workspace.clone(),
            command: vec![unique("no-such-program")],
        };
        match run(&args) {
            Ok(code) => assert_eq!(code, ExitCode::from(2)),
            Err(error) => assert!(error.to_string().contains("no-such-program"), "{error:#}"),
        }
    }
}

/// The routes out of the sandbox an attacker tried (issue 12), each through
/// the real `hello-tui sandbox -- CMD`, as whatever user runs the tests (CI
/// runs them as root).
mod routes {
    use super::*;

    const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

    fn via_cli(fixture: &Fixture, command: &[&str]) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.arg("sandbox")
            .arg("-C")
            .arg(&fixture.workspace)
            .arg("--")
            .args(command)
            .env("OPENAI_API_KEY", "sk-route-test-secret")
            .env("HELLO_TUI_TEST_TOKEN", "tok-route-test-secret");
        output_of(cmd)
    }

    fn sh(fixture: &Fixture, script: &str) -> Output {
        via_cli(fixture, &["sh", "-c", script])
    }

    #[test]
    fn the_command_holds_no_capabilities_even_as_root() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let out = sh(
            &fixture,
            "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
        );
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 5, "{out:?}");
        for line in text.lines() {
            assert!(line.ends_with("0000000000000000"), "{line}");
        }
    }

    #[test]
    fn device_nodes_and_chown_are_refused_but_fifos_work() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let out = sh(
            &fixture,
            "mkfifo fifo && echo fifo; mknod blk b 7 0 && echo block; \
             mknod chr c 1 3 && echo char; touch mine; chown 4242 mine && echo chown; \
             chmod 600 mine && echo chmod",
        );
        assert_eq!(stdout(&out), "fifo\nchmod", "{out:?}");
        assert!(!fixture.workspace.join("blk").exists());
        assert!(!fixture.workspace.join("chr").exists());
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(fixture.workspace.join("mine")).unwrap();
        // SAFETY: geteuid has no preconditions.
        assert_eq!(owner.uid(), unsafe { libc::geteuid() });
    }

    /// `bpf`, `keyctl`, `sethostname` and `ptrace` fail with EPERM, as root
    /// too. (sethostname is tried with the current name, so a broken
    /// sandbox changes nothing.)
    #[test]
    fn kernel_interfaces_root_could_use_are_refused() {
        if !landlock_available() {
            return;
        }
        let script = "import ctypes, os, signal, socket, sys, time\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
bpf, keyctl, ptrace = (int(a) for a in sys.argv[1:4])\n\
def errno(result):\n    return ctypes.get_errno() if result == -1 else 0\n\
print('bpf', errno(libc.syscall(bpf, 0, None, 0)))\n\
print('keyctl', errno(libc.syscall(keyctl, 0, ctypes.c_long(-3), 0)))\n\
try:\n    socket.sethostname(socket.gethostname()); print('sethostname 0')\n\
except OSError as e:\n    print('sethostname', e.errno)\n\
child = os.fork()\n\
if child == 0:\n    time.sleep(5); os._exit(0)\n\
print('ptrace', errno(libc.syscall(ptrace, 16, child, 0, 0)))\n\
os.kill(child, signal.SIGKILL); os.waitpid(child, 0)\n";
        let numbers = [libc::SYS_bpf, libc::SYS_keyctl, libc::SYS_ptrace].map(|n| n.to_string());
        let fixture = Fixture::new();
        let mut command = vec!["python3", "-c", script];
        command.extend(numbers.iter().map(String::as_str));
        let out = via_cli(&fixture, &command);
        let eperm = libc::EPERM;
        assert_eq!(
            stdout(&out),
            format!("bpf {eperm}\nkeyctl {eperm}\nsethostname {eperm}\nptrace {eperm}"),
            "{out:?}"
        );
    }

    /// The user's tmux server runs any command a client asks for: a
    /// sandboxed `tmux run-shell` must not reach it.
    #[test]
    fn tmux_run_shell_cannot_reach_the_users_server() {
        if !landlock_available() {
            return;
        }
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!("\n!!!!! tmux missing: tmux route not tried\n");
            return;
        }
        let fixture = Fixture::new();
        let socket = fixture.root.path().join("tmux.sock");
        let socket = socket.to_str().unwrap();
        let started = Command::new("tmux")
            .args(["-S", socket, "new-session", "-d", "sleep 60"])
            .status()
            .unwrap();
        assert!(started.success());
        let marker = fixture.root.path().join("ran-outside");
        let run = format!("touch {}", marker.display());
        let out = via_cli(&fixture, &["tmux", "-S", socket, "run-shell", &run]);
        let _ = Command::new("tmux")
            .args(["-S", socket, "kill-server"])
            .status();
        assert!(!marker.exists(), "tmux ran a command outside: {out:?}");
        assert!(!out.status.success(), "{out:?}");
    }

    /// Private `/tmp` and read-only metadata at the CLI: the host's `/tmp`
    /// (where tmux keeps its sockets) is invisible, a file written to
    /// `/tmp` stays off the host, and `chmod`/`touch -d` of a file the user
    /// owns outside the workspace fail while the same inside works.
    #[test]
    fn tmp_is_private_and_metadata_outside_the_workspace_is_read_only() {
        if !landlock_available() {
            return;
        }
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let fixture = Fixture::new();
        let host_file = PathBuf::from("/tmp").join(unique("cli-host"));
        std::fs::write(&host_file, "host").unwrap();
        let outside = fixture.root.path().join("mine.txt");
        std::fs::write(&outside, "x").unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
        let written = unique("cli-written");
        let script = format!(
            "test -e {host} && echo host-visible; ls /tmp | grep -c cli-host; \
             echo x > /tmp/{written} && echo tmp-write; \
             chmod 777 {outside} && echo chmod-outside; \
             touch -d 2001-01-01 {outside} && echo touch-outside; \
             echo y > mine.txt && chmod 777 mine.txt && touch -d 2001-01-01 mine.txt && echo inside; exit 0",
            host = host_file.display(),
            outside = outside.display(),
        );
        let out = sh(&fixture, &script);
        let _ = std::fs::remove_file(&host_file);
        let leaked = Path::new("/tmp").join(&written).exists();
        assert_eq!(stdout(&out), "0\ntmp-write\ninside", "{out:?}");
        assert!(!leaked, "a write to /tmp reached the host");
        let meta = std::fs::metadata(&outside).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("Read-only file system"), "{stderr}");
    }

    /// Gap 3 at the CLI: a `.git/` the command made was writable to it, so
    /// the user is told to check it before running git there.
    #[test]
    fn a_git_folder_the_command_made_is_reported() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        // The guard may turn it read-only under `git init` itself.
        let out = sh(
            &fixture,
            "git init -q; echo evil > .git/hooks/pre-commit; exit 0",
        );
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let git = fixture.workspace.canonicalize().unwrap().join(".git");
        assert!(
            stderr.contains(&format!("{} appeared", git.display())) && stderr.contains("hooks/"),
            "{stderr}"
        );
        let quiet = sh(&fixture, "true");
        assert!(
            !String::from_utf8_lossy(&quiet.stderr).contains("appeared"),
            "{quiet:?}"
        );
    }

    /// A non-root user gets the same namespace through a user namespace:
    /// private `/tmp`, read-only metadata outside, writable workspace. Run
    /// as `nobody` when the tests run as root (as in CI).
    #[test]
    fn a_non_root_user_gets_the_same_namespace() {
        if !landlock_available() {
            return;
        }
        let Some(fixture) = nobody_fixture(&["setpriv"]) else {
            return;
        };
        use std::os::unix::fs::PermissionsExt;
        let nobody = 65534;
        let outside = fixture.root.path().join("theirs.txt");
        std::fs::write(&outside, "x").unwrap();
        std::os::unix::fs::chown(&outside, Some(nobody), Some(nobody)).unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
        let as_nobody = || {
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .env("HOME", &fixture.workspace);
            cmd
        };
        let mut reach = as_nobody();
        reach.args(["test", "-x", BIN]);
        if !output_of(reach).status.success() {
            // A checkout under a private home (0700) is out of nobody's reach.
            eprintln!("\n!!!!! nobody cannot run the binary here: non-root namespace not tried\n");
            return;
        }
        let host_file = PathBuf::from("/tmp").join(unique("nobody-host"));
        std::fs::write(&host_file, "host").unwrap();
        let script = format!(
            "id -u; test -e {host} && echo host-visible; echo x > /tmp/t && echo tmp-write; \
             chmod 777 {outside} && echo chmod-outside; echo y > in.txt && chmod 700 in.txt && echo inside; exit 0",
            host = host_file.display(),
            outside = outside.display(),
        );
        let mut cmd = as_nobody();
        cmd.args([BIN, "sandbox", "-C"])
            .arg(&fixture.workspace)
            .args(["--", "sh", "-c", &script]);
        let out = output_of(cmd);
        let _ = std::fs::remove_file(&host_file);
        if out.status.code() == Some(2) {
            // The kernel refuses unprivileged user namespaces: the sandbox
            // is unavailable for this user and says so, nothing ran.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("refusing to run"), "{out:?}");
            return;
        }
        assert_eq!(stdout(&out), "65534\ntmp-write\ninside", "{out:?}");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o777, 0o600);
    }

    /// Secrets stay out: the API key and other variables not on the
    /// allowlist never reach the command, and the workbench's own
    /// `/proc/<pid>/environ` (where they are) cannot be read.
    #[test]
    fn secrets_in_the_environment_do_not_reach_the_command() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let out = sh(
            &fixture,
            "env; cat /proc/$PPID/environ && echo READ-HOST-ENVIRON; exit 0",
        );
        let text = stdout(&out);
        assert!(!text.contains("route-test-secret"), "{text}");
        assert!(!text.contains("READ-HOST-ENVIRON"), "{out:?}");
        assert!(text.contains("PATH="), "{text}");
    }

    /// Route 5/6: `.git/` (hooks, `core.fsmonitor`) and `.hello-tui/`
    /// (sessions, recovery files, the log) are read-only inside the
    /// workspace, while the rest of it and `git status` keep working.
    #[test]
    fn git_and_workbench_state_are_read_only_but_work_goes_on() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&fixture.workspace)
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::create_dir_all(fixture.workspace.join(".hello-tui/sessions")).unwrap();
        let out = sh(
            &fixture,
            "echo evil > .git/hooks/pre-commit && echo hook; \
             git config core.fsmonitor evil && echo fsmonitor; \
             echo '{}' >> .hello-tui/sessions/s.jsonl && echo session; \
             echo work > a.txt && echo work; git status --short",
        );
        assert_eq!(stdout(&out), "work\n?? a.txt", "{out:?}");
        assert!(!fixture.workspace.join(".git/hooks/pre-commit").exists());
        let config = std::fs::read_to_string(fixture.workspace.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{config}");
        assert!(
            !fixture
                .workspace
                .join(".hello-tui/sessions/s.jsonl")
                .exists()
        );
        // The namespace is the child's own: the host still writes there.
        std::fs::write(fixture.workspace.join(".git/host-write"), "ok").unwrap();
    }

    /// A repository below the workspace's own (a folder of projects) is as
    /// protected: its hooks and config cannot be planted either.
    #[test]
    fn nested_repositories_are_read_only_too() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let inner = fixture.workspace.join("projects/inner");
        std::fs::create_dir_all(&inner).unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&inner)
            .status()
            .unwrap();
        assert!(git.success());
        let out = sh(
            &fixture,
            "echo evil > projects/inner/.git/hooks/pre-commit && echo hook; \
             git -C projects/inner config core.fsmonitor evil && echo fsmonitor; \
             echo work > projects/inner/a.txt && echo work",
        );
        assert_eq!(stdout(&out), "work", "{out:?}");
        assert!(!inner.join(".git/hooks/pre-commit").exists());
        let config = std::fs::read_to_string(inner.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{config}");
    }

    /// A worktree's (or submodule's) `.git` is a file: it is read-only too,
    /// so a cell can neither point it elsewhere nor replace it with a fresh
    /// repository whose `core.fsmonitor` would run at the user's next git
    /// command; the git dir it names inside the workspace is read-only too.
    #[test]
    fn a_git_file_and_its_git_dir_are_read_only() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let real = fixture.workspace.join("real.git");
        std::fs::create_dir_all(real.join("hooks")).unwrap();
        std::fs::write(fixture.workspace.join(".git"), "gitdir: real.git\n").unwrap();
        let out = sh(
            &fixture,
            "rm -f .git && echo removed; echo 'gitdir: /x' > .git && echo rewritten; \
             echo evil > real.git/hooks/pre-commit && echo hook; \
             echo work > a.txt && echo work",
        );
        assert_eq!(stdout(&out), "work", "{out:?}");
        assert_eq!(
            std::fs::read_to_string(fixture.workspace.join(".git")).unwrap(),
            "gitdir: real.git\n"
        );
        assert!(!real.join("hooks/pre-commit").exists());
    }

    /// A `.git` that is a link (`.git -> realgit`, at the top or below):
    /// git follows it, so its target is kept read-only like a `.git`
    /// folder (a second attack review planted `core.fsmonitor` there).
    #[test]
    fn a_linked_git_folder_keeps_its_target_read_only() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        for (at, real) in [(".", "realgit"), ("sub", "../subgit")] {
            let dir = fixture.workspace.join(at);
            std::fs::create_dir_all(dir.join(real).join("hooks")).unwrap();
            std::os::unix::fs::symlink(real, dir.join(".git")).unwrap();
        }
        let session = fixture.session(false);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &[
                "-c",
                "echo evil > realgit/hooks/pre-commit && echo top; \
                 echo evil > subgit/hooks/pre-commit && echo nested; echo work > a.txt && echo work",
            ],
        );
        assert_eq!(stdout(&out), "work", "{out:?}");
        assert!(!fixture.workspace.join("realgit/hooks/pre-commit").exists());
        assert!(!fixture.workspace.join("subgit/hooks/pre-commit").exists());
    }

    /// Issue 25, route 10: a cell renamed `sub` to `node_modules` (a name
    /// the walk skipped) or moved it below depth 6, and the next spawn —
    /// within 2 s, when an earlier walk's list was reused — planted a hook
    /// and `core.fsmonitor` in its `.git`. Each spawn of one session (as
    /// the kernel's `shell.run`s are) walks again and protects it wherever
    /// it went; a nested `.hello-tui` is read-only too.
    #[test]
    fn a_renamed_or_deeply_moved_repository_stays_read_only() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let sub = fixture.workspace.join("sub");
        std::fs::create_dir_all(sub.join(".hello-tui/sessions")).unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&sub)
            .status()
            .unwrap();
        assert!(git.success());
        let session = fixture.session(false);
        let run = |script: &str| sandboxed(&session, &fixture.workspace, "sh", &["-c", script]);
        let plant = |at: &str| {
            format!(
                "echo evil > {at}/.git/hooks/pre-commit && echo hook; \
                 git -C {at} config core.fsmonitor evil && echo fsmonitor; \
                 echo x > {at}/.hello-tui/sessions/s.jsonl && echo session; \
                 echo work > {at}/a.txt && echo work"
            )
        };
        let deep = "a/b/c/d/e/f/g/h";
        for (moved, at) in [
            ("mv sub node_modules", "node_modules"),
            (
                &*format!("mkdir -p {deep} && mv node_modules {deep}/sub"),
                &*format!("{deep}/sub"),
            ),
        ] {
            let out = run(moved);
            assert!(out.status.success(), "{out:?}");
            let out = run(&plant(at));
            assert_eq!(stdout(&out), "work", "{at}: {out:?}");
            let repo = fixture.workspace.join(at);
            assert!(!repo.join(".git/hooks/pre-commit").exists(), "{at}");
            let config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
            assert!(!config.contains("fsmonitor"), "{at}: {config}");
            assert!(!repo.join(".hello-tui/sessions/s.jsonl").exists(), "{at}");
        }
    }

    /// Route 10, fail closed: a workspace bigger than the walk's budget
    /// starts nothing sandboxed (a repository the walk did not reach would
    /// be writable), and the error names the budget and how to raise it.
    #[test]
    fn a_workspace_past_the_walks_budget_starts_nothing() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        for i in 0..30 {
            std::fs::write(fixture.workspace.join(format!("f{i}")), "").unwrap();
        }
        let mut cmd = Command::new(BIN);
        cmd.arg("sandbox")
            .arg("-C")
            .arg(&fixture.workspace)
            .args(["--", "sh", "-c", "echo RAN"])
            .env("HELLO_TUI_PROTECT_SCAN_LIMIT", "10");
        let out = output_of(cmd);
        assert!(!out.status.success(), "{out:?}");
        assert!(!stdout(&out).contains("RAN"), "{out:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("more than 10") && said.contains("HELLO_TUI_PROTECT_SCAN_LIMIT=N"),
            "{said}"
        );
    }
}

/// The PID namespace: a confined command sees only its own processes in a
/// fresh `/proc`, runs as pid 2 under a small init, and still exits, dies
/// and is signalled as if it ran directly.
mod pid_namespace {
    use super::*;
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

    fn via_cli(fixture: &Fixture, script: &str) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.arg("sandbox")
            .arg("-C")
            .arg(&fixture.workspace)
            .args(["--", "sh", "-c", script]);
        output_of(cmd)
    }

    #[test]
    fn proc_lists_only_the_sandboxs_own_processes() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let out = via_cli(&fixture, "ls /proc; cat /proc/1/comm");
        let text = stdout(&out);
        let pids: Vec<u32> = text.lines().filter_map(|l| l.parse().ok()).collect();
        // init, sh and (unless sh execs it) ls: nothing of the host's.
        assert!(pids.contains(&1) && pids.contains(&2), "{out:?}");
        assert!(pids.iter().all(|pid| *pid <= 3), "{out:?}");
        assert!(!pids.contains(&std::process::id()), "{out:?}");
        assert_eq!(text.lines().last(), Some("sandbox-init"), "{out:?}");
    }

    /// The workbench (here: the test and the `hello-tui` it runs) and the
    /// user's other programs are out of sight, command lines included; so
    /// is init's, a copy of the workbench, whose strings are blanked.
    #[test]
    fn host_processes_and_their_command_lines_are_out_of_sight() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let marker = unique("argv-marker");
        let mut other = Command::new("sleep");
        other.arg0(&marker).arg("30");
        let mut other = other.spawn().unwrap();
        let script = format!(
            "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; \
             cat /proc/{other}/cmdline && echo && echo other-visible; \
             test -e /proc/{host} && echo host-visible; exit 0",
            other = other.id(),
            host = std::process::id(),
        );
        let out = via_cli(&fixture, &script);
        let _ = other.kill();
        let _ = other.wait();
        let text = stdout(&out);
        assert!(out.status.success(), "{out:?}");
        assert!(
            text.contains("sh -c"),
            "its own processes are listed: {out:?}"
        );
        assert!(!text.contains(&marker), "{out:?}");
        let seen = |what: &str| text.lines().any(|line| line == what);
        assert!(!seen("other-visible") && !seen("host-visible"), "{out:?}");
        assert!(!text.contains(BIN), "the workbench's argv leaks: {out:?}");
    }

    /// The command is pid 2, not pid 1 (which ignores every signal it has
    /// no handler for, even from itself): `kill $$` and Python's own
    /// `SIGTERM` kill it, and the CLI says so like a shell.
    #[test]
    fn exit_codes_and_deaths_by_signal_pass_through() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let exit = via_cli(&fixture, "test $$ = 2 || exit 1; exit 7");
        assert_eq!(exit.status.code(), Some(7), "{exit:?}");
        let killed = via_cli(&fixture, "test $$ = 2 || exit 1; kill -TERM $$; exit 3");
        assert_eq!(
            killed.status.code(),
            Some(128 + libc::SIGTERM),
            "{killed:?}"
        );
        let python = via_cli(
            &fixture,
            "python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)'; \
             kill -s $(kill -l $?) $$",
        );
        assert_eq!(
            python.status.code(),
            Some(128 + libc::SIGTERM),
            "{python:?}"
        );
    }

    /// As the workbench spawns (its own process group, signalled as a
    /// group): an interrupt reaches the program exactly once (not also
    /// through the reaper), a signal to the spawned pid alone is passed
    /// on, and the program's death by it is the spawned process's too.
    #[test]
    fn a_group_signal_arrives_once_and_a_direct_one_is_forwarded() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let script = "import os, signal, sys, time\n\
def on_int(sig, frame):\n    print('int', flush=True)\n\
signal.signal(signal.SIGINT, on_int)\n\
print('ready', os.getpid(), flush=True)\n\
while True:\n    time.sleep(1)\n";
        let mut cmd = Command::new("python3");
        cmd.args(["-c", script])
            .current_dir(&fixture.workspace)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        session.install(&mut cmd).unwrap();
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        lines.read_line(&mut first).unwrap();
        let group = i32::try_from(child.id()).unwrap();
        // SAFETY: kill(2) on the group the child leads.
        assert_eq!(unsafe { libc::kill(-group, libc::SIGINT) }, 0);
        std::thread::sleep(std::time::Duration::from_millis(500));
        // SAFETY: kill(2) on the spawned pid alone (the reaper).
        assert_eq!(unsafe { libc::kill(group, libc::SIGTERM) }, 0);
        let mut rest = String::new();
        lines.read_to_string(&mut rest).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(first, "ready 2\n", "the program is pid 2 of its namespace");
        assert_eq!(rest, "int\n", "one SIGINT, no more");
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    }

    /// Init is pid 1: when the command ends, whatever it left running dies
    /// with it, even in a session of its own.
    #[test]
    fn what_the_command_left_running_dies_with_it() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let marker = format!("0.{}{}", std::process::id(), 7);
        let script = format!("setsid sleep 300 {marker} >/dev/null 2>&1 & sleep 0.3; echo started");
        let out = via_cli(&fixture, &script);
        assert_eq!(stdout(&out), "started", "{out:?}");
        let left = processes::survivors(&processes::sleep_needle(&marker));
        assert!(left.is_empty(), "still running: {left:?}");
    }

    /// Pss in kB of `pid` (its share of every page it maps).
    fn pss_kb(pid: u32) -> u64 {
        let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
        rollup
            .lines()
            .find_map(|line| line.strip_prefix("Pss:"))
            .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
            .unwrap()
    }

    /// The reaper and init are forks of the workbench that live as long as
    /// the command (the kernel: the whole session). They must not keep a
    /// copy of the workbench's memory: here 128 MB the host rewrites after
    /// the spawn, which would otherwise stay pinned by them.
    #[test]
    fn the_reaper_and_init_give_back_the_workbenchs_memory() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let mut big = vec![1u8; 128 << 20];
        for i in (0..big.len()).step_by(4096) {
            big[i] = 2;
        }
        let mut cmd = Command::new("sleep");
        cmd.arg("30").current_dir(&fixture.workspace);
        session.install(&mut cmd).unwrap();
        let mut child = cmd.spawn().unwrap();
        let reaper = child.id();
        let children = format!("/proc/{reaper}/task/{reaper}/children");
        let mut init = None;
        for _ in 0..100 {
            init = std::fs::read_to_string(&children)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok());
            if init.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let Some(init) = init else {
            let _ = child.kill();
            panic!("no init under the spawned process");
        };
        // Init gives its copy back once it has forked the command: a
        // loaded machine may take a while to get there, so the host
        // rewrites its pages (breaking any copy still shared) and looks
        // again until a deadline.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut held;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(100));
            for i in (0..big.len()).step_by(4096) {
                big[i] = big[i].wrapping_add(1);
            }
            held = pss_kb(reaper) + pss_kb(init);
            if held < 32 << 10 || std::time::Instant::now() > deadline {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(held < 32 << 10, "reaper + init hold {held} kB");
    }

    /// Where the fresh `/proc` cannot be mounted (a container that masks
    /// part of the host's: here a tmpfs over `/proc/sys`, locked in the
    /// user namespace a non-root user gets), the sandbox is unavailable and
    /// the command is refused, not run without its PID namespace.
    #[test]
    fn a_masked_proc_makes_the_sandbox_unavailable_for_non_root() {
        if !landlock_available() {
            return;
        }
        let Some(fixture) = nobody_fixture(&["setpriv", "unshare"]) else {
            return;
        };
        let as_nobody = format!(
            "setpriv --reuid=65534 --regid=65534 --clear-groups {BIN} sandbox -C {ws} -- true",
            ws = fixture.workspace.display()
        );
        let run = |mask: bool| {
            let mount = if mask {
                "mount -t tmpfs none /proc/sys && "
            } else {
                ""
            };
            let mut cmd = Command::new("unshare");
            cmd.args(["-m", "sh", "-c", &format!("{mount}exec {as_nobody}")]);
            output_of(cmd)
        };
        let plain = run(false);
        if !plain.status.success() {
            eprintln!("\n!!!!! nobody gets no sandbox here at all: {plain:?}\n");
            return;
        }
        let masked = run(true);
        let stderr = String::from_utf8_lossy(&masked.stderr);
        assert_eq!(masked.status.code(), Some(2), "{masked:?}");
        assert!(stderr.contains("refusing to run"), "{stderr}");
        assert!(stderr.contains("fresh /proc"), "{stderr}");
    }
}

/// How the workbench stops a confined child: `process_group::run` (check
/// commands on save, `shell.run`) kills the spawned process's group at the
/// timeout. That group holds the sandbox's reaper alone; its death takes
/// init, and init's the whole PID namespace, even a process that left
/// the group.
mod stopping {
    use super::*;
    use hello_tui::process_group::{Limits, RunError, run};

    #[tokio::test]
    async fn a_timeout_kills_everything_the_confined_command_started() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let marker = format!("0.{}{}", std::process::id(), 9);
        let mut cmd = tokio::process::Command::new("sh");
        cmd.args([
            "-c",
            &format!("setsid sleep 300 {marker} >/dev/null 2>&1 & sleep 100"),
        ])
        .current_dir(&fixture.workspace);
        session.install(cmd.as_std_mut()).unwrap();
        let limits = Limits {
            timeout: std::time::Duration::from_millis(500),
            head: 1000,
            tail: 1000,
        };
        let outcome = run(cmd, limits).await;
        assert!(matches!(outcome, Err(RunError::TimedOut(_))), "{outcome:?}");
        let left = processes::survivors(&processes::sleep_needle(&marker));
        assert!(left.is_empty(), "still running: {left:?}");
    }
}

/// Issue 25: the terminal is a way out. Each test gives the process under
/// test a pty of its own as controlling terminal (as a user's shell would
/// have), runs confined code that tries every way into it, and checks that
/// nothing waits in the terminal's input queue (what the user's shell would
/// run next) and nothing raw was drawn. The kernel here has
/// `dev.tty.legacy_tiocsti = 1` unless a test says otherwise.
mod terminal {
    use super::*;
    use pty::Pty;

    const BIN: &str = env!("CARGO_BIN_EXE_hello-tui");

    /// Route 4: `hello-tui sandbox -- CMD` typed into the calling shell.
    #[test]
    fn sandbox_cli_cannot_type_into_or_draw_on_its_terminal() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let pty = Pty::open();
        let mut cmd = Command::new(BIN);
        cmd.arg("sandbox").arg("-C").arg(&fixture.workspace).args([
            "--",
            "python3",
            "-c",
            pty::ATTACK,
        ]);
        pty.control(&mut cmd);
        let status = cmd.status().unwrap();
        let drawn = pty.assert_nothing_typed();
        assert!(status.success(), "{drawn}");
        pty::assert_refused(&drawn);
    }

    /// Every confined spawn lets go of terminals it would inherit: stdio
    /// that is a terminal becomes `/dev/null`, a terminal passed as an
    /// extra fd is closed, and so is an `O_PATH` fd to one (no terminal to
    /// `isatty`, but it reopens through `/proc/self/fd`); the program has
    /// no controlling terminal.
    #[test]
    fn a_confined_spawn_inherits_no_terminal() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let pty = Pty::open();
        let mut cmd = Command::new("sh");
        let check = "for fd in 0 1 2 8 9; do if [ -t $fd ]; then echo tty$fd; fi; done; \
                     ls /proc/self/fd/8 /proc/self/fd/9 2>/dev/null | wc -l; \
                     awk '{print \"tty_nr=\" $7}' /proc/self/stat";
        cmd.args(["-c", check]).current_dir(&fixture.workspace);
        let slave = pty.slave_fd();
        let path = std::ffi::CString::new(pty.slave_name()).unwrap();
        // SAFETY: dup2 and open are async-signal-safe; fds 8 and 9 are
        // not close-on-exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                let by_path = libc::open(path.as_ptr(), libc::O_PATH);
                if libc::dup2(slave, 9) < 0 || by_path < 0 || libc::dup2(by_path, 8) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        session.install(&mut cmd).unwrap();
        cmd.stdin(pty.slave_stdio()).stderr(pty.slave_stdio());
        let out = cmd.output().unwrap();
        assert_eq!(stdout(&out), "0\ntty_nr=0", "{out:?}");
    }

    /// The child's `/dev` holds the ordinary devices and links only: no
    /// terminal, console, input device, screen or disk of the host's can
    /// be opened, even for reading (a keylogger as root reads
    /// `/dev/input`); the ordinary ones work, `<(…)` too.
    #[test]
    fn dev_holds_only_the_ordinary_devices() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "bash",
            &[
                "-c",
                "ls -A /dev | tr '\\n' ' '; echo; (ls -A /dev/pts; ls -A /dev/shm) | wc -w; \
                 echo x > /dev/null && head -c 3 /dev/urandom | wc -c && cat <(echo substituted)",
            ],
        );
        assert_eq!(
            stdout(&out),
            "fd full null pts random shm stderr stdin stdout urandom zero \n0\n3\nsubstituted",
            "{out:?}"
        );
    }

    /// A device node in a writable root (unpacked from an archive, made by
    /// someone outside) opens nothing: every mount of the child is
    /// `nodev` but its own `/dev`, where `/dev/null` still works.
    #[test]
    fn a_console_node_in_the_workspace_opens_nothing() {
        // SAFETY: geteuid has no preconditions.
        if !landlock_available() || unsafe { libc::geteuid() } != 0 {
            return;
        }
        let fixture = Fixture::new();
        let node = std::ffi::CString::new(
            fixture
                .workspace
                .join("console")
                .as_os_str()
                .as_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: mknod reads a C string; 5:1 is the system console.
        let made =
            unsafe { libc::mknod(node.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(5, 1)) };
        assert_eq!(made, 0, "{}", std::io::Error::last_os_error());
        let session = fixture.session(false);
        let out = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &[
                "-c",
                "echo x > console && echo console; echo x > /dev/null && echo null",
            ],
        );
        assert_eq!(stdout(&out), "null", "{out:?}");
    }

    /// Route 14: System V IPC of the host is out of sight, and a segment
    /// made inside goes away with the sandbox.
    #[test]
    fn host_shared_memory_is_out_of_sight() {
        if !landlock_available() {
            return;
        }
        // SAFETY: shmget with IPC_PRIVATE makes a new segment; removed below.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o666) };
        assert!(id >= 0, "{}", std::io::Error::last_os_error());
        let fixture = Fixture::new();
        let session = fixture.session(false);
        let inside = sandboxed(
            &session,
            &fixture.workspace,
            "sh",
            &[
                "-c",
                "ipcs -m | grep -c '^0x' ; ipcmk -M 65539 >/dev/null && echo made",
            ],
        );
        let listed = unconfined(&fixture.workspace, "ipcs", &["-m"]);
        // SAFETY: removes the segment made above.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        assert_eq!(stdout(&inside), "0\nmade", "{inside:?}");
        let host = stdout(&listed);
        assert!(host.contains(&id.to_string()), "{host}");
        assert!(
            !host.contains("65539"),
            "the sandbox's segment outlived it: {host}"
        );
    }

    /// The process cap: a fork loop stops near the configured number,
    /// as root too (where `RLIMIT_NPROC` would not apply).
    #[test]
    fn a_fork_loop_stops_at_the_process_cap() {
        if !landlock_available() {
            return;
        }
        let fixture = Fixture::new();
        let session = SandboxSession::start(
            &fixture.workspace,
            false,
            SandboxOptions {
                max_processes: 400,
                ..SandboxOptions::default()
            },
        )
        .unwrap();
        if session
            .limitations()
            .iter()
            .any(|l| l.contains("processes"))
        {
            eprintln!("\n!!!!! no per-namespace pid_max on this kernel: cap not tried\n");
            return;
        }
        let forks = "import os, signal\n\
n = 0\n\
try:\n    for _ in range(2000):\n        if os.fork() == 0:\n            signal.pause()\n        n += 1\n\
except OSError as e:\n    print(n, e.errno)\n";
        let out = sandboxed(&session, &fixture.workspace, "python3", &["-c", forks]);
        let text = stdout(&out);
        let (count, errno) = text.split_once(' ').expect(&text);
        let count: u32 = count.parse().unwrap();
        assert!((300..=400).contains(&count), "{text}");
        assert_eq!(errno, libc::EAGAIN.to_string());
    }
}

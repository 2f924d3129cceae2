//! The kernel sandbox and the approval modes.
//!
//! The kernel runs code a model wrote. Approving `shell.run` alone protects
//! nothing (a cell can `import subprocess`), so the boundary is the process:
//! on Linux every process the workbench starts on the model's behalf (the
//! kernel, `shell.run` children) is confined before `exec`, and everything
//! it starts inherits that confinement. The rule lives in one place,
//! [`Confinement`]: spawners call [`Confinement::apply`] on their `Command`.
//!
//! What a confined child gets (see each module for why):
//! - `env`: an environment built from an allowlist, never the API key;
//! - `namespace`: a private mount namespace (a user namespace first when
//!   not root) with the session's private temp dir as `/tmp` (a `tmpfs`
//!   capped at `[safety] tmp_size_mb`, shared by the session's spawns:
//!   `PrivateTmp::cap`, `tmp_keeper` when not root), every mount
//!   read-only outside the writable roots (so no `chmod`, `utime` or
//!   xattrs there, which Landlock does not cover), and `.git/` and
//!   `.hello-tui/` read-only inside the workspace (`protected`), those
//!   made later too (`guard`, `registration`);
//! - `terminal`: no terminal at all — terminal stdio becomes `/dev/null`,
//!   other inherited terminal fds are closed, and init starts a session of
//!   its own, so no controlling terminal (a terminal is a way out: typed
//!   input, escape sequences); `hello-tui sandbox` relays its terminal
//!   through pipes (`relay`);
//! - `namespace` also gives a private IPC namespace and a `/dev` of the
//!   child's own (`devices`: no terminal, console, input device or disk);
//! - `pid_namespace`: a private PID namespace with a fresh `/proc`, so no
//!   other process (the workbench, the user's programs, their command
//!   lines and environments) is in sight. The spawned pid stays outside as
//!   a reaper that forwards signals and ends like the program; init
//!   (pid 1) takes whatever is left running down with it when the program
//!   ends, and its `pid_max` caps the processes alive at once (Linux
//!   6.14+);
//! - `cgroup`: as root, a cgroup per session capping the memory and the
//!   processes of all its spawns together (each joins it first thing);
//! - `caps`: no capabilities, even as root (bounding set emptied);
//! - Landlock (`prepare`): reads everywhere, writes only beneath the
//!   workspace, the private temp dir and configured extra paths; no TCP
//!   unless allowed; abstract sockets and signals scoped (ABI 6);
//! - seccomp (`seccomp`): no `socket(AF_UNIX)` (the tmux/Docker door), no
//!   device nodes, no `bpf`/`ptrace`/`keyctl`/`sethostname`, no
//!   `ioctl(TIOCSTI|TIOCLINUX)`, no sockets at all without network;
//! - and the workbench itself turns non-dumpable, so its `/proc/<pid>`
//!   (environment, memory) is closed to the child.
//!
//! Use from a spawner (the probe forks once, `for_mode` opens a few fds):
//!
//! ```no_run
//! use hello_tui::sandbox::{ApprovalMode, ChildEnv, Confinement, SandboxOptions, SandboxStatus};
//! # fn spawn(workspace: &std::path::Path) -> anyhow::Result<()> {
//! let status = SandboxStatus::probe(); // once, at start-up
//! let env = ChildEnv::from_host(&[], "OPENAI_API_KEY");
//! // An error: the sandbox is needed but cannot be prepared. Fail closed.
//! let confinement =
//!     Confinement::for_mode(ApprovalMode::Auto, &status, workspace, false, SandboxOptions::default(), env)?;
//! let mut cmd = tokio::process::Command::new("python3");
//! confinement.apply(cmd.as_std_mut())?; // keep `confinement` alive while it runs
//! let child = cmd.spawn()?;
//! # drop((child, confinement)); Ok(()) }
//! ```
//!
//! Things a spawner must know:
//! - the host↔child channel must be inherited fds (pipes, a socketpair):
//!   TCP is denied without network and `socket(AF_UNIX)` always is;
//! - `multiprocessing` semaphores live in `/dev/shm`, which is not writable
//!   by default (shared with every other program), and `multiprocessing`
//!   managers (which listen on a unix socket) do not work;
//! - `ptrace` is refused, so `gdb`/`strace` do not work in a cell;
//! - writes outside the writable roots mostly fail with `EROFS`, not
//!   `EACCES`: the read-only mount answers before Landlock does. The
//!   kernel's driver, told it is confined (`KernelConfig::sandboxed`),
//!   reports a cell that ends on one as a `PermissionError` naming the path
//!   and the writable roots; inside the cell (`try/except`) and in other
//!   programs it stays `OSError: [Errno 30] Read-only file system`;
//! - the pid a spawner gets is the reaper's: signal it or its group (both
//!   reach the program once), never expect the program's own pid there;
//!   inside, the program is pid 2, and what it leaves running when it ends
//!   is killed (no daemons outliving a `shell.run`);
//! - the reaper and init are forks of the spawning process; they give back
//!   its big heap mappings at once, but keep its brk heap and small
//!   mappings (copy-on-write) while the program runs;
//! - `TMPDIR` is `/tmp`, which is the private temp dir: files the user left
//!   in the host's `/tmp` cannot be seen, and the host finds the child's
//!   temp files under [`SandboxSession::private_tmp`];
//! - writes to `.git/` fail (`git commit` from a cell; `git status` works);
//! - as non-root, files of other users (root's included) appear owned by
//!   `nobody` inside the user namespace;
//! - switching between `full` and a sandboxed mode needs a kernel restart.
//!
//! Known gaps (stated so nobody over-trusts it):
//! - a `.git` or `.hello-tui` made while sandboxed processes run is made
//!   read-only for them by the session's guard (`guard`: it watches the
//!   workspace and binds the new entry in each live spawn's mount
//!   namespace), but only once it is seen: for a few milliseconds a running
//!   confined process can write it, one that opened something inside it
//!   then keeps writing through that until it ends (`held`: the notice
//!   names it), and one that made it (a cell's `git init`) may have
//!   planted its config first. [`SandboxSession::appeared_notice`] says
//!   which appeared (`hello-tui sandbox` prints it; the workbench says so
//!   after the cell). A `git init`/`git clone` run by confined code may
//!   fail part-way, its `.git` turning read-only under it. Past the
//!   inotify watch limit, folders not watched are covered by full walks;
//! - the session's cgroup (memory and processes of all its spawns
//!   together) needs root; other users get the per-process limits only,
//!   and the start-up notice says so;
//! - the walk for nested repositories runs at every spawn and refuses the
//!   spawn past `HELLO_TUI_PROTECT_SCAN_LIMIT` entries; writable roots
//!   outside the workspace (`[safety] writable`) are not searched;
//! - on CPUs other than x86_64/aarch64 there is no seccomp filter, so only
//!   TCP is confined there and unix sockets stay open;
//! - reads are not confined at all (by design of this policy): a cell can
//!   read `~/.ssh` and print it into the conversation.
//!
//! There is no weaker fallback for the namespaces: where the mount calls
//! (`mount_setattr` is Linux 5.12+, older than Landlock) or the fresh
//! `/proc` are refused, the probe fails and the sandbox counts as
//! unavailable (see [`SandboxStatus::probe`] for why not "partly").

mod caps;
mod cgroup;
mod child;
pub mod cli;
mod confinement;
mod devices;
mod env;
mod error;
mod guard;
mod held;
mod host_memory;
mod mode;
mod mounts;
mod namespace;
mod pid_namespace;
mod policy;
mod prepare;
mod protected;
mod registration;
mod relay;
mod seccomp;
mod session;
mod status;
mod terminal;
mod tmp_keeper;

pub use child::{apply_in_child, install};
pub use confinement::{Confinement, PipedChild};
pub use env::ChildEnv;
pub use error::SandboxError;
pub use mode::{ApprovalMode, ParseModeError, effective_mode, fallback_notice};
pub use policy::{
    DEFAULT_MAX_PROCESSES, DEFAULT_TMP_SIZE_MB, PrivateTmp, SandboxOptions, SandboxPolicy,
};
pub use prepare::{PreparedSandbox, prepare};
pub use protected::{PROTECTED, SCAN_LIMIT_VAR};
pub use session::SandboxSession;
pub use status::SandboxStatus;

//! `hello-tui sandbox -- CMD ARGS`: run any command under the same sandbox
//! the kernel gets, to see what it allows (and to use it outside the TUI).

use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};

use anyhow::Context;

use super::confinement::Confinement;
use super::env::ChildEnv;
use super::error::SandboxError;
use super::mode::ApprovalMode;
use super::policy::SandboxOptions;
use super::relay::Relay;
use super::status::SandboxStatus;
use crate::sanitize::for_display;

/// Exit code when the sandbox cannot be applied and nothing was run.
const UNAVAILABLE_EXIT: u8 = 2;

/// Run a command inside the kernel's sandbox: it may read everything but
/// write only beneath the workspace and a private temp dir, with no network
/// unless allowed, no capabilities (even as root), no unix sockets and only
/// the allowlisted environment variables.
#[derive(Debug, Clone, clap::Args)]
pub struct SandboxArgs {
    /// Allow TCP connections and listening sockets.
    #[arg(long)]
    pub allow_network: bool,

    /// MiB the command's private /tmp may hold (0: no cap).
    #[arg(long, value_name = "MIB", default_value_t = super::policy::DEFAULT_TMP_SIZE_MB)]
    pub tmp_size_mb: u64,

    /// MiB of memory the command and all it starts may use together (0: no
    /// cap; needs root and the memory cgroup controller).
    #[arg(long, value_name = "MIB", default_value_t = 0)]
    pub memory_limit_mb: u64,

    /// The directory the command may write to; the command runs in it.
    #[arg(short = 'C', long, value_name = "DIR", default_value = ".")]
    pub workspace: PathBuf,

    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs the command with inherited stdio and returns its exit code (128 +
/// signal number when a signal killed it, like a shell). Refuses with exit
/// code 2 and a message on stderr when the sandbox is unavailable: running
/// the command unconfined would defeat the point.
pub fn run(args: &SandboxArgs) -> anyhow::Result<ExitCode> {
    let Some((program, program_args)) = args.command.split_first() else {
        anyhow::bail!("no command given: use `hello-tui sandbox -- CMD ARGS`");
    };
    let status = SandboxStatus::probe();
    if let SandboxStatus::Unavailable(reason) = &status {
        return Ok(refuse(program, reason));
    }
    let workspace = args
        .workspace
        .canonicalize()
        .with_context(|| format!("cannot open workspace {}", args.workspace.display()))?;
    // No settings here, so no `[kernel] env` and no key name: the built-in
    // allowlist alone decides.
    let env = ChildEnv::from_host(&[], "");
    let confinement = match Confinement::for_mode(
        ApprovalMode::Auto,
        &status,
        &workspace,
        args.allow_network,
        SandboxOptions {
            tmp_size_mb: args.tmp_size_mb,
            memory_limit_bytes: (args.memory_limit_mb > 0)
                .then(|| args.memory_limit_mb.saturating_mul(1 << 20)),
            ..SandboxOptions::default()
        },
        env,
    ) {
        Ok(confinement) => confinement,
        Err(SandboxError::Unavailable(reason)) => return Ok(refuse(program, &reason)),
        Err(error) => return Err(error.into()),
    };
    for limitation in confinement
        .session()
        .map(|s| s.limitations())
        .unwrap_or_default()
    {
        eprintln!("hello-tui sandbox: warning: {limitation}");
    }

    let mut cmd = Command::new(program);
    cmd.args(program_args).current_dir(&workspace);
    confinement
        .apply(&mut cmd)
        .context("cannot set up the sandbox")?;
    // The command gets no terminal: ours is relayed, sanitized.
    let relay = Relay::plan(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run `{program}` in the sandbox"))?;
    let running = relay.start(&mut child);
    // Ctrl+C and Ctrl+\ reach the reaper too (it is in our process group)
    // and it passes them on to the program, which decides: we wait for it
    // rather than die first and leave it running behind the prompt.
    // SAFETY: SIG_IGN needs no handler code; set after the spawn, so the
    // command does not inherit it.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
    }
    let status = child
        .wait()
        .with_context(|| format!("waiting for `{program}` failed"))?;
    running.finish();
    if let Some(notice) = confinement.session().and_then(|s| s.appeared_notice()) {
        // The notice names paths the command made.
        eprintln!("hello-tui sandbox: warning: {}", for_display(&notice));
    }
    Ok(ExitCode::from(exit_code(status)))
}

fn refuse(program: &str, reason: &str) -> ExitCode {
    eprintln!(
        "hello-tui sandbox: refusing to run `{}` unconfined: {reason}",
        for_display(program)
    );
    ExitCode::from(UNAVAILABLE_EXIT)
}

/// The shell's convention: the exit code, or 128 + the signal that killed it.
fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + (signal & 0x7f)).unwrap_or(1),
        (None, None) => 1,
    }
}

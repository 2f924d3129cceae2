//! One kernel session's sandbox: its private temp dir and its prepared
//! ruleset, created together and kept alive as long as the kernel runs.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::cgroup::{Limits, SessionCgroup};
use super::child::install_announcing;
use super::error::SandboxError;
use super::guard::Guard;
use super::policy::{PrivateTmp, SandboxOptions, SandboxPolicy};
use super::prepare::{PreparedSandbox, prepare_kept};
use super::protected::PROTECTED;

/// Everything a sandboxed kernel spawn needs. Keep it alive while the kernel
/// process runs: dropping it removes the private temp dir.
#[derive(Debug)]
pub struct SandboxSession {
    policy: SandboxPolicy,
    prepared: PreparedSandbox,
    /// Protected folders missing at start: a spawn made while one is
    /// missing cannot protect it (see [`SandboxSession::appeared_protected`]).
    absent_at_start: Vec<PathBuf>,
    /// Makes a `.git` that appears later read-only in every live spawn.
    guard: Guard,
    /// Why the private `/tmp` has no size cap although one was asked.
    tmp_uncapped: Option<String>,
    /// The cgroup every spawn joins (memory and processes of the session
    /// together), or why there is none.
    cgroup: Result<SessionCgroup, String>,
    // Declared last so the dir outlives everything that points at it.
    private_tmp: PrivateTmp,
}

impl SandboxSession {
    /// Creates the private temp dir and prepares the ruleset for a kernel
    /// working in `workspace`.
    pub fn start(
        workspace: &Path,
        allow_network: bool,
        options: SandboxOptions,
    ) -> Result<Self, SandboxError> {
        let mut private_tmp = PrivateTmp::create()?;
        let tmp_uncapped = (options.tmp_size_mb > 0)
            .then(|| private_tmp.cap(options.tmp_size_mb).err())
            .flatten()
            .map(|reason| {
                format!(
                    "the private /tmp has no size cap ({} MiB asked by [safety] tmp_size_mb): {reason}",
                    options.tmp_size_mb
                )
            });
        let policy = SandboxPolicy {
            extra_writable: options.extra_writable,
            max_processes: options.max_processes,
            ..SandboxPolicy::new(workspace, private_tmp.path(), allow_network)
        };
        // After `prepare`, which creates `.hello-tui/`.
        let prepared = prepare_kept(&policy, private_tmp.kept())?;
        let absent_at_start = PROTECTED
            .iter()
            .map(|name| workspace.join(name))
            .filter(|path| path.symlink_metadata().is_err())
            .collect();
        let canonical = workspace
            .canonicalize()
            .map_err(|source| SandboxError::Path {
                path: workspace.to_path_buf(),
                source,
            })?;
        let guard = Guard::start(&canonical).map_err(SandboxError::Guard)?;
        let cgroup = SessionCgroup::create(Limits {
            memory_bytes: options.memory_limit_bytes,
            max_processes: options.max_processes,
        });
        match &cgroup {
            Ok(_) => tracing::info!("sandbox: the session's processes share a cgroup"),
            Err(reason) => tracing::info!("sandbox: no cgroup for the session: {reason}"),
        }
        Ok(SandboxSession {
            policy,
            prepared,
            absent_at_start,
            guard,
            tmp_uncapped,
            cgroup,
            private_tmp,
        })
    }

    /// Confines the process `cmd` will spawn (see [`super::install`]).
    /// For a `tokio::process::Command`, pass `cmd.as_std_mut()`. The
    /// process joins this session's guard: a `.git` or `.hello-tui` made
    /// in the workspace while it runs is made read-only for it too.
    pub fn install(&self, cmd: &mut Command) -> io::Result<()> {
        let cgroup = match &self.cgroup {
            Ok(cgroup) => cgroup.procs()?,
            Err(_) => Vec::new(),
        };
        install_announcing(cmd, &self.prepared, Some(self.guard.announce()), cgroup)
    }

    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    pub fn prepared(&self) -> &PreparedSandbox {
        &self.prepared
    }

    /// Where the host finds what the session's processes wrote to `/tmp`.
    pub fn private_tmp(&self) -> &Path {
        self.private_tmp.contents()
    }

    /// Protected entries (`.git`, `.hello-tui`, at any depth) that did
    /// not exist when the session started and appeared since. Each was
    /// writable, for a moment at least, to the sandboxed processes running
    /// then, and a sandboxed process may have made it: its hooks and config
    /// may have been planted, and would run at the user's next git command
    /// there. Running processes get it read-only once the session sees it
    /// (see `super::guard`); processes spawned after get it read-only.
    pub fn appeared_protected(&self) -> Vec<PathBuf> {
        let mut appeared: Vec<PathBuf> = self
            .absent_at_start
            .iter()
            .filter(|path| path.symlink_metadata().is_ok())
            .cloned()
            .collect();
        for seen in self.guard.appeared() {
            if !appeared.contains(&seen.path) && !self.is_top_level_twin(&seen.path) {
                appeared.push(seen.path);
            }
        }
        appeared
    }

    /// Whether `path` (canonical, from the guard) is a top-level entry
    /// already listed by its spelled path.
    fn is_top_level_twin(&self, path: &Path) -> bool {
        let workspace = &self.policy.workspace;
        workspace.canonicalize().is_ok_and(|canonical| {
            self.absent_at_start
                .iter()
                .filter_map(|absent| absent.strip_prefix(workspace).ok())
                .any(|name| canonical.join(name) == path)
        })
    }

    /// What to tell the user about [`Self::appeared_protected`], or `None`
    /// when nothing appeared.
    pub fn appeared_notice(&self) -> Option<String> {
        let appeared = self.appeared_protected();
        let names: Vec<String> = appeared
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        if names.is_empty() {
            return None;
        }
        let seen = self.guard.appeared();
        let missed = seen.iter().any(|seen| seen.unprotected_in > 0);
        let held: Vec<String> = seen
            .iter()
            .flat_map(|seen| {
                seen.held_by
                    .iter()
                    .map(|who| format!("{who} in {}", seen.path.display()))
            })
            .collect();
        let mut notice = format!(
            "{} appeared during this sandboxed session: until hello-tui saw it{}, it was \
             writable to the sandboxed code running then, which may also have made it. Check \
             its hooks/ and config (core.fsmonitor, core.hooksPath, aliases) before you run \
             git there",
            names.join(", "),
            if missed {
                " (and, for some running sandboxed process, even after: it could not be made \
                 read-only there)"
            } else {
                " and made it read-only for running sandboxed processes"
            }
        );
        if !held.is_empty() {
            notice.push_str(&format!(
                ". A sandboxed process had something inside it open from before, and can still \
                 write there through that until it ends: {} (restart the kernel, or end that \
                 command, then check again)",
                held.join(", ")
            ));
        }
        Some(notice)
    }

    /// What this session cannot enforce of the policy: what the kernel
    /// cannot ([`PreparedSandbox::limitations`]), and what keeps it from
    /// protecting repositories made while its processes run.
    pub fn limitations(&self) -> Vec<String> {
        let mut notes = self.prepared.limitations();
        notes.extend(self.tmp_uncapped.clone());
        if let Err(reason) = &self.cgroup {
            notes.push(format!(
                "the session's processes are not capped together, only one by one (the \
                 kernel's address space, each spawn's process count): no cgroup ({reason})"
            ));
        }
        notes.extend(self.guard.trouble());
        notes
    }
}

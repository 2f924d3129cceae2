//! Approval modes and the sandboxed kernel, as the workbench runs them.
//!
//! At start the sandbox is probed once; the requested mode (flag, config,
//! else `ask`) becomes the effective one (`auto` without a sandbox falls
//! back to `ask`, and says so). The kernel and its `shell.run` children are
//! started under one `sandbox::Confinement` (by `kernel_launch`, the one
//! launcher `exec` and `rlm_query` use too): sandboxed in every mode but `full`, restarts
//! after a crash or a timeout included. Switching to or from `full` starts a
//! new kernel (a process cannot leave its Landlock domain).

use std::sync::Arc;

use crate::config::Settings;
use crate::context::{PublishedSnapshot, SharedContext};
use crate::kernel_launch::{self, Confined, KernelLaunch, McpLink, Variables};
use crate::kernel_setup::{self, ContextLink, FsLinks};
use crate::sandbox::{ApprovalMode, Confinement, SandboxStatus, effective_mode, fallback_notice};
use crate::subcalls::{Approvals, Subcalls};
use crate::workbench::KernelView;
use crate::workbench::Workbench;
use crate::workbench::approvals::ApprovalBroker;
use crate::workbench::event::AppEventSender;
use crate::workbench::kernel::KernelClient;
use tokio::sync::watch;

/// What the status bar says about safety.
#[derive(Debug, Clone)]
pub struct SafetyView {
    /// The mode in force (after any fallback).
    pub mode: ApprovalMode,
    /// `None` until probed (tests without a sandbox probe).
    pub sandbox: Option<SandboxStatus>,
    /// Whether the running kernel was spawned inside the sandbox.
    pub confined: bool,
    /// The sandboxed kernel can reach the network (allowed by the user, or
    /// not confinable on this machine).
    pub network_open: bool,
    /// The running kernel's sandbox, asked after each cell whether a
    /// protected folder (`.git/`) appeared that the kernel could write.
    pub kernel_sandbox: Option<Arc<crate::sandbox::SandboxSession>>,
    /// That warning was given (once per kernel).
    pub appeared_warned: bool,
}

impl Default for SafetyView {
    fn default() -> Self {
        Self {
            mode: ApprovalMode::Ask,
            sandbox: None,
            confined: false,
            network_open: false,
            kernel_sandbox: None,
            appeared_warned: false,
        }
    }
}

impl SafetyView {
    /// `ask · sandboxed`, `full · no sandbox`, `ask · unconfined`.
    pub fn label(&self) -> String {
        let confinement = match (self.mode, self.confined, &self.sandbox) {
            (ApprovalMode::Full, ..) => "no sandbox",
            (_, true, _) if self.network_open => "sandboxed, network on",
            (_, true, _) => "sandboxed",
            (_, false, Some(SandboxStatus::Unavailable(_))) => "sandbox unavailable",
            (_, false, _) => "unconfined",
        };
        format!("{} · {confinement}", self.mode)
    }

    /// Full mode, or a kernel that should be confined but is not: the
    /// status bar draws these in the warning colour.
    pub(crate) fn is_warning(&self) -> bool {
        self.mode == ApprovalMode::Full || !self.confined
    }
}

/// Starts kernels: at launch and again when the mode crosses `full`.
/// Lives in `AppState` (`None` in tests); starting never blocks the loop
/// beyond creating the sandbox's temp dir.
#[derive(Clone)]
pub struct KernelLauncher {
    app: AppEventSender,
    settings: Settings,
    workspace: std::path::PathBuf,
    broker: ApprovalBroker,
    sandbox: SandboxStatus,
    /// The agent's conversation, for the kernel's `context` capability.
    context: Option<ContextLink>,
    fs_links: Option<FsLinks>,
    /// `llm_query` for every kernel this launcher starts.
    subcalls: Option<Subcalls>,
    /// Where every kernel's MCP servers report (the agent's prompt reads it).
    mcp: crate::mcp::McpDirectory,
    /// The variables every kernel it starts keeps across restarts: one
    /// store, so a relaunch (another approval mode) brings them back.
    keep: Option<crate::session::VarStore>,
}

/// A started kernel and what to tell the user about it.
pub struct Launched {
    pub client: KernelClient,
    pub confined: bool,
    pub notice: Option<String>,
    pub sandbox: Option<Arc<crate::sandbox::SandboxSession>>,
}

impl KernelLauncher {
    pub fn new(
        app: AppEventSender,
        settings: Settings,
        workspace: std::path::PathBuf,
        broker: ApprovalBroker,
        sandbox: SandboxStatus,
    ) -> Self {
        Self {
            app,
            settings,
            workspace,
            broker,
            sandbox,
            context: None,
            fs_links: None,
            subcalls: None,
            mcp: crate::mcp::McpDirectory::default(),
            keep: None,
        }
    }

    /// Every kernel this launcher starts keeps its variables in `store`.
    pub fn with_kept_variables(mut self, store: crate::session::VarStore) -> Self {
        self.keep = Some(store);
        self
    }

    /// The store of kept variables, when there is one.
    pub fn kept_variables(&self) -> Option<&crate::session::VarStore> {
        self.keep.as_ref()
    }

    /// Gives every kernel this launcher starts the `llm` capability.
    pub fn with_subcalls(mut self, subcalls: Subcalls) -> Self {
        self.subcalls = Some(subcalls);
        self
    }

    /// Ties every kernel this launcher starts to the editors.
    pub fn with_fs_links(mut self, links: FsLinks) -> Self {
        self.fs_links = Some(links);
        self
    }

    /// Gives every kernel this launcher starts the `context` capability.
    pub(crate) fn with_context(
        mut self,
        context: SharedContext,
        snapshot: watch::Receiver<Option<PublishedSnapshot>>,
    ) -> Self {
        self.context = Some((context, snapshot));
        self
    }

    /// MCP servers of every kernel this launcher starts report to `directory`.
    pub fn with_mcp(mut self, directory: crate::mcp::McpDirectory) -> Self {
        self.mcp = directory;
        self
    }

    pub fn broker(&self) -> &ApprovalBroker {
        &self.broker
    }

    /// Starts a kernel for `mode`: confined unless the mode is `full` or the
    /// sandbox cannot be prepared here (then the kernel runs unconfined,
    /// `confined` is false and the notice says why; the caller must not stay
    /// in `auto`). `shell.run` children get the kernel's confinement.
    pub fn launch(&self, mode: ApprovalMode) -> std::io::Result<Launched> {
        let Confined {
            confinement,
            notice,
        } = kernel_launch::confine_or_unconfined(
            &self.settings,
            mode,
            &self.sandbox,
            &self.workspace,
        );
        let (runtime, events) = KernelLaunch {
            settings: &self.settings,
            root: &self.workspace,
            confinement: &confinement,
            shell_policy: Arc::new(self.broker.clone()),
            fs_links: self.fs_links.as_ref(),
            context: self.context.as_ref(),
            subcalls: self.subcalls.as_ref(),
            mcp: Some(McpLink {
                approval: Arc::new(self.broker.clone()),
                directory: &self.mcp,
            }),
            variables: Variables::Refreshed,
            keep: self.keep.as_ref(),
        }
        .start()?;
        let client = crate::workbench::kernel::spawn(
            runtime,
            events,
            self.app.clone(),
            self.broker.cell_owner(),
        );
        Ok(Launched {
            client,
            confined: confinement.is_sandboxed(),
            notice,
            sandbox: confinement.shared_session(),
        })
    }
}

/// The confinement check commands run on save and language servers get:
/// the kernel's policy in the configured mode (they run `build.rs`, proc
/// macros, `conftest.py`, npm scripts the model may have written). Where the
/// sandbox cannot be prepared they run unconfined, and a notice says so.
pub fn checks_confinement(workbench: &mut Workbench) -> Confinement {
    let mode = workbench.settings.approval.unwrap_or(ApprovalMode::Ask);
    let status = SandboxStatus::probe();
    match kernel_setup::confinement(
        &workbench.settings,
        mode,
        &status,
        &workbench.workspace_root,
    ) {
        Ok(confinement) => confinement,
        Err(error) => {
            workbench.notice(&format!(
                "check commands and language servers run unconfined: the sandbox could \
                 not be prepared ({error})"
            ));
            Confinement::unconfined(kernel_setup::child_env(&workbench.settings))
        }
    }
}

/// Start-up: probe the sandbox, settle the mode, start the kernel, and tell
/// the user what applies. Called once by the event loop.
pub fn start(workbench: &mut Workbench, app: &AppEventSender, fs_links: Option<FsLinks>) {
    let sandbox = SandboxStatus::probe();
    let requested = workbench.settings.approval.unwrap_or(ApprovalMode::Ask);
    let mut mode = effective_mode(requested, &sandbox);
    if let Some(text) = fallback_notice(requested, &sandbox) {
        workbench.notice(&text);
    }
    let broker = ApprovalBroker::new(app.clone(), mode).with_hooks(workbench.agent.hooks.clone());
    // The agent's cells ask through the same queue as shell commands.
    workbench.agent.approval = Arc::new(broker.clone());
    let events = app.clone();
    let subcalls = Subcalls::new(
        &workbench.settings,
        &workbench.workspace_root,
        workbench.agent.provider(),
        Approvals {
            calls: Arc::new(crate::workbench::subcalls::SubcallApproval(broker.clone())),
            // An `rlm_query` loop's cells ask like the agent's own, and
            // are model code run while the user's calling cell runs.
            cells: Arc::new(crate::workbench::cell_owner::NestedCells {
                approval: Arc::new(broker.clone()),
                owner: broker.cell_owner(),
            }),
        },
        Some(Arc::new(move |event| {
            let _ = events.send(crate::workbench::event::AppEvent::Subcall(event));
        })),
        &|name| std::env::var(name).ok(),
    );
    workbench.agent.subcalls = Some(subcalls.clone());
    let launcher = KernelLauncher::new(
        app.clone(),
        workbench.settings.clone(),
        workbench.workspace_root.clone(),
        broker.clone(),
        sandbox.clone(),
    )
    .with_context(
        workbench.agent.context.clone(),
        workbench.agent.snapshot_receiver(),
    )
    .with_subcalls(subcalls)
    .with_mcp(workbench.agent.mcp.clone());
    let launcher = match kept_variables(workbench, app) {
        Some(store) => launcher.with_kept_variables(store),
        None => launcher,
    };
    let launcher = match fs_links {
        // Writes are shown to the user through the same queue and mode.
        Some(links) => launcher.with_fs_links(FsLinks {
            review: Some(Arc::new(broker.clone())),
            ..links
        }),
        None => launcher,
    };
    match launcher.launch(mode) {
        Ok(launched) => {
            if !launched.confined && mode == ApprovalMode::Auto {
                mode = ApprovalMode::Ask;
                broker.set_mode(mode);
            }
            if let Some(text) = &launched.notice {
                workbench.notice(text);
            }
            workbench.safety.confined = launched.confined;
            workbench.safety.kernel_sandbox = launched.sandbox;
            workbench.safety.appeared_warned = false;
            workbench.services.kernel = Some(launched.client);
        }
        Err(error) => {
            workbench.kernel = KernelView::Dead {
                reason: error.to_string(),
            }
        }
    }
    if mode == ApprovalMode::Full {
        workbench.notice(
            "approval mode `full`: model-written code runs without a sandbox and without asking",
        );
    } else if let SandboxStatus::Unavailable(reason) = &sandbox
        && requested == mode
    {
        workbench.notice(&format!(
            "the kernel runs unconfined: the sandbox is unavailable ({reason})"
        ));
    }
    workbench.safety.mode = mode;
    workbench.safety.network_open = workbench.settings.allow_network
        || matches!(
            sandbox,
            SandboxStatus::Enforced {
                network_confined: false,
                ..
            }
        );
    workbench.safety.sandbox = Some(sandbox);
    workbench.services.approvals = Some(broker);
    workbench.services.kernel_launcher = Some(launcher);
}

/// The store of the kernel's variables across restarts, unless `[kernel]
/// keep_variables` is off: tied to the resumed session's folder when
/// there is one (its variables come back at the first cell), and telling
/// the loop what each restart brought back.
fn kept_variables(workbench: &Workbench, app: &AppEventSender) -> Option<crate::session::VarStore> {
    let limits = workbench.settings.keep_variables?;
    let (reports, mut received) = tokio::sync::mpsc::unbounded_channel();
    let store = crate::session::VarStore::new(limits.within_a_frame()).with_reports(reports);
    let app = app.clone();
    tokio::spawn(async move {
        while let Some(report) = received.recv().await {
            let _ = app.send(crate::workbench::event::AppEvent::KeptVariables(report));
        }
    });
    let resumed = workbench
        .agent
        .conversation()
        .try_lock()
        .ok()
        .and_then(|conversation| conversation.session_id().map(str::to_owned));
    if let Some(session) = resumed {
        store.resume_from(crate::session::VarsPlace {
            workspace: workbench.workspace_root.clone(),
            session,
        });
    }
    Some(store)
}

/// What the sandbox stops and `full` allows, as the question says it: the
/// rows of docs/sandbox.md's "What the sandbox guarantees" that hold only with
/// the sandbox (the API key stays out in every mode).
pub(crate) const FULL_TURNS_OFF: &str = "writing outside the workspace (your files, \
    shell start-up files, .git hooks), using the network and unix sockets (tmux, \
    Docker), seeing your other processes and the host's /tmp, or using root's \
    capabilities";

/// After a cell: a `.git/` (or another protected folder) that appeared
/// while the kernel ran was writable to it — a mount needs an existing
/// folder — so its hooks may have been planted. Said once per kernel.
pub(crate) fn warn_if_protected_appeared(workbench: &mut Workbench) {
    if workbench.safety.appeared_warned {
        return;
    }
    let Some(text) = workbench
        .safety
        .kernel_sandbox
        .as_ref()
        .and_then(|session| session.appeared_notice())
    else {
        return;
    };
    workbench.safety.appeared_warned = true;
    workbench.notice(&format!("Warning: {text}."));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigFile;
    use std::time::Duration;

    #[test]
    fn kernel_knobs_come_from_the_settings_and_the_confinement_rides_along() {
        let file = ConfigFile::parse(
            "[kernel]\npython = \"/opt/py/bin/python3\"\nmemory_limit_mb = 512\ncell_timeout_secs = 5\n",
            std::path::Path::new("c.toml"),
        )
        .unwrap();
        let settings = Settings::merge(file, None, &Default::default(), &|_: &str| None).unwrap();
        let confinement = Confinement::unconfined(kernel_setup::child_env(&settings));
        let config =
            kernel_setup::kernel_config(&settings, std::path::Path::new("/ws"), &confinement);
        assert_eq!(
            config.python,
            std::path::PathBuf::from("/opt/py/bin/python3")
        );
        assert_eq!(config.memory_limit_bytes, Some(512 * 1024 * 1024));
        assert_eq!(config.default_timeout, Duration::from_secs(5));
        assert!(
            config.pre_spawn.is_some(),
            "every spawn goes through the confinement"
        );
    }

    #[test]
    fn labels_say_how_confined_the_kernel_is() {
        let mut view = SafetyView {
            mode: ApprovalMode::Ask,
            sandbox: Some(SandboxStatus::Enforced {
                abi: 6,
                network_confined: true,
            }),
            confined: true,
            ..SafetyView::default()
        };
        assert_eq!(view.label(), "ask · sandboxed");
        assert!(!view.is_warning());
        view.network_open = true;
        assert_eq!(view.label(), "ask · sandboxed, network on");
        view.mode = ApprovalMode::Full;
        view.confined = false;
        assert_eq!(view.label(), "full · no sandbox");
        assert!(view.is_warning());
        view.mode = ApprovalMode::Ask;
        view.sandbox = Some(SandboxStatus::Unavailable("old kernel".into()));
        assert_eq!(view.label(), "ask · sandbox unavailable");
        assert!(view.is_warning());
    }
}

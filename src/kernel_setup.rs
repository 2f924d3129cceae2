//! The parts of a kernel: its config, its confinement and its capability
//! registry, from the settings, so every `[kernel]` and `[safety]` setting
//! is honoured and no child starts another way. `crate::kernel_launch`
//! puts them together for every front end.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use crate::config::Settings;
use crate::context::{ContextCapability, PublishedSnapshot, SharedContext};
use crate::kernel::caps::{
    ApprovalPolicy, DirtyPaths, FsCapability, FsWritten, ShellCapability, WriteReview,
};
use crate::kernel::{CapabilityRegistry, KernelConfig, PreSpawnHook};
use crate::mcp::{McpCapability, McpDirectory, McpServers, ToolCallApproval};
use crate::sandbox::{
    ApprovalMode, ChildEnv, Confinement, SandboxError, SandboxOptions, SandboxStatus,
};
use crate::subcalls::{NestedKernel, Subcalls};

/// What ties the kernel's `fs` to the open editors: the paths with unsaved
/// edits (`fs.write` refuses them), a channel announcing its writes (so
/// open buffers reload), and who reviews a write before it is made (the
/// workbench's approval broker; `None` where nobody can answer).
#[derive(Clone)]
pub struct FsLinks {
    pub dirty: watch::Receiver<DirtyPaths>,
    pub written: mpsc::UnboundedSender<FsWritten>,
    pub review: Option<Arc<dyn WriteReview>>,
}

/// The agent's conversation as the `context` capability reads it.
pub(crate) type ContextLink = (SharedContext, watch::Receiver<Option<PublishedSnapshot>>);

/// The environment children get under these settings: the allowlist plus
/// `[kernel] env`, never the API key's variable.
pub fn child_env(settings: &Settings) -> ChildEnv {
    ChildEnv::from_host(&settings.kernel_env, &settings.api_key_env)
}

/// How children run under these settings in `mode`: the kernel, its shell
/// commands and check commands all get this (one policy: the workspace, a
/// private temp dir and `[safety] writable`; the network if allowed). An
/// error means the sandbox is needed but cannot be prepared: fail closed.
pub fn confinement(
    settings: &Settings,
    mode: ApprovalMode,
    status: &SandboxStatus,
    workspace: &Path,
) -> Result<Confinement, SandboxError> {
    Confinement::for_mode(
        mode,
        status,
        workspace,
        settings.allow_network,
        SandboxOptions {
            extra_writable: settings.writable.clone(),
            max_processes: settings.max_processes,
            tmp_size_mb: settings.tmp_size_mb,
            memory_limit_bytes: crate::kernel::memory_limit_bytes(settings),
        },
        child_env(settings),
    )
}

/// The kernel's config from the settings (interpreter, memory limit, cell
/// timeout), started under `confinement` on every spawn, restarts included.
/// In a workspace not trusted (`crate::trust`) the interpreter is one
/// found outside it: an activated `.venv` of the repository is not run.
pub(crate) fn kernel_config(
    settings: &Settings,
    workspace: &Path,
    confinement: &Confinement,
) -> KernelConfig {
    let mut config = KernelConfig::from_settings(settings, workspace);
    if !crate::trust::decide_here(workspace, settings.vouched()).is_trusted() {
        config.python = python_outside(&config.python, workspace);
    }
    config.sandboxed = confinement.is_sandboxed();
    let confinement = confinement.clone();
    config.pre_spawn = Some(PreSpawnHook(Arc::new(move |cmd| confinement.apply(cmd))));
    config
}

/// The kernel's capabilities: `fs` (tied to the editors when `fs_links` is
/// given), `shell` (asking `shell_policy`, started under `confinement`) and,
/// when given, `context` and `llm` (`llm_query`, see `crate::subcalls`).
pub fn registry(
    root: &Path,
    confinement: &Confinement,
    shell_policy: Arc<dyn ApprovalPolicy>,
    fs_links: Option<&FsLinks>,
    context: Option<&ContextLink>,
    subcalls: Option<&Subcalls>,
) -> std::io::Result<CapabilityRegistry> {
    let mut fs = FsCapability::new(root)?;
    if let Some(links) = fs_links {
        fs = fs
            .with_dirty_paths(links.dirty.clone())
            .with_write_events(links.written.clone());
        if let Some(review) = &links.review {
            fs = fs.with_review(Arc::clone(review));
        }
    }
    let mut registry =
        CapabilityRegistry::new()
            .with(Arc::new(fs))
            .with(Arc::new(ShellCapability::new(
                root,
                Arc::clone(&shell_policy),
                confinement.clone(),
            )));
    if let Some((context, snapshot)) = context {
        registry = registry.with(Arc::new(ContextCapability::new(
            context.clone(),
            snapshot.clone(),
        )));
    }
    if let Some(subcalls) = subcalls {
        // `rlm_query` starts its loop's kernel the way this one is started.
        let nested = NestedKernel {
            root: root.to_path_buf(),
            confinement: confinement.clone(),
            shell_policy,
            fs_links: fs_links.cloned(),
        };
        registry = registry.with(Arc::new(subcalls.in_kernel(nested)));
    }
    Ok(registry)
}

/// Adds `mcp` when servers are configured: they are spawned in `root`
/// under `confinement` (the kernel's, as `shell.run` gets it: a server is
/// configured by the user but runs whatever its package does, and its tools
/// act for the model), started now in the background so the prompt can list
/// their tools, and report into `directory`. Every call asks `approval`.
/// In a workspace not trusted (`crate::trust`), a server whose program is
/// the workspace's is left out.
pub(crate) fn add_mcp(
    registry: &mut CapabilityRegistry,
    settings: &Settings,
    root: &Path,
    confinement: &Confinement,
    approval: Arc<dyn ToolCallApproval>,
    directory: &McpDirectory,
) {
    let trusted = crate::trust::decide_here(root, settings.vouched()).is_trusted();
    let configs = mcp_servers_to_start(settings, root, trusted);
    if configs.is_empty() {
        return;
    }
    let servers = McpServers::new(
        &configs,
        root.to_path_buf(),
        confinement.clone(),
        directory.clone(),
    );
    servers.start_all();
    registry.register(Arc::new(McpCapability::new(servers, approval)));
}

/// `python` as found outside the untrusted `workspace` (an absolute path);
/// when only the workspace has it, a name that cannot start and says why
/// in the kernel's start error.
fn python_outside(python: &Path, workspace: &Path) -> std::path::PathBuf {
    let found = crate::diagnostics::which_in(&python.to_string_lossy(), Some(workspace));
    match (found.program, found.passed_over) {
        (Some(outside), _) => outside,
        (None, Some(own)) => std::path::PathBuf::from(format!(
            "{} (only the untrusted workspace has it, at {}: /trust)",
            python.display(),
            own.display()
        )),
        (None, None) => python.to_path_buf(),
    }
}

/// The configured MCP servers that may start: all of them in a trusted
/// workspace; otherwise each stdio server's program is looked up outside
/// the workspace (and run by that absolute path), and one that only the
/// workspace has is left out, with a warning in the log. Started there,
/// a server gets `PYTHONSAFEPATH=1`: `python3 -m NAME` run in the
/// workspace would otherwise import a `NAME.py` the workspace ships
/// (Python 3.11+ honours it).
fn mcp_servers_to_start(
    settings: &Settings,
    root: &Path,
    trusted: bool,
) -> Vec<crate::mcp::McpServerConfig> {
    use crate::mcp::Transport;
    let mut configs = Vec::new();
    for config in &settings.mcp.servers {
        let Transport::Stdio { command } = config.transport() else {
            configs.push(config.clone());
            continue;
        };
        if trusted {
            configs.push(config.clone());
            continue;
        }
        let found = crate::diagnostics::which_in(command, Some(root));
        match (found.program, found.passed_over) {
            (Some(program), _) => {
                let mut config = config.clone();
                config.command = Some(program.to_string_lossy().into_owned());
                config
                    .env
                    .insert("PYTHONSAFEPATH".to_owned(), "1".to_owned());
                configs.push(config);
            }
            (None, Some(own)) => tracing::warn!(
                server = %config.name,
                program = %own.display(),
                "MCP server not started: its program is the untrusted workspace's"
            ),
            // Not found at all: it fails to start and says so, as before.
            (None, None) => configs.push(config.clone()),
        }
    }
    configs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every action a capability declares (what the model is told it may
    /// call) reaches its handler: called through the registry as a cell
    /// calls it, none answers that it has no such action. An action added
    /// to a spec without its handler fails here.
    #[tokio::test]
    async fn every_declared_action_reaches_its_handler() {
        use crate::kernel::caps::DenyAll;
        use crate::kernel::{CallContext, RuntimeStateHandle};
        let ws = tempfile::tempdir().unwrap();
        let settings = Settings::defaults();
        let confinement = Confinement::unconfined(child_env(&settings));
        let (_, snapshot) = crate::context::snapshot_channel();
        let subcalls = Subcalls::new(
            &settings,
            ws.path(),
            None,
            crate::subcalls::Approvals::allow_all(),
            None,
            &|_| None,
        );
        let mut registry = registry(
            ws.path(),
            &confinement,
            Arc::new(DenyAll::default()),
            None,
            Some(&(SharedContext::default(), snapshot)),
            Some(&subcalls),
        )
        .unwrap();
        let servers = McpServers::new(
            &[],
            ws.path().to_path_buf(),
            confinement,
            McpDirectory::default(),
        );
        registry.register(Arc::new(McpCapability::new(
            servers,
            Arc::new(DenyAll::default()),
        )));
        let specs = registry.specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["context", "fs", "llm", "mcp", "shell"]);
        for spec in &specs {
            for action in &spec.actions {
                let ctx = CallContext {
                    runtime: RuntimeStateHandle::detached(),
                    exec_id: None,
                };
                let answer = registry
                    .dispatch(&spec.name, &action.name, serde_json::json!({}), ctx)
                    .await;
                if let Err(error) = answer {
                    let text = error.to_string();
                    assert!(
                        !text.contains("has no action"),
                        "{}.{}: {text}",
                        spec.name,
                        action.name
                    );
                }
            }
        }
    }

    #[test]
    fn an_untrusted_workspaces_python_is_not_the_kernels() {
        let ws = tempfile::tempdir().unwrap();
        let venv = ws.path().join(".venv/bin/python3");
        crate::diagnostics::write_executable(&venv);
        let refused = python_outside(&venv, ws.path());
        assert!(
            refused.to_string_lossy().contains("/trust") && !refused.exists(),
            "{refused:?}"
        );
        let system = python_outside(Path::new("sh"), ws.path());
        assert!(system.is_absolute() && !system.starts_with(ws.path()));
    }

    #[test]
    fn an_untrusted_workspaces_mcp_server_is_left_out() {
        let ws = tempfile::tempdir().unwrap();
        let own = ws.path().join("tools/mcp-server");
        crate::diagnostics::write_executable(&own);
        let file = crate::config::ConfigFile::parse(
            &format!(
                "[[mcp.servers]]\nname = \"own\"\ncommand = \"{}\"\n[[mcp.servers]]\nname = \"shell\"\ncommand = \"sh\"\n",
                own.display()
            ),
            Path::new("c.toml"),
        )
        .unwrap();
        let settings = Settings::merge(
            file,
            None,
            &crate::config::GlobalOptions::default(),
            &|_| None,
        )
        .unwrap();
        let names = |configs: Vec<crate::mcp::McpServerConfig>| -> Vec<String> {
            configs.iter().map(|c| c.name.to_string()).collect()
        };
        assert_eq!(
            names(mcp_servers_to_start(&settings, ws.path(), false)),
            ["shell"]
        );
        assert_eq!(
            names(mcp_servers_to_start(&settings, ws.path(), true)),
            ["own", "shell"]
        );
        // Started in the untrusted workspace, `python3 -m NAME` (here `sh`)
        // must not import the workspace's `NAME.py`.
        let untrusted = mcp_servers_to_start(&settings, ws.path(), false);
        assert_eq!(
            untrusted[0].env.get("PYTHONSAFEPATH").map(String::as_str),
            Some("1")
        );
        let trusted = mcp_servers_to_start(&settings, ws.path(), true);
        assert!(
            trusted
                .iter()
                .all(|c| !c.env.contains_key("PYTHONSAFEPATH"))
        );
    }
}

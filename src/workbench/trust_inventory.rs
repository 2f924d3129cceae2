//! What the workspace would run if trusted: the programs of it that the
//! configured language servers, check commands and MCP servers would
//! start, the TypeScript a TypeScript server would load from it, and its
//! own slash-command templates. The trust question lists these, so the
//! user decides knowing what is at stake. It lives in the workbench, not
//! in `trust`, because it reads the whole of the settings and the
//! workbench's templates; `trust` itself stays below both.

use std::path::{Path, PathBuf};

use crate::config::Settings;
use crate::diagnostics::which_in;
use crate::mcp::Transport;

/// One thing of the workspace that would run (or be used) once trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provided {
    /// What uses it: `language server typescript-language-server`.
    pub role: String,
    /// The workspace's file, relative to the workspace root.
    pub path: PathBuf,
}

impl std::fmt::Display for Provided {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.role, self.path.display())
    }
}

/// Everything of the workspace at `root` that the settings would run, for
/// the files open in `dirs` (their folders decide which `node_modules`
/// applies; the root is always looked at), with `hooks` the workspace's
/// hooks as read for this question (what a yes approves).
pub fn what_would_run(
    root: &Path,
    settings: &Settings,
    dirs: &[PathBuf],
    hooks: &crate::hooks::WorkspaceHooks,
) -> Vec<Provided> {
    let root = crate::trust::canonical(root);
    let mut found: Vec<Provided> = Vec::new();
    let mut add = |role: String, path: PathBuf| {
        let path = path
            .strip_prefix(&root)
            .map_or(path.clone(), Path::to_path_buf);
        if !found.iter().any(|p| p.path == path) {
            found.push(Provided { role, path });
        }
    };
    // The folders a file's `node_modules` are looked for in: each open
    // file's folder and those above it, up to the root.
    let mut folders: Vec<PathBuf> = vec![root.clone()];
    for dir in dirs {
        let dir = crate::trust::canonical(dir);
        for ancestor in dir.ancestors().take_while(|d| d.starts_with(&root)) {
            if !folders.iter().any(|f| f == ancestor) {
                folders.push(ancestor.to_path_buf());
            }
        }
    }
    let diagnostics = &settings.diagnostics;
    for server in &diagnostics.servers {
        let name = server.name();
        if diagnostics.disabled_servers.contains(&name) {
            continue;
        }
        let role = format!("language server {name}");
        if server.node_modules && !server.command.contains('/') {
            for folder in &folders {
                let local = folder.join("node_modules/.bin").join(&server.command);
                if crate::diagnostics::which(&local.to_string_lossy()).is_some() {
                    add(role.clone(), local);
                }
            }
        }
        if server.min_typescript.is_some() || server.max_typescript.is_some() {
            for folder in &folders {
                let typescript = folder.join("node_modules/typescript");
                if typescript.join("package.json").is_file() {
                    add(
                        "TypeScript a TypeScript server loads".to_owned(),
                        typescript,
                    );
                }
            }
        }
        if let Some(own) = which_in(&server.command, Some(&root)).passed_over {
            add(role, own);
        }
        project_code(&mut add, &folders, server.project_code.as_deref(), &name);
    }
    for check in &diagnostics.checks {
        project_code(
            &mut add,
            &folders,
            check.project_code.as_deref(),
            &check.name,
        );
        if let Some(own) = which_in(&check.command, Some(&root)).passed_over {
            add(format!("check command {}", check.name), own);
        }
    }
    for server in &settings.mcp.servers {
        if let Transport::Stdio { command } = server.transport()
            && let Some(own) = which_in(command, Some(&root)).passed_over
        {
            add(format!("MCP server {}", server.name), own);
        }
    }
    if let Some(own) = which_in(&settings.python.to_string_lossy(), Some(&root)).passed_over {
        add("the kernel's Python".to_owned(), own);
    }
    for file in crate::hooks::config::WORKSPACE_FILES {
        let commands: Vec<String> = hooks
            .entries
            .iter()
            .filter(|e| e.origin == crate::hooks::Origin::Workspace(file.into()))
            .map(|e| format!("{} `{}`", e.event, e.command))
            .collect();
        if !commands.is_empty() {
            add(
                format!("hooks that run as you ({})", commands.join(", ")),
                root.join(file),
            );
        }
    }
    for template in super::slash::workspace_templates(&root) {
        add("slash command (prompt template)".to_owned(), template);
    }
    found
}

/// The project's own code a tool runs (`Cargo.toml`'s build scripts and
/// macros), when its marker file is in one of `folders`.
fn project_code(
    add: &mut impl FnMut(String, PathBuf),
    folders: &[PathBuf],
    marker: Option<&str>,
    tool: &str,
) {
    let Some(marker) = marker else { return };
    for folder in folders {
        let file = folder.join(marker);
        if file.exists() {
            add(
                format!("the project's own code (build scripts, macros) that {tool} runs"),
                file,
            );
        }
        for toolchain in crate::diagnostics::lsp::resolve::TOOLCHAIN_FILES {
            let file = folder.join(toolchain);
            if file.exists() {
                add(format!("the toolchain {tool} is run from"), file);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_workspaces_programs_and_templates() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::trust::canonical(dir.path());
        crate::diagnostics::write_executable(
            &root.join("web/node_modules/.bin/typescript-language-server"),
        );
        std::fs::create_dir_all(root.join("node_modules/typescript")).unwrap();
        std::fs::write(root.join("node_modules/typescript/package.json"), "{}").unwrap();
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(
            root.join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"./on-stop.sh"}]}]}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(root.join(".hello-tui/commands")).unwrap();
        std::fs::write(root.join(".hello-tui/commands/ship.md"), "ship it").unwrap();
        let settings = Settings::defaults();
        let hooks = crate::hooks::config::workspace_hooks(&root);
        let none_open = what_would_run(&root, &settings, &[], &hooks);
        assert!(
            !none_open.iter().any(|p| p.path.starts_with("web")),
            "{none_open:?}"
        );
        let listed: Vec<String> = what_would_run(&root, &settings, &[root.join("web/src")], &hooks)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            listed,
            [
                "the project's own code (build scripts, macros) that rust-analyzer runs: Cargo.toml",
                "TypeScript a TypeScript server loads: node_modules/typescript",
                "language server typescript-language-server: web/node_modules/.bin/typescript-language-server",
                "hooks that run as you (Stop `./on-stop.sh`): .claude/settings.json",
                "slash command (prompt template): .hello-tui/commands/ship.md",
            ]
        );
    }
}

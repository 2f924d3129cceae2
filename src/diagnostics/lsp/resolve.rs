//! Which configured servers run for a file, and which program each runs.
//!
//! Every server of the file's language runs, one per role (the first usable
//! one of each), unless the settings disable it. TypeScript servers depend
//! on the TypeScript the file resolves, as Node would: TS 7 is native and
//! serves LSP itself (`tsc --lsp`), with no `tsserver.js` for
//! `typescript-language-server` to load.
//!
//! In a workspace not trusted yet (`crate::trust`) nothing of the
//! workspace runs: its `node_modules/.bin` and any `PATH` entry inside it
//! are passed over, and a TypeScript server is not started on the
//! workspace's own `node_modules/typescript` (the server would load it).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::config::ServerConfig;
use crate::diagnostics::which::{Found, which, which_in};

/// Largest `package.json` read (a manifest, not a bundle).
const MAX_MANIFEST: u64 = 1 << 20;

/// The servers chosen for one file, and why each other candidate is not.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// Index into the configured servers, and the program to run.
    pub servers: Vec<(usize, PathBuf)>,
    /// Candidates left out: name and reason (shown by `/lsp`).
    pub skipped: Vec<(String, String)>,
}

/// The reason given for a server that only the untrusted workspace has.
pub(crate) const UNTRUSTED: &str = "the workspace is not trusted (/trust)";

/// The servers for a file of `language_id` at `path` in the workspace at
/// `root`: the first usable one per role. `trusted`: programs of the
/// workspace may run.
pub fn route(
    servers: &[ServerConfig],
    disabled: &[String],
    language_id: &str,
    path: &Path,
    root: &Path,
    trusted: bool,
) -> Route {
    // The root as given and as the file system spells it: a file path may
    // come either way.
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let dir = Within {
        dir: path.parent().unwrap_or(path),
        roots: [root, &canonical],
        trusted,
    };
    let mut route = Route::default();
    let mut filled: Vec<String> = Vec::new();
    let mut typescript: Option<Option<TypeScript>> = None;
    for (index, server) in servers.iter().enumerate() {
        if !server.language_ids.iter().any(|l| l == language_id) {
            continue;
        }
        let name = server.name();
        let role = server.role_key();
        let wants_version = server.min_typescript.is_some() || server.max_typescript.is_some();
        let found = if wants_version {
            typescript
                .get_or_insert_with(|| typescript_for(&dir))
                .as_ref()
        } else {
            None
        };
        let reason = if disabled.contains(&name) {
            "disabled in the settings".to_string()
        } else if wants_version && !server.fits_typescript(found.map(|ts| ts.major)) {
            match found {
                Some(ts) => format!("not for TypeScript {}", ts.version),
                None => "no TypeScript found (npm i typescript)".to_string(),
            }
        } else if filled.contains(&role) {
            format!("another {role} server runs")
        } else if wants_version && !trusted && found.is_some_and(|ts| ts.in_workspace) {
            format!("it would load the workspace's TypeScript: {UNTRUSTED}")
        } else if let Some(marker) = server
            .project_code
            .as_deref()
            .filter(|_| !trusted)
            .and_then(|marker| dir.project_code(marker))
        {
            format!("it runs the project's own code ({marker}): {UNTRUSTED}")
        } else {
            match program(server, &dir) {
                Found {
                    program: Some(program),
                    ..
                } => {
                    filled.push(role);
                    route.servers.push((index, program));
                    continue;
                }
                Found {
                    passed_over: Some(own),
                    ..
                } => format!("{} is the workspace's and {UNTRUSTED}", own.display()),
                Found { .. } => "missing from PATH".to_string(),
            }
        };
        route.skipped.push((name, reason));
    }
    route
}

/// A file's folder and the workspace it belongs to: `node_modules` is
/// looked for from the folder up to the workspace root, never above it —
/// a `node_modules/.bin/tsc` planted in a shared parent (`/tmp`, a home
/// folder) is not a program of this project, and the sandbox hides it
/// anyway, so a server chosen for it could never start.
pub struct Within<'a> {
    pub dir: &'a Path,
    /// The workspace root, as given and canonical.
    pub roots: [&'a Path; 2],
    /// The workspace is trusted: its programs may run.
    pub trusted: bool,
}

impl Within<'_> {
    /// The folder, then each one above it inside the workspace (none when
    /// the file lies outside it).
    fn ancestors(&self) -> impl Iterator<Item = &Path> {
        self.dir
            .ancestors()
            .take_while(|d| self.roots.iter().any(|root| d.starts_with(root)))
    }

    /// Whether `file` (`Cargo.toml`) is in the folder or one above it,
    /// inside the workspace.
    pub fn holds(&self, file: &str) -> bool {
        self.ancestors().any(|d| d.join(file).exists())
    }

    /// The file that makes a tool marked `project_code` run the project's
    /// own code here: its marker (`Cargo.toml`), or a rustup toolchain file,
    /// which picks the programs a rustup proxy (`rust-analyzer`, `cargo`)
    /// runs — a `path = …` toolchain may be a folder of the workspace.
    pub fn project_code(&self, marker: &str) -> Option<String> {
        std::iter::once(marker)
            .chain(TOOLCHAIN_FILES)
            .find(|file| self.holds(file))
            .map(str::to_owned)
    }
}

/// rustup's per-project toolchain files.
pub(crate) const TOOLCHAIN_FILES: [&str; 2] = ["rust-toolchain.toml", "rust-toolchain"];

/// The program to run: from `node_modules/.bin` above the file (inside the
/// workspace) when the server asks for it, else from PATH — outside the
/// workspace unless it is trusted.
fn program(server: &ServerConfig, dir: &Within<'_>) -> Found {
    let mut local = None;
    if server.node_modules && !server.command.contains('/') {
        local = dir
            .ancestors()
            .map(|d| d.join("node_modules/.bin").join(&server.command))
            .find(|candidate| which(&candidate.to_string_lossy()).is_some());
        if dir.trusted && local.is_some() {
            return Found {
                program: local,
                passed_over: None,
            };
        }
    }
    let untrusted = (!dir.trusted).then_some(dir.roots[1]);
    let mut found = which_in(&server.command, untrusted);
    if found.program.is_none() && local.is_some() {
        found.passed_over = local;
    }
    found
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeScript {
    pub major: u32,
    pub version: String,
    /// The workspace's own (its `node_modules`), not a global install.
    pub in_workspace: bool,
}

/// The TypeScript a file in `dir` builds with: `node_modules/typescript`
/// in the nearest folder above that has one (Node's resolution, up to the
/// workspace root), else the package behind the `tsc` on PATH (a global
/// install).
pub(crate) fn typescript_for(dir: &Within<'_>) -> Option<TypeScript> {
    let local = dir
        .ancestors()
        .map(|d| d.join("node_modules/typescript/package.json"))
        .find(|manifest| manifest.is_file());
    let in_workspace = local.is_some();
    let manifest = match local {
        Some(manifest) => manifest,
        None => {
            // `bin/tsc` links into the package: its `package.json` is above.
            let tsc = std::fs::canonicalize(which("tsc")?).ok()?;
            tsc.ancestors()
                .skip(1)
                .map(|d| d.join("package.json"))
                .find(|manifest| package_name(manifest).as_deref() == Some("typescript"))?
        }
    };
    let version = manifest_field(&manifest, "version")?;
    let major = version.split('.').next()?.parse().ok()?;
    Some(TypeScript {
        major,
        version,
        in_workspace,
    })
}

fn package_name(manifest: &Path) -> Option<String> {
    manifest_field(manifest, "name")
}

fn manifest_field(manifest: &Path, field: &str) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(manifest)
        .ok()?
        .take(MAX_MANIFEST)
        .read_to_string(&mut text)
        .ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get(field)?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::which::write_executable as executable;

    fn package(dir: &Path, version: &str) {
        let ts = dir.join("node_modules/typescript");
        std::fs::create_dir_all(&ts).unwrap();
        std::fs::write(
            ts.join("package.json"),
            format!(r#"{{"name": "typescript", "version": "{version}"}}"#),
        )
        .unwrap();
    }

    #[test]
    fn the_nearest_node_modules_decides_the_typescript_server() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        package(root, "5.6.3");
        let app = root.join("packages/app");
        package(&app, "7.0.2");
        executable(&app.join("node_modules/.bin/tsc"));
        std::fs::create_dir_all(app.join("src")).unwrap();

        let within = |dir: &Path| {
            typescript_for(&Within {
                dir,
                roots: [root, root],
                trusted: true,
            })
            .unwrap()
        };
        let found = within(&app.join("src"));
        assert_eq!((found.major, found.version.as_str()), (7, "7.0.2"));
        assert_eq!(within(root).major, 5);

        let servers = ServerConfig::defaults();
        let route = route(
            &servers,
            &[],
            "typescript",
            &app.join("src/a.ts"),
            root,
            true,
        );
        let chosen: Vec<(String, PathBuf)> = route
            .servers
            .iter()
            .map(|(i, program)| (servers[*i].name(), program.clone()))
            .collect();
        assert_eq!(
            chosen,
            [("tsc-lsp".to_string(), app.join("node_modules/.bin/tsc"))],
            "the project's own tsc, not one on PATH"
        );
        assert!(
            route.skipped.contains(&(
                "typescript-language-server".into(),
                "not for TypeScript 7.0.2".into()
            )),
            "{:?}",
            route.skipped
        );

        // A file of the TS 5 package gets typescript-language-server.
        executable(&root.join("node_modules/.bin/typescript-language-server"));
        let old = super::route(&servers, &[], "typescript", &root.join("a.ts"), root, true);
        let chosen: Vec<String> = old
            .servers
            .iter()
            .map(|(i, _)| servers[*i].name())
            .collect();
        assert_eq!(chosen, ["typescript-language-server"]);
        assert_eq!(
            old.skipped,
            [(
                "tsc-lsp".to_string(),
                "not for TypeScript 5.6.3".to_string()
            )]
        );
    }

    #[test]
    fn an_untrusted_workspace_runs_none_of_its_servers() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        package(root, "5.4.0");
        executable(&root.join("node_modules/.bin/typescript-language-server"));
        let servers = ServerConfig::defaults();
        let file = root.join("app.ts");
        let untrusted = route(&servers, &[], "typescript", &file, root, false);
        assert!(untrusted.servers.is_empty(), "{:?}", untrusted.servers);
        assert!(
            untrusted
                .skipped
                .iter()
                .any(|(name, why)| name == "typescript-language-server" && why.contains(UNTRUSTED)),
            "{:?}",
            untrusted.skipped
        );
        let trusted = route(&servers, &[], "typescript", &file, root, true);
        let programs: Vec<&PathBuf> = trusted.servers.iter().map(|(_, p)| p).collect();
        assert_eq!(
            programs,
            [&root.join("node_modules/.bin/typescript-language-server")]
        );
    }

    /// A rustup toolchain file picks what a rustup proxy runs (`path =
    /// "/proc/self/cwd/tc"` ran the workspace's own `rust-analyzer` in a
    /// review): with no `Cargo.toml` at all, it waits for trust too.
    #[test]
    fn a_toolchain_file_makes_a_rust_server_wait_for_trust() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("rust-toolchain.toml"),
            "[toolchain]\npath = \"/proc/self/cwd/tc\"\n",
        )
        .unwrap();
        let servers = vec![ServerConfig {
            project_code: Some("Cargo.toml".into()),
            ..ServerConfig::new(&["rust"], "sh", &[]).named("ra")
        }];
        let file = root.join("main.rs");
        let untrusted = route(&servers, &[], "rust", &file, root, false);
        assert!(untrusted.servers.is_empty());
        assert_eq!(
            untrusted.skipped,
            [(
                "ra".to_string(),
                format!("it runs the project's own code (rust-toolchain.toml): {UNTRUSTED}")
            )]
        );
        assert_eq!(
            route(&servers, &[], "rust", &file, root, true)
                .servers
                .len(),
            1
        );
    }

    #[test]
    fn a_server_that_runs_the_projects_code_waits_for_trust() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let servers = vec![ServerConfig {
            project_code: Some("Cargo.toml".into()),
            ..ServerConfig::new(&["rust"], "sh", &[]).named("ra")
        }];
        let file = root.join("src/main.rs");
        let untrusted = route(&servers, &[], "rust", &file, root, false);
        assert!(untrusted.servers.is_empty());
        assert_eq!(
            untrusted.skipped,
            [(
                "ra".to_string(),
                format!("it runs the project's own code (Cargo.toml): {UNTRUSTED}")
            )]
        );
        let trusted = route(&servers, &[], "rust", &file, root, true);
        assert_eq!(trusted.servers.len(), 1, "{:?}", trusted.skipped);
        let elsewhere = tempfile::tempdir().unwrap();
        let loose = route(
            &servers,
            &[],
            "rust",
            &elsewhere.path().join("x.rs"),
            elsewhere.path(),
            false,
        );
        assert_eq!(
            loose.servers.len(),
            1,
            "no Cargo.toml: nothing of the project runs"
        );
    }

    #[test]
    fn node_modules_above_the_workspace_are_not_the_projects() {
        let dir = tempfile::tempdir().unwrap();
        let parent = dir.path();
        package(parent, "7.1.0");
        executable(&parent.join("node_modules/.bin/tsc"));
        let root = parent.join("ws");
        std::fs::create_dir_all(&root).unwrap();
        let servers = ServerConfig::defaults();
        let route = route(&servers, &[], "typescript", &root.join("b.ts"), &root, true);
        let programs: Vec<&PathBuf> = route.servers.iter().map(|(_, p)| p).collect();
        assert!(
            !programs
                .iter()
                .any(|p| p.starts_with(parent.join("node_modules"))),
            "a parent's planted tsc is not run: {programs:?}"
        );
        assert!(
            !route.skipped.iter().any(|(_, why)| why.contains("7.1.0")),
            "nor does the parent's TypeScript decide: {:?}",
            route.skipped
        );
    }

    #[test]
    fn one_server_per_role_and_disabled_ones_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let servers = vec![
            ServerConfig::new(&["python"], "sh", &[])
                .named("lint-a")
                .role("lint"),
            ServerConfig::new(&["python"], "sh", &[])
                .named("lint-b")
                .role("lint"),
            ServerConfig::new(&["python"], "sh", &[]).named("types"),
            ServerConfig::new(&["python"], "no-such-server-xyz", &[]),
            ServerConfig::new(&["rust"], "sh", &[]).named("other-language"),
        ];
        let file = dir.path().join("a.py");
        let names = |route: &Route| -> Vec<String> {
            route
                .servers
                .iter()
                .map(|(i, _)| servers[*i].name())
                .collect()
        };
        let all = route(&servers, &[], "python", &file, dir.path(), true);
        assert_eq!(names(&all), ["lint-a", "types"]);
        assert_eq!(
            all.skipped,
            [
                ("lint-b".to_string(), "another lint server runs".to_string()),
                ("no-such-server-xyz".into(), "missing from PATH".into()),
            ]
        );
        let restricted = route(
            &servers,
            &["lint-a".to_string()],
            "python",
            &file,
            dir.path(),
            true,
        );
        assert_eq!(
            names(&restricted),
            ["lint-b", "types"],
            "the next of its role"
        );
    }
}

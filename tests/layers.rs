//! The layers' rules, checked on the source (ARCHITECTURE.md, "Layers"):
//! the workbench (the model) and the core never reach the terminal or the
//! TUI, so they stay usable from `exec`, sub-calls and tests without a
//! screen. Each rule reads the code's paths (`use` lines and inline
//! `crate::…` paths) outside `#[cfg(test)]` modules: a test may drive the
//! whole application through the real loop.
//!
//! Inside the terminal UI the arrows point one way too: the app (the
//! `AppState` that holds everything, `update`, the frame) is on top; the
//! components (panes, overlays, `component`) see only an `Around` and
//! never the app, and never each other (a pane asks for an overlay as
//! data, `component::Opening`); the widgets and the geometry (`ui`,
//! `screen`) know no component. Inside the app, the dispatcher's modules
//! import one way: nothing there calls back up to `update`.

use std::path::{Path, PathBuf};

/// What only the terminal UI may use.
const TUI_ONLY: &[&str] = &[
    "crate::app",
    "crate::panes",
    "crate::overlays",
    "crate::ui",
    "crate::screen",
    "crate::component",
    "crate::tui",
    "crate::keymap",
    "crate::theme",
    "ratatui",
    "crossterm",
];

/// The core: agent, kernel, context and the rest the workbench builds on.
const CORE: &[&str] = &[
    "agent",
    "kernel",
    "context",
    "snapshot",
    "session",
    "sandbox",
    "mcp",
    "diagnostics",
    "workspace",
    "tokens",
    "subcalls",
    "trust",
    "hooks",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `dir`'s Rust files, or `dir` itself when it is one.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The file's code without its test module and without comments.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `file: path` where a file under `dir` names a forbidden path.
fn reaches(dir: &Path, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(dir) {
        let code = code_of(&file);
        for path in forbidden {
            let named = code.match_indices(path).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + path.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            if named {
                let shown = file.strip_prefix(src()).unwrap_or(&file);
                found.push(format!("{}: {path}", shown.display()));
            }
        }
    }
    found
}

#[test]
fn the_workbench_never_reaches_the_terminal_or_the_tui() {
    let found = reaches(&src().join("workbench"), TUI_ONLY);
    assert!(found.is_empty(), "the model imports the screen: {found:#?}");
}

#[test]
fn the_core_never_reaches_the_terminal_or_the_tui() {
    let found: Vec<String> = CORE
        .iter()
        .flat_map(|module| reaches(&src().join(module), TUI_ONLY))
        .collect();
    assert!(found.is_empty(), "the core imports the screen: {found:#?}");
}

/// The core is what the workbench is built of, never the other way:
/// what reads the whole of the settings and the workbench's own parts
/// (the trust question's inventory) lives in the workbench.
#[test]
fn the_core_never_reaches_into_the_workbench() {
    let found = reached_from(CORE, &["crate::workbench"]);
    assert!(
        found.is_empty(),
        "the core imports the workbench: {found:#?}"
    );
}

/// Every `file: path` where a file under one of `places` (folders or files
/// of `src/`) names a forbidden path.
fn reached_from(places: &[&str], forbidden: &[&str]) -> Vec<String> {
    places
        .iter()
        .flat_map(|place| reaches(&src().join(place), forbidden))
        .collect()
}

/// `config` holds the sections of the config file (`hooks`' among them)
/// and `trust` is read by `hooks`, so neither reads the settings back:
/// their callers hand them their part (`Settings::vouched`, the hooks'
/// section and environment). Otherwise config -> hooks -> trust -> config
/// is a circle.
#[test]
fn hooks_and_trust_never_read_the_settings() {
    let found = reached_from(
        &["hooks", "trust"],
        &["crate::config", "crate::kernel_setup"],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_components_never_reach_the_app() {
    let found = reached_from(
        &["panes", "overlays", "component.rs", "ui", "screen"],
        &["crate::app", "crate::tui"],
    );
    assert!(found.is_empty(), "a component reads the app: {found:#?}");
}

#[test]
fn components_never_name_each_other() {
    let found = reached_from(&["component.rs", "panes"], &["crate::overlays"]);
    let found: Vec<String> = found
        .into_iter()
        .chain(reached_from(
            &["component.rs", "overlays"],
            &["crate::panes"],
        ))
        .collect();
    assert!(
        found.is_empty(),
        "a component names another's type: {found:#?}"
    );
}

/// The modules of `dir` (its `.rs` files, by stem) and, for each, the
/// siblings it names (`super::x`, `crate::<crate_path>::x`).
fn sibling_imports(dir: &Path, crate_path: &str) -> Vec<(String, Vec<String>)> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    let name = |path: &Path| path.file_stem().unwrap().to_string_lossy().into_owned();
    let names: Vec<String> = files.iter().map(|f| name(f)).collect();
    files
        .iter()
        .map(|file| {
            let named = names
                .iter()
                .filter(|other| **other != name(file) && other.as_str() != "mod")
                .filter(|other| {
                    [
                        format!("super::{other}"),
                        format!("crate::{crate_path}::{other}"),
                    ]
                    .iter()
                    .any(|path| !reaches(file, &[path.as_str()]).is_empty())
                })
                .cloned()
                .collect();
            (name(file), named)
        })
        .collect()
}

/// A circle of imports among `graph`'s modules, as `a -> b -> a`.
fn circle(graph: &[(String, Vec<String>)]) -> Option<String> {
    fn visit(
        at: &str,
        graph: &[(String, Vec<String>)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|p| p == at) {
            let mut circle = path[start..].to_vec();
            circle.push(at.to_string());
            return Some(circle.join(" -> "));
        }
        if done.iter().any(|d| d == at) {
            return None;
        }
        path.push(at.to_string());
        let next = graph.iter().find(|(name, _)| name == at).map(|(_, n)| n);
        for to in next.into_iter().flatten() {
            if let Some(found) = visit(to, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.push(at.to_string());
        None
    }
    let mut done = Vec::new();
    graph
        .iter()
        .find_map(|(name, _)| visit(name, graph, &mut Vec::new(), &mut done))
}

/// The dispatcher does not call back up: components' effects are queued
/// (`app::deliver`) and applied by `app::update`, so `effects`, `layers`,
/// `editors` and the rest never name `update`, and no two name each other.
#[test]
fn the_apps_modules_import_one_way() {
    let graph = sibling_imports(&src().join("app"), "app");
    assert!(graph.len() > 10, "read the app's modules: {graph:?}");
    assert_eq!(circle(&graph), None, "{graph:#?}");
}

#[test]
fn the_circle_check_finds_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, code: &str| std::fs::write(dir.path().join(name), code).unwrap();
    write("a.rs", "use super::b::B;\n");
    write("b.rs", "fn f() { crate::m::c::g() }\n");
    write("c.rs", "use super::a;\nuse super::ab;\n");
    write("d.rs", "use super::a;\n");
    let found = circle(&sibling_imports(dir.path(), "m")).expect("a -> b -> c -> a");
    assert_eq!(found.matches(" -> ").count(), 3, "{found}");
    write("c.rs", "use super::abc;\n");
    assert_eq!(circle(&sibling_imports(dir.path(), "m")), None);
}

#[test]
fn the_widgets_and_the_geometry_know_no_component() {
    let found = reached_from(
        &["ui", "screen"],
        &["crate::panes", "crate::overlays", "crate::component"],
    );
    assert!(found.is_empty(), "a widget reads a component: {found:#?}");
}

#[test]
fn the_check_sees_a_forbidden_path_and_ignores_look_alikes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        "use crate::ui::pane;\nuse crate::uitls::x;\n// crate::app in a comment\n\
         #[cfg(test)]\nmod tests {\n    use crate::app::AppState;\n}\n",
    )
    .unwrap();
    let found = reaches(dir.path(), &["crate::ui", "crate::app"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("a.rs: crate::ui"), "{found:?}");
}

/// `Workbench`'s fields are its own: the rest of the application reads
/// and changes it through methods, so a concern can grow rules of its own
/// (`set_status`, `pin`, `take_pins`, `notice`) without a hunt for writers.
#[test]
fn the_workbench_has_no_public_fields() {
    let code = code_of(&src().join("workbench/mod.rs"));
    let start = code
        .find("pub struct Workbench {")
        .expect("Workbench is defined in workbench/mod.rs");
    let body = &code[start..start + code[start..].find("\n}").expect("its body ends")];
    let public: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("pub ") && !line.starts_with("pub struct"))
        .collect();
    assert!(public.is_empty(), "public fields: {public:?}");
}

/// Every file of `src/` except those under `allowed` (folders or files).
fn all_but(allowed: &[&str]) -> Vec<PathBuf> {
    rust_files(&src())
        .into_iter()
        .filter(|file| {
            let relative = file.strip_prefix(src()).unwrap();
            !allowed.iter().any(|place| relative.starts_with(place))
        })
        .collect()
}

/// A turn is set up in one place (`AgentSession`) and a kernel is started
/// in one place (`kernel_launch`): the TUI, `exec` and `rlm_query` go
/// through them, so a rule added to either holds for all three.
#[test]
fn one_turn_recipe_and_one_kernel_launch() {
    // The turn loop as a function (imported or called by path), not
    // `AgentSession`'s method of the same name (`session.run_turn(…)`).
    let turn: Vec<String> = all_but(&["agent", "agent_session.rs"])
        .iter()
        .filter(|file| {
            let code = code_of(file);
            code.match_indices("run_turn").any(|(at, _)| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            })
        })
        .map(|file| {
            file.strip_prefix(src())
                .unwrap_or(file)
                .display()
                .to_string()
        })
        .collect();
    assert!(
        turn.is_empty(),
        "a turn set up beside AgentSession: {turn:#?}"
    );
    let launch: Vec<String> = all_but(&["kernel", "kernel_launch.rs"])
        .iter()
        .flat_map(|file| reaches(file, &["CodeRuntime::new", "KernelConfig::for_workspace"]))
        .collect();
    assert!(
        launch.is_empty(),
        "a kernel started beside kernel_launch: {launch:#?}"
    );
}

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
//! never the app; the widgets and the geometry (`ui`, `screen`) know no
//! component.

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

/// Every `file: path` where a file under one of `places` (folders or files
/// of `src/`) names a forbidden path.
fn reached_from(places: &[&str], forbidden: &[&str]) -> Vec<String> {
    places
        .iter()
        .flat_map(|place| reaches(&src().join(place), forbidden))
        .collect()
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

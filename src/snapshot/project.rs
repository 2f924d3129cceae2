//! Project file summaries: manifests reduced to what matters, documents and
//! configs to their first lines.
//!
//! A snapshot says *where* the user is; a manifest's name, scripts and
//! dependency names tell the model what kind of project that is without
//! spending the budget on version pins or lock data.

use std::io::Read;

use std::path::Path;

use super::source::ProjectFile;
use super::text::{clean_line, lines_from, one_line};

/// Manifests and docs summarised when the scene is built from a directory
/// (by `hello-tui snapshot -C` and by the workbench alike).
const ROOT_PROJECT_FILES: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "requirements.txt",
    "go.mod",
    "README.md",
    "README",
    "README.rst",
    "README.txt",
    "AGENTS.md",
    "CLAUDE.md",
];

/// The project files of `root` that exist, to be read (best-effort) by the
/// collector.
pub fn root_project_files(root: &Path) -> Vec<ProjectFile> {
    ROOT_PROJECT_FILES
        .iter()
        .map(|file| root.join(file))
        .filter(|path| path.is_file())
        .map(|path| ProjectFile {
            path: path.to_string_lossy().to_string(),
            text: None,
        })
        .collect()
}

/// Lines of a document or config kept in its excerpt.
pub(crate) const EXCERPT_LINES: usize = 20;
/// Characters kept per excerpt line.
const EXCERPT_LINE_CHARS: usize = 200;
/// Names listed per dependency group before "(+N more)".
const MAX_NAMES: usize = 40;

/// Reads a project file that the scene did not inline. Behind a trait so
/// tests can make reading fail; [`DiskReader`] is the real one.
pub trait ProjectFileReader {
    fn read(&self, path: &str, max_bytes: u64) -> Result<String, ReadError>;
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("skipped: larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("not UTF-8 text")]
    NotText,
    #[error("could not be read: {0}")]
    Io(String),
}

impl<F> ProjectFileReader for F
where
    F: Fn(&str, u64) -> Result<String, ReadError>,
{
    fn read(&self, path: &str, max_bytes: u64) -> Result<String, ReadError> {
        self(path, max_bytes)
    }
}

/// Reads real files, never more than `max_bytes + 1` bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskReader;

impl ProjectFileReader for DiskReader {
    fn read(&self, path: &str, max_bytes: u64) -> Result<String, ReadError> {
        let file = std::fs::File::open(path).map_err(|err| ReadError::Io(io_reason(&err)))?;
        let mut bytes = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|err| ReadError::Io(io_reason(&err)))?;
        if bytes.len() as u64 > max_bytes {
            return Err(ReadError::TooLarge { limit: max_bytes });
        }
        String::from_utf8(bytes).map_err(|_| ReadError::NotText)
    }
}

/// The error kind only: the OS message can carry absolute paths.
fn io_reason(err: &std::io::Error) -> String {
    match err.kind() {
        std::io::ErrorKind::NotFound => "not found".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_string(),
        other => other.to_string(),
    }
}

/// What a project file contributes to the snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// `manifest`, `document` or `config`.
    pub kind: &'static str,
    /// One-line facts (`name: demo`, `scripts: build, test`).
    pub facts: Vec<String>,
    /// First lines of the file, cleaned; empty for manifests.
    pub excerpt: Vec<String>,
    /// True when the file has more than the excerpt shows.
    pub excerpt_truncated: bool,
}

/// Summarises a file by its name. Never fails: an unparsable manifest falls
/// back to its first lines plus a fact saying why.
pub fn summarize(file_name: &str, text: &str) -> Summary {
    let lower = file_name.to_ascii_lowercase();
    let parsed = match lower.as_str() {
        "cargo.toml" => Some(toml_facts(text, cargo_facts)),
        "pyproject.toml" => Some(toml_facts(text, pyproject_facts)),
        "package.json" => Some(package_json_facts(text)),
        "requirements.txt" => Some(Ok(requirements_facts(text))),
        _ => None,
    };
    match parsed {
        Some(Ok(facts)) => Summary {
            kind: "manifest",
            facts,
            ..Summary::default()
        },
        Some(Err(reason)) => {
            let mut summary = excerpt("manifest", text);
            summary
                .facts
                .push(format!("could not be parsed ({reason}); first lines shown"));
            summary
        }
        None => {
            let is_doc =
                lower.ends_with(".md") || lower.ends_with(".txt") || lower.starts_with("readme");
            excerpt(if is_doc { "document" } else { "config" }, text)
        }
    }
}

fn excerpt(kind: &'static str, text: &str) -> Summary {
    let mut lines = lines_from(text, 0);
    let excerpt: Vec<String> = lines
        .by_ref()
        .take(EXCERPT_LINES)
        .map(|line| clean_line(line, EXCERPT_LINE_CHARS).0)
        .collect();
    Summary {
        kind,
        facts: Vec::new(),
        excerpt,
        excerpt_truncated: lines.next().is_some(),
    }
}

fn toml_facts(text: &str, facts: fn(&toml::Table) -> Vec<String>) -> Result<Vec<String>, String> {
    let table: toml::Table = toml::from_str(text).map_err(|err| one_line(err.message(), 120))?;
    Ok(facts(&table))
}

fn cargo_facts(table: &toml::Table) -> Vec<String> {
    let mut facts = Vec::new();
    let package = table.get("package").and_then(|v| v.as_table());
    push_str(&mut facts, "name", package.and_then(|p| p.get("name")));
    push_str(
        &mut facts,
        "edition",
        package.and_then(|p| p.get("edition")),
    );
    let workspace = table.get("workspace").and_then(|v| v.as_table());
    if let Some(members) = workspace
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
    {
        let names = members
            .iter()
            .filter_map(|m| m.as_str().map(str::to_string));
        push_list(&mut facts, "workspace members", names.collect());
    }
    for (key, label) in [
        ("dependencies", "dependencies"),
        ("dev-dependencies", "dev-dependencies"),
        ("build-dependencies", "build-dependencies"),
    ] {
        push_keys(&mut facts, label, table.get(key));
    }
    push_keys(
        &mut facts,
        "workspace dependencies",
        workspace.and_then(|w| w.get("dependencies")),
    );
    facts
}

fn pyproject_facts(table: &toml::Table) -> Vec<String> {
    let mut facts = Vec::new();
    let project = table.get("project").and_then(|v| v.as_table());
    push_str(&mut facts, "name", project.and_then(|p| p.get("name")));
    push_str(
        &mut facts,
        "requires-python",
        project.and_then(|p| p.get("requires-python")),
    );
    if let Some(deps) = project
        .and_then(|p| p.get("dependencies"))
        .and_then(|d| d.as_array())
    {
        let names = deps.iter().filter_map(|d| d.as_str()).map(requirement_name);
        push_list(&mut facts, "dependencies", names.collect());
    }
    push_keys(
        &mut facts,
        "optional dependency groups",
        project.and_then(|p| p.get("optional-dependencies")),
    );
    push_keys(
        &mut facts,
        "scripts",
        project.and_then(|p| p.get("scripts")),
    );
    let poetry = table
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|p| p.as_table());
    if let Some(poetry) = poetry {
        push_str(&mut facts, "poetry name", poetry.get("name"));
        push_keys(
            &mut facts,
            "poetry dependencies",
            poetry.get("dependencies"),
        );
        push_keys(&mut facts, "poetry scripts", poetry.get("scripts"));
    }
    let backend = table
        .get("build-system")
        .and_then(|b| b.get("build-backend"));
    push_str(&mut facts, "build backend", backend);
    facts
}

fn package_json_facts(text: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| one_line(&err.to_string(), 120))?;
    let mut facts = Vec::new();
    if let Some(name) = value.get("name").and_then(|n| n.as_str()) {
        facts.push(format!("name: {}", one_line(name, 120)));
    }
    if let Some(scripts) = value.get("scripts").and_then(|s| s.as_object()) {
        let scripts = scripts
            .iter()
            .map(|(name, cmd)| format!("{name} = {}", one_line(cmd.as_str().unwrap_or("?"), 80)))
            .collect();
        push_list(&mut facts, "scripts", scripts);
    }
    for key in ["dependencies", "devDependencies", "peerDependencies"] {
        if let Some(deps) = value.get(key).and_then(|d| d.as_object()) {
            push_list(&mut facts, key, deps.keys().cloned().collect());
        }
    }
    if let Some(workspaces) = value.get("workspaces").and_then(|w| w.as_array()) {
        let names = workspaces
            .iter()
            .filter_map(|w| w.as_str().map(str::to_string));
        push_list(&mut facts, "workspaces", names.collect());
    }
    Ok(facts)
}

fn requirements_facts(text: &str) -> Vec<String> {
    let names = lines_from(text, 0)
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#') && !line.starts_with('-'))
        .map(requirement_name)
        .collect();
    let mut facts = Vec::new();
    push_list(&mut facts, "dependencies", names);
    facts
}

/// `requests>=2; python_version>"3"` → `requests`.
fn requirement_name(spec: &str) -> String {
    spec.trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

fn push_str(facts: &mut Vec<String>, label: &str, value: Option<&toml::Value>) {
    if let Some(value) = value.and_then(|v| v.as_str()) {
        facts.push(format!("{label}: {}", one_line(value, 120)));
    }
}

fn push_keys(facts: &mut Vec<String>, label: &str, value: Option<&toml::Value>) {
    if let Some(table) = value.and_then(|v| v.as_table()) {
        push_list(facts, label, table.keys().cloned().collect());
    }
}

fn push_list(facts: &mut Vec<String>, label: &str, items: Vec<String>) {
    if items.is_empty() {
        return;
    }
    let shown: Vec<String> = items
        .iter()
        .take(MAX_NAMES)
        .map(|i| one_line(i, 100))
        .collect();
    let more = items.len().saturating_sub(MAX_NAMES);
    let tail = if more > 0 {
        format!(" (+{more} more)")
    } else {
        String::new()
    };
    facts.push(format!("{label}: {}{tail}", shown.join(", ")));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_manifest_keeps_names_not_versions() {
        let text = "[package]\nname = \"demo\"\nedition = \"2024\"\n[dependencies]\nserde = { version = \"1\" }\nanyhow = \"1.0.99\"\n[dev-dependencies]\ninsta = \"1\"\n";
        let summary = summarize("Cargo.toml", text);
        assert_eq!(summary.kind, "manifest");
        assert_eq!(
            summary.facts,
            [
                "name: demo",
                "edition: 2024",
                "dependencies: anyhow, serde",
                "dev-dependencies: insta"
            ]
        );
        assert!(!summary.facts.join(" ").contains("1.0.99"));
    }

    #[test]
    fn package_json_lists_scripts_and_dependency_names() {
        let text = r#"{"name":"web","scripts":{"build":"tsc -p .","test":"vitest"},"dependencies":{"zod":"^3"},"devDependencies":{"typescript":"5"}}"#;
        let facts = summarize("package.json", text).facts;
        assert_eq!(
            facts,
            [
                "name: web",
                "scripts: build = tsc -p ., test = vitest",
                "dependencies: zod",
                "devDependencies: typescript"
            ]
        );
    }

    #[test]
    fn pyproject_and_requirements() {
        let text = "[project]\nname = \"tool\"\ndependencies = [\"requests>=2\", \"rich ; python_version>'3.8'\"]\n[project.scripts]\ntool = \"tool:main\"\n";
        let facts = summarize("pyproject.toml", text).facts;
        assert_eq!(
            facts,
            [
                "name: tool",
                "dependencies: requests, rich",
                "scripts: tool"
            ]
        );
        let facts = summarize(
            "requirements.txt",
            "# pins\nnumpy==1.26\n-r dev.txt\npandas\n",
        )
        .facts;
        assert_eq!(facts, ["dependencies: numpy, pandas"]);
    }

    #[test]
    fn broken_manifest_falls_back_to_first_lines() {
        let summary = summarize("package.json", "{ not json");
        assert_eq!(summary.excerpt, ["{ not json"]);
        assert!(summary.facts[0].starts_with("could not be parsed"));
    }

    #[test]
    fn documents_keep_their_first_lines() {
        let text: String = (1..=30).map(|i| format!("line {i}\r\n")).collect();
        let summary = summarize("README.md", &text);
        assert_eq!(summary.kind, "document");
        assert_eq!(summary.excerpt.len(), EXCERPT_LINES);
        assert_eq!(summary.excerpt[0], "line 1");
        assert!(summary.excerpt_truncated);
    }

    #[test]
    fn disk_reader_refuses_big_files_and_reports_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        std::fs::write(&big, "x".repeat(2000)).unwrap();
        let big = big.to_str().unwrap();
        assert_eq!(
            DiskReader.read(big, 1000),
            Err(ReadError::TooLarge { limit: 1000 })
        );
        assert_eq!(DiskReader.read(big, 5000).unwrap().len(), 2000);
        let missing = dir.path().join("missing");
        let err = DiskReader.read(missing.to_str().unwrap(), 10).unwrap_err();
        assert_eq!(err, ReadError::Io("not found".to_string()));
    }
}

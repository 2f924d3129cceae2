//! The docs stay true where a program can tell: `docs/keys.md` is the
//! keymap F1 shows, every relative link in README.md, ARCHITECTURE.md and
//! `docs/` (the design docs in `docs/design/` included) reaches a file (and
//! a heading, when it names one), and README.md and ARCHITECTURE.md stay
//! short.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const BEGIN: &str = "<!-- generated: keys -->";
const END: &str = "<!-- end generated -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `docs/keys.md` between its markers is exactly what the keymap generates.
/// `UPDATE_DOCS=1 cargo test --test docs` writes it.
#[test]
fn keys_md_is_generated_from_the_keymap() {
    let path = root().join("docs/keys.md");
    let text = read(&path);
    let (Some(start), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/keys.md lacks the markers {BEGIN} … {END}");
    };
    let start = start + BEGIN.len();
    let current = &text[start..end];
    let generated = format!("\n{}\n", hello_tui::keymap::markdown().trim());
    if current == generated {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    panic!(
        "docs/keys.md is not the keymap (src/keymap.rs) any more; \
         regenerate it with `UPDATE_DOCS=1 cargo test --test docs` and commit it"
    );
}

/// Every Markdown file the links start from: README.md, ARCHITECTURE.md and
/// `docs/**`.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    walk(&root().join("docs"), &mut out);
    out
}

/// The targets of `[text](target)` links, code spans and blocks skipped.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans can hold `](`; drop them first.
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(close) = after.find(')') else { break };
            out.push(after[..close].to_string());
            rest = &after[close..];
        }
    }
    out
}

/// The anchors GitHub makes for a document: one per heading (lower case,
/// punctuation dropped, spaces to `-`), plus explicit `<a id="…">`.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            let title = line.trim_start_matches('#').trim();
            let slug: String = title
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect();
            out.insert(slug);
        }
        let mut rest = line;
        while let Some(at) = rest.find("<a id=\"") {
            let after = &rest[at + 7..];
            let Some(close) = after.find('"') else { break };
            out.insert(after[..close].to_string());
            rest = &after[close..];
        }
    }
    out
}

#[test]
fn relative_links_reach_a_file_and_a_heading() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .display()
            .to_string();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap_or(&root()).join(file)
            };
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            if !anchor.is_empty() && !anchors(&read(&target)).contains(anchor) {
                broken.push(format!("{name}: {link}: no such heading"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_doc_is_linked_from_the_readme_or_another_doc() {
    let mut linked = BTreeSet::new();
    for doc in documents() {
        for link in links(&read(&doc)) {
            let file = link.split('#').next().unwrap_or_default();
            if !file.is_empty() && !link.contains("://") {
                let target = doc.parent().unwrap_or(&root()).join(file);
                if let Ok(target) = target.canonicalize() {
                    linked.insert(target);
                }
            }
        }
    }
    for doc in documents().into_iter().skip(1) {
        let doc = doc.canonicalize().unwrap_or(doc);
        assert!(
            linked.contains(&doc),
            "{} is linked from nowhere",
            doc.display()
        );
    }
}

/// The README is the first page, not the manual; the test command CI runs
/// (`.ci/run` → `scripts/test`) is one of its two commands.
#[test]
fn readme_is_short_and_names_the_test_command() {
    let text = read(&root().join("README.md"));
    let lines = text.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move detail into docs/"
    );
    let section = text
        .split("## The two commands")
        .nth(1)
        .expect("README.md keeps its \"## The two commands\" section");
    let block = section.split("```").nth(1).unwrap_or_default();
    assert!(
        block.lines().any(|l| l.starts_with("scripts/test ")),
        "the two commands block names scripts/test:\n{block}"
    );
}

/// ARCHITECTURE.md is the map a newcomer reads in one sitting; deep dives
/// belong in `docs/design/`.
#[test]
fn architecture_is_short() {
    let lines = read(&root().join("ARCHITECTURE.md")).lines().count();
    assert!(
        lines <= 250,
        "ARCHITECTURE.md has {lines} lines; move detail into docs/design/"
    );
}

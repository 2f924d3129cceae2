//! Raw problems → diagnostics: paths resolved against the command's cwd,
//! 1-based columns in the tool's unit turned into 0-based char indices
//! using the file on disk (what the tool read).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ropey::Rope;

use super::matchers::RawProblem;
use crate::diagnostics::model::{Diagnostic, Range};
use crate::diagnostics::position::{read_text, to_position};

/// Resolves a printed path: absolute stays; relative is tried against `cwd`,
/// then against its ancestors (cargo prints paths relative to the workspace
/// root, which may sit above the package we ran in).
pub fn resolve_path(printed: &Path, cwd: &Path) -> PathBuf {
    if printed.is_absolute() {
        return printed.to_path_buf();
    }
    cwd.ancestors()
        .map(|dir| dir.join(printed))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| cwd.join(printed))
}

pub fn to_diagnostics(problems: Vec<RawProblem>, cwd: &Path, source: &str) -> Vec<Diagnostic> {
    let mut texts: HashMap<PathBuf, Option<Rope>> = HashMap::new();
    problems
        .into_iter()
        .map(|problem| {
            let path = resolve_path(&problem.file, cwd);
            let text = texts
                .entry(path.clone())
                .or_insert_with(|| read_text(&path));
            let line = problem.line.saturating_sub(1);
            let column = problem.column.map_or(0, |c| c.saturating_sub(1));
            let end_line = problem.end_line.map_or(line, |l| l.saturating_sub(1));
            let end_column = problem.end_column.map(|c| c.saturating_sub(1));
            let (start, end) = match text {
                Some(text) => {
                    let start = to_position(text, line, column, problem.unit);
                    let end = match end_column {
                        Some(c) => to_position(text, end_line, c, problem.unit),
                        None => start,
                    };
                    (start, end)
                }
                // File unreadable: keep the numbers; chars is the best guess.
                None => {
                    let start = crate::diagnostics::Position::new(line, column);
                    let end =
                        crate::diagnostics::Position::new(end_line, end_column.unwrap_or(column));
                    (start, end)
                }
            };
            Diagnostic {
                path: path.into(),
                range: Range::new(start, end.max(start)),
                severity: problem.severity,
                message: problem.message.into(),
                source: source.into(),
                code: problem.code.map(Into::into),
                related: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::model::{Position, Severity};
    use crate::diagnostics::position::ColumnUnit;

    fn problem(file: &str, line: usize, col: usize, unit: ColumnUnit) -> RawProblem {
        RawProblem {
            file: PathBuf::from(file),
            line,
            column: Some(col),
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            message: "m".into(),
            code: None,
            unit,
        }
    }

    #[test]
    fn relative_paths_resolve_against_cwd_then_ancestors() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(dir.path().join("top.rs"), "").unwrap();
        std::fs::write(pkg.join("inner.rs"), "").unwrap();
        assert_eq!(
            resolve_path(Path::new("inner.rs"), &pkg),
            pkg.join("inner.rs")
        );
        assert_eq!(
            resolve_path(Path::new("top.rs"), &pkg),
            dir.path().join("top.rs")
        );
        assert_eq!(
            resolve_path(Path::new("/abs/x.rs"), &pkg),
            PathBuf::from("/abs/x.rs")
        );
        assert_eq!(
            resolve_path(Path::new("gone.rs"), &pkg),
            pkg.join("gone.rs")
        );
    }

    #[test]
    fn utf16_columns_are_converted_with_the_file_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.ts"), "const s = \"😀\"; x;\n").unwrap();
        // `x` is char 16, UTF-16 column 17 (0-based) → 18 (1-based).
        let out = to_diagnostics(
            vec![problem("a.ts", 1, 18, ColumnUnit::Utf16)],
            dir.path(),
            "tsc",
        );
        assert_eq!(out[0].range.start, Position::new(0, 16));
        assert_eq!(*out[0].path, *dir.path().join("a.ts"));
        assert_eq!(&*out[0].source, "tsc");
    }

    #[test]
    fn unreadable_files_keep_the_printed_numbers() {
        let out = to_diagnostics(
            vec![problem("/nope/x.c", 3, 5, ColumnUnit::Utf8)],
            Path::new("/"),
            "gcc",
        );
        assert_eq!(out[0].range.start, Position::new(2, 4));
    }
}

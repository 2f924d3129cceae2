//! Problem matchers: turn a check command's output into problems. Cargo and
//! rustc speak JSON; everything else is one regex per line with named groups
//! `file`, `line`, `message` and optional `col`, `end_line`, `end_col`,
//! `severity`, `code`.

use std::path::PathBuf;

use regex::Regex;
use serde_json::Value;

use crate::diagnostics::model::Severity;
use crate::diagnostics::position::ColumnUnit;

/// A problem as the tool printed it: path as written, 1-based line/column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawProblem {
    pub file: PathBuf,
    pub line: usize,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub severity: Severity,
    pub message: String,
    pub code: Option<String>,
    pub unit: ColumnUnit,
}

#[derive(Debug, Clone)]
pub enum ProblemMatcher {
    /// `cargo ... --message-format=json` and `rustc --error-format=json`.
    CargoJson,
    /// A Python traceback ending in `SyntaxError: ...` (from `compile()`).
    PythonTraceback,
    Regex(RegexMatcher),
}

impl ProblemMatcher {
    pub fn parse(&self, output: &str) -> Vec<RawProblem> {
        match self {
            ProblemMatcher::CargoJson => output.lines().filter_map(parse_cargo_line).collect(),
            ProblemMatcher::PythonTraceback => parse_python_traceback(output),
            ProblemMatcher::Regex(matcher) => output
                .lines()
                .filter_map(|l| matcher.parse_line(l))
                .collect(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RegexMatcher {
    regex: Regex,
    default_severity: Severity,
    unit: ColumnUnit,
}

#[derive(Debug, thiserror::Error)]
pub enum MatcherError {
    #[error("invalid problem-matcher regex: {0}")]
    Regex(#[from] regex::Error),
    #[error("problem-matcher regex needs the named groups `file`, `line` and `message`")]
    MissingGroups,
}

impl RegexMatcher {
    pub fn new(
        pattern: &str,
        default_severity: Severity,
        unit: ColumnUnit,
    ) -> Result<RegexMatcher, MatcherError> {
        let regex = Regex::new(pattern)?;
        let names: Vec<&str> = regex.capture_names().flatten().collect();
        if !["file", "line", "message"]
            .iter()
            .all(|g| names.contains(g))
        {
            return Err(MatcherError::MissingGroups);
        }
        Ok(RegexMatcher {
            regex,
            default_severity,
            unit,
        })
    }

    /// `ruff check --output-format=concise`: `file:line:col: F401 [*] message`,
    /// or `file:line:col: invalid-syntax: message`. Columns count chars.
    pub fn ruff() -> RegexMatcher {
        Self::builtin(
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?:(?P<code>[A-Z]+[0-9]+)(?: \[\*\])?|(?P<severity>invalid-syntax|SyntaxError):) (?P<message>.+)$",
            Severity::Warning,
            ColumnUnit::Chars,
        )
    }

    /// gcc and clang: `file:line:col: error: message [-Wflag]`. gcc counts
    /// "display" columns by default; chars is exact for text without tabs or
    /// wide characters before the error.
    pub(crate) fn gcc() -> RegexMatcher {
        Self::builtin(
            r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<severity>fatal error|error|warning|note): (?P<message>.*?)(?: \[(?P<code>-W[^\]]+)\])?$",
            Severity::Error,
            ColumnUnit::Chars,
        )
    }

    /// `tsc --pretty false`: `file(line,col): error TS2304: message`.
    /// Columns are JavaScript string offsets, i.e. UTF-16 units.
    pub fn tsc() -> RegexMatcher {
        Self::builtin(
            r"^(?P<file>[^(\n]+)\((?P<line>\d+),(?P<col>\d+)\): (?P<severity>error|warning|message) (?P<code>TS\d+): (?P<message>.*)$",
            Severity::Error,
            ColumnUnit::Utf16,
        )
    }

    fn builtin(pattern: &str, severity: Severity, unit: ColumnUnit) -> RegexMatcher {
        match RegexMatcher::new(pattern, severity, unit) {
            Ok(matcher) => matcher,
            // The built-in patterns are constants covered by unit tests.
            Err(error) => unreachable!("built-in matcher is invalid: {error}"),
        }
    }

    pub(crate) fn parse_line(&self, line: &str) -> Option<RawProblem> {
        let line = line.trim_end_matches('\r');
        let caps = self.regex.captures(line)?;
        let number = |name: &str| {
            caps.name(name)
                .and_then(|m| m.as_str().parse::<usize>().ok())
        };
        let text = |name: &str| caps.name(name).map(|m| m.as_str().trim().to_string());
        Some(RawProblem {
            file: PathBuf::from(text("file")?),
            line: number("line")?,
            column: number("col"),
            end_line: number("end_line"),
            end_column: number("end_col"),
            severity: text("severity")
                .and_then(|s| Severity::from_word(&s))
                .unwrap_or(self.default_severity),
            message: text("message")?,
            code: text("code").filter(|c| !c.is_empty()),
            unit: self.unit,
        })
    }
}

/// One line of cargo/rustc JSON. Cargo wraps rustc's diagnostic in
/// `{"reason":"compiler-message","message":{...}}`; rustc prints it bare.
/// Only the primary span is used; diagnostics without spans (summaries like
/// "aborting due to 1 previous error") are not about a place and are dropped.
fn parse_cargo_line(line: &str) -> Option<RawProblem> {
    let value: Value = serde_json::from_str(line.trim()).ok()?;
    let message = match value.get("reason").and_then(Value::as_str) {
        Some("compiler-message") => value.get("message")?,
        Some(_) => return None,
        None => &value,
    };
    let level = message.get("level")?.as_str()?;
    let severity = match level {
        "error" | "error: internal compiler error" => Severity::Error,
        "warning" => Severity::Warning,
        "note" | "failure-note" => Severity::Info,
        "help" => Severity::Hint,
        _ => return None,
    };
    let spans = message.get("spans")?.as_array()?;
    let span = spans
        .iter()
        .find(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true))?;
    let get = |key: &str| span.get(key).and_then(Value::as_u64).map(|n| n as usize);
    Some(RawProblem {
        file: PathBuf::from(span.get("file_name")?.as_str()?),
        line: get("line_start")?,
        column: get("column_start"),
        end_line: get("line_end"),
        end_column: get("column_end"),
        severity,
        message: message.get("message")?.as_str()?.to_string(),
        code: message
            .get("code")
            .and_then(|c| c.get("code"))
            .and_then(Value::as_str)
            .map(str::to_string),
        unit: ColumnUnit::Chars,
    })
}

/// The error line of a traceback is attributed to the last real file frame
/// before it (`<string>` and other pseudo-files are skipped). Python shows
/// the source line re-indented, so no column is taken from the caret.
fn parse_python_traceback(output: &str) -> Vec<RawProblem> {
    let mut location: Option<(PathBuf, usize)> = None;
    let mut problems = Vec::new();
    for line in output.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("File \"") {
            let Some((file, after)) = rest.split_once('"') else {
                continue;
            };
            let number = after
                .strip_prefix(", line ")
                .map(|n| n.split(',').next().unwrap_or("").trim())
                .and_then(|n| n.parse::<usize>().ok());
            if let (false, Some(number)) = (file.starts_with('<'), number) {
                location = Some((PathBuf::from(file), number));
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let Some((kind, message)) = line.split_once(": ") else {
            continue;
        };
        let is_problem = kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && (kind.ends_with("Error") || kind.ends_with("Warning"));
        if let (true, Some((file, number))) = (is_problem, location.take()) {
            problems.push(RawProblem {
                file,
                line: number,
                column: None,
                end_line: None,
                end_column: None,
                severity: if kind.ends_with("Warning") {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                message: message.trim().to_string(),
                code: Some(kind.to_string()),
                unit: ColumnUnit::Chars,
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/checks/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    fn summary(p: &RawProblem) -> (String, usize, Option<usize>, Severity, Option<&str>) {
        (
            p.file.display().to_string(),
            p.line,
            p.column,
            p.severity,
            p.code.as_deref(),
        )
    }

    #[test]
    fn cargo_json_error_with_code_and_primary_span() {
        let problems = ProblemMatcher::CargoJson.parse(&fixture("cargo-check.jsonl"));
        assert_eq!(problems.len(), 1, "summary lines without spans are dropped");
        let p = &problems[0];
        assert_eq!(
            summary(p),
            (
                "src/main.rs".into(),
                2,
                Some(32),
                Severity::Error,
                Some("E0425")
            )
        );
        assert_eq!(
            p.message,
            "cannot find value `undefined_value` in this scope"
        );
        assert_eq!((p.end_line, p.end_column), (Some(2), Some(47)));
    }

    #[test]
    fn cargo_json_warning() {
        let problems = ProblemMatcher::CargoJson.parse(&fixture("cargo-check-warning.jsonl"));
        assert_eq!(problems.len(), 1);
        assert_eq!(
            summary(&problems[0]),
            (
                "src/main.rs".into(),
                2,
                Some(23),
                Severity::Warning,
                Some("unused_variables")
            )
        );
    }

    #[test]
    fn bare_rustc_json_uses_the_primary_span_not_the_first() {
        let problems = ProblemMatcher::CargoJson.parse(&fixture("rustc.jsonl"));
        assert_eq!(problems.len(), 1);
        assert_eq!(
            summary(&problems[0]),
            (
                "/tmp/r.rs".into(),
                2,
                Some(31),
                Severity::Error,
                Some("E0308")
            )
        );
        assert_eq!(problems[0].message, "mismatched types");
    }

    #[test]
    fn ruff_concise_lint_and_syntax_errors() {
        let problems =
            ProblemMatcher::Regex(RegexMatcher::ruff()).parse(&fixture("ruff-concise.txt"));
        let got: Vec<_> = problems.iter().map(summary).collect();
        assert_eq!(
            got,
            vec![
                ("bad.py".into(), 1, Some(1), Severity::Warning, Some("I001")),
                ("bad.py".into(), 1, Some(8), Severity::Warning, Some("F401")),
                (
                    "bad.py".into(),
                    2,
                    Some(17),
                    Severity::Warning,
                    Some("F821")
                ),
                ("syn.py".into(), 1, Some(7), Severity::Error, None),
                ("syn.py".into(), 1, Some(8), Severity::Error, None),
            ]
        );
        assert_eq!(problems[1].message, "`os` imported but unused");
    }

    #[test]
    fn gcc_errors_warnings_notes_and_flags() {
        let problems = ProblemMatcher::Regex(RegexMatcher::gcc()).parse(&fixture("gcc.txt"));
        let got: Vec<_> = problems.iter().map(summary).collect();
        assert_eq!(
            got,
            vec![
                (
                    "broken.c".into(),
                    2,
                    Some(13),
                    Severity::Warning,
                    Some("-Wint-conversion")
                ),
                ("broken.c".into(), 3, Some(12), Severity::Error, None),
                ("broken.c".into(), 3, Some(12), Severity::Info, None),
            ]
        );
        assert_eq!(
            problems[1].message,
            "‘undefined_thing’ undeclared (first use in this function)"
        );
    }

    #[test]
    fn python_compile_tracebacks_use_the_last_real_frame() {
        let problems = ProblemMatcher::PythonTraceback.parse(&fixture("python-compile.txt"));
        let got: Vec<_> = problems.iter().map(summary).collect();
        assert_eq!(
            got,
            vec![
                (
                    "syn.py".into(),
                    1,
                    None,
                    Severity::Error,
                    Some("SyntaxError")
                ),
                (
                    "syn2.py".into(),
                    3,
                    None,
                    Severity::Error,
                    Some("SyntaxError")
                ),
            ]
        );
        assert_eq!(problems[1].message, "'(' was never closed");
    }

    #[test]
    fn tsc_pretty_false() {
        let problems = ProblemMatcher::Regex(RegexMatcher::tsc()).parse(&fixture("tsc.txt"));
        let got: Vec<_> = problems.iter().map(summary).collect();
        assert_eq!(
            got,
            vec![
                ("bad.ts".into(), 1, Some(7), Severity::Error, Some("TS2322")),
                (
                    "bad.ts".into(),
                    2,
                    Some(13),
                    Severity::Error,
                    Some("TS2304")
                ),
            ]
        );
        assert_eq!(problems[0].unit, ColumnUnit::Utf16);
    }

    #[test]
    fn garbage_input_yields_nothing_and_bad_patterns_are_errors() {
        let garbage = "{not json\n\u{0}\u{1b}[31m\n::::\n(1,2): x\n".repeat(100);
        assert!(ProblemMatcher::CargoJson.parse(&garbage).is_empty());
        assert!(ProblemMatcher::PythonTraceback.parse(&garbage).is_empty());
        assert!(
            ProblemMatcher::PythonTraceback
                .parse("ValueError: no frame\n  File \"x\"")
                .is_empty()
        );
        for m in [
            RegexMatcher::ruff(),
            RegexMatcher::gcc(),
            RegexMatcher::tsc(),
        ] {
            assert!(ProblemMatcher::Regex(m).parse(&garbage).is_empty());
        }
        assert!(RegexMatcher::new("(", Severity::Error, ColumnUnit::Chars).is_err());
        assert!(matches!(
            RegexMatcher::new("(?P<file>.*)", Severity::Error, ColumnUnit::Chars),
            Err(MatcherError::MissingGroups)
        ));
    }

    #[test]
    fn custom_regex_with_end_positions() {
        let m = RegexMatcher::new(
            r"^(?P<file>\S+) (?P<line>\d+):(?P<col>\d+)-(?P<end_line>\d+):(?P<end_col>\d+) (?P<message>.*)$",
            Severity::Info,
            ColumnUnit::Utf8,
        )
        .unwrap();
        let p = m.parse_line("a.txt 3:4-5:6 hello\r").unwrap();
        assert_eq!(
            (p.line, p.column, p.end_line, p.end_column),
            (3, Some(4), Some(5), Some(6))
        );
        assert_eq!((p.severity, p.message.as_str()), (Severity::Info, "hello"));
    }
}

//! The diagnostic as the rest of the workbench sees it: absolute path,
//! 0-based line and *character* (Unicode scalar) positions, so the editor can
//! index its text directly without knowing which encoding a server spoke.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How serious a diagnostic claims to be. A clue, not a verdict: the order is
/// only used for sorting and counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    /// Parses the words tools print (`error`, `fatal error`, `warning`, `note`, ...).
    pub(crate) fn from_word(word: &str) -> Option<Severity> {
        match word.trim().to_ascii_lowercase().as_str() {
            // `invalid-syntax` / `SyntaxError`: how ruff and Python name a parse failure.
            "error" | "fatal error" | "fatal" | "e" | "invalid-syntax" | "syntaxerror" => {
                Some(Severity::Error)
            }
            "warning" | "warn" | "w" => Some(Severity::Warning),
            "info" | "information" | "note" | "i" => Some(Severity::Info),
            "hint" | "help" | "h" => Some(Severity::Hint),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// A 0-based position: `character` counts Unicode scalar values (Rust `char`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Position {
    pub line: usize,
    pub character: usize,
}

impl Position {
    pub fn new(line: usize, character: usize) -> Self {
        Position { line, character }
    }
}

/// A half-open range `[start, end)` of positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    pub fn new(start: Position, end: Position) -> Self {
        Range { start, end }
    }

    /// Whether `pos` lies under this range. An empty range (start == end)
    /// still covers its own position, so zero-width diagnostics can be found.
    pub fn contains(&self, pos: Position) -> bool {
        if self.start == self.end {
            return pos == self.start;
        }
        self.start <= pos && pos < self.end
    }
}

/// One problem. Kept small, as a server may report tens of thousands: the
/// path, source and code are shared (one allocation per file, per server,
/// per code: see [`Interner`]), the message is shared with the pane's row
/// and the snapshot rather than copied, and nothing else the server sent
/// (fixes, links, its raw JSON) is kept.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// Absolute path of the file the diagnostic is about.
    pub path: Arc<Path>,
    pub range: Range,
    pub severity: Severity,
    pub message: Arc<str>,
    /// Who said it, e.g. `ruff`, `rust-analyzer`, `cargo check`.
    pub source: Arc<str>,
    pub code: Option<Arc<str>>,
    /// Other places the server points to (the other borrow, the earlier
    /// definition), shown in the problem's detail view.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
}

impl Diagnostic {
    /// Its identity: see [`DiagnosticId`]. Cheap: the strings are shared.
    pub fn id(&self) -> DiagnosticId {
        DiagnosticId {
            path: self.path.clone(),
            range: self.range,
            source: self.source.clone(),
            code: self.code.clone(),
        }
    }
}

/// Hands out one shared copy of each distinct string it is given: a
/// server's answer names the same source and the same few codes on every
/// one of its diagnostics.
#[derive(Debug, Default)]
pub struct Interner(HashSet<Arc<str>>);

impl Interner {
    pub fn intern(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(text) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(text);
        self.0.insert(shared.clone());
        shared
    }
}

/// What tells one diagnostic from another: its place, who reported it and
/// under which code. Not its message, which the Diagnostics pane shows
/// reworded (a server's several lines joined on one): matched by text,
/// F8 found no row for any ruff problem with a `help:` line. Two that
/// share an identity are at the same place, so either is the same jump.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiagnosticId {
    pub path: Arc<Path>,
    pub range: Range,
    pub source: Arc<str>,
    pub code: Option<Arc<str>>,
}

/// A place a diagnostic refers to, with what the server says there. The
/// position is the server's own (0-based line; the column in its units:
/// the text of another file is not at hand to convert it).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Related {
    pub path: PathBuf,
    pub line: usize,
    pub character: usize,
    pub message: String,
}

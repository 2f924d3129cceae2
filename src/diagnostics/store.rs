//! The latest diagnostics per file and per source, owned by the UI loop.
//! Pure data: no I/O, no channels, so every query is cheap and testable.

use std::collections::BTreeMap;
use std::ops::Bound::{Excluded, Included, Unbounded};
use std::path::{Path, PathBuf};

use super::event::DiagnosticsEvent;
use super::model::{Diagnostic, Position, Severity};

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SeverityCounts {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub hints: usize,
}

impl SeverityCounts {
    pub fn total(&self) -> usize {
        self.errors + self.warnings + self.infos + self.hints
    }

    fn merge(&mut self, other: SeverityCounts) {
        self.errors += other.errors;
        self.warnings += other.warnings;
        self.infos += other.infos;
        self.hints += other.hints;
    }

    fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.infos += 1,
            Severity::Hint => self.hints += 1,
        }
    }
}

/// How many diagnostics one file keeps (the most severe first, then by
/// position), as VS Code's problems view caps: past it a server's answer
/// costs memory and redraws for rows nobody reads. The rest are counted
/// ("N more").
pub const FILE_CAP: usize = 1000;

/// What one source last published about one file: the first [`FILE_CAP`]
/// by severity and position, kept in position order, and what was left out.
#[derive(Debug, Default, Clone, PartialEq)]
struct Published {
    kept: Vec<Diagnostic>,
    omitted: SeverityCounts,
}

/// Per file (sorted by path), per source, the last list that source published.
#[derive(Debug, Default, Clone)]
pub struct DiagnosticsStore {
    files: BTreeMap<PathBuf, BTreeMap<String, Published>>,
}

impl DiagnosticsStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies a `Published` event; other events carry no diagnostics and are
    /// ignored. Returns whether the store changed (so the UI can skip a redraw).
    pub fn apply(&mut self, event: DiagnosticsEvent) -> bool {
        match event {
            DiagnosticsEvent::Published {
                source,
                path,
                diagnostics,
            } => self.set(&source, &path, diagnostics),
            _ => false,
        }
    }

    /// Replaces what `source` says about `path`, keeping the first
    /// [`FILE_CAP`] by severity then position. Returns whether anything changed.
    pub fn set(&mut self, source: &str, path: &Path, mut diagnostics: Vec<Diagnostic>) -> bool {
        if diagnostics.is_empty() {
            let Some(sources) = self.files.get_mut(path) else {
                return false;
            };
            let removed = sources.remove(source).is_some();
            if sources.is_empty() {
                self.files.remove(path);
            }
            return removed;
        }
        let omitted = keep_first(&mut diagnostics, FILE_CAP);
        diagnostics.sort_by(|a, b| position_key(a).cmp(&position_key(b)));
        let published = Published {
            kept: diagnostics,
            omitted,
        };
        let sources = self.files.entry(path.to_path_buf()).or_default();
        if sources.get(source) == Some(&published) {
            return false;
        }
        sources.insert(source.to_string(), published);
        true
    }

    /// Forgets everything from `source` (e.g. a server that gave up).
    #[cfg(test)]
    pub(crate) fn clear_source(&mut self, source: &str) -> bool {
        let mut changed = false;
        self.files.retain(|_, sources| {
            changed |= sources.remove(source).is_some();
            !sources.is_empty()
        });
        changed
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Files that have at least one diagnostic, in path order.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.files.keys().map(PathBuf::as_path)
    }

    /// One file's diagnostics from every source, by position: at most
    /// [`FILE_CAP`] (the first by severity then position), as the pane
    /// lists them and F8 walks them.
    pub fn for_file(&self, path: &Path) -> Vec<&Diagnostic> {
        let mut list: Vec<&Diagnostic> = self
            .files
            .get(path)
            .into_iter()
            .flat_map(|sources| sources.values().flat_map(|p| &p.kept))
            .collect();
        keep_first(&mut list, FILE_CAP);
        list.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
        list
    }

    /// How many of `path`'s diagnostics [`for_file`](Self::for_file)
    /// leaves out: the "N more" of the pane and the snapshot.
    pub fn omitted(&self, path: &Path) -> usize {
        let Some(sources) = self.files.get(path) else {
            return 0;
        };
        let kept: usize = sources.values().map(|p| p.kept.len()).sum();
        let dropped: usize = sources.values().map(|p| p.omitted.total()).sum();
        dropped + kept.saturating_sub(FILE_CAP)
    }

    /// Everything, sorted by file, then line, then character, then severity.
    pub fn all_sorted(&self) -> Vec<&Diagnostic> {
        self.files
            .keys()
            .flat_map(|path| self.for_file(path))
            .collect()
    }

    /// Every diagnostic published, those left out by the cap included.
    pub fn counts(&self) -> SeverityCounts {
        let mut counts = SeverityCounts::default();
        for published in self.files.values().flat_map(BTreeMap::values) {
            for diagnostic in &published.kept {
                counts.add(diagnostic.severity);
            }
            counts.merge(published.omitted);
        }
        counts
    }

    #[cfg(test)]
    pub(crate) fn counts_for_file(&self, path: &Path) -> SeverityCounts {
        let mut counts = SeverityCounts::default();
        for diagnostic in self.for_file(path) {
            counts.add(diagnostic.severity);
        }
        counts
    }

    /// Diagnostics whose range covers `pos` in `path`, most severe first.
    pub fn at(&self, path: &Path, pos: Position) -> Vec<&Diagnostic> {
        let mut hits: Vec<&Diagnostic> = self
            .for_file(path)
            .into_iter()
            .filter(|d| d.range.contains(pos))
            .collect();
        hits.sort_by_key(|d| d.severity);
        hits
    }

    /// The first diagnostic that starts after `pos` in `path`, continuing into
    /// later files and wrapping around to the first one (F8). Only the files
    /// it walks through are sorted, not the whole store.
    pub fn next_after(&self, path: &Path, pos: Position) -> Option<&Diagnostic> {
        let here = self
            .for_file(path)
            .into_iter()
            .find(|d| d.range.start > pos);
        here.or_else(|| {
            let later = self.files.range::<Path, _>((Excluded(path), Unbounded));
            let earlier = self.files.range::<Path, _>((Unbounded, Included(path)));
            later
                .chain(earlier)
                .find_map(|(file, _)| self.for_file(file).into_iter().next())
        })
    }

    /// The last diagnostic that starts before `pos` in `path`, continuing into
    /// earlier files and wrapping around to the last one (Shift+F8).
    pub(crate) fn previous_before(&self, path: &Path, pos: Position) -> Option<&Diagnostic> {
        let here = self
            .for_file(path)
            .into_iter()
            .rev()
            .find(|d| d.range.start < pos);
        here.or_else(|| {
            let earlier = self
                .files
                .range::<Path, _>((Unbounded, Excluded(path)))
                .rev();
            let later = self
                .files
                .range::<Path, _>((Included(path), Unbounded))
                .rev();
            earlier
                .chain(later)
                .find_map(|(file, _)| self.for_file(file).into_iter().next_back())
        })
    }
}

fn order_key(d: &Diagnostic) -> (Position, Severity, &str) {
    (d.range.start, d.severity, &d.message)
}

fn position_key(d: &Diagnostic) -> (Position, Position, Severity, &str) {
    (d.range.start, d.range.end, d.severity, &d.message)
}

fn cap_key(d: &Diagnostic) -> (Severity, Position, Position, &str) {
    (d.severity, d.range.start, d.range.end, &d.message)
}

/// Keeps the first `cap` of `list` by severity, then position (VS Code's
/// order in its problems view), in no particular order; counts the rest.
fn keep_first<D: std::borrow::Borrow<Diagnostic>>(list: &mut Vec<D>, cap: usize) -> SeverityCounts {
    let mut omitted = SeverityCounts::default();
    if list.len() <= cap {
        return omitted;
    }
    list.select_nth_unstable_by(cap, |a, b| cap_key(a.borrow()).cmp(&cap_key(b.borrow())));
    for left_out in list.drain(cap..) {
        omitted.add(left_out.borrow().severity);
    }
    list.shrink_to_fit();
    omitted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::model::Range;

    fn diag(path: &str, line: usize, ch: usize, severity: Severity, source: &str) -> Diagnostic {
        Diagnostic {
            path: Path::new(path).into(),
            range: Range::new(Position::new(line, ch), Position::new(line, ch + 3)),
            severity,
            message: format!("{source} at {line}:{ch}").into(),
            source: source.into(),
            code: None,
            related: Vec::new(),
        }
    }

    fn store() -> DiagnosticsStore {
        let mut store = DiagnosticsStore::new();
        store.set(
            "ruff",
            Path::new("/w/b.py"),
            vec![
                diag("/w/b.py", 9, 0, Severity::Warning, "ruff"),
                diag("/w/b.py", 2, 4, Severity::Error, "ruff"),
            ],
        );
        store.set(
            "check",
            Path::new("/w/b.py"),
            vec![diag("/w/b.py", 2, 5, Severity::Hint, "check")],
        );
        store.set(
            "ruff",
            Path::new("/w/a.py"),
            vec![diag("/w/a.py", 5, 0, Severity::Info, "ruff")],
        );
        store
    }

    #[test]
    fn all_sorted_orders_by_file_then_position_across_sources() {
        let store = store();
        let order: Vec<(String, usize, usize)> = store
            .all_sorted()
            .iter()
            .map(|d| {
                (
                    d.path.display().to_string(),
                    d.range.start.line,
                    d.range.start.character,
                )
            })
            .collect();
        assert_eq!(
            order,
            vec![
                ("/w/a.py".into(), 5, 0),
                ("/w/b.py".into(), 2, 4),
                ("/w/b.py".into(), 2, 5),
                ("/w/b.py".into(), 9, 0),
            ]
        );
    }

    #[test]
    fn counts_per_severity() {
        let counts = store().counts();
        assert_eq!(
            counts,
            SeverityCounts {
                errors: 1,
                warnings: 1,
                infos: 1,
                hints: 1
            }
        );
        assert_eq!(store().counts_for_file(Path::new("/w/b.py")).total(), 3);
    }

    #[test]
    fn publishing_empty_list_clears_only_that_source() {
        let mut store = store();
        assert!(store.set("ruff", Path::new("/w/b.py"), vec![]));
        assert_eq!(store.for_file(Path::new("/w/b.py")).len(), 1);
        assert!(!store.set("ruff", Path::new("/w/b.py"), vec![]));
        assert!(store.set("check", Path::new("/w/b.py"), vec![]));
        assert_eq!(store.files().count(), 1);
        assert!(store.clear_source("ruff"));
        assert!(store.is_empty());
    }

    #[test]
    fn at_finds_overlapping_diagnostics_most_severe_first() {
        let store = store();
        let hits = store.at(Path::new("/w/b.py"), Position::new(2, 5));
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].severity, Severity::Error);
        assert!(
            store
                .at(Path::new("/w/b.py"), Position::new(2, 8))
                .is_empty()
        );
    }

    #[test]
    fn next_and_previous_cross_files_and_wrap() {
        let store = store();
        let a = Path::new("/w/a.py");
        let b = Path::new("/w/b.py");
        let next = store
            .next_after(a, Position::new(5, 0))
            .map(|d| (d.range.start.line, d.range.start.character));
        assert_eq!(next, Some((2, 4)));
        let wrapped = store
            .next_after(b, Position::new(9, 0))
            .map(|d| d.path.clone());
        assert_eq!(wrapped.as_deref(), Some(Path::new("/w/a.py")));
        let prev = store
            .previous_before(b, Position::new(2, 4))
            .map(|d| d.path.clone());
        assert_eq!(prev.as_deref(), Some(Path::new("/w/a.py")));
        let prev_wrap = store
            .previous_before(a, Position::new(0, 0))
            .map(|d| d.range.start.line);
        assert_eq!(prev_wrap, Some(9));
        assert!(
            DiagnosticsStore::new()
                .next_after(a, Position::default())
                .is_none()
        );
    }

    /// A file keeps its first `FILE_CAP` by severity, then position: the
    /// errors of a long file before its warnings, whatever their lines.
    #[test]
    fn a_file_keeps_its_first_diagnostics_by_severity_then_position_and_counts_the_rest() {
        let path = Path::new("/w/big.py");
        // Warnings on lines 0..1500, then 300 errors after them.
        let mut list: Vec<Diagnostic> = (0..1500)
            .map(|line| diag("/w/big.py", line, 0, Severity::Warning, "ruff"))
            .collect();
        list.extend((1500..1800).map(|line| diag("/w/big.py", line, 0, Severity::Error, "ruff")));
        let mut store = DiagnosticsStore::new();
        assert!(store.set("ruff", path, list));

        let kept = store.for_file(path);
        assert_eq!(kept.len(), FILE_CAP);
        let errors = kept
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        assert_eq!(errors, 300, "every error is kept");
        let last_warning = kept
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| d.range.start.line)
            .max();
        assert_eq!(last_warning, Some(699), "then the first warnings by line");
        assert!(
            kept.windows(2)
                .all(|w| w[0].range.start <= w[1].range.start),
            "listed by position"
        );
        assert_eq!(store.omitted(path), 800);
        let counts = store.counts();
        assert_eq!(
            (counts.errors, counts.warnings),
            (300, 1500),
            "counts are of all"
        );

        // Two sources over the cap together: the file still lists the cap.
        let hints = (0..600)
            .map(|line| diag("/w/big.py", line, 1, Severity::Hint, "check"))
            .collect();
        store.set("check", path, hints);
        assert_eq!(store.for_file(path).len(), FILE_CAP);
        assert_eq!(store.omitted(path), 1400);
        assert_eq!(
            store
                .next_after(path, Position::new(1799, 0))
                .map(|d| d.range.start.line),
            Some(0),
            "F8 walks what is listed, wrapping"
        );
    }

    #[test]
    fn apply_ignores_non_diagnostic_events() {
        let mut store = DiagnosticsStore::new();
        assert!(!store.apply(DiagnosticsEvent::Notice("hi".into())));
        let event = DiagnosticsEvent::Published {
            source: "ruff".into(),
            path: PathBuf::from("/w/a.py"),
            diagnostics: vec![diag("/w/a.py", 1, 1, Severity::Error, "ruff")],
        };
        assert!(store.apply(event.clone()));
        assert!(!store.apply(event), "same list twice is not a change");
    }
}

//! Unified diffs as the model writes them, applied to text: the parser and
//! applier behind `fs.apply_patch`.
//!
//! Written here rather than taken from a crate: models get hunk line
//! numbers wrong more often than the context, and the patch crates apply a
//! hunk only at its stated line. Here a hunk's old lines (context and
//! removed) must occur exactly; the match nearest the stated line wins, so
//! a wrong number costs nothing and a wrong context is refused.

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilePatch {
    /// Workspace-relative path (the `+++` side, `b/` removed).
    pub path: String,
    /// `--- /dev/null`: the patch creates the file.
    pub creates: bool,
    hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    /// 1-based line of the old text the hunk says it starts at.
    old_start: usize,
    old: Vec<String>,
    new: Vec<String>,
}

/// Why a patch cannot be applied, for the model to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PatchError {
    #[error("no file header (--- a/PATH / +++ b/PATH) before line {0}")]
    NoHeader(usize),
    #[error("the patch has no hunks")]
    Empty,
    #[error("{0}: deleting a file is not supported; write it empty or use shell.run")]
    Deletes(String),
    #[error(
        "{path}: hunk {hunk} does not match the file (its context and removed lines must appear exactly, whitespace included); fs.read shows the current text"
    )]
    NoMatch { path: String, hunk: usize },
}

/// Splits a unified diff into its files.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, PatchError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut old_name: Option<&str> = None;
    let lines: Vec<&str> = patch.lines().collect();
    for (number, &line) in lines.iter().enumerate() {
        // A header is `--- ` followed by `+++ `: a removed line that reads
        // `-- …` (an SQL comment) or an added `++ …` stays hunk content.
        let next_is_new_name = lines.get(number + 1).is_some_and(|l| l.starts_with("+++ "));
        let after_old_name =
            number > 0 && old_name.is_some() && lines[number - 1].starts_with("--- ");
        if let Some(name) = line.strip_prefix("--- ").filter(|_| next_is_new_name) {
            old_name = Some(name.trim());
        } else if let Some(name) = line.strip_prefix("+++ ").filter(|_| after_old_name) {
            let name = name.split('\t').next().unwrap_or(name).trim();
            if name == "/dev/null" {
                return Err(PatchError::Deletes(
                    old_name.map_or_else(String::new, |n| strip_side(n).to_owned()),
                ));
            }
            files.push(FilePatch {
                path: strip_side(name).to_owned(),
                creates: old_name == Some("/dev/null"),
                hunks: Vec::new(),
            });
        } else if let Some(header) = line.strip_prefix("@@") {
            let file = files.last_mut().ok_or(PatchError::NoHeader(number + 1))?;
            file.hunks.push(Hunk {
                old_start: old_start(header),
                old: Vec::new(),
                new: Vec::new(),
            });
        } else if let Some(hunk) = files.last_mut().and_then(|f| f.hunks.last_mut()) {
            match line.chars().next() {
                Some('-') => hunk.old.push(line[1..].to_owned()),
                Some('+') => hunk.new.push(line[1..].to_owned()),
                Some(' ') => {
                    hunk.old.push(line[1..].to_owned());
                    hunk.new.push(line[1..].to_owned());
                }
                // An empty context line some tools write without its space.
                None => {
                    hunk.old.push(String::new());
                    hunk.new.push(String::new());
                }
                // `\ No newline at end of file` and other notes.
                _ => {}
            }
        }
    }
    if files.iter().all(|f| f.hunks.is_empty()) {
        return Err(PatchError::Empty);
    }
    Ok(files)
}

/// `a/src/x.rs` → `src/x.rs`.
fn strip_side(name: &str) -> &str {
    name.strip_prefix("a/")
        .or_else(|| name.strip_prefix("b/"))
        .unwrap_or(name)
}

/// The old start of `@@ -12,3 +12,4 @@` (1 when unreadable).
fn old_start(header: &str) -> usize {
    header
        .split_whitespace()
        .find_map(|part| part.strip_prefix('-'))
        .and_then(|range| range.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

impl FilePatch {
    /// The text after the patch. Hunks apply in order, each after the
    /// previous one's place; the ending newline of `text` is kept.
    pub fn apply(&self, text: &str) -> Result<String, PatchError> {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut from = 0;
        for (index, hunk) in self.hunks.iter().enumerate() {
            let at = find(&lines, &hunk.old, from, hunk.old_start.saturating_sub(1)).ok_or(
                PatchError::NoMatch {
                    path: self.path.clone(),
                    hunk: index + 1,
                },
            )?;
            lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
            from = at + hunk.new.len();
        }
        // The file keeps its line endings.
        let ending = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let mut out = lines.join(ending);
        if !lines.is_empty() && (text.ends_with('\n') || text.is_empty()) {
            out.push_str(ending);
        }
        Ok(out)
    }
}

/// Where `block` occurs in `lines` at or after `from`, nearest `near`.
fn find(lines: &[String], block: &[String], from: usize, near: usize) -> Option<usize> {
    if block.is_empty() {
        return Some(near.clamp(from, lines.len()));
    }
    if block.len() > lines.len() {
        return None;
    }
    (from..=lines.len() - block.len())
        .filter(|&at| lines[at..at + block.len()] == *block)
        .min_by_key(|&at| at.abs_diff(near))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "a\nb\nc\nd\ne\nb\nc\n";

    #[test]
    fn a_hunk_applies_where_its_context_is_even_with_a_wrong_line_number() {
        let patch = "--- a/f.txt\n+++ b/f.txt\n@@ -40,3 +40,3 @@\n a\n-b\n+B\n c\n";
        let files = parse(patch).unwrap();
        assert_eq!(files[0].path, "f.txt");
        assert_eq!(files[0].apply(TEXT).unwrap(), "a\nB\nc\nd\ne\nb\nc\n");
    }

    #[test]
    fn the_match_nearest_the_stated_line_wins_and_hunks_apply_in_order() {
        let patch =
            "--- a/f.txt\n+++ b/f.txt\n@@ -6,2 +6,2 @@\n-b\n+X\n c\n@@ -1,1 +1,2 @@\n a\n+new\n";
        let files = parse(patch).unwrap();
        // The first hunk's `b c` is found twice: the one at line 6 is taken.
        // The second hunk must come after it, and `a` does not: refused.
        assert_eq!(
            files[0].apply(TEXT),
            Err(PatchError::NoMatch {
                path: "f.txt".into(),
                hunk: 2
            })
        );
        let in_order = "--- a/f.txt\n+++ b/f.txt\n@@ -6,2 +6,2 @@\n-b\n+X\n c\n";
        assert_eq!(
            parse(in_order).unwrap()[0].apply(TEXT).unwrap(),
            "a\nb\nc\nd\ne\nX\nc\n"
        );
    }

    /// Review findings: an old block longer than the file (a short file,
    /// three lines of context) is refused, not a panic; CRLF files stay
    /// CRLF; `-- comment` removed and `++x` added stay hunk lines.
    #[test]
    fn short_files_crlf_and_lines_that_look_like_headers() {
        let patch = "--- a/t.txt\n+++ b/t.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
        assert!(parse(patch).unwrap()[0].apply("a\n").is_err());
        assert!(parse(patch).unwrap()[0].apply("").is_err());
        let crlf = "--- a/w.txt\n+++ b/w.txt\n@@ -2 +2 @@\n-b\n+B\n";
        assert_eq!(
            parse(crlf).unwrap()[0].apply("a\r\nb\r\n").unwrap(),
            "a\r\nB\r\n"
        );
        let sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- old comment\n+++x\n select 1;\n";
        let files = parse(sql).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(
            files[0].apply("-- old comment\nselect 1;\n").unwrap(),
            "++x\nselect 1;\n"
        );
    }

    #[test]
    fn new_files_several_files_and_refusals() {
        let patch = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n--- a/f.txt\n+++ b/f.txt\n@@ -4 +4 @@\n-d\n+D\n";
        let files = parse(patch).unwrap();
        assert!(files[0].creates);
        assert_eq!(files[0].apply("").unwrap(), "one\ntwo\n");
        assert_eq!(files[1].apply(TEXT).unwrap(), "a\nb\nc\nD\ne\nb\nc\n");
        assert_eq!(parse("@@ -1 +1 @@\n-a\n+b\n"), Err(PatchError::NoHeader(1)));
        assert_eq!(parse("just words"), Err(PatchError::Empty));
        assert!(matches!(
            parse("--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"),
            Err(PatchError::Deletes(name)) if name == "x"
        ));
        let wrong = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-zzz\n+y\n";
        assert!(parse(wrong).unwrap()[0].apply(TEXT).is_err());
    }
}

//! Line diffs of a file's text before and after a change: the counts the
//! model is told (`+added −removed`), and the unified diff people read (in
//! the conversation, `/diff`, `exec --json`). One implementation, on the
//! `similar` crate, so every place shows the same numbers.

use similar::{ChangeTag, TextDiff};

/// Above this many bytes (before and after together) no line diff is made
/// on the UI loop: diffing two multi-megabyte texts takes long enough to
/// freeze a frame. Callers show the change without its lines.
pub(crate) const MAX_DIFF_BYTES: usize = 1 << 20;

/// How long one line diff may search for the smallest edit before it
/// settles for a larger (still correct) one: the time a diff takes grows
/// with the file's length times its differences, and 1 MiB of short
/// changed lines took seconds (review finding).
pub(crate) const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(100);

/// The line diff every function here uses, bounded by [`DIFF_DEADLINE`].
fn lines_diff<'a>(before: &'a str, after: &'a str) -> TextDiff<'a, 'a, 'a, str> {
    TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(before, after)
}

/// Whether a diff of these two texts is cheap enough for the UI loop.
pub(crate) fn small_enough(before: &str, after: &str) -> bool {
    before.len() + after.len() <= MAX_DIFF_BYTES
}

/// Lines added and removed, exactly when the texts are small enough to
/// diff quickly, else estimated as a rewrite (every line of `after` added,
/// every line of `before` removed): a line diff of two large unrelated
/// texts costs time quadratic in their length.
pub(crate) fn counts_or_rewrite(before: &str, after: &str) -> (usize, usize) {
    if small_enough(before, after) {
        line_counts(before, after)
    } else {
        (after.lines().count(), before.lines().count())
    }
}

/// Lines added and removed from `before` to `after`.
pub(crate) fn line_counts(before: &str, after: &str) -> (usize, usize) {
    let (mut added, mut removed) = (0, 0);
    for change in lines_diff(before, after).iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// The lines of `after` (0-based) a change touched: inserted or replaced
/// ones, and for a pure deletion the line that now stands where the
/// deleted ones were — what the file view marks in its gutter.
pub(crate) fn changed_lines(before: &str, after: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for op in lines_diff(before, after).ops() {
        let new = op.new_range();
        match op.tag() {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Delete => lines.push(new.start),
            similar::DiffTag::Insert | similar::DiffTag::Replace => lines.extend(new),
        }
    }
    lines.dedup();
    lines
}

/// The unified diff from `before` to `after` with `context` lines around
/// each change; with `name`, under a `--- a/name` / `+++ b/name` header.
pub fn unified(before: &str, after: &str, name: Option<&str>, context: usize) -> String {
    let diff = lines_diff(before, after);
    let mut unified = diff.unified_diff();
    unified.context_radius(context);
    match name {
        Some(name) => unified
            .header(&format!("a/{name}"), &format!("b/{name}"))
            .to_string(),
        None => unified.iter_hunks().map(|hunk| hunk.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_diffs_agree() {
        let (before, after) = ("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(line_counts(before, after), (2, 1));
        let with_header = unified(before, after, Some("f.txt"), 1);
        assert!(
            with_header.starts_with("--- a/f.txt\n+++ b/f.txt\n@@"),
            "{with_header}"
        );
        let hunks = unified(before, after, None, 1);
        assert!(hunks.starts_with("@@"), "{hunks}");
        assert!(hunks.contains("-b\n+B\n"), "{hunks}");
        assert!(hunks.contains("+d\n"), "{hunks}");
        assert_eq!(changed_lines(before, after), [1, 3]);
        assert_eq!(
            changed_lines("a\nb\nc\n", "a\nc\n"),
            [1],
            "a deletion marks where it was"
        );
    }
}

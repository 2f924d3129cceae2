//! Changed regions of a text by lines, and a three-way line merge (diff3)
//! on them: a write's hunks can be reviewed one by one and only the
//! accepted ones applied, and `/undo` can take back an agent's change from
//! a file the user has edited since, without touching the user's lines.
//!
//! `base` is the text both sides started from (what the change left),
//! `ours` is what the file holds now (the user's edits on top), `theirs`
//! is where undo wants to go (the text before the change). Regions only
//! one side changed take that side; regions both changed the same way
//! take it once; regions both changed differently are conflicts, which
//! keep `ours` (the user's text is never overwritten) and are reported.
//!
//! Works on lines of bytes (a line keeps its terminator, so CRLF and a
//! missing final newline survive, and non-UTF-8 files merge too). Changes
//! that touch, not only overlap, count as a conflict, as in `diff3`:
//! two edits to adjacent lines are rarely independent.

use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

/// The merged text, and where it kept `ours` because both sides changed
/// the same region differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merge {
    pub text: Vec<u8>,
    pub conflicts: Vec<Conflict>,
}

/// One region both sides changed differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// 1-based first line of the region in the merged text (which holds
    /// `ours` there).
    pub line: usize,
    pub ours: Vec<u8>,
    pub theirs: Vec<u8>,
}

/// A changed region: `base` lines replaced by `other` lines (0-based
/// line ranges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub base: Range<usize>,
    pub other: Range<usize>,
}

fn lines(text: &[u8]) -> Vec<&[u8]> {
    text.split_inclusive(|b| *b == b'\n').collect()
}

/// The regions `after` changed from `before`, in order.
pub(crate) fn changed_regions(before: &[u8], after: &[u8]) -> Vec<Hunk> {
    hunks(&lines(before), &lines(after))
}

/// `before` with only the `accepted` regions of `regions` (from
/// [`changed_regions`] of the same texts) taken from `after`.
pub(crate) fn apply_accepted(
    before: &[u8],
    after: &[u8],
    regions: &[Hunk],
    accepted: &[bool],
) -> Vec<u8> {
    let (old, new) = (lines(before), lines(after));
    let mut text = Vec::new();
    let mut at = 0;
    for (region, take) in regions.iter().zip(accepted) {
        text.extend_from_slice(&old[at..region.base.start].concat());
        let replacement = if *take {
            &new[region.other.clone()]
        } else {
            &old[region.base.clone()]
        };
        text.extend_from_slice(&replacement.concat());
        at = region.base.end;
    }
    text.extend_from_slice(&old[at..].concat());
    text
}

/// Region `index` of `regions` as a unified-diff hunk with up to
/// `context` lines around it, for review (`@@ -l,n +l,n @@`, then ` `, `-`
/// and `+` lines). The context stops at the neighbouring regions: lines
/// they change are not shown as unchanged, and the line numbers stay
/// right when an earlier region removed more than it added.
pub(crate) fn region_diff(
    before: &[u8],
    after: &[u8],
    regions: &[Hunk],
    index: usize,
    context: usize,
) -> String {
    let Some(region) = regions.get(index) else {
        return String::new();
    };
    let (old, new) = (lines(before), lines(after));
    let floor = index
        .checked_sub(1)
        .and_then(|i| regions.get(i))
        .map_or(0, |previous| previous.base.end);
    let ceiling = regions
        .get(index + 1)
        .map_or(old.len(), |next| next.base.start);
    let start = region.base.start.saturating_sub(context).max(floor);
    let end = (region.base.end + context)
        .min(ceiling)
        .max(region.base.end);
    let lead = region.base.start - start;
    let trail = end - region.base.end;
    let new_start = region.other.start - lead;
    let text = |line: &[u8]| {
        let line = String::from_utf8_lossy(line);
        let bare = line.strip_suffix('\n').unwrap_or(&line);
        bare.strip_suffix('\r').unwrap_or(bare).to_owned()
    };
    let mut out = format!(
        "@@ -{},{} +{},{} @@\n",
        start + 1,
        end - start,
        new_start + 1,
        lead + region.other.len() + trail
    );
    for line in &old[start..region.base.start] {
        out.push_str(&format!(" {}\n", text(line)));
    }
    for line in &old[region.base.clone()] {
        out.push_str(&format!("-{}\n", text(line)));
    }
    for line in &new[region.other.clone()] {
        out.push_str(&format!("+{}\n", text(line)));
    }
    for line in &old[region.base.end..end] {
        out.push_str(&format!(" {}\n", text(line)));
    }
    out
}

/// The regions `other` changed from `base`, in order, adjacent ops joined.
///
/// Positions are counted here from the ops' lengths: `similar`'s Myers
/// output can give a deletion's `new_index` (and an insertion's
/// `old_index`) off by the ops around it, which the ranges cannot afford.
fn hunks(base: &[&[u8]], other: &[&[u8]]) -> Vec<Hunk> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let (mut old, mut new) = (0, 0);
    // Bounded like every line diff here: past the deadline the diff is
    // coarser (a region may hold unchanged lines), never wrong.
    let deadline = std::time::Instant::now() + crate::text_diff::DIFF_DEADLINE;
    for op in capture_diff_slices_deadline(Algorithm::Myers, base, other, Some(deadline)) {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let (old_len, new_len) = (old_range.len(), new_range.len());
        let here = Hunk {
            base: old..old + old_len,
            other: new..new + new_len,
        };
        old += old_len;
        new += new_len;
        if tag == DiffTag::Equal {
            continue;
        }
        match hunks.last_mut() {
            Some(last)
                if last.base.end == here.base.start && last.other.end == here.other.start =>
            {
                last.base.end = here.base.end;
                last.other.end = here.other.end;
            }
            _ => hunks.push(here),
        }
    }
    hunks
}

/// What one side holds for `base[range]`, given its hunks inside the
/// range (outside them it equals base, offset by the changes before).
fn side_text(range: &Range<usize>, hunks: &[Hunk], base: &[&[u8]], other: &[&[u8]]) -> Vec<u8> {
    let (Some(first), Some(last)) = (hunks.first(), hunks.last()) else {
        return base[range.clone()].concat();
    };
    let start = first.other.start - (first.base.start - range.start);
    let end = last.other.end + (range.end - last.base.end);
    other[start..end].concat()
}

/// Merges `ours` and `theirs`, both descended from `base`.
pub(crate) fn merge3(base: &[u8], ours: &[u8], theirs: &[u8]) -> Merge {
    let (base, ours, theirs) = (lines(base), lines(ours), lines(theirs));
    let (a, b) = (hunks(&base, &ours), hunks(&base, &theirs));
    let (mut i, mut j) = (0, 0);
    let mut text = Vec::new();
    let mut conflicts = Vec::new();
    let mut line = 1;
    let mut at = 0;
    while i < a.len() || j < b.len() {
        // The next region: the earliest hunk, grown by every hunk of
        // either side that overlaps or touches it.
        let first = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if y.base.start < x.base.start => y,
            (Some(x), _) => x,
            (None, Some(y)) => y,
            (None, None) => break,
        };
        let mut range = first.base.clone();
        let (i0, j0) = (i, j);
        loop {
            let grown = if a.get(i).is_some_and(|h| h.base.start <= range.end) {
                range.end = range.end.max(a[i].base.end);
                i += 1;
                true
            } else if b.get(j).is_some_and(|h| h.base.start <= range.end) {
                range.end = range.end.max(b[j].base.end);
                j += 1;
                true
            } else {
                false
            };
            if !grown {
                break;
            }
        }
        let unchanged = base[at..range.start].concat();
        line += count_lines(&unchanged);
        text.extend_from_slice(&unchanged);
        let mine = side_text(&range, &a[i0..i], &base, &ours);
        let yours = side_text(&range, &b[j0..j], &base, &theirs);
        let taken = if i == i0 {
            yours
        } else if j == j0 || mine == yours {
            mine
        } else {
            conflicts.push(Conflict {
                line,
                ours: mine.clone(),
                theirs: yours,
            });
            mine
        };
        line += count_lines(&taken);
        text.extend_from_slice(&taken);
        at = range.end;
    }
    text.extend_from_slice(&base[at..].concat());
    Merge { text, conflicts }
}

fn count_lines(text: &[u8]) -> usize {
    text.iter().filter(|b| **b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(base: &str, ours: &str, theirs: &str) -> (String, usize) {
        let m = merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes());
        (String::from_utf8(m.text).unwrap(), m.conflicts.len())
    }

    #[test]
    fn changes_far_apart_both_apply() {
        let base = "a\nb\nc\nd\ne\nf\n";
        let ours = "A\nb\nc\nd\ne\nf\n"; // the user edits line 1
        let theirs = "a\nb\nc\nd\ne\nF\nG\n"; // undo touches the end
        assert_eq!(
            merged(base, ours, theirs),
            ("A\nb\nc\nd\ne\nF\nG\n".into(), 0)
        );
    }

    #[test]
    fn one_sided_changes_take_that_side() {
        let base = "x\ny\n";
        assert_eq!(merged(base, base, "x\n"), ("x\n".into(), 0));
        assert_eq!(merged(base, "x\ny\nz\n", base), ("x\ny\nz\n".into(), 0));
        assert_eq!(merged("", "", "new\n"), ("new\n".into(), 0));
    }

    #[test]
    fn the_same_change_on_both_sides_is_taken_once() {
        let base = "1\n2\n3\n";
        let both = "1\ntwo\n3\n";
        assert_eq!(merged(base, both, both), (both.into(), 0));
    }

    #[test]
    fn overlapping_changes_conflict_and_keep_ours() {
        let base = "keep\nold\nkeep2\n";
        let ours = "keep\nmine\nkeep2\n";
        let theirs = "keep\ntheirs\nkeep2\n";
        let m = merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes());
        assert_eq!(m.text, ours.as_bytes());
        assert_eq!(
            m.conflicts,
            vec![Conflict {
                line: 2,
                ours: b"mine\n".to_vec(),
                theirs: b"theirs\n".to_vec(),
            }]
        );
    }

    #[test]
    fn adjacent_changes_conflict() {
        let (text, conflicts) = merged("a\nb\n", "A\nb\n", "a\nB\n");
        assert_eq!((text.as_str(), conflicts), ("A\nb\n", 1));
    }

    #[test]
    fn line_ends_and_a_missing_final_newline_survive() {
        let base = "a\r\nb\r\nc\r\nd";
        let ours = "a\r\nb\r\nc\r\nd!";
        let theirs = "x\r\nb\r\nc\r\nd";
        assert_eq!(merged(base, ours, theirs), ("x\r\nb\r\nc\r\nd!".into(), 0));
    }

    #[test]
    fn conflict_lines_count_in_the_merged_text() {
        let base = "1\n2\n3\n4\n5\n6\n7\n";
        let ours = "0\n1\n2\n3\n4\nfive\n6\n7\n"; // a line added on top shifts it
        let theirs = "1\n2\n3\n4\nFIVE\n6\n7\n";
        let m = merge3(base.as_bytes(), ours.as_bytes(), theirs.as_bytes());
        assert_eq!(m.conflicts.len(), 1);
        assert_eq!(m.conflicts[0].line, 6, "{:?}", m.conflicts);
    }

    /// Texts of a few short lines from a tiny alphabet, so sides collide.
    fn text() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            proptest::prop_oneof!["a\n", "b\n", "c\n", "a\r\n", "d"],
            0..8,
        )
        .prop_map(|lines| lines.concat().into_bytes())
    }

    use proptest::strategy::Strategy;

    proptest::proptest! {
        /// A side that changed nothing yields the other side exactly; the
        /// same change on both sides yields it once; a conflict-free merge
        /// never loses a line only one side changed.
        #[test]
        fn merging_with_an_unchanged_side_gives_the_other(
            base in text(), ours in text(), theirs in text()
        ) {
            proptest::prop_assert_eq!(merge3(&base, &ours, &base).text, ours.clone());
            proptest::prop_assert_eq!(merge3(&base, &base, &theirs).text, theirs.clone());
            proptest::prop_assert_eq!(merge3(&base, &theirs, &theirs).text, theirs.clone());
            let merged = merge3(&base, &ours, &theirs);
            if merged.conflicts.is_empty() {
                // Applying the merge's own changes again changes nothing.
                proptest::prop_assert_eq!(
                    merge3(&ours, &merged.text, &merged.text).text,
                    merged.text.clone()
                );
            }
        }
    }

    #[test]
    fn only_accepted_regions_are_applied() {
        let before = b"a\nb\nc\nd\ne\nf\ng\n";
        let after = b"A\nb\nc\nd\ne\nf\nG\nh\n";
        let regions = changed_regions(before, after);
        assert_eq!(regions.len(), 2, "{regions:?}");
        assert_eq!(
            apply_accepted(before, after, &regions, &[true, true]),
            after
        );
        assert_eq!(
            apply_accepted(before, after, &regions, &[false, false]),
            before
        );
        assert_eq!(
            apply_accepted(before, after, &regions, &[false, true]),
            b"a\nb\nc\nd\ne\nf\nG\nh\n"
        );
        assert_eq!(
            region_diff(before, after, &regions, 1, 2),
            "@@ -5,3 +5,4 @@\n e\n f\n-g\n+G\n+h\n"
        );
    }

    /// Review finding: an earlier region that removed lines made the next
    /// hunk's context reach back past it, and its new line number went
    /// below zero (a panic in debug builds).
    #[test]
    fn hunk_context_stops_at_the_previous_region() {
        let before = b"a\nb\nc\nd\ne\nf\ng\n";
        let after = b"d\nE\nf\ng\n";
        let regions = changed_regions(before, after);
        let shown: Vec<String> = (0..regions.len())
            .map(|i| region_diff(before, after, &regions, i, 3))
            .collect();
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown[1].starts_with("@@ -4,4 +1,4 @@\n d\n-e\n+E\n"),
            "{shown:?}"
        );
    }

    proptest::proptest! {
        /// Every region of any pair of texts can be shown.
        #[test]
        fn every_region_can_be_shown(before in text(), after in text()) {
            let regions = changed_regions(&before, &after);
            for i in 0..regions.len() {
                let shown = region_diff(&before, &after, &regions, i, 3);
                proptest::prop_assert!(shown.starts_with("@@ -"));
            }
        }
    }
}

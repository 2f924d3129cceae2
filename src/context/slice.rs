//! Python's `seq[start:end]` bounds, so `context.slice(-5)` means what a
//! Python programmer (or model) expects.

use std::ops::Range;

/// The index range `seq[start:end]` selects from a sequence of length `len`
/// (step 1): negative bounds count from the end, out-of-range bounds clamp,
/// and `start >= end` selects nothing.
pub(crate) fn python_slice(len: usize, start: Option<i64>, end: Option<i64>) -> Range<usize> {
    let resolve = |bound: i64| -> usize {
        let len_i = i64::try_from(len).unwrap_or(i64::MAX);
        let absolute = if bound < 0 {
            bound.saturating_add(len_i)
        } else {
            bound
        };
        usize::try_from(absolute.clamp(0, len_i)).unwrap_or(len)
    };
    let start = start.map_or(0, resolve);
    let end = end.map_or(len, resolve);
    if start >= end {
        start..start
    } else {
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::python_slice;

    /// `(len, start, end, expected)` — every row printed by real python3:
    /// `list(range(len))[start:end]`, written as (first, last+1) of the result.
    type Case = (usize, Option<i64>, Option<i64>, (usize, usize));
    const PYTHON_CASES: &[Case] = &include!("slice_cases.in");

    #[test]
    fn matches_python_for_every_recorded_case() {
        for &(len, start, end, (lo, hi)) in PYTHON_CASES {
            let got = python_slice(len, start, end);
            if lo == hi {
                assert!(got.is_empty(), "len={len} [{start:?}:{end:?}] gave {got:?}");
            } else {
                assert_eq!(got, lo..hi, "len={len} [{start:?}:{end:?}]");
            }
        }
    }

    #[test]
    fn extreme_bounds_do_not_overflow() {
        assert_eq!(python_slice(3, Some(i64::MIN), Some(i64::MAX)), 0..3);
        assert_eq!(python_slice(3, Some(i64::MAX), None).len(), 0);
        assert_eq!(python_slice(0, Some(i64::MIN), Some(i64::MIN)).len(), 0);
    }
}

//! The selected row of a scrollable list (the search results, the picker,
//! the variables and the diagnostics).

/// A scrollable list with a selected row.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ListCursor {
    pub selected: usize,
}

impl ListCursor {
    /// Moves by `delta` rows, clamped to `len` rows.
    pub(crate) fn move_by(&mut self, delta: isize, len: usize) {
        let last = len.saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last.max(0)) as usize;
    }
}

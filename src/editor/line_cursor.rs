//! Cursor and selection anchor for read-only documents that do not live in
//! the edit engine (files too big for it).

/// A (line, char) cursor with an optional selection anchor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineCursor {
    pub pos: (usize, usize),
    pub anchor: Option<(usize, usize)>,
}

impl LineCursor {
    /// Move to `to` (clamped); `select` keeps or starts the selection.
    pub fn jump(&mut self, lines: &[String], to: (usize, usize), select: bool) {
        if select {
            self.anchor.get_or_insert(self.pos);
        } else {
            self.anchor = None;
        }
        self.pos = clamp(lines, to);
    }

    pub fn selection(&self) -> Option<((usize, usize), (usize, usize))> {
        self.anchor.map(|a| {
            if a <= self.pos {
                (a, self.pos)
            } else {
                (self.pos, a)
            }
        })
    }
}

/// Clamp a position into the text.
pub fn clamp(lines: &[String], (line, col): (usize, usize)) -> (usize, usize) {
    let last = lines.len().saturating_sub(1);
    let line = line.min(last);
    let len = lines.get(line).map_or(0, |l| l.chars().count());
    (line, col.min(len))
}

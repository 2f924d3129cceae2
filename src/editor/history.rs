//! Undo and redo in steps people think in, like VS Code: consecutive typing
//! is one step until the cursor jumps, the user pauses for `PAUSE`, or a
//! blank follows a non-blank (so "hello world" undoes as "hello" and
//! " world"); consecutive deletions group the same way; a paste, an
//! indent, a cut or a reload is one step of its own. Redo survives until
//! the next edit.

use std::time::{Duration, Instant};

use super::text::Shape;

/// Typing after a pause this long starts a new undo step.
pub(crate) const PAUSE: Duration = Duration::from_secs(1);
/// Undo steps kept per document.
const DEPTH: usize = 1000;

/// One replacement in the text: at char `at`, `removed` became `inserted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub at: usize,
    pub removed: String,
    pub inserted: String,
}

/// Cursor head and selection anchor, as char indices.
pub(crate) type Cursor = (usize, Option<usize>);

/// What kind of edit a command made, for grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Typed text; `space` is whether it was blank (a change between
    /// blank and non-blank starts a new step).
    Typing {
        space: bool,
    },
    DeleteBack,
    DeleteForward,
    /// Its own step, always.
    Alone,
}

/// A group of edits undone together, with the cursor before and after.
#[derive(Debug, Clone)]
pub struct Step {
    pub edits: Vec<Edit>,
    pub before: Cursor,
    pub after: Cursor,
    /// The file's shape before and after, when the step changed it (a
    /// reload from disk can bring other line endings).
    pub shape: Option<(Shape, Shape)>,
}

#[derive(Debug, Default)]
pub(crate) struct History {
    undo: Vec<Step>,
    redo: Vec<Step>,
    /// The open group: its kind and when it was last extended. None after
    /// a cursor jump, an undo or a step that stands alone.
    open: Option<(Kind, Instant)>,
}

impl History {
    /// Record edits just made. They join the last step when that step is
    /// still open, recent, and `continues` says so; the cursor must not
    /// have moved in between (`seal` is called on every motion).
    pub fn record(
        &mut self,
        kind: Kind,
        now: Instant,
        edits: Vec<Edit>,
        before: Cursor,
        after: Cursor,
        shape: Option<(Shape, Shape)>,
    ) {
        if edits.is_empty() {
            return;
        }
        self.redo.clear();
        let joins = self.open.is_some_and(|(last, at)| {
            now.saturating_duration_since(at) < PAUSE && continues(last, kind)
        });
        match self.undo.last_mut() {
            Some(step) if joins && step.after == before => {
                step.edits.extend(edits);
                step.after = after;
            }
            _ => {
                self.undo.push(Step {
                    edits,
                    before,
                    after,
                    shape,
                });
                if self.undo.len() > DEPTH {
                    self.undo.remove(0);
                }
            }
        }
        self.open = (kind != Kind::Alone).then_some((kind, now));
    }

    /// The cursor moved or something else happened: the next edit starts
    /// a new step.
    pub(crate) fn seal(&mut self) {
        self.open = None;
    }

    /// The step to undo; the caller reverts its edits and hands it back
    /// with `undone`.
    pub(crate) fn take_undo(&mut self) -> Option<Step> {
        self.open = None;
        self.undo.pop()
    }

    pub fn undone(&mut self, step: Step) {
        self.redo.push(step);
    }

    pub(crate) fn take_redo(&mut self) -> Option<Step> {
        self.open = None;
        self.redo.pop()
    }

    pub(crate) fn redone(&mut self, step: Step) {
        self.undo.push(step);
    }
}

/// Whether an edit of kind `next` extends a group whose last edit was of
/// kind `last`.
fn continues(last: Kind, next: Kind) -> bool {
    match (last, next) {
        (Kind::Typing { space: false }, Kind::Typing { space: true }) => false,
        (Kind::Typing { .. }, Kind::Typing { .. }) => true,
        (Kind::Alone, _) | (_, Kind::Alone) => false,
        (last, next) => last == next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(at: usize, c: &str) -> Vec<Edit> {
        vec![Edit {
            at,
            removed: String::new(),
            inserted: c.into(),
        }]
    }

    #[test]
    fn typing_groups_until_a_pause_a_jump_or_a_space() {
        let t0 = Instant::now();
        let word = Kind::Typing { space: false };
        let space = Kind::Typing { space: true };
        let mut h = History::default();
        let mut at = 0;
        let mut put = |h: &mut History, kind, when| {
            h.record(kind, when, typed(at, "x"), (at, None), (at + 1, None), None);
            at += 1;
        };
        put(&mut h, word, t0);
        put(&mut h, word, t0);
        assert_eq!(h.undo.len(), 1);
        put(&mut h, space, t0);
        assert_eq!(h.undo.len(), 2, "a blank after a word");
        put(&mut h, word, t0);
        assert_eq!(h.undo.len(), 2, "the blank goes with the next word");
        put(&mut h, word, t0 + PAUSE);
        assert_eq!(h.undo.len(), 3, "after a pause");
        h.seal();
        put(&mut h, word, t0 + PAUSE);
        assert_eq!(h.undo.len(), 4, "after a cursor move");
        put(&mut h, Kind::DeleteBack, t0 + PAUSE);
        assert_eq!(h.undo.len(), 5, "deleting after typing");
        put(&mut h, Kind::DeleteBack, t0 + PAUSE);
        assert_eq!(h.undo.len(), 5, "deletions group");
        put(&mut h, Kind::Alone, t0 + PAUSE);
        put(&mut h, Kind::Alone, t0 + PAUSE);
        assert_eq!(h.undo.len(), 7, "pastes stand alone");
    }

    #[test]
    fn redo_survives_until_the_next_edit() {
        let t0 = Instant::now();
        let mut h = History::default();
        h.record(Kind::Alone, t0, typed(0, "a"), (0, None), (1, None), None);
        let step = h.take_undo().unwrap();
        h.undone(step);
        h.seal();
        assert_eq!(h.redo.len(), 1, "a motion keeps redo");
        h.record(Kind::Alone, t0, typed(0, "b"), (0, None), (1, None), None);
        assert!(h.redo.is_empty());
    }
}

//! The overlays on screen, bottom first, as helix's compositor keeps its
//! layers: the top one has the keyboard; the ones below are drawn under it
//! and get the keyboard back, as they were, when it closes. So a question
//! that appears on its own (a file's unsaved edits found at start, the
//! trust question, a conflict on disk) goes over the search or picker the
//! user had open instead of throwing it away.

use super::Overlay;

#[derive(Debug, Default)]
pub struct OverlayStack {
    layers: Vec<Overlay>,
}

impl OverlayStack {
    /// The overlay that has the keyboard.
    pub fn top(&self) -> Option<&Overlay> {
        self.layers.last()
    }

    /// Opens `overlay` over the others.
    pub fn push(&mut self, overlay: Overlay) {
        self.layers.push(overlay);
    }

    /// Closes the top overlay; the one below has the keyboard again.
    pub fn pop(&mut self) -> Option<Overlay> {
        self.layers.pop()
    }

    /// Puts `overlay` in the top one's place (an overlay that opens
    /// another, as the search pane opens a variable's detail), or opens it
    /// when none is.
    pub(crate) fn replace_top(&mut self, overlay: Overlay) {
        self.layers.pop();
        self.layers.push(overlay);
    }

    /// Bottom first, as they are drawn.
    pub fn iter(&self) -> impl Iterator<Item = &Overlay> {
        self.layers.iter()
    }

    /// Removes the top overlay when `is_it` says it is the one to close
    /// (a question answered elsewhere than in its own overlay).
    #[cfg(test)]
    pub(crate) fn close_top_if(&mut self, is_it: impl Fn(&Overlay) -> bool) {
        if self.top().is_some_and(is_it) {
            self.layers.pop();
        }
    }

    /// Takes every overlay out, to bring each up to date with the rest of
    /// the state to read (`app::deliver::before_frame`); [`Self::restore`]
    /// puts them back.
    pub(crate) fn take_all(&mut self) -> Vec<Overlay> {
        std::mem::take(&mut self.layers)
    }

    /// Puts back what [`Self::take_all`] took, under anything opened
    /// meanwhile.
    pub fn restore(&mut self, mut below: Vec<Overlay>) {
        below.append(&mut self.layers);
        self.layers = below;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_the_top_gives_the_keyboard_back_to_the_one_below() {
        let mut stack = OverlayStack::default();
        stack.push(Overlay::Help(Default::default()));
        stack.push(Overlay::RequestPreview(Default::default()));
        assert!(matches!(stack.top(), Some(Overlay::RequestPreview(_))));
        stack.pop();
        assert!(matches!(stack.top(), Some(Overlay::Help(_))));
        stack.replace_top(Overlay::RequestPreview(Default::default()));
        assert_eq!(stack.iter().count(), 1);
        stack.close_top_if(|o| matches!(o, Overlay::Help(_)));
        assert_eq!(stack.iter().count(), 1, "not the one asked for");
        let taken = stack.take_all();
        stack.push(Overlay::Help(Default::default()));
        stack.restore(taken);
        assert!(
            matches!(stack.top(), Some(Overlay::Help(_))),
            "opened meanwhile stays on top"
        );
    }
}

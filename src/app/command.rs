//! What the event loop must do after an update: the one answer every
//! handler of the app gives.

/// What the event loop must do after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Nothing changed on screen.
    None,
    /// Draw a new frame.
    Redraw,
    /// Clear the terminal and draw everything again.
    FullRedraw,
    Suspend,
    Quit,
    /// Text was copied: send it to the system clipboard (OSC 52), redraw.
    Clipboard(String),
}

impl Command {
    /// At least a redraw: for callers that changed the screen themselves.
    pub(crate) fn or_redraw(self) -> Self {
        if self == Command::None {
            Command::Redraw
        } else {
            self
        }
    }

    /// Both commands' work: the weightier one (quitting outranks
    /// suspending, a full redraw a redraw).
    pub(crate) fn merge(self, other: Self) -> Self {
        fn weight(command: &Command) -> u8 {
            match command {
                Command::None => 0,
                Command::Redraw => 1,
                Command::Clipboard(_) => 2,
                Command::FullRedraw => 3,
                Command::Suspend => 4,
                Command::Quit => 5,
            }
        }
        if weight(&other) > weight(&self) {
            other
        } else {
            self
        }
    }

    pub(crate) fn from_changed(changed: bool) -> Self {
        if changed {
            Command::Redraw
        } else {
            Command::None
        }
    }
}

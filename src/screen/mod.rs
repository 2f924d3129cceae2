//! Where things are on the screen: pure functions from the terminal size
//! and the state to rectangles and rows. Drawing (`ui`) and hit-testing
//! (`app::update`) both use them, so a click lands on what was drawn, and
//! neither of the two imports the other. They are cheap and computed on
//! demand, so `update` needs no drawn frame (tests drive it without one).

pub mod conversation;
pub mod file_view;
pub mod layout;
pub(crate) mod wrap;

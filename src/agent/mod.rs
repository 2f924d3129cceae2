//! The agent: the model provider today; the turn loop (tools, kernel,
//! snapshot) is wired on top of it by the app.

pub mod provider;

//! hello-tui: a full-screen terminal workbench for a code-action coding agent.
//!
//! The library exposes every module so integration tests and benchmarks can
//! drive the core (snapshot, context, kernel, agent) without a terminal.
pub mod editor;

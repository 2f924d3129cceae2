//! hello-tui: a full-screen terminal workbench for a code-action coding agent.
//!
//! The library exposes every module so integration tests and benchmarks can
//! drive the core (snapshot, context, kernel, agent) without a terminal.
//! See ARCHITECTURE.md for the module map and the data flow.

pub mod agent;
pub mod app;
pub mod cli;
pub mod config;
pub mod context;
pub mod diagnostics;
pub mod editor;
pub mod exec;
pub mod kernel;
pub mod kernel_setup;
pub mod keymap;
pub mod logging;
pub mod sandbox;
pub mod sanitize;
pub mod session;
pub mod snapshot;
pub mod theme;
pub mod ui;
pub mod workspace;

//! hello-tui: a full-screen terminal workbench for a code-action coding agent.
//!
//! The library exposes every module so integration tests and benchmarks can
//! drive the core (snapshot, context, kernel, agent) without a terminal.
//! See ARCHITECTURE.md for the module map and the data flow.

// No `unwrap`/`expect` outside tests: I/O and user input get errors, not
// panics. The other lints of the house are in Cargo.toml's `[lints]`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
pub mod agent;
pub mod agent_session;
pub mod app;
pub(crate) mod background;
pub mod cli;
pub mod component;
pub mod config;
pub mod context;
pub mod diagnostics;
pub mod editor;
pub mod exec;
pub mod hooks;
pub mod kernel;
pub mod kernel_launch;
pub mod kernel_setup;
pub mod keymap;
pub mod logging;
pub mod mcp;
pub mod overlays;
pub mod panes;
pub mod process_group;
pub mod sandbox;
pub mod sanitize;
pub mod screen;
pub mod session;
pub mod snapshot;
pub mod subcalls;
pub mod text_diff;
pub(crate) mod text_merge;
pub mod theme;
pub mod tokens;
pub mod trust;
pub mod tui;
pub mod ui;
pub mod units;
pub mod workbench;
pub mod workspace;

//! hello-tui: a full-screen terminal workbench for a code-action coding agent.
//!
//! The library exposes every module so integration tests and benchmarks can
//! drive the core (snapshot, context, kernel, agent) without a terminal.
//! See ARCHITECTURE.md for the module map and the data flow.

// House rules the compiler keeps (see ARCHITECTURE.md, "Lints"): no
// `unwrap`/`expect` outside tests — I/O and user input get errors, not
// panics — and a few pedantic lints that keep the code plain.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
#![warn(
    clippy::manual_let_else,
    clippy::unnested_or_patterns,
    clippy::implicit_clone,
    clippy::cloned_instead_of_copied,
    clippy::explicit_iter_loop,
    clippy::inefficient_to_string,
    clippy::unused_self,
    clippy::ref_option,
    clippy::needless_raw_string_hashes
)]
pub mod agent;
pub mod app;
pub mod cli;
pub mod config;
pub mod context;
pub mod diagnostics;
pub mod editor;
pub mod exec;
pub mod kernel;
pub mod keymap;
pub mod logging;
pub mod sandbox;
pub mod sanitize;
pub mod screen;
pub mod session;
pub mod snapshot;
pub mod theme;
pub mod tokens;
pub mod ui;
pub mod workspace;

//! Check commands (compilers, linters, type checkers) run on save or on
//! demand, their output turned into diagnostics by problem matchers.

pub(crate) mod config;
pub(crate) mod matchers;
mod resolve;
mod runner;
pub(crate) mod scheduler;

pub use config::{BuiltinMatcher, CheckCommand, MatcherSpec};
pub use matchers::{MatcherError, ProblemMatcher, RawProblem, RegexMatcher};
pub use resolve::{resolve_path, to_diagnostics};

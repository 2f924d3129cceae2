//! The kernel's runtime state as the inspector and the agent see it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// What kind of binding a variable is. Imported modules, imported functions
/// and classes, injected capabilities and `_`-names are never listed; functions
/// and classes the user defined in a cell are (the inspector can dim them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VariableKind {
    #[default]
    Value,
    Function,
    Class,
}

/// One user variable, rendered by the driver's bounded SafeRepr.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(test, serde(deny_unknown_fields))]
pub struct Variable {
    pub name: String,
    /// Python type name (`int`, `list`, `ndarray`, `DataFrame`...).
    #[serde(rename = "type", default)]
    pub type_name: String,
    #[serde(default)]
    pub kind: VariableKind,
    /// `len 3 items`, `shape (3, 4) float64`, `def f(a, b)`...
    #[serde(default)]
    pub summary: Option<String>,
    /// Approximate size in bytes (shallow plus sampled elements).
    #[serde(default)]
    pub size: Option<u64>,
    /// Bounded preview, never a full `repr()`.
    #[serde(default)]
    pub preview: Option<String>,
    /// Id of the execute call that last (re)bound or resized it.
    #[serde(default)]
    pub changed_by: Option<u64>,
}

/// A `describe()` answer.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct RuntimeState {
    pub alive: bool,
    /// Shared, not copied: while nothing changes, every describe hands out
    /// the same listing (1 000 variables are ~5 000 allocations to clone).
    #[serde(default)]
    pub variables: Arc<Vec<Variable>>,
    /// True when the listing was cut (too many variables, or the describe time
    /// budget ran out and the rest are listed without previews).
    #[serde(default)]
    pub truncated: bool,
    /// Execute id of the cell running while this was taken, if any.
    #[serde(default)]
    pub running: Option<u64>,
    /// Set when the driver could not inspect its namespace.
    #[serde(default)]
    pub error: Option<String>,
    /// Time the kernel spent building this listing.
    #[serde(default)]
    pub elapsed_ms: Option<f64>,
}

impl RuntimeState {
    /// The state of a kernel that is not running: no variables.
    pub fn dead() -> Self {
        Self::default()
    }

    /// Variables the given execute call changed (for "changed by the last cell").
    pub fn changed_by(&self, exec_id: u64) -> impl Iterator<Item = &Variable> {
        self.variables
            .iter()
            .filter(move |v| v.changed_by == Some(exec_id))
    }

    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

//! Host-side capabilities (`fs`, `shell`, `context`...) that cells call as
//! Python objects.
//!
//! Each capability declares its actions; the driver builds a proxy object
//! from that declaration, so `fs.read("a.txt")` in a cell becomes a
//! `call{cap: "fs", action: "read", args: {path: "a.txt"}}` that blocks the
//! cell until the host replies. Errors come back as Python exceptions whose
//! class is chosen by [`CapabilityError::python_type`].

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use super::runtime::RuntimeStateHandle;

/// One parameter of an action. A parameter without a default is required.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ParamSpec {
    pub name: String,
    /// JSON default, filled in by the driver when the cell omits it
    /// (`Some(Value::Null)` is a default of `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Other accepted keyword names (camelCase spellings are accepted anyway).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Accepted only by name (after `*` in a Python signature), so a later
    /// parameter added before it never changes what a positional call means.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keyword_only: bool,
}

/// One action, e.g. `read(path)`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ActionSpec {
    pub name: String,
    pub description: String,
    /// Other method names for the same action, e.g. `getRuntimeState` for
    /// `get_runtime_state`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub params: Vec<ParamSpec>,
    /// Also a plain function under this Python global name (`llm_query`
    /// for `llm.query`): what the model is taught to call reads like a
    /// builtin rather than a method.
    #[serde(rename = "global", skip_serializing_if = "Option::is_none")]
    pub global_name: Option<String>,
}

impl ActionSpec {
    pub fn new(name: &str, description: &str) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            aliases: Vec::new(),
            params: Vec::new(),
            global_name: None,
        }
    }

    /// A required parameter.
    pub fn param(mut self, name: &str) -> Self {
        self.params.push(ParamSpec {
            name: name.to_owned(),
            default: None,
            aliases: Vec::new(),
            keyword_only: false,
        });
        self
    }

    /// An optional parameter with its default.
    pub(crate) fn param_default(mut self, name: &str, default: Value) -> Self {
        self.params.push(ParamSpec {
            name: name.to_owned(),
            default: Some(default),
            aliases: Vec::new(),
            keyword_only: false,
        });
        self
    }

    /// An optional parameter that can only be passed by name.
    pub fn keyword(mut self, name: &str, default: Value) -> Self {
        self = self.param_default(name, default);
        if let Some(param) = self.params.last_mut() {
            param.keyword_only = true;
        }
        self
    }

    /// Also bound as the Python global `name`.
    pub(crate) fn global(mut self, name: &str) -> Self {
        self.global_name = Some(name.to_owned());
        self
    }

    pub fn alias(mut self, alias: &str) -> Self {
        self.aliases.push(alias.to_owned());
        self
    }
}

/// What a capability declares about itself; sent to the driver at start.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CapabilitySpec {
    /// The Python global it is injected as.
    pub name: String,
    pub description: String,
    pub actions: Vec<ActionSpec>,
}

/// A failed capability call, raised in the cell as the matching Python
/// exception with the message as written here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CapabilityError {
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    InvalidArgument(String),
    /// Another OS-level failure; `python_type` is the exception class
    /// (`IsADirectoryError`, `OSError`...).
    #[error("{message}")]
    Os {
        python_type: &'static str,
        message: String,
    },
    #[error("{0}")]
    Failed(String),
    /// A per-turn budget ran out (`llm_query` calls or tokens); raised as
    /// `SubcallLimitError`, which the driver defines, so a cell can catch
    /// exactly this and keep going.
    #[error("{0}")]
    SubcallLimit(String),
}

impl CapabilityError {
    /// What every capability answers for an action it does not have (the
    /// registry first, from the spec; a capability called directly, the
    /// same words).
    pub(crate) fn no_action(capability: &str, action: &str) -> Self {
        Self::InvalidArgument(format!("{capability} has no action {action:?}"))
    }

    /// The Python exception class the driver raises for this error.
    pub(crate) fn python_type(&self) -> &'static str {
        match self {
            Self::PermissionDenied(_) => "PermissionError",
            Self::NotFound(_) => "FileNotFoundError",
            Self::Timeout(_) => "TimeoutError",
            Self::InvalidArgument(_) => "ValueError",
            Self::Os { python_type, .. } => python_type,
            Self::Failed(_) => "RuntimeError",
            Self::SubcallLimit(_) => "SubcallLimitError",
        }
    }

    /// Map an I/O error on `what` (a path or command) to the closest exception.
    pub(crate) fn from_io(err: &std::io::Error, what: &str) -> Self {
        use std::io::ErrorKind;
        let message = format!("{what}: {err}");
        match err.kind() {
            ErrorKind::NotFound => Self::NotFound(message),
            ErrorKind::PermissionDenied => Self::PermissionDenied(message),
            ErrorKind::TimedOut => Self::Timeout(message),
            ErrorKind::IsADirectory => Self::Os {
                python_type: "IsADirectoryError",
                message,
            },
            ErrorKind::NotADirectory => Self::Os {
                python_type: "NotADirectoryError",
                message,
            },
            ErrorKind::InvalidInput | ErrorKind::InvalidData => Self::InvalidArgument(message),
            _ => Self::Os {
                python_type: "OSError",
                message,
            },
        }
    }
}

/// What a handler gets with each call: a way back into the runtime, e.g. to
/// ask for the live variable listing while the calling cell is still blocked.
#[derive(Clone)]
pub struct CallContext {
    pub runtime: RuntimeStateHandle,
    /// Execute id of the cell making the call, when known.
    pub exec_id: Option<u64>,
}

/// A host capability. `call` returns a `'static` boxed future so handlers can
/// run as independent tasks; implementations clone what they need (usually an
/// `Arc`) into it.
pub trait Capability: Send + Sync + 'static {
    fn spec(&self) -> CapabilitySpec;
    fn call(
        &self,
        action: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>>;
}

/// The capabilities injected into the kernel, by Python global name.
#[derive(Clone, Default)]
pub struct CapabilityRegistry {
    caps: BTreeMap<String, (CapabilitySpec, Arc<dyn Capability>)>,
}

impl CapabilityRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add (or replace) a capability under the name its spec declares.
    pub fn register(&mut self, cap: Arc<dyn Capability>) -> &mut Self {
        let spec = cap.spec();
        self.caps.insert(spec.name.clone(), (spec, cap));
        self
    }

    pub fn with(mut self, cap: Arc<dyn Capability>) -> Self {
        self.register(cap);
        self
    }

    pub(crate) fn specs(&self) -> Vec<CapabilitySpec> {
        self.caps.values().map(|(spec, _)| spec.clone()).collect()
    }

    /// Run one call; unknown capabilities/actions are errors, not panics.
    pub(crate) fn dispatch(
        &self,
        cap: &str,
        action: &str,
        args: Value,
        ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let Some((spec, handler)) = self.caps.get(cap) else {
            let err = CapabilityError::InvalidArgument(format!("no capability named {cap:?}"));
            return Box::pin(async move { Err(err) });
        };
        let Some(action) = spec
            .actions
            .iter()
            .find(|a| a.name == action || a.aliases.iter().any(|alias| alias == action))
        else {
            let err = CapabilityError::no_action(cap, action);
            return Box::pin(async move { Err(err) });
        };
        handler.call(&action.name, args, ctx)
    }
}

/// A required string argument.
pub fn arg_str<'a>(args: &'a Value, name: &str) -> Result<&'a str, CapabilityError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(CapabilityError::InvalidArgument(format!(
            "{name} must be a string, not {}",
            json_type(other)
        ))),
        None => Err(CapabilityError::InvalidArgument(format!(
            "missing argument {name}"
        ))),
    }
}

/// An optional number of seconds (`None`/missing means "use the default").
pub fn arg_seconds(args: &Value, name: &str) -> Result<Option<f64>, CapabilityError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(s) if s.is_finite() && s > 0.0 => Ok(Some(s)),
            _ => Err(CapabilityError::InvalidArgument(format!(
                "{name} must be a positive number of seconds"
            ))),
        },
        Some(other) => Err(CapabilityError::InvalidArgument(format!(
            "{name} must be a number, not {}",
            json_type(other)
        ))),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "None",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

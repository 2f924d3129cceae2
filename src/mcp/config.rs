//! `[[mcp.servers]]`: the MCP servers the user configured. Each becomes
//! `mcp.<name>` in the kernel, so a name must be a Python identifier and
//! unique; both are checked when the file is read, with its line and column.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `[mcp]` in the config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, try_from = "RawMcpConfig")]
pub struct McpConfig {
    pub servers: Vec<McpServerConfig>,
}

/// One stdio server: `command args…` in the workspace, with `env` added to
/// the children's allowlisted environment.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub name: ServerName,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for this server only (an API token it needs); they
    /// never reach the kernel.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A server's name: a Python identifier (`mcp.<name>` must work), not
/// starting with `_` (those attributes are Python's own).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(try_from = "String")]
pub struct ServerName(String);

impl ServerName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ServerName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for ServerName {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        let mut chars = name.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
        if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && name != "servers" {
            Ok(Self(name))
        } else {
            Err(format!(
                "`{name}` cannot be an MCP server's name: it becomes `mcp.{name}` in Python, so it \
                 must be a letter followed by letters, digits or `_` (and not `servers`)"
            ))
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct RawMcpConfig {
    servers: Vec<McpServerConfig>,
}

impl TryFrom<RawMcpConfig> for McpConfig {
    type Error = String;

    fn try_from(raw: RawMcpConfig) -> Result<Self, String> {
        let mut seen = std::collections::HashSet::new();
        for server in &raw.servers {
            if !seen.insert(server.name.as_str()) {
                return Err(format!("two MCP servers are named `{}`", server.name));
            }
        }
        Ok(Self {
            servers: raw.servers,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::ConfigFile;
    use std::path::Path;

    #[test]
    fn servers_are_read_with_their_command_args_and_env() {
        let file = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"files\"\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]\nenv = { TOKEN = \"x\" }\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let server = &file.mcp.servers[0];
        assert_eq!(server.name.as_str(), "files");
        assert_eq!(server.command, "npx");
        assert_eq!(server.args.len(), 3);
        assert_eq!(server.env.get("TOKEN").map(String::as_str), Some("x"));
    }

    #[test]
    fn a_name_python_cannot_reach_or_a_duplicate_is_an_error_with_its_place() {
        let err = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"my-files\"\ncommand = \"x\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("c.toml:2") && err.contains("mcp.my-files"),
            "{err}"
        );
        let err = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\n[[mcp.servers]]\nname = \"a\"\ncommand = \"y\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("two MCP servers are named `a`"), "{err}");
        let err = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("url"), "{err}");
    }
}

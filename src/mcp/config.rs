//! `[[mcp.servers]]`: the MCP servers the user configured. Each becomes
//! `mcp.<name>` in the kernel, so a name must be a Python identifier and
//! unique; each is either a command (stdio) or a `url` (streamable HTTP).
//! All of it is checked when the file is read, with its line and column.

use std::collections::BTreeMap;

use serde::Deserialize;

/// `[mcp]` in the config file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, try_from = "RawMcpConfig")]
pub struct McpConfig {
    pub servers: Vec<McpServerConfig>,
}

/// One server: a stdio server started as `command args…` in the
/// workspace, with `env` added to the children's allowlisted environment,
/// or a streamable HTTP server already running at `url`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    pub name: ServerName,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for this server only (an API token it needs); they
    /// never reach the kernel.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A streamable HTTP endpoint (`http://127.0.0.1:3001/mcp`) instead of
    /// a command.
    pub url: Option<String>,
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport<'a> {
    Stdio { command: &'a str },
    Http { url: &'a str },
}

impl McpServerConfig {
    /// The one transport the config names (checked when it was read).
    pub(crate) fn transport(&self) -> Transport<'_> {
        match (&self.url, &self.command) {
            (Some(url), _) => Transport::Http { url },
            (None, command) => Transport::Stdio {
                command: command.as_deref().unwrap_or_default(),
            },
        }
    }
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
            let http_only = server.args.is_empty() && server.env.is_empty();
            match (&server.command, &server.url) {
                (Some(_), None) => {}
                (None, Some(_)) if http_only => {}
                (None, Some(_)) => {
                    return Err(format!(
                        "MCP server `{}`: `args` and `env` are for a command, not a `url`",
                        server.name
                    ));
                }
                _ => {
                    return Err(format!(
                        "MCP server `{}` needs either `command` (stdio) or `url` (streamable HTTP)",
                        server.name
                    ));
                }
            }
        }
        Ok(Self {
            servers: raw.servers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Transport;
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
        assert_eq!(server.transport(), Transport::Stdio { command: "npx" });
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
        assert!(err.contains("either `command` (stdio) or `url`"), "{err}");
        let file = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"remote\"\nurl = \"http://127.0.0.1:3001/mcp\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(
            file.mcp.servers[0].transport(),
            Transport::Http {
                url: "http://127.0.0.1:3001/mcp"
            }
        );
        let err = ConfigFile::parse(
            "[[mcp.servers]]\nname = \"a\"\nurl = \"http://h/mcp\"\nargs = [\"x\"]\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not a `url`"), "{err}");
    }
}

"""`mcp`: the MCP servers the user configured, as Python.

The host's `mcp` capability has three actions (`servers`, `tool`, `call`);
this object turns attribute access into them, because the servers and their
tools are only known once the servers run, after the kernel started:
`mcp.<server>.<tool>(**kwargs)` calls a tool, `help(mcp.<server>.<tool>)`
shows its schema, `mcp.servers()` lists the servers.
"""

import inspect
import json


def _schema_doc(qualname, info):
    """The docstring `help()` shows: signature, description, parameters."""
    schema = info.get("input_schema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    lines = ["%s(%s)" % (qualname, ", ".join(_param_text(n, required) for n in props)), ""]
    if info.get("description"):
        lines += [info["description"], ""]
    if props:
        lines.append("Parameters (keyword arguments):")
        for name, prop in props.items():
            prop = prop if isinstance(prop, dict) else {}
            kind = prop.get("type") or ("enum" if "enum" in prop else "any")
            if isinstance(kind, list):
                kind = " | ".join(map(str, kind))
            extra = []
            if name in required:
                extra.append("required")
            if "default" in prop:
                extra.append("default %r" % (prop["default"],))
            if "enum" in prop:
                extra.append("one of %s" % ", ".join(map(repr, prop["enum"])))
            head = "  %s (%s%s)" % (name, kind, "; " + "; ".join(extra) if extra else "")
            desc = prop.get("description")
            lines.append(head + (": " + desc if desc else ""))
    lines += ["", "Input schema:", json.dumps(schema, indent=2, ensure_ascii=False)]
    return "\n".join(lines)


def _param_text(name, required):
    return name if name in required else name + "=…"


def _signature(info):
    schema = info.get("input_schema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    params = []
    for name in props:
        if not name.isidentifier():
            continue
        default = inspect.Parameter.empty if name in required else None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return inspect.Signature(params)


class McpServer:
    """`mcp.<server>`: its tools are attributes (`get-sum` is `get_sum`)."""

    def __init__(self, calls, name):
        object.__setattr__(self, "_calls", calls)
        object.__setattr__(self, "_name", name)

    def __getattr__(self, tool):
        # Python's own probes (`_repr_html_`, `__len__`…) never reach the
        # host; a tool whose name starts with `_` is `server["_name"]`.
        if tool.startswith("_"):
            raise AttributeError(tool)
        return self[tool]

    def __getitem__(self, tool):
        calls, server = self._calls, self._name
        try:
            info = calls.call("mcp", "tool", {"server": server, "tool": tool}, label="mcp.%s" % server)
        except KeyError as exc:
            raise AttributeError(exc.args[0] if exc.args else tool) from None
        qualname = "mcp.%s.%s" % (server, info["python_name"])

        def call_tool(*args, **kwargs):
            if args:
                raise TypeError("%s() takes keyword arguments only (the names its schema gives)" % qualname)
            return calls.call(
                "mcp", "call", {"server": server, "tool": info["name"], "arguments": kwargs}, label=qualname
            )

        call_tool.__name__ = info["python_name"]
        call_tool.__qualname__ = qualname
        call_tool.__doc__ = _schema_doc(qualname, info)
        call_tool.__signature__ = _signature(info)
        return call_tool

    def __dir__(self):
        for server in self._calls.call("mcp", "servers", {}):
            if server["name"] == self._name:
                return list(server["tools"])
        return []

    def __repr__(self):
        return "<mcp server %s>" % self._name


class McpProxy:
    """`mcp`: `mcp.servers()`, and `mcp.<server>.<tool>(**kwargs)`."""

    def __init__(self, calls, spec):
        object.__setattr__(self, "_calls", calls)

    def servers(self):
        """The configured servers: [{name, state, tools, error, pid}]."""
        return self._calls.call("mcp", "servers", {}, label="mcp.servers")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name):
        known = [server["name"] for server in self.servers()]
        if name not in known:
            raise AttributeError("no MCP server named %r (configured: %s)" % (name, ", ".join(known) or "none"))
        return McpServer(self._calls, name)

    def __dir__(self):
        return ["servers"] + [server["name"] for server in self.servers()]

    def __repr__(self):
        return "<capability mcp: servers(), <server>.<tool>(**kwargs)>"

"""The `mcp` object's Python side: what `help()` shows for a tool and how a
call is sent. The host side and a real server are tested in tests/mcp.rs;
here a recording stand-in answers the host's two actions."""

import inspect
import pydoc

import pytest

from hello_tui_kernel.mcp import McpProxy

SCHEMA = {
    "type": "object",
    "properties": {
        "location": {"type": "string", "enum": ["Chicago", "Paris"], "description": "Choose city"},
        "units": {"type": "string", "default": "metric"},
        "not-an-identifier": {"type": "number"},
    },
    "required": ["location"],
}


class Host:
    """Answers `servers` and `tool` like the host; records every call."""

    def __init__(self):
        self.sent = []

    def call(self, cap, action, args, label=None):
        self.sent.append((action, args, label))
        if action == "servers":
            return [{"name": "weather", "state": "running", "tools": ["get_weather"]}]
        if action == "tool":
            if args["tool"] not in ("get_weather", "get-weather"):
                raise KeyError("mcp.weather: no tool %r" % args["tool"])
            return {"name": "get-weather", "python_name": "get_weather", "description": "Weather now.",
                    "input_schema": SCHEMA}
        return {"temperature": 3}


def test_help_shows_the_description_parameters_and_schema():
    tool = McpProxy(Host(), {"name": "mcp"}).weather.get_weather
    doc = pydoc.render_doc(tool, renderer=pydoc.plaintext)
    assert "mcp.weather.get_weather(location, units=…, not-an-identifier=…)" in doc
    assert "Weather now." in doc
    assert "location (string; required; one of 'Chicago', 'Paris'): Choose city" in doc
    assert "units (string; default 'metric')" in doc
    assert '"enum"' in doc
    # The signature has what Python can spell, keyword-only.
    params = inspect.signature(tool).parameters
    assert list(params) == ["location", "units"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())


def test_a_call_sends_the_servers_own_tool_name_and_keyword_arguments():
    host = Host()
    result = McpProxy(host, {"name": "mcp"}).weather.get_weather(location="Paris")
    assert result == {"temperature": 3}
    assert host.sent[-1] == (
        "call",
        {"server": "weather", "tool": "get-weather", "arguments": {"location": "Paris"}},
        "mcp.weather.get_weather",
    )
    with pytest.raises(TypeError, match="keyword arguments only"):
        McpProxy(host, {"name": "mcp"}).weather.get_weather("Paris")


def test_unknown_servers_and_tools_are_attribute_errors():
    mcp = McpProxy(Host(), {"name": "mcp"})
    with pytest.raises(AttributeError, match="configured: weather"):
        mcp.github
    with pytest.raises(AttributeError, match="no tool 'nope'"):
        mcp.weather.nope
    assert not hasattr(mcp, "_private")
    assert "weather" in dir(mcp) and "get_weather" in dir(mcp.weather)

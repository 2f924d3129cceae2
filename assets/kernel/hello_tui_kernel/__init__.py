"""hello-tui's kernel driver: the Python half of the kernel protocol.

The workbench writes this package (embedded in its binary) to a fresh
private directory at every kernel start and runs that directory by path
(`python3 -u <dir> <config-json>`, see `../__main__.py`). It owns the
process: the protocol moves to private copies of the original stdin/stdout
before any user code runs, and cells run in one namespace on the main
thread.

Modules, one job each: `framing` (the wire), `capture` (output and whose it
is), `safe_repr` (previews without user code), `listing` (the variable
listing), `capabilities` (host capabilities as Python objects), `mcp` (the
`mcp` capability's tools as attributes), `cells`
(running one cell), `main` (start-up and the control loop).
"""

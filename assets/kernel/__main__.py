"""Entry point: `python3 -u <this directory> <config-json>`.

Run by path, so tracebacks name real files and `ps` shows a path, not the
driver's source. Python puts this directory first on `sys.path` to find
the package; once it is imported, the first entry becomes "" again (as
under `python -c`), so a cell's `import` finds the workspace's modules
first and none of the driver's files.

So every module the driver itself uses is imported at the top of its
files, before that: a workspace's `resource.py` or `fcntl.py` must never
run as part of starting the kernel (an untrusted repository would run
code on open, and before the memory limit is set).
"""

import sys

from hello_tui_kernel.main import main

sys.path[0] = ""
main(sys.argv[1:])

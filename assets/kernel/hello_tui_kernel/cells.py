"""Running one cell: compile it under a `<cell-N>` name (so tracebacks show
its lines), evaluate a trailing expression REPL-style, turn any exception
into a value, and answer with one `result` frame after all of the cell's
output.
"""

import _signal
import ast
import errno
import linecache
import os
import signal
import time
import traceback

from .framing import error_value, result_frame, send, started_frame
from .safe_repr import safe_repr

# Frames from these files are the driver's own and never shown to the user.
_DRIVER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _driver_frame(tb):
    return tb.tb_frame.f_code.co_filename.startswith(_DRIVER_DIR)

def _format_error(exc, limit=20000):
    """Error as a value: type, message and a traceback of the user's frames only."""
    # Skip the driver frames that ran the cell, keep the user's frames (and
    # libraries they called), stop at the first driver frame below them
    # (capability proxies) so internals never show.
    tb = exc.__traceback__
    while tb is not None and _driver_frame(tb):
        tb = tb.tb_next
    frames = []
    while tb is not None and not _driver_frame(tb):
        frames.append(tb)
        tb = tb.tb_next
    for a, b in zip(frames, frames[1:]):
        a.tb_next = b
    if frames:
        frames[-1].tb_next = None
    exc.__traceback__ = frames[0] if frames else None
    try:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        text = "%s\n" % type(exc).__name__
    if len(text) > limit:
        text = text[: limit // 2] + "\n[... traceback trimmed ...]\n" + text[-limit // 2:]
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable %s>" % type(exc).__name__
    t = type(exc)
    name = t.__qualname__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__qualname__)
    return error_value(name, message[:limit], text)


# What a write outside the writable roots is, in the words the model reads.
_OUTSIDE_ROOTS = (
    "Permission denied (outside the sandbox's writable roots: "
    "the workspace, /tmp and the configured writable paths)"
)


def explain_denial(exc):
    """A confined cell's uncaught `OSError` with errno `EROFS`, as the
    `PermissionError` it is, with the same path(s) and traceback.

    Outside the writable roots the sandbox mounts everything read-only, and
    the read-only mount answers before Landlock does: Python raises
    `OSError: [Errno 30] Read-only file system`, which reads like a broken
    disk and invites retries. Only the exception that ends the cell is
    changed, after the fact: a `try/except PermissionError` inside the cell
    still sees the `OSError` (catch `OSError` there). Any other exception
    is returned unchanged.
    """
    if not isinstance(exc, OSError) or exc.errno != errno.EROFS:
        return exc
    args = (errno.EACCES, _OUTSIDE_ROOTS)
    if exc.filename is not None:
        args += (exc.filename, None, exc.filename2) if exc.filename2 is not None else (exc.filename,)
    denial = PermissionError(*args).with_traceback(exc.__traceback__)
    denial.__cause__ = exc.__cause__
    denial.__context__ = exc.__context__
    denial.__suppress_context__ = exc.__suppress_context__
    return denial


def _value_repr(value):
    t = type(value)
    if t.__module__ == "builtins" or isinstance(value, (dict, list, tuple, set, frozenset)):
        return safe_repr(value, 8000, 100, 4, 4000)
    try:
        text = repr(value)  # the user's own object, on the cell's thread: interruptible
    except Exception as exc:
        return "<%s object; repr() failed: %s: %s>" % (t.__qualname__, type(exc).__name__, exc)
    return text if len(text) <= 8000 else text[:8000] + "…(%d chars)" % len(text)


def _run_code(kernel, code, filename):
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    tree = ast.parse(code, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), kernel.ns)
    if last is not None:
        return eval(compile(last, filename, "eval"), kernel.ns)
    return None


def run_cell(kernel, capture, cid, code, before=None):
    """`before` runs first, inside the cell (its output is the cell's):
    the restore of a restarted kernel's variables."""
    kernel.cell_count += 1
    kernel.generation += 1
    kernel.cell = cid
    kernel.last_cell = cid
    capture.begin(cid)
    filename = "<cell-%d>" % kernel.cell_count
    started = time.perf_counter()
    ok, value_repr, error = True, None, None
    try:
        try:
            kernel.in_cell = True
            send(started_frame(cid))
            note = before() if before is not None else None
            if note:
                print(note, end="", flush=True)
            value = _run_code(kernel, code, filename)
            if value is not None:
                kernel.ns["_"] = value
                value_repr = _value_repr(value)
            kernel.in_cell = False
        except BaseException as exc:
            kernel.in_cell = False
            if kernel.sandboxed:
                exc = explain_denial(exc)
            ok, error = False, _format_error(exc)
    except KeyboardInterrupt:  # a late SIGINT landed in the bookkeeping above
        kernel.in_cell = False
        ok, value_repr = False, None
        error = error_value("KeyboardInterrupt", "", "KeyboardInterrupt\n")
    duration = (time.perf_counter() - started) * 1000
    # The C module: `signal.getsignal` converts to enums, ~30x slower.
    for signum, handler in ((signal.SIGINT, kernel.on_sigint), (signal.SIGURG, kernel.on_wake)):
        if _signal.getsignal(signum) is not handler:
            _signal.signal(signum, handler)  # the cell replaced it
    # A cell that blocked SIGINT on the main thread would leave every later
    # cell deaf to Ctrl+C: the mask is put back too.
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGURG))
    capture.end()
    kernel.record_changes(cid)
    kernel.generation += 1
    kernel.cell = None
    send(result_frame(cid, ok, value_repr, error, round(duration, 3)))

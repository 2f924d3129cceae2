"""The wire to the host: one JSON object per line on the driver's private fds.

Every frame the driver sends is built by one of the `*_frame` functions
here, and every frame it reads goes through `parse_host_line`, so the
format is written down once on this side. `assets/kernel/golden/` holds one
example of each frame; the Rust protocol tests and `tests/test_framing.py`
both check against it, so neither side can change a field alone.
"""

import json
import os
import threading
from queue import SimpleQueue


def ready_frame(python, pid):
    return {"type": "ready", "python": python, "pid": pid}


def stream_frame(cell_id, name, text):
    """Output of cell `cell_id`; `None` for background output (written
    between cells, or by a thread an earlier cell started)."""
    return {"type": "stream", "id": cell_id, "name": name, "text": text}


def result_frame(cell_id, ok, value_repr, error, duration_ms):
    return {
        "type": "result",
        "id": cell_id,
        "ok": ok,
        "value_repr": value_repr,
        "error": error,
        "duration_ms": duration_ms,
    }


def error_value(type_name, message, traceback):
    """The `error` of a result frame."""
    return {"type": type_name, "message": message, "traceback": traceback}


def call_frame(call_id, cap, action, args):
    return {"type": "call", "id": call_id, "cap": cap, "action": action, "args": args}


def cancel_frame(call_id):
    return {"type": "cancel", "id": call_id}


def interrupted_frame(cell_id):
    """Sent by the SIGINT handler as it raises KeyboardInterrupt in the
    cell: the host stops waking the kernel. (CPython leaves a SIGINT that
    lands between its last check and a blocking call such as `time.sleep`
    pending until that call returns; until this frame comes, the host sends
    SIGURG, whose handler does nothing but end the call.)"""
    return {"type": "interrupted", "id": cell_id}


def started_frame(cell_id):
    """Sent once the cell's SIGINT handler raises: an interrupt the host
    asked for before this frame waits for it (a SIGINT sent earlier would
    find the kernel idle and be dropped)."""
    return {"type": "started", "id": cell_id}


def state_header(describe_id, truncated, running, epoch, base, elapsed_ms, removed=None, order=None):
    """A `state` frame without its `variables` (the listing appends them,
    already encoded). `removed` and `order` only travel with a delta."""
    header = {
        "type": "state",
        "id": describe_id,
        "alive": True,
        "truncated": truncated,
        "running": running,
        "epoch": epoch,
        "base": base,
        "elapsed_ms": elapsed_ms,
    }
    if base is not None and removed:
        header["removed"] = removed
    if base is not None and order is not None:
        header["order"] = order
    return header


def state_error_frame(describe_id, message):
    """The answer when the namespace could not be listed."""
    return {"type": "state", "id": describe_id, "alive": True, "truncated": False, "variables": [], "error": message}


def encode(msg):
    """One frame as bytes, newline-terminated. Lone surrogates (from user
    strings) become "?" so the host always gets UTF-8."""
    line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=str)
    return (line + "\n").encode("utf-8", "replace")


def parse_host_line(raw):
    """A host frame as a dict with a str `type`, or None for anything else
    (the driver skips what it cannot read)."""
    try:
        msg = json.loads(raw)
    except ValueError:
        return None
    if type(msg) is not dict or type(msg.get("type")) is not str:
        return None
    return msg


# ---------------------------------------------------------------- sending

_outbox = SimpleQueue()


def send(msg):
    """Queue one frame for the writer thread (C-level put: signal-safe)."""
    _outbox.put(encode(msg))


_write_lock = threading.Lock()


def write_frame(fd, data):
    """Write one whole frame; the lock keeps frames from interleaving. Only
    the writer and control threads call this, never the main thread, so a
    KeyboardInterrupt cannot cut a frame in half."""
    view = memoryview(data)
    try:
        with _write_lock:
            while view:
                view = view[os.write(fd, view):]
    except OSError:
        os._exit(0)  # host went away


def writer(fd):
    """The writer thread's loop: every queued frame, in order."""
    while True:
        write_frame(fd, _outbox.get())

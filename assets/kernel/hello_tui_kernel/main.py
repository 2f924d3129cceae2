"""Start-up and the control loop.

`main` captures the fds, builds the namespace with one proxy per host
capability, then runs cells on the main thread (so SIGINT raises
KeyboardInterrupt in them). A control thread keeps reading the protocol
while a cell runs, so `describe` and capability `reply`s are served
mid-cell: no deadlock when a cell calls a capability whose host handler
asks for the runtime state. Every other frame goes through the writer
thread; the main thread never writes the protocol fd itself, so an
interrupt can never leave half a frame behind.
"""

import json
import os
import resource
import signal
import sys
import threading
from queue import Empty, SimpleQueue

from . import capture
from .capabilities import CapabilityProxy, Calls, SubcallLimitError
from .mcp import McpProxy
from .cells import run_cell
from .framing import (
    encode,
    interrupted_frame,
    parse_host_line,
    ready_frame,
    send,
    state_error_frame,
    write_frame,
    writer,
)
from .listing import Kernel
from .persist import Persist


def dispatch(msg, execute, describe, reply):
    """Acts on one host frame (already parsed). False for `shutdown`."""
    kind = msg["type"]
    if kind == "execute" and type(msg.get("code")) is str:
        execute(msg.get("id"), msg["code"])
    elif kind == "describe":
        since = msg.get("since")
        describe(msg.get("id"), since if type(since) is int else None)
    elif kind == "reply":
        reply(msg)
    elif kind == "shutdown":
        return False
    return True


def main(argv):
    config = json.loads(argv[0]) if argv else {}
    limit = config.get("memory_limit_bytes")
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))

    head = int(config.get("stream_head_bytes", 1 << 20))
    tail = int(config.get("stream_tail_bytes", 64 << 10))
    proto_in, proto_out, captured = capture.install(head, tail)

    kernel = Kernel(config)
    calls = Calls(int(config.get("max_frame_bytes", 16 << 20)))
    persist = None
    keep = config.get("keep_variables")
    for spec in config.get("capabilities") or []:
        try:
            # `mcp`'s tools are known only once its servers run: its
            # object looks them up when used.
            kind = McpProxy if spec["name"] == "mcp" else CapabilityProxy
            proxy = kind(calls, spec)
        except (KeyError, TypeError):
            continue
        if spec["name"] == "_vars":
            # The driver's own: never a global of the cells.
            if keep:
                persist = Persist(kernel, proxy, int(keep["per_variable_bytes"]), int(keep["total_bytes"]))
            continue
        # (`mcp`'s attributes are its servers, looked up from the host: it
        # has no functions of its own to bind.)
        functions = proxy.functions if isinstance(proxy, CapabilityProxy) else {}
        for name, value in [(spec["name"], proxy)] + list(functions.items()):
            kernel.ns[name] = value
            kernel.hidden.add(name)
    kernel.ns["SubcallLimitError"] = SubcallLimitError
    kernel.hidden.add("SubcallLimitError")
    kernel.record_changes(None)

    def on_sigint(signum, frame):
        # An idle kernel ignores a stray SIGINT; a running cell gets
        # KeyboardInterrupt, and the host hears that it did (`send` only
        # puts on a SimpleQueue, which is safe from a signal handler).
        if kernel.in_cell:
            send(interrupted_frame(kernel.cell))
            raise KeyboardInterrupt

    def on_wake(signum, frame):
        # SIGURG from the host after a SIGINT went unanswered: it only
        # interrupts the blocking call the main thread sits in, so that a
        # SIGINT handler CPython left pending (one that landed just before
        # `time.sleep` blocked) runs now. It raises nothing itself, so a
        # repeat can never cut into a cell's own KeyboardInterrupt cleanup.
        pass

    kernel.on_sigint = on_sigint
    kernel.on_wake = on_wake
    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGURG, on_wake)

    work = SimpleQueue()

    def describe(did, since):
        # On the control thread, not the main one: answered while a cell runs.
        # Written directly (no hand-off to the writer thread): the big frames
        # are the latency that matters for the inspector.
        try:
            frame = (kernel.describe(did, since) + "\n").encode("utf-8", "replace")
        except Exception as exc:  # never leave the host waiting
            frame = encode(state_error_frame(did, "%s: %s" % (type(exc).__name__, exc)))
        write_frame(proto_out, frame)

    exited = threading.Event()

    def control():
        with os.fdopen(proto_in, "rb") as f:
            for raw in f:
                msg = parse_host_line(raw)
                if msg is None:
                    continue
                if not dispatch(msg, lambda cid, code: work.put((cid, code)), describe, calls.resolve):
                    break
        # Shut down (or the host is gone). A running cell is not waited
        # for; between cells the main thread finishes what it is doing
        # (keeping the last cell's variables) and exits.
        if not kernel.in_cell:
            work.put((None, None))
            exited.wait(1.0)
        os._exit(0)

    # The host's Ctrl+C is sent to the whole process, and Linux may hand a
    # process signal to any thread not blocking it: caught by one of ours,
    # it would only set a flag while the main thread sleeps on (a 30 s
    # `time.sleep` ran to its end). So our threads never take SIGINT, and
    # they are born blocking it: a thread inherits its creator's mask, while
    # blocking it in the thread itself left a window before its first line
    # ran (wide on a loaded machine, and Ctrl+C right after start fell in).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGURG})
    try:
        for target, args in ((writer, (proto_out,)), (control, ())):
            threading.Thread(target=target, args=args, daemon=True).start()
        for pump in captured.pumps:
            threading.Thread(target=pump.run, daemon=True, name="pump-" + pump.name).start()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGURG})

    send(ready_frame(sys.version.split()[0], os.getpid()))
    while True:
        # While no cell waits, the containers the last cell may have
        # changed in place are saved one at a time; between two, the main
        # thread waits on the queue (the GIL free), so the control thread
        # hands a new cell over at once and it waits for at most one.
        try:
            if persist is not None and persist.pending:
                try:
                    cid, code = work.get(timeout=0.0005)
                except Empty:
                    try:
                        persist.check_one()
                    except BaseException:  # a refused save: that one is not kept
                        pass
                    continue
            else:
                cid, code = work.get()
        except KeyboardInterrupt:
            continue
        if code is None:  # shutdown, after the last cell's variables were kept
            exited.set()
            os._exit(0)
        before = persist.restore if persist is not None and not persist.restored else None
        run_cell(kernel, captured, cid, code, before)
        if persist is not None:
            try:
                persist.after_cell()
            except BaseException:  # Ctrl+C or a refused save: this cell's changes are not kept
                pass


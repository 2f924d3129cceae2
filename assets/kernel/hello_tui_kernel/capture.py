"""Capturing what user code prints, and telling whose output it is.

Fds 1 and 2 are pipes drained by `Pump` threads, so everything user code,
its subprocesses and C extensions write is captured and forwarded as
`stream` frames, and nothing they write can corrupt the framing.

Python-level writes (`print`, `sys.stdout.write`, logging) go through
`RoutedStream`, which knows the writing thread: the running cell's own
threads write to the fds as above; a thread an earlier cell started, or any
write between cells, is *background output*. It travels as `stream` frames
with `id: null`, which the host reports as such instead of counting it in
whichever cell happens to run. (Bytes such a thread writes straight to fd 1,
or through a subprocess, cannot be told apart and count for the running
cell.)
"""

import codecs
import fcntl
import io
import os
import select
import sys
import threading

from .framing import send, stream_frame

_get_ident = threading.get_ident
_current_thread = threading.current_thread


def dropped_marker(dropped):
    """Same words as `kernel::output::dropped_marker` (the host adds them up
    when it cuts again)."""
    return "\n[... %d bytes of output dropped ...]\n" % dropped


class Segment:
    """One stream's output for one cell (or one stretch of background
    output): forwards at most `head` bytes live, then keeps only the last
    `tail` bytes and counts what it dropped, so a cell printing 200 MB costs
    neither the driver nor the host memory. Callers serialise access."""

    def __init__(self, name, head, tail):
        self.name = name
        self.head = head
        self.tail_limit = tail
        self.id = None  # cell the output belongs to; None: background
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._reset()

    def _reset(self):
        self.decoder.reset()
        self.forwarded = 0
        self.dropped = 0
        self.tail = bytearray()

    def feed(self, data):
        if self.forwarded < self.head:
            take = min(len(data), self.head - self.forwarded)
            self.forwarded += take
            text = self.decoder.decode(data[:take])
            if text:
                send(stream_frame(self.id, self.name, text))
            data = data[take:]
        if data:
            self.dropped += len(data)
            self.tail += data
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    def close(self, next_id):
        """Send what is held back (and how much was dropped); what comes
        next belongs to `next_id`."""
        text = self.decoder.decode(b"", True)
        if self.dropped:
            text += dropped_marker(self.dropped - len(self.tail))
            text += codecs.decode(bytes(self.tail), "utf-8", "replace")
        if text:
            send(stream_frame(self.id, self.name, text))
        self._reset()
        self.id = next_id


class Pump:
    """Drains one of the user's fds (1 or 2) into a `Segment`.

    The read end is non-blocking and only ever read under `lock`, so at the
    end of a cell the main thread can take the lock and drain what is left:
    everything the cell (or a subprocess it waited for) wrote is then
    forwarded before its `result`, without a round trip through this thread.
    """

    def __init__(self, fd, name, head, tail):
        os.set_blocking(fd, False)
        self.fd = fd
        self.name = name
        self.lock = threading.Lock()
        self.out = Segment(name, head, tail)
        # Asked before each read: most cells print nothing, and a read that
        # fails with EAGAIN costs an exception.
        self.readable = select.poll()
        self.readable.register(fd, select.POLLIN)

    def drain(self):
        """Forward everything readable now. Caller holds `lock`. False at EOF."""
        if not self.readable.poll(0):
            return True
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return True
            except InterruptedError:
                continue
            except OSError:
                return False
            if not chunk:
                return False
            self.out.feed(chunk)

    def end_segment(self, next_id):
        """Close the current cell's output (caller holds `lock`)."""
        self.out.close(next_id)

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            poller.poll()
            with self.lock:
                if not self.drain():
                    return


class Background:
    """Python-level output that belongs to no running cell, capped like a
    cell's (per stretch between two cell boundaries)."""

    def __init__(self, head, tail):
        self.lock = threading.Lock()
        self.streams = {name: Segment(name, head, tail) for name in ("stdout", "stderr")}

    def write(self, name, text):
        data = text.encode("utf-8", "backslashreplace")
        with self.lock:
            self.streams[name].feed(data)

    def end_segment(self, next_id):
        """Called at every cell boundary, like `Pump.end_segment`; background
        output never belongs to a cell, so `next_id` is ignored."""
        with self.lock:
            for segment in self.streams.values():
                segment.close(None)


class Routing:
    """Whose Python-level output it is: the running cell's (its main-thread
    code and the threads it starts) or background."""

    def __init__(self):
        self.cell = None
        self.main = threading.main_thread().ident
        self.foreign = frozenset()

    def begin(self, cell_id):
        # Every thread alive now was started before this cell: the driver's
        # own and those of earlier cells. Thread objects, not idents: an
        # ident is reused once its thread ends.
        main = threading.main_thread()
        self.foreign = frozenset(t for t in threading.enumerate() if t is not main)
        self.cell = cell_id

    def end(self):
        self.cell = None


class RoutedStream:
    """`sys.stdout` / `sys.stderr`: the running cell's writes go to the fd
    (so they interleave with its subprocesses exactly as written), the rest
    to `Background`. Everything else is the wrapped stream's."""

    def __init__(self, stream, name, routing, background):
        self._stream = stream
        self._write = stream.write  # bound once: `print` calls write twice per line
        self._name = name
        self._routing = routing
        self._background = background

    def write(self, text):
        routing = self._routing  # inlined, not a method call: this runs twice per print
        if routing.cell is not None and (
            _get_ident() == routing.main or _current_thread() not in routing.foreign
        ):
            return self._write(text)
        if type(text) is not str:
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        self._background.write(self._name, text)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class Capture:
    """Everything that captures output, switched at cell boundaries."""

    def __init__(self, pumps, saved_fds, routing, background):
        self.pumps = pumps
        self.saved_fds = saved_fds  # restore fds 1/2 after a cell closed them
        self.routing = routing
        self.background = background

    def begin(self, cell_id):
        for pump in self.pumps:
            with pump.lock:
                pump.drain()  # output from between cells stays background
                pump.end_segment(cell_id)
        self.background.end_segment(cell_id)
        self.routing.begin(cell_id)

    def end(self):
        """After the cell's code: everything it wrote is forwarded (before
        its result); from now on, output is background."""
        self.routing.end()
        flush_user_streams()
        for fd, saved in zip((1, 2), self.saved_fds):
            try:
                os.dup2(saved, fd)  # a cell that closed or redirected fd 1/2 gets it back
            except OSError:
                pass
        for pump in self.pumps:
            with pump.lock:
                pump.drain()
                pump.end_segment(None)
        self.background.end_segment(None)


def install(head, tail):
    """Moves the protocol off fds 0/1 and captures fds 1/2. Returns the
    protocol fds and the `Capture`."""
    # Private protocol channel: non-inheritable copies of the original fds.
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    try:  # room for a whole state frame: fewer wake-ups per describe
        fcntl.fcntl(proto_out, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (AttributeError, OSError):
        pass
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    pumps, saved = [], []
    for fd, name in ((1, "stdout"), (2, "stderr")):
        r, w = os.pipe()
        os.dup2(w, fd)
        saved.append(w)  # kept to restore fd 1/2 if a cell closes them
        pumps.append(Pump(r, name, head, tail))
    sys.stdin = open(os.devnull)
    routing = Routing()
    background = Background(head, tail)
    for fd, attr in ((1, "stdout"), (2, "stderr")):
        # Unbuffered raw + write_through: output interleaves with subprocesses
        # writing to the same fd exactly as it happened.
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", line_buffering=True, write_through=True)
        routed = RoutedStream(stream, attr, routing, background)
        setattr(sys, attr, routed)
        setattr(sys, "__%s__" % attr, routed)
    return proto_in, proto_out, Capture(pumps, saved, routing, background)


_libc = []


def flush_user_streams():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    # C extensions printing through stdio buffer when fd 1 is a pipe.
    if "ctypes" in sys.modules:
        try:
            if not _libc:
                import ctypes

                _libc.append(ctypes.CDLL(None).fflush)
            _libc[0](None)
        except Exception:
            pass

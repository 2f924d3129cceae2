"""hello-tui kernel driver.

Runs inside `python3 -u -c <this file> <config-json>`. It owns the process:

* The protocol (JSON lines) moves to private, non-inheritable copies of the
  original stdin/stdout *before* any user code runs. Fd 0 becomes /dev/null and
  fds 1/2 become pipes drained by pump threads, so everything user code, its
  subprocesses and C extensions write is captured and forwarded as `stream`
  messages, and nothing they write can corrupt the framing.
* Cells run on the main thread (so SIGINT raises KeyboardInterrupt in them).
  A control thread keeps reading the protocol while a cell runs, so `describe`
  and capability `reply`s are served mid-cell: no deadlock when a cell calls a
  capability whose host handler asks for the runtime state.
* Every message to the host goes through one writer thread; the main thread
  never writes the protocol fd itself, so an interrupt can never leave half a
  frame behind.
"""

import _signal
import ast
import codecs
import io
import itertools
import json
import linecache
import operator
import os
import select
import signal
import sys
import threading
import time
import traceback
import types
from queue import SimpleQueue

DRIVER_FILE = sys._getframe().f_code.co_filename


# ---------------------------------------------------------------- protocol out

_outbox = SimpleQueue()


def send(msg):
    """Queue one frame for the writer thread (C-level put: signal-safe)."""
    line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=str)
    # Lone surrogates (from user strings) become "?" so the host always gets UTF-8.
    _outbox.put((line + "\n").encode("utf-8", "replace"))


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


def _writer(fd):
    while True:
        write_frame(fd, _outbox.get())


# ---------------------------------------------------------------- output pumps


class Pump:
    """Drains one of the user's fds (1 or 2) and forwards it as `stream` frames.

    The read end is non-blocking and only ever read under `lock`, so at the
    end of a cell the main thread can take the lock and drain what is left:
    everything the cell (or a subprocess it waited for) wrote is then
    forwarded before its `result`, without a round trip through this thread.
    Each cell's segment forwards at most `head` bytes live, then keeps only
    the last `tail` bytes and counts what it dropped, so a cell printing
    200 MB costs neither the driver nor the host memory.
    """

    def __init__(self, fd, name, head, tail):
        os.set_blocking(fd, False)
        self.fd = fd
        self.name = name
        self.head = head
        self.tail_limit = tail
        self.lock = threading.Lock()
        self.segment = None  # cell id the current output belongs to
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        # Asked before each read: most cells print nothing, and a read that
        # fails with EAGAIN costs an exception.
        self.readable = select.poll()
        self.readable.register(fd, select.POLLIN)
        self._reset()

    def _reset(self):
        self.decoder.reset()
        self.forwarded = 0
        self.dropped = 0
        self.tail = bytearray()

    def _emit(self, data):
        if self.forwarded < self.head:
            take = min(len(data), self.head - self.forwarded)
            self.forwarded += take
            text = self.decoder.decode(data[:take])
            if text:
                send({"type": "stream", "id": self.segment, "name": self.name, "text": text})
            data = data[take:]
        if data:
            self.dropped += len(data)
            self.tail += data
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

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
            self._emit(chunk)

    def end_segment(self, next_segment):
        """Close the current cell's output (caller holds `lock`)."""
        text = self.decoder.decode(b"", True)
        if self.dropped:
            shown = len(self.tail)
            # Same words as kernel::output::dropped_marker (the host adds
            # them up when it cuts again).
            text += "\n[... %d bytes of output dropped ...]\n" % (self.dropped - shown)
            text += codecs.decode(bytes(self.tail), "utf-8", "replace")
        if text:
            send({"type": "stream", "id": self.segment, "name": self.name, "text": text})
        self._reset()
        self.segment = next_segment

    def run(self):
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            poller.poll()
            with self.lock:
                if not self.drain():
                    return


# ---------------------------------------------------------------- safe repr

_MISSING = object()
_TRUSTED_MODULES = ("numpy", "pandas", "polars", "torch", "jax", "xarray", "pyarrow", "scipy")
_C_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)


def _trusted(t):
    mod = getattr(t, "__module__", "") or ""
    return mod.split(".", 1)[0] in _TRUSTED_MODULES


def _static_attr(obj, name):
    """Read an attribute without running user Python code (no __getattr__,
    no user properties), except properties of trusted array libraries."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except Exception:
        d = None
    if type(d) is dict and name in d:
        return d[name]
    t = type(obj)
    for klass in t.__mro__:
        kd = klass.__dict__
        if name in kd:
            attr = kd[name]
            break
    else:
        return _MISSING
    at = type(attr)
    if at in _C_DESCRIPTORS:
        try:
            return attr.__get__(obj, t)
        except Exception:
            return _MISSING
    if at is property and _trusted(t):
        try:
            return attr.__get__(obj, t)
        except Exception:
            return _MISSING
    if hasattr(at, "__get__"):
        return _MISSING
    return attr


def _array_like(obj):
    """(shape, dtype) for numpy/pandas/torch-like objects, duck-typed."""
    shape = _static_attr(obj, "shape")
    if shape is _MISSING or type(shape) is not tuple and not isinstance(shape, tuple):
        return None
    if not all(type(n) is int for n in shape[:8]):
        return None
    dtype = _static_attr(obj, "dtype")
    if dtype is _MISSING:
        dtypes = _static_attr(obj, "dtypes")
        dtype = None if dtypes is _MISSING else "mixed"
    return tuple(shape), (None if dtype is None else _short_str(dtype, 40))


def _short_str(value, limit):
    if type(value) is str:
        s = value
    else:
        name = _static_attr(value, "name")
        s = name if type(name) is str else type(value).__name__
    return s if len(s) <= limit else s[:limit] + "…"


def _safe_len(obj):
    t = type(obj)
    ln = getattr(t, "__len__", None)
    if ln is None:
        return None
    if isinstance(ln, types.WrapperDescriptorType) or _trusted(t):
        try:
            n = len(obj)
        except Exception:
            return None
        return n if type(n) is int else None
    return None


class Budget:
    __slots__ = ("left", "items", "depth", "string")

    def __init__(self, chars, items, depth, string):
        self.left = chars
        self.items = items
        self.depth = depth
        self.string = string


def _r_str(s, b):
    if len(s) > b.string:
        return repr(s[: b.string]) + "…(%d chars)" % len(s)
    return repr(s)


def _r_bytes(s, b):
    if len(s) > b.string:
        return repr(bytes(s[: b.string])) + "…(%d bytes)" % len(s)
    return repr(s)


def _r_int(n, b):
    if n.bit_length() > 200:
        return "<int %d bits>" % n.bit_length()
    return int.__repr__(n)


_FLAT = {float, bool, type(None)}
_BIG = 10 ** 40


def _flat_items(sample, b):
    """C-speed repr of a sample of plain scalars (short strs, small ints,
    floats...), or None when an item needs the careful path."""
    kinds = set(map(type, sample))
    if kinds <= _FLAT:
        pass
    elif kinds == {int} or kinds == {int, bool}:
        if max(map(abs, sample)) > _BIG:
            return None
    elif kinds == {str}:
        if max(map(len, sample)) > b.string:
            return None
    else:
        return None
    return repr(sample)[1:-1]


def _r_seq(obj, b, level, open_, close, iterate, total):
    sample = list(itertools.islice(iterate(obj), b.items))
    flat = _flat_items(sample, b) if sample else None
    if flat is not None:
        b.left -= len(flat)
        more = ", …+%d" % (total - len(sample)) if total is not None and total > len(sample) else ""
        if open_ == "(" and total == 1:
            close = ",)"
        return open_ + flat + more + close
    parts = []
    count = 0
    for item in sample:
        if b.left <= 0:
            break
        s = _render(item, b, level + 1)
        b.left -= len(s) + 2
        parts.append(s)
        count += 1
    if total is not None and total > count:
        parts.append("…+%d" % (total - count))
    if open_ == "(" and total == 1:
        close = ",)"
    return open_ + ", ".join(parts) + close


def _r_dict(obj, b, level):
    parts = []
    count = 0
    for k, v in itertools.islice(dict.items(obj), b.items):
        if b.left <= 0:
            break
        s = _render(k, b, level + 1) + ": " + _render(v, b, level + 1)
        b.left -= len(s) + 2
        parts.append(s)
        count += 1
    total = dict.__len__(obj)
    if total > count:
        parts.append("…+%d" % (total - count))
    return "{" + ", ".join(parts) + "}"


def _render(obj, b, level=0):
    """SafeRepr: bounded items per level, depth and string length; never calls
    a user-defined __repr__/__len__/__iter__."""
    t = type(obj)
    try:
        if t is str:
            return _r_str(obj, b)
        if t is int:
            return _r_int(obj, b)
        if t in (float, bool, complex, type(None), range, slice):
            return repr(obj)
        if t in (bytes, bytearray):
            return _r_bytes(obj, b)
        deep = level >= b.depth
        if isinstance(obj, dict):
            if deep:
                return "{…%d}" % dict.__len__(obj)
            text = _r_dict(obj, b, level)
            return text if t is dict else "%s(%s)" % (t.__name__, text)
        if isinstance(obj, (list, tuple, set, frozenset)):
            base = list if isinstance(obj, list) else tuple if isinstance(obj, tuple) else set if isinstance(obj, set) else frozenset
            n = base.__len__(obj)
            fields = _static_attr(obj, "_fields") if base is tuple and t is not tuple else _MISSING
            if type(fields) is tuple and len(fields) == n:
                if deep:
                    return "%s(…)" % t.__name__
                vals = itertools.islice(tuple.__iter__(obj), b.items)
                inner = ", ".join("%s=%s" % (f, _render(v, b, level + 1)) for f, v in zip(fields, vals))
                return "%s(%s)" % (t.__name__, inner)
            if base is list:
                o, c = "[", "]"
            elif base is tuple:
                o, c = "(", ")"
            else:
                if n == 0:
                    return "%s()" % t.__name__
                o, c = ("{", "}") if base is set else ("frozenset({", "})")
            if deep:
                return o + "…%d" % n + c
            text = _r_seq(obj, b, level, o, c, base.__iter__, n)
            return text if t in (list, tuple, set, frozenset) else "%s(%s)" % (t.__name__, text)
        if t.__module__ == "collections" and t.__name__ == "deque":
            return "deque(" + _r_seq(obj, b, level, "[", "]", iter, len(obj)) + ")"
        if t in (types.FunctionType, types.BuiltinFunctionType, types.MethodType):
            return "<function %s>" % getattr(obj, "__qualname__", "?")
        if t is types.ModuleType:
            return "<module %s>" % obj.__name__
        if isinstance(obj, type):
            return "<class %s>" % obj.__qualname__
        arr = _array_like(obj)
        if arr is not None:
            shape, dtype = arr
            return "%s(shape=%s%s)" % (t.__name__, shape, ", dtype=%s" % dtype if dtype else "")
        if isinstance(obj, BaseException):
            args = BaseException.args.__get__(obj)  # not a user override
            return "%s(%s)" % (t.__name__, _r_seq(args, b, level, "", "", tuple.__iter__, None))
        if t.__module__ in _STDLIB_REPR:
            r = repr(obj)
            return r if len(r) <= b.string else r[: b.string] + "…"
        d = _static_attr(obj, "__dict__")
        if type(d) is dict and d and not deep:
            inner = []
            for k, v in itertools.islice(dict.items(d), b.items):
                if b.left <= 0 or type(k) is not str or k.startswith("_"):
                    continue
                s = "%s=%s" % (k, _render(v, b, level + 1))
                b.left -= len(s) + 2
                inner.append(s)
            return "%s(%s)" % (t.__qualname__, ", ".join(inner))
        return "<%s object>" % t.__qualname__
    except Exception as exc:  # a half-built or mutating object
        return "<%s: %s>" % (t.__name__, type(exc).__name__)


_STDLIB_REPR = {"datetime", "decimal", "fractions", "pathlib", "uuid", "ipaddress", "enum"}


def safe_repr(obj, chars, items, depth, string):
    text = _render(obj, Budget(chars, items, depth, string))
    return text if len(text) <= chars else text[:chars] + "…"


def _approx_size(obj):
    """Shallow size plus a small sample of the elements, scaled up."""
    t = type(obj)
    if t in _IMMUTABLE:
        return sys.getsizeof(obj)
    if t in _SEQUENCES:
        n = len(obj)
        size = sys.getsizeof(obj)
        if n:
            sample = list(itertools.islice(obj, 8))
            size += sum(map(sys.getsizeof, sample)) * n // len(sample)
        return size
    if t is dict:
        n = len(obj)
        size = sys.getsizeof(obj)
        if n:
            sample = list(itertools.islice(obj.items(), 8))
            size += sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in sample) * n // len(sample)
        return size
    arr_bytes = _static_attr(obj, "nbytes")
    if type(arr_bytes) is int:
        return arr_bytes
    sz = getattr(t, "__sizeof__", None)
    if not isinstance(sz, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return None  # a Python-level __sizeof__ is user code: not called
    try:
        return sys.getsizeof(obj)
    except Exception:
        return None


_SEQUENCES = {list, tuple, set, frozenset}


# ---------------------------------------------------------------- describe


# JSON string literal for a str, in C (same encoder json.dumps uses).
_enc = json.encoder.encode_basestring

_IMMUTABLE = {int, float, complex, bool, str, bytes, type(None), range}
_MUTABLE_SIZED = {list, dict, set, bytearray}
_FAST_LEN = {list: "items", dict: "items", set: "items", frozenset: "items", tuple: "items",
             str: "chars", bytes: "bytes", bytearray: "bytes"}


_PREVIEW = (160, 8, 2, 80)  # chars, items per level, depth, string length


def _dict_head(d):
    return list(itertools.islice(itertools.chain.from_iterable(dict.items(d)), 2 * _PREVIEW[1]))


def _set_head(s):
    return list(itertools.islice(s, _PREVIEW[1]))


# The items a builtin container's preview shows first, without user code.
# Lists and tuples get a C-level slice: they are most of what is checked.
_HEADS = {
    list: operator.itemgetter(slice(0, _PREVIEW[1])),
    tuple: operator.itemgetter(slice(0, _PREVIEW[1])),
    dict: _dict_head,
    set: _set_head,
    frozenset: _set_head,
}


def _fingerprint(obj):
    """What a builtin container's preview depends on: for each container the
    preview descends into, the container, its length, the items it shows
    (strong references, compared by identity, so they cannot be recycled
    while cached) and how to take them again. None when it holds anything
    but builtin containers and immutable scalars; those are re-rendered
    after every cell."""
    parts = []
    return tuple(parts) if _fp_walk(obj, 0, parts) else None


def _fp_walk(obj, level, parts):
    t = type(obj)
    if t in _IMMUTABLE:
        return True
    head = _HEADS.get(t)
    if head is None:
        return False
    if level >= _PREVIEW[2]:
        parts.append((obj, len(obj), None, head))  # shown as a length only
        return True
    sample = head(obj)
    parts.append((obj, len(obj), sample, head))
    if _IMMUTABLE.issuperset(map(type, sample)):  # flat: no per-item Python work
        return True
    for item in sample:
        if not _fp_walk(item, level + 1, parts):
            return False
    return True


class _Look:
    """When describe last saw an entry's preview to be exact: how many cells
    had started, and whether the last of them was still running."""

    __slots__ = ("cells", "mid_cell")

    def __init__(self, cells, mid_cell):
        self.cells = cells
        self.mid_cell = mid_cell

    def only_cell_since(self, cells, running, last_cell):
        """The one cell that can have changed the entry since this look, or
        None when several can have (or none is known)."""
        suspects = cells - self.cells + (1 if self.mid_cell else 0)
        if suspects != 1:
            return None
        return running if running is not None else last_cell


class _Entry:
    """One listed variable as last sent: the object, when its preview was
    last known exact (`look`; None when listed without a preview), the
    fingerprint of a container, and the encoded JSON."""

    __slots__ = ("obj", "look", "fp", "frag")

    def __init__(self, obj, look, fp, frag):
        self.obj = obj
        self.look = look
        self.fp = fp
        self.frag = frag


class Kernel:
    def __init__(self, config):
        self.ns = {"__name__": "__main__", "__builtins__": __builtins__}
        self.hidden = set()
        self.in_cell = False
        self.cell = None  # id of the running cell
        self.last_cell = None
        self.cell_count = 0
        # Change tracking, recorded after each cell: identity of every binding
        # and length of mutable containers (so `b.append(x)` counts).
        self.ids = {}
        self.lens = {}
        self.changed_by = {}
        # Bumped whenever a cell starts or ends: a mutable object's preview is
        # only trusted within the generation it was checked in.
        self.generation = 0
        self.describe_budget = float(config.get("describe_budget_s", 0.25))
        self.max_variables = int(config.get("max_variables", 2000))
        # The listing as last sent to the host, in namespace order: name -> _Entry.
        # It and everything below are touched by describe only, which runs on
        # the control thread alone.
        self.entries = {}
        # Identity of every binding the last describe looked at (listed or
        # not), so the next one only inspects what was bound since.
        self.seen = {}
        self.retry = set()  # listed without a preview (time budget): inspect again
        # Listed mutable values (containers, objects): what a cell can change
        # without rebinding. Checked once per generation.
        self.watch = set()
        self.checked_gen = None
        # name -> the cell seen to change it in place (same binding, same
        # length, other contents), which record_changes cannot tell.
        self.in_place = {}
        self.epoch = 0  # number of the last listing sent

    def record_changes(self, cell_id):
        ns = self.ns
        ids = dict(zip(ns.keys(), map(id, ns.values())))
        lens = {k: len(v) for k, v in ns.items() if type(v) in _MUTABLE_SIZED}
        if ids == self.ids and lens == self.lens:  # C-speed: nothing rebound or resized
            return
        changed_by = self.changed_by
        old_id, old_len = self.ids.get, self.lens.get
        for name, ident in ids.items():
            if old_id(name) != ident:
                changed_by[name] = cell_id
        for name, n in lens.items():
            if old_len(name) != n:
                changed_by[name] = cell_id
        for name in self.ids.keys() - ids.keys():
            changed_by.pop(name, None)
        self.ids, self.lens = ids, lens

    def _changed_by(self, name, obj, t, running):
        """The cell that last bound, resized or changed `name` in place.
        Cell ids grow, so the newest of what record_changes recorded and
        what describe saw in place wins."""
        if running is not None:
            if self.ids.get(name) != id(obj) or (t in _MUTABLE_SIZED and self.lens.get(name) != len(obj)):
                return running
        recorded = self.changed_by.get(name, running if running is not None else self.last_cell)
        in_place = self.in_place.get(name)
        if in_place is not None and (recorded is None or in_place > recorded):
            return in_place
        return recorded

    def _kind(self, name, obj):
        """'value', 'function' or 'class'; None for bindings never listed
        (modules, imported helpers, capabilities, `_`-names)."""
        if name[:1] == "_" or name in self.hidden:
            return None
        t = type(obj)
        if t is types.ModuleType or t is types.BuiltinFunctionType:
            return None
        if t is types.FunctionType or isinstance(obj, type):
            if getattr(obj, "__module__", None) != "__main__":
                return None  # imported helpers are noise; user-defined ones are listed
            return "function" if t is types.FunctionType else "class"
        return "value"

    def _entry(self, name, obj, kind, changed_by, look, fp, deadline):
        """One variable's entry with its encoded JSON; past the deadline the
        entry has no preview and is inspected again next time."""
        t = type(obj)
        head = '{"name":%s,"type":%s%s,"changed_by":%s' % (
            _enc(name),
            _enc(t.__qualname__),
            "" if kind == "value" else ',"kind":"%s"' % kind,
            "null" if changed_by is None else int(changed_by),
        )
        if time.perf_counter() > deadline:
            self.retry.add(name)
            frag = head + ',"summary":"(not inspected: describe time budget spent)"}'
            return _Entry(obj, None, fp, frag)
        summary = self._summary(obj, t, kind)
        parts = [head]
        if summary is not None:
            parts.append(',"summary":' + _enc(summary))
        if kind == "value":
            size = _approx_size(obj)
            if size is not None:
                parts.append(',"size":%d' % size)
            parts.append(',"preview":' + _enc(safe_repr(obj, *_PREVIEW)))
        parts.append("}")
        return _Entry(obj, look, fp, "".join(parts))

    def describe(self, did, since=None):
        """The `state` frame, already encoded.

        Incremental on both sides: only bindings that are new, rebound, or
        mutable containers whose shown contents may have moved are inspected
        (immutable values cannot change under the same identity), and when
        the host holds our last listing (`since` is its epoch) only the
        entries that changed travel. One pathological object cannot stall
        it: no user code runs, and past the time budget the rest are listed
        without previews."""
        started = time.perf_counter()
        deadline = started + self.describe_budget
        try:
            changed, removed, order, truncated = self._update_listing(deadline)
        except Exception:
            self.entries, self.seen, self.retry, self.watch = {}, {}, set(), set()
            self.epoch += 1  # whatever the host holds is no base any more
            raise
        base = since if since is not None and since == self.epoch else None
        self.epoch += 1
        entries = self.entries
        if base is None:
            frags = [e.frag for e in entries.values()]
        else:
            frags = [entries[name].frag for name in changed]
        header = {
            "type": "state",
            "id": did,
            "alive": True,
            "truncated": truncated,
            "running": self.cell,
            "epoch": self.epoch,
            "base": base,
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if base is not None and removed:
            header["removed"] = removed
        if base is not None and order is not None:
            header["order"] = order
        head = json.dumps(header, ensure_ascii=False, separators=(",", ":"))
        return head[:-1] + ',"variables":[' + ",".join(frags) + "]}"

    def _update_listing(self, deadline):
        """Brings `self.entries` up to date. Returns the names whose entry
        changed (in listing order when names were added), the names no
        longer listed, the new order when a host applying the change
        naively would get it wrong, and whether the listing was cut."""
        # Count before `cell`: a cell starting in between makes one suspect
        # too many for `_Look.only_cell_since`, never one too few.
        cells = self.cell_count
        running = self.cell
        look = _Look(cells, running is not None)
        gen = self.generation
        ns = self.ns.copy()  # a cell may bind names while this runs
        ids = dict(zip(ns, map(id, ns.values())))
        seen = self.seen
        old = self.entries
        entries = dict(old)
        watch = self.watch
        changed = set()
        truncated = False
        names_moved = False
        if ids != seen or self.retry:
            retry, self.retry = self.retry, set()
            if not ids.keys() >= seen.keys():
                for name in seen.keys() - ids.keys():
                    watch.discard(name)
                    self.in_place.pop(name, None)
                    if entries.pop(name, None) is not None:
                        names_moved = True
            if list(ids) != list(seen):
                names_moved = True  # bound, deleted, or deleted and bound again
            # In namespace order: new names are appended in it.
            fresh = [n for n, i in ids.items() if seen.get(n) != i or n in retry]
            kinds = {}
            for name in fresh:
                kind = self._kind(name, ns[name])
                if kind is not None:
                    kinds[name] = kind
                    continue
                watch.discard(name)
                if entries.pop(name, None) is not None:
                    names_moved = True
            if len(entries.keys() | kinds.keys()) > self.max_variables:
                truncated = True
                names_moved |= self._cap(ids, entries, kinds)
            for name, kind in kinds.items():
                obj = ns[name]
                t = type(obj)
                if kind == "value" and t not in _IMMUTABLE:
                    watch.add(name)
                    fp = _fingerprint(obj)
                else:
                    watch.discard(name)  # listed by identity alone
                    fp = None
                if name not in entries:
                    names_moved = True
                changed_by = self._changed_by(name, obj, t, running)
                entries[name] = self._entry(name, obj, kind, changed_by, look, fp, deadline)
                changed.add(name)
        # Containers keep their identity while their contents change: check
        # what their preview shows, once per cell and on every look while a
        # cell runs.
        if running is not None or self.checked_gen != gen:
            is_ = operator.is_
            for name in watch:
                e = entries.get(name)
                if e is None or name in changed:
                    continue
                fp = e.fp
                if fp is not None:
                    # Inlined: this loop runs for every listed container
                    # after every cell.
                    for obj, n, sample, head in fp:
                        if len(obj) != n or sample and not all(map(is_, head(obj), sample)):
                            break
                    else:
                        e.look = look  # still shows the very same items
                        continue
                obj = e.obj
                if fp is not None and e.look is not None:
                    # Same binding and length, other contents. Credit a cell
                    # only when a single one can have done it.
                    culprit = e.look.only_cell_since(cells, running, self.last_cell)
                    if culprit is not None:
                        self.in_place[name] = culprit
                changed_by = self._changed_by(name, obj, type(obj), running)
                entries[name] = self._entry(name, obj, "value", changed_by, look, _fingerprint(obj), deadline)
                changed.add(name)
            if running is None:
                self.checked_gen = gen
        truncated = truncated or bool(self.retry)
        order = None
        removed = []
        if names_moved:
            listed = [n for n in ids if n in entries]
            if list(entries) != listed:
                entries = {n: entries[n] for n in listed}
            removed = [n for n in old if n not in entries]
            naive = [n for n in old if n in entries] + [n for n in entries if n not in old]
            if naive != listed:
                order = listed
        self.entries = entries
        self.seen = ids
        sent = [n for n in changed if n not in old or old[n].frag != entries[n].frag]
        if names_moved and len(sent) > 1:
            rank = {n: i for i, n in enumerate(entries)}
            sent.sort(key=rank.__getitem__)
        return sent, removed, order, truncated

    def _cap(self, ids, entries, kinds):
        """Keeps the first `max_variables` listable names in namespace order
        (as a listing from scratch would). The rest leave `ids`, so the next
        describe considers them again. True when listed names were dropped."""
        keep = set()
        for name in ids:
            if name in kinds or name in entries:
                keep.add(name)
                if len(keep) == self.max_variables:
                    break
        dropped = [n for n in entries if n not in keep]
        for name in dropped:
            del entries[name]
            self.watch.discard(name)
        for name in dropped + [n for n in kinds if n not in keep]:
            ids.pop(name, None)
            kinds.pop(name, None)
        return bool(dropped)

    @staticmethod
    def _summary(obj, t, kind):
        unit = _FAST_LEN.get(t)
        if unit is not None:
            return "len %d %s" % (len(obj), unit)
        if kind == "function":
            code = getattr(obj, "__code__", None)
            return "def %s(%s)" % (obj.__name__, ", ".join(code.co_varnames[: code.co_argcount]) if code else "")
        if kind == "class":
            return "class %s" % obj.__qualname__
        if t in _IMMUTABLE:
            return None
        arr = _array_like(obj)
        if arr is not None:
            shape, dtype = arr
            return "shape %s%s" % (shape, " " + dtype if dtype else "")
        n = _safe_len(obj)
        if n is not None:
            return "len %d items" % n
        return None


# ---------------------------------------------------------------- capabilities


def _snake(name):
    out = []
    for i, ch in enumerate(name):
        if ch.isupper():
            if i:
                out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def _camel(name):
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class Record(dict):
    """A capability result: a dict whose keys are also attributes. Missing
    camelCase names fall back to snake_case (and back), so `r.totalMessages`
    finds `total_messages`. Keys named like dict methods (`items`, `keys`,
    `get`...) are reached with `r["items"]`."""

    __slots__ = ()

    def __missing__(self, key):
        if type(key) is str:
            for alt in (_snake(key), _camel(key)):
                if alt != key and dict.__contains__(self, alt):
                    return dict.__getitem__(self, alt)
        raise KeyError(key)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError("no field %r (fields: %s)" % (name, ", ".join(map(str, self)))) from None

    def __dir__(self):
        return [k for k in self if type(k) is str]


def _wrap(value):
    if type(value) is dict:
        return Record((k, _wrap(v)) for k, v in value.items())
    if type(value) is list:
        return [_wrap(v) for v in value]
    return value


_ERRORS = {
    "PermissionError": PermissionError,
    "FileNotFoundError": FileNotFoundError,
    "FileExistsError": FileExistsError,
    "IsADirectoryError": IsADirectoryError,
    "NotADirectoryError": NotADirectoryError,
    "TimeoutError": TimeoutError,
    "ValueError": ValueError,
    "TypeError": TypeError,
    "KeyError": KeyError,
    "OSError": OSError,
    "NotImplementedError": NotImplementedError,
}


class _Waiter:
    __slots__ = ("event", "msg")

    def __init__(self):
        self.event = threading.Event()
        self.msg = None


class Calls:
    """Cell-side half of capability calls: send `call`, block until `reply`."""

    # Room for the frame's own fields around the arguments.
    FRAME_OVERHEAD = 4096

    def __init__(self, max_frame):
        self.pending = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.max_args = max_frame - self.FRAME_OVERHEAD

    def call(self, cap, action, args):
        try:
            encoded = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise TypeError("%s.%s(): arguments must be JSON values (%s)" % (cap, action, exc)) from None
        # The host drops frames over its limit; fail here, at once, rather
        # than wait for a reply that cannot come.
        size = len(encoded.encode("utf-8", "replace"))
        if size > self.max_args:
            raise ValueError(
                "%s.%s(): the arguments are %d bytes; a capability call carries at most %d bytes "
                "(write big data with open() instead)" % (cap, action, size, self.max_args)
            )
        waiter = _Waiter()
        with self.lock:
            cid = next(self.ids)
            self.pending[cid] = waiter
        try:
            send({"type": "call", "id": cid, "cap": cap, "action": action, "args": args})
            waiter.event.wait()
        except BaseException:
            # Interrupted or timed out: the host stops the call (and, say, a
            # shell command still waiting for approval never runs).
            send({"type": "cancel", "id": cid})
            raise
        finally:
            with self.lock:
                self.pending.pop(cid, None)
        msg = waiter.msg or {}
        if msg.get("ok"):
            return _wrap(msg.get("value"))
        err = msg.get("error") or {}
        exc_type = _ERRORS.get(err.get("type"), RuntimeError)
        raise exc_type("%s.%s: %s" % (cap, action, err.get("message") or "capability failed"))

    def resolve(self, msg):
        with self.lock:
            waiter = self.pending.get(msg.get("id"))
        if waiter is not None:
            waiter.msg = msg
            waiter.event.set()


def _make_action(calls, cap, action):
    params = action.get("params") or []
    names = [p["name"] for p in params]
    aname = action["name"]

    def lookup(key):
        if key in names:
            return key
        for p in params:
            if key in (p.get("aliases") or []):
                return p["name"]
        alt = _snake(key)
        return alt if alt in names else None

    def method(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError("%s.%s() takes at most %d arguments (%d given)" % (cap, aname, len(names), len(args)))
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            pname = lookup(key)
            if pname is None:
                raise TypeError("%s.%s() got an unexpected keyword argument %r" % (cap, aname, key))
            if pname in bound:
                raise TypeError("%s.%s() got multiple values for argument %r" % (cap, aname, pname))
            bound[pname] = value
        for p in params:
            if p["name"] not in bound:
                if "default" in p:
                    bound[p["name"]] = p["default"]
                elif p.get("required", True):
                    raise TypeError("%s.%s() missing required argument %r" % (cap, aname, p["name"]))
        return calls.call(cap, aname, bound)

    sig = ", ".join(p["name"] + ("=%r" % (p["default"],) if "default" in p else "") for p in params)
    method.__name__ = aname
    method.__qualname__ = "%s.%s" % (cap, aname)
    method.__doc__ = "%s.%s(%s)\n\n%s" % (cap, aname, sig, action.get("description") or "")
    return method, sig


class CapabilityProxy:
    """The Python face of one host capability (e.g. `fs`), built from its spec."""

    def __init__(self, calls, spec):
        self._name = spec["name"]
        self._doc = spec.get("description") or ""
        self._sigs = []
        for action in spec.get("actions") or []:
            method, sig = _make_action(calls, self._name, action)
            self._sigs.append("%s(%s)" % (action["name"], sig))
            for name in [action["name"]] + list(action.get("aliases") or []):
                object.__setattr__(self, name, method)

    def __repr__(self):
        return "<capability %s: %s>" % (self._name, ", ".join(self._sigs))


# ---------------------------------------------------------------- cells


def _format_error(exc, limit=20000):
    """Error as a value: type, message and a traceback of the user's frames only."""
    # Skip the driver frames that ran the cell, keep the user's frames (and
    # libraries they called), stop at the first driver frame below them
    # (capability proxies) so internals never show.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == DRIVER_FILE:
        tb = tb.tb_next
    frames = []
    while tb is not None and tb.tb_frame.f_code.co_filename != DRIVER_FILE:
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
    return {"type": name, "message": message[:limit], "traceback": text}


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


def run_cell(kernel, pumps, saved_fds, cid, code):
    kernel.cell_count += 1
    kernel.generation += 1
    kernel.cell = cid
    kernel.last_cell = cid
    for pump in pumps:
        with pump.lock:
            pump.drain()  # output from between cells stays unattributed
            pump.end_segment(cid)
    filename = "<cell-%d>" % kernel.cell_count
    started = time.perf_counter()
    ok, value_repr, error = True, None, None
    try:
        try:
            kernel.in_cell = True
            value = _run_code(kernel, code, filename)
            if value is not None:
                kernel.ns["_"] = value
                value_repr = _value_repr(value)
            kernel.in_cell = False
        except BaseException as exc:
            kernel.in_cell = False
            ok, error = False, _format_error(exc)
    except KeyboardInterrupt:  # a late SIGINT landed in the bookkeeping above
        kernel.in_cell = False
        ok, value_repr = False, None
        error = {"type": "KeyboardInterrupt", "message": "", "traceback": "KeyboardInterrupt\n"}
    duration = (time.perf_counter() - started) * 1000
    # The C module: `signal.getsignal` converts to enums, ~30x slower.
    if _signal.getsignal(signal.SIGINT) is not kernel.on_sigint:
        _signal.signal(signal.SIGINT, kernel.on_sigint)  # the cell replaced it
    _flush_user_streams()
    for fd, saved in zip((1, 2), saved_fds):
        try:
            os.dup2(saved, fd)  # a cell that closed or redirected fd 1/2 gets it back
        except OSError:
            pass
    for pump in pumps:
        with pump.lock:
            pump.drain()
            pump.end_segment(None)
    kernel.record_changes(cid)
    kernel.generation += 1
    kernel.cell = None
    send({
        "type": "result",
        "id": cid,
        "ok": ok,
        "value_repr": value_repr,
        "error": error,
        "duration_ms": round(duration, 3),
    })


_libc = []


def _flush_user_streams():
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


# ---------------------------------------------------------------- main


def main():
    config = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    limit = config.get("memory_limit_bytes")
    if limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))

    # Private protocol channel: non-inheritable copies of the original fds.
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    try:  # room for a whole state frame: fewer wake-ups per describe
        import fcntl

        fcntl.fcntl(proto_out, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    pumps, saved = [], []
    head = int(config.get("stream_head_bytes", 1 << 20))
    tail = int(config.get("stream_tail_bytes", 64 << 10))
    for fd, name in ((1, "stdout"), (2, "stderr")):
        r, w = os.pipe()
        os.dup2(w, fd)
        saved.append(w)  # kept to restore fd 1/2 if a cell closes them
        pumps.append(Pump(r, name, head, tail))
    sys.stdin = open(os.devnull)
    for fd, attr in ((1, "stdout"), (2, "stderr")):
        # Unbuffered raw + write_through: output interleaves with subprocesses
        # writing to the same fd exactly as it happened.
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", line_buffering=True, write_through=True)
        setattr(sys, attr, stream)
        setattr(sys, "__%s__" % attr, stream)

    kernel = Kernel(config)
    calls = Calls(int(config.get("max_frame_bytes", 16 << 20)))
    for spec in config.get("capabilities") or []:
        try:
            kernel.ns[spec["name"]] = CapabilityProxy(calls, spec)
            kernel.hidden.add(spec["name"])
        except (KeyError, TypeError):
            continue
    kernel.record_changes(None)

    def on_sigint(signum, frame):
        # An idle kernel ignores a stray SIGINT; a running cell gets KeyboardInterrupt.
        if kernel.in_cell:
            raise KeyboardInterrupt

    kernel.on_sigint = on_sigint
    signal.signal(signal.SIGINT, on_sigint)

    work = SimpleQueue()

    def describe(did, since):
        # On the control thread, not the main one: answered while a cell runs.
        # Written directly (no hand-off to the writer thread): the big frames
        # are the latency that matters for the inspector.
        try:
            frame = kernel.describe(did, since if type(since) is int else None)
        except Exception as exc:  # never leave the host waiting
            frame = json.dumps({
                "type": "state", "id": did, "alive": True, "variables": [],
                "error": "%s: %s" % (type(exc).__name__, exc),
            })
        write_frame(proto_out, (frame + "\n").encode("utf-8", "replace"))

    def control():
        with os.fdopen(proto_in, "rb") as f:
            for raw in f:
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                if type(msg) is not dict:
                    continue
                kind = msg.get("type")
                if kind == "execute" and type(msg.get("code")) is str:
                    work.put((msg.get("id"), msg["code"]))
                elif kind == "describe":
                    describe(msg.get("id"), msg.get("since"))
                elif kind == "reply":
                    calls.resolve(msg)
                elif kind == "shutdown":
                    break
        os._exit(0)

    for target, args in ((_writer, (proto_out,)), (control, ())):
        threading.Thread(target=target, args=args, daemon=True).start()
    for pump in pumps:
        threading.Thread(target=pump.run, daemon=True, name="pump-" + pump.name).start()

    send({"type": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
    while True:
        try:
            cid, code = work.get()
        except KeyboardInterrupt:
            continue
        run_cell(kernel, pumps, saved, cid, code)


main()

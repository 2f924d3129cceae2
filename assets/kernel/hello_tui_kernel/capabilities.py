"""Capabilities in Python: one proxy object per host capability (`fs`,
`shell`, `context`, `llm`), built from the spec the host sends at start. A
call sends a `call` frame and blocks the cell until the control thread hands
it the host's `reply`. An action the spec gives a `global` name is also a
plain function in the namespace (`llm_query` for `llm.query`).
"""

import itertools
import json
import threading

from .framing import call_frame, cancel_frame, send

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


class SubcallLimitError(RuntimeError):
    """A per-turn budget of `llm_query` sub-calls (calls or tokens) ran out.
    The cell's variables are kept; catch it to fall back or to stop early."""

    # A global in every cell like a builtin, so tracebacks name it plainly.
    __module__ = "builtins"


_ERRORS = {
    "SubcallLimitError": SubcallLimitError,
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

    def call(self, cap, action, args, label=None):
        """`label` names the call in errors (default `cap.action`)."""
        label = label or "%s.%s" % (cap, action)
        try:
            encoded = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise TypeError("%s(): arguments must be JSON values (%s)" % (label, exc)) from None
        # The host drops frames over its limit; fail here, at once, rather
        # than wait for a reply that cannot come.
        size = len(encoded.encode("utf-8", "replace"))
        if size > self.max_args:
            raise ValueError(
                "%s(): the arguments are %d bytes; a capability call carries at most %d bytes "
                "(write big data with open() instead)" % (label, size, self.max_args)
            )
        waiter = _Waiter()
        with self.lock:
            cid = next(self.ids)
            self.pending[cid] = waiter
        try:
            send(call_frame(cid, cap, action, args))
            waiter.event.wait()
        except BaseException:
            # Interrupted or timed out: the host stops the call (and, say, a
            # shell command still waiting for approval never runs).
            send(cancel_frame(cid))
            raise
        finally:
            with self.lock:
                self.pending.pop(cid, None)
        msg = waiter.msg or {}
        if msg.get("ok"):
            return _wrap(msg.get("value"))
        err = msg.get("error") or {}
        exc_type = _ERRORS.get(err.get("type"), RuntimeError)
        raise exc_type("%s: %s" % (label, err.get("message") or "capability failed"))

    def resolve(self, msg):
        with self.lock:
            waiter = self.pending.get(msg.get("id"))
        if waiter is not None:
            waiter.msg = msg
            waiter.event.set()


def _make_action(calls, cap, action):
    params = action.get("params") or []
    names = [p["name"] for p in params]
    positional = [p["name"] for p in params if not p.get("keyword_only")]
    aname = action["name"]
    # What errors call it: the global function's name when it has one.
    label = action.get("global") or "%s.%s" % (cap, aname)

    def lookup(key):
        if key in names:
            return key
        for p in params:
            if key in (p.get("aliases") or []):
                return p["name"]
        alt = _snake(key)
        return alt if alt in names else None

    def method(*args, **kwargs):
        if len(args) > len(positional):
            raise TypeError("%s() takes at most %d positional arguments (%d given)" % (label, len(positional), len(args)))
        bound = dict(zip(positional, args))
        for key, value in kwargs.items():
            pname = lookup(key)
            if pname is None:
                raise TypeError("%s() got an unexpected keyword argument %r" % (label, key))
            if pname in bound:
                raise TypeError("%s() got multiple values for argument %r" % (label, pname))
            bound[pname] = value
        for p in params:
            if p["name"] not in bound:
                if "default" in p:
                    bound[p["name"]] = p["default"]
                elif p.get("required", True):
                    raise TypeError("%s() missing required argument %r" % (label, p["name"]))
        return calls.call(cap, aname, bound, label)

    def shown(p):
        return p["name"] + ("=%r" % (p["default"],) if "default" in p else "")

    parts = [shown(p) for p in params if not p.get("keyword_only")]
    keywords = [shown(p) for p in params if p.get("keyword_only")]
    if keywords:
        parts += ["*"] + keywords
    sig = ", ".join(parts)
    method.__name__ = action.get("global") or aname
    method.__qualname__ = label
    method.__doc__ = "%s(%s)\n\n%s" % (label, sig, action.get("description") or "")
    return method, sig


class CapabilityProxy:
    """The Python face of one host capability (e.g. `fs`), built from its spec."""

    def __init__(self, calls, spec):
        self._name = spec["name"]
        self._doc = spec.get("description") or ""
        self._sigs = []
        # Global name -> function, for the namespace (see the module doc).
        self.functions = {}
        for action in spec.get("actions") or []:
            method, sig = _make_action(calls, self._name, action)
            self._sigs.append("%s(%s)" % (action["name"], sig))
            for name in [action["name"]] + list(action.get("aliases") or []):
                object.__setattr__(self, name, method)
            if action.get("global"):
                self.functions[action["global"]] = method

    def __repr__(self):
        return "<capability %s: %s>" % (self._name, ", ".join(self._sigs))



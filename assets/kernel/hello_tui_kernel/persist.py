"""Variables that survive a restart.

After each cell the kernel saves the user's variables that changed —
pickled, or, for a function defined in a cell, as its source — through the
host's `_vars` capability, which keeps them in the session folder (the
sandbox keeps `.hello-tui` read-only to the kernel itself). When a kernel
starts where a store has variables (a restart after a crash or a timeout,
or `--continue`), the first cell brings them back before it runs, and its
output says which came back and which did not, and why.

Unpickling runs whatever the pickles say: it happens here, in the
sandboxed kernel, never in the workbench. Everything runs on the main
thread, after a cell's result is sent (saving) or before its code
(restoring), so a cell never sees a half-restored namespace, and Ctrl+C
can stop either.
"""

import base64
import hashlib
import inspect
import pickle
import sys
import types

from .safe_repr import IMMUTABLE, approx_size

# What is never saved, and why (the note names the reason once).
_MODULE = "a module that is not importable by name: import it again"
_CLASS = "a class defined in a cell: run its cell again"


# Saved by name (the import, the source): what they are does not change in place.
_BY_NAME = (types.ModuleType, types.FunctionType, type)


def _length(value):
    """A builtin container's length (a cheap sign of change), else None."""
    t = type(value)
    return len(value) if t in (list, dict, set, bytearray) else None


def _size(n):
    """`8 MiB`, `512 KiB`: the bounds as the settings give them."""
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


class Persist:
    def __init__(self, kernel, proxy, per_variable, total):
        self.kernel = kernel
        self.proxy = proxy
        self.per_variable = per_variable
        self.total = total
        # name -> ((id, length) of the object, digest of what was saved, bytes)
        self.saved = {}
        # bytes of everything in `saved`, kept as it changes (a sum per
        # save would make a cell that binds many names quadratic)
        self.used = 0
        # name -> the reason it was last skipped (said once per reason)
        self.skipped = {}
        # name -> (id, length) of an object that could not be kept
        self.tried = {}
        # containers that may have changed in place: checked when idle
        self.pending = []
        self.restored = False

    def _names(self):
        ns, hidden = self.kernel.ns, self.kernel.hidden
        return [n for n in ns if not n.startswith("_") and n not in hidden]

    def _encode(self, name, value):
        """(kind, bytes) to save, or (None, reason)."""
        if isinstance(value, types.ModuleType):
            # Kept as the import that brings it back.
            module = getattr(value, "__name__", None)
            if type(module) is str and sys.modules.get(module) is value and getattr(value, "__spec__", None) is not None:
                return "source", ("import %s as %s\n" % (module, name)).encode("utf-8")
            return None, _MODULE
        if isinstance(value, types.FunctionType) and value.__module__ == "__main__":
            try:
                return "source", inspect.getsource(value).encode("utf-8")
            except (OSError, TypeError) as exc:
                return None, "its source is not known (%s)" % exc
        if isinstance(value, type) and value.__module__ == "__main__":
            return None, _CLASS
        if type(value) not in IMMUTABLE and approx_size(value) > self.per_variable:
            return None, "over %s" % _size(self.per_variable)
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # the object says it cannot be pickled
            return None, "cannot be pickled (%s: %s)" % (type(exc).__name__, exc)
        if len(data) > self.per_variable:
            return None, "over %s" % _size(self.per_variable)
        return "pickle", data

    def after_cell(self):
        """Right after a cell: saves what is new, rebound or resized, and
        forgets what is gone. A container that may have changed in place
        (same object, same length) is left for `check_one`, which the
        driver calls while no cell waits: pickling every list of a session
        after every cell would make each cell pay for all of them."""
        ns, hidden = self.kernel.ns, self.kernel.hidden
        for name in list(self.saved):
            if name not in ns or name.startswith("_") or name in hidden:
                self.proxy.remove(name)
                self._forget(name)
        for name in list(self.skipped):
            if name not in ns:
                self.proxy.forget(name)
                del self.skipped[name]
                self.tried.pop(name, None)
        self.pending = []
        for name in self._names():
            value = ns[name]
            shape = (id(value), _length(value))
            known = self.saved.get(name)
            if known is not None and known[0] == shape:
                if type(value) not in IMMUTABLE and not isinstance(value, _BY_NAME):
                    self.pending.append(name)
                continue
            if known is None and self.tried.get(name) == shape:
                continue  # not kept, and not changed since
            self._keep(name, value)

    def check_one(self):
        """Saves one container if it changed in place since it was saved."""
        name = self.pending.pop()
        value = self.kernel.ns.get(name)
        known = self.saved.get(name)
        if known is not None and value is not None and known[0] == (id(value), _length(value)):
            self._keep(name, value)

    def _keep(self, name, value):
        """Encodes `value`; sends it when it differs from what was saved."""
        shape = (id(value), _length(value))
        known = self.saved.get(name)
        kind, data = self._encode(name, value)
        if kind is None:
            if known is not None:
                self.proxy.remove(name)
                self._forget(name)
            self.tried[name] = shape
            self._skip(name, data)
            return
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if known is not None and known[1] == digest:
            self.saved[name] = (shape, digest, known[2])
            return
        if self.used - (known[2] if known else 0) + len(data) > self.total:
            self.tried[name] = shape
            self._skip(name, "the session's %s for variables is full" % _size(self.total))
            return
        self.proxy.save(name, kind, base64.b64encode(data).decode("ascii"))
        self._record(name, (shape, digest, len(data)))
        self.tried.pop(name, None)
        self.skipped.pop(name, None)

    def _record(self, name, entry):
        self._forget(name)
        self.saved[name] = entry
        self.used += entry[2]

    def _forget(self, name):
        known = self.saved.pop(name, None)
        if known is not None:
            self.used -= known[2]

    def _skip(self, name, reason):
        """Tells the host once per reason why `name` is not kept."""
        if self.skipped.get(name) != reason:
            self.skipped[name] = reason
            self.proxy.skip(name, reason)

    def restore(self):
        """Brings back what the store holds; returns the note for the first
        cell's output, or None when there was nothing."""
        self.restored = True
        listed = self.proxy.names()
        if not listed["saved"] and not listed["not_kept"]:
            return None
        came, failed = [], []
        ns = self.kernel.ns
        for entry in listed["saved"]:
            name = entry["name"]
            try:
                saved = self.proxy.load(name)
                data = base64.b64decode(saved["data"])
                if saved["kind"] == "source":
                    exec(compile(data.decode("utf-8"), "<restored %s>" % name, "exec"), ns)
                else:
                    ns[name] = pickle.loads(data)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                failed.append((name, "%s: %s" % (type(exc).__name__, exc)))
                continue
            came.append(name)
            value = ns.get(name)
            self._record(name, ((id(value), _length(value)), hashlib.blake2b(data, digest_size=16).digest(), len(data)))
        self.proxy.report(came, [{"name": n, "reason": r} for n, r in failed])
        parts = []
        if came:
            parts.append("restored %d variable%s from before: %s"
                         % (len(came), "" if len(came) == 1 else "s", ", ".join(came)))
        if failed:
            parts.append("not restored: %s" % "; ".join("%s (%s)" % f for f in failed))
        lost = [(e["name"], e["reason"]) for e in listed["not_kept"]]
        if lost:
            parts.append("not kept: %s" % "; ".join("%s (%s)" % f for f in lost))
        return "[hello-tui] " + "; ".join(parts) + "\n"

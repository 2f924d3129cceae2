"""Bounded previews of any object without running user code.

`safe_repr` never calls a user-defined `__repr__`, `__len__`, `__iter__`,
`__getattr__` or property (only those of trusted array libraries), and is
bounded in items per level, depth and string length: the variable listing
calls it on whatever a cell left in its namespace, mid-cell included.
"""

import itertools
import sys
import types

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


def array_like(obj):
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


def safe_len(obj):
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
        arr = array_like(obj)
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


def approx_size(obj):
    """Shallow size plus a small sample of the elements, scaled up."""
    t = type(obj)
    if t in IMMUTABLE:
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
# Values that cannot change under the same identity.
IMMUTABLE = {int, float, complex, bool, str, bytes, type(None), range}

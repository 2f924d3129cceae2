"""The variable listing (`describe`): the `state` frame, incremental.

`Kernel` holds the cell namespace and what the last listing sent, so each
describe inspects only what is new, rebound or possibly changed, and sends
the host only the entries that changed since the listing it holds
(ARCHITECTURE.md, "Variable listing").
"""

import itertools
import json
import operator
import time
import types

from .framing import state_header
from .safe_repr import IMMUTABLE, approx_size, array_like, safe_len, safe_repr

# JSON string literal for a str, in C (same encoder json.dumps uses).
_enc = json.encoder.encode_basestring

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
    if t in IMMUTABLE:
        return True
    head = _HEADS.get(t)
    if head is None:
        return False
    if level >= _PREVIEW[2]:
        parts.append((obj, len(obj), None, head))  # shown as a length only
        return True
    sample = head(obj)
    parts.append((obj, len(obj), sample, head))
    if IMMUTABLE.issuperset(map(type, sample)):  # flat: no per-item Python work
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
        # Set by the host when the kernel runs confined (see cells.explain_denial).
        self.sandboxed = bool(config.get("sandboxed"))
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
            size = approx_size(obj)
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
        header = state_header(
            did,
            truncated,
            self.cell,
            self.epoch,
            base,
            round((time.perf_counter() - started) * 1000, 3),
            removed,
            order,
        )
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
                if kind == "value" and t not in IMMUTABLE:
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
        if t in IMMUTABLE:
            return None
        arr = array_like(obj)
        if arr is not None:
            shape, dtype = arr
            return "shape %s%s" % (shape, " " + dtype if dtype else "")
        n = safe_len(obj)
        if n is not None:
            return "len %d items" % n
        return None

"""Variables kept across restarts: what is saved after a cell, what is
not (and why), and a restore into a fresh kernel."""

import linecache
import socket

from hello_tui_kernel.listing import Kernel
from hello_tui_kernel.persist import Persist


class Store:
    """The host's `_vars` capability, in memory, with its calls counted."""

    def __init__(self):
        self.saved, self.not_kept, self.calls, self.reports = {}, {}, [], []

    def save(self, name, kind, data):
        self.calls.append(("save", name))
        self.saved[name] = {"kind": kind, "data": data}
        self.not_kept.pop(name, None)

    def remove(self, name):
        self.calls.append(("remove", name))
        self.saved.pop(name, None)

    def skip(self, name, reason):
        self.saved.pop(name, None)
        self.not_kept[name] = reason

    def forget(self, name):
        self.not_kept.pop(name, None)

    def names(self):
        return {
            "saved": [{"name": n, "kind": v["kind"], "bytes": 0} for n, v in self.saved.items()],
            "not_kept": [{"name": n, "reason": r} for n, r in self.not_kept.items()],
        }

    def load(self, name):
        return self.saved[name]

    def report(self, restored, failed):
        self.reports.append((restored, failed))


def cell(kernel, code, n):
    """Runs `code` as the driver does: compiled under a `<cell-N>` name
    that linecache knows, so a function's source can be found."""
    filename = "<cell-%d>" % n
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), kernel.ns)


def persisted(per_variable=1 << 20, total=4 << 20):
    kernel = Kernel({})
    kernel.ns["fs"] = object()
    kernel.hidden.add("fs")
    store = Store()
    return kernel, store, Persist(kernel, store, per_variable, total)


def test_changed_values_functions_and_imports_are_saved_once():
    kernel, store, persist = persisted()
    cell(kernel, "import json\nimport os.path as p\nx = 41\nrows = [1, 2]\n"
                 "def add(a):\n    return a + x\n_private = 1\n", 1)
    persist.after_cell()
    assert sorted(store.saved) == ["add", "json", "p", "rows", "x"]
    assert store.saved["add"]["kind"] == "source"
    assert store.saved["json"]["kind"] == "source"
    store.calls.clear()
    persist.after_cell()
    assert store.calls == [], "nothing changed: nothing sent"
    kernel.ns["rows"].append(3)  # resized: saved at once
    del kernel.ns["x"]
    persist.after_cell()
    assert store.calls == [("remove", "x"), ("save", "rows")]
    store.calls.clear()
    kernel.ns["rows"][0] = 9  # changed in place, same length: when idle
    persist.after_cell()
    assert store.calls == [] and persist.pending == ["rows"]
    while persist.pending:
        persist.check_one()
    assert store.calls == [("save", "rows")]


def test_what_cannot_be_kept_is_said_with_its_reason_once():
    kernel, store, persist = persisted(per_variable=2048)
    sock = socket.socket()
    try:
        cell(kernel, "class Point:\n    pass\n", 1)
        kernel.ns.update({"conn": sock, "big": "x" * 5000, "pt": kernel.ns["Point"]()})
        persist.after_cell()
    finally:
        sock.close()
    assert store.saved == {}
    assert "cannot be pickled" in store.not_kept["conn"]
    assert store.not_kept["big"] == "over 2 KiB"
    assert store.not_kept["Point"].startswith("a class defined in a cell")
    assert "cannot be pickled" in store.not_kept["pt"]
    del kernel.ns["conn"]
    persist.after_cell()
    assert "conn" not in store.not_kept, "gone: forgotten"


def test_the_session_total_is_kept():
    kernel, store, persist = persisted(per_variable=1 << 20, total=3000)
    kernel.ns.update({"a": "x" * 2000, "b": "y" * 2000})
    persist.after_cell()
    assert list(store.saved) == ["a"]
    assert "full" in store.not_kept["b"]


def test_a_restore_brings_values_functions_and_imports_back_and_says_so():
    kernel, store, persist = persisted()
    cell(kernel, "import json\nx = 41\ndef add(a):\n    return a + x\n", 1)
    kernel.ns["conn"] = socket.socket()
    persist.after_cell()
    kernel.ns["conn"].close()
    store.saved["broken"] = {"kind": "pickle", "data": "bm90IGEgcGlja2xl"}  # "not a pickle"

    fresh = Kernel({})
    again = Persist(fresh, store, 1 << 20, 4 << 20)
    note = again.restore()
    assert fresh.ns["add"](1) == 42 and fresh.ns["json"].dumps([1]) == "[1]"
    restored, failed = store.reports[0]
    assert sorted(restored) == ["add", "json", "x"]
    assert [f["name"] for f in failed] == ["broken"]
    assert note.startswith("[hello-tui] restored 3 variables")
    assert "not restored: broken (UnpicklingError" in note
    assert "not kept: conn (cannot be pickled" in note


def test_nothing_kept_says_nothing():
    kernel, store, persist = persisted()
    assert persist.restore() is None
    assert store.reports == []

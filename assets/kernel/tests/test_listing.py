"""The variable listing: what is listed, and deltas that add up to a
listing from scratch."""

import json

from hello_tui_kernel.listing import Kernel


def listing(kernel, since=None):
    return json.loads(kernel.describe(1, since))


def names(frame):
    return [v["name"] for v in frame["variables"]]


def test_lists_user_values_and_definitions_only():
    import os

    kernel = Kernel({})

    def helper():
        pass

    helper.__module__ = "__main__"
    kernel.ns.update({"x": [1, 2, 3], "_private": 1, "os": os, "path_join": os.path.join, "helper": helper, "fs": object()})
    kernel.hidden.add("fs")
    frame = listing(kernel)
    assert names(frame) == ["x", "helper"]
    x, helper_entry = frame["variables"]
    assert x["summary"] == "len 3 items" and x["preview"] == "[1, 2, 3]"
    assert helper_entry["kind"] == "function" and helper_entry["summary"] == "def helper()"


def test_a_delta_carries_only_what_changed_and_adds_up():
    kernel = Kernel({})
    kernel.ns.update({"a": 1, "b": [1]})
    whole = listing(kernel)
    kernel.ns["b"].append(2)  # changed in place: same binding, new length
    kernel.generation += 1  # as a cell does: containers are checked once per cell
    kernel.ns["c"] = "new"
    delta = listing(kernel, whole["epoch"])
    assert delta["base"] == whole["epoch"]
    assert names(delta) == ["b", "c"]
    merged = {v["name"]: v for v in whole["variables"]}
    merged.update({v["name"]: v for v in delta["variables"]})
    fresh = Kernel({})
    fresh.ns.update(kernel.ns)
    assert [merged[n]["preview"] for n in ("a", "b", "c")] == [v["preview"] for v in listing(fresh)["variables"]]


def test_a_stale_base_gets_a_whole_listing():
    kernel = Kernel({})
    kernel.ns["a"] = 1
    listing(kernel)
    frame = listing(kernel, since=12345)
    assert frame["base"] is None and names(frame) == ["a"]


def test_too_many_variables_are_cut_and_say_so():
    kernel = Kernel({"max_variables": 3})
    kernel.ns.update({"v%d" % i: i for i in range(10)})
    frame = listing(kernel)
    assert frame["truncated"] is True
    assert names(frame) == ["v0", "v1", "v2"]


def test_changed_by_names_the_cell_that_rebound_a_name():
    kernel = Kernel({})
    kernel.ns["a"] = 1
    kernel.record_changes(None)
    kernel.ns["a"] = 2
    kernel.last_cell = 7
    kernel.record_changes(7)
    (a,) = listing(kernel)["variables"]
    assert a["changed_by"] == 7

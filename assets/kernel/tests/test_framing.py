"""The wire, checked against the golden frames the Rust tests also use
(`assets/kernel/golden/`): the driver builds exactly these frames, and
reads every field of the host's."""

import itertools
import json
import threading

from conftest import golden
from hello_tui_kernel import framing
from hello_tui_kernel.capabilities import Calls
from hello_tui_kernel.listing import Kernel
from hello_tui_kernel.main import dispatch


def wire(frame):
    """A frame as the host receives it: one line, parsed."""
    data = framing.encode(frame)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    return json.loads(data)


def test_driver_frames_are_the_golden_frames():
    assert wire(framing.ready_frame("3.11.7", 4242)) == golden("ready")
    assert wire(framing.stream_frame(3, "stdout", "héllo\n")) == golden("stream")
    assert wire(framing.stream_frame(None, "stderr", "late\n")) == golden("stream_background")
    assert wire(framing.result_frame(3, True, "42", None, 1.5)) == golden("result_ok")
    traceback = 'Traceback (most recent call last):\n  File "<cell-4>", line 1, in <module>\nZeroDivisionError: division by zero\n'
    error = framing.error_value("ZeroDivisionError", "division by zero", traceback)
    assert wire(framing.result_frame(4, False, None, error, 0.25)) == golden("result_error")
    assert wire(framing.call_frame(1, "fs", "read", {"path": "a.txt"})) == golden("call")
    assert wire(framing.cancel_frame(1)) == golden("cancel")
    assert wire(framing.started_frame(3)) == golden("started")
    assert wire(framing.interrupted_frame(3)) == golden("interrupted")
    assert wire(framing.state_error_frame(5, "RuntimeError: boom")) == golden("state_error")


def _listing_frame(text):
    frame = json.loads(text)
    frame["elapsed_ms"] = 0.5  # the one value that is measured
    return frame


def test_state_frames_are_the_golden_frames():
    kernel = Kernel({})

    def g(a, b):
        return a

    g.__module__ = "__main__"
    kernel.ns = {"a": 1, "b": 2, "c": 5, "g": g}
    whole = _listing_frame(kernel.describe(7))
    assert whole == golden("state")
    del kernel.ns["a"], kernel.ns["c"]
    kernel.ns["a"] = 3
    assert _listing_frame(kernel.describe(8, whole["epoch"])) == golden("state_delta")


class Recorded(dict):
    """A host frame that remembers which fields the driver read."""

    def __init__(self, frame):
        super().__init__(frame)
        self.read = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _dispatch(frame):
    seen = []
    keep_going = dispatch(
        frame,
        lambda cid, code: seen.append(("execute", cid, code)),
        lambda did, since: seen.append(("describe", did, since)),
        lambda msg: seen.append(("reply", msg)),
    )
    return keep_going, seen


def test_host_frames_are_read_whole():
    for name in ("execute", "describe", "shutdown"):
        frame = Recorded(golden(name))
        keep_going, seen = _dispatch(frame)
        assert frame.read == set(frame), "%s: fields the driver does not read: %s" % (name, set(frame) - frame.read)
        if name == "shutdown":
            assert not keep_going
    assert _dispatch(golden("execute"))[1] == [("execute", 3, "print('a')\n1 + 1")]
    assert _dispatch(golden("describe"))[1] == [("describe", 9, 4)]


def _reply(frame):
    """A capability call answered by `frame`: what the cell gets."""
    calls = Calls(1 << 20)
    calls.ids = itertools.count(dict.__getitem__(frame, "id"))  # the call this frame answers
    sent = []
    real_send = framing.send
    outcome = {}

    def cell():
        try:
            outcome["value"] = calls.call("fs", "read", {"path": "a.txt"})
        except Exception as exc:
            outcome["error"] = exc

    import hello_tui_kernel.capabilities as caps

    caps.send = sent.append
    try:
        thread = threading.Thread(target=cell)
        thread.start()
        while not sent:
            thread.join(0.01)
        assert sent[0]["type"] == "call"
        dispatch(frame, None, None, calls.resolve)
        thread.join(5)
    finally:
        caps.send = real_send
    return outcome


def test_replies_are_read_whole():
    ok = Recorded(golden("reply_ok"))
    outcome = _reply(ok)
    assert outcome["value"] == {"text": "hi"} and outcome["value"].text == "hi"
    assert ok.read == set(ok), set(ok) - ok.read
    failed = Recorded(golden("reply_error"))
    outcome = _reply(failed)
    assert type(outcome["error"]) is PermissionError
    assert "outside the workspace" in str(outcome["error"])
    assert failed.read >= set(failed) - {"value"}, set(failed) - failed.read


def test_unreadable_host_lines_are_skipped():
    for raw in (b"", b"not json", b"[1]", b'{"id": 1}', b'{"type": 3}'):
        assert framing.parse_host_line(raw) is None
    assert framing.parse_host_line(b'{"type":"shutdown"}\n') == {"type": "shutdown"}


def test_lone_surrogates_still_make_utf8():
    data = framing.encode(framing.stream_frame(1, "stdout", "a\udcffb"))
    assert json.loads(data.decode("utf-8"))["text"] == "a?b"

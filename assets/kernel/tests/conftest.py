"""Shared set-up for the driver's tests: the package is imported from the
source tree, and `Driver` runs the real driver as the workbench does
(`python3 -u <assets/kernel> <config>`), speaking the protocol over pipes."""

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

KERNEL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN_DIR = os.path.join(KERNEL_DIR, "golden")
sys.path.insert(0, KERNEL_DIR)


def golden(name):
    with open(os.path.join(GOLDEN_DIR, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


class Driver:
    def __init__(self, config=None, cwd=None):
        self.proc = subprocess.Popen(
            [sys.executable, "-u", KERNEL_DIR, json.dumps(config or {})],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=cwd,
        )
        # Frames are read from the pipe into a buffer of our own, so
        # `next_frame_within` can tell "a whole frame is already here".
        self.pending = b""
        self.ready = self.wait_for("ready")

    def send(self, frame):
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())
        self.proc.stdin.flush()

    def next_frame(self):
        while b"\n" not in self.pending:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the driver exited"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)

    def next_frame_within(self, seconds):
        """The next frame, or None when none comes in time."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            assert chunk, "the driver exited"
            self.pending += chunk
        return self.next_frame()

    def interrupt(self, cid):
        """SIGINT, then SIGURG (the host's wake) until the driver answers
        that the cell got KeyboardInterrupt; returns that frame."""
        sig = signal.SIGINT
        while True:
            os.kill(self.ready["pid"], sig)
            sig = signal.SIGURG
            frame = self.next_frame_within(0.3)
            while frame is not None and frame["type"] != "interrupted":
                frame = self.next_frame_within(0.3)
            if frame is not None:
                assert frame["id"] == cid, frame
                return frame

    def wait_for(self, kind):
        while True:
            frame = self.next_frame()
            if frame["type"] == kind:
                return frame

    def execute(self, cid, code):
        """Runs a cell; returns its result frame and every stream frame
        that came before it."""
        self.send({"type": "execute", "id": cid, "code": code})
        streams = []
        while True:
            frame = self.next_frame()
            if frame["type"] == "stream":
                streams.append(frame)
            elif frame["type"] == "result":
                return frame, streams

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def driver(tmp_path):
    d = Driver(cwd=str(tmp_path))
    yield d
    d.close()

"""Shared set-up for the driver's tests: the package is imported from the
source tree, and `Driver` runs the real driver as the workbench does
(`python3 -u <assets/kernel> <config>`), speaking the protocol over pipes."""

import json
import os
import subprocess
import sys

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
        self.ready = self.wait_for("ready")

    def send(self, frame):
        self.proc.stdin.write((json.dumps(frame) + "\n").encode())
        self.proc.stdin.flush()

    def next_frame(self):
        line = self.proc.stdout.readline()
        assert line, "the driver exited"
        return json.loads(line)

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

"""The real driver process, over its protocol: interrupts, and output that
belongs to no cell."""

import os
import signal
import time

from conftest import Driver


def test_sigint_interrupts_the_running_cell_and_keeps_variables(driver):
    driver.execute(1, "x = 41")
    driver.send({"type": "execute", "id": 2, "code": "import time\nprint('sleeping', flush=True)\ntime.sleep(30)"})
    assert driver.wait_for("stream")["text"].startswith("sleeping")  # the cell runs
    started = time.monotonic()
    driver.interrupt(2)
    result = driver.wait_for("result")
    assert time.monotonic() - started < 5
    assert result["ok"] is False and result["error"]["type"] == "KeyboardInterrupt"
    result, _ = driver.execute(3, "x + 1")
    assert result["value_repr"] == "42"


def test_only_the_main_thread_can_receive_sigint(driver):
    # The writer, control and pump threads block SIGINT, so the kernel hands
    # Ctrl+C to the main thread, the one running (and sleeping in) cells.
    pid = driver.ready["pid"]
    blocked = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigBlk:"))
        blocked[int(tid)] = bool(mask & (1 << (signal.SIGINT - 1)))
    assert blocked.pop(pid) is False, "the main thread takes SIGINT"
    assert len(blocked) >= 3 and all(blocked.values()), blocked


def test_a_cell_blocking_sigint_leaves_the_next_cell_interruptible(driver):
    driver.execute(1, "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})")
    driver.send({"type": "execute", "id": 2, "code": "import time\nprint('go', flush=True)\ntime.sleep(30)"})
    driver.wait_for("stream")
    started = time.monotonic()
    driver.interrupt(2)
    assert driver.wait_for("result")["error"]["type"] == "KeyboardInterrupt"
    assert time.monotonic() - started < 5


def test_a_sigint_sent_once_the_cell_reports_started_interrupts_it(driver):
    # The host holds an interrupt asked for before `started` until it
    # arrives: from then on the handler raises, even before the cell's
    # first line has run, and says so with `interrupted`. Until then the
    # host wakes the kernel with SIGURG, as here: CPython leaves a SIGINT
    # that lands just before `time.sleep` blocks pending until the sleep
    # ends (seen on a loaded machine).
    for cid in range(1, 21):
        driver.send({"type": "execute", "id": cid, "code": "import time\ntime.sleep(30)"})
        assert driver.wait_for("started")["id"] == cid
        driver.interrupt(cid)
        result = driver.wait_for("result")
        assert result["id"] == cid and result["error"]["type"] == "KeyboardInterrupt"


def test_a_wake_runs_a_sigint_handler_left_pending_and_raises_nothing_itself(driver):
    # A thread of the cell takes the SIGINT while the main thread blocks
    # it: the handler is left pending, as in CPython's race, and the sleep
    # goes on. SIGURG ends the sleep; the pending handler then raises.
    # `go` comes from a timer thread (born blocking SIGINT) once the main
    # thread sleeps: printed by the main thread itself, a loaded machine
    # let the SIGINT land between the print and the sleep, where CPython
    # runs the handler at once.
    driver.send(
        {
            "type": "execute",
            "id": 1,
            "code": "import signal, threading, time\n"
            "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
            "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
            # One write: `print('go')` writes the newline apart, and a
            # loaded machine sends it as a frame of its own, after `go`.
            "threading.Timer(0.5, print, ('go\\n',), {'end': '', 'flush': True}).start()\n"
            "time.sleep(30)",
        }
    )
    driver.wait_for("stream")
    os.kill(driver.ready["pid"], signal.SIGINT)
    assert driver.next_frame_within(0.5) is None, "the sleep went on"
    started = time.monotonic()
    os.kill(driver.ready["pid"], signal.SIGURG)
    assert driver.wait_for("interrupted")["id"] == 1
    assert driver.wait_for("result")["error"]["type"] == "KeyboardInterrupt"
    assert time.monotonic() - started < 5
    # A wake with no SIGINT pending does nothing.
    driver.send({"type": "execute", "id": 2, "code": "import time\nprint('go', flush=True)\ntime.sleep(0.5)\n'slept'"})
    driver.wait_for("stream")
    os.kill(driver.ready["pid"], signal.SIGURG)
    assert driver.wait_for("result")["value_repr"] == "'slept'"


def test_sigint_between_cells_is_ignored(driver):
    os.kill(driver.ready["pid"], signal.SIGINT)
    time.sleep(0.2)
    result, _ = driver.execute(1, "'alive'")
    assert result["ok"] and result["value_repr"] == "'alive'"


def test_a_cell_replacing_the_sigint_handler_gets_ours_back(driver):
    driver.execute(1, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)")
    driver.send({"type": "execute", "id": 2, "code": "import time\nprint('go', flush=True)\ntime.sleep(30)"})
    driver.wait_for("stream")
    driver.interrupt(2)
    assert driver.wait_for("result")["error"]["type"] == "KeyboardInterrupt"


def test_cell_output_is_tagged_and_tracebacks_show_user_frames_only(driver):
    result, streams = driver.execute(5, "import os\nprint('a')\nos.system('echo b')\ndef f():\n    return 1 / 0\nf()")
    assert {s["id"] for s in streams} == {5}
    assert "".join(s["text"] for s in streams) == "a\nb\n"
    tb = result["error"]["traceback"]
    assert "<cell-1>" in tb and "return 1 / 0" in tb
    assert "hello_tui_kernel" not in tb


def test_a_thread_from_an_earlier_cell_prints_background_output(driver):
    driver.execute(1, "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), print('late'))).start()")
    result, streams = driver.execute(2, "time.sleep(0.8)\nprint('mine')")
    assert "".join(s["text"] for s in streams if s["id"] == 2) == "mine\n"
    background = "".join(s["text"] for s in streams if s["id"] is None)
    assert background == "late\n"


def test_background_output_is_capped_and_counts_what_it_dropped(tmp_path):
    from conftest import Driver

    d = Driver({"stream_head_bytes": 10, "stream_tail_bytes": 4}, cwd=str(tmp_path))
    try:
        d.execute(1, "import threading\nt = threading.Thread(target=lambda: print('x' * 100))")
        d.execute(2, "t.start(); t.join()")  # started by cell 2: its own output
        d.execute(3, "import time\nthreading.Thread(target=lambda: (time.sleep(0.1), print('y' * 100))).start()")
        time.sleep(0.5)
        _, streams = d.execute(4, "pass")
        background = "".join(s["text"] for s in streams if s["id"] is None)
        assert background == "y" * 10 + "\n[... 87 bytes of output dropped ...]\n" + "yyy\n"
    finally:
        d.close()


def _confined_driver(tmp_path, sandboxed):
    from conftest import Driver

    return Driver({"sandboxed": sandboxed}, cwd=str(tmp_path))


# What the sandbox's read-only mount raises for a write outside the
# writable roots (made here without a sandbox: the driver only sees errno).
READ_ONLY_WRITE = "import errno\nraise OSError(errno.EROFS, 'Read-only file system', '/etc/hello-tui-x')"


def test_a_confined_cells_read_only_write_is_a_permission_error_naming_the_path(tmp_path):
    d = _confined_driver(tmp_path, True)
    try:
        result, _ = d.execute(1, "def write():\n    " + READ_ONLY_WRITE.replace("\n", "\n    ") + "\nwrite()")
        error = result["error"]
        assert error["type"] == "PermissionError"
        assert "'/etc/hello-tui-x'" in error["message"]
        assert "outside the sandbox's writable roots" in error["message"]
        # The traceback the model reads names PermissionError, and still
        # shows the user's frames.
        assert "PermissionError: [Errno 13]" in error["traceback"]
        assert "in write" in error["traceback"] and "<cell-1>" in error["traceback"]
        assert "OSError: [Errno 30]" not in error["traceback"]
        # Other errors, and a caught EROFS, are left alone.
        result, _ = d.execute(2, "open('/nonexistent/x')")
        assert result["error"]["type"] == "FileNotFoundError"
        caught = "try:\n    " + READ_ONLY_WRITE.replace("\n", "\n    ") + "\nexcept OSError as e:\n    r = type(e).__name__\nr"
        result, _ = d.execute(3, caught)
        assert result["value_repr"] == "'OSError'"
    finally:
        d.close()


def test_an_unconfined_kernel_reports_the_oserror_as_it_is(tmp_path):
    d = _confined_driver(tmp_path, False)
    try:
        result, _ = d.execute(1, READ_ONLY_WRITE)
        assert result["error"]["type"] == "OSError"
        assert "Read-only file system" in result["error"]["message"]
    finally:
        d.close()


LLM_SPEC = {
    "name": "llm",
    "description": "",
    "actions": [
        {
            "name": "query",
            "description": "",
            "global": "llm_query",
            "params": [
                {"name": "prompt"},
                {"name": "model", "default": None, "keyword_only": True},
            ],
        }
    ],
}


def test_an_action_with_a_global_name_is_a_plain_function_with_keyword_only_params(tmp_path):
    from conftest import Driver

    driver = Driver({"capabilities": [LLM_SPEC]}, cwd=str(tmp_path))
    try:
        result, _ = driver.execute(1, "llm_query('x', 'm')")
        assert result["error"]["type"] == "TypeError"
        assert "llm_query() takes at most 1 positional" in result["error"]["message"]
        driver.send({"type": "execute", "id": 2, "code": "a = llm_query('hi', model='m')\na"})
        call = driver.wait_for("call")
        assert (call["cap"], call["action"]) == ("llm", "query")
        assert call["args"] == {"prompt": "hi", "model": "m"}
        driver.send({"type": "reply", "id": call["id"], "ok": True, "value": "answer"})
        result = driver.wait_for("result")
        assert result["value_repr"] == "'answer'"
        # A budget error is its own class, a global the cell can catch.
        code = "try:\n    llm_query('hi')\nexcept SubcallLimitError as e:\n    caught = str(e)\ncaught"
        driver.send({"type": "execute", "id": 3, "code": code})
        call = driver.wait_for("call")
        error = {"type": "SubcallLimitError", "message": "no calls left"}
        driver.send({"type": "reply", "id": call["id"], "ok": False, "error": error})
        result = driver.wait_for("result")
        assert result["value_repr"] == "'llm_query: no calls left'"
    finally:
        driver.close()


def test_starting_the_kernel_imports_nothing_from_the_workspace(tmp_path):
    # An untrusted repository shipping `resource.py` ran its code as the
    # kernel started (the driver imported it after the workspace went first
    # on sys.path): nothing of the workspace may run until a cell imports
    # it. Every module the driver uses, and a few the standard library
    # loads lazily, are planted; a cell that fails and a describe run too.
    planted = ["resource", "fcntl", "ctypes", "traceback", "linecache", "inspect", "reprlib", "dis", "tokenize", "textwrap", "pprint", "warnings"]
    for name in planted:
        (tmp_path / (name + ".py")).write_text("open(%r, 'w').close()\n" % str(tmp_path / ("RAN_" + name)))
    d = Driver(config={"memory_limit_bytes": 1 << 34}, cwd=str(tmp_path))
    try:
        result, _ = d.execute(1, "1 / 0")
        assert result["error"]["type"] == "ZeroDivisionError"
        d.send({"type": "describe", "id": 2})
        d.wait_for("state")
    finally:
        d.close()
    assert sorted(p.name for p in tmp_path.glob("RAN_*")) == []

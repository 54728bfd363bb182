"""Threads, interrupts, timeouts: runs from several threads at once, the
GIL released while a module runs, Ctrl-C (SIGINT) and timeout= ending a
long run."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import hloi
from conftest import SANITIZED, data_path

# A loop of 10^12 steps: it only ends by an interrupt or a limit.
SPIN = """HloModule spin
cond {
  p = s64[] parameter(0)
  n = s64[] constant(1000000000000)
  ROOT lt = pred[] compare(p, n), direction=LT
}
body {
  p = s64[] parameter(0)
  one = s64[] constant(1)
  ROOT q = s64[] add(p, one)
}
ENTRY main {
  x = s64[] parameter(0)
  ROOT w = s64[] while(x), condition=cond, body=body
}
"""

# How long an interrupt may take to end a run (a sanitized build is slower).
BOUND = 30.0 if SANITIZED else 5.0


def test_concurrent_runs():
    # one module from 4 threads, each with its own inputs, many times: every
    # answer right
    m = hloi.load(data_path("sources", "matrix_plus_vector.hlo"))
    errors = []

    def work(k):
        g = np.random.default_rng(k)
        try:
            for _ in range(200):
                x = g.integers(-1000, 1000, (2, 3), dtype=np.int32)
                y = g.integers(-1000, 1000, 3, dtype=np.int32)
                r = m.run(x, y)
                if not np.array_equal(r, x + y):
                    errors.append((k, x, y, r))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((k, e))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_gil_released_during_a_run():
    # while a long run goes on in one thread, Python code runs in another
    m = hloi.load(SPIN)
    done = threading.Event()
    result = {}

    def run():
        try:
            m.run(np.int64(0), timeout=1.0)
        except hloi.TimeoutError:
            result["timeout"] = True
        finally:
            done.set()

    t = threading.Thread(target=run)
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert result.get("timeout")
    assert ticks > 20, "the main thread ran only %d times during a 1 s run" % ticks


def test_timeout():
    m = hloi.load(SPIN)
    start = time.monotonic()
    with pytest.raises(hloi.TimeoutError) as e:
        m.run(np.int64(0), timeout=0.3)
    took = time.monotonic() - start
    assert took < BOUND, "timeout=0.3 took %.1f s" % took
    assert str(e.value)
    # the module runs again afterwards
    assert int(hloi.load(data_path("sources", "matrix_plus_vector.hlo")).run(
        np.ones((2, 3), np.int32), np.ones(3, np.int32)).sum()) == 12


def test_sigint_interrupts_a_run():
    # Ctrl-C in the main thread during a run: KeyboardInterrupt soon after
    m = hloi.load(SPIN)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            m.run(np.int64(0))
    finally:
        timer.cancel()
    took = time.monotonic() - start
    assert took < BOUND, "SIGINT took %.1f s to end the run" % took
    # nothing is left stopped: a new run works
    r = hloi.load(data_path("sources", "matrix_plus_vector.hlo")).run(
        np.ones((2, 3), np.int32), np.ones(3, np.int32))
    assert int(r.sum()) == 12


def test_sigint_with_a_python_handler():
    # a handler of the program's own is called, and its exception ends the run
    m = hloi.load(SPIN)

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop()

    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(Stop):
            m.run(np.int64(0))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)

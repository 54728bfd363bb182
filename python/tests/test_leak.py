"""No leak: 10,000 runs of a small module leave the resident size flat."""
import os

import numpy as np
import pytest

import hloi
from conftest import SANITIZED, data_path

RUNS = 10000
# A leak of 200 bytes a run would add 2 MB over the runs.
BOUND = 2 << 20


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(SANITIZED, reason="ASan's quarantine holds freed memory (its leak check covers the C side)")
@pytest.mark.parametrize("what", ["array", "tuple", "error"])
def test_rss_flat(what):
    if what == "array":
        m = hloi.load(data_path("sources", "matrix_plus_vector.hlo"))
        args = (np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(3, dtype=np.int32))

        def once():
            m.run(*args)
    elif what == "tuple":
        m = hloi.load("HloModule t\nENTRY main {\n  x = f32[64] parameter(0)\n  n = f32[64] negate(x)\n"
                      "  ROOT t = (f32[64], (f32[64])) tuple(x, (f32[64]) tuple(n))\n}\n")
        args = (np.ones(64, np.float32),)

        def once():
            r = m.run(*args)
            assert r[1][0][0] == -1
    else:
        m = hloi.load(data_path("sources", "matrix_plus_vector.hlo"))
        bad = (np.zeros((3, 2), np.int32), np.zeros(3, np.int32))

        def once():
            try:
                m.run(*bad)
            except (ValueError, TypeError):
                pass
            else:
                raise AssertionError("a bad argument was accepted")
    for _ in range(2000):  # warm up: allocator pools, caches
        once()
    before = rss()
    for _ in range(RUNS):
        once()
    grown = rss() - before
    assert grown < BOUND, "%d runs grew the resident size by %d KiB" % (RUNS, grown >> 10)


@pytest.mark.skipif(SANITIZED, reason="ASan's quarantine holds freed memory")
def test_load_rss_flat():
    with open(data_path("sources", "matrix_plus_vector.hlo")) as f:
        text = f.read()
    for _ in range(300):
        hloi.load(text).check()
    before = rss()
    for _ in range(3000):
        hloi.load(text).check()
    grown = rss() - before
    assert grown < BOUND, "3000 loads grew the resident size by %d KiB" % (grown >> 10)

#!/usr/bin/env python3
"""The calling overhead of hloi's Python module: the time of one
`Module.run` of a 1-instruction module (f32[4] add) after `hloi.load`,
by `timeit` (the best of --repeat rounds of --number runs each), beside
the same with `out=`, `hloi.run`, NumPy's own `a + b` as the floor of any
call from Python, and the same module through the `hloi` command (a
process per run) for contrast.

Usage: PYTHONPATH=build/python /usr/bin/python3 tests/bench/python_overhead.py [--hloi build/hloi]
Prints one line per measurement, in microseconds per run, and the load
average (the machine may be shared: compare numbers of one run)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

PROGRAM = """HloModule tiny
ENTRY main {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
}
"""

# the target of the calling overhead (per run of a 1-instruction module)
TARGET_US = 20.0


TIMER = timeit.default_timer


def best_us(stmt, number, repeat, glob):
    times = timeit.repeat(stmt, number=number, repeat=repeat, globals=glob, timer=TIMER)
    return min(times) / number * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hloi", help="the hloi command, for the per-process contrast (default: none)")
    ap.add_argument("--number", type=int, default=20000, help="runs per round (default 20000)")
    ap.add_argument("--repeat", type=int, default=7, help="rounds; the best is kept (default 7)")
    ap.add_argument("--cpu", action="store_true",
                    help="time the process's CPU time (time.process_time) instead of wall time: on a loaded "
                         "machine it leaves out the time the process waits for a core (not for the "
                         "per-process contrast, whose work is in the child)")
    args = ap.parse_args()
    global TIMER
    if args.cpu:
        TIMER = time.process_time

    import hloi
    m = hloi.load(PROGRAM)
    a = np.arange(4, dtype=np.float32)
    b = np.ones(4, np.float32)
    out = np.empty(4, np.float32)
    assert np.array_equal(m.run(a, b), a + b)
    glob = {"m": m, "a": a, "b": b, "out": out, "hloi": hloi, "np": np}
    rows = [
        ("Module.run(a, b)", best_us("m.run(a, b)", args.number, args.repeat, glob)),
        ("Module.run(a, b, threads=1)", best_us("m.run(a, b, threads=1)", args.number, args.repeat, glob)),
        ("Module.run(a, b, out=out)", best_us("m.run(a, b, out=out)", args.number, args.repeat, glob)),
        ("Module.run(a, b, engine='reference')",
         best_us("m.run(a, b, engine='reference')", args.number, args.repeat, glob)),
        ("hloi.run(m, a, b)", best_us("hloi.run(m, a, b)", args.number, args.repeat, glob)),
        ("numpy a + b (floor)", best_us("a + b", args.number, args.repeat, glob)),
    ]
    if args.hloi and not args.cpu:
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "tiny.hlo")
            with open(p, "w") as f:
                f.write(PROGRAM)
            np.save(os.path.join(d, "a.npy"), a)
            np.save(os.path.join(d, "b.npy"), b)
            cmd = [args.hloi, "run", p, "--input", os.path.join(d, "a.npy"), "--input", os.path.join(d, "b.npy")]
            n = 50
            glob["cmd"] = cmd
            glob["run"] = subprocess.run
            glob["DEVNULL"] = subprocess.DEVNULL
            rows.append(("hloi run (a process each)",
                         best_us("run(cmd, check=True, stdout=DEVNULL)", n, 3, glob)))
    for name, us in rows:
        print("%-40s %10.2f us" % (name, us))
    print("timer: %s; load average: %s" % ("process CPU time" if args.cpu else "wall time",
                                          " ".join("%.2f" % x for x in os.getloadavg())))
    ok = rows[0][1] < TARGET_US
    print("target: Module.run under %.0f us: %s" % (TARGET_US, "met" if ok else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

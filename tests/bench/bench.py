#!/usr/bin/python3
"""hloi's benchmark (SPEC §9): every workload of tests/bench/*.hlo timed with
`hloi bench --json` and the same operation in NumPy, side by side in one run,
plus a plain C loop (ceiling.c) as the bandwidth ceiling and a peak-RSS check
of `hloi run`. The data-movement workloads (slice, concatenate, pad,
dynamic-update-slice, gather) are measured against the plain copy loop
(`ceiling copy`) on the bytes each must read and write. Medians of several
runs. Not run by ctest (timings belong here, not in tests).

usage: /usr/bin/python3 tests/bench/bench.py --hloi BUILD/hloi [--repeat N]
           [--iterations N] [--threads N] [--only NAME,...] [--no-rss]
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096

# name, description, SPEC §9 target: 1 time <= NumPy's; 10 >= 10x faster; 0 none (reported only)
WORKLOADS = [
    ("add", "f32 same-shape add", 1),
    ("row", "f32 + row vector {1}", 1),
    ("column", "f32 + column vector {0}", 1),
    ("scalar", "f32 + scalar", 1),
    ("outer", "f32 [4096,1]+[1,4096]", 1),
    ("colmajor", "column-major + row-major", 10),
    ("add_s32", "s32 add", 1),
    ("add_f64", "f64 add", 1),
    ("compare", "f32 compare LT -> pred", 1),
    ("divide", "f32 divide", 1),
    ("exp", "f32 exponential (np.exp)", 1),
    ("tanh", "f32 tanh (np.tanh)", 1),
    ("rsqrt", "f32 rsqrt (1 / np.sqrt)", 1),
    ("clamp", "f32 clamp, scalar bounds (np.clip)", 1),
    ("reduce_axis0", "reduce add over dim 0", 1),
    ("reduce_axis1", "reduce add over dim 1", 1),
    ("reduce_max", "reduce max over dim 1", 0),
    ("window_max", "reduce-window max 3x3", 0),
]


# Data movement (issue 14): name, what NumPy does, target >= 0.8 of the copy
# loop's bandwidth on the bytes the op must move.
MOVEMENT = [
    ("slice", "a[1:-1, ::2]"),
    ("concatenate", "np.concatenate([a, b], axis=1), 4096x2048 each"),
    ("pad", "np.pad(a, 1)"),
    ("dynamic_update_slice", "a[1024:3072, 1024:3072] = u, in place"),
    ("gather", "np.take(a, idx, axis=0), idx a permutation"),
]


def movement_case(name, tmp):
    """(NumPy expression, the same into a preallocated result, extra hloi
    bench arguments, bytes the op must read and write)."""
    rng = np.random.default_rng(42)
    f = lambda *s: rng.integers(-64, 64, size=s).astype(np.float32) / 8
    if name == "slice":
        a = f(N, N)
        o = np.empty((N - 2, N // 2), dtype=np.float32)
        return (lambda: a[1:-1, ::2].copy()), (lambda: np.copyto(o, a[1:-1, ::2])), [], a.nbytes + o.nbytes
    if name == "concatenate":
        a, b = f(N, N // 2), f(N, N // 2)
        o = np.empty((N, N), dtype=np.float32)
        return ((lambda: np.concatenate([a, b], axis=1)), (lambda: np.concatenate([a, b], axis=1, out=o)), [],
                a.nbytes + b.nbytes + o.nbytes)
    if name == "pad":
        a = f(N, N)
        o = np.zeros((N + 2, N + 2), dtype=np.float32)

        def into():
            o[1:-1, 1:-1] = a
        return (lambda: np.pad(a, 1)), into, [], a.nbytes + o.nbytes
    if name == "dynamic_update_slice":
        a, u = f(N, N), f(N // 2, N // 2)

        def assign():
            a[1024:3072, 1024:3072] = u
        return assign, assign, [], 2 * u.nbytes
    if name == "gather":
        a = f(N, N)
        idx = rng.permutation(N).astype(np.int32)
        o = np.empty((N, N), dtype=np.float32)
        files = [os.path.join(tmp, "gather_a.npy"), os.path.join(tmp, "gather_idx.npy")]
        np.save(files[0], a)
        np.save(files[1], idx)
        return ((lambda: np.take(a, idx, axis=0)), (lambda: np.take(a, idx, axis=0, out=o)),
                ["--input", files[0], "--input", files[1]], a.nbytes + idx.nbytes + o.nbytes)
    raise ValueError(name)


def numpy_case(name):
    """The operation in NumPy, with its inputs made once: (expression, the
    same writing into a preallocated result with out=)."""
    rng = np.random.default_rng(42)
    f = lambda *s: rng.integers(-64, 64, size=s).astype(np.float32) / 8
    if name == "add":
        a, b = f(N, N), f(N, N)
    elif name == "row":
        a, b = f(N, N), f(N)
    elif name == "column":
        a, b = f(N, N), f(N)[:, None]
    elif name == "scalar":
        a, b = f(N, N), np.float32(1.5)
    elif name == "outer":
        a, b = f(N, 1), f(1, N)
    elif name == "colmajor":
        a, b = np.asfortranarray(f(N, N)), f(N, N)
    elif name == "add_s32":
        a = rng.integers(-8, 9, size=(N, N), dtype=np.int32)
        b = rng.integers(-8, 9, size=(N, N), dtype=np.int32)
    elif name == "add_f64":
        a, b = f(N, N).astype(np.float64), f(N, N).astype(np.float64)
    elif name == "compare":
        a, b = f(N, N), f(N, N)
        o = np.empty((N, N), dtype=np.bool_)
        return (lambda: a < b), (lambda: np.less(a, b, out=o))
    elif name in ("reduce_axis0", "reduce_axis1", "reduce_max"):
        a = f(N, N)
        axis = 0 if name == "reduce_axis0" else 1
        o = np.empty(N, dtype=np.float32)
        if name == "reduce_max":
            return (lambda: a.max(axis=axis)), (lambda: np.max(a, axis=axis, out=o))
        return (lambda: a.sum(axis=axis)), (lambda: np.sum(a, axis=axis, out=o))
    elif name == "window_max":
        from numpy.lib.stride_tricks import sliding_window_view
        a = f(N, N)
        o = np.empty((N - 2, N - 2), dtype=np.float32)
        v = sliding_window_view(a, (3, 3))
        return (lambda: v.max(axis=(2, 3))), (lambda: np.max(v, axis=(2, 3), out=o))
    elif name == "divide":
        a, b = f(N, N), f(N, N)
        b[b == 0] = 1
        o = np.empty((N, N), dtype=np.float32)
        return (lambda: a / b), (lambda: np.divide(a, b, out=o))
    elif name in ("exp", "tanh", "rsqrt", "clamp"):
        a = f(N, N)
        if name == "rsqrt":
            a = np.abs(a) + np.float32(0.125)
        o = np.empty((N, N), dtype=np.float32)
        if name == "exp":
            return (lambda: np.exp(a)), (lambda: np.exp(a, out=o))
        if name == "tanh":
            return (lambda: np.tanh(a)), (lambda: np.tanh(a, out=o))
        if name == "rsqrt":
            return (lambda: 1 / np.sqrt(a)), (lambda: np.divide(1, np.sqrt(a, out=o), out=o))
        return (lambda: np.clip(a, -1, 1)), (lambda: np.clip(a, -1, 1, out=o))
    else:
        raise ValueError(name)
    o = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=np.result_type(a, b))
    return (lambda: a + b), (lambda: np.add(a, b, out=o))


# Contractions: name, description, target as a throughput ratio NumPy time /
# hloi time (SPEC §9: dot >= 0.8 of NumPy's `a @ b`; issue 15: convolution
# >= 0.5 of the same convolution written with NumPy). NumPy calls the same
# OpenBLAS (Debian's libblas.so.3 alternative once libopenblas-dev is in);
# set OPENBLAS_NUM_THREADS alike for both sides.
CONTRACTIONS = [
    ("dot_1024", "f32 [1024,1024] x [1024,1024]; a @ b", 0.8),
    ("dot_batched", "f32 [64,128,128] x [64,128,128]; a @ b", 0.8),
    ("conv2d", "f32 NHWC [8,56,56,64] * HWIO 3x3x64x64, pad 1; sliding_window_view + tensordot", 0.5),
    ("conv2d_nchw", "f32 NCHW [8,64,56,56] * OIHW 64x64x3x3, pad 1; the same on NCHW", 0.5),
]


def contraction_case(name):
    """The contraction in NumPy, with its inputs made once."""
    from numpy.lib.stride_tricks import sliding_window_view
    rng = np.random.default_rng(42)
    f = lambda *s: rng.standard_normal(s, dtype=np.float32)
    if name == "dot_1024":
        a, b = f(1024, 1024), f(1024, 1024)
        return lambda: a @ b
    if name == "dot_batched":
        a, b = f(64, 128, 128), f(64, 128, 128)
        return lambda: a @ b
    if name == "conv2d":
        x, k = f(8, 56, 56, 64), f(3, 3, 64, 64)

        def conv():
            w = sliding_window_view(np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))), (3, 3), axis=(1, 2))
            return np.tensordot(w, k, axes=([4, 5, 3], [0, 1, 2]))
        return conv
    if name == "conv2d_nchw":
        x, k = f(8, 64, 56, 56), f(64, 64, 3, 3)

        def conv():
            w = sliding_window_view(np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
            return np.ascontiguousarray(np.tensordot(w, k, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2))
        return conv
    raise ValueError(name)


def contraction_rows(args, only):
    rows = []
    for name, desc, target in CONTRACTIONS:
        if only and name not in only:
            continue
        prog = os.path.join(HERE, name + ".hlo")
        fn = contraction_case(name)
        ht, nt = [], []
        for _ in range(args.repeat):  # interleaved, so both see the same machine
            ht.append(time_hloi(args.hloi, prog, args.iterations, args.threads)["median_s"])
            nt.append(time_numpy(fn, args.iterations))
        del fn
        rows.append((name, desc, statistics.median(ht), statistics.median(nt), target))
    return rows


def print_contractions(rows):
    if not rows:
        return
    print()
    print("Contractions (OPENBLAS_NUM_THREADS=%s): throughput ratio = NumPy ms / hloi ms" % (
        os.environ.get("OPENBLAS_NUM_THREADS", "unset")))
    print()
    print("| workload | hloi ms | NumPy ms | ratio | target | met |")
    print("|---|---:|---:|---:|---|---|")
    for name, desc, h, n, target in rows:
        print("| %s (%s) | %.2f | %.2f | %.2f | >= %.1f | %s |" % (
            name, desc, h * 1e3, n * 1e3, n / h, target, "yes" if n / h >= target else "NO"))


def time_numpy(fn, iterations, warmup=2):
    for _ in range(warmup):
        r = fn()
        del r
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        r = fn()
        times.append(time.perf_counter() - t0)
        del r
    return statistics.median(times)


def time_hloi(hloi, prog, iterations, threads, fresh=False, extra=()):
    cmd = [hloi, "bench", prog, "--iterations", str(iterations), "--warmup", "2", "--json"] + list(extra)
    if fresh:
        cmd.append("--fresh-result")
    if threads is not None:
        cmd += ["--threads", str(threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ceiling(tmp, iterations, mode="add"):
    exe = os.path.join(tmp, "ceiling")
    if not os.path.exists(exe):
        subprocess.run(["cc", "-std=c11", "-O2", os.path.join(HERE, "ceiling.c"), "-o", exe], check=True)
    out = subprocess.run([exe, str(iterations), mode], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def transpose_probe(tmp, iterations):
    exe = os.path.join(tmp, "transpose_probe")
    subprocess.run(["cc", "-std=c11", "-O2", "-pthread", os.path.join(HERE, "transpose_probe.c"), "-o", exe],
                   check=True)
    out = subprocess.run([exe, str(iterations)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def max_rss(cmd):
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1)) * 1024 if p.returncode == 0 and m else None


def peak_rss(hloi, tmp):
    """Peak RSS on add.hlo (two 4096x4096 f32 inputs and the result): of
    `hloi run ... --output r.npy` with random inputs and with .npy inputs,
    and of one evaluation alone (`hloi bench --iterations 1 --warmup 0`),
    with the total size of inputs + result."""
    prog = os.path.join(HERE, "add.hlo")
    out = os.path.join(tmp, "r.npy")
    run = max_rss([hloi, "run", prog, "--random-inputs", "--output", out])
    rng = np.random.default_rng(1)
    files = []
    for name in ("a.npy", "b.npy"):
        files += ["--input", os.path.join(tmp, name)]
        np.save(files[-1], rng.standard_normal((N, N), dtype=np.float32))
    run_npy = max_rss([hloi, "run", prog] + files + ["--output", out])
    ev = max_rss([hloi, "bench", prog, "--iterations", "1", "--warmup", "0"])
    return {"run": run, "run_npy": run_npy, "eval": ev, "size": 3 * N * N * 4}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hloi", required=True, help="the hloi binary (a Release build)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per workload (median taken)")
    ap.add_argument("--iterations", type=int, default=7, help="timed iterations per run")
    ap.add_argument("--threads", type=int, default=None, help="hloi --threads (default: all cores)")
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--no-rss", action="store_true", help="skip the peak-RSS check")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None

    with tempfile.TemporaryDirectory() as tmp:
        ceil = statistics.median(ceiling(tmp, args.iterations)["gbps"] for _ in range(args.repeat))
        probe = None
        if not only or "colmajor" in only:
            probe = statistics.median(transpose_probe(tmp, args.iterations)["median_s"] for _ in range(args.repeat))
        rows = []
        threads = None
        for name, desc, target in WORKLOADS:
            if only and name not in only:
                continue
            prog = os.path.join(HERE, name + ".hlo")
            fn, fn_out = numpy_case(name)
            ht, hf, nt, no, gb = [], [], [], [], []
            for _ in range(args.repeat):  # interleaved, so both see the same machine
                j = time_hloi(args.hloi, prog, args.iterations, args.threads)
                threads = j["threads"]
                ht.append(j["median_s"])
                gb.append(j["gbps"])
                nt.append(time_numpy(fn, args.iterations))
                hf.append(time_hloi(args.hloi, prog, args.iterations, args.threads, fresh=True)["median_s"])
                no.append(time_numpy(fn_out, args.iterations))
            del fn, fn_out
            med = statistics.median
            rows.append((name, desc, med(ht), med(nt), med(gb), target, med(hf), med(no)))
        mrows = []
        copy_gbps = []
        for name, desc in MOVEMENT:
            if only and name not in only:
                continue
            prog = os.path.join(HERE, name + ".hlo")
            fn, fn_out, extra, moved = movement_case(name, tmp)
            ht, nt, no, cg = [], [], [], []
            for _ in range(args.repeat):  # interleaved with the copy loop and NumPy
                cg.append(ceiling(tmp, args.iterations, "copy")["gbps"])
                j = time_hloi(args.hloi, prog, args.iterations, args.threads, extra=extra)
                threads = j["threads"]
                ht.append(j["median_s"])
                nt.append(time_numpy(fn, args.iterations))
                no.append(time_numpy(fn_out, args.iterations))
            del fn, fn_out
            copy_gbps += cg
            med = statistics.median
            mrows.append((name, desc, med(ht), med(nt), med(no), moved, med(cg)))
        crows = contraction_rows(args, only)
        rss = None if args.no_rss else peak_rss(args.hloi, tmp)

    print("hloi bench — %s, %s, %d cores, NumPy %s, hloi threads %s" % (
        datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), platform.processor() or platform.machine(),
        os.cpu_count(), np.__version__, threads))
    print("medians of %d runs x %d iterations; plain C loop (cc -O2, 1 thread, f32 add): %.1f GB/s" % (
        args.repeat, args.iterations, ceil))
    print()
    print("hloi: `hloi bench` (steady state: runs write into the first run's result); NumPy: the")
    print("expression (a new result each time). Targets (SPEC §9) on those two, and hloi's GB/s >= 0.85")
    print("of the C loop's. For reference: hloi with --fresh-result (page faults of a new result")
    print("included, as one `hloi run` pays) and NumPy writing into a preallocated result (out=).")
    print()
    print("| workload | hloi ms | NumPy ms | NumPy/hloi | target | met | hloi GB/s | of C loop (>= 0.85) "
          "| hloi fresh ms | NumPy out= ms |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for name, desc, h, n, gbps, target, hf, no in rows:
        ratio = n / h
        tgt = "-" if target == 0 else "<= NumPy" if target == 1 else ">= %dx faster" % target
        met = "-" if target == 0 else "yes" if ratio >= target else "NO"
        cl = gbps / ceil
        print("| %s (%s) | %.2f | %.2f | %.2f | %s | %s | %.1f | %.2f %s | %.2f | %.2f |" % (
            name, desc, h * 1e3, n * 1e3, ratio, tgt, met, gbps, cl, "yes" if cl >= 0.85 else "NO",
            hf * 1e3, no * 1e3))
    if mrows:
        print()
        print("Data movement (issue 14): hloi GB/s on the bytes each op must read and write, against the")
        print("plain copy loop o[i] = a[i] (ceiling.c copy, 1 thread, %.1f GB/s median) measured alongside;" % (
            statistics.median(copy_gbps)))
        print("target >= 0.8 of it. NumPy: the expression (slices copied with .copy()), and out= / in place.")
        print()
        print("| workload | hloi ms | NumPy ms | NumPy/hloi | hloi GB/s | of copy loop (>= 0.8) | NumPy out= ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, desc, h, n, no, moved, cg in mrows:
            gbps = moved / h / 1e9
            frac = gbps / cg
            print("| %s (%s) | %.2f | %.2f | %.2f | %.1f | %.2f %s | %.2f |" % (
                name, desc, h * 1e3, n * 1e3, n / h, gbps, frac, "yes" if frac >= 0.8 else "NO", no * 1e3))
    print_contractions(crows)
    if probe:
        print()
        print("colmajor by hand (transpose_probe.c: fused 4x4 SSE transposes, 128x128 tiles, 2 threads): "
              "%.2f ms, %.1f GB/s = %.2f of the C loop" % (probe * 1e3, 3 * N * N * 4 / probe / 1e9,
                                                          3 * N * N * 4 / probe / 1e9 / ceil))
    if rss:
        size = rss["size"]
        print()
        for label, used in (("hloi run add.hlo --random-inputs --output r.npy", rss["run"]),
                            ("hloi run add.hlo --input a.npy --input b.npy --output r.npy", rss["run_npy"]),
                            ("hloi bench add.hlo --iterations 1 --warmup 0", rss["eval"])):
            if used is None:
                print("peak RSS of `%s`: failed" % label)
                continue
            print("peak RSS of `%s`: %.1f MiB for %.1f MiB of inputs + result (%.2fx; target <= 1.10x: %s)" % (
                label, used / 2**20, size / 2**20, used / size, "yes" if used <= 1.1 * size else "NO"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""hloi's benchmark (doc/spec.md §9, issue 13): every workload of tests/bench/*.hlo
timed with `hloi bench --json` and the same computation in NumPy, side by
side in one run, against the limit: the bytes of the workload's parameters
and result moved at the bandwidth of a plain C loop o[i] = a[i] + b[i]
(ceiling.c) on as many threads as hloi uses. Medians of several runs,
interleaved so that every column sees the same machine. Not run by ctest
(timings belong here, not in tests). The data-movement workloads (slice,
concatenate, pad, dynamic-update-slice, gather) are measured against the
plain copy loop (`ceiling copy`) on the bytes each must read and write; the
contractions (dot, convolution) against NumPy's.

Columns: hloi steady (`hloi bench`: runs after the first write into its
result, hloi_module_run_into), hloi fresh (--fresh-result: a new result per
run, page faults included), NumPy's expression (a new array each time),
NumPy with out= (into preallocated arrays, NumPy's steady state), the limit,
hloi steady's fraction of the limit, NumPy expression / hloi steady, and the
planned peak memory beyond parameters + result (`peak_bytes` of
`hloi bench --json`: the engine's scratch, intermediates if any).

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

import blas_env  # noqa: F401  (before NumPy: its OpenBLAS kernels)
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
N = 4096

# name, description, kind, target
#   kind "op": a single op (doc/spec.md §9 and issue 13): >= 0.8 of the limit and
#              not slower than NumPy out=
#   kind "layout": a layout change: >= `x` times NumPy's expression,
#              not slower than NumPy out=, >= 0.5 of the limit
#   kind "fused": >= 0.7 of the limit and >= `x` times the NumPy expression
#              (and for a*b+c not slower than NumPy out=)
#   kind "reduce": a reduction (doc/spec.md §9): not slower than NumPy's expression
#              (x = 1), or reported only (x = 0)
WORKLOADS = [
    ("add", "f32 same-shape add", "op", 1),
    ("row", "f32 + row vector {1}", "op", 1),
    ("column", "f32 + column vector {0}", "op", 1),
    ("scalar", "f32 + scalar", "op", 1),
    ("outer", "f32 [4096,1]+[1,4096]", "op", 1),
    ("add_s32", "s32 add", "op", 1),
    ("add_f64", "f64 add", "op", 1),
    ("compare", "f32 compare LT -> pred", "op", 1),
    ("divide", "f32 divide", "op", 1),
    ("convert", "convert f32 -> s32", "op", 1),
    ("select", "select(compare(a,b,GT), a, b)", "op", 1),
    ("broadcast", "broadcast f32[4096] -> rows", "op", 1),
    ("iota", "iota f32, iota_dimension=1", "op", 1),
    ("exp", "f32 exponential (np.exp)", "op", 1),
    ("tanh", "f32 tanh (np.tanh)", "op", 1),
    ("rsqrt", "f32 rsqrt (1 / np.sqrt)", "op", 1),
    ("clamp", "f32 clamp, scalar bounds (np.clip)", "op", 1),
    ("colmajor", "column-major + row-major", "layout", 10),
    ("transpose", "transpose(a), dimensions={1,0}", "layout", 5),
    ("copy_layout", "copy to layout {0,1}", "layout", 5),
    ("mul_add", "a*b + c", "fused", 2),
    ("layernorm", "(x - mu) * rs * g + b", "fused", 5),
    ("relu6", "max(min(x, 6), 0)", "fused", 1),
    ("cubic", "((x*c3 + c2)*x + c1)*x + c0", "fused", 4),
    ("reduce_axis0", "reduce add over dim 0", "reduce", 1),
    ("reduce_axis1", "reduce add over dim 1", "reduce", 1),
    ("reduce_max", "reduce max over dim 1", "reduce", 0),
    ("sum_bf16_axis0", "bf16 -> f32 reduce add over dim 0", "reduce", 1),
    ("sum_bf16_axis1", "bf16 -> f32 reduce add over dim 1", "reduce", 1),
    ("sum_f16_axis1", "f16 -> f32 reduce add over dim 1", "reduce", 1),
    ("window_max", "reduce-window max 3x3", "reduce", 0),
    ("pool_nhwc", "max-pool 3x3/2 pad 1, f32 NHWC [8,112,112,64]", "reduce", 1),
    ("sort_rows", "sort f32 [1024,4096] rows (np.sort)", "reduce", 1),
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
    """The computation in NumPy, with its inputs made once: (expression, the
    same writing into preallocated results with out=, or None)."""
    rng = np.random.default_rng(42)
    f = lambda *s: rng.integers(-64, 64, size=s).astype(np.float32) / 8
    f32 = np.float32
    o = np.empty((N, N), dtype=np.float32)
    if name in ("add", "row", "column", "scalar", "outer", "colmajor", "add_s32", "add_f64"):
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
        else:
            a, b = f(N, N).astype(np.float64), f(N, N).astype(np.float64)
        out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=np.result_type(a, b))
        return (lambda: a + b), (lambda: np.add(a, b, out=out))
    if name == "compare":
        a, b = f(N, N), f(N, N)
        m = np.empty((N, N), dtype=np.bool_)
        return (lambda: a < b), (lambda: np.less(a, b, out=m))
    if name in ("reduce_axis0", "reduce_axis1", "reduce_max"):
        a = f(N, N)
        axis = 0 if name == "reduce_axis0" else 1
        r = np.empty(N, dtype=np.float32)
        if name == "reduce_max":
            return (lambda: a.max(axis=axis)), (lambda: np.max(a, axis=axis, out=r))
        return (lambda: a.sum(axis=axis)), (lambda: np.sum(a, axis=axis, out=r))
    if name in ("sum_bf16_axis0", "sum_bf16_axis1"):
        # NumPy has no bf16: the same values as the f32 they widen to
        a = f(N, N)
        axis = 0 if name == "sum_bf16_axis0" else 1
        r = np.empty(N, dtype=np.float32)
        return (lambda: a.sum(axis=axis)), (lambda: np.sum(a, axis=axis, out=r))
    if name == "sum_f16_axis1":
        a = f(N, N).astype(np.float16)
        r = np.empty(N, dtype=np.float32)
        return (lambda: a.sum(axis=1, dtype=np.float32)), (lambda: np.sum(a, axis=1, dtype=np.float32, out=r))
    if name == "window_max":
        from numpy.lib.stride_tricks import sliding_window_view
        a = f(N, N)
        r = np.empty((N - 2, N - 2), dtype=np.float32)
        v = sliding_window_view(a, (3, 3))
        return (lambda: v.max(axis=(2, 3))), (lambda: np.max(v, axis=(2, 3), out=r))
    if name == "pool_nhwc":
        from numpy.lib.stride_tricks import sliding_window_view
        x = rng.standard_normal((8, 112, 112, 64), dtype=np.float32)
        p = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        r = np.empty((8, 56, 56, 64), dtype=np.float32)
        v = sliding_window_view(p, (3, 3), axis=(1, 2))[:, ::2, ::2]
        return (lambda: v.max(axis=(4, 5))), (lambda: np.max(v, axis=(4, 5), out=r))
    if name == "sort_rows":
        a = rng.standard_normal((1024, N), dtype=np.float32)
        return (lambda: np.sort(a, axis=1)), None
    if name == "divide":
        a, b = f(N, N), f(N, N)
        b[b == 0] = 1
        return (lambda: a / b), (lambda: np.divide(a, b, out=o))
    if name in ("exp", "tanh", "rsqrt", "clamp"):
        a = f(N, N)
        if name == "rsqrt":
            a = np.abs(a) + np.float32(0.125)
        if name == "exp":
            return (lambda: np.exp(a)), (lambda: np.exp(a, out=o))
        if name == "tanh":
            return (lambda: np.tanh(a)), (lambda: np.tanh(a, out=o))
        if name == "rsqrt":
            return (lambda: 1 / np.sqrt(a)), (lambda: np.divide(1, np.sqrt(a, out=o), out=o))
        return (lambda: np.clip(a, -1, 1)), (lambda: np.clip(a, -1, 1, out=o))
    if name == "convert":
        a = f(N, N)
        oi = np.empty((N, N), dtype=np.int32)
        return (lambda: a.astype(np.int32)), (lambda: np.copyto(oi, a, casting="unsafe"))
    if name == "select":
        a, b = f(N, N), f(N, N)
        m = np.empty((N, N), dtype=np.bool_)

        def out_select():
            np.greater(a, b, out=m)
            np.copyto(o, b)
            np.copyto(o, a, where=m)
        return (lambda: np.where(a > b, a, b)), out_select
    if name == "broadcast":
        v = f(N)
        return (lambda: np.broadcast_to(v, (N, N)).copy()), (lambda: np.copyto(o, v))
    if name == "iota":
        return (lambda: np.tile(np.arange(N, dtype=np.float32), (N, 1))), \
            (lambda: np.copyto(o, np.arange(N, dtype=np.float32)))
    if name == "transpose":
        a = f(N, N)
        return (lambda: np.ascontiguousarray(a.T)), (lambda: np.copyto(o, a.T))
    if name == "copy_layout":
        a = f(N, N)
        of = np.empty((N, N), dtype=np.float32, order="F")
        return (lambda: np.asfortranarray(a)), (lambda: np.copyto(of, a))
    if name == "mul_add":
        a, b, c = f(N, N), f(N, N), f(N, N)

        def out_mul_add():
            np.multiply(a, b, out=o)
            np.add(o, c, out=o)
        return (lambda: a * b + c), out_mul_add
    if name == "layernorm":
        x, mu, rs, g, b = f(N, N), f(N), f(N), f(N), f(N)
        muc, rsc = mu[:, None], rs[:, None]

        def out_layernorm():
            np.subtract(x, muc, out=o)
            np.multiply(o, rsc, out=o)
            np.multiply(o, g, out=o)
            np.add(o, b, out=o)
        return (lambda: (x - muc) * rsc * g + b), out_layernorm
    if name == "relu6":
        x = f(N, N)

        def out_relu6():
            np.minimum(x, f32(6), out=o)
            np.maximum(o, f32(0), out=o)
        return (lambda: np.maximum(np.minimum(x, f32(6)), f32(0))), out_relu6
    if name == "cubic":
        x = f(N, N)
        c3, c2, c1, c0 = f32(0.5), f32(-1.25), f32(2), f32(0.75)

        def out_cubic():
            np.multiply(x, c3, out=o)
            np.add(o, c2, out=o)
            np.multiply(o, x, out=o)
            np.add(o, c1, out=o)
            np.multiply(o, x, out=o)
            np.add(o, c0, out=o)
        return (lambda: ((x * c3 + c2) * x + c1) * x + c0), out_cubic
    raise ValueError(name)


# Contractions: name, description, target as a throughput ratio NumPy time /
# hloi time (doc/spec.md §9: dot >= 0.8 of NumPy's `a @ b`; issue 15: convolution
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


# Batch norm (doc/performance.md): name, what it computes, the passes over
# x's bytes the op needs at least (training: x read for the sums, then x
# read and y written; inference: x read, y written; grad: x and dy read for
# the sums, then x and dy read and dx written). The limit: those bytes at
# the add loop's bandwidth. NumPy's peer computes the same formulas (XLA's
# BatchNormExpander: var = E[x^2] - E[x]^2) over the other axes, in the
# element type (bf16: f32 arrays, NumPy has no bf16).
NORMS = [
    ("bn_training", "batch-norm-training f32 NCHW [32,32,112,112], feature_index=1", 3),
    ("bn_training_nhwc", "batch-norm-training f32 NHWC [32,112,112,32], feature_index=3", 3),
    ("bn_training_bf16", "batch-norm-training bf16 NCHW [32,32,112,112], feature_index=1", 3),
    ("bn_inference", "batch-norm-inference f32 NCHW [32,32,112,112], feature_index=1", 2),
    ("bn_grad", "batch-norm-grad f32 NCHW [32,32,112,112], feature_index=1", 5),
    ("bn_grad_nhwc", "batch-norm-grad f32 NHWC [32,112,112,32], feature_index=3", 5),
]


def norm_case(name):
    """The batch norm in NumPy, with its inputs made once: (the computation,
    the bytes of x)."""
    rng = np.random.default_rng(42)
    nhwc = name.endswith("_nhwc")
    shape = (32, 112, 112, 32) if nhwc else (32, 32, 112, 112)
    fi = 3 if nhwc else 1
    axes = tuple(d for d in range(4) if d != fi)
    bshape = [1] * 4
    bshape[fi] = 32
    eps = np.float32(0.001)
    x = rng.standard_normal(shape, dtype=np.float32)
    scale, offset, mean = (rng.standard_normal(32, dtype=np.float32).reshape(bshape) for _ in range(3))
    var = (rng.random(32, dtype=np.float32) + 0.5).reshape(bshape)
    n = np.float32(x.size // 32)
    if name.startswith("bn_training"):
        def training():
            m = x.mean(axis=axes, keepdims=True)
            v = np.square(x).mean(axis=axes, keepdims=True) - m * m
            s = scale / np.sqrt(v + eps)
            return x * s + (offset - m * s), m, v
        return training, x.nbytes
    if name == "bn_inference":
        s = scale / np.sqrt(var + eps)
        return (lambda: x * s + (offset - mean * s)), x.nbytes
    dy = rng.standard_normal(shape, dtype=np.float32)

    def grad():
        r = 1 / np.sqrt(var + eps)
        c = x - mean
        sdc = (dy * c).sum(axis=axes, keepdims=True)
        sd = dy.sum(axis=axes, keepdims=True)
        return scale * r * (n * dy - sd - c * (sdc / (var + eps))) / n, sdc * r, sd
    return grad, x.nbytes


def norm_rows(args, only, ceil_exe):
    rows = []
    for name, desc, passes in NORMS:
        if only and name not in only:
            continue
        prog = os.path.join(HERE, name + ".hlo")
        fn, xbytes = norm_case(name)
        if name.endswith("_bf16"):
            xbytes //= 2
        ht, nt, lim = [], [], []
        for _ in range(args.repeat):  # interleaved with NumPy and the add loop
            j = time_hloi(args.hloi, prog, args.iterations, args.threads)
            ht.append(j["median_s"])
            nt.append(time_numpy(fn, args.iterations))
            lim.append(passes * xbytes / (ceiling(ceil_exe, args.iterations, j["threads"])["gbps"] * 1e9))
        del fn
        rows.append((name, desc, statistics.median(ht), statistics.median(nt), statistics.median(lim),
                     passes * xbytes))
    return rows


def print_norms(rows):
    if not rows:
        return
    print()
    print("Batch norm: the limit is the bytes of the passes the op needs (training 3, inference 2, grad 5")
    print("times x's bytes) at the add loop's bandwidth. Reported only.")
    print()
    print("| workload | hloi ms | NumPy ms | NumPy / hloi | limit ms | of limit | hloi GB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, desc, h, n, lim, moved in rows:
        print("| %s (%s) | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
            name, desc, h * 1e3, n * 1e3, n / h, lim * 1e3, lim / h, moved / h / 1e9))


# Collectives among several participants (threads of one hloi process, each
# with the same inputs): name, what each participant computes, the NumPy
# expression that does the work of all of them. Reported only: no target
# yet (doc/performance.md, Benchmarks).
COLLECTIVES = [
    ("all_reduce", "all-reduce sum over 4 replicas of f32[2^22]; 4 x (x0 + x1 + x2 + x3)"),
    ("all_gather", "all-gather over 4 replicas of f32[2^22]; 4 x np.concatenate of 4"),
]


def collective_case(name):
    """What the participants of the collective compute together, in NumPy:
    each of the 4 participants' result, from inputs made once."""
    rng = np.random.default_rng(42)
    xs = [rng.standard_normal(1 << 22, dtype=np.float32) for _ in range(4)]
    if name == "all_reduce":
        return lambda: [xs[0] + xs[1] + xs[2] + xs[3] for _ in range(4)]
    if name == "all_gather":
        return lambda: [np.concatenate(xs) for _ in range(4)]
    raise ValueError(name)


def collective_rows(args, only):
    rows = []
    for name, desc in COLLECTIVES:
        if only and name not in only:
            continue
        prog = os.path.join(HERE, name + ".hlo")
        fn = collective_case(name)
        ht, nt, gb = [], [], []
        for _ in range(args.repeat):  # interleaved, so both see the same machine
            j = time_hloi(args.hloi, prog, args.iterations, args.threads)
            ht.append(j["median_s"])
            gb.append(j["gbps"])
            nt.append(time_numpy(fn, args.iterations))
        del fn
        rows.append((name, desc, statistics.median(ht), statistics.median(nt), statistics.median(gb)))
    return rows


# Inputs from .npy files in another layout than the parameter's: hloi bench
# stores each in its parameter's layout once, before the timed runs, so they
# time as generated inputs do (target: within 10%).
FILE_INPUTS = [
    ("colmajor", "column-major + row-major, both from row-major .npy files"),
]


def file_input_rows(args, only, tmp):
    rows = []
    for name, desc in FILE_INPUTS:
        if only and name not in only:
            continue
        prog = os.path.join(HERE, name + ".hlo")
        rng = np.random.default_rng(7)
        files = []
        for k in range(2):
            f = os.path.join(tmp, "%s_in%d.npy" % (name, k))
            np.save(f, rng.standard_normal((N, N), dtype=np.float32), allow_pickle=False)
            files += ["--input", f]
        gen, npy = [], []
        for _ in range(args.repeat):  # interleaved
            gen.append(time_hloi(args.hloi, prog, args.iterations, args.threads, extra=["--random-inputs"])["median_s"])
            npy.append(time_hloi(args.hloi, prog, args.iterations, args.threads, extra=files)["median_s"])
        rows.append((name, desc, statistics.median(gen), statistics.median(npy)))
    return rows


def print_file_inputs(rows):
    if not rows:
        return
    print()
    print("Inputs from .npy files in another layout than the parameter's, against generated ones")
    print("(hloi bench converts them once, before the timed runs); target: within 10%.")
    print()
    print("| workload | generated ms | .npy ms | .npy / generated | met |")
    print("|---|---:|---:|---:|---|")
    for name, desc, g, n in rows:
        print("| %s (%s) | %.2f | %.2f | %.2f | %s |" % (name, desc, g * 1e3, n * 1e3, n / g,
                                                       "yes" if n / g <= 1.1 else "NO"))


def print_collectives(rows):
    if not rows:
        return
    print()
    print("Collectives: every participant a thread of one hloi process, a run all of them; GB/s on every")
    print("participant's inputs and result; NumPy does the same work on one thread. Reported only.")
    print()
    print("| workload | hloi ms | hloi GB/s | NumPy ms | NumPy / hloi |")
    print("|---|---:|---:|---:|---:|")
    for name, desc, h, n, gb in rows:
        print("| %s (%s) | %.2f | %.1f | %.2f | %.2f |" % (name, desc, h * 1e3, gb, n * 1e3, n / h))


def contraction_rows(args, only):
    rows = []
    for name, desc, target in CONTRACTIONS:
        if only and name not in only:
            continue
        prog = os.path.join(HERE, name + ".hlo")
        if not os.path.exists(prog):
            continue
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


def build(tmp, name):
    exe = os.path.join(tmp, name)
    subprocess.run(["cc", "-std=c11", "-O2", "-pthread", os.path.join(HERE, name + ".c"), "-o", exe], check=True)
    return exe


def ceiling(exe, iterations, threads, mode="add"):
    out = subprocess.run([exe, str(iterations), str(threads), mode], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def max_rss(cmd):
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1)) * 1024 if p.returncode == 0 and m else None


def peak_rss(hloi, tmp):
    """Peak RSS of `hloi run add.hlo ... --output r.npy` with random inputs
    and with .npy inputs, and of one evaluation alone of add.hlo and of the
    fused layernorm.hlo (`hloi bench --iterations 1 --warmup 0`), with the
    bytes of their inputs + result."""
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
    ln = max_rss([hloi, "bench", os.path.join(HERE, "layernorm.hlo"), "--iterations", "1", "--warmup", "0"])
    return [("hloi run add.hlo --random-inputs --output r.npy", run, 3 * N * N * 4),
            ("hloi run add.hlo --input a.npy --input b.npy --output r.npy", run_npy, 3 * N * N * 4),
            ("hloi bench add.hlo --iterations 1 --warmup 0", ev, 3 * N * N * 4),
            ("hloi bench layernorm.hlo --iterations 1 --warmup 0", ln, 2 * N * N * 4 + 4 * N * 4)]


def verdict(kind, target, frac, speedup, h, no):
    """Whether the issue's targets are met, and what they are."""
    if kind == "op":
        tgt = ">= 0.8 limit, <= out="
        ok = frac >= 0.8 and (no is None or h <= no)
    elif kind == "layout":
        tgt = ">= %dx NumPy, >= 0.5 limit" % target
        ok = speedup >= target and frac >= 0.5 and (no is None or h <= no)
    elif kind == "reduce":
        if target == 0:
            return "-", "-"
        tgt = "<= NumPy"
        ok = speedup >= 1
    else:
        tgt = ">= 0.7 limit" + (", >= %dx NumPy" % target if target > 1 else "")
        ok = frac >= 0.7 and speedup >= target
    return tgt, "yes" if ok else "NO"


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
    med = statistics.median

    with tempfile.TemporaryDirectory() as tmp:
        ceil_exe, probe_exe = build(tmp, "ceiling"), build(tmp, "transpose_probe")
        rows, threads, ceils, probes = [], None, [], []
        for name, desc, kind, target in WORKLOADS:
            if only and name not in only:
                continue
            prog = os.path.join(HERE, name + ".hlo")
            fn, fn_out = numpy_case(name)
            ht, hf, nt, no, lim = [], [], [], [], []
            peak = nbytes = 0
            for _ in range(args.repeat):  # interleaved, so every column sees the same machine
                j = time_hloi(args.hloi, prog, args.iterations, args.threads)
                threads, nbytes, peak = j["threads"], j["bytes"], j.get("peak_bytes", 0)
                ht.append(j["median_s"])
                nt.append(time_numpy(fn, args.iterations))
                hf.append(time_hloi(args.hloi, prog, args.iterations, args.threads, fresh=True)["median_s"])
                if fn_out:
                    no.append(time_numpy(fn_out, args.iterations))
                c = ceiling(ceil_exe, args.iterations, threads)
                ceils.append(c["gbps"])
                lim.append(nbytes / (c["gbps"] * 1e9))
                if name == "colmajor":
                    probes.append(ceiling(probe_exe, args.iterations, threads)["median_s"])
            del fn, fn_out
            rows.append((name, desc, kind, target, med(ht), med(hf), med(nt), med(no) if no else None, med(lim),
                         peak, nbytes))
        mrows, copy_gbps = [], []
        for name, desc in MOVEMENT:
            if only and name not in only:
                continue
            prog = os.path.join(HERE, name + ".hlo")
            fn, fn_out, extra, moved = movement_case(name, tmp)
            ht, nt, no, cg = [], [], [], []
            for _ in range(args.repeat):  # interleaved with the copy loop and NumPy
                j = time_hloi(args.hloi, prog, args.iterations, args.threads, extra=extra)
                threads = j["threads"]
                cg.append(ceiling(ceil_exe, args.iterations, threads, "copy")["gbps"])
                ht.append(j["median_s"])
                nt.append(time_numpy(fn, args.iterations))
                no.append(time_numpy(fn_out, args.iterations))
            del fn, fn_out
            copy_gbps += cg
            mrows.append((name, desc, med(ht), med(nt), med(no), moved, med(cg)))
        crows = contraction_rows(args, only)
        krows = collective_rows(args, only)
        frows = file_input_rows(args, only, tmp)
        nrows = norm_rows(args, only, ceil_exe)
        rss = None if args.no_rss else peak_rss(args.hloi, tmp)

    print("hloi bench — %s, %s, %d cores, NumPy %s, hloi threads %s" % (
        datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), platform.processor() or platform.machine(),
        os.cpu_count(), np.__version__, threads))
    if ceils:
        print("medians of %d runs x %d iterations; the limit's C loop (cc -O2, %s threads, f32 add): %.1f GB/s" % (
            args.repeat, args.iterations, threads, med(ceils)))
    if rows:
        print()
        print("| workload | hloi ms | hloi fresh ms | NumPy ms | NumPy out= ms | limit ms | of limit | NumPy / hloi "
              "| target | met | peak beyond params + result |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for name, desc, kind, target, h, hf, n, no, lim, peak, nbytes in rows:
        frac, speedup = lim / h, n / h
        tgt, met = verdict(kind, target, frac, speedup, h, no)
        extra = peak - nbytes if peak else None
        print("| %s (%s) | %.2f | %.2f | %.2f | %s | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            name, desc, h * 1e3, hf * 1e3, n * 1e3, "%.2f" % (no * 1e3) if no else "–", lim * 1e3, frac, speedup,
            tgt, met, "%.1f KiB" % (extra / 1024) if extra is not None else "?"))
    if mrows:
        print()
        print("Data movement (issue 14): hloi GB/s on the bytes each op must read and write, against the")
        print("plain copy loop o[i] = a[i] (ceiling.c copy, %s threads, %.1f GB/s median) measured alongside;" % (
            threads, med(copy_gbps)))
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
    print_collectives(krows)
    print_file_inputs(frows)
    print_norms(nrows)
    if probes:
        p = med(probes)
        print()
        print("colmajor by hand (transpose_probe.c: fused 4x4 SSE transposes, 128x128 tiles, 2 threads): "
              "%.2f ms = %.2f of the limit" % (p * 1e3, 3 * N * N * 4 / (med(ceils) * 1e9) / p))
    if rss:
        print()
        for label, used, size in rss:
            if used is None:
                print("peak RSS of `%s`: failed" % label)
                continue
            print("peak RSS of `%s`: %.1f MiB for %.1f MiB of inputs + result (%.2fx)" % (
                label, used / 2**20, size / 2**20, used / size))
    return 0


if __name__ == "__main__":
    sys.exit(main())

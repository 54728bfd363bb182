#!/usr/bin/python3
"""Differential test of hloi's batch-norm-inference, -training and -grad
against NumPy: random shapes (rank 1 to 4, size-1 dimensions; one case in
twenty of 40K to 120K elements, so that the fast engine's sums take several
chunks or blocks), every feature_index, f32, f64, bf16 and f16 (bf16 as
.npy `<u2` bits), epsilons, operands in random layouts, both engines.
Expected values: XLA's formulas (BatchNormExpander) in float64 from the
inputs as stored, with epsilon rounded to the element type; training's
variance is E[x^2] - E[x]^2. hloi computes in double and rounds once:
results agree within 1e-4 (f32; 1e-3 for grad, which cancels), 1e-9 (f64),
8e-3 (bf16; 1.6e-2 for grad) or 1e-3 (f16; 2e-3 for grad) of the largest
magnitude: a few units of the rounding into the type.

usage: numpy_batchnorm.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys
import warnings

try:
    import numpy as np
except ImportError:
    print("numpy_batchnorm: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

warnings.simplefilter("ignore")  # NaN from a zero variance with epsilon 0 is compared as NaN

NP = {"f32": np.float32, "f64": np.float64, "bf16": np.uint16, "f16": np.float16}
TOL = {"f32": (1e-4, 1e-3), "f64": (1e-9, 1e-9), "bf16": (8e-3, 1.6e-2), "f16": (1e-3, 2e-3)}


def to_bf16(a):
    """float64 values rounded to bf16 (to nearest even, through float32:
    the values made here are far from a tie), as uint16 bits."""
    a = np.asarray(a, dtype=np.float32)
    u = np.atleast_1d(a).view(np.uint32).astype(np.uint64)
    s = np.uint64(16)
    return ((u + np.uint64(0x7fff) + ((u >> s) & np.uint64(1))) >> s).astype(np.uint16).reshape(a.shape)


def from_bf16(b):
    b = np.asarray(b)
    return (np.atleast_1d(b).astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(b.shape)


def stored(a, t):
    """a in type t as written to the .npy file."""
    return to_bf16(a) if t == "bf16" else a.astype(NP[t])


def value(a, t):
    """What a stored array holds, in float64."""
    return (from_bf16(a) if t == "bf16" else a).astype(np.float64)


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    t = rng.choice(list(NP))
    op = rng.choice(["batch-norm-training", "batch-norm-inference", "batch-norm-grad"])
    if index % 20 == 19:
        dims = list(rng.choice([[2, 3, 120, 80], [4, 50, 50, 8], [3, 30000], [40000, 2], [64, 33, 7, 5]]))
    else:
        dims = [rng.choice([1, 2, 3, 5, 8]) for _ in range(rng.randint(1, 4))]
    fi = rng.randrange(len(dims))
    nf = dims[fi]
    eps = rng.choice([0.001, 1e-5, 0.1, 0.0])
    x = stored(g.standard_normal(dims) * 3 + 1, t)
    scale = stored(g.standard_normal(nf), t)
    offset = stored(g.standard_normal(nf), t)
    mean = stored(g.standard_normal(nf), t)
    var = stored(g.random(nf) + 0.5, t)
    dy = stored(g.standard_normal(dims), t)
    inputs = {"batch-norm-training": [x, scale, offset],
              "batch-norm-inference": [x, scale, offset, mean, var],
              "batch-norm-grad": [x, scale, mean, var, dy]}[op]
    perm = list(range(len(dims) - 1, -1, -1))
    if rng.random() < 0.4:
        rng.shuffle(perm)
    sh = "%s[%s]" % (t, ",".join(map(str, dims)))
    params = ["  x = %s{%s} parameter(0)" % (sh, ",".join(map(str, perm)))]
    for k in range(1, len(inputs)):
        params.append("  p%d = %s[%s] parameter(%d)" % (k, t, ",".join(map(str, inputs[k].shape)), k))
    names = ["x"] + ["p%d" % k for k in range(1, len(inputs))]
    program = "HloModule bn_%d\nENTRY e {\n%s\n  ROOT r = %s(%s), epsilon=%r, feature_index=%d\n}\n" % (
        index, "\n".join(params), op, ", ".join(names), eps, fi)
    return {"index": index, "type": t, "op": op, "fi": fi, "eps": eps, "inputs": inputs, "program": program,
            "engine": rng.choice(["fast", "reference"])}


def expected(c):
    t = c["type"]
    v = [value(a, t) for a in c["inputs"]]
    x, fi = v[0], c["fi"]
    eps = float(value(stored(np.float32(c["eps"]), t), t))  # XLA holds epsilon as a float
    axes = tuple(d for d in range(x.ndim) if d != fi)
    shape = [1] * x.ndim
    shape[fi] = x.shape[fi]

    def b(a):
        return a.reshape(shape)

    n = x.size // x.shape[fi]
    if c["op"] == "batch-norm-training":
        mean = x.mean(axis=axes)
        var = (x * x).mean(axis=axes) - mean * mean
        s = v[1] / np.sqrt(var + eps)
        return [x * b(s) + b(v[2] - mean * s), mean, var]
    if c["op"] == "batch-norm-inference":
        s = v[1] / np.sqrt(v[4] + eps)
        return [x * b(s) + b(v[2] - v[3] * s)]
    scale, mean, var, dy = v[1], v[2], v[3], v[4]
    r = 1 / np.sqrt(var + eps)
    cc = x - b(mean)
    sdc = (dy * cc).sum(axis=axes)
    sd = dy.sum(axis=axes)
    dx = b(scale * r) * (n * dy - b(sd) - cc * b(sdc / (var + eps))) / n
    return [dx, sdc * r, sd]


def check(c, got):
    want = expected(c)
    if len(got) != len(want):
        return "got %d results, expected %d" % (len(got), len(want))
    t = c["type"]
    tol = TOL[t][1 if c["op"] == "batch-norm-grad" else 0]
    for k, (g, w) in enumerate(zip(got, want)):
        if g.dtype != NP[t] or g.shape != w.shape:
            return "result %d: got %s%s, expected %s%s" % (k, g.dtype, g.shape, t, w.shape)
        g = value(g, t)
        if np.any(np.isnan(g) != np.isnan(w)):
            i = tuple(np.argwhere(np.isnan(g) != np.isnan(w))[0])
            return "result %d at %s: got %r, expected %r" % (k, i, g[i], w[i])
        finite = np.isfinite(w)
        if np.any(np.isinf(w) & (g != w)):
            return "result %d: infinities differ" % k
        g, w = g[finite], w[finite]
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        err = np.abs(g - w)
        if np.any(err > tol * scale):
            i = tuple(np.argwhere(err > tol * scale)[0])
            return "result %d at %s: got %r, expected %r" % (k, i, g[i], w[i])
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_batchnorm", gen_case, check, 600))

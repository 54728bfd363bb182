#!/usr/bin/python3
"""Differential test of hloi's mixed precision (--allow-mixed-precision)
against NumPy: compare (every direction), clamp and the binary ops add,
multiply, maximum and subtract of two float operands of different types
(f16, f32, f64), and clamp of bounds of other float types. XLA infers the
higher precision type (HigherPrecisionElementType); hloi converts the
operands to it (compare: to the higher of its operand types, its result
pred; clamp: to x's type) and computes there. NumPy's promotion of f16,
f32 and f64 is the same rule, so the expected value is NumPy's operation
on the operands converted to that type. Random shapes (rank 0 to 3), NaNs,
infinities and values equal across the two types; both engines; results
compared bit for bit.

usage: numpy_mixed.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_mixed: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
RANK = {"f16": 0, "f32": 1, "f64": 2}
DIRS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
        "GE": np.greater_equal}
BINARY = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "subtract": np.subtract}


def values(g, dims, t, like=None):
    """Random values of type t; some equal to `like` (another type's
    values), some NaN or infinite."""
    x = (g.standard_normal(dims) * 4).astype(NP[t])
    if like is not None:
        same = g.random(dims) < 0.3
        x = np.where(same, like.astype(NP[t]), x)
    special = g.random(dims)
    x = np.where(special < 0.05, np.nan, x)
    x = np.where((special >= 0.05) & (special < 0.08), np.inf, x)
    x = np.where((special >= 0.08) & (special < 0.1), -np.inf, x)
    return np.asarray(x, dtype=NP[t])


def text(t, dims):
    return "%s[%s]" % (t, ",".join(map(str, dims)))


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    dims = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
    ta, tb = rng.sample(sorted(NP), 2)
    hi = ta if RANK[ta] > RANK[tb] else tb
    a = values(g, dims, ta)
    b = values(g, dims, tb, like=a)
    kind = rng.choice(["compare", "binary", "clamp"])
    c = {"index": index, "engine": rng.choice(["fast", "reference"]), "options": ["--allow-mixed-precision"]}
    if kind == "compare":
        d = rng.choice(sorted(DIRS))
        body = "  ROOT r = %s compare(a, b), direction=%s\n" % (text("pred", dims), d)
        want = DIRS[d](a.astype(NP[hi]), b.astype(NP[hi]))
        inputs, params = [a, b], [(ta, "a"), (tb, "b")]
    elif kind == "binary":
        op = rng.choice(sorted(BINARY))
        body = "  ROOT r = %s %s(a, b)\n" % (text(hi, dims), op)
        with np.errstate(all="ignore"):
            want = BINARY[op](a.astype(NP[hi]), b.astype(NP[hi]))
        inputs, params = [a, b], [(ta, "a"), (tb, "b")]
    else:
        tx = rng.choice(sorted(NP))
        x = values(g, dims, tx, like=a)
        lo_dims = dims if rng.random() < 0.5 else []
        lo = values(g, lo_dims, ta) - NP[ta](2)
        hi_b = values(g, lo_dims, tb) + NP[tb](2)
        body = "  ROOT r = %s clamp(lo, x, hi)\n" % text(tx, dims)
        want = np.minimum(np.maximum(x, lo.astype(NP[tx])), hi_b.astype(NP[tx]))
        inputs = [lo, x, hi_b]
        params = [(ta, "lo", lo_dims), (tx, "x", dims), (tb, "hi", lo_dims)]
        c["program"] = "HloModule mixed_%d\n\nENTRY e {\n%s%s}\n" % (
            index, "".join("  %s = %s parameter(%d)\n" % (n, text(t, dd), k) for k, (t, n, dd) in enumerate(params)),
            body)
        c["inputs"], c["want"] = inputs, np.asarray(want)
        return c
    c["program"] = "HloModule mixed_%d\n\nENTRY e {\n%s%s}\n" % (
        index, "".join("  %s = %s parameter(%d)\n" % (n, text(t, dims), k) for k, (t, n) in enumerate(params)), body)
    c["inputs"], c["want"] = inputs, np.asarray(want)
    return c


def check(c, got):
    want = c["want"]
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s%s, expected %s%s" % (got.dtype, list(got.shape), want.dtype, list(want.shape))
    if want.dtype == np.bool_:
        same = got == want
    else:
        same = (got == want) | (np.isnan(got) & np.isnan(want))
    if not np.all(same):
        i = int(np.argwhere(~same.reshape(-1))[0][0])
        return "element %d: got %r, expected %r (inputs %s)" % (
            i, got.reshape(-1)[i], want.reshape(-1)[i],
            ", ".join(repr(np.asarray(x).reshape(-1)[i if np.asarray(x).size > 1 else 0]) for x in c["inputs"]))
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_mixed", gen_case, lambda c, got: check(c, got[0]) if got else "no result", 600))

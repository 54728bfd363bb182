#!/usr/bin/python3
"""Differential test of hloi's dynamic dimensions against NumPy: random
programs whose parameters have `<=N` dimensions, each given a .npy input of
a random size up to its bound (0 included), through dot (contracting over
a dynamic dimension, whose padding must add nothing, or keeping one), a
reduce over a dynamic dimension, a slice taking a dynamic dimension whole
and part of a static one, a reshape and an elementwise op; both engines,
run in one `hloi test`. Expected values: NumPy on the arrays as given (the
elements within the sizes); results with `<=N` dimensions are written at
their sizes. Sums agree within 1e-4 relative to the sum of magnitudes.

usage: numpy_dynamic.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_dynamic: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    kind = rng.choice(["contract", "keep", "reduce", "slice", "reshape"])
    m, k, n = rng.randint(1, 5), rng.randint(1, 6), rng.randint(1, 4)
    size = rng.randint(0, k)
    body, inputs, expect = "", [], None
    if kind == "contract":
        a, b = g.standard_normal((m, size)), g.standard_normal((k, n))
        body = ("  a = f32[%d,<=%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                "  ROOT d = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                % (m, k, k, n, m, n))
        inputs, expect = [a, b], a @ b[:size]
    elif kind == "keep":
        a, b = g.standard_normal((size, m)), g.standard_normal((m, n))
        body = ("  a = f32[<=%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                "  ROOT d = f32[<=%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                % (k, m, m, n, k, n))
        inputs, expect = [a, b], a @ b
    elif kind == "reduce":
        x = g.standard_normal((m, size))
        body = ("  x = f32[%d,<=%d] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[%d] reduce(x, z), dimensions={1}, to_apply=add\n" % (m, k, m))
        inputs, expect = [x], x.sum(axis=1)
    elif kind == "slice":
        x = g.standard_normal((size, m))
        s = rng.randint(0, m - 1)
        e = rng.randint(s + 1, m)
        body = ("  x = f32[<=%d,%d] parameter(0)\n  y = f32[<=%d,%d] negate(x)\n"
                "  ROOT s = f32[<=%d,%d] slice(y), slice={[0:%d], [%d:%d]}\n" % (k, m, k, m, k, e - s, k, s, e))
        inputs, expect = [x], -x[:, s:e]
    else:
        x = g.standard_normal((size,))
        body = "  x = f32[<=%d] parameter(0)\n  ROOT r = f32[1,<=%d] reshape(x)\n" % (k, k)
        inputs, expect = [x], x.reshape(1, size)
    program = "HloModule dyn_%d\n\n%sENTRY e {\n%s}\n" % (index, ADD if kind == "reduce" else "", body)
    return {"index": index, "kind": kind, "program": program,
            "inputs": [v.astype(np.float32) for v in inputs], "expect": expect,
            "engine": rng.choice(["fast", "reference"])}


def check(c, got):
    y, want = got[0], c["expect"]
    if y.shape != want.shape:
        return "shape %s, expected %s" % (y.shape, want.shape)
    tol = 1e-4 * (1 + np.abs(want).max(initial=0) * 8)
    err = np.abs(y.astype(np.float64) - want).max(initial=0)
    if err > tol:
        return "max error %g > %g:\n got %s\n want %s" % (err, tol, y, want)
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_dynamic", gen_case, check, 300))

#!/usr/bin/python3
"""Differential test of hloi's `?` (unbounded dynamic) dimensions against
NumPy: random programs whose parameters have `?` dimensions, each given a
.npy input of a random size (0 included), through an elementwise op whose
other operand has 1 there (it broadcasts along the `?`), concatenate, pad,
transpose, slice, dot (contracting over a `?` dimension or keeping one) and
reduce; `?` operands into called computations whose parameters are `?`
(call from two sites of different sizes, fusion, a while loop carrying
one, conditional branches of their own sizes, async chains whose
async-updates bring the `?` operands, XLA's newer syntax) and
dynamic-reshape to `?`
dimensions (sizes the run knows, and a size computed); both engines, run
in one `hloi test`. The run checks each module
again with its inputs' sizes, so results print and are written at those
sizes. Sums agree within 1e-4 relative to the largest magnitude.

usage: numpy_unbounded.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_unbounded: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases
from numpy_dynamic import ADD, check  # the same reducer and comparison


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    kind = rng.choice(["add", "concat", "pad", "transpose", "slice", "contract", "keep", "reduce",
                       "call", "fusion", "while", "cond", "reshape", "async"])
    m, n = rng.randint(1, 5), rng.randint(1, 4)
    size, size2 = rng.randint(0, 6), rng.randint(0, 6)
    if kind == "add":
        x, y = g.standard_normal((size, m)), g.standard_normal((1, m))
        body = ("  x = f32[?,%d] parameter(0)\n  y = f32[1,%d] parameter(1)\n"
                "  ROOT s = f32[?,%d] add(x, y)\n" % (m, m, m))
        inputs, expect = [x, y], x + y
    elif kind == "concat":
        x, y = g.standard_normal((size, m)), g.standard_normal((size2, m))
        body = ("  x = f32[?,%d] parameter(0)\n  y = f32[?,?] parameter(1)\n"
                "  ROOT c = f32[?,%d] concatenate(x, y), dimensions={0}\n" % (m, m))
        inputs, expect = [x, y], np.concatenate([x, y])
    elif kind == "pad":
        x = g.standard_normal((m, size))
        lo, hi, inner = rng.randint(0, 2), rng.randint(0, 2), rng.randint(0, 1)
        body = ("  x = f32[%d,?] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT p = f32[%d,?] pad(x, z), padding=0_0x%d_%d_%d\n" % (m, m, lo, hi, inner))
        cols = size + max(size - 1, 0) * inner + lo + hi
        want = np.zeros((m, cols))
        if size:
            want[:, lo:lo + size + (size - 1) * inner:inner + 1] = x
        inputs, expect = [x], want
    elif kind == "transpose":
        x = g.standard_normal((size, m))
        body = "  x = f32[?,%d] parameter(0)\n  ROOT t = f32[%d,?] transpose(x), dimensions={1,0}\n" % (m, m)
        inputs, expect = [x], x.T
    elif kind == "slice":
        x = g.standard_normal((size + 2, m))
        body = ("  x = f32[?,%d] parameter(0)\n"
                "  ROOT s = f32[2,%d] slice(x), slice={[%d:%d], [0:%d]}\n" % (m, m, size, size + 2, m))
        inputs, expect = [x], x[size:size + 2]
    elif kind == "contract":
        a, b = g.standard_normal((m, size)), g.standard_normal((size, n))
        body = ("  a = f32[%d,?] parameter(0)\n  b = f32[?,%d] parameter(1)\n"
                "  ROOT d = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                % (m, n, m, n))
        inputs, expect = [a, b], a @ b
    elif kind == "keep":
        a, b = g.standard_normal((size, m)), g.standard_normal((m, n))
        body = ("  a = f32[?,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                "  ROOT d = f32[?,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                % (m, m, n, n))
        inputs, expect = [a, b], a @ b
    elif kind == "reduce":
        x = g.standard_normal((m, size))
        body = ("  x = f32[%d,?] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[%d] reduce(x, z), dimensions={1}, to_apply=add\n" % (m, m))
        inputs, expect = [x], x.sum(axis=1)
    elif kind in ("call", "fusion"):
        # one callee, two call sites of their own sizes
        x, y = g.standard_normal((size, m)), g.standard_normal((size2, m))
        site = ("call(%s), to_apply=f" if kind == "call" else "fusion(%s), kind=kLoop, calls=f")
        body = ("  x = f32[?,%d] parameter(0)\n  y = f32[?,%d] parameter(1)\n"
                "  a = f32[?,%d] %s\n  b = f32[?,%d] %s\n"
                "  ROOT t = (f32[?,%d], f32[?,%d]) tuple(a, b)\n"
                % (m, m, m, site % "x", m, site % "y", m, m))
        callee = ("f {\n  p = f32[?,%d] parameter(0)\n  q = f32[?,%d] multiply(p, p)\n"
                  "  ROOT r = f32[?,%d] add(q, p)\n}\n\n" % (m, m, m))
        inputs, expect = [x, y], [x * x + x, y * y + y]
    elif kind == "while":
        x, k = g.standard_normal((size, m)), rng.randint(0, 3)
        st = "(s32[], f32[?,%d])" % m
        callee = ("cond {\n  s = %s parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                  "  k = s32[] constant(%d)\n  ROOT lt = pred[] compare(i, k), direction=LT\n}\n\n"
                  "body {\n  s = %s parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                  "  x = f32[?,%d] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
                  "  j = s32[] add(i, one)\n  y = f32[?,%d] add(x, x)\n  ROOT r = %s tuple(j, y)\n}\n\n"
                  % (st, k, st, m, m, st))
        body = ("  x = f32[?,%d] parameter(0)\n  zero = s32[] constant(0)\n  s = %s tuple(zero, x)\n"
                "  w = %s while(s), condition=cond, body=body\n"
                "  ROOT r = f32[?,%d] get-tuple-element(w), index=1\n" % (m, st, st, m))
        inputs, expect = [x], x * 2.0 ** k
    elif kind == "cond":
        x, y, i = g.standard_normal((size, m)), g.standard_normal((size2,)), rng.randint(0, 2)
        callee = ADD + ("b0 {\n  p = f32[?,%d] parameter(0)\n  z = f32[] constant(0)\n"
                        "  ROOT s = f32[] reduce(p, z), dimensions={0,1}, to_apply=add\n}\n\n"
                        "b1 {\n  p = f32[?] parameter(0)\n  z = f32[] constant(0)\n"
                        "  s = f32[] reduce(p, z), dimensions={0}, to_apply=add\n"
                        "  ROOT n = f32[] negate(s)\n}\n\n" % m)
        body = ("  x = f32[?,%d] parameter(0)\n  y = f32[?] parameter(1)\n  i = s32[] constant(%d)\n"
                "  ROOT c = f32[] conditional(i, x, y), branch_computations={b0, b1}\n" % (m, i))
        inputs, expect = [x, y], np.array(x.sum() if i == 0 else -y.sum())
    elif kind == "async":
        # XLA's newer async syntax: async-updates bring `?` operands after
        # the start, one defined before it (y) and one after (z); f reached
        # by two chains of their own sizes, and call-start()'s computation
        x, y = g.standard_normal((size, m)), g.standard_normal((size2, m))
        t = "f32[?,%d]" % m
        callee = ("f {\n  p0 = %s parameter(0)\n  p1 = %s parameter(1)\n  q = %s multiply(p0, p0)\n"
                  "  ROOT c = %s concatenate(q, p1), dimensions={0}\n}\n\n" % (t, t, t, t))
        body = ("  x = {t} parameter(0)\n  y = {t} parameter(1)\n"
                "  sa = (({t}), {t}, s32[]) async-start(x), calls=f\n"
                "  va = (({t}, {t}), {t}, s32[]) async-update(sa, y)\n  ea = {t} async-done(va)\n"
                "  sb = ((), (), s32[]) async-start(), calls=f\n  vb = (({t}), (), s32[]) async-update(sb, y)\n"
                "  z = {t} negate(x)\n  vc = (({t}, {t}), (), s32[]) async-update(vb, z)\n"
                "  eb = {t} async-done(vc)\n"
                "  cs = ((), (), s32[]) call-start(), to_apply={{\n    a = {t} parameter(0)\n"
                "    b = {t} parameter(1)\n    ROOT m = {t} multiply(a, b)\n  }}\n"
                "  cu = (({t}), (), s32[]) call-update(cs, z)\n  w = {t} add(z, z)\n"
                "  cv = (({t}, {t}), (), s32[]) call-update(cu, w)\n  cd = {t} call-done(cv)\n"
                "  ROOT r = ({t}, {t}, {t}) tuple(ea, eb, cd)\n").format(t=t)
        inputs = [x, y]
        expect = [np.concatenate([x * x, y]), np.concatenate([y * y, -x]), 2 * x * x]
    else:
        # dynamic-reshape: sizes the run knows (a constant, get-dimension-size
        # of the sized dimension), and one computed (rows * m)
        x = g.standard_normal((size, m))
        body = ("  x = f32[?,%d] parameter(0)\n  rows = s32[] get-dimension-size(x), dimensions={0}\n"
                "  m = s32[] constant(%d)\n  t = f32[?,?] dynamic-reshape(x, m, rows)\n"
                "  n = s32[] multiply(rows, m)\n  flat = f32[?] dynamic-reshape(x, n)\n"
                "  ROOT out = (f32[?,?], f32[?]) tuple(t, flat)\n" % (m, m))
        inputs, expect = [x], [x.reshape(m, size), x.reshape(-1)]
    if kind not in ("call", "fusion", "while", "cond", "async"):
        callee = ADD if kind == "reduce" else ""
    program = "HloModule unb_%d\n\n%sENTRY e {\n%s}\n" % (index, callee, body)
    return {"index": index, "kind": kind, "program": program,
            "inputs": [v.astype(np.float32) for v in inputs], "expect": expect,
            "engine": rng.choice(["fast", "reference"])}


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_unbounded", gen_case, check, 300))

#!/usr/bin/python3
"""Differential test of hloi's dynamic dimensions against NumPy: random
programs whose parameters have `<=N` dimensions, each given a .npy input of
a random size up to its bound (0 included), through dot (contracting over
a dynamic dimension, whose padding must add nothing, or keeping one), a
reduce over a dynamic dimension, a slice taking a dynamic dimension whole
and part of a static one, a reshape and an elementwise op, concatenate
(the second operand right after the first one's size), pad (edge and
interior), sort (with a second operand), reverse, reduce-window, a
variadic reduce, a convolution over a dynamic input feature dimension,
a while loop carrying a dynamic value, map, fusion, scatter (indices and
updates of their own sizes, some indices out of bounds),
select-and-scatter (the padding never selected) and XLA's
DynamicConvolutionInputGrad and DynamicConvolutionKernelGrad custom-calls
(the gradients of a 1-D or 2-D convolution with PADDING_SAME or
PADDING_VALID, stride and dilation over an input of `<=N` sizes, written as TensorFlow
writes them for the bounds; expected: the gradients of the convolution
over the input's elements within its size, by explicit loops); both engines,
run in one `hloi test`. Expected values: NumPy on the arrays as given (the
elements within the sizes); results with `<=N` dimensions are written at
their sizes. Sums agree within 1e-4 relative to the sum of magnitudes.

usage: numpy_dynamic.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import itertools
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_dynamic: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
LT = ("lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  ROOT l = pred[] compare(a, b), direction=LT\n}\n\n")
ADD_MAX = ("add_max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] parameter(2)\n"
           "  d = f32[] parameter(3)\n  s = f32[] add(a, c)\n  m = f32[] maximum(b, d)\n"
           "  ROOT t = (f32[], f32[]) tuple(s, m)\n}\n\n")
MUL = "mul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] multiply(a, b)\n}\n\n"
GE = "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=GE\n}\n\n"


def same_padding(n, eff, s):
    """XLA's GetWindowedOutputSize for PADDING_SAME: (outputs, padding
    before, total padding) of n elements, a window spanning eff, stride s."""
    out = -(-n // s)
    total = max(0, (out - 1) * s + eff - n)
    return out, total // 2, total


def conv_grad_case(kind, rng, g):
    """The input or kernel gradient of y[b, o, co] = sum x[b, o*s + k*dil -
    before, ci] w[k, ci, co] (1 or 2 spatial dimensions, each `<=N` or
    static) over an input of sizes n within bounds N, as TensorFlow's
    conv_op_helpers writes the custom-call for the bounds."""
    same = rng.random() < 0.6
    B, ci, co, ns = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2)
    dims = []
    for j in range(ns):
        K, s, dil, dyn = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2), j == 0 or rng.random() < 0.5
        eff = (K - 1) * dil + 1
        N = rng.randint(eff, eff + 5)
        n = rng.randint(0 if same else eff, N) if dyn else N
        if same:
            G, _, total_b = same_padding(N, eff, s)
            gsz, before, _ = same_padding(n, eff, s)
        else:
            G, total_b, gsz, before = (N - eff) // s + 1, 0, (n - eff) // s + 1, 0
        dims.append(dict(K=K, s=s, dil=dil, eff=eff, N=N, n=n, G=G, gsz=gsz, before=before, total_b=total_b,
                         le="<=" if dyn else ""))
    sp = lambda f: [d[f] for d in dims]
    x = g.standard_normal([B] + sp("n") + [ci])
    w = g.standard_normal(sp("K") + [ci, co])
    dy = g.standard_normal([B] + sp("gsz") + [co])
    taps = list(itertools.product(*[[(o, k, o * d["s"] + k * d["dil"] - d["before"]) for o in range(d["gsz"])
                                     for k in range(d["K"])] for d in dims]))
    inside = lambda t: all(0 <= i < d["n"] for (_, _, i), d in zip(t, dims))
    shp = lambda f: ",".join("%s%d" % (d["le"], d[f]) for d in dims)
    cat = lambda f, sep="x": sep.join(str(d[f]) for d in dims)
    labels = "01"[:ns]
    pad = "padding_type=" + ("PADDING_SAME" if same else "PADDING_VALID")
    if kind == "igrad":
        want = np.zeros([B] + sp("n") + [ci])
        for t in filter(inside, taps):
            o, k, i = zip(*t)
            want[(slice(None),) + i] += dy[(slice(None),) + o] @ w[k].T
        for d in dims:
            d["pb"] = d["eff"] - 1 - d["total_b"] // 2
            d["pa"] = d["N"] + d["eff"] - 1 - ((d["G"] - 1) * d["s"] + 1) - d["pb"]
        pads = "x".join("%d_%d" % (d["pb"], d["pa"]) for d in dims)
        body = ("  sizes = s32[%d] parameter(0)\n  dy = f32[%d,%s,%d] parameter(1)\n  w = f32[%s,%d,%d] parameter(2)\n"
                "  wr = f32[%s,%d,%d] reverse(w), dimensions={%s}\n"
                "  ROOT r = f32[%d,%s,%d] custom-call(sizes, dy, wr), window={size=%s pad=%s lhs_dilate=%s rhs_dilate=%s}, "
                "dim_labels=b%sf_%soi->b%sf, %s, custom_call_target=\"DynamicConvolutionInputGrad\"\n"
                % (ns + 2, B, shp("G"), co, cat("K", ","), ci, co, cat("K", ","), ci, co, ",".join(map(str, range(ns))),
                   B, shp("N"), ci, cat("K"), pads, cat("s"), cat("dil"), labels, labels, labels, pad))
        return body, [np.array([B] + sp("n") + [ci], np.int32), dy, w], want
    want = np.zeros(sp("K") + [ci, co])
    for t in filter(inside, taps):
        o, k, i = zip(*t)
        want[k] += x[(slice(None),) + i].T @ dy[(slice(None),) + o]
    for d in dims:
        ptotal = (d["G"] - 1) * d["s"] + 1 + (d["K"] - 1) * d["dil"] - d["N"]
        d["pb"] = max(ptotal // 2, 0) if same else 0
        d["pa"] = ptotal - d["pb"]
    pads = "x".join("%d_%d" % (d["pb"], d["pa"]) for d in dims)
    body = ("  x = f32[%d,%s,%d] parameter(0)\n  dy = f32[%d,%s,%d] parameter(1)\n"
            "  ROOT r = f32[%s,%d,%d] custom-call(x, dy), window={size=%s stride=%s pad=%s rhs_dilate=%s}, "
            "dim_labels=f%sb_i%so->%sbf, %s, custom_call_target=\"DynamicConvolutionKernelGrad\"\n"
            % (B, shp("N"), ci, B, shp("G"), co, cat("K", ","), ci, co, cat("G"), cat("dil"), pads, cat("s"),
               labels, labels, labels, pad))
    return body, [x, dy], want


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    kind = rng.choice(["contract", "keep", "reduce", "slice", "reshape", "concat", "pad", "sort", "reverse",
                       "rwin", "vreduce", "conv", "while", "map", "fusion", "scatter", "sas", "igrad", "kgrad"])
    m, k, n = rng.randint(1, 5), rng.randint(1, 6), rng.randint(1, 4)
    size = rng.randint(0, k)
    body, inputs, expect, loop = "", [], None, ""
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
    elif kind == "reshape":
        x = g.standard_normal((size,))
        body = "  x = f32[<=%d] parameter(0)\n  ROOT r = f32[1,<=%d] reshape(x)\n" % (k, k)
        inputs, expect = [x], x.reshape(1, size)
    elif kind == "concat":
        a, b = g.standard_normal((size, m)), g.standard_normal((n, m))
        body = ("  a = f32[<=%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                "  ROOT c = f32[<=%d,%d] concatenate(a, b), dimensions={0}\n" % (k, m, n, m, k + n, m))
        inputs, expect = [a, b], np.concatenate([a, b])
    elif kind == "pad":
        x = g.standard_normal((m, size))
        lo, hi, it = rng.randint(0, 2), rng.randint(0, 2), rng.randint(0, 2)
        want = np.zeros((m, lo + hi + size + max(size - 1, 0) * it))
        if size:
            want[:, lo:lo + (size - 1) * (it + 1) + 1:it + 1] = x
        body = ("  x = f32[%d,<=%d] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT p = f32[%d,<=%d] pad(x, z), padding=0_0x%d_%d_%d\n"
                % (m, k, m, lo + hi + k + (k - 1) * it, lo, hi, it))
        inputs, expect = [x], want
    elif kind == "sort":
        x, i = g.standard_normal((m, size)), g.integers(-9, 9, (m, size)).astype(np.int32)
        order = np.argsort(x, axis=1, kind="stable")
        body = ("  x = f32[%d,<=%d] parameter(0)\n  i = s32[%d,<=%d] parameter(1)\n"
                "  ROOT s = (f32[%d,<=%d], s32[%d,<=%d]) sort(x, i), dimensions={1}, to_apply=lt\n"
                % (m, k, m, k, m, k, m, k))
        inputs, expect = [x, i], [np.take_along_axis(x, order, 1), np.take_along_axis(i, order, 1)]
    elif kind == "reverse":
        x = g.standard_normal((size, m))
        body = "  x = f32[<=%d,%d] parameter(0)\n  ROOT r = f32[<=%d,%d] reverse(x), dimensions={0,1}\n" % (k, m, k, m)
        inputs, expect = [x], x[::-1, ::-1]
    elif kind == "rwin":
        w, st = rng.randint(1, k), rng.randint(1, 2)
        x = g.standard_normal((size,))
        nout = (size - w) // st + 1 if size >= w else 0
        body = ("  x = f32[<=%d] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[<=%d] reduce-window(x, z), window={size=%d stride=%d}, to_apply=add\n"
                % (k, (k - w) // st + 1, w, st))
        inputs, expect = [x], np.array([x[j * st:j * st + w].sum() for j in range(nout)])
    elif kind == "vreduce":
        x = g.standard_normal((m, size))
        body = ("  x = f32[%d,<=%d] parameter(0)\n  z = f32[] constant(0)\n  ninf = f32[] constant(-inf)\n"
                "  ROOT r = (f32[%d], f32[%d]) reduce(x, x, z, ninf), dimensions={1}, to_apply=add_max\n"
                % (m, k, m, m))
        inputs, expect = [x], [x.sum(axis=1), x.max(axis=1, initial=-np.inf)]
    elif kind == "conv":
        a, b = g.standard_normal((m, size)), g.standard_normal((k, n))
        body = ("  a = f32[%d,<=%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                "  ROOT c = f32[%d,%d] convolution(a, b), dim_labels=bf_io->bf\n" % (m, k, k, n, m, n))
        inputs, expect = [a, b], a @ b[:size]
    elif kind == "map":
        x = g.standard_normal((size, m))
        body = "  x = f32[<=%d,%d] parameter(0)\n  ROOT r = f32[<=%d,%d] map(x, x), dimensions={0,1}, to_apply=mul\n" % (
            k, m, k, m)
        inputs, expect = [x], x * x
    elif kind == "fusion":
        x = g.standard_normal((m, size))
        body = ("  x = f32[%d,<=%d] parameter(0)\n  ROOT r = f32[%d,<=%d] fusion(x), kind=kLoop, calls=fused\n"
                % (m, k, m, k))
        loop = ("fused {\n  p = f32[%d,<=%d] parameter(0)\n  n = f32[%d,<=%d] negate(p)\n"
                "  ROOT r = f32[%d,<=%d] multiply(n, p)\n}\n\n" % ((m, k) * 3))
        inputs, expect = [x], -x * x
    elif kind == "scatter":
        j = rng.randint(1, 5)
        si, su = rng.randint(0, j), rng.randint(0, j)
        a, u = g.standard_normal((size,)), g.standard_normal((su,))
        idx = g.integers(0, k + 2, (si, 1)).astype(np.int32)
        want = a.copy()
        for t in range(min(si, su)):
            if idx[t, 0] < size:
                want[idx[t, 0]] += u[t]
        body = ("  a = f32[<=%d] parameter(0)\n  i = s32[<=%d,1] parameter(1)\n  u = f32[<=%d] parameter(2)\n"
                "  ROOT s = f32[<=%d] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n" % (k, j, j, k))
        inputs, expect = [a, idx, u], want
    elif kind == "sas":
        w = rng.randint(1, k)
        nb = (k - w) // w + 1
        x, src = g.standard_normal((size,)), g.standard_normal((nb,))
        want = np.zeros(size)
        for t in range((size - w) // w + 1 if size >= w else 0):
            want[t * w + int(np.argmax(x[t * w:(t + 1) * w]))] += src[t]
        body = ("  x = f32[<=%d] parameter(0)\n  src = f32[%d] parameter(1)\n  z = f32[] constant(0)\n"
                "  ROOT s = f32[<=%d] select-and-scatter(x, src, z), window={size=%d stride=%d}, select=ge, scatter=add\n"
                % (k, nb, k, w, w))
        inputs, expect = [x, src], want
    elif kind in ("igrad", "kgrad"):
        body, inputs, expect = conv_grad_case(kind, rng, g)
    else:
        x = g.standard_normal((size, m))
        body = ("  x = f32[<=%d,%d] parameter(0)\n  z = s32[] constant(0)\n"
                "  t = (s32[], f32[<=%d,%d]) tuple(z, x)\n"
                "  w = (s32[], f32[<=%d,%d]) while(t), condition=cond, body=body\n"
                "  ROOT r = f32[<=%d,%d] get-tuple-element(w), index=1\n" % (k, m, k, m, k, m, k, m))
        loop = ("cond {\n  s = (s32[], f32[<=%d,%d]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  two = s32[] constant(2)\n  ROOT c = pred[] compare(i, two), direction=LT\n}\n\n"
                "body {\n  s = (s32[], f32[<=%d,%d]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  v = f32[<=%d,%d] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n"
                "  j = s32[] add(i, one)\n  d = f32[<=%d,%d] add(v, v)\n"
                "  ROOT t = (s32[], f32[<=%d,%d]) tuple(j, d)\n}\n\n" % ((k, m) * 5))
        inputs, expect = [x], 4 * x
    comps = {"reduce": ADD, "rwin": ADD, "sort": LT, "vreduce": ADD_MAX, "map": MUL, "scatter": ADD,
             "sas": GE + ADD, "while": loop if kind == "while" else "", "fusion": loop if kind == "fusion" else ""}
    program = "HloModule dyn_%d\n\n%sENTRY e {\n%s}\n" % (index, comps.get(kind, ""), body)
    return {"index": index, "kind": kind, "program": program,
            "inputs": [v if v.dtype == np.int32 else v.astype(np.float32) for v in inputs], "expect": expect,
            "engine": rng.choice(["fast", "reference"])}


def check(c, got):
    wants = c["expect"] if isinstance(c["expect"], list) else [c["expect"]]
    if len(got) != len(wants):
        return "%d results, expected %d" % (len(got), len(wants))
    for y, want in zip(got, wants):
        if y.shape != want.shape:
            return "shape %s, expected %s" % (y.shape, want.shape)
        finite = np.isfinite(want)
        if not np.array_equal(np.isfinite(y), finite) or not np.array_equal(y[~finite], want[~finite]):
            return "non-finite values differ:\n got %s\n want %s" % (y, want)
        tol = 1e-4 * (1 + np.abs(want[finite]).max(initial=0) * 8)
        err = np.abs(y[finite].astype(np.float64) - want[finite]).max(initial=0)
        if err > tol:
            return "max error %g > %g:\n got %s\n want %s" % (err, tol, y, want)
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_dynamic", gen_case, check, 300))

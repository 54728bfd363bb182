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

Reducers of another float type than their operands (reduce, reduce-window,
scatter, map; XLA's VerifyReducerShape ignores floating-point precision):
the computation runs in its own types, each value converted on entry to
its parameter's type and the result converted to where it is kept (reduce:
the reducer's type; reduce-window: the init value's; scatter: the
operand's; map: the computation's), then to a declared type of another
float precision. Emulated in NumPy step by step in XLA's order (f16 ops in
NumPy round once, as hloi's), on finite values. scan, whose computation XLA
asks for its values' exact types, takes an input of one float type into a
carry of another (two float types among its operands, which the option
allows), the computation converting the input itself, and a declared
result of a third.

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


REDUCERS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum}


def reducer(tr, op):
    return "red {\n  p = %s[] parameter(0)\n  q = %s[] parameter(1)\n  ROOT r = %s[] %s(p, q)\n}\n\n" % (
        tr, tr, tr, op)


def finite(g, dims, t):
    """Values of type t around 1, whose sums and products round."""
    return np.asarray((g.standard_normal(dims) * 0.75 + 1).astype(NP[t]), dtype=NP[t])


def fold(acc, xs, f, tr):
    """acc = f(acc, x) for each x of xs in turn, in type tr."""
    for x in xs:
        acc = f(acc, np.asarray(x).astype(NP[tr])).astype(NP[tr])
    return acc


def gen_reducer_case(rng, g, index):
    tx, tr = rng.sample(sorted(NP), 2)
    ti, td = rng.choice(sorted(NP)), rng.choice(sorted(NP))
    op = rng.choice(sorted(REDUCERS))
    f = REDUCERS[op]
    kind = rng.choice(["reduce", "reduce-window", "scatter", "map", "scan"])
    if kind == "scan":
        return gen_scan_case(rng, g, index, tx, tr, td, op)
    c = {"index": index, "engine": rng.choice(["fast", "reference"]), "options": ["--allow-mixed-precision"]}
    with np.errstate(all="ignore"):
        if kind == "reduce":
            dims = [rng.randint(1, 5) for _ in range(rng.randint(1, 3))]
            rdims = sorted(rng.sample(range(len(dims)), rng.randint(1, len(dims))))
            kept = [d for d in range(len(dims)) if d not in rdims]
            x, init = finite(g, dims, tx), finite(g, [], ti)
            xt = np.transpose(x, kept + rdims).reshape([dims[d] for d in kept] + [-1])
            acc = np.full([dims[d] for d in kept], init.astype(NP[tr]), dtype=NP[tr])
            want = fold(acc, np.moveaxis(xt, -1, 0), f, tr).astype(NP[td])
            body = "  ROOT r = %s reduce(x, i), dimensions={%s}, to_apply=red\n" % (
                text(td, [dims[d] for d in kept]), ",".join(map(str, rdims)))
            inputs, params = [x, init], [(tx, "x", dims), (ti, "i", [])]
        elif kind == "reduce-window":
            dims = [rng.randint(1, 6) for _ in range(rng.randint(1, 2))]
            size = [rng.randint(1, d) for d in dims]
            stride = [rng.randint(1, 2) for _ in dims]
            out = [(d - w) // s + 1 for d, w, s in zip(dims, size, stride)]
            x, init = finite(g, dims, tx), finite(g, [], ti)
            want = np.empty(out, dtype=NP[ti])
            for o in np.ndindex(*out):
                win = x[tuple(slice(o[k] * stride[k], o[k] * stride[k] + size[k]) for k in range(len(dims)))]
                want[o] = fold(init.astype(NP[tr]), win.reshape(-1), f, tr).astype(NP[ti])
            want = want.astype(NP[td])
            body = "  ROOT r = %s reduce-window(x, i), window={size=%s stride=%s}, to_apply=red\n" % (
                text(td, out), "x".join(map(str, size)), "x".join(map(str, stride)))
            inputs, params = [x, init], [(tx, "x", dims), (ti, "i", [])]
        elif kind == "scatter":
            n, k = rng.randint(1, 5), rng.randint(1, 8)
            tu = rng.choice(sorted(NP))
            x, u = finite(g, [n], tx), finite(g, [k], tu)
            idx = np.asarray([[rng.randrange(n)] for _ in range(k)], dtype=np.int32)
            want = x.copy()
            for j in range(k):
                p = idx[j][0]
                want[p] = f(want[p].astype(NP[tr]), u[j].astype(NP[tr])).astype(NP[tr]).astype(NP[tx])
            want = want.astype(NP[td])
            body = ("  ROOT r = %s scatter(x, idx, u), update_window_dims={}, inserted_window_dims={0}, "
                    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=red\n") % text(td, [n])
            inputs, params = [x, idx, u], [(tx, "x", [n]), ("s32", "idx", [k, 1]), (tu, "u", [k])]
        else:
            dims = [rng.randint(1, 4) for _ in range(rng.randint(0, 3))]
            tb = rng.choice(sorted(NP))
            a, b = finite(g, dims, tx), finite(g, dims, tb)
            want = np.asarray(f(a.astype(NP[tr]), b.astype(NP[tr]))).astype(NP[tr]).astype(NP[td])
            body = "  ROOT r = %s map(a, b), dimensions={%s}, to_apply=red\n" % (
                text(td, dims), ",".join(map(str, range(len(dims)))))
            inputs, params = [a, b], [(tx, "a", dims), (tb, "b", dims)]
    c["program"] = "HloModule mixed_%d\n\n%sENTRY e {\n%s%s}\n" % (
        index, reducer(tr, op),
        "".join("  %s = %s parameter(%d)\n" % (nm, text(t, dd), j) for j, (t, nm, dd) in enumerate(params)), body)
    c["inputs"], c["want"] = inputs, np.asarray(want)
    return c


def gen_scan_case(rng, g, index, tx, tr, td, op):
    """scan of an input of type tx into one carry of type tr (its init's
    and the computation's parameter's: XLA asks them to be one), the
    computation converting each input element to tr itself; the result, the
    last carry, declared td (computed in tr, then converted)."""
    dims = [rng.randint(1, 5) for _ in range(rng.randint(1, 3))]
    d = rng.randrange(len(dims))
    rev = rng.random() < 0.5
    el = dims[:d] + dims[d + 1:]
    x, init = finite(g, dims, tx), finite(g, el, tr)
    with np.errstate(all="ignore"):
        steps = np.moveaxis(x, d, 0)
        want = fold(init, steps[::-1] if rev else steps, REDUCERS[op], tr).astype(NP[td])
    comp = ("step {\n  x = %s parameter(0)\n  c = %s parameter(1)\n  xc = %s convert(x)\n"
            "  ROOT n = %s %s(c, xc)\n}\n\n") % (text(tx, el), text(tr, el), text(tr, el), text(tr, el), op)
    body = "  ROOT r = %s scan(x, i), dimensions={%d}, num_carries=1, is_reverse=%s, to_apply=step\n" % (
        text(td, el), d, "true" if rev else "false")
    params = [(tx, "x", dims), (tr, "i", el)]
    c = {"index": index, "engine": rng.choice(["fast", "reference"]), "options": ["--allow-mixed-precision"]}
    c["program"] = "HloModule mixed_%d\n\n%sENTRY e {\n%s%s}\n" % (
        index, comp, "".join("  %s = %s parameter(%d)\n" % (nm, text(t, dd), j) for j, (t, nm, dd) in enumerate(params)),
        body)
    c["inputs"], c["want"] = [x, init], np.asarray(want)
    return c


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    if rng.random() < 0.4:
        return gen_reducer_case(rng, g, index)
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

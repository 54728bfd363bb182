#!/usr/bin/python3
"""Differential test of the fast engine against the reference engine, bit
for bit, on the ops whose fast paths reorder the work:

- reduce-window by max, min, and, or (separable passes of the fast engine,
  NaN results recomputed in XLA's order) and add (fallback): random ranks,
  layouts of the input and the result, window sizes, strides, padding,
  window and base dilation; floats (f16, bf16, f32, f64) with ties, -0, +0,
  infinities and NaNs of both signs and several payloads, a NaN init
  sometimes; integers and pred.
- sort: one operand or keys with carried operands (an s32 iota, another
  array), LT or GT on any operand (FLOAT, TOTALORDER or the integer
  default) and JAX's canonicalising comparator, short and long rows (the
  radix sort and the merge sort), every float and integer type, the same
  special values, random sort dimension and layouts.
- topk: largest and smallest, k from 1 to the row, the same values.

Each program runs once per engine in one `hloi test`; the results must be
the same bytes. Seeded and reproducible.

usage: engines_window_sort.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import os
import random
import sys

try:
    import numpy as np
except ImportError:
    print("engines_window_sort: NumPy is not installed; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hloi_cases  # noqa: E402

FLOATS = {"f16": (np.uint16, 10, 5), "bf16": (np.uint16, 7, 8), "f32": (np.uint32, 23, 8),
          "f64": (np.uint64, 52, 11)}
INTS = {"s8": np.int8, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32}


def float_bits(g, t, n, rate=None):
    """n values of float type t as their bits: small values with ties,
    +-0, +-inf, NaNs of both signs and several payloads."""
    ut, man, exp = FLOATS[t]
    bits = 8 * np.dtype(ut).itemsize
    v = (g.integers(-12, 13, n) / 4.0).astype(np.float32)
    if t == "bf16":
        b = (v.view(np.uint32) >> 16).astype(np.uint16)
    elif t == "f16":
        b = v.astype(np.float16).view(np.uint16)
    elif t == "f32":
        b = v.view(np.uint32)
    else:
        b = v.astype(np.float64).view(np.uint64)
    b = b.astype(np.uint64)
    sign = np.uint64(1) << np.uint64(bits - 1)
    expmask = ((np.uint64(1) << np.uint64(exp)) - np.uint64(1)) << np.uint64(man)
    r = g.random(n)
    special = g.integers(0, 6, n).astype(np.uint64)
    quiet = np.uint64(1) << np.uint64(man - 1)
    nanpay = quiet | g.integers(0, 1 << min(man - 1, 20), n).astype(np.uint64)
    choices = [np.uint64(0), sign, expmask, expmask | sign, expmask | nanpay, expmask | nanpay | sign]
    sp = np.choose(special.astype(np.int64), choices)
    if rate is None:
        rate = g.choice([0.0, 0.02, 0.2, 0.6, 0.9])
    b = np.where(r < rate, sp, b).astype(ut)
    # bf16 travels as u16 (.npy has no bf16)
    fl = {"f16": np.float16, "f32": np.float32, "f64": np.float64}.get(t)
    return b.view(fl) if fl else b


def values(g, t, n, ties=True):
    if t in FLOATS:
        return float_bits(g, t, n)
    if t == "pred":
        return g.integers(0, 2, n).astype(np.uint8).astype(np.bool_)
    dt = INTS[t]
    info = np.iinfo(dt)
    if ties:
        return g.integers(max(info.min, -5), min(info.max, 5) + 1, n).astype(dt)
    return g.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if info.bits < 64 else dt).astype(dt)


def layout(rng, rank):
    perm = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.5:
        rng.shuffle(perm)
    return "{" + ",".join(str(d) for d in perm) + "}"


def shape_text(t, dims, lay):
    return "%s[%s]%s" % (t, ",".join(str(d) for d in dims), lay)


def window_out(n, w):
    size, stride, lo, hi, ld, wd = w
    base = (n - 1) * ld + 1 if n else 0
    span = (size - 1) * wd + 1
    padded = base + lo + hi
    return 0 if padded < span else (padded - span) // stride + 1


def init_literal(rng, t, op):
    if t == "pred":
        return "true" if op == "and" else "false"
    if t in FLOATS:
        return rng.choice({"maximum": ["-inf"] * 4 + ["0", "nan", "-2.5"], "minimum": ["inf"] * 4 + ["-0", "nan", "1"],
                           "add": ["0", "-0"]}[op])
    dt = INTS[t]
    return rng.choice([str(np.iinfo(dt).min), str(np.iinfo(dt).max), "0", "3"])


def window_case(rng, g, index):
    t = rng.choice(list(FLOATS) * 2 + list(INTS) + ["pred"])
    ops = ["maximum", "minimum"] if t in FLOATS else ["maximum", "minimum", "and", "or"]
    op = rng.choice(ops * 4 + ["add"] if t != "pred" else ["and", "or", "maximum"])
    rank = rng.randint(1, 4)
    dims = [rng.randint(1, 9) for _ in range(rank)]
    if rng.random() < 0.3:
        dims[rng.randrange(rank)] = rng.randint(20, 300)
    # half the float ones: pooling with many NaNs (which NaN comes out
    # depends on XLA's order when the layout puts the windowed dimensions
    # in another order)
    pool = t in FLOATS and rank >= 2 and rng.random() < 0.5
    windowed = set(rng.sample(range(rank), 2 if pool else min(rank, rng.choice([1, 2, 2, 2, 3]))))
    win = []
    for d in range(rank):
        if d not in windowed:
            win.append((1, 1, 0, 0, 1, 1))
        elif pool:
            win.append((rng.choice([2, 3]), rng.choice([1, 2]), rng.randint(0, 1), rng.randint(0, 1), 1, 1))
        else:
            win.append((rng.choice([1, 2, 2, 3, 3, 4]), rng.choice([1, 1, 2, 3]), rng.randint(0, 2),
                        rng.randint(0, 2), 1 if rng.random() < 0.9 else 2, 1 if rng.random() < 0.75 else 2))
    out = [window_out(n, w) for n, w in zip(dims, win)]
    if 0 in out:
        win = [(1, 1, 0, 0, 1, 1)] * rank
        out = dims[:]
    x = (float_bits(g, t, int(np.prod(dims)), 0.9) if pool else values(g, t, int(np.prod(dims)))).reshape(dims)
    if op == "add" and t in FLOATS:
        # which NaN a float sum gives is not bit-exact between the engines
        # (the compiler may swap an add's operands): sums without NaNs
        x = np.where(np.isnan(x.astype(np.float64)) if t != "bf16" else (x & 0x7fff) > 0x7f80, x.dtype.type(0), x)
    attr = "size=%s stride=%s pad=%s" % ("x".join(str(w[0]) for w in win), "x".join(str(w[1]) for w in win),
                                         "x".join("%d_%d" % (w[2], w[3]) for w in win))
    if any(w[4] != 1 for w in win):
        attr += " lhs_dilate=" + "x".join(str(w[4]) for w in win)
    if any(w[5] != 1 for w in win):
        attr += " rhs_dilate=" + "x".join(str(w[5]) for w in win)
    lay = layout(rng, rank)
    olay = lay if rng.random() < 0.7 else layout(rng, rank)
    prog = ("HloModule w\n\nf {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n\n"
            "ENTRY main {\n  x = %s parameter(0)\n  init = %s[] constant(%s)\n"
            "  ROOT r = %s reduce-window(x, init), window={%s}, to_apply=f\n}\n" % (
                t, t, t, op, shape_text(t, dims, lay), t, init_literal(rng, t, op), shape_text(t, out, olay), attr))
    return prog, [x]


def comparator(rng, t, kinds, kop):
    """A comparator over operands of types `kinds` comparing operand kop."""
    params = "".join("  p%d = %s[] parameter(%d)\n  q%d = %s[] parameter(%d)\n" % (k, s, 2 * k, k, s, 2 * k + 1)
                     for k, s in enumerate(kinds))
    d = rng.choice(["LT", "GT"])
    a, b = ("p%d" % kop, "q%d" % kop) if rng.random() < 0.8 else ("q%d" % kop, "p%d" % kop)
    if t in FLOATS and rng.random() < 0.4:
        # JAX's: -0 as +0, every NaN as one NaN, then TOTALORDER
        return ("cmp {\n%s  zero = %s[] constant(0)\n  qnan = %s[] constant(nan)\n"
                "  az = pred[] compare(%s, zero), direction=EQ\n  a0 = %s[] select(az, zero, %s)\n"
                "  an = pred[] compare(%s, %s), direction=NE\n  a1 = %s[] select(an, qnan, a0)\n"
                "  bz = pred[] compare(%s, zero), direction=EQ\n  b0 = %s[] select(bz, zero, %s)\n"
                "  bn = pred[] compare(%s, %s), direction=NE\n  b1 = %s[] select(bn, qnan, b0)\n"
                "  ROOT r = pred[] compare(a1, b1), direction=%s, type=TOTALORDER\n}\n" % (
                    params, t, t, a, t, a, a, a, t, b, t, b, b, b, t, d))
    ct = ""
    if t in FLOATS:
        ct = rng.choice([", type=TOTALORDER", ", type=FLOAT", ""])
    return "cmp {\n%s  ROOT r = pred[] compare(%s, %s), direction=%s%s\n}\n" % (params, a, b, d, ct)


def sort_case(rng, g, index):
    t = rng.choice(list(FLOATS) * 2 + list(INTS))
    rank = rng.randint(1, 3)
    dims = [rng.randint(1, 6) for _ in range(rank)]
    axis = rng.randrange(rank)
    dims[axis] = rng.choice([rng.randint(1, 40), rng.randint(40, 3000)])
    n = int(np.prod(dims))
    carried = rng.choice([[], ["s32"], ["s32"], [rng.choice(list(FLOATS) + list(INTS))]])
    kinds = [t] + carried
    kop = 0 if rng.random() < 0.85 or not carried else 1
    kt = kinds[kop]
    inputs, names, lines = [], [], []
    for k, s in enumerate(kinds):
        dk = shape_text(s, dims, layout(rng, rank))
        if s == "s32" and k > 0 and rng.random() < 0.7:
            lines.append("  x%d = %s iota(), iota_dimension=%d" % (k, dk, axis))
        else:
            lines.append("  x%d = %s parameter(%d)" % (k, dk, len(inputs)))
            inputs.append(values(g, s, n, ties=rng.random() < 0.7).reshape(dims))
        names.append("x%d" % k)
    outs = [shape_text(s, dims, layout(rng, rank)) for s in kinds]
    rt = outs[0] if len(kinds) == 1 else "(%s)" % ", ".join(outs)
    stable = ", is_stable=true" if rng.random() < 0.6 else ""
    prog = "HloModule s\n\n%s\nENTRY main {\n%s\n  ROOT r = %s sort(%s), dimensions={%d}%s, to_apply=cmp\n}\n" % (
        comparator(rng, kt, kinds, kop), "\n".join(lines), rt, ", ".join(names), axis, stable)
    return prog, inputs


def topk_case(rng, g, index):
    t = rng.choice(list(FLOATS) * 2 + list(INTS))
    rank = rng.randint(1, 3)
    dims = [rng.randint(1, 4) for _ in range(rank)]
    dims[-1] = rng.choice([rng.randint(1, 40), rng.randint(40, 5000)])
    k = rng.choice([1, 2, 5, rng.randint(1, dims[-1])])
    k = min(k, dims[-1])
    out = dims[:-1] + [k]
    x = values(g, t, int(np.prod(dims)), ties=rng.random() < 0.7).reshape(dims)
    prog = ("HloModule t\n\nENTRY main {\n  x = %s parameter(0)\n"
            "  ROOT r = (%s, %s) topk(x), k=%d, largest=%s\n}\n" % (
                shape_text(t, dims, layout(rng, rank)), shape_text(t, out, layout(rng, rank)),
                shape_text("s32", out, layout(rng, rank)), k, rng.choice(["true", "false"])))
    return prog, [x]


def gen_pair(seed, i):
    rng = random.Random(seed * 1000003 + i)
    g = np.random.default_rng(rng.randrange(1 << 30))
    kind = rng.choice(["window"] * 5 + ["sort"] * 4 + ["topk"] * 2)
    prog, inputs = {"window": window_case, "sort": sort_case, "topk": topk_case}[kind](rng, g, i)
    return [{"index": 2 * i, "program": prog, "inputs": inputs, "engine": "fast", "kind": kind},
            {"index": 2 * i + 1, "program": prog, "inputs": inputs, "engine": "reference", "kind": kind}]


fast_results = {}


def check(case, got):
    if case["engine"] == "fast":
        fast_results[case["index"]] = [np.ascontiguousarray(a) for a in got]
        return None
    fast = fast_results.pop(case["index"] - 1, None)
    if not got:
        return "no result from the reference engine"
    if not fast:
        return "no result from the fast engine"
    if len(fast) != len(got):
        return "%d results from the fast engine, %d from the reference" % (len(fast), len(got))
    for k, (a, b) in enumerate(zip(fast, got)):
        b = np.ascontiguousarray(b)
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            av = a.reshape(-1).view(np.uint8).reshape(a.size, -1) if a.size else a
            bv = b.reshape(-1).view(np.uint8).reshape(b.size, -1) if b.size else b
            bad = [j for j in range(min(a.size, b.size)) if av[j].tobytes() != bv[j].tobytes()][:8]
            return "result %d differs (%s kind) at %s: fast %s, reference %s" % (
                k, case["kind"], bad, [av[j].tobytes().hex() for j in bad], [bv[j].tobytes().hex() for j in bad])
    return None


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    cases = [c for i in range(args.cases) for c in gen_pair(args.seed, i)]
    return hloi_cases.run_cases("engines_window_sort", args.hloi, cases, check, args.seed, args.jobs, args.keep)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Differential test of hloi's reductions against NumPy: random reduce
programs (sum, product, max, min over random dimensions, argmax as a variadic
reduce with iota), random reduce-window programs (sliding-window max and sum
with strides, padding, base and window dilation, from
numpy.lib.stride_tricks.sliding_window_view) and map, over random shapes
(size-0 and size-1 dimensions included), random layouts of the input and the
result, on both engines, run through `hloi test` in-process with .npy inputs
and outputs.

Exact for integers (wrapping, as np.sum/np.prod with the same dtype), max,
min and argmax; float sums against the float64 sum rounded to the type,
within 1 ulp plus n * 2^-50 * sum|x| (hloi sums in double as XLA does);
float products against the float64 product within 2 * n ulps (hloi
multiplies in the type); window sums of floats exactly, NumPy adding in the
type in XLA's order (window positions in row-major order).

usage: numpy_reduce.py HLOI [--cases N] [--seed S] [--jobs J] [--only I]
                            [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view
except ImportError:
    print("numpy_reduce: NumPy is not installed; skipped")
    sys.exit(77)

warnings.simplefilter("ignore")

TYPES = {"s32": np.int32, "s64": np.int64, "u8": np.uint8, "u32": np.uint32,
         "f16": np.float16, "f32": np.float32, "f64": np.float64}
FLOATS = ("f16", "f32", "f64")
OPS = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum"}


def layout(rng, rank):
    perm = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.6:
        rng.shuffle(perm)
    return "{" + ",".join(str(d) for d in perm) + "}"


def shape_text(t, dims, lay):
    return "%s[%s]%s" % (t, ",".join(str(d) for d in dims), lay if dims else "")


def identity(kind, t):
    if kind in ("sum", "argmax_none"):
        return 0
    if kind == "prod":
        return 1
    if kind == "max":
        return -np.inf if t in FLOATS else np.iinfo(TYPES[t]).min
    if kind == "min":
        return np.inf if t in FLOATS else np.iinfo(TYPES[t]).max
    raise ValueError(kind)


def literal(v, t):
    if t in FLOATS:
        if v == np.inf:
            return "inf"
        if v == -np.inf:
            return "-inf"
        return repr(float(v))
    return str(int(v))


def values(rng, t, kind, n):
    dt = TYPES[t]
    r = np.random.default_rng(rng.randrange(1 << 30))
    if t in FLOATS:
        if kind == "prod":
            x = r.uniform(0.5, 2.0, n) * r.choice([-1.0, 1.0], n)
        elif kind in ("max", "min", "argmax"):
            x = r.integers(-20, 20, n) / 4.0  # ties on purpose, no -0
            x[x == 0] = 0.0
        else:
            x = r.uniform(-1000, 1000, n)
        return x.astype(dt)
    info = np.iinfo(dt)
    if kind in ("max", "min", "argmax") or r.random() < 0.5:
        return r.integers(max(info.min, -9), min(info.max, 9) + 1, n).astype(dt)
    return r.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if info.bits < 64 else dt).astype(dt)


def reducer(kind, t):
    if kind == "argmax":
        return ("f {\n  v = %s[] parameter(0)\n  i = s32[] parameter(1)\n  w = %s[] parameter(2)\n"
                "  j = s32[] parameter(3)\n  gt = pred[] compare(w, v), direction=GT\n"
                "  eq = pred[] compare(w, v), direction=EQ\n  lt = pred[] compare(j, i), direction=LT\n"
                "  tie = pred[] and(eq, lt)\n  take = pred[] or(gt, tie)\n"
                "  v.1 = %s[] select(take, w, v)\n  i.1 = s32[] select(take, j, i)\n"
                "  ROOT r = (%s[], s32[]) tuple(v.1, i.1)\n}\n" % (t, t, t, t))
    return "f {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n" % (
        t, t, t, OPS[kind])


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    op = rng.choice(["reduce"] * 5 + ["window"] * 4 + ["map"])
    t = rng.choice(list(TYPES))
    rank = rng.randint(1, 4) if op != "map" else rng.randint(0, 3)
    dims = [rng.choice([0, 1, 2, 3, 4, 5, 7]) if rng.random() < 0.15 else rng.randint(1, 9) for _ in range(rank)]
    if rng.random() < 0.1 and rank >= 2:
        dims[-1] = rng.randint(100, 700)
    case = {"index": index, "op": op, "type": t, "dims": dims, "engine": rng.choice(["fast", "reference"]),
            "in_layout": layout(rng, rank), "out_layout_seed": rng.randrange(1 << 30)}
    if op == "reduce":
        kind = rng.choice(["sum", "prod", "max", "min", "argmax"])
        if kind == "prod" and t not in FLOATS:
            kind = rng.choice(["prod", "sum"])
        axes = sorted(d for d in range(rank) if rng.random() < 0.5)
        if kind == "argmax":
            axes = [rng.randrange(rank)]
            if dims[axes[0]] == 0:
                dims[axes[0]] = 1
        case.update(kind=kind, axes=axes)
    elif op == "window":
        kind = rng.choice(["max", "sum"])
        win = []
        for d in range(rank):
            size = rng.randint(1, 3)
            stride = rng.randint(1, 3)
            lo, hi = rng.randint(0, 2), rng.randint(0, 2)
            ld = 1 if rng.random() < 0.7 else 2
            wd = 1 if rng.random() < 0.7 else 2
            win.append((size, stride, lo, hi, ld, wd))
        case.update(kind=kind, win=win)
    else:
        case.update(kind="affine")
    case["x"] = values(rng, t, case["kind"], int(np.prod(dims)) if dims else 1).reshape(dims)
    return case


def window_out(n, w):
    size, stride, lo, hi, ld, wd = w
    base = (n - 1) * ld + 1 if n else 0
    padded = base + lo + hi
    span = (size - 1) * wd + 1
    return 0 if padded == 0 or span > padded else (padded - span) // stride + 1


def result_dims(case):
    if case["op"] == "reduce":
        return [n for d, n in enumerate(case["dims"]) if d not in case["axes"]]
    if case["op"] == "window":
        return [window_out(n, w) for n, w in zip(case["dims"], case["win"])]
    return list(case["dims"])


def program(case):
    t, dims = case["type"], case["dims"]
    rank = len(dims)
    out = result_dims(case)
    ol = layout(random.Random(case["out_layout_seed"]), len(out))
    lines = ["HloModule reduce_%d" % case["index"], ""]
    if case["op"] == "map":
        lines.append("f {\n  a = %s[] parameter(0)\n  two = %s[] constant(2)\n  t = %s[] multiply(a, two)\n"
                     "  ROOT r = %s[] add(t, a)\n}\n" % (t, t, t, t))
        lines.append("ENTRY main {")
        lines.append("  x = %s parameter(0)" % shape_text(t, dims, case["in_layout"]))
        lines.append("  ROOT m = %s map(x), dimensions={%s}, to_apply=f" % (
            shape_text(t, out, ol), ",".join(str(d) for d in range(rank))))
        lines.append("}")
        return "\n".join(lines) + "\n"
    kind = case["kind"]
    lines.append(reducer(kind, t))
    lines.append("ENTRY main {")
    lines.append("  x = %s parameter(0)" % shape_text(t, dims, case["in_layout"]))
    if kind == "argmax":
        lines.append("  init = %s[] constant(%s)" % (t, literal(identity("max", t), t)))
        lines.append("  k = %s iota(), iota_dimension=%d" % (shape_text("s32", dims, case["in_layout"]),
                                                           case["axes"][0]))
        lines.append("  none = s32[] constant(2147483647)")
        lines.append("  r = (%s, %s) reduce(x, k, init, none), dimensions={%d}, to_apply=f" % (
            shape_text(t, out, ol), shape_text("s32", out, ol), case["axes"][0]))
        lines.append("  ROOT i = %s get-tuple-element(r), index=1" % shape_text("s32", out, ol))
    elif case["op"] == "reduce":
        lines.append("  init = %s[] constant(%s)" % (t, literal(identity(kind, t), t)))
        lines.append("  ROOT r = %s reduce(x, init), dimensions={%s}, to_apply=f" % (
            shape_text(t, out, ol), ",".join(str(d) for d in case["axes"])))
    else:
        w = case["win"]
        f = lambda k: "x".join(str(v[k]) for v in w)
        attr = "size=%s stride=%s pad=%s lhs_dilate=%s rhs_dilate=%s" % (
            f(0), f(1), "x".join("%d_%d" % (v[2], v[3]) for v in w), f(4), f(5))
        lines.append("  init = %s[] constant(%s)" % (t, literal(identity(kind, t), t)))
        lines.append("  ROOT r = %s reduce-window(x, init), window={%s}, to_apply=f" % (shape_text(t, out, ol), attr))
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected(case):
    x, t, kind = case["x"], case["type"], case["kind"]
    dt = TYPES[t]
    if case["op"] == "map":
        return (x * dt(2) + x).astype(dt)
    if case["op"] == "reduce":
        axes = tuple(case["axes"])
        if kind == "argmax":
            return np.argmax(x, axis=axes[0]).astype(np.int32)
        if kind in ("max", "min"):
            if x.size == 0:
                return np.full(result_dims(case), identity(kind, t), dtype=dt)
            return (np.max if kind == "max" else np.min)(x, axis=axes) if axes else x.copy()
        wide = np.float64 if t in FLOATS else dt
        fn = np.sum if kind == "sum" else np.prod
        return fn(x.astype(wide), axis=axes, dtype=wide).astype(dt) if axes else x.copy()
    # reduce-window: dilate, pad with the identity, window (dilated), stride
    fill = identity(kind, t)
    a = x.astype(np.float64 if t in FLOATS else x.dtype)
    for d, (size, stride, lo, hi, ld, wd) in enumerate(case["win"]):
        n = a.shape[d]
        if ld > 1 and n:
            shape = list(a.shape)
            shape[d] = (n - 1) * ld + 1
            b = np.full(shape, fill, dtype=a.dtype)
            sl = [slice(None)] * a.ndim
            sl[d] = slice(None, None, ld)
            b[tuple(sl)] = a
            a = b
        pad = [(0, 0)] * a.ndim
        pad[d] = (lo, hi)
        a = np.pad(a, pad, constant_values=fill)
    out = result_dims(case)
    if 0 in out:
        return np.zeros(out, dtype=dt)
    spans = tuple((s - 1) * wd + 1 for s, _, _, _, _, wd in case["win"])
    v = sliding_window_view(a, spans)
    sl = tuple(slice(None, None, w[1]) for w in case["win"]) + tuple(slice(None, None, w[5]) for w in case["win"])
    v = v[sl]
    axes = tuple(range(len(out), 2 * len(out)))
    if kind == "max":
        return v.max(axis=axes).astype(dt)
    # sums of floats in the type, in XLA's row-major window order
    if t in FLOATS:
        acc = np.zeros(out, dtype=dt)
        for idx in np.ndindex(*v.shape[len(out):]):
            acc = (acc + v[(Ellipsis,) + idx].astype(dt)).astype(dt)
        return acc
    return v.sum(axis=axes, dtype=dt).astype(dt)


def ulp(t, v):
    return np.spacing(np.abs(v).astype(TYPES[t])).astype(np.float64)


def mismatches(case, got, want):
    t, kind = case["type"], case["kind"]
    if got.shape != want.shape:
        return ["shape %s, expected %s" % (got.shape, want.shape)]
    if kind == "argmax" or t not in FLOATS or kind in ("max", "min", "affine") or case["op"] == "window":
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        return list(bad)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    x = np.abs(case["x"].astype(np.float64))
    axes = tuple(case["axes"])
    n = float(np.prod([case["dims"][a] for a in axes])) if axes else 1.0
    s = x.sum(axis=axes) if axes else x
    if kind == "sum":
        tol = ulp(t, w) + n * 2.0 ** -50 * s
    else:
        tol = 2 * max(n, 1) * ulp(t, w)
    bad = np.flatnonzero((np.abs(g - w) > tol).reshape(-1) & ~(np.isnan(g) & np.isnan(w)).reshape(-1))
    return list(bad)


def flags(case, base):
    f = ["--input", base + ".x.npy", "--output", base + ".out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    return f


def case_flags(case):
    """The flags as a case file's `// hloi-flags:` line for `hloi test`:
    the input next to the case, the output a plain name (kept by --outputs)."""
    f = ["--input", "r%05d.x.npy" % case["index"], "--output", "out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    return f


def write_case(case, d):
    base = os.path.join(d, "r%05d" % case["index"])
    x = case["x"]
    if x.ndim >= 2 and random.Random(case["index"]).random() < 0.3:
        x = np.asfortranarray(x)
    np.save(base + ".x.npy", x, allow_pickle=False)
    with open(base + ".hlo", "w") as f:
        f.write("// hloi-flags: " + " ".join(case_flags(case)) + "\n")
        f.write(program(case))
    return base


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=800)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", type=int, default=None)
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    start = time.time()
    indices = [args.only] if args.only is not None else list(range(args.cases))
    tmp = args.keep or tempfile.mkdtemp(prefix="hloi-reduce-")
    os.makedirs(tmp, exist_ok=True)
    jobs = max(1, min(args.jobs, len(indices)))
    dirs = [os.path.join(tmp, "part%d" % j) for j in range(jobs)]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    cases = []
    for n, i in enumerate(indices):
        case = gen_case(args.seed, i)
        case["base"] = write_case(case, dirs[n % jobs])
        cases.append(case)
    out = os.path.join(tmp, "out")
    p = subprocess.run([args.hloi, "test", "-j", str(jobs), "--quiet", "--timeout", "120", "--outputs", out] + dirs,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode < 0 or p.returncode > 1:
        print("numpy_reduce: hloi test ended with %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:2000]))
    failed = 0
    for case in cases:
        base = case["base"]
        want = expected(case)
        try:
            got = np.load(os.path.join(out, os.path.basename(base), "out.npy"))
            bad = mismatches(case, got, want)
        except OSError:
            got, bad = None, ["no result"]
        if bad:
            failed += 1
            if failed <= 10:
                p = subprocess.run([args.hloi, "run", base + ".hlo"] + flags(case, base), capture_output=True,
                                   text=True)
                print("FAIL case %d (%s %s %s, %s engine) at %s" % (case["index"], case["op"], case["kind"],
                                                                  case["type"], case["engine"], bad[:8]))
                print(program(case).rstrip())
                print("x = %r" % (case["x"],))
                print("want = %r" % (want,))
                print("got  = %r" % (got,))
                print("hloi said: " + (p.stderr.strip() or "(nothing)"))
                print("reproduce: %s run %s.hlo %s" % (args.hloi, base, " ".join(flags(case, base))))
                print()
    print("numpy_reduce: %d cases (seed %d), %d failed, %.1f s" % (len(cases), args.seed, failed,
                                                                 time.time() - start))
    if failed:
        print("numpy_reduce: cases kept in " + tmp)
        return 1
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

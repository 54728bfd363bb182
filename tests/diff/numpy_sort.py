#!/usr/bin/python3
"""Differential test of hloi's sort and topk against NumPy: random programs
over random shapes (size-0 and size-1 dimensions included), element types,
sort dimensions and layouts of the inputs and results, on both engines, run
through `hloi test` in-process with .npy inputs and outputs.

- sort: one operand, LT or GT (FLOAT or TOTALORDER), against np.sort
  (descending: a stable argsort of the negated order); floats with NaN and
  -0 only under TOTALORDER, whose order NumPy gets from the bit patterns.
- argsort: keys and an iota sorted together, against np.sort and
  np.argsort(kind="stable"); floats (NaN, -0 included) under a comparator in
  NumPy's order written as JAX writes it (-0 as +0, every NaN as +NaN, then
  TOTALORDER): run as a computation by the reference engine, answered by
  keys in the fast one.
- lexsort: two keys and an iota under a two-key comparator (a computation
  in both engines), against np.lexsort.
- topk: values and indices against a stable argsort by the total order,
  the first k.
Everything is exact.

usage: numpy_sort.py HLOI [--cases N] [--seed S] [--jobs J] [--only I]
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
except ImportError:
    print("numpy_sort: NumPy is not installed; skipped")
    sys.exit(77)

warnings.simplefilter("ignore")

TYPES = {"s8": np.int8, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u32": np.uint32,
         "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
FLOATS = ("f16", "f32", "f64")
UINT = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}


def layout(rng, rank):
    perm = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.6:
        rng.shuffle(perm)
    return "{" + ",".join(str(d) for d in perm) + "}"


def shape_text(t, dims, lay):
    return "%s[%s]%s" % (t, ",".join(str(d) for d in dims), lay if dims else "")


def total_key(x):
    """TOTALORDER as unsigned integers: -NaN < -inf < ... < -0 < +0 < ... < +NaN."""
    if x.dtype.kind != "f":
        return x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.uint64)
    u = UINT[{np.float16: "f16", np.float32: "f32", np.float64: "f64"}[x.dtype.type]]
    bits = x.view(u).astype(np.uint64)
    width = np.dtype(u).itemsize * 8
    sign = np.uint64(1) << np.uint64(width - 1)
    allb = np.uint64((1 << width) - 1)
    return np.where(bits & sign, ~bits & allb, bits | sign)


def stable_order(key, axis, descending):
    """A stable argsort of key along axis, ascending or descending."""
    if descending:
        key = -key.astype(np.float64) if key.dtype.kind == "f" else ~key
    return np.argsort(key, axis=axis, kind="stable")


def values(rng, t, n, special):
    dt = TYPES[t]
    r = np.random.default_rng(rng.randrange(1 << 30))
    if t in FLOATS:
        x = r.integers(-12, 12, n) / 4.0  # ties on purpose
        x = x.astype(dt)
        if special:
            pick = r.random(n)
            x[pick < 0.08] = np.nan
            x[(pick >= 0.08) & (pick < 0.12)] = np.copysign(np.array(np.nan, dtype=dt), np.array(-1.0, dtype=dt))
            x[(pick >= 0.12) & (pick < 0.2)] = dt(-0.0)
            x[(pick >= 0.2) & (pick < 0.24)] = dt(np.inf)
            x[(pick >= 0.24) & (pick < 0.28)] = dt(-np.inf)
        else:
            x[x == 0] = dt(0.0)
        return x
    info = np.iinfo(dt)
    if r.random() < 0.5:
        return r.integers(max(info.min, -5), min(info.max, 5) + 1, n).astype(dt)
    return r.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if info.bits < 64 else dt).astype(dt)


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    op = rng.choice(["sort"] * 3 + ["argsort"] * 3 + ["lexsort"] * 2 + ["topk"] * 2)
    t = rng.choice(list(TYPES))
    rank = rng.randint(1, 3)
    dims = [rng.choice([0, 1, 2]) if rng.random() < 0.15 else rng.randint(1, 12) for _ in range(rank)]
    if rng.random() < 0.15:
        dims[rng.randrange(rank)] = rng.randint(100, 3000)
    axis = rank - 1 if op == "topk" else rng.randrange(rank)
    case = {"index": index, "op": op, "type": t, "dims": dims, "axis": axis,
            "engine": rng.choice(["fast", "reference"]), "in_layout": layout(rng, rank),
            "out_layout": layout(rng, rank), "desc": rng.random() < 0.4,
            "total": t in FLOATS and (op == "topk" or rng.random() < 0.5)}
    n = int(np.prod(dims))
    special = t in FLOATS and (op in ("argsort", "topk") or (op == "sort" and case["total"]))
    case["x"] = values(rng, t, n, special).reshape(dims)
    if op == "lexsort":
        r = np.random.default_rng(rng.randrange(1 << 30))
        case["k0"] = r.integers(-3, 4, n).astype(np.int32).reshape(dims)
    if op == "topk":
        case["k"] = rng.randint(0, dims[-1])
    return case


def out_dims(case):
    if case["op"] == "topk":
        return case["dims"][:-1] + [case["k"]]
    return list(case["dims"])


def program(case):
    t, dims, axis = case["type"], case["dims"], case["axis"]
    il, ol = case["in_layout"], case["out_layout"]
    x = shape_text(t, dims, il)
    lines = ["HloModule sort_%d" % case["index"], ""]
    op = case["op"]
    if op == "topk":
        od = out_dims(case)
        lines.append("ENTRY main {")
        lines.append("  x = %s parameter(0)" % x)
        lines.append("  ROOT r = (%s, %s) topk(x), k=%d, largest=%s" % (
            shape_text(t, od, ol), shape_text("s32", od, ol), case["k"], "true" if case["desc"] else "false"))
        lines.append("}")
        return "\n".join(lines) + "\n"
    ctype = ", type=TOTALORDER" if case["total"] else ""
    direction = "GT" if case["desc"] else "LT"
    if op == "sort":
        lines.append("cmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                     "  ROOT p = pred[] compare(a, b), direction=%s%s\n}\n" % (t, t, direction, ctype))
        lines.append("ENTRY main {")
        lines.append("  x = %s parameter(0)" % x)
        lines.append("  ROOT r = %s sort(x), dimensions={%d}, to_apply=cmp" % (shape_text(t, dims, ol), axis))
    elif op == "argsort":
        if t in FLOATS:
            lines.append(
                "cmp {\n  a = %(t)s[] parameter(0)\n  b = %(t)s[] parameter(1)\n  c = s32[] parameter(2)\n"
                "  d = s32[] parameter(3)\n  zero = %(t)s[] constant(0)\n  qnan = %(t)s[] constant(nan)\n"
                "  az = pred[] compare(a, zero), direction=EQ\n  a0 = %(t)s[] select(az, zero, a)\n"
                "  an = pred[] compare(a, a), direction=NE\n  a1 = %(t)s[] select(an, qnan, a0)\n"
                "  bz = pred[] compare(b, zero), direction=EQ\n  b0 = %(t)s[] select(bz, zero, b)\n"
                "  bn = pred[] compare(b, b), direction=NE\n  b1 = %(t)s[] select(bn, qnan, b0)\n"
                "  ROOT p = pred[] compare(a1, b1), direction=LT, type=TOTALORDER\n}\n" % {"t": t})
        else:
            lines.append("cmp {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  c = s32[] parameter(2)\n"
                         "  d = s32[] parameter(3)\n  ROOT p = pred[] compare(a, b), direction=LT\n}\n" % (t, t))
        lines.append("ENTRY main {")
        lines.append("  x = %s parameter(0)" % x)
        lines.append("  i = %s iota(), iota_dimension=%d" % (shape_text("s32", dims, il), axis))
        lines.append("  ROOT r = (%s, %s) sort(x, i), dimensions={%d}, to_apply=cmp" % (
            shape_text(t, dims, ol), shape_text("s32", dims, ol), axis))
    else:
        lines.append("cmp {\n  a0 = s32[] parameter(0)\n  b0 = s32[] parameter(1)\n  a1 = %s[] parameter(2)\n"
                     "  b1 = %s[] parameter(3)\n  c = s32[] parameter(4)\n  d = s32[] parameter(5)\n"
                     "  eq = pred[] compare(a0, b0), direction=EQ\n  l0 = pred[] compare(a0, b0), direction=LT\n"
                     "  l1 = pred[] compare(a1, b1), direction=LT\n  ROOT p = pred[] select(eq, l1, l0)\n}\n" % (t, t))
        lines.append("ENTRY main {")
        lines.append("  k0 = %s parameter(0)" % shape_text("s32", dims, ol))
        lines.append("  x = %s parameter(1)" % x)
        lines.append("  i = %s iota(), iota_dimension=%d" % (shape_text("s32", dims, il), axis))
        lines.append("  s = (%s, %s, %s) sort(k0, x, i), dimensions={%d}, to_apply=cmp" % (
            shape_text("s32", dims, il), shape_text(t, dims, ol), shape_text("s32", dims, ol), axis))
        lines.append("  ROOT r = %s get-tuple-element(s), index=2" % shape_text("s32", dims, ol))
    lines.append("}")
    return "\n".join(lines) + "\n"


def expected(case):
    """The expected arrays, in the order of the result's elements."""
    x, axis, op = case["x"], case["axis"], case["op"]
    if op == "sort":
        key = total_key(x) if case["total"] else x
        order = stable_order(key, axis, case["desc"])
        return [np.take_along_axis(x, order, axis)]
    if op == "argsort":
        order = np.argsort(x, axis=axis, kind="stable")
        return [np.sort(x, axis=axis, kind="stable"), order.astype(np.int32)]
    if op == "lexsort":
        if x.size == 0:
            return [np.zeros(x.shape, dtype=np.int32)]
        return [np.lexsort((x, case["k0"]), axis=axis).astype(np.int32)]
    order = stable_order(total_key(x), -1, case["desc"])[..., :case["k"]]
    return [np.take_along_axis(x, order, -1), order.astype(np.int32)]


def same(got, want):
    if got.shape != want.shape:
        return ["shape %s, expected %s" % (got.shape, want.shape)]
    if want.dtype.kind == "f":
        # bit patterns: -0 and the sign of a NaN matter
        u = UINT[{np.float16: "f16", np.float32: "f32", np.float64: "f64"}[want.dtype.type]]
        g, w = got.view(u), want.view(u)
        if got.dtype != want.dtype:
            return ["dtype %s, expected %s" % (got.dtype, want.dtype)]
        # NumPy's own NaNs may differ in payload: compare NaN-ness there
        nan = np.isnan(want) & np.isnan(got) & (np.signbit(want) == np.signbit(got))
        return list(np.flatnonzero(((g != w) & ~nan).reshape(-1)))
    return list(np.flatnonzero((got != want).reshape(-1)))


def case_flags(case):
    f = []
    if case["op"] == "lexsort":
        f += ["--input", "r%05d.k0.npy" % case["index"]]
    f += ["--input", "r%05d.x.npy" % case["index"], "--output", "out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    return f


def write_case(case, d):
    base = os.path.join(d, "r%05d" % case["index"])
    x = case["x"]
    if x.ndim >= 2 and random.Random(case["index"]).random() < 0.3:
        x = np.asfortranarray(x)
    np.save(base + ".x.npy", x, allow_pickle=False)
    if "k0" in case:
        np.save(base + ".k0.npy", case["k0"], allow_pickle=False)
    with open(base + ".hlo", "w") as f:
        f.write("// hloi-flags: " + " ".join(case_flags(case)) + "\n")
        f.write(program(case))
    return base


def outputs(case, out):
    d = os.path.join(out, "r%05d" % case["index"])
    if case["op"] in ("sort", "lexsort"):
        return [np.load(os.path.join(d, "out.npy"))]
    return [np.load(os.path.join(d, "out.%d.npy" % k)) for k in range(2)]


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
    tmp = args.keep or tempfile.mkdtemp(prefix="hloi-sort-")
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
        print("numpy_sort: hloi test ended with %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:2000]))
    failed = 0
    counts = {}
    for case in cases:
        counts[case["op"]] = counts.get(case["op"], 0) + 1
        want = expected(case)
        try:
            got = outputs(case, out)
            bad = []
            for g, w in zip(got, want):
                bad += same(g, w)
        except OSError:
            got, bad = None, ["no result"]
        if bad:
            failed += 1
            if failed <= 10:
                print("FAIL case %d (%s %s dims %s axis %d, %s engine) at %s" % (
                    case["index"], case["op"], case["type"], case["dims"], case["axis"], case["engine"], bad[:8]))
                print(program(case).rstrip())
                print("x = %r" % (case["x"],))
                print("want = %r" % (want,))
                print("got  = %r" % (got,))
                print("reproduce: cd %s && %s run %s.hlo %s" % (
                    os.path.dirname(case["base"]), args.hloi, case["base"], " ".join(case_flags(case))))
                print()
    print("numpy_sort: %d cases (seed %d: %s), %d failed, %.1f s" % (
        len(cases), args.seed, ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())), failed,
        time.time() - start))
    if failed:
        print("numpy_sort: cases kept in " + tmp)
        return 1
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

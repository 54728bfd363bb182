"""Differential test of the collectives' reducers: all-reduce (one operand
or two), reduce-scatter and collective-reduce with add, multiply,
maximum, minimum, and, or on integer, pred and float types (f16 and bf16
through converts), in row-major and column-major layouts, with the
reducer's parameters in either order, over a random permutation of the
replicas as the group (its order is the order of combination). Floats
include NaN, infinities and signed zeros.

The fast engine combines whole arrays when the reducer is such a monoid;
the reference engine applies the computation element by element: the two
must agree bit for bit (except which NaN an add or multiply of two NaNs
gives, which doc/semantics.md leaves open: those compare as NaN). Against NumPy: the fold ((v0 op v1) op v2) ...
in group order, in the element type (exact for integers and pred, and
for f32 and f64 add and multiply, which NumPy rounds as IEEE does; max
and min of floats without NaN).

usage: numpy_collective_reducers.py HLOI [--seed S] [--cases N] [--keep DIR]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    print("NumPy not found; skipped")
    sys.exit(77)

PROGRAM = """HloModule case{index}, replica_count={n}

red {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT s = {t}[] {op}({args})
}}

ENTRY main {{
  table = {tt}[{n},{dims}] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  row = {tt}[1,{dims}] dynamic-slice(table, id{zeros}), dynamic_slice_sizes={{1,{dims}}}
  xr = {tt}[{dims}] reshape(row)
  xc = {t}[{dims}] convert(xr)
  x = {t}[{dims}]{layout} copy(xc)
  {body}
}}
"""

OPS = ["add", "multiply", "maximum", "minimum", "and", "or"]
# hloi type, NumPy type of the table (and of the result read back)
TYPES = [("s32", np.int32), ("u8", np.uint8), ("s64", np.int64), ("pred", np.bool_), ("f32", np.float32),
         ("f64", np.float64), ("f16", np.float16), ("bf16", np.float32)]


def np_fold(op, vals):
    acc = vals[0].copy()
    for v in vals[1:]:
        if op == "add":
            acc = (acc | v) if acc.dtype == np.bool_ else acc + v
        elif op == "multiply":
            acc = (acc & v) if acc.dtype == np.bool_ else acc * v
        elif op == "maximum":
            acc = np.maximum(acc, v)
        elif op == "minimum":
            acc = np.minimum(acc, v)
        elif op == "and":
            acc = acc & v
        else:
            acc = acc | v
    return acc


def make_case(rng, index):
    while True:
        t, nt = TYPES[int(rng.integers(len(TYPES)))]
        op = OPS[int(rng.integers(len(OPS)))]
        isfloat = t in ("f32", "f64", "f16", "bf16")
        if not (isfloat and op in ("and", "or")):
            break
    n = int(rng.integers(2, 5))
    rank = int(rng.integers(1, 3))
    kind = ["all-reduce", "all-reduce2", "reduce-scatter", "collective-reduce"][int(rng.integers(4))]
    dims = [int(rng.integers(1, 40)) for _ in range(rank)]
    if rng.random() < 0.3:
        dims[-1] = int(rng.integers(100, 3000))
    if kind == "reduce-scatter":
        dims[0] = n * int(rng.integers(1, 8))
    order = [int(v) for v in rng.permutation(n)]
    groups = "{{%s}}" % ",".join(map(str, order))
    col = rank == 2 and rng.random() < 0.4
    layout = "{0,1}" if col else ""
    rlayout = layout if rng.random() < 0.8 else ""
    args = "a, b" if rng.random() < 0.8 else "b, a"
    shape = "%s[%s]" % (t, ",".join(map(str, dims)))
    if kind == "all-reduce":
        body = "ROOT r = %s%s all-reduce(x), replica_groups=%s, to_apply=red" % (shape, rlayout, groups)
        if t == "bf16":
            body = body.replace("ROOT r", "r") + "\n  ROOT c = f32[%s] convert(r)" % ",".join(map(str, dims))
    elif kind == "all-reduce2":
        body = ("y = %s%s negate(x)\n  ROOT r = (%s%s, %s%s) all-reduce(x, y), replica_groups=%s, to_apply=red" %
                (shape, layout, shape, rlayout, shape, rlayout, groups))
    elif kind == "reduce-scatter":
        rdims = [dims[0] // n] + dims[1:]
        rshape = "%s[%s]" % (t, ",".join(map(str, rdims)))
        body = ("ROOT r = %s%s reduce-scatter(x), replica_groups=%s, dimensions={0}, to_apply=red" %
                (rshape, rlayout, groups))
        if t == "bf16":
            body = body.replace("ROOT r", "r") + "\n  ROOT c = f32[%s] convert(r)" % ",".join(map(str, rdims))
    else:
        body = "ROOT r = %s%s collective-reduce(x), replica_groups=%s, to_apply=red" % (shape, rlayout, groups)
        if t == "bf16":
            body = body.replace("ROOT r", "r") + "\n  ROOT c = f32[%s] convert(r)" % ",".join(map(str, dims))
    if kind == "all-reduce2" and (t in ("pred", "u8") or t == "bf16"):
        kind = "all-reduce"
        body = "ROOT r = %s%s all-reduce(x), replica_groups=%s, to_apply=red" % (shape, rlayout, groups)
        if t == "bf16":
            body = body.replace("ROOT r", "r") + "\n  ROOT c = f32[%s] convert(r)" % ",".join(map(str, dims))
    tt = {"bf16": "f32"}.get(t, t)
    size = (n,) + tuple(dims)
    if t == "pred":
        table = rng.random(size) < 0.5
    elif t in ("s32", "s64"):
        table = rng.integers(-5, 6, size=size).astype(nt)
    elif t == "u8":
        table = rng.integers(0, 8, size=size).astype(nt)
    else:
        table = rng.integers(-8, 9, size=size).astype(nt) / nt(4)
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=nt)
        mask = rng.random(size) < 0.05
        table[mask] = special[rng.integers(len(special), size=int(mask.sum()))]
        table = table.astype(nt)
    program = PROGRAM.format(index=index, n=n, t=t, tt=tt, op=op, args=args, dims=",".join(map(str, dims)),
                             zeros=", zero" * rank, layout=layout, body=body)
    exact = not (t in ("f16", "bf16") or (t in ("f32", "f64") and op in ("maximum", "minimum") and
                                            np.isnan(table).any()))
    return {"n": n, "t": t, "op": op, "kind": kind, "order": order, "table": table, "program": program,
            "exact": exact and args == "a, b"}


def expected(c, r):
    vals = [c["table"][m] for m in c["order"]]
    if c["t"] == "s32":
        vals = [v.astype(np.int32) for v in vals]
    with np.errstate(all="ignore"):
        acc = np_fold(c["op"], vals)
    rank = c["order"].index(r)
    if c["kind"] == "reduce-scatter":
        k = acc.shape[0] // c["n"]
        return acc[rank * k:(rank + 1) * k]
    if c["kind"] == "collective-reduce" and rank != 0:
        return np.zeros_like(acc)
    if c["kind"] == "all-reduce2":
        return None
    return acc


def load(path):
    got = np.load(path)
    return got


def bits(a, nan=False):
    a = np.ascontiguousarray(a)
    if nan and a.dtype.kind == "f" and np.isnan(a).any():
        a = np.where(np.isnan(a), np.array(np.nan, dtype=a.dtype), a)
    return a.view(np.uint8).tobytes() if a.dtype != np.bool_ else a.tobytes()


def outputs(base, engine, r, kind):
    if kind == "all-reduce2":
        return [np.load("%s.%s.p%d.%d.npy" % (base, engine, r, i)) for i in range(2)]
    return [np.load("%s.%s.p%d.npy" % (base, engine, r))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("HLOI_DIFF_SEED", "20261202")))
    ap.add_argument("--cases", type=int, default=80)
    ap.add_argument("--jobs", type=int, default=1)  # accepted for hloi_numpy_test; cases run one by one
    ap.add_argument("--keep")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tmp = a.keep or tempfile.mkdtemp(prefix="hloi-reducers-")
    os.makedirs(tmp, exist_ok=True)
    start, failed = time.time(), 0
    for i in range(a.cases):
        c = make_case(rng, i)
        base = os.path.join(tmp, "c%05d" % i)
        with open(base + ".hlo", "w") as f:
            f.write(c["program"])
        np.save(base + ".table.npy", c["table"], allow_pickle=False)
        why, cmd, got = None, None, {}
        for engine in ("fast", "reference"):
            out = "%s.%s.npy" % (base, engine)
            cmd = [a.hloi, "run", base + ".hlo", "--input", base + ".table.npy", "--output", out,
                   "--engine", engine]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            if p.returncode != 0:
                why = "%s engine: exit %d: %s" % (engine, p.returncode, p.stderr.decode(errors="replace")[:500])
                break
            got[engine] = [outputs(base, engine, r, c["kind"]) for r in range(c["n"])]
        for r in range(c["n"]):
            if why:
                break
            loose = c["op"] in ("add", "multiply")
            for f, ref in zip(got["fast"][r], got["reference"][r]):
                if f.shape != ref.shape or bits(f, loose) != bits(ref, loose):
                    why = "replica %d: fast %s, reference %s (not bit for bit)" % (r, f.tolist(), ref.tolist())
                    break
            want = expected(c, r)
            if not why and c["exact"] and want is not None:
                g = got["reference"][r][0]
                if g.shape != want.shape or bits(g.astype(want.dtype), loose) != bits(want, loose):
                    why = "replica %d: got %s, NumPy %s" % (r, g.tolist(), want.tolist())
        if why:
            failed += 1
            if failed <= 10:
                print("FAIL case %d (%s %s %s): %s" % (i, c["kind"], c["op"], c["t"], why[:2000]))
                print(c["program"].rstrip())
                print("reproduce: " + " ".join(cmd) + "\n")
    print("numpy_collective_reducers: %d cases x 2 engines (seed %d), %d failed, %.1f s" %
          (a.cases, a.seed, failed, time.time() - start))
    if failed:
        print("numpy_collective_reducers: cases kept in %s" % tmp)
        return 1
    if not a.keep:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())

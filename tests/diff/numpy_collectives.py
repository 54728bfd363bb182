"""NumPy differential test of the collectives across participants:
all-reduce, all-gather, reduce-scatter and all-to-all over random replica
groups, on both engines. Each case runs as N replicas; participant r takes
row r of one shared input table (dynamic-slice at replica-id), so every
participant's operand differs. Integers, so that the sums are exact
whatever order they are taken in.

usage: numpy_collectives.py HLOI [--seed S] [--cases N] [--keep DIR]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

PROGRAM = """HloModule c{index}, replica_count={n}

add {{
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] {reducer}(a, b)
}}

ENTRY main {{
  table = s32[{n},{dims}] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  row = s32[1,{dims}] dynamic-slice(table, id{zeros}), dynamic_slice_sizes={{1,{dims}}}
  x = s32[{dims}] reshape(row)
  ROOT r = s32[{out_dims}] {op}(x), replica_groups={groups}{attrs}
}}
"""


def groups_text(groups):
    return "{" + ",".join("{" + ",".join(str(i) for i in g) + "}" for g in groups) + "}"


def make_case(rng, index):
    n = int(rng.choice([2, 3, 4, 6, 8]))
    sizes = [s for s in range(1, n + 1) if n % s == 0]
    size = int(rng.choice(sizes))
    perm = rng.permutation(n)
    groups = [sorted(perm[k:k + size].tolist()) if rng.random() < 0.5 else perm[k:k + size].tolist()
              for k in range(0, n, size)]
    op = str(rng.choice(["all-reduce", "all-gather", "reduce-scatter", "all-to-all"]))
    rank = int(rng.integers(1, 4))
    dims = [int(rng.integers(1, 4)) for _ in range(rank)]
    d = int(rng.integers(0, rank))
    if op in ("reduce-scatter", "all-to-all"):
        dims[d] *= size
    out = list(dims)
    attrs = ""
    reducer = str(rng.choice(["add", "maximum", "multiply"]))
    if op == "all-reduce":
        attrs = ", to_apply=add"
    elif op == "all-gather":
        out[d] *= size
        attrs = ", dimensions={%d}" % d
    elif op == "reduce-scatter":
        out[d] //= size
        attrs = ", dimensions={%d}, to_apply=add" % d
    else:
        attrs = ", dimensions={%d}" % d
    table = rng.integers(-9, 10, size=[n] + dims).astype(np.int32)
    program = PROGRAM.format(index=index, n=n, dims=",".join(map(str, dims)), zeros=", zero" * rank,
                             out_dims=",".join(map(str, out)), op=op, groups=groups_text(groups), attrs=attrs,
                             reducer=reducer)
    return {"index": index, "n": n, "groups": groups, "op": op, "d": d, "table": table, "program": program,
            "reducer": reducer}


def expected(c, r):
    g = next(g for g in c["groups"] if r in g)
    k, s, d = g.index(r), len(g), c["d"]
    xs = [c["table"][j] for j in g]
    fold = {"add": np.add, "maximum": np.maximum, "multiply": np.multiply}[c["reducer"]]
    if c["op"] == "all-reduce":
        return fold.reduce(np.stack(xs), axis=0).astype(np.int32)
    if c["op"] == "all-gather":
        return np.concatenate(xs, axis=d)
    if c["op"] == "reduce-scatter":
        return np.split(fold.reduce(np.stack(xs), axis=0).astype(np.int32), s, axis=d)[k]
    return np.concatenate([np.split(x, s, axis=d)[k] for x in xs], axis=d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("HLOI_DIFF_SEED", "20261128")))
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--keep")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tmp = a.keep or tempfile.mkdtemp(prefix="hloi-collectives-")
    os.makedirs(tmp, exist_ok=True)
    start, failed = time.time(), 0
    for i in range(a.cases):
        c = make_case(rng, i)
        base = os.path.join(tmp, "c%05d" % i)
        with open(base + ".hlo", "w") as f:
            f.write(c["program"])
        np.save(base + ".table.npy", c["table"], allow_pickle=False)
        for engine in ("fast", "reference"):
            out = "%s.%s.npy" % (base, engine)
            cmd = [a.hloi, "run", base + ".hlo", "--input", base + ".table.npy", "--output", out, "--engine", engine]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            why = None
            if p.returncode != 0:
                why = "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:500])
            else:
                for r in range(c["n"]):
                    got = np.load("%s.%s.p%d.npy" % (base, engine, r))
                    want = expected(c, r)
                    if got.shape != want.shape or not np.array_equal(got, want):
                        why = "replica %d: got %s, expected %s" % (r, got.tolist(), want.tolist())
                        break
            if why:
                failed += 1
                if failed <= 10:
                    print("FAIL case %d (%s engine, groups %s): %s" % (i, engine, c["groups"], why))
                    print(c["program"].rstrip())
                    print("reproduce: " + " ".join(cmd) + "\n")
    print("numpy_collectives: %d cases x 2 engines (seed %d), %d failed, %.1f s" %
          (a.cases, a.seed, failed, time.time() - start))
    if failed:
        print("numpy_collectives: cases kept in %s" % tmp)
        return 1
    if not a.keep:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())

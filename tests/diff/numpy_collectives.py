"""NumPy differential test of the collectives across participants:
all-reduce, all-gather, reduce-scatter, all-to-all, collective-reduce and
ragged-all-to-all over random replica groups (explicit, or XLA's mesh form
over random axes, sub-axes and device ids, whose groups are worked out here
from the devices' coordinates), and collective-permute and
send/recv over random source-target pairs (a participant no pair targets
gets zeros), on both engines. Each case runs as N replicas; participant r takes
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

PROGRAM = """HloModule case{index}, replica_count={n}

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
  {body}
}}
"""

P2P = """t = token[] after-all()
  rv = (s32[{dims}], u32[], token[]) recv(t), frontend_attributes={{_xla_send_recv_source_target_pairs="{pairs}"}}
  sd = (s32[{dims}], u32[], token[]) send(x, t), frontend_attributes={{_xla_send_recv_source_target_pairs="{pairs}"}}
  done = (s32[{dims}], token[]) recv-done(rv)
  sent = token[] send-done(sd)
  ROOT r = s32[{dims}] get-tuple-element(done), index=0"""


RAGGED = """HloModule case{index}, replica_count={n}

ENTRY main {{
  table = s32[{n},{rows},{rest}] parameter(0)
  meta = s32[{n},3,{k}] parameter(1)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  row = s32[1,{rows},{rest}] dynamic-slice(table, id, zero, zero), dynamic_slice_sizes={{1,{rows},{rest}}}
  x = s32[{rows},{rest}] reshape(row)
  m = s32[1,3,{k}] dynamic-slice(meta, id, zero, zero), dynamic_slice_sizes={{1,3,{k}}}
  mm = s32[3,{k}] reshape(m)
  q0 = s32[1,{k}] slice(mm), slice={{[0:1], [0:{k}]}}
  q1 = s32[1,{k}] slice(mm), slice={{[1:2], [0:{k}]}}
  q2 = s32[1,{k}] slice(mm), slice={{[2:3], [0:{k}]}}
  io = s32[{meta_dims}] reshape(q0)
  ss = s32[{meta_dims}] reshape(q1)
  oo = s32[{meta_dims}] reshape(q2)
  neg = s32[] constant(-1)
  out = s32[{out_rows},{rest}] broadcast(neg), dimensions={{}}
  ROOT r = s32[{out_rows},{rest}] ragged-all-to-all(x, out, io, ss, oo, ss), replica_groups={groups}
}}
"""


def make_ragged(rng, index, n, groups, mesh=None):
    """Each member sends U updates to each member of its group: rows of its
    input at random offsets and sizes, laid out on the receiver one after
    another in (sender, update) order (output_offsets in the sender's
    metadata name rows of the receiver's output)."""
    size = len(groups[0])
    upd = int(rng.integers(1, 3))
    rows, rest = int(rng.integers(1, 6)), int(rng.integers(1, 3))
    k = size * upd
    out_rows = max(1, size * upd * rows)
    table = rng.integers(-9, 10, size=(n, rows, rest)).astype(np.int32)
    meta = np.zeros((n, 3, k), dtype=np.int32)
    for g in groups:
        for dst_rank, dst in enumerate(g):
            at = 0
            for src in g:
                for u in range(upd):
                    i = dst_rank * upd + u
                    cnt = int(rng.integers(0, rows + 1))
                    meta[src, 0, i] = int(rng.integers(0, rows - cnt + 1))
                    meta[src, 1, i] = cnt
                    meta[src, 2, i] = at
                    at += cnt
    meta_dims = str(k) if rng.random() < 0.5 else "%d,%d" % (size, upd)
    program = RAGGED.format(index=index, n=n, rows=rows, rest=rest, k=k, meta_dims=meta_dims,
                            out_rows=out_rows, groups=mesh or groups_text(groups))
    return {"index": index, "n": n, "groups": groups, "op": "ragged-all-to-all", "table": table, "meta": meta,
            "upd": upd, "out_rows": out_rows, "program": program}


def expected_ragged(c, r):
    g = next(g for g in c["groups"] if r in g)
    k, upd = g.index(r), c["upd"]
    out = np.full((c["out_rows"], c["table"].shape[2]), -1, dtype=np.int32)
    for src in g:
        io, ss, oo = c["meta"][src]
        for u in range(upd):
            i = k * upd + u
            out[oo[i]:oo[i] + ss[i]] = c["table"][src][io[i]:io[i] + ss[i]]
    return out


def groups_text(groups):
    return "{" + ",".join("{" + ",".join(str(i) for i in g) + "}" for g in groups) + "}"


def factorizations(n):
    """The ways to write n as a product of factors > 1, in order."""
    if n == 1:
        return [[]]
    out = []
    for f in range(2, n + 1):
        if n % f == 0:
            out += [[f] + rest for rest in factorizations(n // f)]
    return out


def sub_axes(size):
    """The sub-axes (pre, size) of an axis of `size` XLA accepts: size > 1,
    pre * size dividing the axis, smaller than it."""
    return [(pre, s) for pre in range(1, size + 1) for s in range(2, size)
            if size % (pre * s) == 0 and s < size]


def coexist(a, b):
    """XLA's AxisRef::CanCoexistWithoutOverlap of two (axis, pre, size),
    pre None for a whole axis."""
    if a[0] != b[0]:
        return True
    if a[1] is None or b[1] is None:
        return False
    an, bn = a[1] * a[2], b[1] * b[2]
    if an > b[1] and bn > a[1]:
        return False
    return max(a[1], b[1]) % min(an, bn) == 0


def mesh_groups(sizes, devices, refs):
    """The groups of mesh replica groups, from the devices' coordinates:
    devices that differ only in the named (sub-)axes form a group, ordered
    by the named coordinates (the first named most major); the groups in
    the order of their first member's mesh position. A sub-axis (pre, s) of
    an axis of n is the digit (c // (n // (pre * s))) % s of coordinate c."""
    groups = {}
    for pos, coord in enumerate(np.ndindex(*sizes)):
        digits, key = [], list(coord)
        for axis, pre, size in refs:
            n = sizes[axis]
            if pre is None:
                digits.append(coord[axis])
                key[axis] = None
            else:
                stride = n // (pre * size)
                d = (coord[axis] // stride) % size
                digits.append(d)
                if key[axis] is not None:
                    key[axis] -= d * stride
        k = tuple(-1 if c is None else c for c in key)
        groups.setdefault(k, []).append((tuple(digits), devices[pos]))
    return [[d for _, d in sorted(m)] for _, m in sorted(groups.items())]


def make_mesh(rng, n):
    """A random mesh of n devices with random replica-group axes: its text
    and its groups."""
    sizes = [int(x) for x in rng.permutation(factorizations(n)[int(rng.integers(len(factorizations(n))))])]
    names = ["'%s'" % c for c in "abcd"[:len(sizes)]]
    refs = []
    for axis, size in enumerate(sizes):
        for _ in range(int(rng.integers(0, 3))):
            cand = [(axis, None, size)] + [(axis, pre, s) for pre, s in sub_axes(size)]
            r = cand[int(rng.integers(len(cand)))]
            if all(coexist(r, q) for q in refs):
                refs.append(r)
    refs = [refs[i] for i in rng.permutation(len(refs))]
    # XLA refuses neighbours that would merge into one sub-axis
    refs = [r for i, r in enumerate(refs)
            if not (i and refs[i - 1][0] == r[0] and refs[i - 1][1] is not None and r[1] is not None and
                    refs[i - 1][1] * refs[i - 1][2] == r[1])]
    ids, kind = list(range(n)), int(rng.integers(3))
    text = "mesh[%s]" % ",".join("%s=%d" % (a, s) for a, s in zip(names, sizes))
    if kind == 1 and n > 2:
        while ids == list(range(n)):
            ids = [int(x) for x in rng.permutation(n)]
        text += ", device_ids=(%s)" % ",".join(map(str, ids))
    elif kind == 2:
        reshape = factorizations(n)[int(rng.integers(len(factorizations(n))))]
        perm = [int(x) for x in rng.permutation(len(reshape))]
        ids = np.arange(n).reshape(reshape).transpose(perm).reshape(-1).tolist()
        text += ", device_ids=([%s]%s)" % (",".join(map(str, reshape)),
                                           "T(%s)" % ",".join(map(str, perm)) if len(reshape) > 1 else "")
    refs_text = ",".join(names[a] + ("" if pre is None else ":(%d)%d" % (pre, s)) for a, pre, s in refs)
    return "%s {%s}" % (text, refs_text), mesh_groups(sizes, ids, refs)


def make_case(rng, index):
    n = int(rng.choice([2, 3, 4, 6, 8]))
    sizes = [s for s in range(1, n + 1) if n % s == 0]
    size = int(rng.choice(sizes))
    perm = rng.permutation(n)
    groups = [sorted(perm[k:k + size].tolist()) if rng.random() < 0.5 else perm[k:k + size].tolist()
              for k in range(0, n, size)]
    mesh = None
    if rng.random() < 0.4:
        mesh, groups = make_mesh(rng, n)
        size = len(groups[0])
    op = str(rng.choice(["all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
                         "send-recv", "collective-reduce", "ragged-all-to-all"]))
    if op == "ragged-all-to-all":
        return make_ragged(rng, index, n, groups, mesh)
    rank = int(rng.integers(1, 4))
    dims = [int(rng.integers(1, 4)) for _ in range(rank)]
    d = int(rng.integers(0, rank))
    if op in ("reduce-scatter", "all-to-all"):
        dims[d] *= size
    out = list(dims)
    attrs = ""
    reducer = str(rng.choice(["add", "maximum", "multiply"]))
    if op in ("all-reduce", "collective-reduce"):
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
    # source-target pairs: each participant a source at most once and a target at most once
    targets = rng.permutation(n)
    pairs = [[s, int(targets[s])] for s in range(n) if rng.random() < 0.7]
    dims_text = ",".join(map(str, dims))
    if op == "collective-permute":
        body = "ROOT r = s32[%s] collective-permute(x), source_target_pairs=%s" % (dims_text, groups_text(pairs))
    elif op == "send-recv":
        body = P2P.format(dims=dims_text, pairs=groups_text(pairs))
    else:
        body = "ROOT r = s32[%s] %s(x), replica_groups=%s%s" % (",".join(map(str, out)), op,
                                                                  mesh or groups_text(groups), attrs)
    program = PROGRAM.format(index=index, n=n, dims=dims_text, zeros=", zero" * rank, body=body, reducer=reducer)
    return {"index": index, "n": n, "groups": groups, "op": op, "d": d, "table": table, "program": program,
            "reducer": reducer, "pairs": pairs}


def expected(c, r):
    if c["op"] == "ragged-all-to-all":
        return expected_ragged(c, r)
    if c["op"] in ("collective-permute", "send-recv"):
        src = [s for s, t in c["pairs"] if t == r]
        return c["table"][src[0]] if src else np.zeros_like(c["table"][0])
    g = next(g for g in c["groups"] if r in g)
    k, s, d = g.index(r), len(g), c["d"]
    xs = [c["table"][j] for j in g]
    fold = {"add": np.add, "maximum": np.maximum, "multiply": np.multiply}[c["reducer"]]
    if c["op"] == "all-reduce":
        return fold.reduce(np.stack(xs), axis=0).astype(np.int32)
    if c["op"] == "collective-reduce":  # on the group's root (rank 0), zeros elsewhere
        folded = fold.reduce(np.stack(xs), axis=0).astype(np.int32)
        return folded if k == 0 else np.zeros_like(folded)
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
        inputs = ["--input", base + ".table.npy"]
        if "meta" in c:
            np.save(base + ".meta.npy", c["meta"], allow_pickle=False)
            inputs += ["--input", base + ".meta.npy"]
        for engine in ("fast", "reference"):
            out = "%s.%s.npy" % (base, engine)
            cmd = [a.hloi, "run", base + ".hlo"] + inputs + ["--output", out, "--engine", engine]
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

#!/usr/bin/python3
"""Differential test of hloi's bf16 and f16 dots: both engines against a
NumPy model, on random programs and on fixed ones for the edges.

The fast engine sums a dot whose result is bf16, f16 or f32 and whose
operands are bf16, f16 or f32 (not all f32) in its own order: oneDNN's bf16
matmul or f32 GEMM tiles, in f32, rounded once to the result type
(doc/semantics.md, "Dot and convolution"); the reference engine sums in
XLA's evaluator's order, also in f32. Neither is bit for bit the exact sum,
so both are checked against it within the bound of an f32 sum rounded once:

    |got - exact| <= u * |exact| + (K + 2) * 2^-24 * sum |products| + tiny

with u the result type's unit roundoff (bf16 2^-8, f16 2^-11, f32 2^-24),
K the contracting size and tiny the type's smallest subnormal. The exact
sum is NumPy's einsum in f64 of the operands as the dot reads them:
converted to the result type first when wider or other than it.

Random cases: bf16, f16 and mixed operand types, 0-2 batch, contracting
and free dims a side in any positions, random layouts, sizes large enough
(most over 2^14 multiply-adds) to take the fast engine's GEMM paths.
Fixed cases: k = 0, sizes 0 and 1, a long k (4096) whose products cancel,
mha_block's batch of heads, and its second product with subnormal
probabilities. The fast engine runs three ways: as it is, with
HLOI_DNNL=0 (the f32 GEMM tiles alone) and with HLOI_DNNL=all (every size
to oneDNN, where it takes the case). Values have full mantissas.

usage: numpy_half_dot.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy_half_dot: NumPy is not installed; skipped")
    sys.exit(77)

TYPES = [("bf16", "bf16", "bf16")] * 4 + [("bf16", "bf16", "f32"), ("f16", "f16", "f16"), ("f16", "f16", "f32"),
                                          ("bf16", "f32", "bf16"), ("f32", "bf16", "f32"), ("f16", "bf16", "bf16"),
                                          ("f32", "f32", "bf16"), ("f32", "f16", "f16"), ("bf16", "f16", "f16")]
UNIT = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 2.0 ** -24}
TINY = {"bf16": 2.0 ** -133, "f16": 2.0 ** -24, "f32": 2.0 ** -149}
ENGINES = [("fast", {}), ("fast HLOI_DNNL=0", {"HLOI_DNNL": "0"}), ("fast HLOI_DNNL=all", {"HLOI_DNNL": "all"}),
           ("reference", {})]


def to_bf16_bits(x):
    """f32 values to bf16 bits, round to nearest even."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return r.astype(np.uint16)


def from_bf16_bits(b):
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def as_type(x, t):
    """x (f64) rounded to t, as f64."""
    if t == "bf16":
        return from_bf16_bits(to_bf16_bits(np.asarray(x, dtype=np.float32))).astype(np.float64)
    if t == "f16":
        return np.asarray(x).astype(np.float16).astype(np.float64)
    return np.asarray(x).astype(np.float32).astype(np.float64)


def stored(x, t):
    """x (f64, already of type t) as the .npy hloi reads for t."""
    if t == "bf16":
        return to_bf16_bits(x.astype(np.float32))
    return x.astype(np.float16 if t == "f16" else np.float32)


def loaded(a, t):
    if t == "bf16":
        return from_bf16_bits(a.view(np.uint16)).astype(np.float64)
    return a.astype(np.float64)


def layout(rng, rank):
    perm = list(range(rank))[::-1]
    if rng.random() < 0.6:
        rng.shuffle(perm)
    return "{" + ",".join(map(str, perm)) + "}"


def shape(t, dims, lay):
    return "%s[%s]%s" % (t, ",".join(map(str, dims)), lay)


def ints(v):
    return "{" + ",".join(map(str, v)) + "}"


def values(rng, dims):
    n = int(np.prod(dims)) if dims else 1
    return np.array([rng.gauss(0, 1) for _ in range(n)]).reshape(dims)


def make_case(rng, types, bs, ks, ms, ns, lroles, rroles, border, korder, lays=None, cancel=False,
              subnormal=False):
    lt, rt_, ot = types
    sz = {"b": bs, "k": ks, "m": ms, "n": ns}
    ldims = [sz[r][i] for r, i in lroles]
    rdims = [sz[r][i] for r, i in rroles]
    lb = [lroles.index(("b", i)) for i in border]
    rb = [rroles.index(("b", i)) for i in border]
    lc = [lroles.index(("k", i)) for i in korder]
    rc = [rroles.index(("k", i)) for i in korder]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    name = {}
    for role in ("b", "k", "m", "n"):
        for i in range(len(sz[role])):
            name[(role, i)] = next(letters)
    osub = "".join(name[("b", i)] for i in border)
    osub += "".join(name[x] for x in lroles if x[0] == "m")
    osub += "".join(name[x] for x in rroles if x[0] == "n")
    spec = "%s,%s->%s" % ("".join(name[x] for x in lroles), "".join(name[x] for x in rroles), osub)
    odims = [bs[i] for i in border] + [sz[r][i] for r, i in lroles if r == "m"] + \
            [sz[r][i] for r, i in rroles if r == "n"]
    lays = lays or [layout(rng, len(ldims)), layout(rng, len(rdims)), layout(rng, len(odims))]
    attrs = []
    if lb:
        attrs += ["lhs_batch_dims=" + ints(lb), "rhs_batch_dims=" + ints(rb)]
    attrs += ["lhs_contracting_dims=" + ints(lc), "rhs_contracting_dims=" + ints(rc)]
    text = "HloModule d\n\nENTRY main {\n  x = %s parameter(0)\n  y = %s parameter(1)\n" \
           "  ROOT r = %s dot(x, y), %s\n}\n" % (
               shape(lt, ldims, lays[0]), shape(rt_, rdims, lays[1]), shape(ot, odims, lays[2]), ", ".join(attrs))
    a = values(rng, ldims)
    b = values(rng, rdims)
    if cancel:
        # k last on both sides: products in pairs of opposite sign, the
        # last few small, so the sum is far below the sum of |products|
        h = (ldims[-1] - 96) // 2
        a = as_type(a, lt)
        b = as_type(b, rt_)
        a[..., h:2 * h] = -a[..., :h]
        b[..., h:2 * h] = b[..., :h]
        a[..., 2 * h:] *= 1e-3
    if subnormal:
        # a third of the lhs scaled into f32's (and bf16's) subnormals, as
        # softmax probabilities are: the GEMM tiles add their products
        # after sgemm
        a = np.where(np.array([rng.random() < 1 / 3 for _ in range(a.size)]).reshape(a.shape), a * 2.0 ** -130, a)
    a = as_type(a, lt)
    b = as_type(b, rt_)
    k = int(np.prod(ks)) if ks else 1
    return {"text": text, "inputs": [(a, lt), (b, rt_)], "spec": spec, "ot": ot, "k": k}


def gen_random(rng):
    types = rng.choice(TYPES)
    nb, nk, nm, nn = rng.choice([0, 1, 1, 2]), rng.choice([1, 1, 1, 2]), rng.choice([0, 1, 1, 2]), \
        rng.choice([0, 1, 1, 2])
    edge = lambda big: rng.choice([0, 1]) if rng.random() < 0.05 else rng.randint(1, big)
    bs = [edge(3) for _ in range(nb)]
    ks = [edge(200 // nk) for _ in range(nk)]
    ms = [edge(40 // max(nm, 1)) for _ in range(nm)]
    ns = [edge(40 // max(nn, 1)) for _ in range(nn)]
    lroles = [("b", i) for i in range(nb)] + [("k", i) for i in range(nk)] + [("m", i) for i in range(nm)]
    rroles = [("b", i) for i in range(nb)] + [("k", i) for i in range(nk)] + [("n", i) for i in range(nn)]
    rng.shuffle(lroles)
    rng.shuffle(rroles)
    border, korder = list(range(nb)), list(range(nk))
    rng.shuffle(border)
    rng.shuffle(korder)
    return make_case(rng, types, bs, ks, ms, ns, lroles, rroles, border, korder)


def fixed_cases(rng):
    M, K, N, B = ("m", 0), ("k", 0), ("n", 0), ("b", 0)
    out = []
    for types in (("bf16", "bf16", "bf16"), ("f16", "f16", "f16"), ("bf16", "f32", "bf16")):
        # k = 0: zeros
        out.append(make_case(rng, types, [], [0], [30], [40], [M, K], [K, N], [], [0]))
        # sizes 0 and 1
        out.append(make_case(rng, types, [], [300], [0], [40], [M, K], [K, N], [], [0]))
        out.append(make_case(rng, types, [], [5000], [1], [1], [M, K], [K, N], [], [0]))
        # a long k whose products cancel: rows of [v, -v, small]
        out.append(make_case(rng, types, [], [4096], [3], [70], [M, K], [N, K], [], [0], cancel=True))
        # mha_block's heads, the contracting dim first in the rhs, a column-major result
        out.append(make_case(rng, types, [12], [64], [128], [128], [B, M, K], [B, K, N], [0], [0],
                             lays=["{2,1,0}", "{1,2,0}", "{1,2,0}"]))
        # mha_block's second product, a third of its lhs subnormal
        out.append(make_case(rng, types, [12], [128], [128], [64], [B, M, K], [B, K, N], [0], [0], subnormal=True))
        # the contracting dims split around a free dim, in other orders on each side
        out.append(make_case(rng, types, [2], [9, 11], [33], [7, 5], [("k", 1), M, B, ("k", 0)],
                             [("n", 1), ("k", 0), B, N, ("k", 1)], [0], [1, 0]))
    return out


def run_case(hloi, d, i, case):
    base = os.path.join(d, "case%d" % i)
    with open(base + ".hlo", "w") as f:
        f.write(case["text"])
    args = []
    for j, (a, t) in enumerate(case["inputs"]):
        np.save("%s.in%d.npy" % (base, j), stored(a, t))
        args += ["--input", "%s.in%d.npy" % (base, j)]
    (a, lt), (b, rt_) = case["inputs"]
    ot = case["ot"]
    # the operands as the dot reads them: through the result type
    ra = a if lt == ot or ot == "f32" else as_type(a, ot)
    rb = b if rt_ == ot or ot == "f32" else as_type(b, ot)
    exact = np.einsum(case["spec"], ra, rb)
    mag = np.einsum(case["spec"], np.abs(ra), np.abs(rb))
    tol = UNIT[ot] * np.abs(exact) + (case["k"] + 2) * 2.0 ** -24 * mag * (1 + UNIT[ot]) + TINY[ot]
    for engine, env in ENGINES:
        out = "%s.%d.npy" % (base, ENGINES.index((engine, env)))
        p = subprocess.run([hloi, "run", base + ".hlo", "--engine", engine.split()[0], "--output", out] + args,
                           capture_output=True, text=True, env=dict(os.environ, **env))
        if p.returncode != 0:
            return "%s engine failed (exit %d): %s" % (engine, p.returncode, p.stderr.strip())
        g = loaded(np.load(out), ot)
        if g.shape != exact.shape:
            return "%s engine: result shape %s, NumPy %s" % (engine, g.shape, exact.shape)
        bad = np.abs(g - exact) > tol
        if np.any(bad):
            at = tuple(int(v) for v in np.argwhere(bad)[0])
            return "%s engine differs at %s: got %r, exact %r, bound %r (%d of %d elements)" % (
                engine, at, g[at], exact[at], tol[at], int(np.sum(bad)), bad.size)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep")
    args = ap.parse_args()
    d = args.keep or tempfile.mkdtemp(prefix="numpy_half_dot.")
    os.makedirs(d, exist_ok=True)
    cases = list(enumerate(fixed_cases(random.Random(args.seed))))
    for i in range(args.cases):
        cases.append((len(cases), gen_random(random.Random(args.seed * 1000003 + i))))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(run_case, args.hloi, d, i, c): (i, c) for i, c in cases}
        for fut in concurrent.futures.as_completed(futs):
            i, c = futs[fut]
            why = fut.result()
            if why:
                failed += 1
                if failed <= 5:
                    print("case %d (seed %d) FAILED: %s\n%s" % (i, args.seed, why, c["text"]))
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    print("numpy_half_dot: %d dots, %d engines each" % (len(cases), len(ENGINES)))
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

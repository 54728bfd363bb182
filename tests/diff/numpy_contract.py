#!/usr/bin/python3
"""Differential test of hloi's dot and convolution against NumPy: random
programs run through `hloi run` with both engines (fast and reference),
compared with NumPy models written independently of hloi.

dot: random dimension numbers (0-2 batch, contracting and free dims a
side, in any positions), random layouts of both operands and the result,
sizes 0-5; NumPy's einsum is the model. convolution: random dim_labels
(any placement of batch, feature and 0-3 spatial dims in input, kernel and
output), strides, padding (negative too), lhs and rhs dilation, window
reversal, feature_group_count or batch_group_count, random layouts; the
model dilates, pads and slides the input with plain NumPy indexing and
sums with einsum per window position.

Types: f32, f64, c64, c128 (through BLAS in the fast engine), f16 (summed
in f32), s32, s8 (a dot wraps, a convolution clamps to [-128, 127], as
XLA's evaluator does), u8, pred (OR of ANDs), and mixed s8 x s8 -> s32 and
f16 x f16 -> f32. Values are multiples of 1/8 in [-4, 4] (integers in
[-12, 12]), so every float sum is exact in f32 in any order and results
must match exactly; a tenth of the float cases use values with full
mantissas instead, compared within 1e-5 of the sum of |products| (BLAS sums
in its own order).

usage: numpy_contract.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import argparse
import concurrent.futures
import itertools
import os
import random
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy_contract: NumPy is not installed; skipped")
    sys.exit(77)

NP = {"pred": np.bool_, "s8": np.int8, "s32": np.int32, "u8": np.uint8, "f16": np.float16,
      "f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
# (lhs type, rhs type, result type)
TYPES = [("f32", "f32", "f32")] * 4 + [("f64", "f64", "f64"), ("c64", "c64", "c64"),
                                      ("c128", "c128", "c128"), ("f16", "f16", "f16"),
                                      ("s32", "s32", "s32"), ("s8", "s8", "s8"), ("u8", "u8", "u8"),
                                      ("pred", "pred", "pred"), ("s8", "s8", "s32"),
                                      ("f16", "f16", "f32")]


def values(rng, t, dims, smooth):
    n = int(np.prod(dims)) if dims else 1
    if t == "pred":
        v = np.array([rng.random() < 0.3 for _ in range(n)], dtype=np.bool_)
    elif t in ("s8", "s32"):
        v = np.array([rng.randint(-12, 12) for _ in range(n)], dtype=NP[t])
    elif t == "u8":
        v = np.array([rng.randint(0, 12) for _ in range(n)], dtype=NP[t])
    elif t in ("c64", "c128"):
        re = [rng.randint(-32, 32) / 8 for _ in range(n)]
        im = [rng.randint(-32, 32) / 8 for _ in range(n)]
        if not smooth:
            re = [rng.uniform(-4, 4) for _ in range(n)]
        v = (np.array(re) + 1j * np.array(im)).astype(NP[t])
    elif smooth:
        v = np.array([rng.randint(-32, 32) / 8 for _ in range(n)], dtype=NP[t])
    else:
        v = np.array([rng.uniform(-4, 4) for _ in range(n)], dtype=NP[t])
    return v.reshape(dims)


def layout(rng, rank):
    perm = list(range(rank))[::-1]
    if rng.random() < 0.6:
        rng.shuffle(perm)
    return "{" + ",".join(map(str, perm)) + "}"


def shape(t, dims, lay):
    return "%s[%s]%s" % (t, ",".join(map(str, dims)), lay if dims else "")


def ints(v):
    return "{" + ",".join(map(str, v)) + "}"


# --- dot ---------------------------------------------------------------------------

def gen_dot(rng):
    lt, rt_, ot = rng.choice(TYPES)
    nb, nk, nm, nn = (rng.choice([0, 0, 1, 1, 2]) for _ in range(4))
    size = lambda: rng.choice([0, 1, 1, 2, 3, 4, 5]) if rng.random() < 0.15 else rng.randint(1, 5)
    bs = [size() for _ in range(nb)]
    ks = [size() for _ in range(nk)]
    ms = [size() for _ in range(nm)]
    ns = [size() for _ in range(nn)]
    # positions of each role in each operand
    lroles = [("b", i) for i in range(nb)] + [("k", i) for i in range(nk)] + [("m", i) for i in range(nm)]
    rroles = [("b", i) for i in range(nb)] + [("k", i) for i in range(nk)] + [("n", i) for i in range(nn)]
    rng.shuffle(lroles)
    rng.shuffle(rroles)
    # batch and contracting lists pair up in a random order
    border = list(range(nb))
    korder = list(range(nk))
    rng.shuffle(border)
    rng.shuffle(korder)
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
    lsub = "".join(name[x] for x in lroles)
    rsub = "".join(name[x] for x in rroles)
    osub = "".join(name[("b", i)] for i in border)
    osub += "".join(name[x] for x in lroles if x[0] == "m")
    osub += "".join(name[x] for x in rroles if x[0] == "n")
    odims = [bs[i] for i in border] + [sz[r][i] for r, i in lroles if r == "m"] + \
            [sz[r][i] for r, i in rroles if r == "n"]
    if len(odims) > 16:
        return None
    smooth = rng.random() >= 0.1
    attrs = []
    if lb:
        attrs += ["lhs_batch_dims=" + ints(lb), "rhs_batch_dims=" + ints(rb)]
    if lc or rng.random() < 0.5:
        attrs += ["lhs_contracting_dims=" + ints(lc), "rhs_contracting_dims=" + ints(rc)]
    if rng.random() < 0.2:
        attrs.append("operand_precision={highest,default}")
    text = "HloModule d\n\nENTRY main {\n  x = %s parameter(0)\n  y = %s parameter(1)\n" \
           "  ROOT r = %s dot(x, y)%s\n}\n" % (
               shape(lt, ldims, layout(rng, len(ldims))), shape(rt_, rdims, layout(rng, len(rdims))),
               shape(ot, odims, layout(rng, len(odims))), "".join(", " + a for a in attrs))
    a = values(rng, lt, ldims, smooth)
    b = values(rng, rt_, rdims, smooth)
    spec = "%s,%s->%s" % (lsub, rsub, osub)
    return {"kind": "dot", "text": text, "inputs": [a, b], "model": (spec,), "ot": ot, "smooth": smooth}


def model_dot(case):
    (spec,) = case["model"]
    a, b = case["inputs"]
    ot = case["ot"]
    if ot == "pred":
        r = np.einsum(spec, a.astype(np.int64), b.astype(np.int64)) > 0
        return r, None
    if ot in ("s8", "s32", "u8"):
        return np.einsum(spec, a.astype(np.int64), b.astype(np.int64)).astype(NP[ot]), None
    wide = np.complex128 if ot in ("c64", "c128") else np.float64
    exact = np.einsum(spec, a.astype(wide), b.astype(wide))
    mag = np.einsum(spec, np.abs(a.astype(wide)), np.abs(b.astype(wide)))
    return exact.astype(NP[ot]), mag


# --- convolution -------------------------------------------------------------------------

def gen_conv(rng):
    lt, kt, ot = rng.choice(TYPES)
    ns = rng.choice([0, 1, 1, 2, 2, 2, 3])
    groups = rng.choice([1, 1, 1, 2, 3])
    fgc, bgc = (groups, 1) if rng.random() < 0.6 else (1, groups)
    cin_g, cout_g, nout = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    cin = cin_g * fgc
    cout = cout_g * groups
    batch = nout * bgc
    win = []
    isz, ksz, osz = [], [], []
    for _ in range(ns):
        for _ in range(50):
            s, k = rng.randint(1, 7), rng.randint(1, 3)
            st, ld, rd = rng.randint(1, 3), rng.choice([1, 1, 2]), rng.choice([1, 1, 2])
            lo, hi = rng.randint(-1, 2), rng.randint(-1, 2)
            padded = (s - 1) * ld + 1 + lo + hi
            wd = (k - 1) * rd + 1
            if padded >= 0:
                break
        o = (padded - wd) // st + 1 if padded >= wd else 0
        isz.append(s)
        ksz.append(k)
        osz.append(o)
        win.append((k, st, lo, hi, ld, rd, rng.random() < 0.3))
    if int(np.prod(osz)) * nout * cout > 4000 or int(np.prod(isz)) * batch * cin > 4000:
        return None
    spatial = [str(i) for i in range(ns)]
    ilab = ["b", "f"] + spatial
    klab = ["i", "o"] + spatial
    olab = ["b", "f"] + spatial
    for lab in (ilab, klab, olab):
        rng.shuffle(lab)
    size_of = {"b": batch, "f": cin}
    idims = [size_of[c] if c in "bf" else isz[int(c)] for c in ilab]
    kdims = [cin_g if c == "i" else cout if c == "o" else ksz[int(c)] for c in klab]
    odims = [nout if c == "b" else cout if c == "f" else osz[int(c)] for c in olab]
    wtext = ""
    if ns:
        wtext = "size=" + "x".join(str(w[0]) for w in win)
        wtext += " stride=" + "x".join(str(w[1]) for w in win)
        wtext += " pad=" + "x".join("%d_%d" % (w[2], w[3]) for w in win)
        wtext += " lhs_dilate=" + "x".join(str(w[4]) for w in win)
        wtext += " rhs_dilate=" + "x".join(str(w[5]) for w in win)
        wtext += " rhs_reversal=" + "x".join(str(int(w[6])) for w in win)
    attrs = []
    if ns:
        attrs.append("window={%s}" % wtext)
    attrs.append("dim_labels=%s_%s->%s" % ("".join(ilab), "".join(klab), "".join(olab)))
    if fgc > 1:
        attrs.append("feature_group_count=%d" % fgc)
    if bgc > 1:
        attrs.append("batch_group_count=%d" % bgc)
    smooth = rng.random() >= 0.1
    text = "HloModule c\n\nENTRY main {\n  x = %s parameter(0)\n  k = %s parameter(1)\n" \
           "  ROOT r = %s convolution(x, k), %s\n}\n" % (
               shape(lt, idims, layout(rng, len(idims))), shape(kt, kdims, layout(rng, len(kdims))),
               shape(ot, odims, layout(rng, len(odims))), ", ".join(attrs))
    a = values(rng, lt, idims, smooth)
    k = values(rng, kt, kdims, smooth)
    model = (ilab, klab, olab, win, fgc, bgc, osz)
    return {"kind": "conv", "text": text, "inputs": [a, k], "model": model, "ot": ot, "smooth": smooth}


def conv_wide(x, k, model, wide):
    """The convolution in canonical [batch, feature, spatial...] order."""
    ilab, klab, olab, win, fgc, bgc, osz = model
    ns = len(win)
    sp = [str(i) for i in range(ns)]
    x = np.transpose(x, [ilab.index(c) for c in ["b", "f"] + sp]).astype(wide)
    k = np.transpose(k, [klab.index(c) for c in ["o", "i"] + sp]).astype(wide)
    for i, (ksz, st, lo, hi, ld, rd, rev) in enumerate(win):
        if rev:
            k = np.flip(k, axis=2 + i)
    # base dilation: zeros between input elements
    for i, (ksz, st, lo, hi, ld, rd, rev) in enumerate(win):
        s = x.shape[2 + i]
        if ld > 1 and s > 0:
            shp = list(x.shape)
            shp[2 + i] = (s - 1) * ld + 1
            y = np.zeros(shp, dtype=wide)
            idx = [slice(None)] * x.ndim
            idx[2 + i] = slice(0, None, ld)
            y[tuple(idx)] = x
            x = y
    # padding: positive pads with zeros, negative crops
    for i, (ksz, st, lo, hi, ld, rd, rev) in enumerate(win):
        ax = 2 + i
        pad = [(0, 0)] * x.ndim
        pad[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, pad)
        n = x.shape[ax]
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), n - max(-hi, 0))
        x = x[tuple(idx)]
    batch, cin = x.shape[0], x.shape[1]
    cout = k.shape[0]
    groups = max(fgc, bgc)
    nout = batch // bgc
    out = np.zeros([nout, cout] + list(osz), dtype=wide)
    cin_g = cin // fgc
    cout_g = cout // groups
    for pos in itertools.product(*[range(w[0]) for w in win]):
        idx = [slice(None), slice(None)]
        for i, (ksz, st, lo, hi, ld, rd, rev) in enumerate(win):
            start = pos[i] * rd
            idx.append(slice(start, start + (osz[i] - 1) * st + 1, st) if osz[i] > 0 else slice(0, 0))
        patch = x[tuple(idx)]                     # [batch, cin, osz...]
        kk = k[(slice(None), slice(None)) + tuple(pos)]  # [cout, cin_g]
        for g in range(groups):
            fs = slice(g * cin_g, (g + 1) * cin_g) if fgc > 1 else slice(None)
            bs = slice(g * nout, (g + 1) * nout) if bgc > 1 else slice(None)
            os_ = slice(g * cout_g, (g + 1) * cout_g)
            out[:, os_] += np.einsum("bc...,oc->bo...", patch[bs, fs], kk[os_])
    return np.transpose(out, [["b", "f"].index(c) if c in "bf" else 2 + int(c) for c in olab])


def model_conv(case):
    x, k = case["inputs"]
    ot = case["ot"]
    if ot == "pred":
        return conv_wide(x.astype(np.int64), k.astype(np.int64), case["model"], np.int64) > 0, None
    if ot in ("s8", "s32", "u8"):
        r = conv_wide(x.astype(np.int64), k.astype(np.int64), case["model"], np.int64)
        info = np.iinfo(NP[ot])
        return np.clip(r, info.min, info.max).astype(NP[ot]), None
    wide = np.complex128 if ot in ("c64", "c128") else np.float64
    r = conv_wide(x, k, case["model"], wide)
    mag = conv_wide(np.abs(x.astype(wide)), np.abs(k.astype(wide)), case["model"], wide)
    return r.astype(NP[ot]), mag


# --- running ---------------------------------------------------------------------------------

def run_case(hloi, d, i, case):
    base = os.path.join(d, "case%d" % i)
    with open(base + ".hlo", "w") as f:
        f.write(case["text"])
    args = []
    for j, a in enumerate(case["inputs"]):
        np.save("%s.in%d.npy" % (base, j), a)
        args += ["--input", "%s.in%d.npy" % (base, j)]
    got = {}
    for engine in ("fast", "reference"):
        out = "%s.%s.npy" % (base, engine)
        p = subprocess.run([hloi, "run", base + ".hlo", "--engine", engine, "--output", out] + args,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return "%s engine failed (exit %d): %s" % (engine, p.returncode, p.stderr.strip())
        got[engine] = np.load(out)
    want, mag = (model_dot if case["kind"] == "dot" else model_conv)(case)
    for engine, g in got.items():
        if g.shape != want.shape or g.dtype != want.dtype:
            return "%s engine: result %s %s, NumPy %s %s" % (engine, g.dtype, g.shape, want.dtype, want.shape)
        if case["smooth"] or mag is None:
            bad = g != want
        else:
            tol = 1e-5 * (mag + 1e-30)
            bad = np.abs(g.astype(mag.dtype) - want.astype(mag.dtype)) > tol
        if np.any(bad):
            at = tuple(int(v) for v in np.argwhere(bad)[0])
            return "%s engine differs at %s: got %r, NumPy %r (%d of %d elements)" % (
                engine, at, g[at], want[at], int(np.sum(bad)), bad.size)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep")
    args = ap.parse_args()
    d = args.keep or tempfile.mkdtemp(prefix="numpy_contract.")
    os.makedirs(d, exist_ok=True)
    cases = []
    i = 0
    while len(cases) < args.cases:
        rng = random.Random(args.seed * 1000003 + i)
        c = gen_dot(rng) if i % 2 == 0 else gen_conv(rng)
        if c is not None:
            cases.append((i, c))
        i += 1
    failed = 0
    kinds = {"dot": 0, "conv": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(run_case, args.hloi, d, i, c): (i, c) for i, c in cases}
        for fut in concurrent.futures.as_completed(futs):
            i, c = futs[fut]
            kinds[c["kind"]] += 1
            why = fut.result()
            if why:
                failed += 1
                if failed <= 5:
                    print("case %d (seed %d) FAILED: %s\n%s" % (i, args.seed, why, c["text"]))
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)
    print("numpy_contract: %d dot and %d convolution cases, both engines" % (kinds["dot"], kinds["conv"]))
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Differential test of the fast engine's convolution against the
reference engine's: random convolutions larger than numpy_contract's
(up to a few thousand results, spatial sizes to 40, so that the fast
engine's blocks and threads take part), run by both engines through
`hloi test`, results compared bit for bit.

Forms: random dim_labels (batch, feature and 1-3 spatial dims in any
order in input, kernel and output) and random layouts, or (two cases in
five, which oneDNN's own kernels take) NHWC/HWIO or NCHW/OIHW row-major; strides, padding
(negative too), lhs and rhs dilation, window reversal, feature_group_count
(depthwise: one input feature per group, with a channel multiplier
1-2, in half of the cases) or batch_group_count; a fifth of the cases
in an input gradient's form (lhs dilation 2-3, stride 1), some 1x1, and
some in a depthwise weight gradient's form (a batch group per output
feature, a window about the input's size), some with a window the whole
input (a 1x1 convolution's weight gradient). Types f32, f64, bf16,
f16 (lhs, rhs and result of one type) and s32.

Tolerance: none. The depthwise kernel (no lhs dilation) sums in the reference's order,
so its cases use values with full mantissas and must match exactly. The
other float forms sum in BLAS's order: their values are multiples of 1/4
in [-2, 2], whose sums are exact in any order, so they must match
exactly too; s32 is exact anyway.

usage: numpy_conv.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy as np
    import hloi_cases
except ImportError:
    print("NumPy is not installed; skipped")
    sys.exit(77)

NP = {"f32": np.float32, "f64": np.float64, "bf16": None, "f16": np.float16, "s32": np.int32}


def shape(t, dims, lay):
    return "%s[%s]{%s}" % (t, ",".join(str(d) for d in dims), ",".join(str(d) for d in lay))


def layout(rng, n):
    lay = list(range(n - 1, -1, -1))
    if rng.random() < 0.4:
        rng.shuffle(lay)
    return lay


def values(g, t, dims, smooth):
    """Values for type t: full mantissas when not smooth, else multiples of
    1/4 in [-2, 2] (integers in [-3, 3] for s32)."""
    n = int(np.prod(dims))
    if t == "s32":
        return g.integers(-3, 4, size=n).reshape(dims).astype(np.int32)
    if smooth:
        x = g.integers(-8, 9, size=n) / 4.0
    else:
        x = g.standard_normal(n)
    return x.reshape(dims)


def gen_conv(seed, i):
    rng = random.Random(seed * 1000003 + i)
    g = np.random.default_rng(seed * 1000003 + i)
    for _ in range(1000):
        c = try_conv(rng, g, i)
        if c:
            return c
    raise RuntimeError("no case")


def try_conv(rng, g, index):
    t = rng.choice(["f32", "f32", "f32", "f64", "bf16", "f16", "s32"])
    ns = rng.choice([1, 2, 2, 2, 3])
    depthwise = rng.random() < 0.5
    # a depthwise weight gradient's form: a batch group per output
    # feature, one result batch, a window as large as the input
    wgrad = not depthwise and rng.random() < 0.2
    if wgrad:
        groups = rng.randint(2, 8)
        fgc, bgc, cin_g, cout_g, nout = 1, groups, rng.randint(1, 6), 1, 1
        cin = cin_g
    elif depthwise:
        cin = rng.randint(1, 24)
        fgc, bgc, cin_g, cout_g = cin, 1, 1, rng.choice([1, 1, 1, 2])
        groups = cin
        nout = rng.randint(1, 3)
    else:
        groups = rng.choice([1, 1, 2, 3])
        fgc, bgc = (groups, 1) if rng.random() < 0.6 else (1, groups)
        cin_g, cout_g, nout = rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 3)
        cin = cin_g * fgc
    cout = cout_g * groups
    batch = nout * bgc
    win, isz, ksz, osz = [], [], [], []
    igrad = rng.random() < 0.2
    pointwise = not igrad and rng.random() < 0.15
    # a 1x1 convolution's weight gradient: the window the whole input
    whole = not igrad and not pointwise and not depthwise and bgc == 1 and rng.random() < 0.2
    big = ns == 1 or rng.random() < 0.5
    for _ in range(ns):
        for _ in range(50):
            s = rng.randint(1, 40 if big else 12)
            k = rng.randint(1, 4)
            st, ld, rd = rng.choice([1, 1, 1, 2, 3]), rng.choice([1, 1, 1, 2]), rng.choice([1, 1, 1, 2])
            if igrad:  # an input gradient's form
                st, ld, rd = 1, rng.choice([1, 2, 2, 3]), 1
            lo, hi = rng.randint(-2, 3), rng.randint(-2, 3)
            if pointwise:  # 1x1
                k, st, ld, lo, hi = 1, 1, 1, 0, 0
            if whole:
                k, st, ld, rd, lo, hi = s, 1, 1, 1, 0, 0
            if wgrad:  # the model's output positions as the window
                k, ld = rng.randint(max(1, s // 2), s), 1
            padded = (s - 1) * ld + 1 + lo + hi
            wd = (k - 1) * rd + 1
            if padded >= wd:
                break
        else:
            return None
        isz.append(s)
        ksz.append(k)
        osz.append((padded - wd) // st + 1)
        win.append((k, st, lo, hi, ld, rd, not whole and not wgrad and rng.random() < 0.3))
    if int(np.prod(osz)) * nout * cout > 6000 or int(np.prod(isz)) * batch * cin > 6000:
        return None
    spatial = [str(i) for i in range(ns)]
    ilab, klab, olab = ["b", "f"] + spatial, ["i", "o"] + spatial, ["b", "f"] + spatial
    standard = rng.random() < 0.4  # NHWC or NCHW, row-major: oneDNN's own kernels take these
    if standard and rng.random() < 0.5:
        ilab, klab, olab = ["b"] + spatial + ["f"], spatial + ["i", "o"], ["b"] + spatial + ["f"]
    elif standard:
        klab = ["o", "i"] + spatial
    nhwc_grad = wgrad and not standard and rng.random() < 0.5
    if nhwc_grad:  # the groups innermost in lhs and kernel (f01b_i01o)
        ilab, klab = ["f"] + spatial + ["b"], ["i"] + spatial + ["o"]
    for lab in (ilab, klab, olab):
        if not standard and not (nhwc_grad and lab is not olab) and rng.random() < 0.7:
            rng.shuffle(lab)
    idims = [batch if c == "b" else cin if c == "f" else isz[int(c)] for c in ilab]
    kdims = [cin_g if c == "i" else cout if c == "o" else ksz[int(c)] for c in klab]
    odims = [nout if c == "b" else cout if c == "f" else osz[int(c)] for c in olab]
    wtext = "size=" + "x".join(str(w[0]) for w in win)
    wtext += " stride=" + "x".join(str(w[1]) for w in win)
    wtext += " pad=" + "x".join("%d_%d" % (w[2], w[3]) for w in win)
    wtext += " lhs_dilate=" + "x".join(str(w[4]) for w in win)
    wtext += " rhs_dilate=" + "x".join(str(w[5]) for w in win)
    wtext += " rhs_reversal=" + "x".join(str(int(w[6])) for w in win)
    attrs = ["window={%s}" % wtext, "dim_labels=%s_%s->%s" % ("".join(ilab), "".join(klab), "".join(olab))]
    if fgc > 1:
        attrs.append("feature_group_count=%d" % fgc)
    if bgc > 1:
        attrs.append("batch_group_count=%d" % bgc)
    # parameters are f32 (or s32, f64) .npy; bf16 and f16 are converted
    # in the program, so the convolution itself is of type t
    pt = {"bf16": "f32", "f16": "f32"}.get(t, t)
    ilay, klay, olay = layout(rng, len(idims)), layout(rng, len(kdims)), layout(rng, len(odims))
    if standard:
        ilay, klay, olay = [list(range(len(idims) - 1, -1, -1))] * 3
    if nhwc_grad:
        ilay, klay = list(range(len(idims) - 1, -1, -1)), list(range(len(kdims) - 1, -1, -1))
    body = "  x0 = %s parameter(0)\n  k0 = %s parameter(1)\n" % (shape(pt, idims, ilay), shape(pt, kdims, klay))
    if pt != t:
        body += "  x = %s convert(x0)\n  k = %s convert(k0)\n" % (shape(t, idims, ilay), shape(t, kdims, klay))
    else:
        body = body.replace("x0 =", "x =").replace("k0 =", "k =")
    body += "  ROOT r = %s convolution(x, k), %s\n" % (shape(t, odims, olay), ", ".join(attrs))
    program = "HloModule conv\n\nENTRY main {\n%s}\n" % body
    exact = depthwise and all(w[4] == 1 for w in win)  # the direct kernel
    smooth = not (exact and t != "s32" and rng.random() < 0.8)
    npt = {"f32": np.float32, "f64": np.float64, "s32": np.int32}[pt]
    inputs = [values(g, t, idims, smooth).astype(npt), values(g, t, kdims, smooth).astype(npt)]
    return {"index": index, "program": program, "inputs": inputs}


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", default=None)
    args = ap.parse_args()
    cases = []
    for i in range(args.cases):
        c = gen_conv(args.seed, i)
        for k, engine in enumerate(("fast", "reference")):
            d = dict(c)
            d["index"] = 2 * i + k
            d["engine"] = engine
            cases.append(d)
    os.environ["HLOI_DNNL"] = os.environ.get("HLOI_DNNL", "all")
    fast = {}

    def check(case, got):
        if case["engine"] == "fast":
            fast[case["index"]] = got[0]
            return None
        f, r = fast.get(case["index"] - 1), got[0]
        if f is None:
            return "the fast engine gave no result"
        if f.shape != r.shape or f.dtype != r.dtype:
            return "fast %s %s, reference %s %s" % (f.dtype, f.shape, r.dtype, r.shape)
        fb, rb = np.ascontiguousarray(f).view(np.uint8), np.ascontiguousarray(r).view(np.uint8)
        if not np.array_equal(fb, rb):
            bad = np.argwhere(~((f == r) | (np.isnan(f) & np.isnan(r))) if f.dtype.kind == "f" else f != r)
            at = tuple(int(v) for v in bad[0]) if len(bad) else ()
            return "fast and reference differ at %s: %r vs %r (%d elements)" % (
                at, f[at] if at else None, r[at] if at else None, len(bad))
        return None

    return hloi_cases.run_cases("numpy_conv", args.hloi, cases, check, args.seed, args.jobs, args.keep)


if __name__ == "__main__":
    sys.exit(main())

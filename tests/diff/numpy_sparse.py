#!/usr/bin/python3
"""Differential test of hloi's sparse convolution (sparsity_config) against
NumPy: random convolutions (0 to 2 spatial dimensions, window strides and
padding, f32 and f64) whose lhs, rhs or both are given as (values,
metadata) tuples or, in XLA's newer form, as values with the metadata an
operand of its own (idx=), N values kept per block of M along a random
dimension, blocks `stride` apart; both engines, run in one `hloi test`
with .npy inputs and outputs.

NumPy builds the dense operands on its own: the sparse dimension of the
dense array is viewed as (groups, M, stride), block b = g * stride + o,
and value j of block b goes to [g, metadata, o]; then the convolution is a
sum over window positions of tensordot products on the padded input.
A result agrees within 1e-4 (f32) or 1e-10 (f64) of the largest magnitude
of the expected array.

usage: numpy_sparse.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_sparse: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

NP = {"f32": np.float32, "f64": np.float64}
LABELS = {0: "bf_io->bf", 1: "b0f_0io->b0f", 2: "b01f_01io->b01f"}


def compress(rng, g, dense_shape, d, n, m, stride, t):
    """Random values and metadata for a dense operand of dense_shape whose
    dimension d holds nblocks * m positions: n distinct positions of each
    block, values standard normal. Returns (values, metadata, dense)."""
    nblocks = dense_shape[d] // m
    vshape = list(dense_shape)
    vshape[d] = nblocks * n
    values = g.standard_normal(vshape).astype(NP[t])
    meta = np.zeros(vshape, dtype=np.int32)
    other = [s for i, s in enumerate(vshape) if i != d]
    for rest in np.ndindex(*other):
        for b in range(nblocks):
            pos = sorted(rng.sample(range(m), n)) if rng.random() < 0.5 else rng.sample(range(m), n)
            for j in range(n):
                idx = list(rest)
                idx.insert(d, b * n + j)
                meta[tuple(idx)] = pos[j]
    # NumPy's own expansion: dimension d as (groups, m, stride)
    groups = nblocks // stride
    dense = np.zeros(dense_shape, dtype=NP[t])
    view = dense.reshape(dense_shape[:d] + [groups, m, stride] + dense_shape[d + 1:])
    for rest in np.ndindex(*other):
        for b in range(nblocks):
            gi, o = divmod(b, stride)
            for j in range(n):
                idx = list(rest)
                idx.insert(d, b * n + j)
                idx = tuple(idx)
                vi = tuple(rest[:d]) + (gi, int(meta[idx]), o) + tuple(rest[d:])
                view[vi] = values[idx]
    return values, meta, dense


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    t = rng.choice(["f32", "f64"])
    ns = rng.randint(0, 2)
    which = rng.choice(["lhs", "rhs", "both"])
    batch, cin, cout = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
    wsize = [rng.randint(1, 3) for _ in range(ns)]
    insz = [rng.randint(1, 5) for _ in range(ns)]
    wstride = [rng.randint(1, 2) for _ in range(ns)]
    pads = [(rng.randint(0, 1), rng.randint(0, 1)) for _ in range(ns)]
    sides = {}
    for side in (["lhs", "rhs"] if which == "both" else [which]):
        m = rng.randint(1, 4)
        n = rng.randint(1, m)
        stride = rng.randint(1, 2)
        nblocks = stride * rng.randint(1, 2)
        d = rng.randint(0, ns + 1)
        sides[side] = {"n": n, "m": m, "stride": stride, "dim": d, "size": nblocks * m}
    # the sparse dimension's dense size decides that dimension of the geometry
    for side, s in sides.items():
        d, size = s["dim"], s["size"]
        if side == "lhs":  # b, spatial..., f
            if d == 0:
                batch = size
            elif d == ns + 1:
                cin = size
            else:
                insz[d - 1] = size
        else:  # spatial..., i, o
            if d < ns:
                wsize[d] = size
            elif d == ns:
                cin = size
            else:
                cout = size
    if "lhs" in sides and "rhs" in sides:
        # both ask for cin: the rhs's request wins unless it left cin alone
        l, r = sides["lhs"], sides["rhs"]
        if l["dim"] == ns + 1 and r["dim"] == ns and l["size"] != r["size"]:
            r["dim"] = ns + 1
            r["size"] = r["m"] * r["stride"]
            cout = r["size"]
            cin = l["size"]
    lshape = [batch] + insz + [cin]
    rshape = wsize + [cin, cout]
    for side, s in sides.items():
        shp = lshape if side == "lhs" else rshape
        if shp[s["dim"]] != s["size"]:  # overwritten by the other side's choice: fall back to block = size
            s["m"], s["n"], s["stride"] = shp[s["dim"]], 1, 1
    ops = {}
    for side, shp in (("lhs", lshape), ("rhs", rshape)):
        if side in sides:
            s = sides[side]
            ops[side] = compress(rng, g, shp, s["dim"], s["n"], s["m"], s["stride"], t)
        else:
            x = g.standard_normal(shp).astype(NP[t])
            ops[side] = (x, None, x)
    osz = []
    for i in range(ns):
        padded = insz[i] + pads[i][0] + pads[i][1]
        osz.append(0 if wsize[i] > padded else (padded - wsize[i]) // wstride[i] + 1)
    return {"index": index, "t": t, "ns": ns, "sides": sides, "ops": ops, "wsize": wsize, "wstride": wstride,
            "pads": pads, "out": [batch] + osz + [cout], "engine": rng.choice(["fast", "reference"]),
            "form": rng.choice(["tuple", "idx"])}


def shp(t, dims):
    return "%s[%s]" % (t, ",".join(map(str, dims)))


def program(c):
    t = c["t"]
    lines, inputs, names, extra = [], [], {}, []
    for side in ("lhs", "rhs"):
        values, meta, _ = c["ops"][side]
        k = len(inputs)
        lines.append("  %s_v = %s parameter(%d)" % (side, shp(t, values.shape), k))
        inputs.append(values)
        if meta is None or c["form"] == "idx":
            names[side] = side + "_v"
        if meta is None:
            continue
        lines.append("  %s_m = %s parameter(%d)" % (side, shp("s32", meta.shape), k + 1))
        inputs.append(meta)
        if c["form"] == "idx":
            c["sides"][side]["idx"] = 2 + len(extra)
            extra.append(side + "_m")
            continue
        lines.append("  %s = (%s, %s) tuple(%s_v, %s_m)" % (side, shp(t, values.shape), shp("s32", meta.shape),
                                                           side, side))
        names[side] = side
    attrs = []
    if c["ns"]:
        w = "size=" + "x".join(map(str, c["wsize"]))
        if any(s != 1 for s in c["wstride"]):
            w += " stride=" + "x".join(map(str, c["wstride"]))
        if any(p != (0, 0) for p in c["pads"]):
            w += " pad=" + "x".join("%d_%d" % p for p in c["pads"])
        attrs.append("window={%s}" % w)
    attrs.append("dim_labels=" + LABELS[c["ns"]])
    sp = " ".join("%s={sparsity=%dx%d dimension=%d stride=%d%s}" % (
        side, s["n"], s["m"], s["dim"], s["stride"], " idx=%d" % s["idx"] if "idx" in s else "")
        for side, s in sorted(c["sides"].items()))
    attrs.append("sparsity_config={%s}" % sp)
    lines.append("  ROOT c = %s convolution(%s), %s" % (shp(t, c["out"]), ", ".join([names["lhs"], names["rhs"]] + extra),
                                                      ", ".join(attrs)))
    return "HloModule sparse_%d\n\nENTRY e {\n%s\n}\n" % (c["index"], "\n".join(lines)), inputs


def expected(c):
    x, k = c["ops"]["lhs"][2].astype(np.float64), c["ops"]["rhs"][2].astype(np.float64)
    ns = c["ns"]
    pad = [(0, 0)] + [tuple(p) for p in c["pads"]] + [(0, 0)]
    xp = np.pad(x, pad)
    out = np.zeros(c["out"], dtype=np.float64)
    osz = c["out"][1:-1]
    for opos in np.ndindex(*osz):
        acc = np.zeros((c["out"][0], c["out"][-1]))
        for kpos in np.ndindex(*c["wsize"]):
            ip = tuple(o * s + q for o, s, q in zip(opos, c["wstride"], kpos))
            acc += xp[(slice(None),) + ip + (slice(None),)] @ k[kpos]
        out[(slice(None),) + opos + (slice(None),)] = acc
    return out


def gen(seed, index):
    c = gen_case(seed, index)
    c["program"], c["inputs"] = program(c)
    c["expected"] = expected(c)
    return c


def check(c, got):
    y = got[0]
    e = c["expected"]
    if y.shape != e.shape:
        return "shape %s, expected %s" % (y.shape, e.shape)
    tol = (1e-4 if c["t"] == "f32" else 1e-10) * max(1.0, float(np.max(np.abs(e))) if e.size else 1.0)
    err = float(np.max(np.abs(y.astype(np.float64) - e))) if e.size else 0.0
    if not err <= tol:
        return "largest difference %g over %g" % (err, tol)
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_sparse", gen, check, 400))

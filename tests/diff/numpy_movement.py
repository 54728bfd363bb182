#!/usr/bin/python3
"""Differential test of hloi's data-movement ops against NumPy: random
programs of slice, concatenate, pad (negative and interior padding),
reverse, dynamic-slice, dynamic-update-slice (clamped starts), gather as
np.take(mode='clip') and in general (XLA's formal description written out
in Python), and scatter with an add combiner (np.add.at with out-of-bounds
updates dropped), over every evaluated element type, random shapes (size 0
and 1 included), random parameter and result layouts with padding,
Fortran-order inputs, and both engines. Run through `hloi test` in-process
with .npy inputs and outputs.

Copies are compared bit for bit (NaN payloads included); scatter-add sums
exactly for integers and pred, and bit for bit for floats (hloi and
np.add.at add duplicates in the same order), NaNs as NaNs.

usage: numpy_movement.py HLOI [--cases N] [--seed S] [--jobs J] [--only I]
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
    print("numpy_movement: NumPy is not installed; skipped")
    sys.exit(77)

warnings.simplefilter("ignore")

INT_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
TYPES = ["pred"] + INT_TYPES + ["f16", "bf16", "f32", "f64"]
NP_DTYPE = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
            "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
BITS = {np.dtype(np.bool_): np.uint8, np.dtype(np.int8): np.uint8, np.dtype(np.uint8): np.uint8,
        np.dtype(np.int16): np.uint16, np.dtype(np.uint16): np.uint16, np.dtype(np.float16): np.uint16,
        np.dtype(np.int32): np.uint32, np.dtype(np.uint32): np.uint32, np.dtype(np.float32): np.uint32,
        np.dtype(np.int64): np.uint64, np.dtype(np.uint64): np.uint64, np.dtype(np.float64): np.uint64}
OPS = ["slice", "concatenate", "pad", "reverse", "dynamic-slice", "dynamic-update-slice",
       "take", "gather", "scatter-add"]


def rand_array(rng, t, dims):
    n = int(np.prod(dims)) if dims else 1
    if t == "pred":
        return np.array([rng.random() < 0.5 for _ in range(n)], dtype=np.bool_).reshape(dims)
    dt = np.dtype(NP_DTYPE[t])
    if rng.random() < 0.5:  # raw bits: NaN payloads, subnormals, extremes
        raw = np.array([rng.getrandbits(8 * dt.itemsize) for _ in range(n)], dtype=np.uint64)
        return raw.astype(BITS[dt]).view(dt).reshape(dims)
    vals = [rng.randint(-20, 20) for _ in range(n)]
    if t == "bf16":
        return (np.array(vals, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).reshape(dims)
    if t.startswith("u"):
        vals = [abs(v) for v in vals]
    return np.array(vals).astype(dt).reshape(dims)


def rand_dims(rng, rank):
    return [rng.choice([0] + [1] * 2 + [2, 3, 4, 5]) if rng.random() < 0.9 else rng.randint(6, 9)
            for _ in range(rank)]


def layout_text(rng, dims, pad=True):
    """A random layout `{1,0}`, `{0,1:pad(3,5)padval(one)}`, or None."""
    r = len(dims)
    if r == 0 or rng.random() < 0.3:
        return None
    perm = list(range(r - 1, -1, -1))
    if r > 1 and rng.random() < 0.6:
        rng.shuffle(perm)
    text = ",".join(str(p) for p in perm)
    if pad and rng.random() < 0.3:
        text += ":pad(%s)" % ",".join(str(d + rng.randint(0, 2)) for d in dims)
        if rng.random() < 0.5:
            text += "padval(%s)" % rng.choice(["zero", "one", "lowest", "highest"])
    return "{" + text + "}"


def shape_text(t, dims, layout=None):
    return "%s[%s]%s" % (t, ",".join(str(d) for d in dims), layout or "")


def index_values(rng, it, sizes):
    """Index values for dimensions of the given sizes: near the range, some
    out of it, sometimes the type's extremes."""
    dt = np.dtype(NP_DTYPE[it])
    info = np.iinfo(dt)
    out = []
    for s in sizes:
        k = rng.random()
        if k < 0.05:
            v = info.max
        elif k < 0.1 and info.min < 0:
            v = info.min
        else:
            v = rng.randint(0 if info.min == 0 else -3, s + 3)
        out.append(min(max(v, info.min), info.max))
    return np.array(out, dtype=dt)


def literal_text(v):
    v = np.asarray(v)
    if v.ndim == 0:
        return str(int(v))
    if v.shape[0] == 0:
        return "{}"
    return "{" + ", ".join(literal_text(x) for x in v) + "}"


# --- NumPy models -------------------------------------------------------------------


def np_pad(a, pv, lo, hi, interior):
    """Result position o of each dimension holds operand element
    (o - lo) / (interior + 1) when that divides and is in range, else the
    padding value (XLA's definition, which also covers negative padding
    larger than the operand)."""
    out_shape, keep_out, keep_src = [], [], []
    for d in range(a.ndim):
        n, i1 = a.shape[d], interior[d] + 1
        size = n + lo[d] + hi[d] + max(n - 1, 0) * interior[d]
        o = np.arange(size)
        t = o - lo[d]
        ok = (t >= 0) & (t % i1 == 0) & (t // i1 < n)
        out_shape.append(size)
        keep_out.append(o[ok])
        keep_src.append(t[ok] // i1)
    out = np.full(out_shape, pv, dtype=a.dtype)
    if all(len(k) for k in keep_out):
        out[np.ix_(*keep_out)] = a[np.ix_(*keep_src)]
    return out


def clamp_starts(starts, dims, sizes):
    return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, dims, sizes)]


def np_gather(a, idx, offset_dims, collapsed, start_map, ivd, sizes, obat, ibat):
    """XLA's formal description of gather, element by element."""
    if ivd == idx.ndim:
        idx = idx.reshape(idx.shape + (1,))
    batch_shape = [idx.shape[i] for i in range(idx.ndim) if i != ivd]
    out_rank = len(offset_dims) + len(batch_shape)
    batch_dims = [i for i in range(out_rank) if i not in offset_dims]
    window = [d for d in range(a.ndim) if d not in collapsed and d not in obat]
    out_shape = [0] * out_rank
    for k, i in enumerate(batch_dims):
        out_shape[i] = batch_shape[k]
    for k, i in enumerate(offset_dims):
        out_shape[i] = sizes[window[k]]
    out = np.zeros(out_shape, dtype=a.dtype)
    if a.size == 0:
        return out
    for oi in np.ndindex(*out_shape):
        g = [oi[i] for i in batch_dims]
        start = [0] * a.ndim
        for m, d in enumerate(start_map):
            pos = list(g)
            pos.insert(ivd, m)
            start[d] = int(idx[tuple(pos)])
        for od, idim in zip(obat, ibat):
            k = idim if idim < ivd else idim - 1
            start[od] = g[k]
        full = [0] * a.ndim
        for k, d in enumerate(window):
            full[d] = oi[offset_dims[k]]
        src = []
        for d in range(a.ndim):
            size = sizes[d] if d in window else 1
            s = min(max(start[d], 0), a.shape[d] - size)
            src.append(s + full[d])
        out[oi] = a[tuple(src)]
    return out


def bf16_round(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    r[nan] = ((u[nan] >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16)
    return r


def add_into(cur, upd, t):
    if t == "bf16":
        x = (np.atleast_1d(cur).astype(np.uint32) << 16).view(np.float32)
        y = (np.atleast_1d(upd).astype(np.uint32) << 16).view(np.float32)
        return bf16_round(x + y).reshape(np.shape(cur))
    if t == "pred":
        return cur | upd
    return (cur + upd).astype(cur.dtype)


def np_scatter_add(a, idx, upd, axis, t):
    """np.add.at(a, (:,)*axis + (idx,), upd) with out-of-bounds indices
    dropped, one index at a time in C order (XLA's order)."""
    r = a.copy()
    for p in np.ndindex(*idx.shape):
        i = int(idx[p])
        if i < 0 or i >= a.shape[axis]:
            continue
        dst = (slice(None),) * axis + (i,)
        src = (slice(None),) * axis + p
        r[dst] = add_into(r[dst], upd[src], t)
    return r


# --- random cases ----------------------------------------------------------------------


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    op = rng.choice(OPS)
    t = rng.choice(TYPES)
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
    dims = rand_dims(rng, rank)
    params = []          # (name, type, dims, array)
    consts = []          # HLO lines
    attrs = ""
    args = ["p0"]
    res_dims = None
    expected = None
    it = rng.choice(INT_TYPES)
    comb = ""
    if op == "slice":
        a = rand_array(rng, t, dims)
        params.append(("p0", t, dims, a))
        st = [rng.randint(0, d) for d in dims]
        li = [rng.randint(s, d) for s, d in zip(st, dims)]
        sr = [rng.randint(1, 3) for _ in dims]
        attrs = ", slice={%s}" % ", ".join("[%d:%d:%d]" % x for x in zip(st, li, sr))
        expected = a[tuple(slice(s, l, k) for s, l, k in zip(st, li, sr))]
    elif op == "concatenate":
        dims = dims or [3]
        dim = rng.randrange(len(dims))
        arrs = []
        args = []
        for k in range(rng.randint(1, 3)):
            d2 = list(dims)
            d2[dim] = rng.choice([0, 1, 2, 3, 4])
            arrs.append(rand_array(rng, t, d2))
            params.append(("p%d" % k, t, d2, arrs[-1]))
            args.append("p%d" % k)
        attrs = ", dimensions={%d}" % dim
        expected = np.concatenate(arrs, axis=dim)
    elif op == "pad":
        dims = dims or [2]
        a = rand_array(rng, t, dims)
        pv = rand_array(rng, t, [])
        params += [("p0", t, dims, a), ("p1", t, [], pv)]
        args = ["p0", "p1"]
        lo = [rng.randint(-3, 3) for _ in dims]
        hi = [rng.randint(-3, 3) for _ in dims]
        inn = [rng.choice([0, 0, 1, 2]) for _ in dims]
        for d in range(len(dims)):
            size = dims[d] + lo[d] + hi[d] + max(dims[d] - 1, 0) * inn[d]
            if size < 0:
                hi[d] -= size
        attrs = ", padding=" + "x".join("%d_%d_%d" % x for x in zip(lo, hi, inn))
        expected = np_pad(a, pv, lo, hi, inn)
    elif op == "reverse":
        a = rand_array(rng, t, dims)
        params.append(("p0", t, dims, a))
        rev = [d for d in range(rank) if rng.random() < 0.5]
        attrs = ", dimensions={%s}" % ",".join(str(d) for d in rev)
        expected = np.flip(a, axis=tuple(rev)) if rev else a
    elif op in ("dynamic-slice", "dynamic-update-slice"):
        a = rand_array(rng, t, dims)
        params.append(("p0", t, dims, a))
        sizes = [rng.randint(0, d) for d in dims]
        starts = index_values(rng, it, dims)
        if op == "dynamic-update-slice":
            u = rand_array(rng, t, sizes)
            params.append(("p1", t, sizes, u))
            args.append("p1")
        if rank and rng.random() < 0.25:
            consts.append("iv = %s[%d] constant(%s)" % (it, rank, literal_text(starts)))
            args.append("iv")
        else:
            for d in range(rank):
                consts.append("i%d = %s[] constant(%s)" % (d, it, literal_text(starts[d])))
                args.append("i%d" % d)
        # XLA's evaluator reads a start as int64_t: u64 values above
        # INT64_MAX become negative
        s = clamp_starts([int(x) for x in starts.astype(np.int64)], dims, sizes)
        box = tuple(slice(x, x + z) for x, z in zip(s, sizes))
        if op == "dynamic-slice":
            attrs = ", dynamic_slice_sizes={%s}" % ",".join(str(z) for z in sizes)
            expected = a[box]
        else:
            expected = a.copy()
            expected[box] = u
    elif op == "take":
        dims = dims or [4]
        axis = rng.randrange(len(dims))
        a = rand_array(rng, t, dims)
        params.append(("p0", t, dims, a))
        ishape = rand_dims(rng, rng.randint(0, 2))
        idx = index_values(rng, it, [dims[axis]] * int(np.prod(ishape))).reshape(ishape)
        consts.append("idx = %s constant(%s)" % (shape_text(it, ishape), literal_text(idx)))
        args.append("idx")
        nidx = len(ishape)
        offs = list(range(axis)) + list(range(axis + nidx, len(dims) + nidx - 1))
        sizes = list(dims)
        sizes[axis] = 1 if dims[axis] > 0 else 0
        attrs = (", offset_dims={%s}, collapsed_slice_dims={%d}, start_index_map={%d}, index_vector_dim=%d, "
                 "slice_sizes={%s}" % (",".join(map(str, offs)), axis, axis, nidx, ",".join(map(str, sizes))))
        if a.size == 0:
            expected = np.zeros(dims[:axis] + ishape + dims[axis + 1:], dtype=a.dtype)
        else:
            expected = np.take(a, idx.astype(np.int64), axis=axis, mode="clip")
    elif op == "gather":
        dims = dims or [3]
        a = rand_array(rng, t, dims)
        params.append(("p0", t, dims, a))
        r = len(dims)
        role = [rng.choice([0, 0, 0, 1, 1, 2]) for _ in range(r)]
        smap = [d for d in range(r) if role[d] != 2 and rng.random() < 0.7]
        rng.shuffle(smap)
        free = [rng.choice([0, 1, 2, 3]) for _ in range(rng.randint(0, 2))]
        bat = [d for d in range(r) if role[d] == 2]
        bshape = free + [dims[d] for d in bat]
        order = list(range(len(bshape)))
        rng.shuffle(order)
        bshape = [bshape[k] for k in order]
        links = {}
        for pos, k in enumerate(order):
            if k >= len(free):
                links[bat[k - len(free)]] = pos
        implicit = len(smap) == 1 and rng.random() < 0.5
        ivd = len(bshape) if implicit else rng.randint(0, len(bshape))
        ishape = list(bshape) if implicit else bshape[:ivd] + [len(smap)] + bshape[ivd:]
        n = int(np.prod(ishape)) if ishape else 1
        comp = []
        for p in np.ndindex(*ishape):
            m = 0 if implicit else p[ivd]
            comp.append(dims[smap[m]] if smap else 1)
        idx = np.array([index_values(rng, it, [s])[0] for s in comp], dtype=NP_DTYPE[it]).reshape(ishape)
        del n
        sizes = [rng.randint(0, dims[d]) if role[d] == 0 else min(dims[d], 1) for d in range(r)]
        nwin = sum(1 for x in role if x == 0)
        out_rank = nwin + len(bshape)
        offs = sorted(rng.sample(range(out_rank), nwin))
        obat = sorted(links)
        ibat = [links[d] if links[d] < ivd else links[d] + 1 for d in obat]
        consts.append("idx = %s constant(%s)" % (shape_text(it, ishape), literal_text(idx)))
        args.append("idx")
        attrs = (", offset_dims={%s}, collapsed_slice_dims={%s}, start_index_map={%s}, index_vector_dim=%d, "
                 "slice_sizes={%s}" % (",".join(map(str, offs)), ",".join(str(d) for d in range(r) if role[d] == 1),
                                       ",".join(map(str, smap)), ivd, ",".join(map(str, sizes))))
        if obat:
            attrs += ", operand_batching_dims={%s}, start_indices_batching_dims={%s}" % (
                ",".join(map(str, obat)), ",".join(map(str, ibat)))
        expected = np_gather(a, idx.astype(np.int64), offs, [d for d in range(r) if role[d] == 1], smap, ivd,
                             sizes, obat, ibat)
    else:  # scatter-add
        dims = dims or [4]
        axis = rng.randrange(len(dims))
        a = rand_array(rng, t, dims)
        ishape = rand_dims(rng, rng.randint(0, 2))
        idx = index_values(rng, it, [dims[axis]] * int(np.prod(ishape))).reshape(ishape)
        ushape = dims[:axis] + ishape + dims[axis + 1:]
        u = rand_array(rng, t, ushape)
        params += [("p0", t, dims, a), ("p1", t, ushape, u)]
        consts.append("idx = %s constant(%s)" % (shape_text(it, ishape), literal_text(idx)))
        args = ["p0", "idx", "p1"]
        nidx = len(ishape)
        uwd = list(range(axis)) + list(range(axis + nidx, len(dims) + nidx - 1))
        attrs = (", update_window_dims={%s}, inserted_window_dims={%d}, scatter_dims_to_operand_dims={%d}, "
                 "index_vector_dim=%d, to_apply=add" % (",".join(map(str, uwd)), axis, axis, nidx))
        comb = "add {\n  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT r = %s[] add(x, y)\n}\n\n" % (t, t, t)
        expected = np_scatter_add(a, idx.astype(np.int64), u, axis, t)
    res_dims = list(expected.shape)
    # layouts: floats added in scatter keep updates in the default layout
    # (the order of the additions follows the updates' layout)
    lay = {}
    for name, pt, pd, _ in params:
        keep = op == "scatter-add" and name == "p1" and t in ("f16", "bf16", "f32", "f64")
        lay[name] = None if keep else layout_text(rng, pd)
    case = {
        "index": index, "op": op, "type": t, "params": params, "consts": consts, "args": args,
        "attrs": attrs, "comb": comb, "expected": expected, "layouts": lay,
        "res_layout": layout_text(rng, res_dims) if rng.random() < 0.5 else None,
        "write_shape": rng.random() < 0.8,
        "fortran": [rng.random() < 0.3 for _ in params],
        "engine": rng.choice(["fast", "fast", "reference"]),
    }
    return case


def program_text(case):
    t = case["type"]
    op = "gather" if case["op"] == "take" else "scatter" if case["op"] == "scatter-add" else case["op"]
    lines = ["HloModule movement_%d" % case["index"], "", case["comb"].rstrip("\n")] if case["comb"] else \
        ["HloModule movement_%d" % case["index"], ""]
    if case["comb"]:
        lines.append("")
    lines.append("ENTRY main {")
    for k, (name, pt, pd, _) in enumerate(case["params"]):
        lines.append("  %s = %s parameter(%d)" % (name, shape_text(pt, pd, case["layouts"][name]), k))
    for c in case["consts"]:
        lines.append("  " + c)
    res = ""
    if case["write_shape"]:
        res = shape_text(t, list(case["expected"].shape), case["res_layout"]) + " "
    lines.append("  ROOT r = %s%s(%s)%s" % (res, op, ", ".join(case["args"]), case["attrs"]))
    lines.append("}")
    return "\n".join(lines) + "\n"


def flags(case, base):
    f = []
    for k in range(len(case["params"])):
        f += ["--input", "%s.%d.npy" % (base, k)]
    f += ["--output", base + ".out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    return f


def case_flags(case):
    """The flags as a case file's `// hloi-flags:` line for `hloi test`:
    inputs next to the case, the output a plain name (kept by --outputs)."""
    name = "c%06d" % case["index"]
    f = []
    for k in range(len(case["params"])):
        f += ["--input", "%s.%d.npy" % (name, k)]
    f += ["--output", "out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    return f


def write_case(case, d):
    base = os.path.join(d, "c%06d" % case["index"])
    for k, (_, _, _, v) in enumerate(case["params"]):
        if case["fortran"][k] and np.ndim(v) >= 2:
            v = np.asfortranarray(v)
        np.save("%s.%d.npy" % (base, k), v, allow_pickle=False)
    with open(base + ".hlo", "w") as f:
        f.write("// hloi-flags: " + " ".join(case_flags(case)) + "\n")
        f.write(program_text(case))
    return base


def same(case, got, want):
    """Bit for bit; for scatter-add of floats NaN equals NaN."""
    if got.shape != want.shape:
        return False
    if want.dtype == np.bool_ or got.dtype == np.bool_:
        return np.array_equal(got.astype(np.bool_), want.astype(np.bool_))
    g = got.view(BITS[got.dtype])
    w = want.astype(got.dtype).view(BITS[got.dtype])
    if np.array_equal(g, w):
        return True
    if case["op"] == "scatter-add" and case["type"] in ("f16", "f32", "f64"):
        both = np.isnan(got) & np.isnan(want.astype(got.dtype))
        return bool(np.all((g == w) | both))
    if case["op"] == "scatter-add" and case["type"] == "bf16":
        fg = (got.astype(np.uint32) << 16).view(np.float32)
        fw = (want.astype(np.uint32) << 16).view(np.float32)
        return bool(np.all((g == w) | (np.isnan(fg) & np.isnan(fw))))
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", type=int, default=None, help="run only this case index")
    ap.add_argument("--keep", default=None, help="write the cases here and keep them")
    args = ap.parse_args()
    start = time.time()
    indices = [args.only] if args.only is not None else list(range(args.cases))
    tmp = args.keep or tempfile.mkdtemp(prefix="hloi-movement-")
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
        print("numpy_movement: hloi test ended with %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:2000]))
    failed = 0
    counts = {}
    for case in cases:
        base = case["base"]
        counts[case["op"]] = counts.get(case["op"], 0) + 1
        want = case["expected"]
        try:
            got = np.load(os.path.join(out, os.path.basename(base), "out.npy"))
            ok = same(case, got, want)
        except OSError:
            got, ok = None, False
        if ok:
            continue
        failed += 1
        if failed <= 10:
            print("FAIL case %d (%s %s, %s engine)" % (case["index"], case["op"], case["type"], case["engine"]))
            print(program_text(case).rstrip())
            for k, (name, _, _, v) in enumerate(case["params"]):
                print("%s = %r" % (name, v))
            print("want = %r" % (want,))
            print("got  = %r" % (got,))
            p = subprocess.run([args.hloi, "run", base + ".hlo"] + flags(case, base), capture_output=True, text=True)
            if p.returncode:
                print("hloi said: " + p.stderr.strip())
            print("reproduce: %s run %s.hlo %s" % (args.hloi, base, " ".join(flags(case, base))))
            print()
    print("numpy_movement: %d cases (seed %d; %s), %d failed, %.1f s" % (
        len(cases), args.seed, ", ".join("%s %d" % kv for kv in sorted(counts.items())), failed,
        time.time() - start))
    if failed:
        print("numpy_movement: cases kept in " + tmp)
        return 1
    if not args.keep:
        if subprocess.run(["rm", "-rf", tmp]).returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

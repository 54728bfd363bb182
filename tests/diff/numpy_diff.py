#!/usr/bin/python3
"""Differential test of hloi against NumPy: random one-op programs (every
binary op and compare, every evaluated element type, scalars, size-1 and
size-0 dims, broadcast_dimensions under the XLA and the NumPy rule, layouts
and padding, Fortran-order inputs) run through `hloi test` (--jobs cases at
a time, their .npy outputs kept with --outputs), compared with a NumPy model
of doc/spec.md §4.

Exact for integers, pred and float add/subtract/multiply/divide/remainder/
maximum/minimum/compare; power and atan2 within a few ULP (NumPy may use
other libm code). c64 and c128: add, subtract, multiply (C's Annex G,
modelled here) and compare EQ/NE exact; divide within a few ULP of the
larger part (hloi uses the C compiler's complex division, NumPy Smith's
algorithm; finite operands, nonzero divisors). Seeded and reproducible: case I of seed S is always the
same program; a failure prints the program, its inputs, both results and a
command line that reproduces it.

usage: numpy_diff.py HLOI [--cases N] [--seed S] [--jobs J] [--only I]
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
    print("numpy_diff: NumPy is not installed; skipped")
    sys.exit(77)

warnings.simplefilter("ignore")

# --- element types -------------------------------------------------------------

INT_TYPES = {"s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]
COMPLEX_TYPES = ["c64", "c128"]
TYPES = ["pred"] + list(INT_TYPES) + FLOAT_TYPES + COMPLEX_TYPES

# storage dtype of each type in the .npy files (bf16 as its bits)
NP_DTYPE = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
            "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
            "c64": np.complex64, "c128": np.complex128}
PART = {"c64": np.float32, "c128": np.float64}

BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power",
          "atan2", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
          "shift-right-logical"]
OPS = BINARY + ["compare"]


def allowed(op, t):
    """doc/spec.md §4's type gates."""
    if t == "pred":
        return op in ("add", "multiply", "maximum", "minimum", "and", "or", "xor", "compare")
    if t in INT_TYPES:
        return op != "atan2"
    if t in COMPLEX_TYPES:
        return op in ("add", "subtract", "multiply", "divide", "compare")
    return op not in ("and", "or", "xor", "shift-left", "shift-right-arithmetic",
                      "shift-right-logical")


def is_signed(t):
    return t.startswith("s")


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x):
    """Round to nearest even on the bit pattern; NaN stays a (quiet) NaN."""
    x = np.asarray(x, dtype=np.float32)
    shape = x.shape
    x = x.reshape(-1)
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16))
    r = r.astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = ((u[nan] >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16)
    return r.reshape(shape)


def to_compute(a, t):
    """Float values as f32 (f16, bf16, f32) or f64, exactly."""
    if t == "bf16":
        return bf16_to_f32(a)
    if t == "f16":
        return a.astype(np.float32)
    return a


def from_compute(x, t):
    if t == "bf16":
        return f32_to_bf16(x)
    if t == "f16":
        return np.asarray(x, dtype=np.float32).astype(np.float16)
    return np.asarray(x, dtype=NP_DTYPE[t])

# --- reference semantics (doc/spec.md §4) -------------------------------------------------


def int_scalar(op, a, b, t):
    w = INT_TYPES[t]
    mask = (1 << w) - 1
    ua, ub = a & mask, b & mask   # bit patterns

    def wrap(v):
        v &= mask
        if is_signed(t) and v >> (w - 1):
            v -= 1 << w
        return v
    if op == "add":
        return wrap(a + b)
    if op == "subtract":
        return wrap(a - b)
    if op == "multiply":
        return wrap(a * b)
    if op == "divide":
        if b == 0:
            return wrap(-1)
        if is_signed(t) and b == -1:
            return wrap(-a)
        q = abs(a) // abs(b)
        return wrap(q if (a < 0) == (b < 0) else -q)
    if op == "remainder":
        if b == 0:
            return a
        if is_signed(t) and b == -1:
            return 0
        r = abs(a) % abs(b)
        return wrap(-r if a < 0 else r)
    if op == "maximum":
        return max(a, b)
    if op == "minimum":
        return min(a, b)
    if op == "power":
        if b == 0 or a == 1:
            return 1
        if b < 0:
            return 0
        return wrap(pow(ua, b, 1 << w))
    if op == "and":
        return wrap(ua & ub)
    if op == "or":
        return wrap(ua | ub)
    if op == "xor":
        return wrap(ua ^ ub)
    if op == "shift-left":
        return 0 if ub >= w else wrap(ua << ub)
    if op == "shift-right-logical":
        return 0 if ub >= w else wrap(ua >> ub)
    if op == "shift-right-arithmetic":
        sa = ua - (1 << w) if ua >> (w - 1) else ua   # the bits as two's complement
        if ub >= w:
            return wrap(-1 if sa < 0 else 0)
        return wrap(sa >> ub)
    raise ValueError(op)


def compare_keys(x, y, d):
    return {"EQ": x == y, "NE": x != y, "LT": x < y, "LE": x <= y, "GT": x > y, "GE": x >= y}[d]


def total_key(bits, w):
    """TOTALORDER: the bit pattern as a sign-magnitude integer, made monotone."""
    sign = 1 << (w - 1)
    allm = (1 << w) - 1
    return (~bits & allm) if bits & sign else (bits | sign)


def float_bits(a, t):
    if t == "bf16":
        return a.astype(np.uint64), 16
    if t == "f16":
        return a.view(np.uint16).astype(np.uint64), 16
    if t == "f32":
        return a.view(np.uint32).astype(np.uint64), 32
    return a.view(np.uint64), 64


def cmul_annex_g(z, w, P):
    """C11 Annex G.5.1 complex multiplication in part type P."""
    a, b, c, d = P(z.real), P(z.imag), P(w.real), P(w.imag)
    inf = P(np.inf)

    def cs(x, y):
        return P(np.copysign(x, y))
    with np.errstate(all="ignore"):
        ac, bd, ad, bc = a * c, b * d, a * d, b * c
        x, y = ac - bd, ad + bc
        if np.isnan(x) and np.isnan(y):
            again = False
            if np.isinf(a) or np.isinf(b):
                a, b = cs(1 if np.isinf(a) else 0, a), cs(1 if np.isinf(b) else 0, b)
                c = cs(0, c) if np.isnan(c) else c
                d = cs(0, d) if np.isnan(d) else d
                again = True
            if np.isinf(c) or np.isinf(d):
                c, d = cs(1 if np.isinf(c) else 0, c), cs(1 if np.isinf(d) else 0, d)
                a = cs(0, a) if np.isnan(a) else a
                b = cs(0, b) if np.isnan(b) else b
                again = True
            if not again and (np.isinf(ac) or np.isinf(bd) or np.isinf(ad) or np.isinf(bc)):
                a = cs(0, a) if np.isnan(a) else a
                b = cs(0, b) if np.isnan(b) else b
                c = cs(0, c) if np.isnan(c) else c
                d = cs(0, d) if np.isnan(d) else d
                again = True
            if again:
                x = inf * (a * c - b * d)
                y = inf * (a * d + b * c)
    return x, y


def complex_reference(op, t, a, b, direction):
    P = PART[t]
    if op == "compare":
        eq = (a.real == b.real) & (a.imag == b.imag)
        return eq if direction == "EQ" else ~eq
    out = np.zeros(a.shape, dtype=NP_DTYPE[t])
    with np.errstate(all="ignore"):
        for i in range(a.size):
            z, w = a[i], b[i]
            if op == "add":
                re, im = P(z.real) + P(w.real), P(z.imag) + P(w.imag)
            elif op == "subtract":
                re, im = P(z.real) - P(w.real), P(z.imag) - P(w.imag)
            elif op == "multiply":
                re, im = cmul_annex_g(z, w, P)
            else:
                q = z / w
                re, im = P(q.real), P(q.imag)
            out.real[i], out.imag[i] = re, im
    return out


def reference(op, t, a, b, direction, ctype):
    """Elementwise op on same-shape arrays a, b of type t (storage dtypes)."""
    shape = a.shape
    a = a.reshape(-1)
    b = b.reshape(-1)
    if t in COMPLEX_TYPES:
        return complex_reference(op, t, a, b, direction).reshape(shape)
    if op == "compare":
        if t == "pred" or t in INT_TYPES:
            out = [compare_keys(int(x), int(y), direction) for x, y in zip(a, b)]
        elif ctype == "TOTALORDER":
            ba, w = float_bits(a, t)
            bb, _ = float_bits(b, t)
            out = [compare_keys(total_key(int(x), w), total_key(int(y), w), direction)
                   for x, y in zip(ba, bb)]
        else:
            x, y = to_compute(a, t), to_compute(b, t)
            out = {"EQ": x == y, "NE": x != y, "LT": x < y, "LE": x <= y, "GT": x > y,
                   "GE": x >= y}[direction]
        return np.asarray(out, dtype=np.bool_).reshape(shape)
    if t == "pred":
        x, y = a.astype(bool), b.astype(bool)
        if op in ("add", "maximum", "or"):
            r = x | y
        elif op in ("multiply", "minimum", "and"):
            r = x & y
        else:
            r = x ^ y
        return r.reshape(shape)
    if t in INT_TYPES:
        out = [int_scalar(op, int(x), int(y), t) for x, y in zip(a, b)]
        return np.asarray(out, dtype=object).astype(NP_DTYPE[t]).reshape(shape)
    x, y = to_compute(a, t), to_compute(b, t)
    with np.errstate(all="ignore"):
        if op == "add":
            r = x + y
        elif op == "subtract":
            r = x - y
        elif op == "multiply":
            r = x * y
        elif op == "divide":
            r = x / y
        elif op == "remainder":
            r = np.fmod(x, y)
        elif op in ("maximum", "minimum"):
            mx = op == "maximum"
            pick_x = (x > y) if mx else (x < y)
            eq = x == y
            # -0 < +0: on equal values the maximum takes the one without sign
            pick_x = np.where(eq, np.signbit(y) if mx else np.signbit(x), pick_x)
            r = np.where(pick_x, x, y)
            r = np.where(np.isnan(y), y, r)
            r = np.where(np.isnan(x), x, r)
        elif op == "power":
            r = np.power(x, y)
            r = np.where((y == 0) | (x == 1), np.ones_like(x), r)
        elif op == "atan2":
            r = np.arctan2(x, y)
        else:
            raise ValueError(op)
    return from_compute(r, t).reshape(shape)

# --- comparing results ---------------------------------------------------------------


def ordered(bits, w):
    """Float bits -> integers in value order (for ULP distances; +-inf are
    one step beyond the largest finite values)."""
    sign = 1 << (w - 1)
    return [-(int(v) & (sign - 1)) if int(v) & sign else int(v) for v in bits]


def mismatches(op, t, got, want):
    """Indices (flat) where got and want differ beyond the allowed error."""
    if got.shape != want.shape:
        return ["shape %s != %s" % (got.shape, want.shape)]
    g = got.reshape(-1)
    w = want.reshape(-1)
    if op == "compare" or t == "pred" or t in INT_TYPES:
        return [i for i in range(g.size) if g[i] != w[i]]
    if t in COMPLEX_TYPES:
        return complex_mismatches(op, t, g, w)
    gb, width = float_bits(g, t)
    wb, _ = float_bits(w, t)
    gf, wf = to_compute(g, t), to_compute(w, t)
    ulps = 0
    if op in ("power", "atan2"):
        ulps = 1 if t in ("f16", "bf16") else 4
    go, wo = ordered(gb, width), ordered(wb, width)
    bad = []
    for i in range(g.size):
        if np.isnan(gf[i]) or np.isnan(wf[i]):
            if not (np.isnan(gf[i]) and np.isnan(wf[i])):
                bad.append(i)
        elif ulps == 0:
            if gb[i] != wb[i]:
                bad.append(i)
        elif abs(go[i] - wo[i]) > ulps:
            bad.append(i)
    return bad

def complex_mismatches(op, t, g, w):
    """Parts equal bit for bit (NaN: any NaN), or for divide within 4 ULP of
    the larger part of the expected value."""
    P = PART[t]
    bad = []
    for i in range(g.size):
        for gp, wp in ((g[i].real, w[i].real), (g[i].imag, w[i].imag)):
            gp, wp = P(gp), P(wp)
            if np.isnan(gp) or np.isnan(wp):
                ok = np.isnan(gp) and np.isnan(wp)
            elif op == "divide":
                big = max(abs(P(w[i].real)), abs(P(w[i].imag)))
                ok = abs(float(gp) - float(wp)) <= 4 * float(np.spacing(big))
            else:
                ok = gp.tobytes() == wp.tobytes()
            if not ok:
                bad.append(i)
                break
    return bad

# --- random programs -------------------------------------------------------------------


def rand_values(rng, t, n, op, is_rhs):
    """n values of type t in storage form: edge cases, small values, raw bits."""
    if t == "pred":
        return np.array([rng.random() < 0.5 for _ in range(n)], dtype=np.bool_)
    if t in INT_TYPES:
        w = INT_TYPES[t]
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if is_signed(t) else (0, (1 << w) - 1)
        edges = [0, 1, 2, lo, hi, lo + 1, hi - 1] + ([-1, -2] if is_signed(t) else [])
        vals = []
        for _ in range(n):
            k = rng.random()
            if op.startswith("shift") and is_rhs and k < 0.6:
                v = rng.randint(0, w + 2)
                if not is_signed(t) or v <= hi:
                    vals.append(v)
                    continue
            if op == "power" and is_rhs and k < 0.7:
                vals.append(rng.randint(-2 if is_signed(t) else 0, 9))
                continue
            if k < 0.3:
                v = rng.choice(edges)
            elif k < 0.7:
                v = rng.randint(max(lo, -9), min(hi, 9))
            else:
                v = rng.randint(lo, hi)
            vals.append(v)
        return np.array(vals, dtype=object).astype(NP_DTYPE[t])
    if t in COMPLEX_TYPES:
        P = PART[t]
        out = np.zeros(n, dtype=NP_DTYPE[t])
        for i in range(n):
            parts = []
            for _ in range(2):
                k = rng.random()
                if op == "divide":
                    v = rng.choice([1.0, -2.0, 0.5]) if k < 0.2 else rng.uniform(-100, 100)
                elif k < 0.15:
                    v = rng.choice([0.0, -0.0, 1.0, float("inf"), float("-inf"), float("nan"), 1e30])
                elif k < 0.7:
                    v = rng.randint(-64, 63) / 8.0
                else:
                    v = rng.uniform(-100, 100)
                parts.append(P(v))
            out.real[i], out.imag[i] = parts
        return out
    # floats: built in f64, rounded to the type (bf16 through f32 bits)
    vals = []
    for _ in range(n):
        k = rng.random()
        if k < 0.25:
            v = rng.choice([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, float("inf"), float("-inf"),
                            float("nan"), 3.0, -3.0, 1e-40, -1e-40, 65504.0, 1e30, 1e-300])
        elif k < 0.7:
            v = rng.randint(-64, 63) / 8.0
        elif k < 0.85:
            v = rng.uniform(-100, 100)
        else:
            v = None
        vals.append(v)
    out = np.zeros(n, dtype=NP_DTYPE[t])
    for i, v in enumerate(vals):
        if v is None:  # raw bit pattern
            if t == "f64":
                out[i] = np.array([rng.getrandbits(64)], dtype=np.uint64).view(np.float64)[0]
            elif t == "f32":
                out[i] = np.array([rng.getrandbits(32)], dtype=np.uint32).view(np.float32)[0]
            elif t == "f16":
                out[i] = np.array([rng.getrandbits(16)], dtype=np.uint16).view(np.float16)[0]
            else:
                out[i] = rng.getrandbits(16)
        elif t == "bf16":
            out[i] = f32_to_bf16(np.array([v], dtype=np.float32))[0]
        else:
            out[i] = NP_DTYPE[t](v)
    return out


def layout_text(rng, dims):
    """A random layout for dims: `{1,0}`, `{0,1}`, `{0,1:pad(3,5)padval(one)}`."""
    r = len(dims)
    if r == 0:
        return None  # hloi does not read `f32[]{}`
    perm = list(range(r - 1, -1, -1))
    if r > 1 and rng.random() < 0.5:
        rng.shuffle(perm)
    text = ",".join(str(p) for p in perm)
    if r > 0 and rng.random() < 0.3:
        pad = [d + rng.randint(0, 2) for d in dims]
        text += ":pad(%s)" % ",".join(str(p) for p in pad)
        if rng.random() < 0.5:
            text += "padval(%s)" % rng.choice(["zero", "one", "lowest", "highest"])
    return "{" + text + "}"


def shape_text(t, dims, layout=None):
    s = "%s[%s]" % (t, ",".join(str(d) for d in dims))
    return s + (layout or "")


def pair_for(rng, r):
    """Operand sizes (a, b) whose degenerate broadcast gives result size r."""
    k = rng.random()
    if k < 0.5:
        return r, r
    return (1, r) if k < 0.75 else (r, 1)


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    while True:
        op = rng.choice(OPS)
        t = rng.choice(TYPES)
        if allowed(op, t):
            break
    # result dims: small, sometimes size 0
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
    res = [rng.choice([1, 2, 3, 4] if rng.random() < 0.95 else [0]) for _ in range(rank)]
    mode = rng.choice(["xla", "xla", "numpy-header", "numpy-flag"])
    kind = rng.choice(["same", "scalar", "degenerate", "bcast_dims", "bcast_dims",
                       "numpy" if mode != "xla" else "bcast_dims"])
    bdims = None
    if rank == 0:
        kind = "same"
    if kind == "same":
        lhs = rhs = list(res)
    elif kind == "scalar":
        other = list(res)
        lhs, rhs = ([], other) if rng.random() < 0.5 else (other, [])
    elif kind == "degenerate":
        pairs = [pair_for(rng, r) for r in res]
        lhs = [p[0] for p in pairs]
        rhs = [p[1] for p in pairs]
    elif kind == "bcast_dims":
        lo_rank = rng.randint(0, rank - 1) if rank > 1 else 0
        bdims = sorted(rng.sample(range(rank), lo_rank))
        hi = list(res)
        lo = []
        for d in bdims:
            a, b = pair_for(rng, res[d])
            lo.append(a)
            hi[d] = b
        lhs, rhs = (lo, hi) if rng.random() < 0.5 else (hi, lo)
    else:  # numpy trailing alignment
        lo_rank = rng.randint(0, rank - 1) if rank > 1 else 0
        pairs = [pair_for(rng, r) for r in res]
        hi = [p[0] for p in pairs]
        lo = [p[1] for p in pairs][rank - lo_rank:]
        for d in range(rank - lo_rank):
            hi[d] = res[d]
        lhs, rhs = (lo, hi) if rng.random() < 0.5 else (hi, lo)
    # broadcast_dimensions also written as the identity sometimes
    if kind in ("same", "degenerate") and rank > 0 and rng.random() < 0.15:
        bdims = list(range(rank))
    direction = rng.choice(["EQ", "NE"] if t in COMPLEX_TYPES else ["EQ", "NE", "LT", "LE", "GT", "GE"])
    ctype = None
    if op == "compare" and rng.random() < 0.5:
        if t in FLOAT_TYPES:
            ctype = rng.choice(["FLOAT", "TOTALORDER"])
        elif t in COMPLEX_TYPES:
            ctype = "FLOAT"
        elif t in INT_TYPES:
            ctype = "SIGNED" if is_signed(t) else "UNSIGNED"
        else:
            ctype = "UNSIGNED"
    rt = "pred" if op == "compare" else t
    case = {
        "index": index, "op": op, "type": t, "mode": mode, "kind": kind,
        "lhs": lhs, "rhs": rhs, "bdims": bdims, "direction": direction, "ctype": ctype,
        "lhs_layout": layout_text(rng, lhs) if rng.random() < 0.6 else None,
        "rhs_layout": layout_text(rng, rhs) if rng.random() < 0.6 else None,
        "fortran": [rng.random() < 0.3, rng.random() < 0.3],
        "write_shape": rng.random() < 0.8,
        # one operand written as a constant sometimes; either engine
        "const": rng.choice([None, None, None, None, "a", "b"]),
        "engine": rng.choice(["fast", "fast", "reference"]),
    }
    want_dims = expected_dims(case)
    case["res"] = want_dims
    case["res_layout"] = layout_text(rng, want_dims) if case["write_shape"] and rng.random() < 0.6 else None
    case["rt"] = rt
    na = int(np.prod(lhs)) if lhs else 1
    nb = int(np.prod(rhs)) if rhs else 1
    case["a"] = rand_values(rng, t, na, op, False).reshape(lhs)
    case["b"] = rand_values(rng, t, nb, op, True).reshape(rhs)
    if case["const"] and t in FLOAT_TYPES:
        # a NaN constant is written `nan` / `-nan`: its payload is the canonical one
        v = case[case["const"]]
        f = to_compute(v, t)
        canon = from_compute(np.where(np.signbit(f), -np.float64("nan"), np.float64("nan")).astype(f.dtype), t)
        case[case["const"]] = np.where(np.isnan(f), canon, v).astype(v.dtype)
    return case


def part_text(f):
    f = float(f)
    if f != f:
        return "-nan" if np.signbit(f) else "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def element_text(v, t):
    if t == "pred":
        return "true" if v else "false"
    if t in INT_TYPES:
        return str(int(v))
    if t in COMPLEX_TYPES:
        return "(%s, %s)" % (part_text(v.real), part_text(v.imag))
    f = float(to_compute(np.asarray([v]), t)[0])
    if f != f:
        return "-nan" if np.signbit(f) else "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return repr(f)


def literal_text(v, t):
    if v.ndim == 0:
        return element_text(v.reshape(1)[0], t)
    if v.shape[0] == 0:
        return "{}"
    if v.ndim == 1:
        return "{" + ", ".join(element_text(x, t) for x in v) + "}"
    return "{ " + ", ".join(literal_text(x, t) for x in v) + " }"


def expand(dims, bdims, rank, numpy_rule):
    """The operand's dims in the result's rank (XLA: sizes at bdims, 1
    elsewhere; NumPy: leading 1s)."""
    if len(dims) == rank:
        return list(dims)
    if len(dims) == 0:
        return [1] * rank
    if bdims is not None and not numpy_rule:
        out = [1] * rank
        for i, d in enumerate(bdims):
            out[d] = dims[i]
        return out
    return [1] * (rank - len(dims)) + list(dims)


def expected_dims(case):
    rank = max(len(case["lhs"]), len(case["rhs"]))
    numpy_rule = case["mode"] != "xla" and case["bdims"] is None
    a = expand(case["lhs"], case["bdims"], rank, numpy_rule)
    b = expand(case["rhs"], case["bdims"], rank, numpy_rule)
    return list(np.broadcast_shapes(tuple(a), tuple(b)))


def expected(case):
    rank = len(case["res"])
    numpy_rule = case["mode"] != "xla" and case["bdims"] is None
    a = case["a"].reshape(expand(case["lhs"], case["bdims"], rank, numpy_rule))
    b = case["b"].reshape(expand(case["rhs"], case["bdims"], rank, numpy_rule))
    a = np.array(np.broadcast_to(a, case["res"]))
    b = np.array(np.broadcast_to(b, case["res"]))
    return reference(case["op"], case["type"], a, b, case["direction"], case["ctype"])


def program_text(case):
    t = case["type"]
    header = "HloModule diff_%d" % case["index"]
    if case["mode"] == "numpy-header":
        header += ", broadcast_mode=numpy"
    lines = [header, "", "ENTRY main {"]
    num = 0
    for key, dims, lay in (("a", case["lhs"], case["lhs_layout"]), ("b", case["rhs"], case["rhs_layout"])):
        if case["const"] == key:
            what = "constant(%s)" % literal_text(case[key], t)
        else:
            what = "parameter(%d)" % num
            num += 1
        lines.append("  %s = %s %s" % (key, shape_text(t, dims, lay), what))
    res = ""
    if case["write_shape"]:
        res = shape_text(case["rt"], case["res"], case["res_layout"]) + " "
    attrs = ""
    if case["bdims"] is not None:
        attrs += ", broadcast_dimensions={%s}" % ",".join(str(d) for d in case["bdims"])
    if case["op"] == "compare":
        attrs += ", direction=" + case["direction"]
        if case["ctype"]:
            attrs += ", type=" + case["ctype"]
    lines.append("  ROOT r = %s%s(a, b)%s" % (res, case["op"], attrs))
    lines.append("}")
    return "\n".join(lines) + "\n"


def flags(case, base):
    f = []
    for key in ("a", "b"):
        if case["const"] != key:
            f += ["--input", base + "." + key + ".npy"]
    f += ["--output", base + ".out.npy"]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    if case["mode"] == "numpy-flag":
        f.append("--broadcast-mode=numpy")
    return f


def case_flags(case, output):
    """The flags as a case file's `// hloi-flags:` line for `hloi test`:
    inputs next to the case, the output a plain name (kept by --outputs)."""
    name = "c%06d" % case["index"]
    f = []
    for key in ("a", "b"):
        if case["const"] != key:
            f += ["--input", name + "." + key + ".npy"]
    f += ["--output", output]
    if case["engine"] != "fast":
        f.append("--engine=" + case["engine"])
    if case["mode"] == "numpy-flag":
        f.append("--broadcast-mode=numpy")
    return f


def write_case(case, d):
    name = "c%06d" % case["index"]
    base = os.path.join(d, name)
    for key, fortran, suffix in (("a", case["fortran"][0], ".a.npy"), ("b", case["fortran"][1], ".b.npy")):
        v = case[key]
        if fortran and v.ndim >= 2:
            v = np.asfortranarray(v)
        np.save(base + suffix, v, allow_pickle=False)
    with open(base + ".hlo", "w") as f:
        f.write("// hloi-flags: " + " ".join(case_flags(case, "out.npy")) + "\n")
        f.write(program_text(case))
    return base


def describe(case, base, got, want, bad, hloi):
    out = ["FAIL case %d (%s %s, %s, %s, %s engine)" % (case["index"], case["op"], case["type"],
                                                       case["kind"], case["mode"], case["engine"])]
    out.append(program_text(case).rstrip())
    out.append("lhs = %r" % (case["a"],))
    out.append("rhs = %r" % (case["b"],))
    out.append("want = %r" % (want,))
    out.append("got  = %r" % (got,))
    if bad:
        out.append("differs at flat index %s" % (bad[:8],))
    out.append("reproduce: %s run %s.hlo %s" % (hloi, base, " ".join(flags(case, base))))
    return "\n".join(out)


def run_single(hloi, base, case):
    p = subprocess.run([hloi, "run", base + ".hlo"] + flags(case, base), capture_output=True, text=True)
    return p.stderr.strip() or p.stdout.strip()


def run_tests(hloi, dirs, jobs, outputs=None, update=False):
    """`hloi test` over the directories, `jobs` cases at a time; with
    `outputs`, what each case writes is kept in OUTPUTS/NAME/."""
    cmd = [hloi, "test", "-j", str(jobs), "--quiet", "--timeout", "120"]
    if outputs:
        cmd += ["--outputs", outputs]
    if update:
        cmd.append("--update")
    p = subprocess.run(cmd + dirs, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode < 0 or p.returncode > 1:
        print("numpy_diff: hloi test ended with %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:2000]))


def result_path(out, case, name):
    return os.path.join(out, "c%06d" % case["index"], name)


def make_dirs(tmp, name, jobs):
    dirs = [os.path.join(tmp, "%s%d" % (name, j)) for j in range(jobs)]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    return dirs


def lower_pass(hloi, cases, tmp, out, jobs):
    """`hloi lower` on the chosen cases (`hloi test --update` writes each
    lowered program as the case's golden), then the lowered programs run
    with --strict on the same inputs into OUT/NAME/low.npy."""
    chosen = [c for c in cases if c["lower"]]
    if not chosen:
        return chosen
    ldirs = make_dirs(tmp, "lower", jobs)
    rdirs = make_dirs(tmp, "lowered", jobs)
    for n, case in enumerate(chosen):
        name = os.path.basename(case["base"])
        src = os.path.join(ldirs[n % jobs], name)
        with open(src + ".hlo", "w") as f:
            f.write("// hloi-command: lower\n")
            if case["mode"] == "numpy-flag":
                f.write("// hloi-flags: --broadcast-mode=numpy\n")
            f.write(program_text(case))
        case["lower_src"] = src
    run_tests(hloi, ldirs, jobs, update=True)
    for n, case in enumerate(chosen):
        name = os.path.basename(case["base"])
        dst = os.path.join(rdirs[n % jobs], name)
        try:
            with open(case["lower_src"] + ".golden") as f:
                text = f.read()
        except OSError:
            text = "(hloi lower wrote nothing)\n"
        case["lowered_text"] = text
        # standalone `hloi run` flags, for the report
        run_flags = [x for x in flags(case, case["base"]) if not x.startswith("--broadcast-mode")]
        run_flags[run_flags.index("--output") + 1] = case["base"] + ".low.npy"
        case["lowered_flags"] = ["--strict"] + run_flags
        for key in ("a", "b"):
            if case["const"] != key:
                os.symlink(case["base"] + "." + key + ".npy", dst + "." + key + ".npy")
        test_flags = [x for x in case_flags(case, "low.npy") if not x.startswith("--broadcast-mode")]
        with open(dst + ".hlo", "w") as f:
            f.write("// hloi-flags: " + " ".join(["--strict"] + test_flags) + "\n")
            f.write(text)
        case["lowered_hlo"] = dst + ".hlo"
    run_tests(hloi, rdirs, jobs, outputs=out)
    return chosen


def load_result(case, path):
    got = np.load(path)
    if case["type"] == "bf16" and case["op"] != "compare":
        got = got.view(np.uint16)
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--lower-fraction", type=float, default=0.25,
                    help="share of the cases also run through `hloi lower` and --strict")
    ap.add_argument("--only", type=int, default=None, help="run only this case index")
    ap.add_argument("--keep", default=None, help="write the cases here and keep them")
    args = ap.parse_args()
    start = time.time()
    indices = [args.only] if args.only is not None else list(range(args.cases))
    tmp = args.keep or tempfile.mkdtemp(prefix="hloi-diff-")
    os.makedirs(tmp, exist_ok=True)
    jobs = max(1, min(args.jobs, len(indices)))
    dirs = make_dirs(tmp, "part", jobs)
    cases = []
    for n, i in enumerate(indices):
        case = gen_case(args.seed, i)
        case["lower"] = random.Random(args.seed * 7919 + i).random() < args.lower_fraction
        case["base"] = write_case(case, dirs[n % jobs])
        cases.append(case)
    out = os.path.join(tmp, "out")
    os.makedirs(out, exist_ok=True)
    run_tests(args.hloi, dirs, jobs, outputs=out)
    lowered = lower_pass(args.hloi, cases, tmp, out, jobs)
    failed = 0
    failed_by = {}
    counts = {}
    for case in cases:
        base = case["base"]
        want = expected(case)
        key = case["op"] + " " + case["type"]
        counts[key] = counts.get(key, 0) + 1
        rt = case["rt"] if case["op"] == "compare" else case["type"]
        problem = None
        try:
            got = load_result(case, result_path(out, case, "out.npy"))
            bad = mismatches(case["op"], rt, got, want)
            if bad:
                problem = describe(case, base, got, want, bad, args.hloi)
        except OSError:
            problem = describe(case, base, None, want, [], args.hloi)
            problem += "\nhloi said: " + run_single(args.hloi, base, case)
        if problem is None and case["lower"]:
            try:
                got = load_result(case, result_path(out, case, "low.npy"))
                bad = mismatches(case["op"], rt, got, want)
            except OSError:
                got, bad = None, ["no result"]
            if bad:
                problem = describe(case, base, got, want, bad, args.hloi)
                problem += "\nafter `hloi lower` (run with %s):\n%s" % (
                    " ".join(case["lowered_flags"]), case["lowered_text"].rstrip())
                p = subprocess.run([args.hloi, "run", case["lowered_hlo"]] + case["lowered_flags"],
                                   capture_output=True, text=True)
                problem += "\nhloi said: " + (p.stderr.strip() or "(nothing)")
        if problem:
            failed += 1
            failed_by[case["engine"]] = failed_by.get(case["engine"], 0) + 1
            if failed <= 10:
                print(problem)
                print()
    elapsed = time.time() - start
    print("numpy_diff: %d cases (seed %d), %d also lowered and run with --strict, %d failed, "
          "%d op/type pairs, %.1f s" % (len(cases), args.seed, len(lowered), failed, len(counts),
                                        elapsed))
    if failed:
        print("numpy_diff: failed by engine: " +
              ", ".join("%s %d" % kv for kv in sorted(failed_by.items())))
        print("numpy_diff: cases kept in " + tmp)
        return 1
    if not args.keep:
        # rm is much faster than shutil.rmtree on tens of thousands of files
        if subprocess.run(["rm", "-rf", tmp]).returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

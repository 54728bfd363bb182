#!/usr/bin/python3
"""Differential test of hloi's unary family against NumPy: random one-op
programs of every unary op NumPy (or Python's math module) can model, clamp
(scalar or full bounds) and complex(re, im), over the integer types, pred,
f16, bf16, f32, f64, c64 and c128, random shapes (size 0 and 1 included),
random parameter and result layouts with padding, Fortran-order inputs and
both engines. Run through `hloi test` (--jobs cases at a time, the .npy
outputs kept with --outputs).

What is compared:
- exact, bit for bit (NaN payloads included): the integer ops (abs and
  negate wrapping, sign, not, popcnt, count-leading-zeros), abs, negate,
  is-finite, real, imag, clamp (XLA's rule: the first NaN of min, x, max,
  else min(max(x, min), max) as std::min/std::max pick them) and complex;
- exact but for NaN payloads (the C library and NumPy may quiet a
  signaling NaN differently): ceil, floor, both roundings, sign, sqrt;
- within ULP_F32 (f32, f64) or ULP_HALF (f16, bf16: computed in f32 and
  rounded once by hloi, NumPy may round twice) units in the last place:
  the transcendental functions, rsqrt and logistic (hloi calls the C
  library; NumPy has its own vectorised code for some of them); NaN where
  NumPy has NaN, infinities exactly;
- c64/c128 (finite inputs of modulus below 4, results finite): within
  ULP_COMPLEX units of the larger part of NumPy's result.

usage: numpy_unary.py HLOI [--cases N] [--seed S] [--jobs J] [--only I]
                           [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import argparse
import math
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
    print("numpy_unary: NumPy is not installed; skipped")
    sys.exit(77)

warnings.simplefilter("ignore")

ULP_F32 = 4       # f32, f64 transcendental functions
ULP_HALF = 1      # f16, bf16: one rounding of the f32 result may differ
ULP_COMPLEX = 8   # c64, c128: of the larger part

SINT = {"s8": 8, "s16": 16, "s32": 32, "s64": 64}
UINT = {"u8": 8, "u16": 16, "u32": 32, "u64": 64}
FLOATS = ["f16", "bf16", "f32", "f64"]
COMPLEX = ["c64", "c128"]
NP_DTYPE = {"pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
            "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
            "c64": np.complex64, "c128": np.complex128}
PART = {"c64": "f32", "c128": "f64"}
BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}

INT_OPS = ["abs", "negate", "sign", "not", "popcnt", "count-leading-zeros"]
UINT_OPS = ["negate", "not", "popcnt", "count-leading-zeros"]
EXACT_FLOAT = ["abs", "negate", "ceil", "floor", "round-nearest-afz", "round-nearest-even", "sign", "sqrt",
               "is-finite", "real", "imag"]
TRANS_FLOAT = ["exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "rsqrt", "cbrt",
               "tanh", "sine", "cosine", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
               "atanh", "erf"]
COMPLEX_OPS = ["negate", "abs", "real", "imag", "sign", "exponential", "log", "sqrt", "rsqrt", "tanh", "sine",
               "cosine", "tan", "logistic"]
OPS = ["int", "float-exact", "float-trans", "complex-unary", "clamp", "complex"]

NP_FN = {"exponential": np.exp, "exponential-minus-one": np.expm1, "log": np.log, "log-plus-one": np.log1p,
         "cbrt": np.cbrt, "tanh": np.tanh, "sine": np.sin, "cosine": np.cos, "tan": np.tan, "asin": np.arcsin,
         "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
         "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt}


# --- bf16 as its bits ------------------------------------------------------------------


def bf16_to_f32(b):
    a = np.atleast_1d(np.asarray(b, dtype=np.uint16)).astype(np.uint32)
    return (a << np.uint32(16)).view(np.float32).reshape(np.shape(b))


def f32_to_bf16(x):
    """Round to nearest even; NaN keeps its sign and top payload bits, quiet."""
    shape = np.shape(x)
    x = np.atleast_1d(np.asarray(x, dtype=np.float32))
    u = x.view(np.uint32).astype(np.uint64)
    r = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)).astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = ((u[nan] >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16)
    return r.reshape(shape)


def as_float(a, t):
    """Values of a float array (bf16 bits -> f32)."""
    return bf16_to_f32(a) if t == "bf16" else a


def from_float(x, t):
    """A compute result (f32 for bf16) stored as type t."""
    if t == "bf16":
        return f32_to_bf16(x)
    return np.asarray(x).astype(NP_DTYPE[t])


# --- inputs ------------------------------------------------------------------------------


def rand_dims(rng, rank):
    return [rng.choice([0] + [1] * 2 + [2, 3, 4, 5]) if rng.random() < 0.9 else rng.randint(6, 12)
            for _ in range(rank)]


def n_of(dims):
    return int(np.prod(dims)) if dims else 1


def rand_int(rng, t, dims):
    n = n_of(dims)
    if t == "pred":
        return np.array([rng.random() < 0.5 for _ in range(n)], dtype=np.bool_).reshape(dims)
    w = SINT.get(t) or UINT[t]
    vals = []
    for _ in range(n):
        k = rng.random()
        if k < 0.4:
            v = rng.getrandbits(w)
        elif k < 0.6:
            v = rng.choice([0, 1, (1 << (w - 1)), (1 << (w - 1)) - 1, (1 << w) - 1])
        else:
            v = rng.randint(-20, 20) & ((1 << w) - 1)
        vals.append(v)
    u = np.array(vals, dtype=np.uint64).astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[w])
    return u.view(NP_DTYPE[t]).reshape(dims)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, float("inf"), float("-inf"), float("nan")]


def rand_float(rng, t, dims, raw, lo=-8.0, hi=8.0):
    """Raw bits (every class: NaN payloads, subnormals, extremes) or values
    from [lo, hi] and the special ones, stored as type t."""
    n = n_of(dims)
    if raw:
        w = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[t]
        u = np.array([rng.getrandbits(w) for _ in range(n)], dtype=np.uint64).astype(BITS[t])
        return (u if t == "bf16" else u.view(NP_DTYPE[t])).reshape(dims)
    vals = []
    for _ in range(n):
        k = rng.random()
        if k < 0.15:
            vals.append(rng.choice(SPECIAL))
        elif k < 0.25:
            vals.append(rng.randint(-6, 6) + rng.choice([0.0, 0.5]))
        else:
            vals.append(rng.uniform(lo, hi))
    x = np.array(vals, dtype=np.float64).reshape(dims)
    if t == "bf16":
        return f32_to_bf16(x.astype(np.float32)).reshape(dims)
    return x.astype(NP_DTYPE[t])


def rand_complex(rng, t, dims):
    n = n_of(dims)
    re = [rng.uniform(-2.5, 2.5) for _ in range(n)]
    im = [rng.uniform(-2.5, 2.5) for _ in range(n)]
    return (np.array(re) + 1j * np.array(im)).astype(NP_DTYPE[t]).reshape(dims)


# --- NumPy models ------------------------------------------------------------------------


def wrap(v, t):
    w = SINT.get(t) or UINT[t]
    v &= (1 << w) - 1
    if t in SINT and v >= 1 << (w - 1):
        v -= 1 << w
    return v


def int_model(op, a, t):
    if t == "pred":
        return np.logical_not(a)
    w = SINT.get(t) or UINT[t]
    out = []
    for v in a.reshape(-1).tolist():
        bits = v & ((1 << w) - 1)
        if op == "abs":
            r = -v if v < 0 else v
        elif op == "negate":
            r = -v
        elif op == "sign":
            r = (v > 0) - (v < 0)
        elif op == "not":
            r = ~v
        elif op == "popcnt":
            r = bin(bits).count("1")
        else:
            r = w - bits.bit_length()
        out.append(wrap(r, t))
    return np.array(out, dtype=np.int64 if t in SINT else np.uint64).astype(NP_DTYPE[t]).reshape(a.shape)


def round_afz(x):
    t = np.trunc(x)
    d = x - t
    return np.where(np.abs(d) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def exact_float_model(op, a, t):
    x = as_float(a, t)
    if op == "is-finite":
        return np.isfinite(x)
    if op == "real":
        return a.copy()
    if op == "imag":
        return from_float(np.zeros_like(x), t)
    if op == "negate" and t == "bf16":
        return (a ^ np.uint16(0x8000)).astype(np.uint16)
    if op == "abs" and t == "bf16":
        return (a & np.uint16(0x7FFF)).astype(np.uint16)
    if op == "negate":
        return -x
    if op == "abs":
        return np.abs(x)
    if op == "ceil":
        r = np.ceil(x)
    elif op == "floor":
        r = np.floor(x)
    elif op == "round-nearest-even":
        r = np.rint(x)
    elif op == "round-nearest-afz":
        r = round_afz(x)
    elif op == "sign":
        r = np.where(np.isnan(x) | (x == 0), x, np.sign(x)).astype(x.dtype)
    else:  # sqrt: correctly rounded in either type
        r = np.sqrt(x.astype(np.float32) if t in ("f16", "bf16") else x)
    return from_float(r, t)


def trans_model(op, a, t):
    """In f32 for f16/bf16 (rounded once here too), else in the type."""
    x = as_float(a, t)
    c = x.astype(np.float32) if t in ("f16", "bf16") else x
    if op == "logistic":
        r = np.float32(1) / (np.float32(1) + np.exp(-c)) if c.dtype == np.float32 else 1.0 / (1.0 + np.exp(-c))
    elif op == "rsqrt":
        r = (np.float32(1) if c.dtype == np.float32 else 1.0) / np.sqrt(c)
    elif op == "erf":
        r = np.array([math.erf(v) if math.isfinite(v) else (math.copysign(1.0, v) if math.isinf(v) else v)
                      for v in c.astype(np.float64).reshape(-1).tolist()]).astype(c.dtype).reshape(c.shape)
    else:
        r = NP_FN[op](c)
    return from_float(np.asarray(r, dtype=c.dtype), t)


def complex_model(op, a, t):
    if op == "negate":
        return -a
    if op == "abs":
        return np.abs(a)
    if op == "real":
        return np.real(a).copy()
    if op == "imag":
        return np.imag(a).copy()
    if op == "sign":
        m = np.abs(a)
        return np.where(m == 0, 0, a / np.where(m == 0, 1, m)).astype(a.dtype)
    if op == "rsqrt":
        return (1 / np.sqrt(a)).astype(a.dtype)
    if op == "logistic":
        return (1 / (1 + np.exp(-a))).astype(a.dtype)
    return NP_FN[op](a).astype(a.dtype)


def clamp_model(lo, x, hi, t):
    """XLA's evaluator: the first NaN of lo, x, hi; else
    std::min(hi, std::max(x, lo)), i.e. m = x < lo ? lo : x; m < hi ? m : hi."""
    if t == "pred":
        m = np.where(x < lo, lo, x)
        return np.where(m < hi, m, hi)
    lo_b, x_b, hi_b = np.broadcast_arrays(lo, x, hi)
    if t in FLOATS:
        lv, xv, hv = as_float(lo_b, t), as_float(x_b, t), as_float(hi_b, t)
        m = np.where(xv < lv, lo_b, x_b)
        mv = np.where(xv < lv, lv, xv)
        r = np.where(mv < hv, m, hi_b)
        r = np.where(np.isnan(hv), hi_b, r)
        r = np.where(np.isnan(xv), x_b, r)
        return np.where(np.isnan(lv), lo_b, r).astype(lo_b.dtype)
    m = np.where(x_b < lo_b, lo_b, x_b)
    return np.where(m < hi_b, m, hi_b).astype(x_b.dtype)


# --- cases -------------------------------------------------------------------------------


def layout_text(rng, dims, pad=True):
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


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    kind = rng.choice(OPS)
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
    dims = rand_dims(rng, rank)
    params = []    # (name, type, dims, array)
    tol = "exact"
    attrs = ""
    if kind == "int":
        t = rng.choice(["pred"] + list(SINT) * 2 + list(UINT) * 2)
        op = "not" if t == "pred" else rng.choice(INT_OPS if t in SINT else UINT_OPS)
        a = rand_int(rng, t, dims)
        params.append(("p0", t, dims, a))
        expected, rt = int_model(op, a, t), t
    elif kind == "float-exact":
        t = rng.choice(FLOATS)
        op = rng.choice(EXACT_FLOAT)
        a = rand_float(rng, t, dims, raw=op != "sqrt" or rng.random() < 0.5)
        params.append(("p0", t, dims, a))
        expected = exact_float_model(op, a, t)
        rt = "pred" if op == "is-finite" else t
        if op in ("ceil", "floor", "round-nearest-afz", "round-nearest-even", "sign", "sqrt"):
            tol = "exact-nan"
    elif kind == "float-trans":
        t = rng.choice(FLOATS)
        op = rng.choice(TRANS_FLOAT)
        lo, hi = {"asin": (-1.2, 1.2), "acos": (-1.2, 1.2), "atanh": (-1.2, 1.2), "acosh": (0.5, 20.0),
                  "exponential": (-90.0, 90.0), "sinh": (-20.0, 20.0), "cosh": (-20.0, 20.0),
                  "tan": (-3.0, 3.0), "sine": (-20.0, 20.0), "cosine": (-20.0, 20.0)}.get(op, (-8.0, 8.0))
        a = rand_float(rng, t, dims, raw=False, lo=lo, hi=hi)
        params.append(("p0", t, dims, a))
        expected, rt = trans_model(op, a, t), t
        tol = "ulp"
    elif kind == "complex-unary":
        t = rng.choice(COMPLEX)
        op = rng.choice(COMPLEX_OPS)
        a = rand_complex(rng, t, dims)
        params.append(("p0", t, dims, a))
        expected = complex_model(op, a, t)
        rt = PART[t] if op in ("abs", "real", "imag") else t
        tol = "exact" if op in ("negate", "real", "imag") else "complex"
    elif kind == "clamp":
        t = rng.choice(["pred"] + list(SINT) + list(UINT) + FLOATS)
        op = "clamp"

        def arr(d):
            if t in FLOATS:
                return rand_float(rng, t, d, raw=rng.random() < 0.3)
            return rand_int(rng, t, d)
        ldims = [] if rng.random() < 0.5 else dims
        hdims = [] if rng.random() < 0.5 else dims
        lo_a, x, hi_a = arr(ldims), arr(dims), arr(hdims)
        params += [("p0", t, ldims, lo_a), ("p1", t, dims, x), ("p2", t, hdims, hi_a)]
        expected, rt = clamp_model(lo_a, x, hi_a, t), t
    else:  # complex(re, im)
        pt = rng.choice(["f32", "f64"])
        t, op = pt, "complex"
        re = rand_float(rng, pt, dims, raw=rng.random() < 0.5)
        im = rand_float(rng, pt, dims, raw=rng.random() < 0.5)
        params += [("p0", pt, dims, re), ("p1", pt, dims, im)]
        rt = "c64" if pt == "f32" else "c128"
        expected = np.empty(dims, dtype=NP_DTYPE[rt])
        expected.real = re
        expected.imag = im
    lay = {name: layout_text(rng, pd) for name, _, pd, _ in params}
    return {
        "index": index, "kind": kind, "op": op, "type": t, "rtype": rt, "params": params, "attrs": attrs,
        "expected": np.asarray(expected), "dims": dims, "tol": tol, "layouts": lay,
        "res_layout": layout_text(rng, dims) if rng.random() < 0.5 else None,
        "fortran": [rng.random() < 0.3 for _ in params],
        "engine": rng.choice(["fast", "fast", "reference"]),
    }


def program_text(case):
    lines = ["HloModule unary_%d" % case["index"], "", "ENTRY main {"]
    for k, (name, pt, pd, _) in enumerate(case["params"]):
        lines.append("  %s = %s parameter(%d)" % (name, shape_text(pt, pd, case["layouts"][name]), k))
    args = ", ".join(name for name, _, _, _ in case["params"])
    lines.append("  ROOT r = %s %s(%s)%s" % (shape_text(case["rtype"], case["dims"], case["res_layout"]),
                                             case["op"], args, case["attrs"]))
    lines.append("}")
    return "\n".join(lines) + "\n"


def case_flags(case):
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


# --- comparison --------------------------------------------------------------------------


def ordered(x, t):
    """Float bits mapped to integers in value order (ULP distance)."""
    u = np.asarray(x).view(BITS[t]).astype(np.int64) if t != "f64" else \
        np.asarray(x).view(np.uint64)
    if t == "f64":
        s = (u >> np.uint64(63)).astype(bool)
        mag = (u & np.uint64(0x7FFFFFFFFFFFFFFF)).astype(np.int64)
        return np.where(s, -mag, mag)
    w = {"f16": 16, "bf16": 16, "f32": 32}[t]
    s = (u >> (w - 1)) & 1
    mag = u & ((1 << (w - 1)) - 1)
    return np.where(s == 1, -mag, mag)


def same(case, got, want):
    if got.shape != want.shape:
        return False
    got = np.ascontiguousarray(np.atleast_1d(got))
    want = np.ascontiguousarray(np.atleast_1d(want))
    rt = case["rtype"]
    if rt == "pred":
        return np.array_equal(got.astype(np.bool_), want.astype(np.bool_))
    if case["tol"] == "exact":
        if rt in COMPLEX:
            g = got.view(np.uint32 if rt == "c64" else np.uint64)
            w = want.astype(got.dtype).view(g.dtype)
            return np.array_equal(g, w)
        if rt in FLOATS:
            return np.array_equal(got.view(BITS[rt]), want.astype(got.dtype).view(BITS[rt]))
        return np.array_equal(got, want.astype(got.dtype))
    if case["tol"] == "exact-nan":
        w = want.astype(got.dtype)
        nan = np.isnan(as_float(got, rt)) & np.isnan(as_float(w, rt))
        return bool(np.all((got.view(BITS[rt]) == w.view(BITS[rt])) | nan))
    if case["tol"] == "ulp":
        t = rt
        g = as_float(got, t).astype(np.float64)
        w = as_float(want.astype(got.dtype), t).astype(np.float64)
        gn, wn = np.isnan(g), np.isnan(w)
        if not np.array_equal(gn, wn):
            return False
        gi, wi = np.isinf(g), np.isinf(w)
        if not np.array_equal(g[gi], w[gi]) or not np.array_equal(gi, wi):
            return False
        fin = ~gn & ~gi
        d = np.abs(ordered(got, t)[fin] - ordered(want.astype(got.dtype), t)[fin])
        return bool(np.all(d <= (ULP_HALF if t in ("f16", "bf16") else ULP_F32)))
    # complex within ULP_COMPLEX of the larger part of NumPy's result
    w = want.astype(got.dtype)
    if not np.all(np.isfinite(w)):
        return True  # outside the compared domain (inputs are chosen to avoid it)
    part = np.float32 if got.dtype in (np.complex64, np.float32) else np.float64
    eps = np.finfo(part).eps
    if got.dtype in (np.float32, np.float64):
        scale = np.abs(w)
        return bool(np.all(np.abs(got - w) <= ULP_COMPLEX * eps * np.maximum(scale, np.finfo(part).tiny)))
    scale = np.maximum(np.abs(w.real), np.abs(w.imag))
    err = np.maximum(np.abs(got.real - w.real), np.abs(got.imag - w.imag))
    return bool(np.all(err <= ULP_COMPLEX * eps * np.maximum(scale, np.finfo(part).tiny)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hloi")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", type=int, default=None, help="run only this case index")
    ap.add_argument("--keep", default=None, help="write the cases here and keep them")
    args = ap.parse_args()
    start = time.time()
    indices = [args.only] if args.only is not None else list(range(args.cases))
    tmp = args.keep or tempfile.mkdtemp(prefix="hloi-unary-")
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
        print("numpy_unary: hloi test ended with %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:2000]))
    failed = 0
    counts = {}
    for case in cases:
        base = case["base"]
        counts[case["kind"]] = counts.get(case["kind"], 0) + 1
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
            print("hloi  = %r" % (got,))
            print("numpy = %r" % (want,))
            print("reproduce: %s %s %s --only %d --seed %d --keep DIR" % (
                sys.executable, sys.argv[0], args.hloi, case["index"], args.seed))
    print("numpy_unary: %d cases (%s), %d failed, %.1f s" % (
        len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items())), failed, time.time() - start))
    if failed:
        print("numpy_unary: cases kept in " + tmp)
        return 1
    if not args.keep:
        if subprocess.run(["rm", "-rf", tmp]).returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

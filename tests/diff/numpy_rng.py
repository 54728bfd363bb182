#!/usr/bin/python3
"""Differential test of hloi's random numbers against a NumPy model of
XLA's expansion of them (xla/hlo/builder/lib/prng.cc, RngBitGeneratorExpander
and RngExpander), written as XLA builds the graph, op by op on whole arrays:
ThreeFry's counters as a broadcast state plus iotas over the halved shape,
the halves concatenated, reshaped and sliced back; Philox's counters as a
128-bit sum with a select for the carry, its four words concatenated as
columns; uniform floats from the top mantissa bits, integers by remainder,
normal values by Box-Muller over the doubled shape. hloi's kernels
(eval/kernels/rng.c) walk the elements instead, so the two meet only in the result.

Programs: rng-bit-generator with every algorithm, both Philox state sizes,
the 8- to 64-bit integer types, scalars, odd and zero dimensions, random
states (counters near a carry too), result layouts; rng uniform (f16, bf16,
f32, f64, s32, u32, s64, u64) and normal (f16, bf16, f32, f64); both
engines. Bits and uniform values must be identical; normal values agree
within a few ulp (NumPy's float32 sin, cos and log are not glibc's).

usage: numpy_rng.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_rng: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

U32, U64 = np.uint32, np.uint64
INT_TYPES = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32,
             "s32": np.int32, "u64": np.uint64, "s64": np.int64}
FLOAT_TYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
RNG_STATE0 = 0x7012395


def rotl(v, d):
    return (v << U32(d)) | (v >> U32(32 - d))


def threefry2x32(x0, x1, k0, k1):
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    ks = [k0, k1, U32(0x1BD11BDA) ^ k0 ^ k1]
    x0, x1 = x0 + ks[0], x1 + ks[1]
    for g in range(5):
        for r in rot[(g % 2) * 4:(g % 2) * 4 + 4]:
            x0 = x0 + x1
            x1 = rotl(x1, r) ^ x0
        x0 = x0 + ks[(g + 1) % 3]
        x1 = x1 + ks[(g + 2) % 3] + U32(g + 1)
    return x0, x1


def philox4x32(c, k0, k1):
    for _ in range(10):
        p0 = c[0].astype(U64) * U64(0xD2511F53)
        p1 = c[2].astype(U64) * U64(0xCD9E8D57)
        c = [(p1 >> U64(32)).astype(U32) ^ c[1] ^ k0, p1.astype(U32),
             (p0 >> U64(32)).astype(U32) ^ c[3] ^ k1, p0.astype(U32)]
        k0, k1 = k0 + U32(0x9E3779B9), k1 + U32(0xBB67AE85)
    return c


def words(u64):
    return u64.astype(U32), (u64 >> U64(32)).astype(U32)


def split_shape(dims):
    """SplitShapeIntoHalves: (half dims, concat dims, split dim, concat dim)."""
    if not dims:
        return [1], [2], 0, 0
    s = next((i for i, d in enumerate(dims) if d % 2 == 0), None)
    if s is None:
        s = max(range(len(dims)), key=lambda i: (dims[i], -i))
    half = dims[:s] + [(dims[s] + 1) // 2, 1] + dims[s + 1:]
    concat = dims[:s] + [(dims[s] + 1) // 2, 2] + dims[s + 1:]
    return half, concat, s, s + 1


def combine(pair, dims, s, cd):
    if not dims:
        return pair[0].reshape(())
    r = np.concatenate(pair, axis=cd)
    rd = list(dims)
    rd[s] = (dims[s] + 1) // 2 * 2
    r = r.reshape(rd)
    return r[tuple(slice(0, d) for d in dims)]


def threefry_counters(state, dims):
    """GetThreeFryInputsAndUpdatedState: state + the row-major iota."""
    x = np.full(dims, state, dtype=U64)
    trailing = 1
    for i in range(len(dims) - 1, -1, -1):
        if dims[i] < 2:
            continue
        x = x + np.indices(dims, dtype=U64)[i] * U64(trailing)
        trailing *= dims[i]
    return x, U64(state) + U64(int(np.prod(dims, dtype=np.int64)))


def threefry_bits(key, ctr, dims, bits):
    k0, k1 = words(U64(key))
    if bits == 64:
        c, new = threefry_counters(ctr, dims)
        x0, x1 = threefry2x32(*words(c), k0, k1)
        return x0.astype(U64) | (x1.astype(U64) << U64(32)), new
    half, _, s, cd = split_shape(dims)
    c, new = threefry_counters(ctr, half)
    x0, x1 = threefry2x32(*words(c), k0, k1)
    return combine([x0, x1], dims, s, cd), new


def philox_bits(key, lo, hi, dims, bits):
    n = int(np.prod(dims, dtype=np.int64))
    k0, k1 = words(U64(key))
    nv = -(-(n * (2 if bits == 64 else 1)) // 4)
    iota = np.arange(nv, dtype=U64)
    new_lo = U64(lo) + iota
    new_hi = np.where(new_lo < U64(lo), U64(hi) + U64(1), U64(hi))
    w = philox4x32([*words(new_lo), *words(new_hi)], k0, k1)
    end_lo = U64(lo) + U64(nv)
    end_hi = U64(hi) + U64(1) if end_lo < U64(lo) else U64(hi)
    if bits == 64:
        cols = [w[0].astype(U64) | (w[1].astype(U64) << U64(32)), w[2].astype(U64) | (w[3].astype(U64) << U64(32))]
    else:
        cols = w
    flat = np.stack(cols, axis=1).reshape(-1)[:n]
    return flat.reshape(dims), (end_lo, end_hi)


def bit_generator(alg, state, dims, t):
    bits = 64 if t in ("u64", "s64") else 32
    key = state[0]
    if alg == "rng_three_fry":
        v, new = threefry_bits(key, state[1], dims, bits)
        new_state = [key, new]
    else:
        lo, hi = (state[1], state[2]) if len(state) == 3 else (state[1], state[0])
        v, (nlo, nhi) = philox_bits(key, lo, hi, dims, bits)
        new_state = [key, nlo, nhi][:len(state)]
    want = v.astype(INT_TYPES[t.replace("s", "u")]).view(INT_TYPES[t])
    return np.array(new_state, dtype=U64), want


def to_bf16(f):
    u = f.astype(np.float32).view(U32)
    return ((u + ((u >> U32(16)) & U32(1)) + U32(0x7FFF)) >> U32(16)).astype(np.uint16)


def uniform_f(bits, a, b, wide):
    if wide:
        return (bits >> U64(12)).astype(np.float64) * np.float64(2.0 ** -52) * (np.float64(b) - np.float64(a)) + np.float64(a)
    f32 = np.float32
    return (bits >> U32(9)).astype(f32) * f32(2.0 ** -23) * (f32(b) - f32(a)) + f32(a)


def rng_values(dist, t, a, b, dims):
    wide = t in ("f64", "s64", "u64")
    bits = 64 if wide else 32
    if dist == "rng_normal":
        half, concat, s, cd = split_shape(dims)
        u, _ = philox_bits(0, RNG_STATE0, 0, concat, bits)
        ft = np.float64 if wide else np.float32
        x = uniform_f(u, 0.0, 1.0, wide)
        x0 = x[tuple(slice(0, 1) if i == cd else slice(None) for i in range(len(concat)))]
        x1 = x[tuple(slice(1, 2) if i == cd else slice(None) for i in range(len(concat)))]
        u1 = np.maximum(x0, ft(np.float32(1.0e-7)))
        v1 = ft(np.float32(2.0 * np.pi) if not wide else 2.0 * np.pi) * x1
        u2 = np.sqrt(ft(-2.0) * np.log(u1))
        z = combine([np.sin(v1) * u2, np.cos(v1) * u2], dims, s, cd)
        r = ft(a) + ft(b) * z
    else:
        u, _ = philox_bits(0, RNG_STATE0, 0, dims, bits)
        if t in FLOAT_TYPES:
            r = uniform_f(u, a, b, wide)
        else:
            ut = U64 if wide else U32
            u = u.astype(ut)
            lo = np.array(a, dtype=INT_TYPES[t]).view(ut)
            rng_ = np.array(b, dtype=INT_TYPES[t]).view(ut) - lo
            dist_ = u % rng_ if rng_ else u
            return (lo + dist_).astype(ut).view(INT_TYPES[t])
    if t == "f16":
        return r.astype(np.float16)
    if t == "bf16":
        return to_bf16(r)
    return r


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    rank = rng.choice([0, 1, 1, 2, 2, 3, 4])
    dims = [rng.choice([1, 2, 3, 4, 5, 7, 8, 16, 0 if rng.random() < 0.05 else 6]) for _ in range(rank)]
    perm = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.3:
        rng.shuffle(perm)
    c = {"index": index, "dims": dims, "layout": perm, "engine": rng.choice(["fast", "reference"])}
    if rng.random() < 0.6:
        alg = rng.choice(["rng_three_fry", "rng_philox", "rng_default"])
        n = 2 if alg == "rng_three_fry" else rng.choice([2, 3])
        near = rng.random() < 0.3

        def word():
            return (2 ** 64 - rng.randint(1, 40)) if near and rng.random() < 0.7 else rng.getrandbits(64)

        c.update(op="bits", alg=alg, state=[word() for _ in range(n)], type=rng.choice(list(INT_TYPES)))
    else:
        dist = rng.choice(["rng_uniform", "rng_normal"])
        types = list(FLOAT_TYPES) + ([] if dist == "rng_normal" else ["s32", "u32", "s64", "u64"])
        t = rng.choice(types)
        if t in FLOAT_TYPES:
            a = rng.choice([0.0, -1.0, 2.5, -8.0])
            b = a + rng.choice([1.0, 0.5, 4.0, 100.0])
        elif t.startswith("u"):
            a = rng.choice([0, 3, 1000])
            b = a + rng.choice([1, 7, 1000, 2 ** 31, 0])
        else:
            a = rng.choice([-5, 0, -(2 ** 30)])
            b = a + rng.choice([1, 10, 2 ** 31 - 1, 0])
        c.update(op="rng", dist=dist, type=t, a=a, b=b)
    return c


def program(c):
    dims = ",".join(map(str, c["dims"]))
    lay = "{" + ",".join(map(str, c["layout"])) + "}" if c["dims"] else ""
    if c["op"] == "bits":
        n = len(c["state"])
        st = ", ".join(map(str, c["state"]))
        return ("HloModule bits_%d\n\nENTRY e {\n  s = u64[%d] constant({%s})\n"
                "  ROOT r = (u64[%d], %s[%s]%s) rng-bit-generator(s), algorithm=%s\n}\n" % (
                    c["index"], n, st, n, c["type"], dims, lay, c["alg"]))
    t = c["type"]
    return ("HloModule rng_%d\n\nENTRY e {\n  a = %s[] constant(%r)\n  b = %s[] constant(%r)\n"
            "  ROOT r = %s[%s]%s rng(a, b), distribution=%s\n}\n" % (
                c["index"], t, c["a"], t, c["b"], t, dims, lay, c["dist"]))


def check(c, got):
    dims = tuple(c["dims"])
    if not got:
        return "no result"
    if c["op"] == "bits":
        want_state, want = bit_generator(c["alg"], c["state"], list(dims), c["type"])
        if len(got) != 2:
            return "%d results" % len(got)
        if not np.array_equal(got[0], want_state):
            return "state %s, want %s" % (got[0], want_state)
        if got[1].shape != dims or not np.array_equal(got[1].view(want.dtype), want):
            return "bits\n%s\nwant\n%s" % (got[1], want)
        return None
    want = rng_values(c["dist"], c["type"], c["a"], c["b"], list(dims))
    g = got[0]
    if g.shape != dims:
        return "shape %s" % (g.shape,)
    if c["dist"] == "rng_uniform" or g.size == 0:
        if not np.array_equal(g.view(want.dtype), want):
            return "values\n%s\nwant\n%s" % (g, want)
        return None
    gf, wf = g.astype(np.float64), want.astype(np.float64)
    if c["type"] == "bf16":
        gf = (g.astype(np.uint32).reshape(-1) << 16).view(np.float32).astype(np.float64)
        wf = (want.astype(np.uint32).reshape(-1) << 16).view(np.float32).astype(np.float64)
    tol = {"f16": 2e-3, "bf16": 2e-2, "f32": 4e-6, "f64": 1e-13}[c["type"]]
    scale = max(1.0, abs(c["a"]) + abs(c["b"]) * 6)
    if not np.allclose(gf, wf, rtol=tol, atol=tol * scale):
        return "values\n%s\nwant\n%s" % (g, want)
    return None


def make(seed, index):
    c = gen_case(seed, index)
    c["program"] = program(c)
    c["inputs"] = []
    return c


if __name__ == "__main__":
    np.seterr(over="ignore")
    sys.exit(hloi_cases.main("numpy_rng", make, check, 400))

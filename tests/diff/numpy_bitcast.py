#!/usr/bin/python3
"""Differential test of hloi's bitcast-convert between element types of
different widths against NumPy's .view(): random arrays of random bits
(rank 0 to 3), a type of another width (1, 2, 4, 8 or 16 bytes: integers,
f16, f32, f64, c64, c128), parameter and result in random layouts, both
engines, run in one `hloi test` with .npy inputs and outputs. To a
narrower type the result gains a last dimension of the ratio of widths,
each wide element's bytes in memory order (little-endian); to a wider type
the last dimension, of that ratio, goes. The expected array is the C-order
bytes of the input viewed as the other type; results are compared bit for
bit.

usage: numpy_bitcast.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_bitcast: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

NP = {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "f16": np.float16,
      "s32": np.int32, "u32": np.uint32, "f32": np.float32, "s64": np.int64, "u64": np.uint64,
      "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
REAL = [t for t in NP if not t.startswith("c")]


def layout(rng, rank):
    if rank == 0:
        return ""  # `{}` after a scalar is not a layout
    perm = list(range(rank - 1, -1, -1))
    if rank > 1 and rng.random() < 0.5:
        rng.shuffle(perm)
    return "{" + ",".join(map(str, perm)) + "}"


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    if rng.random() < 0.1:
        a, b = "c64", "c128"
    else:
        a, b = rng.sample([t for t in REAL if NP[t]().itemsize != 8] + ["s64", "u64", "f64"], 2)
        while NP[a]().itemsize == NP[b]().itemsize:
            a, b = rng.sample(REAL, 2)
    if rng.random() < 0.5:
        a, b = b, a
    wa, wb = NP[a]().itemsize, NP[b]().itemsize
    dims = [rng.randint(0 if rng.random() < 0.05 else 1, 5) for _ in range(rng.randint(0, 3))]
    if wa < wb:
        dims.append(wb // wa)  # narrow to wide: the last dimension is the ratio
    out = dims + [wa // wb] if wa > wb else dims[:-1]
    nbytes = int(np.prod(dims, dtype=np.int64)) * wa
    raw = np.random.default_rng(index + 7 * seed).integers(0, 256, nbytes, dtype=np.uint8)
    x = raw.view(NP[a]).reshape(dims)
    return {"index": index, "in": a, "out": b, "dims": dims, "out_dims": out, "x": x,
            "want": raw.view(NP[b]).reshape(out), "engine": rng.choice(["fast", "reference"]),
            "lin": layout(rng, len(dims)), "lout": layout(rng, len(out))}


def program(c):
    return ("HloModule bitcast_%d\n\nENTRY e {\n  x = %s[%s]%s parameter(0)\n"
            "  ROOT b = %s[%s]%s bitcast-convert(x)\n}\n" % (
                c["index"], c["in"], ",".join(map(str, c["dims"])), c["lin"],
                c["out"], ",".join(map(str, c["out_dims"])), c["lout"]))


def check(c, got):
    want = c["want"]
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s%s, expected %s%s" % (got.dtype, list(got.shape), want.dtype, list(want.shape))
    g = np.ascontiguousarray(got).view(np.uint8)
    w = np.ascontiguousarray(want).view(np.uint8)
    if not np.array_equal(g, w):
        i = int(np.argwhere(g.reshape(-1) != w.reshape(-1))[0][0])
        return "byte %d differs: got %d, expected %d" % (i, g.reshape(-1)[i], w.reshape(-1)[i])
    return None


def case(seed, i):
    c = gen_case(seed, i)
    c["program"], c["inputs"] = program(c), [c["x"]]
    return c


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_bitcast", case, lambda c, got: check(c, got[0]) if got else "no result", 500))

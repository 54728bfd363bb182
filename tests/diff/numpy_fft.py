#!/usr/bin/python3
"""Differential test of hloi's fft against NumPy: random programs of FFT,
IFFT, RFFT and IRFFT over 1 to 3 innermost dimensions (lengths powers of
two and not, 1 and 0 included), batch dimensions in front, c64/c128 and
f32/f64, parameters in random layouts, both engines, run in one
`hloi test` with .npy inputs and outputs. Expected values: np.fft.fftn,
ifftn, rfftn and irfftn(s=fft_length) on the innermost axes (NumPy computes
in double). hloi computes in double too and rounds once, so a result agrees
within 2^-20 (32-bit types) or 2^-45 (64-bit) of the largest magnitude of
the expected array, plus a rounding of each element.

usage: numpy_fft.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_fft: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 32, 0]
NP = {"c64": np.complex64, "c128": np.complex128, "f32": np.float32, "f64": np.float64}
REAL_OF = {"c64": "f32", "c128": "f64"}
COMPLEX_OF = {"f32": "c64", "f64": "c128"}


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    kind = rng.choice(["FFT", "IFFT", "RFFT", "IRFFT"])
    wide = rng.random() < 0.5
    in_t = ("f64" if wide else "f32") if kind == "RFFT" else ("c128" if wide else "c64")
    k = rng.randint(1, 3)
    lengths = [rng.choice(LENGTHS if rng.random() < 0.1 else LENGTHS[:-1]) for _ in range(k)]
    batch = [rng.randint(1, 4) for _ in range(rng.randint(0, 2))]
    dims = batch + lengths
    if kind == "IRFFT":
        dims = batch + lengths[:-1] + [lengths[-1] // 2 + 1]
    out_t = {"FFT": in_t, "IFFT": in_t, "RFFT": COMPLEX_OF.get(in_t), "IRFFT": REAL_OF.get(in_t)}[kind]
    shape = tuple(dims)
    x = np.random.default_rng(index + 7 * seed).standard_normal(shape)
    if in_t.startswith("c"):
        x = x + 1j * np.random.default_rng(index + 13 * seed).standard_normal(shape)
    x = x.astype(NP[in_t])
    perm = list(range(len(dims) - 1, -1, -1))
    if len(dims) > 1 and rng.random() < 0.5:
        rng.shuffle(perm)
    return {"index": index, "kind": kind, "in": in_t, "out": out_t, "lengths": lengths, "dims": dims, "x": x,
            "layout": perm, "engine": rng.choice(["fast", "reference"])}


def program(c):
    lay = "{" + ",".join(str(d) for d in c["layout"]) + "}"
    return ("HloModule fft_%d\n\nENTRY e {\n  x = %s[%s]%s parameter(0)\n"
            "  ROOT f = fft(x), fft_type=%s, fft_length={%s}\n}\n" % (
                c["index"], c["in"], ",".join(map(str, c["dims"])), lay, c["kind"],
                ",".join(map(str, c["lengths"]))))


def expected(c):
    x = c["x"].astype(np.complex128 if c["in"].startswith("c") else np.float64)
    k = len(c["lengths"])
    axes = list(range(x.ndim - k, x.ndim))
    if 0 in c["lengths"] or x.size == 0:
        return None  # only the shape is checked
    if c["kind"] == "FFT":
        return np.fft.fftn(x, axes=axes)
    if c["kind"] == "IFFT":
        return np.fft.ifftn(x, axes=axes)
    if c["kind"] == "RFFT":
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=c["lengths"], axes=axes)


def out_dims(c):
    d = c["dims"][:]
    n = c["lengths"][-1]
    if c["kind"] == "RFFT" and n:
        d[-1] = n // 2 + 1
    if c["kind"] == "IRFFT":
        d[-1] = n
    return d


def check(c, got):
    if got.dtype != NP[c["out"]] or list(got.shape) != out_dims(c):
        return "got %s%s, expected %s%s" % (got.dtype, list(got.shape), c["out"], out_dims(c))
    want = expected(c)
    if want is None:
        return None
    eps = 2.0 ** -20 if c["out"] in ("c64", "f32") else 2.0 ** -45
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = np.abs(got.astype(want.dtype) - want)
    bad = err > eps * scale + 4 * np.finfo(NP[c["out"]]).eps * np.abs(want)
    if np.any(bad):
        i = tuple(np.argwhere(bad)[0])
        return "at %s: got %r, expected %r (scale %g)" % (i, got[i], want[i], scale)
    return None


def case(seed, i):
    c = gen_case(seed, i)
    c["program"], c["inputs"] = program(c), [c["x"]]
    return c


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_fft", case, lambda c, got: check(c, got[0]), 1000))

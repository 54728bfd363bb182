#!/usr/bin/python3
"""Differential test of hloi's cholesky and triangular-solve against NumPy:
random batched problems in f32, f64, c64 and c128, both engines, operands
in random layouts.

- cholesky: a Hermitian positive definite a (its other triangle filled
  with garbage, which must not be read), lower and upper, against
  np.linalg.cholesky; the other triangle of the result must be zero.
- triangular-solve: a well-conditioned triangular a (garbage in the other
  triangle, on the diagonal too with unit_diagonal), left and right sides,
  NO_TRANSPOSE, TRANSPOSE and ADJOINT, against np.linalg.solve on op(a).
hloi computes in double and rounds once; results agree within 1e-4 (32-bit
types) or 1e-10 (64-bit) of the largest magnitude of the expected array.

usage: numpy_linalg.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_linalg: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

NP = hloi_cases.LINALG_TYPES

rand = hloi_cases.rand


def layout(rng, rank):
    perm = list(range(rank - 1, -1, -1))
    if rng.random() < 0.4:
        rng.shuffle(perm)
    return "{" + ",".join(map(str, perm)) + "}"


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    t = rng.choice(list(NP))
    batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    m = rng.choice([1, 2, 3, 4, 5, 8, 13])
    lower = rng.random() < 0.5
    c = {"index": index, "type": t, "engine": rng.choice(["fast", "reference"]), "lower": lower}
    eye = np.eye(m)
    tri = np.tril if lower else np.triu
    other = np.triu if lower else np.tril
    garbage = other(rand(g, batch + [m, m], t), 1 if lower else -1) * 100
    if rng.random() < 0.5:
        c["op"] = "cholesky"
        z = rand(g, batch + [m, m], t)
        a = z @ np.conj(np.swapaxes(z, -1, -2)) + m * eye  # Hermitian positive definite
        c["a"] = a
        x = tri(a) + garbage
        c["inputs"] = [x.astype(NP[t])]
        c["program"] = ("HloModule chol_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                        "  ROOT l = cholesky(a), lower=%s\n}\n" % (
                            index, t, ",".join(map(str, batch + [m, m])), layout(rng, len(batch) + 2),
                            "true" if lower else "false"))
        return c
    c["op"] = "triangular-solve"
    left = rng.random() < 0.5
    unit = rng.random() < 0.3
    trans = rng.choice(["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])
    k = rng.choice([1, 2, 3, 7])
    a = tri(rand(g, batch + [m, m], t)) * 0.3 + 2 * eye
    if unit:
        a = a - np.diagonal(a, axis1=-2, axis2=-1)[..., None] * eye + eye
    written = a + garbage
    if unit:
        written = written + 5 * eye  # the diagonal must not be read
    b = rand(g, batch + ([m, k] if left else [k, m]), t)
    c.update(left=left, unit=unit, trans=trans, a=a, b=b)
    c["inputs"] = [written.astype(NP[t]), b.astype(NP[t])]
    c["program"] = ("HloModule ts_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n  b = %s[%s]%s parameter(1)\n"
                    "  ROOT x = triangular-solve(a, b), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s\n}\n"
                    % (index, t, ",".join(map(str, batch + [m, m])), layout(rng, len(batch) + 2), t,
                       ",".join(map(str, b.shape)), layout(rng, len(batch) + 2), str(left).lower(),
                       str(lower).lower(), str(unit).lower(), trans))
    return c


def expected(c):
    a = c["a"].astype(NP[c["type"]]).astype(np.complex128)
    if c["op"] == "cholesky":
        l = np.linalg.cholesky(a)
        return l if c["lower"] else np.conj(np.swapaxes(l, -1, -2))
    op = {"NO_TRANSPOSE": a, "TRANSPOSE": np.swapaxes(a, -1, -2),
          "ADJOINT": np.conj(np.swapaxes(a, -1, -2))}[c["trans"]]
    b = c["b"].astype(NP[c["type"]]).astype(np.complex128)
    if c["left"]:
        return np.linalg.solve(op, b)
    # x op = b  <=>  op^T x^T = b^T
    return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def check(c, got):
    got = got[0]
    want = expected(c)
    if got.dtype != NP[c["type"]] or got.shape != want.shape:
        return "got %s%s, expected %s%s" % (got.dtype, got.shape, c["type"], want.shape)
    if not c["type"].startswith("c"):
        want = want.real
    tol = 1e-4 if c["type"] in ("f32", "c64") else 1e-10
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = np.abs(got - want)
    if np.any(err > tol * scale):
        i = tuple(np.argwhere(err > tol * scale)[0])
        return "%s at %s: got %r, expected %r" % (c["op"], i, got[i], want[i])
    return None


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_linalg", gen_case, check, 600))

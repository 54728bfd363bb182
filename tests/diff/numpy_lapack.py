#!/usr/bin/python3
"""Differential test of hloi's built-in custom-call targets against NumPy:
random batched problems, both engines, operands in random layouts.

- TopK (XLA's): f32, f64 and s32 rows with repeated values; values and
  indices must equal those of a stable argsort of the negated rows.
- lapack_?getrf_ffi (f32, f64, c64, c128, square and rectangular): p l u
  rebuilt from lu and the 1-based ipiv must give a, ipiv within its
  range, |l| <= 1 (partial pivoting; sqrt(2) for complex types, whose
  pivots LAPACK picks by |re| + |im|), info 0.
- lapack_?potrf_ffi, uplo L and U: the triangle against np.linalg.cholesky
  of a Hermitian positive definite a; the other triangle the operand's;
  info 0.
- lapack_?geqp3_ffi then ?orgqr / ?ungqr: jpvt a permutation with a marked
  column first, q r = a p, q^H q = 1, |diag r| falling when none is marked
- lapack_?geqrf_ffi then lapack_?orgqr_ffi / ?ungqr (m >= n): q r = a with
  r upper triangular and q's columns orthonormal, against |r| of
  np.linalg.qr (the diagonal's signs may differ).
- lapack_?geqrf_ffi then lapack_?ormqr_ffi / ?unmqr, every left and
  transpose: against q c, q^H c, c q or c q^H with q (m x m) the product
  of geqrf's reflectors and tau, for any m and n and c of random width.
- lapack_?syevd_ffi / ?heevd, uplo L and U: the eigenvalues against
  np.linalg.eigvalsh, a v = v diag(w) and v^H v = 1; info 0.
- lapack_?gesdd_ffi and lapack_?gesvd_ffi, modes A, S and N: the singular values against
  np.linalg.svd, u diag(s) vt = a, u and vt with orthonormal columns and
  rows; info 0.
- lapack_?trsm_ffi, every side, uplo, trans_x and diag, with and without
  alpha: against np.linalg.solve on op(a) (garbage in the unread triangle).
- lapack_?geev_ffi, with and without each side's vectors: the eigenvalues
  against np.linalg.eigvals (each matched to its nearest), a vr = vr
  diag(w), vl^H a = diag(w) vl^H, columns of norm 1; zeros for vectors not
  asked for; info 0.
- lapack_?gees_ffi, modes V and N: vs t vs^H = a with vs unitary, t upper
  triangular (real types: quasi-triangular, 2x2 blocks for complex pairs),
  its eigenvalues (w, or wr + i wi) against np.linalg.eigvals; sdim and
  info 0.
- lapack_?gehrd_ffi (low 1, high n, as JAX writes): q h q^H = a with q the
  product of the reflectors below the subdiagonal and tau; info 0.
- lapack_?sytrd_ffi / ?hetrd, uplo L and U: q tridiag(e, d, e) q^H = a
  with q from the reflectors in the uplo triangle and tau; info 0.
- lapack_?gtsv_ffi: x against np.linalg.solve on the dense tridiagonal
  matrix; dl's first and du's last element given back; info 0.
Agreement within 1e-4 (32-bit types) or 1e-10 (64-bit) of the largest
magnitude of the expected array.

usage: numpy_lapack.py HLOI [--cases N] [--seed S] [--jobs J] [--keep DIR]
Exits 77 (ctest's skip) when NumPy is missing, 1 on a mismatch.
"""
import random
import sys

try:
    import numpy as np
except ImportError:
    print("numpy_lapack: NumPy is not installed; skipped")
    sys.exit(77)

import hloi_cases

NP = hloi_cases.LINALG_TYPES
LETTER = {"f32": "s", "f64": "d", "c64": "c", "c128": "z"}

rand = hloi_cases.rand


def layout(rng, rank):
    perm = list(range(rank - 1, -1, -1))
    r = rng.random()
    if r < 0.3:
        rng.shuffle(perm)
    elif r < 0.6 and rank >= 2:  # JAX's: the matrix column-major
        perm = [rank - 2, rank - 1] + list(range(rank - 3, -1, -1))
    return "{" + ",".join(map(str, perm)) + "}"


def dims(shape):
    return ",".join(map(str, shape))


def gen_case(seed, index):
    rng = random.Random(seed * 1000003 + index)
    g = np.random.default_rng(seed * 7919 + index)
    batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    c = {"index": index, "engine": rng.choice(["fast", "reference"])}
    op = rng.choice(["topk", "getrf", "potrf", "qr", "qp3", "eigh", "trsm", "svd", "geev", "gees", "gehrd", "sytrd",
                     "gtsv", "ormqr"])
    c["op"] = op
    if op == "topk":
        t = rng.choice(["f32", "f64", "s32"])
        n = rng.choice([1, 2, 5, 16, 33])
        k = rng.randint(0, n)
        x = g.integers(-5, 6, batch + [n]) if rng.random() < 0.5 else g.standard_normal(batch + [n])
        x = x.astype({"f32": np.float32, "f64": np.float64, "s32": np.int32}[t])
        c.update(type=t, k=k, inputs=[x])
        r = dims(batch + [k])
        c["program"] = ("HloModule topk_%d\nENTRY e {\n  x = %s[%s]%s parameter(0)\n"
                        "  ROOT t = (%s[%s], s32[%s]) custom-call(x), custom_call_target=\"TopK\"\n}\n" % (
                            index, t, dims(x.shape), layout(rng, x.ndim), t, r, r))
        return c
    t = rng.choice(list(NP))
    c["type"] = t
    if op == "getrf":
        m, n = rng.choice([1, 2, 3, 5, 8]), rng.choice([1, 2, 3, 5, 8])
        a = rand(g, batch + [m, n], t).astype(NP[t])
        k = min(m, n)
        c["inputs"] = [a]
        c["program"] = ("HloModule getrf_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                        "  ROOT r = (%s[%s]%s, s32[%s], s32[%s]) custom-call(a), custom_call_target=\"lapack_%sgetrf_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n}\n" % (
                            index, t, dims(a.shape), layout(rng, a.ndim), t, dims(a.shape), layout(rng, a.ndim),
                            dims(batch + [k]), dims(batch), LETTER[t]))
        return c
    if op == "svd":
        m, n = rng.choice([1, 2, 3, 5, 8]), rng.choice([1, 2, 3, 5, 8])
        k = min(m, n)
        mode = rng.choice("ASN")
        a = rand(g, batch + [m, n], t).astype(NP[t])
        real = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}[t]
        uc, vr = (m, n) if mode == "A" else (k, k)
        c.update(mode=mode, inputs=[a])
        c["program"] = ("HloModule svd_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                        "  r = (%s[%s], %s[%s], %s[%s]%s, %s[%s]%s, s32[%s]) custom-call(a), "
                        "custom_call_target=\"lapack_%s%s_ffi\", api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={mode = %d : ui8}\n"
                        "  s = %s[%s] get-tuple-element(r), index=1\n  u = %s[%s] get-tuple-element(r), index=2\n"
                        "  vt = %s[%s] get-tuple-element(r), index=3\n  i = s32[%s] get-tuple-element(r), index=4\n"
                        "  ROOT o = tuple(s, u, vt, i)\n}\n" % (
                            index, t, dims(a.shape), layout(rng, a.ndim), t, dims(a.shape), real, dims(batch + [k]),
                            t, dims(batch + [m, uc]), layout(rng, a.ndim), t, dims(batch + [vr, n]),
                            layout(rng, a.ndim), dims(batch), LETTER[t], rng.choice(["gesdd", "gesvd"]), ord(mode),
                            real, dims(batch + [k]), t,
                            dims(batch + [m, uc]), t, dims(batch + [vr, n]), dims(batch)))
        return c
    if op in ("geev", "gees", "gehrd", "sytrd"):
        return gen_square(c, rng, g, batch, t, op)
    if op == "gtsv":
        m, k = rng.choice([1, 2, 3, 5, 8]), rng.choice([0, 1, 2, 4])
        dl, d, du = rand(g, batch + [m], t), rand(g, batch + [m], t) + 4, rand(g, batch + [m], t)
        b = rand(g, batch + [m, k], t)
        c["inputs"] = [x.astype(NP[t]) for x in (dl, d, du, b)]
        v, bs = "%s[%s]" % (t, dims(batch + [m])), "%s[%s]" % (t, dims(batch + [m, k]))
        c["program"] = ("HloModule gtsv_%d\nENTRY e {\n  dl = %s parameter(0)\n  d = %s parameter(1)\n"
                        "  du = %s parameter(2)\n  b = %s%s parameter(3)\n"
                        "  ROOT r = (%s, %s, %s, %s%s, s32[%s]) custom-call(dl, d, du, b), "
                        "custom_call_target=\"lapack_%sgtsv_ffi\", api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={}\n}\n" % (index, v, v, v, bs, layout(rng, b.ndim), v, v, v, bs,
                                                   layout(rng, b.ndim), dims(batch), LETTER[t]))
        return c
    if op == "qr":
        n = rng.choice([1, 2, 3, 5])
        m = n + rng.choice([0, 0, 1, 3])
        a = rand(g, batch + [m, n], t).astype(NP[t])
        q = "ung" if t.startswith("c") else "org"
        c["inputs"] = [a]
        c["program"] = ("HloModule qr_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                        "  f = (%s[%s], %s[%s]) custom-call(a), custom_call_target=\"lapack_%sgeqrf_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n"
                        "  v = %s[%s] get-tuple-element(f), index=0\n  tau = %s[%s] get-tuple-element(f), index=1\n"
                        "  q = %s[%s]%s custom-call(v, tau), custom_call_target=\"lapack_%s%sqr_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n  ROOT r = tuple(v, q)\n}\n" % (
                            index, t, dims(a.shape), layout(rng, a.ndim), t, dims(a.shape), t, dims(batch + [n]),
                            LETTER[t], t, dims(a.shape), t, dims(batch + [n]), t, dims(a.shape),
                            layout(rng, a.ndim), LETTER[t], q))
        return c
    if op == "ormqr":
        m, n, p = rng.choice([1, 2, 3, 5]), rng.choice([1, 2, 3, 5]), rng.choice([0, 1, 2, 4])
        left, tr = rng.random() < 0.5, rng.random() < 0.5
        a = rand(g, batch + [m, n], t).astype(NP[t])
        cm = rand(g, batch + ([m, p] if left else [p, m]), t).astype(NP[t])
        k = min(m, n)
        c.update(inputs=[a, cm], left=left, transpose=tr)
        c["program"] = ("HloModule ormqr_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n  c = %s[%s]%s parameter(1)\n"
                        "  f = (%s[%s], %s[%s]) custom-call(a), custom_call_target=\"lapack_%sgeqrf_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n"
                        "  v = %s[%s] get-tuple-element(f), index=0\n  tau = %s[%s] get-tuple-element(f), index=1\n"
                        "  o = %s[%s]%s custom-call(v, tau, c), custom_call_target=\"lapack_%s%smqr_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI, backend_config={left = %s, transpose = %s}\n"
                        "  ROOT r = tuple(v, tau, o)\n}\n" % (
                            index, t, dims(a.shape), layout(rng, a.ndim), t, dims(cm.shape), layout(rng, cm.ndim),
                            t, dims(a.shape), t, dims(batch + [k]), LETTER[t], t, dims(a.shape), t,
                            dims(batch + [k]), t, dims(cm.shape), layout(rng, cm.ndim), LETTER[t],
                            "un" if t.startswith("c") else "or", str(left).lower(), str(tr).lower()))
        return c
    if op == "qp3":
        n = rng.choice([1, 2, 3, 5])
        m = n + rng.choice([0, 0, 1, 3])
        a = rand(g, batch + [m, n], t).astype(NP[t])
        # jpvt in: a nonzero entry moves that column to the front first
        jp = np.zeros(batch + [n], np.int32)
        if rng.random() < 0.3:
            jp[..., rng.randrange(n)] = 1
        q = "ung" if t.startswith("c") else "org"
        c["inputs"] = [a, jp]
        c["program"] = ("HloModule qp3_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n  j = s32[%s] parameter(1)\n"
                        "  f = (%s[%s], s32[%s], %s[%s]) custom-call(a, j), custom_call_target=\"lapack_%sgeqp3_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n"
                        "  v = %s[%s] get-tuple-element(f), index=0\n  p = s32[%s] get-tuple-element(f), index=1\n"
                        "  tau = %s[%s] get-tuple-element(f), index=2\n"
                        "  q = %s[%s]%s custom-call(v, tau), custom_call_target=\"lapack_%s%sqr_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI\n  ROOT r = tuple(v, p, q)\n}\n" % (
                            index, t, dims(a.shape), layout(rng, a.ndim), dims(batch + [n]),
                            t, dims(a.shape), dims(batch + [n]), t, dims(batch + [n]), LETTER[t],
                            t, dims(a.shape), dims(batch + [n]), t, dims(batch + [n]), t, dims(a.shape),
                            layout(rng, a.ndim), LETTER[t], q))
        return c
    n = rng.choice([1, 2, 3, 5, 8, 13])
    lower = rng.random() < 0.5
    if op == "trsm":
        left, unit = rng.random() < 0.5, rng.random() < 0.3
        trans = rng.choice("NTC")
        k = rng.choice([1, 2, 3, 7])
        eye = np.eye(n)
        a = (np.tril if lower else np.triu)(rand(g, batch + [n, n], t)) * 0.3 + 2 * eye
        if unit:
            a = a - np.diagonal(a, axis1=-2, axis2=-1)[..., None] * eye + eye
        garbage = (np.triu(rand(g, batch + [n, n], t), 1) if lower else np.tril(rand(g, batch + [n, n], t), -1))
        written = a + 100 * garbage + (5 * eye if unit else 0)
        b = rand(g, batch + ([n, k] if left else [k, n]), t)
        alpha = rng.choice([None, 0.5, -2.0])
        c.update(lower=lower, a=a, b=b, left=left, trans=trans, alpha=alpha)
        c["inputs"] = [written.astype(NP[t]), b.astype(NP[t])]
        third = ""
        if alpha is not None:
            c["inputs"].append(np.array(alpha, dtype=NP[t]))
            third = "  al = %s[] parameter(2)\n" % t
        c["program"] = ("HloModule trsm_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n  b = %s[%s]%s parameter(1)\n%s"
                        "  ROOT x = %s[%s]%s custom-call(a, b%s), custom_call_target=\"lapack_%strsm_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI, backend_config={diag = %d : ui8, side = %d : ui8, "
                        "trans_x = %d : ui8, uplo = %d : ui8}\n}\n" % (
                            index, t, dims(written.shape), layout(rng, written.ndim), t, dims(b.shape),
                            layout(rng, b.ndim), third, t, dims(b.shape), layout(rng, b.ndim),
                            ", al" if alpha is not None else "", LETTER[t], ord("U" if unit else "N"),
                            ord("L" if left else "R"), ord(trans), ord("L" if lower else "U")))
        return c
    if op == "eigh":
        z = rand(g, batch + [n, n], t)
        a = (z + np.conj(np.swapaxes(z, -1, -2))) / 2
        garbage = np.triu(rand(g, batch + [n, n], t), 1) if lower else np.tril(rand(g, batch + [n, n], t), -1)
        written = (np.tril(a) if lower else np.triu(a)) + 100 * garbage
        real = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}[t]
        c.update(lower=lower, a=a, inputs=[written.astype(NP[t])])
        c["program"] = ("HloModule eigh_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                        "  ROOT r = (%s[%s]%s, %s[%s], s32[%s]) custom-call(a), custom_call_target=\"lapack_%s_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = %d : ui8}\n}\n" % (
                            index, t, dims(written.shape), layout(rng, written.ndim), t, dims(written.shape),
                            layout(rng, written.ndim), real, dims(batch + [n]), dims(batch),
                            LETTER[t] + ("heevd" if t.startswith("c") else "syevd"), 76 if lower else 85))
        return c
    z = rand(g, batch + [n, n], t)
    a = z @ np.conj(np.swapaxes(z, -1, -2)) + n * np.eye(n)
    other = np.triu(rand(g, batch + [n, n], t), 1) if lower else np.tril(rand(g, batch + [n, n], t), -1)
    written = (np.tril(a) if lower else np.triu(a)) + 100 * other
    c.update(lower=lower, a=a, inputs=[written.astype(NP[t])])
    c["program"] = ("HloModule potrf_%d\nENTRY e {\n  a = %s[%s]%s parameter(0)\n"
                    "  ROOT r = (%s[%s], s32[%s]) custom-call(a), custom_call_target=\"lapack_%spotrf_ffi\", "
                    "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = %d : ui8}\n}\n" % (
                        index, t, dims(written.shape), layout(rng, written.ndim), t, dims(written.shape),
                        dims(batch), LETTER[t], 76 if lower else 85))
    return c


REAL = {"f32": "f32", "f64": "f64", "c64": "f32", "c128": "f64"}
CPLX = {"f32": "c64", "f64": "c128", "c64": "c64", "c128": "c128"}


def gen_square(c, rng, g, batch, t, op):
    """geev, gees, gehrd and sytrd / hetrd of a random batch of n x n."""
    n = rng.choice([1, 2, 3, 5, 8])
    a = rand(g, batch + [n, n], t)
    cplx = t.startswith("c")
    mat, vec, info = "%s[%s]" % (t, dims(a.shape)), "%s[%s]" % (t, dims(batch + [n])), "s32[%s]" % dims(batch)
    lay = layout(rng, a.ndim)
    if op == "geev":
        left, right = rng.choice("VN"), rng.choice("VN")
        vecs = "%s[%s]" % (CPLX[t], dims(a.shape))
        res = ([vec] if cplx else [vec, vec]) + [vecs + lay, vecs, info]
        config = "compute_left = %d : ui8, compute_right = %d : ui8" % (ord(left), ord(right))
        c.update(left=left, right=right)
        target = "geev"
    elif op == "gees":
        mode = rng.choice("VVN")
        res = [mat + lay, mat] + ([vec] if cplx else [vec, vec]) + ["s32[%s]" % dims(batch), info]
        config = "mode = %d : ui8, sort = 78 : ui8" % ord(mode)
        c["mode"] = mode
        target = "gees"
    elif op == "gehrd":
        res = [mat + lay, "%s[%s]" % (t, dims(batch + [n - 1])), info]
        config = "high = %d : i32, low = 1 : i32" % n
        target = "gehrd"
    else:
        lower = rng.random() < 0.5
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
        c.update(lower=lower, a=a)
        garbage = np.triu(rand(g, batch + [n, n], t), 1) if lower else np.tril(rand(g, batch + [n, n], t), -1)
        a = (np.tril(a) if lower else np.triu(a)) + 100 * garbage
        r = REAL[t]
        res = [mat + lay, "%s[%s]" % (r, dims(batch + [n])), "%s[%s]" % (r, dims(batch + [n - 1])),
               "%s[%s]" % (t, dims(batch + [n - 1])), info]
        config = "uplo = %d : ui8" % (76 if lower else 85)
        target = "hetrd" if cplx else "sytrd"
    c["inputs"] = [a.astype(NP[t])]
    c["program"] = ("HloModule %s_%d\nENTRY e {\n  a = %s%s parameter(0)\n"
                    "  ROOT r = (%s) custom-call(a), custom_call_target=\"lapack_%s%s_ffi\", "
                    "api_version=API_VERSION_TYPED_FFI, backend_config={%s}\n}\n" % (
                        op, c["index"], mat, layout(rng, a.ndim), ", ".join(res), LETTER[t], target, config))
    return c


def close(c, got, want, what):
    tol = 1e-4 if c["type"] in ("f32", "c64") else 1e-10
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    err = np.abs(got - want)
    if np.any(err > tol * scale):
        i = tuple(np.argwhere(err > tol * scale)[0])
        return "%s at %s: got %r, expected %r" % (what, i, got[i], want[i])
    return None


def check_topk(c, got):
    x = c["inputs"][0]
    order = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :c["k"]]
    vals = np.take_along_axis(x, order, axis=-1)
    if len(got) != 2 or got[0].shape != vals.shape or got[1].dtype != np.int32:
        return "got %s, expected values %s and s32 indices" % ([g.shape for g in got], vals.shape)
    if not np.array_equal(got[0], vals) or not np.array_equal(got[1], order):
        return "got %r %r, expected %r %r" % (got[0], got[1], vals, order)
    return None


def check_getrf(c, got):
    a = c["inputs"][0].astype(np.complex128)
    if len(got) != 3 or got[0].shape != a.shape or got[0].dtype != NP[c["type"]]:
        return "got %s, expected lu %s, ipiv, info" % ([g.shape for g in got], a.shape)
    lu, ipiv, info = got[0].astype(np.complex128), got[1], got[2]
    if np.any(info != 0):
        return "info %r, expected 0" % info
    m, n = a.shape[-2:]
    k = min(m, n)
    for b in np.ndindex(*a.shape[:-2]):
        l = np.tril(lu[b], -1)[:, :k] + np.eye(m, k)
        u = np.triu(lu[b])[:k, :]
        perm = list(range(m))
        for i in range(k):
            p = int(ipiv[b][i]) - 1
            if p < i or p >= m:
                return "ipiv %r out of range at %s" % (ipiv[b], b)
            perm[i], perm[p] = perm[p], perm[i]
        # LAPACK picks the pivot of the largest |x|, or |re| + |im| for
        # complex types, which bounds |l| by sqrt(2)
        bound = np.sqrt(2) if c["type"].startswith("c") else 1
        if np.any(np.abs(l) > bound + 1e-6):
            return "|l| > 1 at %s: not partial pivoting" % (b,)
        why = close(c, (l @ u), a[b][perm, :], "p l u - a at batch %s" % (b,))
        if why:
            return why
    return None


def check_potrf(c, got):
    a = c["a"].astype(NP[c["type"]]).astype(np.complex128)
    x = c["inputs"][0]
    if len(got) != 2 or got[0].shape != x.shape:
        return "got %s, expected the factor %s and info" % ([g.shape for g in got], x.shape)
    if np.any(got[1] != 0):
        return "info %r, expected 0" % got[1]
    l = np.linalg.cholesky(a)
    want = l if c["lower"] else np.conj(np.swapaxes(l, -1, -2))
    tri, other = (np.tril, lambda v: np.triu(v, 1)) if c["lower"] else (np.triu, lambda v: np.tril(v, -1))
    if not c["type"].startswith("c"):
        want = want.real
    why = close(c, tri(got[0]), want, "factor")
    if why:
        return why
    if not np.array_equal(other(got[0]), other(x)):
        return "the other triangle is not the operand's"
    return None


def check_qr(c, got):
    a = c["inputs"][0].astype(np.complex128)
    if len(got) != 2 or got[0].shape != a.shape or got[1].shape != a.shape:
        return "got %s, expected two arrays %s" % ([g.shape for g in got], a.shape)
    r = np.triu(got[0].astype(np.complex128)[..., :a.shape[-1], :])
    why = q_times_r(c, got[1], r, a, "a")
    return why or close(c, np.abs(r), np.abs(np.linalg.qr(a)[1]), "|r| against np.linalg.qr")


def q_times_r(c, q, r, want, what):
    """Why q r is not `want` or q is not unitary, or None."""
    q = q.astype(np.complex128)
    n = r.shape[-1]
    why = close(c, q @ r, want, "q r - " + what)
    if why:
        return why
    eye = np.broadcast_to(np.eye(n), q.shape[:-2] + (n, n))
    return close(c, np.conj(np.swapaxes(q, -1, -2)) @ q, eye, "q^H q - 1")


def check_qp3(c, got):
    a, jin = c["inputs"][0].astype(np.complex128), c["inputs"][1]
    if len(got) != 3 or got[0].shape != a.shape or got[1].shape != jin.shape or got[2].shape != a.shape:
        return "got %s, expected %s, %s and %s" % ([g.shape for g in got], a.shape, jin.shape, a.shape)
    n = a.shape[-1]
    perm = got[1].astype(np.int64) - 1
    if not (np.sort(perm, axis=-1) == np.arange(n)).all():
        return "jpvt %s is not a permutation of 1..%d" % (got[1].tolist(), n)
    # a column marked in jpvt comes first
    marked = jin != 0
    if marked.any() and not (np.take_along_axis(marked, perm[..., :1], -1)).all():
        return "the marked column is not first: jpvt %s" % got[1].tolist()
    ap = np.take_along_axis(a, np.broadcast_to(perm[..., None, :], a.shape), -1)
    r = np.triu(got[0].astype(np.complex128)[..., :n, :])
    why = q_times_r(c, got[2], r, ap, "a p")
    if why:
        return why
    if not marked.any():
        # pivoting puts the largest remaining column first: |r_ii| falls
        d = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
        tol = 1e-3 if c["type"] in ("f32", "c64") else 1e-9
        if (d[..., 1:] > d[..., :-1] * (1 + tol) + tol).any():
            return "|diag r| %s does not fall" % d.tolist()
    return None


def check_eigh(c, got):
    a = c["a"].astype(NP[c["type"]]).astype(np.complex128)
    if len(got) != 3 or got[0].shape != a.shape or got[1].shape != a.shape[:-1]:
        return "got %s, expected vectors %s, values, info" % ([g.shape for g in got], a.shape)
    if np.any(got[2] != 0):
        return "info %r, expected 0" % got[2]
    v, w = got[0].astype(np.complex128), got[1].astype(np.float64)
    why = close(c, w, np.linalg.eigvalsh(a), "eigenvalues")
    if why:
        return why
    why = close(c, a @ v, v * w[..., None, :], "a v - v diag(w)")
    if why:
        return why
    n = a.shape[-1]
    return close(c, np.conj(np.swapaxes(v, -1, -2)) @ v, np.broadcast_to(np.eye(n), a.shape), "v^H v - 1")


def check_trsm(c, got):
    a = c["a"].astype(NP[c["type"]]).astype(np.complex128)
    b = c["b"].astype(NP[c["type"]]).astype(np.complex128)
    if c["alpha"] is not None:
        b = b * c["alpha"]
    op = {"N": a, "T": np.swapaxes(a, -1, -2), "C": np.conj(np.swapaxes(a, -1, -2))}[c["trans"]]
    if c["left"]:
        want = np.linalg.solve(op, b)
    else:
        want = np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    got = got[0]
    if got.shape != want.shape or got.dtype != NP[c["type"]]:
        return "got %s%s, expected %s%s" % (got.dtype, got.shape, c["type"], want.shape)
    return close(c, got.astype(np.complex128), want, "x")


def check_svd(c, got):
    a = c["inputs"][0].astype(np.complex128)
    if len(got) != 4:
        return "got %d results, expected s, u, vt, info" % len(got)
    s, u, vt, info = got[0].astype(np.float64), got[1].astype(np.complex128), got[2].astype(np.complex128), got[3]
    if np.any(info != 0):
        return "info %r, expected 0" % info
    why = close(c, s, np.linalg.svd(a, compute_uv=False), "singular values")
    if why or c["mode"] == "N":
        return why or (None if not np.any(u) and not np.any(vt) else "u and vt not zero in mode N")
    k = s.shape[-1]
    why = close(c, (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, "u diag(s) vt - a")
    if why:
        return why
    eye_u = np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2)
    eye_v = np.broadcast_to(np.eye(vt.shape[-2]), vt.shape[:-2] + (vt.shape[-2],) * 2)
    return (close(c, np.conj(np.swapaxes(u, -1, -2)) @ u, eye_u, "u^H u - 1")
            or close(c, vt @ np.conj(np.swapaxes(vt, -1, -2)), eye_v, "vt vt^H - 1"))


def match_values(c, w, a):
    """The eigenvalues w of each matrix of a against np.linalg.eigvals,
    each matched to its nearest."""
    want = np.linalg.eigvals(a)
    for b in np.ndindex(*a.shape[:-2]):
        left = list(w[b])
        for x in want[b]:
            i = int(np.argmin([abs(x - y) for y in left]))
            why = close(c, np.array([left.pop(i)]), np.array([x]), "eigenvalue of batch %s" % (b,))
            if why:
                return why
    return None


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def unitary(c, q, what):
    n = q.shape[-1]
    return close(c, adjoint(q) @ q, np.broadcast_to(np.eye(n), q.shape), what + "^H " + what + " - 1")


def check_geev(c, got):
    a = c["inputs"][0].astype(np.complex128)
    cplx = c["type"].startswith("c")
    if len(got) != (4 if cplx else 5):
        return "got %d results" % len(got)
    if np.any(got[-1] != 0):
        return "info %r, expected 0" % got[-1]
    w = got[0].astype(np.complex128) if cplx else got[0] + 1j * got[1].astype(np.float64)
    vl, vr = got[-3].astype(np.complex128), got[-2].astype(np.complex128)
    why = match_values(c, w, a)
    if why:
        return why
    for side, v in (("left", vl), ("right", vr)):
        if c[side] == "N":
            if np.any(v):
                return "%s vectors not asked for, but not zero" % side
            continue
        if side == "right":
            why = close(c, a @ v, v * w[..., None, :], "a vr - vr diag(w)")
        else:
            why = close(c, adjoint(v) @ a, w[..., :, None] * adjoint(v), "vl^H a - diag(w) vl^H")
        why = why or close(c, np.linalg.norm(v, axis=-2), np.ones(w.shape), "%s vector norms" % side)
        if why:
            return why
    return None


def check_gees(c, got):
    a = c["inputs"][0].astype(np.complex128)
    cplx = c["type"].startswith("c")
    if len(got) != (5 if cplx else 6):
        return "got %d results" % len(got)
    if np.any(got[-1] != 0) or np.any(got[-2] != 0):
        return "sdim %r, info %r, expected 0" % (got[-2], got[-1])
    t, vs = got[0].astype(np.complex128), got[1].astype(np.complex128)
    w = got[2].astype(np.complex128) if cplx else got[2] + 1j * got[3].astype(np.float64)
    below = np.tril(t, -1 if cplx else -2)
    if np.any(below != 0):
        return "t is not %s" % ("upper triangular" if cplx else "quasi-triangular")
    why = match_values(c, w, a) or match_values(c, w, t)
    if why:
        return why
    if c["mode"] == "N":
        return None if not np.any(vs) else "vs not asked for, but not zero"
    return unitary(c, vs, "vs") or close(c, vs @ t @ adjoint(vs), a, "vs t vs^H - a")


def reflectors(v, tau, lower_start, upper):
    """q from LAPACK's elementary reflectors: the columns of v (n x n)
    below (from lower_start) or, with upper, above the diagonal band."""
    n = v.shape[-1]
    q = np.eye(n, dtype=np.complex128)
    k = len(tau)
    order = range(k - 1, -1, -1) if upper else range(k)
    for i in order:
        h = np.zeros(n, dtype=np.complex128)
        if upper:
            h[i] = 1
            h[:i] = v[:i, i + 1]
        else:
            h[i + lower_start] = 1
            h[i + lower_start + 1:] = v[i + lower_start + 1:, i]
        q = q @ (np.eye(n) - tau[i] * np.outer(h, np.conj(h)))
    return q


def check_ormqr(c, got):
    a, cm = c["inputs"]
    if len(got) != 3 or got[2].shape != cm.shape:
        return "got %s, expected the reflectors, tau and %s" % ([g.shape for g in got], cm.shape)
    v, tau = got[0].astype(np.complex128), got[1].astype(np.complex128)
    m = a.shape[-2]
    want = np.empty(cm.shape, np.complex128)
    for b in np.ndindex(*a.shape[:-2]):
        q = np.eye(m, dtype=np.complex128)
        for i in range(tau.shape[-1]):  # q = h_0 h_1 ... h_{k-1}
            h = np.zeros(m, np.complex128)
            h[i] = 1
            h[i + 1:] = v[b][i + 1:, i]
            q = q @ (np.eye(m) - tau[b][i] * np.outer(h, np.conj(h)))
        if c["transpose"]:
            q = adjoint(q)
        want[b] = q @ cm[b] if c["left"] else cm[b] @ q
    return close(c, got[2].astype(np.complex128), want, "q applied to c")


def check_gehrd(c, got):
    a = c["inputs"][0].astype(np.complex128)
    if len(got) != 3 or np.any(got[2] != 0):
        return "got %d results, info %r" % (len(got), got[-1])
    v, tau = got[0].astype(np.complex128), got[1].astype(np.complex128)
    for b in np.ndindex(*a.shape[:-2]):
        q = reflectors(v[b], tau[b], 1, False)
        why = close(c, q @ np.triu(v[b], -1) @ adjoint(q), a[b], "q h q^H - a at batch %s" % (b,))
        if why:
            return why
    return None


def check_sytrd(c, got):
    a = c["a"].astype(NP[c["type"]]).astype(np.complex128)
    if len(got) != 5 or np.any(got[4] != 0):
        return "got %d results, info %r" % (len(got), got[-1])
    v, d, e, tau = got[0].astype(np.complex128), got[1], got[2], got[3].astype(np.complex128)
    for b in np.ndindex(*a.shape[:-2]):
        q = reflectors(v[b], tau[b], 1, not c["lower"])
        tri = np.diag(d[b].astype(np.float64)) + np.diag(e[b].astype(np.float64), 1) + np.diag(e[b].astype(np.float64), -1)
        why = close(c, q @ tri @ adjoint(q), a[b], "q t q^H - a at batch %s" % (b,))
        if why:
            return why
    return None


def check_gtsv(c, got):
    dl, d, du, b = (x.astype(np.complex128) for x in c["inputs"])
    if len(got) != 5 or np.any(got[4] != 0):
        return "got %d results, info %r" % (len(got), got[-1])
    m = d.shape[-1]
    if not np.array_equal(got[0][..., 0], c["inputs"][0][..., 0]) or not np.array_equal(got[2][..., m - 1],
                                                                                       c["inputs"][2][..., m - 1]):
        return "dl's first or du's last element changed"
    dense = np.zeros(d.shape + (m,), dtype=np.complex128)
    i = np.arange(m)
    dense[..., i, i] = d
    dense[..., i[1:], i[:-1]] = dl[..., 1:]
    dense[..., i[:-1], i[1:]] = du[..., :-1]
    want = np.linalg.solve(dense, b) if b.shape[-1] else b
    return close(c, got[3].astype(np.complex128), want, "x")


def check(c, got):
    return {"geev": check_geev, "gees": check_gees, "gehrd": check_gehrd, "sytrd": check_sytrd, "gtsv": check_gtsv,
            "svd": check_svd, "trsm": check_trsm, "topk": check_topk, "getrf": check_getrf, "potrf": check_potrf, "qr": check_qr, "qp3": check_qp3,
            "ormqr": check_ormqr,
            "eigh": check_eigh}[c["op"]](c, got)


if __name__ == "__main__":
    sys.exit(hloi_cases.main("numpy_lapack", gen_case, check, 600))

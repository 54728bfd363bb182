/* jaxlib's LAPACK custom-call targets (the FFI forms of jax-ml/jax
 * jaxlib/cpu/lapack_kernels.cc, which jax.lax.linalg lowers to on CPU),
 * computed by the LAPACK that OpenBLAS ships, in the target's own type:
 *
 *   lapack_?getrf_ffi(a [..., m, n]) -> (lu, s32 ipiv [..., min(m, n)],
 *       s32 info [...]): a = p l u with partial pivoting, l unit lower and u
 *       upper triangular packed into lu; ipiv LAPACK's row interchanges,
 *       counted from 1; info > 0 names the first zero pivot u(i, i) (from 1).
 *   lapack_?potrf_ffi(a [..., n, n]), backend_config={uplo = 76 : ui8}
 *       (L; 85 for U) -> (l or u, s32 info [...]): a = l l^H reading and
 *       writing the lower triangle (a = u^H u, the upper), the other
 *       triangle the operand's; info > 0: the leading minor of that order is
 *       not positive definite, and the factor is left unfinished (JAX puts
 *       NaN in its place).
 *   lapack_?geqrf_ffi(a [..., m, n]) -> (qr, tau [..., min(m, n)]): a = q r,
 *       r on and above the diagonal of qr, q as householder vectors below
 *       it and their factors tau.
 *   lapack_?geqp3_ffi(a [..., m, n], s32 jpvt [..., n]) -> (qr, s32 jpvt,
 *       tau [..., min(m, n)]): a p = q r with column pivoting, qr as geqrf's;
 *       jpvt in: a column j with jpvt[j] != 0 is moved to the front first
 *       (JAX passes zeros), out: p's columns, counted from 1.
 *   lapack_?orgqr_ffi / lapack_?ungqr_ffi(qr [..., m, n], tau [..., k]) -> q
 *       [..., m, n]: the first n columns of q from geqrf's k reflectors.
 *   lapack_?ormqr_ffi / lapack_?unmqr_ffi(qr [..., m, n], tau [..., k], c)
 *       with backend_config={left = true, transpose = false} -> c's shape:
 *       q c (left), c q (not left), q^T or q^H for q with transpose, q the
 *       m x m product of geqrf's k reflectors (jax.lax.linalg.ormqr).
 *   lapack_?gesdd_ffi(a [..., m, n]), backend_config={mode = 65 : ui8} ->
 *       (a's scratch, s [..., k] of the real type, u, vt, s32 info), k =
 *       min(m, n): a = u diag(s) vt, s descending; mode 65 (A) gives u
 *       [..., m, m] and vt [..., n, n], 83 (S) u [..., m, k] and vt
 *       [..., k, n], 78 (N) the values only (u and vt zero). The first
 *       result is what LAPACK leaves of a (JAX does not read it).
 *   lapack_?trsm_ffi(a [..., k, k], b [..., m, n][, alpha]) with
 *       backend_config={diag, side, trans_x, uplo} -> x [..., m, n]: op(a) x =
 *       alpha b (side 76 L, k = m) or x op(a) = alpha b (side 82 R, k = n);
 *       op(a) = a, a^T or a^H (trans_x 78 N, 84 T, 67 C), reading the uplo
 *       triangle, its diagonal taken as ones with diag 85 (U). alpha is 1
 *       when there is no third operand (JAX's newer form).
 *   lapack_?syevd_ffi / lapack_?heevd_ffi(a [..., n, n]),
 *       backend_config={mode = 86 : ui8, uplo = 76 : ui8} -> (vectors,
 *       eigenvalues [..., n] ascending, of the real type, s32 info): a =
 *       v diag(w) v^H reading the uplo triangle; mode 86 (V) computes the
 *       eigenvectors into the first result, 78 (N) leaves it as LAPACK's
 *       scratch. info > 0: the algorithm did not converge.
 *
 * The leading dimensions are a batch, each matrix factored on its own. A
 * matrix is copied in column-major order into a scratch, factored in place
 * and copied into the result, so any layout works. Both engines run these
 * kernels. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/index.h"
#include "core/literal.h"
#include "eval/lib/blas.h"
#include "eval/lib/lapack.h"
#include "util/checked.h"

/* OpenBLAS's LAPACK, opened by the first target that calls it (eval/lib/blas.h):
 * each kernel opens it first (lapack_open), so LAPACK(fn) is then fn's
 * entry point. */
#define LAPACK(fn) (blas_open()->fn)

static const blas_fns *lapack_open(engine *e, const instr *in)
{
	const blas_fns *L = blas_open();
	if (!L)
		diag_error_where(e->ctx, NULL, "custom-call '%s': LAPACK is not available: %s", in->name, blas_error());
	return L;
}

/* Matrix `b` of v (b: the batch index, its last two entries ignored) in
 * column-major order into buf (out = 0) or from it (out = 1), `w` bytes an
 * element. */
static void matrix_io(const hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w,
		      int out)
{
	int r = v->shape.rank;
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)r);
	for (int64_t j = 0; j < n; j++)
		for (int64_t i = 0; i < m; i++) {
			idx[r - 2] = i;
			idx[r - 1] = j;
			if (out)
				memcpy(literal_element(v, idx), buf + (j * m + i) * w, (size_t)w);
			else
				memcpy(buf + (j * m + i) * w, literal_element(v, idx), (size_t)w);
		}
}

static void gather(const hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w)
{
	matrix_io(v, b, m, n, buf, w, 0);
}

static void scatter(hloi_literal *v, const int64_t *b, int64_t m, int64_t n, unsigned char *buf, int w)
{
	matrix_io(v, b, m, n, buf, w, 1);
}

/* Element b (a batch index of nb entries), or b followed by i, of an s32
 * result. */
static void put_s32(hloi_literal *v, const int64_t *b, int nb, int64_t i, blasint x)
{
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)nb);
	if (i >= 0)
		idx[nb] = i;
	int32_t y = (int32_t)x;
	memcpy(literal_element(v, idx), &y, sizeof y);
}

static int64_t too_large(engine *e, const instr *in, int64_t m, int64_t n)
{
	diag_error_where(e->ctx, NULL, "custom-call '%s': a %lld x %lld matrix is too large for LAPACK's 32-bit sizes",
			 in->name, (long long)m, (long long)n);
	return -1;
}

/* The scratch of an m x n matrix of `w`-byte elements and `extra` bytes
 * more; -1 when LAPACK's 32-bit integers cannot count it (reported). */
static int64_t scratch_bytes(engine *e, const instr *in, int64_t m, int64_t n, int w, int64_t extra)
{
	int64_t mn, bytes;
	if (m > INT_MAX || n > INT_MAX || checked_mul_i64(m, n, &mn) || mn > INT_MAX || checked_mul_i64(mn, w, &bytes) ||
	    checked_add_i64(bytes, extra, &bytes))
		return too_large(e, in, m, n);
	return bytes;
}

/* The result value and a scratch of an m x n matrix and `extra` bytes
 * (*bytes of them), within the budget. */
static hloi_status begin(engine *e, const instr *in, int64_t m, int64_t n, int w, int64_t extra, hloi_literal **res,
			 unsigned char **scratch, int64_t *bytes)
{
	*bytes = scratch_bytes(e, in, m, n, w, extra);
	if (*bytes < 0)
		return HLOI_EUNSUPPORTED;
	/* LAPACK on one OpenBLAS thread: its threaded kernels (symv, gemv) sum
	 * in an order that follows the thread count, which would make the
	 * results depend on the machine and on what ran before. Participants
	 * of a run of several run with the count their run set. */
	if (!e->spmd)
		blas_threads(1);
	void *buf;
	hloi_status st = eval_scratch_begin(e, in, NULL, *bytes, res, &buf);
	*scratch = buf;
	return st;
}

/* The number of matrices: the product of the batch dimensions. */
static int64_t batch_count(const shape *s)
{
	int64_t c = 1;
	for (int d = 0; d < s->rank - 2; d++)
		c *= s->dims[d];
	return c;
}

hloi_status cc_kernel_getrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, k * (int64_t)sizeof(blasint), &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	blasint *ipiv = (blasint *)(void *)(a + m * n * w);
	if (batch_count(&x->shape) > 0 && k > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			blasint bm = (blasint)m, bn = (blasint)n, lda = (blasint)m, info = 0;
			switch (t) {
			case ET_F32: LAPACK(sgetrf_)(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_F64: LAPACK(dgetrf_)(&bm, &bn, a, &lda, ipiv, &info); break;
			case ET_C64: LAPACK(cgetrf_)(&bm, &bn, a, &lda, ipiv, &info); break;
			default: LAPACK(zgetrf_)(&bm, &bn, a, &lda, ipiv, &info); break;
			}
			scatter(res->elems[0], idx, m, n, a, w);
			for (int64_t i = 0; i < k; i++)
				put_s32(res->elems[1], idx, nb, i, ipiv[i]);
			put_s32(res->elems[2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	} else if (batch_count(&x->shape) > 0) {
		/* an empty matrix: nothing to factor, info 0 */
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do
			put_s32(res->elems[2], idx, nb, -1, 0);
		while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_potrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t n = x->shape.dims[r - 1], uplo = 'L';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "uplo", &uplo);
	char u = uplo == 'U' ? 'U' : 'L';
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, 0, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint bn = (blasint)n, lda = (blasint)(n > 1 ? n : 1), info = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0) {
				switch (t) {
				case ET_F32: LAPACK(spotrf_)(&u, &bn, a, &lda, &info, 1); break;
				case ET_F64: LAPACK(dpotrf_)(&u, &bn, a, &lda, &info, 1); break;
				case ET_C64: LAPACK(cpotrf_)(&u, &bn, a, &lda, &info, 1); break;
				default: LAPACK(zpotrf_)(&u, &bn, a, &lda, &info, 1); break;
				}
			}
			scatter(res->elems[0], idx, n, n, a, w);
			put_s32(res->elems[1], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

/* One of a LAPACK type at p (a complex one's imaginary part untouched). */
static void put_one(unsigned char *p, etype t)
{
	if (t == ET_F32 || t == ET_C64) {
		float one = 1;
		memcpy(p, &one, sizeof one);
	} else {
		double one = 1;
		memcpy(p, &one, sizeof one);
	}
}

/* The size a workspace query (lwork = -1) returned in its first element. */
static blasint queried(etype t, const void *w)
{
	double v;
	if (t == ET_F32 || t == ET_C64) {
		float f;
		memcpy(&f, w, sizeof f);
		v = f;
	} else {
		memcpy(&v, w, sizeof v);
	}
	return v >= 1 && v < INT_MAX ? (blasint)v : 1;
}

static void geqrf(etype t, const blasint *m, const blasint *n, void *a, void *tau, void *work, const blasint *lwork,
		  blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sgeqrf_)(m, n, a, m, tau, work, lwork, info); break;
	case ET_F64: LAPACK(dgeqrf_)(m, n, a, m, tau, work, lwork, info); break;
	case ET_C64: LAPACK(cgeqrf_)(m, n, a, m, tau, work, lwork, info); break;
	default: LAPACK(zgeqrf_)(m, n, a, m, tau, work, lwork, info); break;
	}
}

static void orgqr(etype t, const blasint *m, const blasint *n, const blasint *k, void *a, const void *tau, void *work,
		  const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sorgqr_)(m, n, k, a, m, tau, work, lwork, info); break;
	case ET_F64: LAPACK(dorgqr_)(m, n, k, a, m, tau, work, lwork, info); break;
	case ET_C64: LAPACK(cungqr_)(m, n, k, a, m, tau, work, lwork, info); break;
	default: LAPACK(zungqr_)(m, n, k, a, m, tau, work, lwork, info); break;
	}
}

static void geqp3(etype t, const blasint *m, const blasint *n, void *a, blasint *jpvt, void *tau, void *work,
		  const blasint *lwork, void *rwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sgeqp3_)(m, n, a, m, jpvt, tau, work, lwork, info); break;
	case ET_F64: LAPACK(dgeqp3_)(m, n, a, m, jpvt, tau, work, lwork, info); break;
	case ET_C64: LAPACK(cgeqp3_)(m, n, a, m, jpvt, tau, work, lwork, rwork, info); break;
	default: LAPACK(zgeqp3_)(m, n, a, m, jpvt, tau, work, lwork, rwork, info); break;
	}
}

/* Row b of a [..., len] array to or from buf (b: the batch index). */
static void row_io(hloi_literal *v, const int64_t *b, int nb, int64_t len, unsigned char *buf, int w, int out)
{
	int64_t idx[HLOI_MAX_RANK];
	memcpy(idx, b, sizeof(int64_t) * (size_t)nb);
	for (int64_t i = 0; i < len; i++) {
		idx[nb] = i;
		if (out)
			memcpy(literal_element(v, idx), buf + i * w, (size_t)w);
		else
			memcpy(buf + i * w, literal_element(v, idx), (size_t)w);
	}
}

#define ALIGN16(x) (((x) + 15) & ~(int64_t)15)

/* geqrf (q = 0: a -> (qr, tau)) and orgqr (q = 1: (qr, tau) -> q), which
 * share their scratch: the matrix, tau and the workspace LAPACK asks for. */
static hloi_status qr_kernel(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t, int q)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	if (q)
		k = ops[1]->shape.dims[ops[1]->shape.rank - 1];
	blasint bm = (blasint)m, bn = (blasint)n, bk = (blasint)k, lwork = -1, info = 0;
	unsigned char query[16] = { 0 };
	if (m > 0 && n > 0 && m <= INT_MAX && n <= INT_MAX) {
		if (q)
			orgqr(t, &bm, &bn, &bk, NULL, NULL, query, &lwork, &info);
		else
			geqrf(t, &bm, &bn, NULL, NULL, query, &lwork, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, ALIGN16(k * w) + 16 + (int64_t)lwork * w, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *tau = a + ALIGN16(m * n * w), *work = tau + ALIGN16(k * w);
	if (batch_count(&x->shape) > 0 && m > 0 && n > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			if (q) {
				row_io(ops[1], idx, nb, k, tau, w, 0);
				orgqr(t, &bm, &bn, &bk, a, tau, work, &lwork, &info);
				scatter(res, idx, m, n, a, w);
			} else {
				geqrf(t, &bm, &bn, a, tau, work, &lwork, &info);
				scatter(res->elems[0], idx, m, n, a, w);
				row_io(res->elems[1], idx, nb, k, tau, w, 1);
			}
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_geqrf(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return qr_kernel(e, f, in, ops, t, 0);
}

hloi_status cc_kernel_orgqr(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return qr_kernel(e, f, in, ops, t, 1);
}

static void ormqr(etype t, const char *side, const char *trans, const blasint *m, const blasint *n, const blasint *k,
		  const void *a, const blasint *lda, const void *tau, void *c, const blasint *ldc, void *work,
		  const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sormqr_)(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, 1, 1); break;
	case ET_F64: LAPACK(dormqr_)(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, 1, 1); break;
	case ET_C64: LAPACK(cunmqr_)(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, 1, 1); break;
	default: LAPACK(zunmqr_)(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info, 1, 1); break;
	}
}

/* ormqr's scratch: the reflectors (m x n), tau, c (p x q) and the
 * workspace LAPACK asks for; the checker made c's rows (left) or columns
 * m and k <= min(m, n). */
hloi_status cc_kernel_ormqr(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0], *cv = ops[2];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), left = 1, tr = 0;
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = ops[1]->shape.dims[nb];
	int64_t p = cv->shape.dims[r - 2], q = cv->shape.dims[r - 1];
	custom_call_config_bool(instr_text(in, ATTR_BACKEND_CONFIG), "left", &left);
	custom_call_config_bool(instr_text(in, ATTR_BACKEND_CONFIG), "transpose", &tr);
	char side = left ? 'L' : 'R', trans = !tr ? 'N' : t == ET_C64 || t == ET_C128 ? 'C' : 'T';
	int64_t cbytes = scratch_bytes(e, in, p, q, w, 0);
	if (cbytes < 0)
		return HLOI_EUNSUPPORTED;
	blasint bp = (blasint)p, bq = (blasint)q, bk = (blasint)k, lda = m > 0 ? (blasint)m : 1,
		ldc = p > 0 ? (blasint)p : 1, lwork = -1, info = 0;
	unsigned char query[16] = { 0 };
	int run = p > 0 && q > 0 && batch_count(&x->shape) > 0;
	if (run) {
		ormqr(t, &side, &trans, &bp, &bq, &bk, NULL, &lda, NULL, NULL, &ldc, query, &lwork, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, ALIGN16(k * w) + ALIGN16(cbytes) + 32 + (int64_t)lwork * w, &res, &a,
			       &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *tau = a + ALIGN16(m * n * w), *c = tau + ALIGN16(k * w), *work = c + ALIGN16(cbytes);
	if (run) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			row_io(ops[1], idx, nb, k, tau, w, 0);
			gather(cv, idx, p, q, c, w);
			ormqr(t, &side, &trans, &bp, &bq, &bk, a, &lda, tau, c, &ldc, work, &lwork, &info);
			scatter(res, idx, p, q, c, w);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

_Static_assert(sizeof(blasint) == 4, "LAPACK's integers are jpvt's s32");

/* geqp3's scratch: the matrix, jpvt, tau, the real workspace of the
 * complex routines (2n) and the workspace LAPACK asks for. */
hloi_status cc_kernel_geqp3(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = t == ET_C64 || t == ET_C128;
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n;
	blasint bm = (blasint)m, bn = (blasint)n, lwork = -1, info = 0;
	unsigned char query[16] = { 0 };
	if (m > 0 && n > 0 && m <= INT_MAX && n <= INT_MAX) {
		geqp3(t, &bm, &bn, NULL, NULL, NULL, query, &lwork, NULL, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t jbytes = ALIGN16(n * (int64_t)sizeof(blasint)), rbytes = cplx ? ALIGN16(2 * n * (w / 2)) : 0;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, jbytes + ALIGN16(k * w) + rbytes + 16 + (int64_t)lwork * w, &res, &a,
			       &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *jp = a + ALIGN16(m * n * w), *tau = jp + jbytes, *rwork = tau + ALIGN16(k * w),
		      *work = rwork + rbytes;
	if (batch_count(&x->shape) > 0 && m > 0 && n > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, m, n, a, w);
			row_io(ops[1], idx, nb, n, jp, 4, 0);
			geqp3(t, &bm, &bn, a, (blasint *)jp, tau, work, &lwork, rwork, &info);
			scatter(res->elems[0], idx, m, n, a, w);
			row_io(res->elems[1], idx, nb, n, jp, 4, 1);
			row_io(res->elems[2], idx, nb, k, tau, w, 1);
		} while (index_next(nb, x->shape.dims, idx));
	} else if (batch_count(&x->shape) > 0 && n > 0) {
		/* no rows: LAPACK returns before it reads jpvt, which stays */
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			row_io(ops[1], idx, nb, n, jp, 4, 0);
			row_io(res->elems[1], idx, nb, n, jp, 4, 1);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_syevd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = t == ET_C64 || t == ET_C128;
	int rw = cplx ? w / 2 : w;
	int64_t n = x->shape.dims[r - 1], uplo = 'L', mode = 'V';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "uplo", &uplo);
	custom_call_config_int(config, "mode", &mode);
	char u = uplo == 'U' ? 'U' : 'L', jobz = mode == 'N' ? 'N' : 'V';
	/* LAPACK's documented minimum workspaces */
	int64_t lwork, lrwork = 0, liwork = jobz == 'V' ? 3 + 5 * n : 1;
	if (cplx) {
		lwork = jobz == 'V' ? 2 * n + n * n : n + 1;
		lrwork = jobz == 'V' ? 1 + 5 * n + 2 * n * n : (n > 1 ? n : 1);
	} else {
		lwork = jobz == 'V' ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
	}
	int64_t extra = 16 + ALIGN16(n * rw) + ALIGN16(lwork * w) + ALIGN16(lrwork * rw) + liwork * (int64_t)sizeof(blasint);
	/* the eigenvector workspace, 2 n^2, is counted in LAPACK's integers */
	if (n >= 32768) {
		too_large(e, in, n, n);
		return HLOI_EUNSUPPORTED;
	}
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *ev = a + ALIGN16(n * n * w), *work = ev + ALIGN16(n * rw);
	unsigned char *rwork = work + ALIGN16(lwork * w);
	blasint *iwork = (blasint *)(void *)(rwork + ALIGN16(lrwork * rw));
	blasint bn = (blasint)n, lda = (blasint)(n > 1 ? n : 1), bl = (blasint)lwork, brl = (blasint)lrwork;
	blasint bli = (blasint)liwork;
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint info = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0) {
				switch (t) {
				case ET_F32: LAPACK(ssyevd_)(&jobz, &u, &bn, a, &lda, ev, work, &bl, iwork, &bli, &info, 1, 1); break;
				case ET_F64: LAPACK(dsyevd_)(&jobz, &u, &bn, a, &lda, ev, work, &bl, iwork, &bli, &info, 1, 1); break;
				case ET_C64:
					LAPACK(cheevd_)(&jobz, &u, &bn, a, &lda, ev, work, &bl, rwork, &brl, iwork, &bli, &info, 1, 1);
					break;
				default:
					LAPACK(zheevd_)(&jobz, &u, &bn, a, &lda, ev, work, &bl, rwork, &brl, iwork, &bli, &info, 1, 1);
					break;
				}
			}
			scatter(res->elems[0], idx, n, n, a, w);
			row_io(res->elems[1], idx, nb, n, ev, rw, 1);
			put_s32(res->elems[2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_trsm(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0], *y = ops[1];
	int r = y->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = y->shape.dims[r - 2], n = y->shape.dims[r - 1], k = x->shape.dims[r - 1];
	int64_t side = 'L', uplo = 'L', trans = 'N', unit = 'N';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "side", &side);
	custom_call_config_int(config, "uplo", &uplo);
	custom_call_config_int(config, "trans_x", &trans);
	custom_call_config_int(config, "diag", &unit);
	char cs = (char)side, cu = (char)uplo, ct = (char)trans, cd = (char)unit;
	/* alpha: the third operand, else one */
	unsigned char alpha[16] = { 0 };
	if (in->nops == 3)
		memcpy(alpha, ops[2]->data, (size_t)w);
	else
		put_one(alpha, t);
	int64_t ak = scratch_bytes(e, in, k, k, w, 16), bytes;
	if (ak < 0)
		return HLOI_EUNSUPPORTED;
	hloi_literal *res;
	unsigned char *b;
	hloi_status st = begin(e, in, m, n, w, ak, &res, &b, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *a = b + ALIGN16(m * n * w);
	blasint bm = (blasint)m, bn = (blasint)n, lda = (blasint)(k > 1 ? k : 1), ldb = (blasint)(m > 1 ? m : 1);
	if (batch_count(&y->shape) > 0 && m > 0 && n > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			gather(x, idx, k, k, a, w);
			gather(y, idx, m, n, b, w);
			switch (t) {
			case ET_F32: LAPACK(strsm_)(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			case ET_F64: LAPACK(dtrsm_)(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			case ET_C64: LAPACK(ctrsm_)(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			default: LAPACK(ztrsm_)(&cs, &cu, &ct, &cd, &bm, &bn, alpha, a, &lda, b, &ldb, 1, 1, 1, 1); break;
			}
			scatter(res, idx, m, n, b, w);
		} while (index_next(nb, y->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, b, bytes);
}

/* A column-major identity of `t` in buf. */
static void identity(unsigned char *buf, int64_t rows, int64_t cols, etype t)
{
	int w = etype_byte_width(t);
	memset(buf, 0, (size_t)(rows * cols * w));
	for (int64_t i = 0; i < rows && i < cols; i++)
		put_one(buf + (i * rows + i) * w, t);
}

/* SVD by divide and conquer (gesdd) or, with qr, by QR iteration (gesvd,
 * the same job for u and vt) */
static void gesdd(etype t, int qr, const char *jobz, const blasint *m, const blasint *n, void *a, void *s, void *u,
		  const blasint *ldu, void *vt, const blasint *ldvt, void *work, const blasint *lwork, void *rwork,
		  blasint *iwork, blasint *info)
{
	const blasint *lda = m;
	if (qr) {
		switch (t) {
		case ET_F32: LAPACK(sgesvd_)(jobz, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, 1, 1); break;
		case ET_F64: LAPACK(dgesvd_)(jobz, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info, 1, 1); break;
		case ET_C64: LAPACK(cgesvd_)(jobz, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, 1, 1); break;
		default: LAPACK(zgesvd_)(jobz, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info, 1, 1); break;
		}
		return;
	}
	switch (t) {
	case ET_F32: LAPACK(sgesdd_)(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1); break;
	case ET_F64: LAPACK(dgesdd_)(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info, 1); break;
	case ET_C64: LAPACK(cgesdd_)(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1); break;
	default: LAPACK(zgesdd_)(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info, 1); break;
	}
}

static hloi_status svd_kernel(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t, int qr)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = t == ET_C64 || t == ET_C128;
	int rw = cplx ? w / 2 : w;
	int64_t m = x->shape.dims[r - 2], n = x->shape.dims[r - 1], k = m < n ? m : n, mx = m < n ? n : m, mode = 'A';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "mode", &mode);
	char jobz = (char)mode;
	const shape *us = &in->result->tuple[2], *vs = &in->result->tuple[3];
	int64_t ucols = us->dims[us->rank - 1], vrows = vs->dims[vs->rank - 2];
	/* the workspaces, about 4 min(m, n)^2, are counted in LAPACK's integers */
	if (m > 32767 || n > 32767) {
		too_large(e, in, m, n);
		return HLOI_EUNSUPPORTED;
	}
	blasint bm = (blasint)m, bn = (blasint)n, ldu = (blasint)(m > 1 ? m : 1);
	blasint ldvt = (blasint)(jobz == 'N' ? 1 : vrows > 1 ? vrows : 1), lwork = -1, info = 0;
	/* the complex routines' real workspace, as LAPACK documents it */
	int64_t lr1 = 5 * k * k + 5 * k, lr2 = 2 * mx * k + 2 * k * k + k;
	int64_t lrwork = !cplx ? 0 : jobz == 'N' ? 7 * k : lr1 > lr2 ? lr1 : lr2;
	unsigned char query[16] = { 0 };
	blasint iquery[1] = { 0 };
	double rquery[1] = { 0 };
	if (k > 0) {
		gesdd(t, qr, &jobz, &bm, &bn, NULL, NULL, NULL, &ldu, NULL, &ldvt, query, &lwork, rquery, iquery, &info);
		lwork = queried(t, query);
	} else {
		lwork = 1;
	}
	int64_t ubytes = jobz == 'N' ? 0 : m * ucols * w, vbytes = jobz == 'N' ? 0 : vrows * n * w;
	int64_t extra = ALIGN16(k * rw) + ALIGN16(ubytes) + ALIGN16(vbytes) + ALIGN16((int64_t)lwork * w) +
			ALIGN16((lrwork > 0 ? lrwork : 1) * rw) + 8 * k * (int64_t)sizeof(blasint) + 16;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, m, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *sv = a + ALIGN16(m * n * w), *u = sv + ALIGN16(k * rw), *vt = u + ALIGN16(ubytes);
	unsigned char *work = vt + ALIGN16(vbytes), *rwork = work + ALIGN16((int64_t)lwork * w);
	blasint *iwork = (blasint *)(void *)(rwork + ALIGN16((lrwork > 0 ? lrwork : 1) * rw));
	if (jobz == 'N') {
		/* u and vt are not computed: zeros */
		for (int i = 2; i < 4; i++)
			if (res->elems[i]->data)
				memset(res->elems[i]->data, 0, res->elems[i]->nbytes);
	}
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			info = 0;
			gather(x, idx, m, n, a, w);
			if (k > 0)
				gesdd(t, qr, &jobz, &bm, &bn, a, sv, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info);
			scatter(res->elems[0], idx, m, n, a, w);
			row_io(res->elems[1], idx, nb, k, sv, rw, 1);
			if (jobz != 'N' && k > 0) {
				scatter(res->elems[2], idx, m, ucols, u, w);
				scatter(res->elems[3], idx, vrows, n, vt, w);
			} else if (jobz != 'N') {
				/* an empty matrix: u and vt are identities (one of them empty) */
				identity(u, m, ucols, t);
				identity(vt, vrows, n, t);
				scatter(res->elems[2], idx, m, ucols, u, w);
				scatter(res->elems[3], idx, vrows, n, vt, w);
			}
			put_s32(res->elems[4], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_gesdd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return svd_kernel(e, f, in, ops, t, 0);
}

hloi_status cc_kernel_gesvd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return svd_kernel(e, f, in, ops, t, 1);
}

static int is_complex(etype t)
{
	return t == ET_C64 || t == ET_C128;
}

/* A real part of a LAPACK type (f32 and c64: float, else double) at p. */
static double get_part(const unsigned char *p, etype t)
{
	if (t == ET_F32 || t == ET_C64) {
		float v;
		memcpy(&v, p, sizeof v);
		return v;
	}
	double v;
	memcpy(&v, p, sizeof v);
	return v;
}

static void put_part(unsigned char *p, etype t, double v)
{
	if (t == ET_F32 || t == ET_C64) {
		float x = (float)v;
		memcpy(p, &x, sizeof x);
	} else {
		memcpy(p, &v, sizeof v);
	}
}

/* NaN in every part of `count` elements of `t` at buf: the results jaxlib
 * leaves unwritten when info is not 0 (JAX then puts NaN there itself). */
static void fill_nan(unsigned char *buf, int64_t count, etype t)
{
	int part = is_complex(t) ? etype_byte_width(t) / 2 : etype_byte_width(t);
	for (int64_t i = 0; i < count * (is_complex(t) ? 2 : 1); i++)
		put_part(buf + i * part, t, NAN);
}

static int all_finite(const unsigned char *buf, int64_t count, etype t)
{
	int part = is_complex(t) ? etype_byte_width(t) / 2 : etype_byte_width(t);
	for (int64_t i = 0; i < count * (is_complex(t) ? 2 : 1); i++)
		if (!isfinite(get_part(buf + i * part, t)))
			return 0;
	return 1;
}

/* Every element of a result zero (the ones LAPACK is not asked for). */
static void clear(hloi_literal *v)
{
	if (v->data)
		memset(v->data, 0, v->nbytes);
}

/* Real geev's eigenvectors (column-major, n x n, of the real type t) as
 * complex columns in out: a real eigenvalue's column as it is, a complex
 * pair's columns j and j + 1 as re + i im and its conjugate, as jaxlib
 * unpacks them. */
static void unpack_vectors(int64_t n, const unsigned char *wi, const unsigned char *packed, unsigned char *out,
			   etype t)
{
	int w = etype_byte_width(t);
	for (int64_t j = 0; j < n;) {
		double im = get_part(wi + j * w, t);
		int pair = im != 0 && !isnan(im) && j + 1 < n;
		for (int64_t i = 0; i < n; i++) {
			double re = get_part(packed + (j * n + i) * w, t);
			double iv = pair ? get_part(packed + ((j + 1) * n + i) * w, t) : 0;
			put_part(out + (j * n + i) * 2 * w, t, re);
			put_part(out + (j * n + i) * 2 * w + w, t, iv);
			if (pair) {
				put_part(out + ((j + 1) * n + i) * 2 * w, t, re);
				put_part(out + ((j + 1) * n + i) * 2 * w + w, t, -iv);
			}
		}
		j += pair ? 2 : 1;
	}
}

static void geev(etype t, const char *jl, const char *jr, const blasint *n, void *a, void *wr, void *wi, void *vl,
		 void *vr, const blasint *ld, void *work, const blasint *lwork, void *rwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sgeev_)(jl, jr, n, a, ld, wr, wi, vl, ld, vr, ld, work, lwork, info, 1, 1); break;
	case ET_F64: LAPACK(dgeev_)(jl, jr, n, a, ld, wr, wi, vl, ld, vr, ld, work, lwork, info, 1, 1); break;
	case ET_C64: LAPACK(cgeev_)(jl, jr, n, a, ld, wr, vl, ld, vr, ld, work, lwork, rwork, info, 1, 1); break;
	default: LAPACK(zgeev_)(jl, jr, n, a, ld, wr, vl, ld, vr, ld, work, lwork, rwork, info, 1, 1); break;
	}
}

/* A square target's order, refused past LAPACK's 32-bit workspace counts. */
static int order_fits(engine *e, const instr *in, int64_t n)
{
	if (n < 32768)
		return 1;
	too_large(e, in, n, n);
	return 0;
}

hloi_status cc_kernel_geev(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = is_complex(t);
	int rw = cplx ? w / 2 : w, cw = cplx ? w : 2 * w;
	etype ct = t == ET_F32 ? ET_C64 : t == ET_F64 ? ET_C128 : t;
	int64_t n = x->shape.dims[r - 1], left = 'V', right = 'V';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "compute_left", &left);
	custom_call_config_int(config, "compute_right", &right);
	char jl = left == 'N' ? 'N' : 'V', jr = right == 'N' ? 'N' : 'V';
	if (!order_fits(e, in, n))
		return HLOI_EUNSUPPORTED;
	blasint bn = (blasint)n, ld = (blasint)(n > 1 ? n : 1), lwork = 1, info = 0;
	if (n > 0) {
		unsigned char query[16] = { 0 };
		double rquery[2] = { 0 };
		lwork = -1;
		geev(t, &jl, &jr, &bn, NULL, NULL, NULL, NULL, NULL, &ld, query, &lwork, rquery, &info);
		lwork = queried(t, query);
		/* at least LAPACK's documented minimum */
		if (lwork < (cplx ? 2 : 4) * bn)
			lwork = (cplx ? 2 : 4) * bn;
	}
	int64_t nn = n * n;
	int64_t extra = 2 * ALIGN16(n * w) + 2 * ALIGN16(nn * w) + (cplx ? 0 : ALIGN16(nn * cw)) +
			ALIGN16((int64_t)lwork * w) + 2 * n * rw + 16;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *wr = a + ALIGN16(nn * w), *wi = wr + ALIGN16(n * w), *vl = wi + ALIGN16(n * w);
	unsigned char *vr = vl + ALIGN16(nn * w), *un = vr + ALIGN16(nn * w);
	unsigned char *work = un + (cplx ? 0 : ALIGN16(nn * cw)), *rwork = work + ALIGN16((int64_t)lwork * w);
	/* the results: (wr, wi, vl, vr, info) or (w, vl, vr, info) */
	int kv = cplx ? 1 : 2;
	if (jl == 'N')
		clear(res->elems[kv]);
	if (jr == 'N')
		clear(res->elems[kv + 1]);
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			info = 0;
			gather(x, idx, n, n, a, w);
			if (!all_finite(a, nn, t))
				info = -4; /* jaxlib's answer to a non-finite matrix */
			else if (n > 0)
				geev(t, &jl, &jr, &bn, a, wr, wi, vl, vr, &ld, work, &lwork, rwork, &info);
			if (info != 0) {
				fill_nan(wr, n, t);
				fill_nan(wi, n, t);
			}
			row_io(res->elems[0], idx, nb, n, wr, w, 1);
			if (!cplx)
				row_io(res->elems[1], idx, nb, n, wi, w, 1);
			for (int side = 0; side < 2; side++) {
				if ((side ? jr : jl) == 'N')
					continue;
				unsigned char *v = side ? vr : vl;
				if (info != 0) {
					v = cplx ? v : un;
					fill_nan(v, nn, ct);
				} else if (!cplx) {
					unpack_vectors(n, wi, v, un, t);
					v = un;
				}
				scatter(res->elems[kv + side], idx, n, n, v, cw);
			}
			put_s32(res->elems[kv + 2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

static void gees(etype t, const char *jobvs, const blasint *n, void *a, blasint *sdim, void *wr, void *wi, void *vs,
		 const blasint *ld, void *work, const blasint *lwork, void *rwork, blasint *bwork, blasint *info)
{
	const char sort = 'N';
	switch (t) {
	case ET_F32: LAPACK(sgees_)(jobvs, &sort, NULL, n, a, ld, sdim, wr, wi, vs, ld, work, lwork, bwork, info, 1, 1); break;
	case ET_F64: LAPACK(dgees_)(jobvs, &sort, NULL, n, a, ld, sdim, wr, wi, vs, ld, work, lwork, bwork, info, 1, 1); break;
	case ET_C64: LAPACK(cgees_)(jobvs, &sort, NULL, n, a, ld, sdim, wr, vs, ld, work, lwork, rwork, bwork, info, 1, 1); break;
	default: LAPACK(zgees_)(jobvs, &sort, NULL, n, a, ld, sdim, wr, vs, ld, work, lwork, rwork, bwork, info, 1, 1); break;
	}
}

hloi_status cc_kernel_gees(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), cplx = is_complex(t);
	int rw = cplx ? w / 2 : w;
	int64_t n = x->shape.dims[r - 1], mode = 'V';
	custom_call_config_int(instr_text(in, ATTR_BACKEND_CONFIG), "mode", &mode);
	char jobvs = mode == 'N' ? 'N' : 'V';
	if (!order_fits(e, in, n))
		return HLOI_EUNSUPPORTED;
	blasint bn = (blasint)n, ld = (blasint)(n > 1 ? n : 1), lwork = 1, info = 0, sdim = 0;
	if (n > 0) {
		unsigned char query[16] = { 0 };
		double rquery[2] = { 0 };
		blasint bquery[2] = { 0 };
		lwork = -1;
		gees(t, &jobvs, &bn, NULL, &sdim, NULL, NULL, NULL, &ld, query, &lwork, rquery, bquery, &info);
		lwork = queried(t, query);
		if (lwork < (cplx ? 2 : 3) * bn)
			lwork = (cplx ? 2 : 3) * bn;
	}
	int64_t nn = n * n;
	int64_t extra = 2 * ALIGN16(n * w) + ALIGN16(nn * w) + ALIGN16((int64_t)lwork * w) + ALIGN16(n * rw) +
			(n + 1) * (int64_t)sizeof(blasint) + 16;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *wr = a + ALIGN16(nn * w), *wi = wr + ALIGN16(n * w), *vs = wi + ALIGN16(n * w);
	unsigned char *work = vs + ALIGN16(nn * w), *rwork = work + ALIGN16((int64_t)lwork * w);
	blasint *bwork = (blasint *)(void *)(rwork + ALIGN16(n * rw));
	/* the results: (t, vs, wr, wi, sdim, info) or (t, vs, w, sdim, info) */
	int ks = cplx ? 3 : 4;
	if (jobvs == 'N')
		clear(res->elems[1]);
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			info = 0;
			sdim = 0;
			gather(x, idx, n, n, a, w);
			if (n > 0)
				gees(t, &jobvs, &bn, a, &sdim, wr, wi, vs, &ld, work, &lwork, rwork, bwork, &info);
			scatter(res->elems[0], idx, n, n, a, w);
			if (jobvs == 'V')
				scatter(res->elems[1], idx, n, n, vs, w);
			row_io(res->elems[2], idx, nb, n, wr, w, 1);
			if (!cplx)
				row_io(res->elems[3], idx, nb, n, wi, w, 1);
			put_s32(res->elems[ks], idx, nb, -1, sdim);
			put_s32(res->elems[ks + 1], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

static void gehrd(etype t, const blasint *n, const blasint *lo, const blasint *hi, void *a, void *tau, void *work,
		  const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(sgehrd_)(n, lo, hi, a, n, tau, work, lwork, info); break;
	case ET_F64: LAPACK(dgehrd_)(n, lo, hi, a, n, tau, work, lwork, info); break;
	case ET_C64: LAPACK(cgehrd_)(n, lo, hi, a, n, tau, work, lwork, info); break;
	default: LAPACK(zgehrd_)(n, lo, hi, a, n, tau, work, lwork, info); break;
	}
}

static void sytrd(etype t, const char *uplo, const blasint *n, void *a, void *d, void *e, void *tau, void *work,
		  const blasint *lwork, blasint *info)
{
	switch (t) {
	case ET_F32: LAPACK(ssytrd_)(uplo, n, a, n, d, e, tau, work, lwork, info, 1); break;
	case ET_F64: LAPACK(dsytrd_)(uplo, n, a, n, d, e, tau, work, lwork, info, 1); break;
	case ET_C64: LAPACK(chetrd_)(uplo, n, a, n, d, e, tau, work, lwork, info, 1); break;
	default: LAPACK(zhetrd_)(uplo, n, a, n, d, e, tau, work, lwork, info, 1); break;
	}
}

/* gehrd (tri = 0: a -> (a, tau [n - 1], info)) and sytrd / hetrd (tri = 1:
 * a -> (a, d [n], e [n - 1], tau [n - 1], info)), which share their
 * scratch: the matrix, d, e, tau and the workspace LAPACK asks for. The
 * checker takes orders of 1 or more only. */
static hloi_status reduce_kernel(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t, int tri)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *x = ops[0];
	int r = x->shape.rank, nb = r - 2, w = etype_byte_width(t), rw = is_complex(t) ? w / 2 : w;
	int64_t n = x->shape.dims[r - 1], lo = 1, hi = n, uplo = 'L';
	const char *config = instr_text(in, ATTR_BACKEND_CONFIG);
	custom_call_config_int(config, "low", &lo);
	custom_call_config_int(config, "high", &hi);
	custom_call_config_int(config, "uplo", &uplo);
	char u = uplo == 'U' ? 'U' : 'L';
	if (!order_fits(e, in, n))
		return HLOI_EUNSUPPORTED;
	blasint bn = (blasint)n, blo = (blasint)lo, bhi = (blasint)hi, lwork = -1, info = 0;
	unsigned char query[16] = { 0 };
	if (tri)
		sytrd(t, &u, &bn, NULL, NULL, NULL, NULL, query, &lwork, &info);
	else
		gehrd(t, &bn, &blo, &bhi, NULL, NULL, query, &lwork, &info);
	lwork = queried(t, query);
	int64_t extra = ALIGN16(n * rw) + ALIGN16(n * rw) + ALIGN16(n * w) + ALIGN16((int64_t)lwork * w) + 16;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *a;
	hloi_status st = begin(e, in, n, n, w, extra, &res, &a, &bytes);
	if (st != HLOI_OK)
		return st;
	unsigned char *d = a + ALIGN16(n * n * w), *ev = d + ALIGN16(n * rw), *tau = ev + ALIGN16(n * rw);
	unsigned char *work = tau + ALIGN16(n * w);
	if (batch_count(&x->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			info = 0;
			gather(x, idx, n, n, a, w);
			if (tri)
				sytrd(t, &u, &bn, a, d, ev, tau, work, &lwork, &info);
			else
				gehrd(t, &bn, &blo, &bhi, a, tau, work, &lwork, &info);
			scatter(res->elems[0], idx, n, n, a, w);
			if (tri) {
				row_io(res->elems[1], idx, nb, n, d, rw, 1);
				row_io(res->elems[2], idx, nb, n - 1, ev, rw, 1);
			}
			row_io(res->elems[tri ? 3 : 1], idx, nb, n - 1, tau, w, 1);
			put_s32(res->elems[tri ? 4 : 2], idx, nb, -1, info);
		} while (index_next(nb, x->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, a, bytes);
}

hloi_status cc_kernel_gehrd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return reduce_kernel(e, f, in, ops, t, 0);
}

hloi_status cc_kernel_sytrd(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	return reduce_kernel(e, f, in, ops, t, 1);
}

hloi_status cc_kernel_gtsv(engine *e, frame *f, const instr *in, hloi_literal *const *ops, etype t)
{
	if (!lapack_open(e, in))
		return HLOI_EUNSUPPORTED;
	const hloi_literal *y = ops[3];
	int r = y->shape.rank, nb = r - 2, w = etype_byte_width(t);
	int64_t m = y->shape.dims[r - 2], n = y->shape.dims[r - 1], nc = n > 0 ? n : 1;
	int64_t bytes;
	hloi_literal *res;
	unsigned char *b;
	/* b has a column at least: LAPACK's back substitution writes one even
	 * without a right-hand side */
	hloi_status st = begin(e, in, m, nc, w, 3 * ALIGN16(m * w) + 16, &res, &b, &bytes);
	if (st != HLOI_OK)
		return st;
	memset(b, 0, (size_t)(m * nc * w));
	unsigned char *dg[3];
	dg[0] = b + ALIGN16(m * nc * w);
	for (int k = 1; k < 3; k++)
		dg[k] = dg[k - 1] + ALIGN16(m * w);
	blasint bm = (blasint)m, bn = (blasint)n, ldb = (blasint)(m > 1 ? m : 1);
	if (batch_count(&y->shape) > 0) {
		int64_t idx[HLOI_MAX_RANK] = { 0 };
		do {
			blasint info = 0;
			for (int k = 0; k < 3; k++)
				row_io(ops[k], idx, nb, m, dg[k], w, 0);
			gather(y, idx, m, n, b, w);
			/* dl's first element is not part of the matrix (jaxlib passes dl + 1) */
			if (m > 0) {
				switch (t) {
				case ET_F32: LAPACK(sgtsv_)(&bm, &bn, dg[0] + w, dg[1], dg[2], b, &ldb, &info); break;
				case ET_F64: LAPACK(dgtsv_)(&bm, &bn, dg[0] + w, dg[1], dg[2], b, &ldb, &info); break;
				case ET_C64: LAPACK(cgtsv_)(&bm, &bn, dg[0] + w, dg[1], dg[2], b, &ldb, &info); break;
				default: LAPACK(zgtsv_)(&bm, &bn, dg[0] + w, dg[1], dg[2], b, &ldb, &info); break;
				}
			}
			for (int k = 0; k < 3; k++)
				row_io(res->elems[k], idx, nb, m, dg[k], w, 1);
			scatter(res->elems[3], idx, m, n, b, w);
			put_s32(res->elems[4], idx, nb, -1, info);
		} while (index_next(nb, y->shape.dims, idx));
	}
	return eval_scratch_finish(e, f, in, NULL, res, b, bytes);
}
